//! `cdiff infill`: fill the regions of a template with an autoregressive FIM
//! model or a diffusion model, constrained to a grammar.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::json;

use cdiff::decode::Mode;
use cdiff::infill::{
    check_template, infill_ar, infill_diffusion, ArInfillConfig, InfillOutput, Template,
};
use cdiff::model::{device_name, load, load_causal, parse_dtype, Shipped};

use super::args::{InfillArgs, MaskAfter};
use super::check::load_schema;
use super::decode_cmd::{dlm_config, mode_of, open_device, shipped_for};
use super::{compile, config, load_grammar, micros, read_bytes, CliError};

fn lib_err(e: cdiff::Error) -> CliError {
    CliError::Lib {
        path: None,
        error: e,
    }
}

/// The grammar of `cdiff infill` when no JSON Schema is given: `--grammar`,
/// else the grammar of the shipped model named by `--model`, else, for a
/// `--hole-marker` template, that of the shipped model for the file's
/// extension (`infill.cpp`: `grammars/cpp.ebnf`).
fn default_grammar(a: &InfillArgs) -> Result<PathBuf, CliError> {
    if let Some(g) = &a.grammar {
        return Ok(g.clone());
    }
    let shipped = match &a.model {
        Some(m) => Shipped::by_name(m),
        None if a.hole_marker.is_some() => Shipped::for_extension(&a.template),
        None => None,
    };
    match shipped {
        Some(s) => Ok(PathBuf::from(s.grammar)),
        None => Err(CliError::Input(
            "infill needs --grammar or --json-schema (or --model naming a shipped model, or a \
             --hole-marker template whose extension names a shipped model's language: .cpp, \
             .json, .smi)"
                .into(),
        )),
    }
}

/// Runs `cdiff infill`.
pub fn run(a: &InfillArgs) -> Result<(), CliError> {
    let raw = read_bytes(&a.template)?;
    let template = match &a.hole_marker {
        Some(m) => Template::from_marked(&raw, m.as_bytes()),
        None => Template::from_json(&String::from_utf8_lossy(&raw)),
    }
    .map_err(|e| CliError::lib(&a.template, e))?;
    let (grammar, gpath) = match &a.json_schema {
        Some(s) => (load_schema(s, &a.schema, false)?, s.clone()),
        None => {
            let g = default_grammar(a)?;
            (load_grammar(&g, a.start.as_deref())?, g)
        }
    };
    let constraint = compile(&gpath, &grammar, &config(None))?.0;
    // A dead template is reported before any weights are read.
    if mode_of(a.sampler.mode) != Mode::Vanilla {
        check_template(&constraint, &template).map_err(|e| CliError::lib(&a.template, e))?;
    }
    let (model_name, shipped) = match &a.model {
        Some(m) => (m.clone(), Shipped::by_name(m)),
        None => {
            let s = shipped_for(a.json_schema.is_some(), Some(&gpath))?;
            (s.dir.to_string(), Some(s))
        }
    };
    let dtype = parse_dtype(&a.sampler.dtype).map_err(lib_err)?;
    let device = open_device(&a.sampler)?;
    let on = device_name(&device);
    let s = &a.sampler;
    // Reading the weights is timed apart from the infilling (a 7B model's
    // 15 GB took seconds, which spread over its tokens read as a per-token
    // cost).
    let t = std::time::Instant::now();
    let loaded_in;
    let out: InfillOutput = if cdiff::model::causal::is_autoregressive(&model_name) {
        let mut m = load_causal(&model_name, &device, dtype).map_err(lib_err)?;
        loaded_in = t.elapsed();
        if !a.quiet {
            eprintln!(
                "cdiff: infilling {} regions with {} ({}) on {on}, grammar {}",
                template.n_regions(),
                model_name,
                m.model.family().model_type(),
                gpath.display()
            );
        }
        let cfg = ArInfillConfig {
            mode: mode_of(s.mode),
            temperature: s.temperature.unwrap_or(0.0),
            top_p: s.top_p,
            seed: s.seed,
            max_rejections: s.max_rejections,
            max_tokens: a.max_tokens,
            placeholder: a.placeholder.clone().into_bytes(),
            mask_after: ar_mask_after(s.mask_after, s.fresh_checks),
            fresh_checks: s.fresh_checks,
        };
        infill_ar(
            &mut m.model,
            &m.tokenizer,
            &m.fim,
            Some(&constraint),
            &template,
            &cfg,
        )
        .map_err(lib_err)?
    } else {
        let mut loaded = load(&model_name, &device, dtype).map_err(lib_err)?;
        loaded_in = t.elapsed();
        if !a.quiet {
            eprintln!(
                "cdiff: infilling {} regions with {} ({:?}, {} masks each) on {on}, grammar {}",
                template.n_regions(),
                model_name,
                loaded.model.arch(),
                a.hole_tokens,
                gpath.display()
            );
        }
        let n = a.hole_tokens * template.n_regions();
        let mut cfg = dlm_config(s, loaded.model.arch(), shipped, n);
        cfg.end_of_turn = loaded.tokenizer.token_id("<|eot_id|>");
        let prompt = match &a.prompt {
            Some(p) => loaded.chat_prompt_ids(p).map_err(lib_err)?,
            None => Vec::new(),
        };
        infill_diffusion(
            &mut loaded.model,
            &loaded.tokenizer,
            &loaded.special,
            Some(&constraint),
            &prompt,
            &template,
            a.hole_tokens,
            &cfg,
        )
        .map_err(lib_err)?
    };
    let wall = t.elapsed().saturating_sub(loaded_in);
    let text = String::from_utf8_lossy(&out.text);
    let mut stdout = io::stdout().lock();
    let res = if a.json {
        let fills: Vec<String> = out
            .fills
            .iter()
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect();
        writeln!(
            stdout,
            "{}",
            json!({
                "text": text,
                "fills": fills,
                "model": model_name,
                "mode": match mode_of(s.mode) { Mode::Vanilla => "vanilla", Mode::ConMinus => "con-minus", Mode::Con => "con" },
                "valid": out.valid,
                "failed": out.failed,
                "tokens": out.tokens,
                "rejections": out.rejections,
                "masks": out.masks,
                "masks_abandoned": out.masks_abandoned,
                "used_witness": out.used_witness,
                "forward_passes": out.forward_passes,
                "ms_model": micros(out.time_model) / 1000.0,
                "ms_constraint": micros(out.time_constraint) / 1000.0,
                "ms_constraint_overlapped": micros(out.time_overlapped) / 1000.0,
                "ms_witness": micros(out.time_witness) / 1000.0,
                "ms_total": micros(wall) / 1000.0,
                "ms_load": micros(loaded_in) / 1000.0,
            })
        )
    } else {
        writeln!(stdout, "{text}")
    };
    res.and_then(|()| stdout.flush()).map_err(CliError::Write)?;
    if !a.quiet && !a.json {
        eprintln!(
            "cdiff: valid: {}, {} tokens, {} rejected{}; model {:.1} ms, constraint {:.1} ms of {:.1} ms",
            out.valid,
            out.tokens,
            out.rejections,
            if out.used_witness { ", finished from the witness" } else { "" },
            micros(out.time_model) / 1000.0,
            micros(out.time_constraint) / 1000.0,
            micros(wall) / 1000.0
        );
    }
    Ok(())
}

/// `--mask-after` for an autoregressive model: as given, else masks ahead
/// (the library's default) — or, with `--fresh-checks`, masks after
/// rejections as for diffusion models (8), since masks ahead check no
/// proposal.
pub(crate) fn ar_mask_after(given: Option<MaskAfter>, fresh_checks: bool) -> Option<usize> {
    match (given, fresh_checks) {
        (Some(m), _) => m.0,
        (None, true) => cdiff::decode::DecodeConfig::default().mask_after,
        (None, false) => ArInfillConfig::default().mask_after,
    }
}

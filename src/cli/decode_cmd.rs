//! `cdiff decode` (generation with a diffusion LM under a grammar) and
//! `cdiff init-random` (model directories with random weights).

use std::io::{self, Write};
use std::path::Path;

use candle_core::Device;
use serde_json::json;

use cdiff::decode::{decode, Alg, ArchStyle, DecodeConfig, Mode, Overlap, Remasking, StepInfo};
use cdiff::model::{
    device_name, init_random, init_random_ar, load, parse_dtype, ArFamily, Arch, Denoiser,
    DeviceSpec, Shipped, Size, JSON_TINY, SHIPPED, SMILES_TINY,
};

use super::args::{
    AlgArg, ArchArg, DecodeArgs, InitArgs, ModeArg, RemaskingArg, SamplerArgs, SizeArg,
};
use super::check::load_schema;
use super::{compile, config, load_grammar, micros, read_text, CliError};

/// Runs `cdiff decode`.
pub fn run(a: &DecodeArgs) -> Result<(), CliError> {
    let model_err = |e: cdiff::Error| CliError::Lib {
        path: None,
        error: e,
    };
    // Without --model: the shipped model for the grammar given (json.ebnf or
    // a JSON Schema: json-tiny; cpp.ebnf: cpp-tiny), smiles-tiny with its
    // grammar when no grammar is given, else an error. A shipped model named
    // by --model brings its grammar too.
    let (model_dir, default_grammar, shipped) = match &a.model {
        Some(m) => {
            let s = Shipped::by_name(m);
            (m.clone(), s.map(|s| std::path::PathBuf::from(s.grammar)), s)
        }
        None => {
            let s = if a.json_schema.is_none() && a.grammar.is_none() {
                &SMILES_TINY
            } else {
                shipped_for(a.json_schema.is_some(), a.grammar.as_deref())?
            };
            if !Path::new(s.dir).join("config.json").is_file() {
                return Err(CliError::Input(format!(
                    "no --model given and the shipped model {} is missing (train it with \
                     `cdiff train`, see its README, or pass --model)",
                    s.dir
                )));
            }
            (
                s.dir.to_string(),
                Some(std::path::PathBuf::from(s.grammar)),
                Some(s),
            )
        }
    };
    // The grammar first: a grammar error should not wait for the weights.
    let grammar_path = a.grammar.clone().or(default_grammar);
    let grammar = match (&a.json_schema, &grammar_path) {
        (Some(schema), _) => Some((load_schema(schema, &a.schema, false)?, schema.clone())),
        (None, Some(g)) => Some((load_grammar(g, a.start.as_deref())?, g.clone())),
        (None, None) => None,
    };
    if grammar.is_none() && !matches!(a.sampler.mode, ModeArg::Vanilla) {
        return Err(CliError::Input(
            "constrained modes need --grammar or --json-schema (or use --mode vanilla)".into(),
        ));
    }
    let constraint = match &grammar {
        Some((g, path)) => Some(compile(path, g, &config(None))?.0),
        None => None,
    };
    let prompt = match (&a.prompt, &a.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(f)) => read_text(f)?,
        (None, None) => String::new(),
    };
    let dtype = parse_dtype(&a.sampler.dtype).map_err(model_err)?;
    let device = open_device(&a.sampler)?;
    let mut loaded = load(&model_dir, &device, dtype).map_err(model_err)?;
    if !a.quiet {
        let g = grammar.as_ref().map(|(_, p)| p.display().to_string());
        eprintln!(
            "cdiff: model {model_dir} on {}, {}",
            device_name(&device),
            g.map_or("no grammar".to_string(), |g| format!("grammar {g}"))
        );
    }
    let prompt_ids = loaded.chat_prompt_ids(&prompt).map_err(model_err)?;

    let max_tokens = a
        .max_tokens
        .unwrap_or(shipped.map_or(256, |s| s.max_tokens));
    let mut cfg = dlm_config(&a.sampler, loaded.model.arch(), shipped, max_tokens);
    cfg.max_tokens = max_tokens;
    cfg.end_of_turn = loaded.tokenizer.token_id("<|eot_id|>");
    cfg.prefill = a.prefill.clone().unwrap_or_default().into_bytes();
    cfg.fence = a.fence.clone();

    let quiet = a.quiet;
    let mut progress = |s: &StepInfo| {
        // About eight progress lines per run.
        let every = (s.steps / 8).max(1);
        if !quiet && ((s.step + 1).is_multiple_of(every) || s.step + 1 == s.steps) {
            eprintln!(
                "cdiff: step {}/{}: {} masks left, {} rejections",
                s.step + 1,
                s.steps,
                s.masked,
                s.rejections
            );
        }
    };
    let t = std::time::Instant::now();
    let model: &mut dyn Denoiser = &mut loaded.model;
    let out = decode(
        model,
        &loaded.tokenizer,
        &loaded.special,
        constraint.as_ref(),
        &prompt_ids,
        &cfg,
        Some(&mut progress),
    )
    .map_err(model_err)?;
    let wall = t.elapsed();
    let mut stdout = io::stdout().lock();
    let text = String::from_utf8_lossy(&out.text);
    let res = if a.json {
        let share = if wall.as_nanos() > 0 {
            out.time_constraint.as_secs_f64() / wall.as_secs_f64()
        } else {
            0.0
        };
        writeln!(
            stdout,
            "{}",
            json!({
                "text": text,
                "model": model_dir,
                "valid": out.valid,
                "failed": out.failed,
                "steps": out.steps,
                "forward_passes": out.forward_passes,
                "accepted": out.accepted,
                "rejected": out.rejections,
                "masks": out.masks,
                "used_witness": out.used_witness,
                "text_fallback": out.text_fallback,
                "micros_model": micros(out.time_model),
                "micros_constraint": micros(out.time_constraint),
                "micros_witness": micros(out.time_witness),
                "micros_total": micros(wall),
                "constraint_share": share,
            })
        )
    } else {
        writeln!(stdout, "{text}")
    };
    res.and_then(|()| stdout.flush()).map_err(CliError::Write)?;
    if !quiet && !a.json {
        eprintln!(
            "cdiff: valid: {}, {} steps, {} forward passes, {} accepted, {} rejected; model {:.1} ms, constraint {:.1} ms of {:.1} ms",
            out.valid,
            out.steps,
            out.forward_passes,
            out.accepted,
            out.rejections,
            micros(out.time_model) / 1000.0,
            micros(out.time_constraint) / 1000.0,
            micros(wall) / 1000.0
        );
    }
    Ok(())
}

/// The mode of a `--mode` flag.
pub(super) fn mode_of(m: ModeArg) -> Mode {
    match m {
        ModeArg::Vanilla => Mode::Vanilla,
        ModeArg::ConMinus => Mode::ConMinus,
        ModeArg::Con => Mode::Con,
    }
}

/// The settings of a diffusion decode over `n` masked tokens: the
/// architecture's defaults, then a shipped model's card settings (its
/// temperature, half as many steps as tokens in one block, random
/// remasking), then every flag given explicitly.
pub(super) fn dlm_config(
    s: &SamplerArgs,
    arch: Arch,
    shipped: Option<&Shipped>,
    n: usize,
) -> DecodeConfig {
    let mut cfg = match arch {
        Arch::Dream => DecodeConfig::dream(),
        Arch::Llada => DecodeConfig::llada(),
    };
    cfg.arch_style = match arch {
        Arch::Dream => ArchStyle::Dream,
        Arch::Llada => ArchStyle::Llada,
    };
    cfg.mode = mode_of(s.mode);
    // An explicit --steps 0 is refused by `DecodeConfig::validate`.
    cfg.steps = s
        .steps
        .unwrap_or((if shipped.is_some() { n / 2 } else { n }).max(1));
    if let Some(sh) = shipped {
        cfg.temperature = sh.temperature;
        cfg.remasking = Remasking::Random;
        cfg.block_length = n;
    }
    cfg.alg = match s.alg {
        AlgArg::Entropy => Alg::Entropy,
        AlgArg::MaskgitPlus => Alg::MaskgitPlus,
        AlgArg::TopkMargin => Alg::TopkMargin,
        AlgArg::Random => Alg::Random,
        AlgArg::Origin => Alg::Origin,
    };
    cfg.top_k = s.top_k;
    cfg.alg_temp = s.alg_temp;
    cfg.cfg_scale = s.cfg_scale;
    cfg.logits_eos_inf = s.logits_eos_inf;
    cfg.confidence_eos_eot_inf = s.confidence_eos_eot_inf;
    if let Some(t) = s.temperature {
        cfg.temperature = t;
    }
    cfg.top_p = s.top_p;
    if let Some(b) = s.block_length {
        cfg.block_length = b;
    }
    match s.remasking {
        Some(RemaskingArg::LowConfidence) => cfg.remasking = Remasking::LowConfidence,
        Some(RemaskingArg::Random) => cfg.remasking = Remasking::Random,
        None => {}
    }
    cfg.max_rejections = s.max_rejections;
    cfg.limit_holes = s.limit_holes;
    if let Some(m) = s.mask_after {
        cfg.mask_after = m.0;
    }
    cfg.one_by_one = s.one_by_one;
    cfg.fresh_checks = s.fresh_checks;
    if s.overlap {
        cfg.overlap = Overlap::Auto;
    }
    cfg.seed = s.seed;
    cfg.reference_compat = s.reference_compat;
    cfg
}

/// Runs `cdiff init-random`.
pub fn init(a: &InitArgs) -> Result<(), CliError> {
    let size = match a.size {
        SizeArg::Tiny => Size::Tiny,
        SizeArg::Full => Size::Full,
    };
    let dlm = |arch| {
        init_random(
            arch,
            size,
            &a.out,
            a.seed,
            a.tokenizer.as_deref().map(Path::new),
        )
    };
    let ar = |family| {
        init_random_ar(
            family,
            size,
            &a.out,
            a.seed,
            a.tokenizer.as_deref().map(Path::new),
        )
    };
    match a.arch {
        ArchArg::Dream => dlm(Arch::Dream),
        ArchArg::Llada => dlm(Arch::Llada),
        ArchArg::Starcoder2 => ar(ArFamily::StarCoder2),
        ArchArg::Llama => ar(ArFamily::Llama),
        ArchArg::Gemma => ar(ArFamily::Gemma),
        ArchArg::Qwen2 => ar(ArFamily::Qwen2),
    }
    .map_err(|e| CliError::Lib {
        path: Some(a.out.clone()),
        error: e,
    })?;
    eprintln!("cdiff: wrote {}", a.out.display());
    Ok(())
}

/// The shipped model for a JSON Schema (`json-tiny`) or for the grammar
/// given (by file name), or an error listing the shipped models and their
/// grammars (a grammar no shipped model writes needs `--model`).
pub(super) fn shipped_for(
    json_schema: bool,
    grammar: Option<&Path>,
) -> Result<&'static Shipped, CliError> {
    let found = if json_schema {
        Some(&JSON_TINY)
    } else {
        grammar.and_then(Shipped::for_grammar)
    };
    found.ok_or_else(|| {
        let list: Vec<String> = SHIPPED
            .iter()
            .map(|s| {
                let g = Path::new(s.grammar)
                    .file_name()
                    .map_or(String::new(), |f| f.to_string_lossy().into_owned());
                format!("{} (grammars/{g})", s.name)
            })
            .collect();
        CliError::Input(format!(
            "no --model given and no shipped model writes this grammar: pass --model, or use \
             the grammar of one of the shipped models: {} (json-tiny also takes \
             --json-schema)",
            list.join(", ")
        ))
    })
}

/// The device `--device` names (before any weights are read).
pub(super) fn open_device(s: &SamplerArgs) -> Result<Device, CliError> {
    device_from(&s.device)
}

/// The device a `--device` value names, opened.
pub(super) fn device_from(spec: &str) -> Result<Device, CliError> {
    spec.parse::<DeviceSpec>()
        .and_then(DeviceSpec::open)
        .map_err(|e| CliError::Input(e.message().to_string()))
}

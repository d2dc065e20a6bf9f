//! `cdiff eval run` for the DLM tasks `json` and `smiles`: a diffusion LM
//! writes one answer per (instance, mode, seed) from the instance's prompt
//! under its grammar (see `cdiff::eval::json` and `cdiff::eval::smiles` for
//! the instances and metrics).

use std::path::PathBuf;
use std::time::Instant;

use candle_core::Device;

use cdiff::decode::{decode, Mode};
use cdiff::eval::json::{self, JsonInstance, SchemaOracle};
use cdiff::eval::record::{self, Record};
use cdiff::eval::smiles::{self, SmilesInstance};
use cdiff::eval::{metrics, mode_name};
use cdiff::grammar::{json_schema_to_grammar, SchemaOptions};
use cdiff::model::tokenizer::ChatFormat;
use cdiff::model::{load, parse_dtype, Denoiser, LoadedModel, Shipped};
use cdiff::recognize::Recognizer;
use cdiff::Constraint;

use super::args::{EvalRunArgs, EvalTaskArg};
use super::eval_cmd::{dlm_config, fmt_duration, lib_err};
use super::{compile, config, load_grammar, CliError};

/// The shipped json-mode-eval files.
const JME_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/datasets/json-schema/json-mode-eval"
);

/// The shipped SMILES sample.
const SMILES_SAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/smiles/sample.smi");

/// The shipped SMILES grammar.
const SMILES_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/smiles.ebnf");

/// Canvas length for a model that is not shipped.
const DEFAULT_CANVAS: usize = 256;

/// One instance of either task.
enum Instance {
    Json(JsonInstance),
    Smiles(SmilesInstance),
}

impl Instance {
    fn id(&self) -> &str {
        match self {
            Instance::Json(i) => &i.instance_id,
            Instance::Smiles(i) => &i.instance_id,
        }
    }

    fn input(&self) -> &str {
        match self {
            Instance::Json(i) => &i.input,
            Instance::Smiles(i) => &i.input,
        }
    }
}

/// What an instance is judged and constrained with.
struct Judge {
    constraint: Constraint,
    recognizer: Recognizer,
    /// JSON: the schema validator and the gold value.
    json: Option<(SchemaOracle, serde_json::Value)>,
}

/// The SMILES grammar's constraint and recognizer, shared by all instances.
struct SmilesGrammar {
    constraint: Constraint,
    recognizer: Recognizer,
}

fn json_judge(inst: &JsonInstance) -> Result<Judge, cdiff::Error> {
    let (g, _) = json_schema_to_grammar(&inst.schema, &SchemaOptions::default())?;
    let constraint = Constraint::with_config(&g, cdiff::Config::default())?;
    let recognizer = Recognizer::new(&g)?;
    let oracle = SchemaOracle::new(&inst.schema)?;
    Ok(Judge {
        constraint,
        recognizer,
        json: Some((oracle, inst.gold()?)),
    })
}

/// Runs `cdiff eval run --task json|smiles`.
pub fn run(a: &EvalRunArgs) -> Result<(), CliError> {
    let task = match a.task {
        EvalTaskArg::Json => "json",
        _ => "smiles",
    };
    let mut insts: Vec<Instance> = match (a.task, &a.data) {
        (EvalTaskArg::Json, Some(p)) => json::read_instances(p)
            .map_err(|e| CliError::lib(p, e))?
            .into_iter()
            .map(Instance::Json)
            .collect(),
        (EvalTaskArg::Json, None) => json::jme_instances(std::path::Path::new(JME_DIR))
            .map_err(lib_err)?
            .into_iter()
            .map(Instance::Json)
            .collect(),
        (_, Some(p)) => smiles::read_instances(p)
            .map_err(|e| CliError::lib(p, e))?
            .into_iter()
            .map(Instance::Smiles)
            .collect(),
        (_, None) => smiles::sample_instances(std::path::Path::new(SMILES_SAMPLE), a.data_seed)
            .map_err(lib_err)?
            .into_iter()
            .map(Instance::Smiles)
            .collect(),
    };
    if a.task == EvalTaskArg::Json && a.grammar.is_some() {
        return Err(CliError::Input(
            "--grammar does not apply to the json task: each instance's schema is its grammar"
                .into(),
        ));
    }
    let smiles_grammar = if a.task == EvalTaskArg::Smiles {
        let gpath = a
            .grammar
            .clone()
            .unwrap_or_else(|| PathBuf::from(SMILES_GRAMMAR));
        let g = load_grammar(&gpath, None)?;
        Some(SmilesGrammar {
            recognizer: Recognizer::new(&g).map_err(|e| CliError::lib(&gpath, e))?,
            constraint: compile(&gpath, &g, &config(None))?.0,
        })
    } else {
        None
    };
    if let Some(l) = a.limit {
        insts.truncate(l);
    }
    if let Some((i, n)) = a.shard {
        insts = insts
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % n == i)
            .map(|(_, x)| x)
            .collect();
    }

    let (mut out, done) = record::open_for_append(&a.out, a.resume).map_err(lib_err)?;
    let mut work = Vec::new();
    for (k, inst) in insts.iter().enumerate() {
        for &mode in &a.modes {
            for &seed in &a.seeds {
                let key = (
                    task.to_string(),
                    inst.id().to_string(),
                    a.model.clone(),
                    mode_name(mode).to_string(),
                    seed,
                );
                if !done.contains(&key) {
                    work.push((k, mode, seed));
                }
            }
        }
    }
    let skipped = insts.len() * a.modes.len() * a.seeds.len() - work.len();
    if !a.quiet {
        eprintln!(
            "cdiff eval: {task}, {} instances × {} modes × {} seeds: {} to run{}",
            insts.len(),
            a.modes.len(),
            a.seeds.len(),
            work.len(),
            if skipped > 0 {
                format!(", {skipped} already in {}", a.out.display())
            } else {
                String::new()
            }
        );
    }
    if work.is_empty() {
        return Ok(());
    }

    let mut model: Option<(Box<LoadedModel>, Option<&'static Shipped>)> =
        if a.model.eq_ignore_ascii_case("gold") {
            None
        } else {
            let dtype = parse_dtype(&a.dtype).map_err(lib_err)?;
            let m = load(&a.model, &Device::Cpu, dtype).map_err(lib_err)?;
            Some((Box::new(m), Shipped::by_name(&a.model)))
        };
    if !a.quiet {
        let what = match &model {
            None => "the oracle (gold output)".to_string(),
            Some((m, _)) => format!("diffusion model ({:?})", m.model.arch()),
        };
        eprintln!("cdiff eval: model {}: {what}", a.model);
    }

    // The judge of the instance in hand (work is instance-major).
    let mut current: Option<(usize, Result<Judge, cdiff::Error>)> = None;
    let t_start = Instant::now();
    let (mut errors, total) = (0usize, work.len());
    for (done_n, &(k, mode, seed)) in work.iter().enumerate() {
        let inst = &insts[k];
        if current.as_ref().map(|c| c.0) != Some(k) {
            let j = match inst {
                Instance::Json(i) => json_judge(i),
                Instance::Smiles(_) => Err(cdiff::Error::new(
                    cdiff::ErrorKind::Setting,
                    "unused: SMILES instances share one grammar",
                )),
            };
            if let (Instance::Json(_), Err(e)) = (inst, &j) {
                eprintln!(
                    "cdiff eval: warning: {}: the schema cannot be used: {e}",
                    inst.id()
                );
            }
            current = Some((k, j));
        }
        let judge: Result<(&Constraint, &Recognizer), String> = match (&smiles_grammar, &current) {
            (Some(sg), _) => Ok((&sg.constraint, &sg.recognizer)),
            (None, Some((_, Ok(j)))) => Ok((&j.constraint, &j.recognizer)),
            (None, Some((_, Err(e)))) => Err(format!("the schema cannot be used: {e}")),
            (None, None) => Err("no judge".into()),
        };
        let mut r = Record {
            instance_id: inst.id().to_string(),
            task: task.to_string(),
            model: a.model.clone(),
            mode: mode_name(mode).to_string(),
            seed,
            number_spans: None,
            text: String::new(),
            fills: Vec::new(),
            syntax_ok: false,
            schema_ok: None,
            gxx_syntax_ok: None,
            functional_ok: Some(false),
            functional_status: None,
            tokens: 0,
            ms_model: 0.0,
            ms_constraint: 0.0,
            ms_total: 0.0,
            rejections: 0,
            used_witness: false,
            gave_up: false,
            error: None,
            extra: serde_json::Map::new(),
        };
        if a.task == EvalTaskArg::Json {
            r.schema_ok = Some(false);
        }
        let t0 = Instant::now();
        let res = judge.and_then(|(constraint, recognizer)| {
            generate(a, &mut model, constraint, recognizer, inst, mode, seed)
                .map_err(|e| e.to_string())
                .map(|g| (g, recognizer))
        });
        r.ms_total = t0.elapsed().as_secs_f64() * 1e3;
        match res {
            Ok((g, recognizer)) => {
                r.text = g.text;
                r.tokens = g.tokens;
                r.ms_model = g.ms_model;
                r.ms_constraint = g.ms_constraint;
                r.rejections = g.rejections;
                r.used_witness = g.used_witness;
                r.gave_up = g.gave_up;
                match (inst, &current) {
                    (Instance::Json(_), Some((_, Ok(j)))) => {
                        if let Some((oracle, gold)) = &j.json {
                            let v = json::judge(recognizer, oracle, gold, &r.text);
                            r.syntax_ok = v.syntax_ok;
                            r.schema_ok = Some(v.schema_ok);
                            r.functional_ok = Some(v.functional_ok);
                        }
                    }
                    (Instance::Smiles(i), _) => {
                        r.syntax_ok = metrics::syntax_ok(recognizer, &r.text);
                        r.functional_ok = Some(smiles::same_molecule(&r.text, &i.output));
                    }
                    _ => {}
                }
            }
            Err(e) => {
                errors += 1;
                eprintln!(
                    "cdiff eval: warning: {} {} seed {seed}: {e}",
                    inst.id(),
                    mode_name(mode)
                );
                r.error = Some(e);
            }
        }
        record::append(&mut out, &r).map_err(|e| CliError::lib(&a.out, e))?;
        if !a.quiet {
            let n = done_n + 1;
            let elapsed = t_start.elapsed();
            let eta = elapsed.mul_f64((total - n) as f64 / n as f64);
            let schema = match r.schema_ok {
                Some(true) => ", schema ok",
                Some(false) => ", schema bad",
                None => "",
            };
            eprintln!(
                "cdiff eval: [{n}/{total}] {} {} seed {seed}: syntax {}{schema}, functional {}, {} tokens, {} rejections, {:.0} ms; ETA {}",
                r.instance_id,
                r.mode,
                if r.syntax_ok { "ok" } else { "bad" },
                if r.functional_ok == Some(true) { "pass" } else { "fail" },
                r.tokens,
                r.rejections,
                r.ms_total,
                fmt_duration(eta)
            );
        }
    }
    if !a.quiet {
        eprintln!(
            "cdiff eval: {total} records appended to {} in {}{}",
            a.out.display(),
            fmt_duration(t_start.elapsed()),
            if errors > 0 {
                format!(" ({errors} with an error, counted as wrong)")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// One generated answer.
struct Generated {
    text: String,
    tokens: usize,
    ms_model: f64,
    ms_constraint: f64,
    rejections: usize,
    used_witness: bool,
    gave_up: bool,
}

/// The gold answer (`model` is `None`), or a decode of the model from the
/// instance's prompt under `constraint`.
fn generate(
    a: &EvalRunArgs,
    model: &mut Option<(Box<LoadedModel>, Option<&'static Shipped>)>,
    constraint: &Constraint,
    recognizer: &Recognizer,
    inst: &Instance,
    mode: Mode,
    seed: u64,
) -> Result<Generated, cdiff::Error> {
    let Some((m, shipped)) = model else {
        let text = match inst {
            Instance::Smiles(i) => i.output.clone(),
            // The gold text as given if the grammar takes it, else the same
            // value with keys in schema order (the order the grammar writes).
            Instance::Json(i) => {
                if metrics::syntax_ok(recognizer, &i.output) {
                    i.output.clone()
                } else {
                    json::schema_order_text(&i.gold()?, &i.schema)
                }
            }
        };
        return Ok(Generated {
            text,
            tokens: 0,
            ms_model: 0.0,
            ms_constraint: 0.0,
            rejections: 0,
            used_witness: false,
            gave_up: false,
        });
    };
    // Unconditional models (no chat template: cdiff's shipped ones) get an
    // empty prompt; chat models the instance's input as the user message.
    let prompt = if m.chat_format == ChatFormat::Plain {
        Vec::new()
    } else {
        m.chat_prompt_ids(inst.input())?
    };
    let n = a
        .max_tokens
        .unwrap_or(shipped.map_or(DEFAULT_CANVAS, |s| s.max_tokens));
    let mut cfg = dlm_config(a, m.model.arch(), *shipped, mode, seed, n);
    cfg.max_tokens = n;
    let den: &mut dyn Denoiser = &mut m.model;
    let o = decode(
        den,
        &m.tokenizer,
        &m.special,
        Some(constraint),
        &prompt,
        &cfg,
        None,
    )?;
    Ok(Generated {
        text: String::from_utf8_lossy(&o.text).into_owned(),
        tokens: o.accepted,
        ms_model: o.time_model.as_secs_f64() * 1e3,
        ms_constraint: o.time_constraint.as_secs_f64() * 1e3,
        rejections: o.rejections,
        used_witness: o.used_witness,
        gave_up: o.failed,
    })
}

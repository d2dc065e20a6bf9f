//! `cdiff eval run` for the DLM tasks `json`, `smiles` and `dlm-cpp`: a
//! diffusion LM writes one answer per (instance, mode, seed) from the
//! instance's prompt under its grammar (see `cdiff::eval::json`,
//! `cdiff::eval::smiles` and `cdiff::eval::tasks::DlmCppInstance` for the
//! instances and metrics).

use std::path::PathBuf;
use std::time::Instant;

use std::sync::atomic::{AtomicUsize, Ordering};

use cdiff::decode::decode;
use cdiff::eval::json::{self, JsonInstance, SchemaOracle};
use cdiff::eval::record::{self, Record};
use cdiff::eval::runner::{for_each, Progress};
use cdiff::eval::smiles::{self, SmilesInstance};
use cdiff::eval::tasks::{self, DlmCppInstance};
use cdiff::eval::{gp_instruction, metrics, EvalMode};
use cdiff::grammar::{json_schema_to_grammar, SchemaOptions};
use cdiff::model::tokenizer::ChatFormat;
use cdiff::model::{load, parse_dtype, Denoiser, LoadedModel, Shipped, TextCodec};
use cdiff::recognize::Recognizer;
use cdiff::Constraint;

use super::args::{EvalRunArgs, EvalTaskArg};
use super::eval_cmd::{dlm_config, lib_err, Judge as CppJudge};
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

/// The shipped C++ grammar.
const CPP_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/cpp.ebnf");

/// The shipped HumanEval-X C++ data.
const HUMANEVAL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
);

/// Canvas length for a model that is not shipped.
const DEFAULT_CANVAS: usize = 256;

/// Shortest canvas of a shipped model whose context the prompt fills.
const MIN_CANVAS: usize = 32;

/// One instance of either task.
enum Instance {
    Json(JsonInstance),
    Smiles(SmilesInstance),
    Cpp(DlmCppInstance),
}

impl Instance {
    fn id(&self) -> &str {
        match self {
            Instance::Json(i) => &i.instance_id,
            Instance::Smiles(i) => &i.instance_id,
            Instance::Cpp(i) => &i.instance_id,
        }
    }

    fn input(&self) -> &str {
        match self {
            Instance::Json(i) => &i.input,
            Instance::Smiles(i) => &i.input,
            Instance::Cpp(i) => &i.input,
        }
    }

    /// Text the answer continues (constrained, and on the model's canvas).
    fn prefill(&self) -> &str {
        match self {
            Instance::Cpp(i) => &i.prefill,
            _ => "",
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

/// The SMILES or C++ grammar's constraint and recognizer, shared by all
/// instances.
struct SharedGrammar {
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

/// Runs `cdiff eval run --task json|smiles|dlm-cpp`.
pub fn run(a: &EvalRunArgs) -> Result<(), CliError> {
    let task = match a.task {
        EvalTaskArg::Json => "json",
        EvalTaskArg::DlmCpp => "dlm-cpp",
        _ => "smiles",
    };
    if a.task == EvalTaskArg::Json && a.grammar.is_some() {
        return Err(CliError::Input(
            "--grammar does not apply to the json task: each instance's schema is its grammar"
                .into(),
        ));
    }
    let shared = match a.task {
        EvalTaskArg::Smiles => Some(SMILES_GRAMMAR),
        EvalTaskArg::DlmCpp => Some(CPP_GRAMMAR),
        _ => None,
    }
    .map(|default| -> Result<SharedGrammar, CliError> {
        let gpath = a.grammar.clone().unwrap_or_else(|| PathBuf::from(default));
        let g = load_grammar(&gpath, None)?;
        Ok(SharedGrammar {
            recognizer: Recognizer::new(&g).map_err(|e| CliError::lib(&gpath, e))?,
            constraint: compile(&gpath, &g, &config(None))?.0,
        })
    })
    .transpose()?;
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
        (EvalTaskArg::DlmCpp, data) => {
            let he = data
                .clone()
                .or_else(|| a.humaneval.clone())
                .unwrap_or_else(|| PathBuf::from(HUMANEVAL));
            let rows = tasks::read_humaneval(&he).map_err(|e| CliError::lib(&he, e))?;
            let rec = shared.as_ref().map(|g| &g.recognizer);
            tasks::make_dlm_cpp(&rows, |t| rec.is_some_and(|r| metrics::syntax_ok(r, t)))
                .into_iter()
                .map(Instance::Cpp)
                .collect()
        }
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
    if let Some(l) = a.limit {
        insts.truncate(l);
    }
    let ids: Vec<String> = insts.iter().map(|i| i.id().to_string()).collect();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let planned = super::eval_cmd::plan(a, task, &ids)?;
    let insts: Vec<_> = planned.shard(insts);
    let super::eval_cmd::Plan { work, out, .. } = planned;
    if work.is_empty() {
        return Ok(());
    }

    let device = super::decode_cmd::device_from(&a.device)?;
    let jobs = super::eval_cmd::jobs_for(a, &device)?;
    let load_model = || -> Result<Option<DlmModel>, CliError> {
        if a.model.eq_ignore_ascii_case("gold") {
            return Ok(None);
        }
        let dtype = parse_dtype(&a.dtype).map_err(lib_err)?;
        let m = load(&a.model, &device, dtype).map_err(lib_err)?;
        Ok(Some((Box::new(m), Shipped::by_name(&a.model))))
    };
    // The first worker's model, loaded here so that a bad model fails
    // before any worker starts.
    let first = std::sync::Mutex::new(Some(load_model()?));
    if !a.quiet {
        let what = match first.lock().ok().as_deref() {
            Some(Some(Some((m, _)))) => format!("diffusion model ({:?})", m.model.arch()),
            _ => "the oracle (gold output)".to_string(),
        };
        eprintln!(
            "cdiff eval: model {} on {}: {what}{}",
            a.model,
            cdiff::model::device_name(&device),
            super::eval_cmd::workers_note(jobs)
        );
    }
    let gp_grammar = match (&shared, a.modes.contains(&EvalMode::Gp)) {
        (Some(_), true) => {
            let path = a.grammar.clone().unwrap_or_else(|| {
                PathBuf::from(if a.task == EvalTaskArg::DlmCpp {
                    CPP_GRAMMAR
                } else {
                    SMILES_GRAMMAR
                })
            });
            Some(std::fs::read_to_string(&path).map_err(|error| CliError::Read { path, error })?)
        }
        _ => None,
    };
    let groups = super::eval_cmd::by_instance(&work);
    let out = std::sync::Mutex::new(out);
    let errors = AtomicUsize::new(0);
    let progress = Progress::new(work.len(), a.quiet);
    let init = || -> Result<Worker, CliError> {
        let model = match first.lock().ok().and_then(|mut f| f.take()) {
            Some(m) => m,
            None => load_model()?,
        };
        let cpp_judge = if a.task == EvalTaskArg::DlmCpp {
            Some(CppJudge::new(a)?)
        } else {
            None
        };
        Ok(Worker { model, cpp_judge })
    };
    for_each(&groups, jobs, init, |w, _, (k, runs)| {
        let inst = &insts[*k];
        let own = match (&shared, inst) {
            (None, Instance::Json(i)) => {
                let j = json_judge(i);
                if let Err(e) = &j {
                    progress.warn(&format!(
                        "cdiff eval: warning: {}: the schema cannot be used: {e}",
                        inst.id()
                    ));
                }
                Some(j)
            }
            _ => None,
        };
        let judge: Result<(&Constraint, &Recognizer), String> = match (&shared, &own) {
            (Some(sg), _) => Ok((&sg.constraint, &sg.recognizer)),
            (None, Some(Ok(j))) => Ok((&j.constraint, &j.recognizer)),
            (None, Some(Err(e))) => Err(format!("the schema cannot be used: {e}")),
            (None, None) => Err("SMILES and C++ instances share one grammar".into()),
        };
        for &(mode, seed) in runs {
            let gp = (mode == EvalMode::Gp).then(|| match inst {
                Instance::Json(i) => ("JSON Schema", i.schema.to_string()),
                _ => (
                    "grammar (Lark EBNF)",
                    gp_grammar.clone().unwrap_or_default(),
                ),
            });
            let r = run_one(
                a,
                task,
                w,
                judge.clone(),
                own.as_ref(),
                inst,
                mode,
                seed,
                gp,
            )?;
            if let Some(e) = &r.error {
                errors.fetch_add(1, Ordering::Relaxed);
                progress.warn(&format!(
                    "cdiff eval: warning: {} {} seed {seed}: {e}",
                    inst.id(),
                    mode.name()
                ));
            }
            {
                let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
                record::append(&mut *out, &r).map_err(|e| CliError::lib(&a.out, e))?;
            }
            progress.record(&super::eval_cmd::describe(&r));
        }
        Ok(())
    })?;
    let took = progress.finish();
    if !a.quiet {
        eprintln!(
            "{}",
            super::eval_cmd::summary_line(a, work.len(), took, errors.into_inner())
        );
    }
    Ok(())
}

/// A loaded diffusion model and its card, or `None` for the oracle.
type DlmModel = (Box<LoadedModel>, Option<&'static Shipped>);

/// What one worker holds: its model and its compiler cache.
struct Worker {
    model: Option<DlmModel>,
    cpp_judge: Option<CppJudge>,
}

/// The record of `inst` in `mode` with `seed`; `gp` is grammar prompting's
/// (kind, text) of the grammar.
#[allow(clippy::too_many_arguments)]
fn run_one(
    a: &EvalRunArgs,
    task: &str,
    w: &mut Worker,
    judge: Result<(&Constraint, &Recognizer), String>,
    own: Option<&Result<Judge, cdiff::Error>>,
    inst: &Instance,
    mode: EvalMode,
    seed: u64,
    gp: Option<(&str, String)>,
) -> Result<Record, CliError> {
    let mut r = Record {
        instance_id: inst.id().to_string(),
        task: task.to_string(),
        model: a.model.clone(),
        mode: mode.name().to_string(),
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
        ms_witness: None,
        ms_total: 0.0,
        rejections: 0,
        used_witness: false,
        gave_up: false,
        error: None,
        grammar_productions: judge
            .as_ref()
            .ok()
            .map(|(c, _)| c.normal_form().n_productions()),
        extra: serde_json::Map::new(),
    };
    if a.task == EvalTaskArg::Json {
        r.schema_ok = Some(false);
    }
    if a.task == EvalTaskArg::DlmCpp {
        // Null unless the program is compiled.
        r.functional_ok = None;
    }
    let t0 = Instant::now();
    let res = judge.and_then(|(constraint, recognizer)| {
        let input = match &gp {
            Some((what, g)) => gp_instruction(inst.input(), what, g),
            None => inst.input().to_string(),
        };
        generate(
            a,
            &mut w.model,
            constraint,
            recognizer,
            inst,
            &input,
            mode,
            seed,
        )
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
            r.ms_witness = Some(g.ms_witness);
            r.rejections = g.rejections;
            r.used_witness = g.used_witness;
            r.gave_up = g.gave_up;
            match (inst, own) {
                (Instance::Json(_), Some(Ok(j))) => {
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
                (Instance::Cpp(i), _) => {
                    r.syntax_ok = metrics::syntax_ok(recognizer, &r.text);
                    if let Some(cj) = w.cpp_judge.as_mut() {
                        if let Some((syn, outcome)) = cj.judge("", &r.text, &i.test)? {
                            r.gxx_syntax_ok = syn;
                            r.functional_ok = Some(outcome.passed());
                            r.functional_status = Some(outcome.status());
                        }
                    }
                }
                _ => {}
            }
        }
        Err(e) => r.error = Some(e),
    }
    Ok(r)
}

/// The decoding seed of `seed` on instance `id`: the two mixed (FNV-1a over
/// the id, then SplitMix64), so that an unconditional model (empty prompt)
/// draws a different sample for each instance, and a run is still a
/// function of its seeds.
fn decode_seed(seed: u64, id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    cdiff::rng::SplitMix64::new(seed ^ h.rotate_left(29)).next_u64()
}

/// One generated answer.
struct Generated {
    text: String,
    tokens: usize,
    ms_model: f64,
    ms_constraint: f64,
    ms_witness: f64,
    rejections: usize,
    used_witness: bool,
    gave_up: bool,
}

/// The gold answer (`model` is `None`), or a decode of the model from the
/// instance's prompt under `constraint`.
#[allow(clippy::too_many_arguments)]
fn generate(
    a: &EvalRunArgs,
    model: &mut Option<DlmModel>,
    constraint: &Constraint,
    recognizer: &Recognizer,
    inst: &Instance,
    input: &str,
    mode: EvalMode,
    seed: u64,
) -> Result<Generated, cdiff::Error> {
    let Some((m, shipped)) = model else {
        let text = match inst {
            Instance::Smiles(i) => i.output.clone(),
            Instance::Cpp(i) => format!("{}{}", i.prefill, i.canonical_solution),
            // The gold text as given if the grammar takes it, else the same
            // value with keys in schema order (what the grammar takes for
            // objects past the any-order limit).
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
            ms_witness: 0.0,
            rejections: 0,
            used_witness: false,
            gave_up: false,
        });
    };
    // Unconditional models (no chat template: cdiff's shipped ones) get an
    // empty prompt; chat models the instance's input as the user message.
    // The prefill follows (the start of the answer, written for the model).
    let mut prompt = if m.chat_format == ChatFormat::Plain {
        Vec::new()
    } else {
        m.chat_prompt_ids(input)?
    };
    prompt.extend(m.tokenizer.encode(inst.prefill().as_bytes())?);
    // A shipped model's canvas is what its context leaves after the prompt.
    let n = a.max_tokens.unwrap_or(shipped.map_or(DEFAULT_CANVAS, |s| {
        s.max_tokens.saturating_sub(prompt.len()).max(MIN_CANVAS)
    }));
    let mut cfg = dlm_config(
        a,
        m.model.arch(),
        *shipped,
        mode.decode_mode(),
        decode_seed(seed, inst.id()),
        n,
    );
    cfg.max_tokens = n;
    cfg.prefill = inst.prefill().as_bytes().to_vec();
    cfg.end_of_turn = m.tokenizer.token_id("<|eot_id|>");
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
        ms_witness: o.time_witness.as_secs_f64() * 1e3,
        rejections: o.rejections,
        used_witness: o.used_witness,
        gave_up: o.failed,
    })
}

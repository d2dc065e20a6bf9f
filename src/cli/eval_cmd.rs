//! `cdiff eval run|merge|report`: the benchmarks of Mündler et al. (see
//! the library module `cdiff::eval` for the procedure).

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cdiff::decode::{ArchStyle, DecodeConfig, Mode, Overlap, Remasking};
use cdiff::eval::metrics::{self, Gxx, Limits, Outcome};
use cdiff::eval::record::{self, Record};
use cdiff::eval::runner::{fmt_duration, for_each, Progress};
use cdiff::eval::tasks::{self, MriInstance, MriKind};
use cdiff::eval::{gp_cpp_comment, report, EvalMode};
use cdiff::infill::{infill_ar, infill_diffusion, ArInfillConfig, InfillOutput};
use cdiff::model::{load, load_causal, parse_dtype, Arch, LoadedCausal, LoadedModel, Shipped};
use cdiff::recognize::Recognizer;
use cdiff::Constraint;

use super::args::{
    EvalCommand, EvalMergeArgs, EvalReportArgs, EvalRunArgs, EvalTaskArg, FunctionalArg,
};
use super::{compile, config, load_grammar, CliError};

/// The shipped HumanEval-X C++ data.
const HUMANEVAL: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
);

/// The shipped C++ grammar.
const CPP_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/cpp.ebnf");

pub(super) fn lib_err(e: cdiff::Error) -> CliError {
    CliError::Lib {
        path: None,
        error: e,
    }
}

/// Runs `cdiff eval ...`.
pub fn run(c: &EvalCommand) -> Result<(), CliError> {
    match c {
        EvalCommand::Run(a) => run_task(a),
        EvalCommand::Merge(a) => merge(a),
        EvalCommand::Report(a) => report_cmd(a),
    }
}

/// What fills the regions.
enum Infiller {
    /// The removed text.
    Gold,
    /// An autoregressive FIM model.
    Ar(Box<LoadedCausal>),
    /// A diffusion model (with its card's settings if shipped).
    Dlm(Box<LoadedModel>, Option<&'static Shipped>),
}

impl Infiller {
    fn load(a: &EvalRunArgs, device: &candle_core::Device) -> Result<Infiller, CliError> {
        if a.model.eq_ignore_ascii_case("gold") {
            return Ok(Infiller::Gold);
        }
        let dtype = parse_dtype(&a.dtype).map_err(lib_err)?;
        if cdiff::model::causal::is_autoregressive(&a.model) {
            let m = load_causal(&a.model, device, dtype).map_err(lib_err)?;
            Ok(Infiller::Ar(Box::new(m)))
        } else {
            let m = load(&a.model, device, dtype).map_err(lib_err)?;
            Ok(Infiller::Dlm(Box::new(m), Shipped::by_name(&a.model)))
        }
    }

    fn describe(&self) -> String {
        match self {
            Infiller::Gold => "the oracle (removed text)".into(),
            Infiller::Ar(m) => format!(
                "autoregressive FIM model ({})",
                m.model.family().model_type()
            ),
            Infiller::Dlm(m, _) => format!("diffusion model ({:?})", m.model.arch()),
        }
    }

    /// Fills `inst`'s regions in `mode` with `seed`; `gp`: grammar
    /// prompting's comment, put before the code.
    fn fill(
        &mut self,
        a: &EvalRunArgs,
        constraint: &Constraint,
        inst: &MriInstance,
        mode: EvalMode,
        seed: u64,
        gp: Option<&str>,
    ) -> Result<InfillOutput, cdiff::Error> {
        let template = match gp {
            Some(comment) => inst.template()?.with_prefix(comment.as_bytes()),
            None => inst.template()?,
        };
        let mode = mode.decode_mode();
        match self {
            Infiller::Gold => {
                let fills: Vec<Vec<u8>> = inst
                    .removed_spans
                    .iter()
                    .map(|s| s.as_bytes().to_vec())
                    .collect();
                Ok(InfillOutput {
                    text: template.fill(&fills),
                    fills,
                    valid: true,
                    ..InfillOutput::default()
                })
            }
            Infiller::Ar(m) => {
                let cfg = ArInfillConfig {
                    mode,
                    temperature: a.temperature.unwrap_or(1.0),
                    top_p: a.top_p,
                    seed,
                    max_rejections: a.max_rejections,
                    max_tokens: a.max_tokens.unwrap_or(256),
                    placeholder: Vec::new(),
                    mask_after: super::infill_cmd::ar_mask_after(a.mask_after, a.fresh_checks),
                    fresh_checks: a.fresh_checks,
                };
                infill_ar(
                    &mut m.model,
                    &m.tokenizer,
                    &m.fim,
                    Some(constraint),
                    &template,
                    &cfg,
                )
            }
            Infiller::Dlm(m, shipped) => {
                let n = a.hole_tokens * template.n_regions();
                let cfg = dlm_config(a, m.model.arch(), *shipped, mode, seed, n);
                infill_diffusion(
                    &mut m.model,
                    &m.tokenizer,
                    &m.special,
                    Some(constraint),
                    &[],
                    &template,
                    a.hole_tokens,
                    &cfg,
                )
            }
        }
    }
}

/// The diffusion settings over `n` masked tokens, as `cdiff infill` makes
/// them: the architecture's defaults, a shipped model's card settings, then
/// the flags given.
pub(super) fn dlm_config(
    a: &EvalRunArgs,
    arch: Arch,
    shipped: Option<&Shipped>,
    mode: Mode,
    seed: u64,
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
    cfg.mode = mode;
    cfg.steps = a
        .steps
        .unwrap_or(if shipped.is_some() { n / 2 } else { n })
        .max(1);
    if let Some(sh) = shipped {
        cfg.temperature = sh.temperature;
        cfg.remasking = Remasking::Random;
        cfg.block_length = n;
    }
    if let Some(t) = a.temperature {
        cfg.temperature = t;
    }
    cfg.top_p = a.top_p;
    cfg.max_rejections = a.max_rejections;
    cfg.limit_holes = a.limit_holes;
    if let Some(m) = a.mask_after {
        cfg.mask_after = m.0;
    }
    cfg.one_by_one = a.one_by_one;
    cfg.fresh_checks = a.fresh_checks;
    if a.overlap {
        cfg.overlap = Overlap::Auto;
    }
    cfg.seed = seed;
    cfg.reference_compat = a.reference_compat;
    cfg
}

/// The instances of the run, before --limit and --shard.
fn instances(
    a: &EvalRunArgs,
    kind: MriKind,
    rec: &Recognizer,
) -> Result<Vec<MriInstance>, CliError> {
    let he_path = a
        .humaneval
        .clone()
        .unwrap_or_else(|| PathBuf::from(HUMANEVAL));
    let accepts = |t: &str| metrics::syntax_ok(rec, t);
    match &a.data {
        Some(path) => {
            let mut insts: Vec<MriInstance> =
                tasks::read_jsonl(path).map_err(|e| CliError::lib(path, e))?;
            // A missing test comes from HumanEval-X, by task id.
            if insts.iter().any(|i| i.test.is_empty()) {
                let rows =
                    tasks::read_humaneval(&he_path).map_err(|e| CliError::lib(&he_path, e))?;
                let tests: HashMap<&str, &str> = rows
                    .iter()
                    .map(|r| (r.task_id.as_str(), r.test.as_str()))
                    .collect();
                for i in &mut insts {
                    if i.test.is_empty() {
                        if let Some(t) = tests.get(i.task_id()) {
                            i.test = t.to_string();
                        }
                    }
                }
            }
            for i in &insts {
                if !i.is_consistent() {
                    return Err(CliError::Input(format!(
                        "{}: instance {}: splits and removed_spans do not interleave to canonical_solution",
                        path.display(),
                        i.instance_id
                    )));
                }
            }
            Ok(insts)
        }
        None => {
            let rows = tasks::read_humaneval(&he_path).map_err(|e| CliError::lib(&he_path, e))?;
            Ok(tasks::make_mri(
                &rows,
                kind,
                a.spans as usize,
                a.data_seed,
                accepts,
            ))
        }
    }
}

/// Syntax and functional metrics of one program, cached by text.
pub(super) struct Judge {
    gxx: Option<Gxx>,
    limits: Limits,
    cache: HashMap<String, (Option<bool>, Outcome)>,
}

impl Judge {
    /// The compiler and limits of `a` (`--functional`, timeouts).
    pub(super) fn new(a: &EvalRunArgs) -> Result<Judge, CliError> {
        let gxx = match a.functional {
            FunctionalArg::Off => None,
            FunctionalArg::Auto | FunctionalArg::On => {
                let g = Gxx::find();
                if g.is_none() {
                    if a.functional == FunctionalArg::On {
                        return Err(CliError::Input(format!(
                            "--functional on: no C++ compiler found (g++ on PATH, or ${})",
                            metrics::GXX_VAR
                        )));
                    }
                    eprintln!(
                        "cdiff eval: warning: no C++ compiler found (g++ on PATH, or ${}): \
                     functional_ok and gxx_syntax_ok are null",
                        metrics::GXX_VAR
                    );
                }
                g
            }
        };
        Ok(Judge {
            gxx,
            limits: Limits {
                compile: Duration::from_secs_f64(a.compile_timeout.max(0.001)),
                run: Duration::from_secs_f64(a.run_timeout.max(0.001)),
                ..Limits::default()
            },
            cache: HashMap::new(),
        })
    }

    /// `(gxx_syntax_ok, outcome)` of `head + solution` with `test`.
    pub(super) fn judge(
        &mut self,
        head: &str,
        solution: &str,
        test: &str,
    ) -> Result<Option<(Option<bool>, Outcome)>, CliError> {
        let Some(gxx) = &self.gxx else {
            return Ok(None);
        };
        let program = format!("{head}{solution}");
        if let Some(r) = self.cache.get(&program) {
            return Ok(Some(r.clone()));
        }
        let syn = gxx
            .syntax_only(&program, self.limits.compile)
            .map_err(lib_err)?;
        let outcome = if test.is_empty() {
            Outcome::CompileError("no test for this instance".into())
        } else {
            gxx.compile_and_run(&format!("{program}\n{test}"), &self.limits)
                .map_err(lib_err)?
        };
        self.cache.insert(program, (Some(syn), outcome.clone()));
        Ok(Some((Some(syn), outcome)))
    }
}

fn run_task(a: &EvalRunArgs) -> Result<(), CliError> {
    let kind = match a.task {
        EvalTaskArg::MriCpp => MriKind::Spans,
        EvalTaskArg::MriCppLines => MriKind::Lines,
        EvalTaskArg::Json | EvalTaskArg::Smiles | EvalTaskArg::DlmCpp => {
            return super::eval_dlm::run(a)
        }
    };
    if a.reference_compat {
        return Err(CliError::Input(
            "--reference-compat reproduces the authors' decoding loops, which have no infilling \
             regions: it is for the DLM tasks (json, smiles, dlm-cpp)"
                .into(),
        ));
    }
    let gpath = a
        .grammar
        .clone()
        .unwrap_or_else(|| PathBuf::from(CPP_GRAMMAR));
    let grammar = load_grammar(&gpath, None)?;
    let recognizer = Recognizer::new(&grammar).map_err(|e| CliError::lib(&gpath, e))?;
    let constraint = compile(&gpath, &grammar, &config(None))?.0;

    let mut insts = instances(a, kind, &recognizer)?;
    if let Some(l) = a.limit {
        insts.truncate(l);
    }
    let task = kind.task_name();
    let ids: Vec<&str> = insts.iter().map(|i| i.instance_id.as_str()).collect();
    let planned = plan(a, task, &ids)?;
    let insts: Vec<MriInstance> = planned.shard(insts);
    let Plan { work, out, .. } = planned;
    if work.is_empty() {
        return Ok(());
    }

    let device = super::decode_cmd::device_from(&a.device)?;
    let jobs = jobs_for(a, &device)?;
    // The first worker's model, loaded here so that a bad model fails
    // before any worker starts.
    let first = Infiller::load(a, &device)?;
    if !a.quiet {
        eprintln!(
            "cdiff eval: model {} on {}: {}, grammar {}{}",
            a.model,
            cdiff::model::device_name(&device),
            first.describe(),
            gpath.display(),
            workers_note(jobs)
        );
    }
    let first = std::sync::Mutex::new(Some(first));
    let gp = if a.modes.contains(&EvalMode::Gp) {
        let text = std::fs::read_to_string(&gpath).map_err(|error| CliError::Read {
            path: gpath.clone(),
            error,
        })?;
        Some(gp_cpp_comment(&text))
    } else {
        None
    };
    let productions = constraint.normal_form().n_productions();
    let groups = by_instance(&work);
    let out = std::sync::Mutex::new(out);
    let errors = std::sync::atomic::AtomicUsize::new(0);
    let progress = Progress::new(work.len(), a.quiet);
    let init = || -> Result<(Infiller, Judge), CliError> {
        let infiller = match first.lock().ok().and_then(|mut f| f.take()) {
            Some(m) => m,
            None => Infiller::load(a, &device)?,
        };
        Ok((infiller, Judge::new(a)?))
    };
    for_each(&groups, jobs, init, |(infiller, judge), _, (k, runs)| {
        let inst = &insts[*k];
        // The head the instance's solution is judged after.
        let head = tasks::judged_head(inst, |t| metrics::syntax_ok(&recognizer, t)).to_string();
        for &(mode, seed) in runs {
            let t0 = Instant::now();
            let comment = gp.as_deref().filter(|_| mode == EvalMode::Gp);
            let res = infiller.fill(a, &constraint, inst, mode, seed, comment);
            let wall = t0.elapsed();
            let mut r = Record {
                instance_id: inst.instance_id.clone(),
                task: task.to_string(),
                model: a.model.clone(),
                mode: mode.name().to_string(),
                seed,
                number_spans: Some(inst.number_spans),
                text: String::new(),
                fills: Vec::new(),
                syntax_ok: false,
                schema_ok: None,
                gxx_syntax_ok: None,
                functional_ok: None,
                functional_status: None,
                tokens: 0,
                ms_model: 0.0,
                ms_constraint: 0.0,
                ms_witness: None,
                ms_total: wall.as_secs_f64() * 1e3,
                rejections: 0,
                used_witness: false,
                gave_up: false,
                error: None,
                grammar_productions: Some(productions),
                extra: serde_json::Map::new(),
            };
            match res {
                Ok(o) => {
                    r.fills = o
                        .fills
                        .iter()
                        .map(|f| String::from_utf8_lossy(f).into_owned())
                        .collect();
                    r.text = inst.solution(&r.fills);
                    r.syntax_ok = metrics::syntax_ok(&recognizer, &format!("{head}{}", r.text));
                    if let Some((syn, outcome)) = judge.judge(&head, &r.text, &inst.test)? {
                        r.gxx_syntax_ok = syn;
                        r.functional_ok = Some(outcome.passed());
                        r.functional_status = Some(outcome.status());
                    }
                    r.tokens = o.tokens;
                    r.ms_model = o.time_model.as_secs_f64() * 1e3;
                    r.ms_constraint = o.time_constraint.as_secs_f64() * 1e3;
                    r.ms_witness = Some(o.time_witness.as_secs_f64() * 1e3);
                    r.rejections = o.rejections;
                    r.used_witness = o.used_witness;
                    r.gave_up = o.failed;
                }
                Err(e) => {
                    errors.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    progress.warn(&format!(
                        "cdiff eval: warning: {} {} seed {seed}: {e}",
                        inst.instance_id,
                        mode.name()
                    ));
                    r.error = Some(e.to_string());
                }
            }
            {
                let mut out = out.lock().unwrap_or_else(|p| p.into_inner());
                record::append(&mut *out, &r).map_err(|e| CliError::lib(&a.out, e))?;
            }
            progress.record(&describe(&r));
        }
        Ok(())
    })?;
    let took = progress.finish();
    if !a.quiet {
        eprintln!("{}", summary_line(a, work.len(), took, errors.into_inner()));
    }
    Ok(())
}

/// What a progress line says of record `r`.
pub(super) fn describe(r: &Record) -> String {
    let schema = match r.schema_ok {
        Some(true) => ", schema ok",
        Some(false) => ", schema bad",
        None => "",
    };
    let fun = match (&r.error, r.functional_ok) {
        (Some(_), _) => "error",
        (None, Some(true)) => "functional pass",
        (None, Some(false)) => "functional fail",
        (None, None) => "functional not run",
    };
    format!(
        "{} {} seed {}: syntax {}{schema}, {fun}, {} tokens, {} rejections, {:.0} ms",
        r.instance_id,
        r.mode,
        r.seed,
        if r.syntax_ok { "ok" } else { "bad" },
        r.tokens,
        r.rejections,
        r.ms_total,
    )
}

/// The workers of `--jobs` on `device`: several only on the CPU (each
/// holds its own copy of the model).
///
/// # Errors
/// `--jobs` above 1 on a GPU.
pub(super) fn jobs_for(a: &EvalRunArgs, device: &candle_core::Device) -> Result<usize, CliError> {
    let jobs = a.jobs as usize;
    if jobs > 1 && !device.is_cpu() {
        return Err(CliError::Input(format!(
            "--jobs {jobs}: several workers run on the CPU only (each loads its own model); on a \
             GPU use --jobs 1, and --shard I/N to split a run over devices"
        )));
    }
    Ok(jobs)
}

/// ", N workers" for the first line of a run (nothing for one).
pub(super) fn workers_note(jobs: usize) -> String {
    if jobs > 1 {
        format!(", {jobs} workers")
    } else {
        String::new()
    }
}

/// The work of a run grouped by instance (work is instance-major), in
/// order: the unit a worker takes, so that an instance's grammar is
/// compiled once.
pub(super) fn by_instance(work: &[(usize, EvalMode, u64)]) -> Vec<(usize, Vec<(EvalMode, u64)>)> {
    let mut groups: Vec<(usize, Vec<(EvalMode, u64)>)> = Vec::new();
    for &(k, mode, seed) in work {
        match groups.last_mut() {
            Some((last, runs)) if *last == k => runs.push((mode, seed)),
            _ => groups.push((k, vec![(mode, seed)])),
        }
    }
    groups
}

/// The last line of a run.
pub(super) fn summary_line(
    a: &EvalRunArgs,
    total: usize,
    took: std::time::Duration,
    errors: usize,
) -> String {
    format!(
        "cdiff eval: {total} records appended to {} in {}{}",
        a.out.display(),
        fmt_duration(took),
        if errors > 0 {
            format!(" ({errors} with an error, counted as wrong)")
        } else {
            String::new()
        }
    )
}

/// Reads result files, warning about lines that are not records.
fn read_all(paths: &[PathBuf]) -> Result<Vec<Vec<Record>>, CliError> {
    let mut lists = Vec::new();
    for p in paths {
        if !p.is_file() {
            return Err(CliError::Read {
                path: p.clone(),
                error: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        let r = record::read_records(p).map_err(|e| CliError::lib(p, e))?;
        for (line, msg) in &r.bad_lines {
            eprintln!(
                "cdiff eval: warning: {}: line {line} is not a record ({msg}); skipped",
                p.display()
            );
        }
        lists.push(r.records);
    }
    Ok(lists)
}

fn merge(a: &EvalMergeArgs) -> Result<(), CliError> {
    let lists = read_all(&a.shards)?;
    let (records, dups) = record::merge(lists);
    let tmp = tmp_path(&a.out);
    {
        let mut f = std::fs::File::create(&tmp).map_err(|e| CliError::Read {
            path: tmp.clone(),
            error: e,
        })?;
        for r in &records {
            writeln!(f, "{}", r.to_line()).map_err(CliError::Write)?;
        }
        f.flush().map_err(CliError::Write)?;
    }
    std::fs::rename(&tmp, &a.out).map_err(CliError::Write)?;
    eprintln!(
        "cdiff eval: merged {} records from {} files into {}{}",
        records.len(),
        a.shards.len(),
        a.out.display(),
        if dups > 0 {
            format!(" ({dups} duplicates dropped)")
        } else {
            String::new()
        }
    );
    Ok(())
}

/// A temporary name beside `path`.
fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

fn report_cmd(a: &EvalReportArgs) -> Result<(), CliError> {
    let lists = read_all(&a.results)?;
    let (records, dups) = record::merge(lists);
    if dups > 0 {
        eprintln!("cdiff eval: {dups} duplicate records ignored");
    }
    let text = report::report(&records, a.failures);
    if let Some(dir) = &a.plots {
        let files = cdiff::eval::plots::write_plots(&records, dir).map_err(lib_err)?;
        eprintln!(
            "cdiff eval: {} plot(s) written to {}",
            files.len(),
            dir.display()
        );
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(CliError::Write)
}

/// What one run does: the indices of the instances of its shard, the
/// (index within the shard, mode, seed) triples still to run, and the
/// results file open for appending.
pub(super) struct Plan {
    pub keep: Vec<usize>,
    pub work: Vec<(usize, EvalMode, u64)>,
    pub out: std::fs::File,
}

impl Plan {
    /// The items (one per instance id given to [`plan`]) of this run's shard,
    /// in order.
    pub(super) fn shard<T>(&self, items: Vec<T>) -> Vec<T> {
        let mut take = vec![false; items.len()];
        for &k in &self.keep {
            if let Some(t) = take.get_mut(k) {
                *t = true;
            }
        }
        items
            .into_iter()
            .zip(take)
            .filter_map(|(x, t)| t.then_some(x))
            .collect()
    }
}

/// The shard of `ids` this run takes (`--shard I/N`: every N-th from I) and
/// the (instance index within the shard, mode, seed) triples still to run
/// (with `--resume`, those not in `--out` yet), with `--out` open for
/// appending; prints the plan unless `--quiet`.
pub(super) fn plan(a: &EvalRunArgs, task: &str, ids: &[&str]) -> Result<Plan, CliError> {
    let keep: Vec<usize> = (0..ids.len())
        .filter(|k| a.shard.is_none_or(|(i, n)| k % n == i))
        .collect();
    let (out, done) = record::open_for_append(&a.out, a.resume).map_err(lib_err)?;
    let mut work = Vec::new();
    for (k, &orig) in keep.iter().enumerate() {
        for &mode in &a.modes {
            for &seed in &a.seeds {
                let key = (
                    task.to_string(),
                    ids[orig].to_string(),
                    a.model.clone(),
                    mode.name().to_string(),
                    seed,
                );
                if !done.contains(&key) {
                    work.push((k, mode, seed));
                }
            }
        }
    }
    let skipped = keep.len() * a.modes.len() * a.seeds.len() - work.len();
    if !a.quiet {
        eprintln!(
            "cdiff eval: {task}, {} instances × {} modes × {} seeds: {} to run{}",
            keep.len(),
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
    Ok(Plan { keep, work, out })
}

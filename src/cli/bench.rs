//! `cdiff bench`: timings of the checks on partial outputs cut out of valid
//! documents. Every case is completable (the cut-out text is a valid fill), so
//! a "not completable" answer is a bug and fails the run (exit code 1).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use cdiff::recognize::Recognizer;
use cdiff::rng::{mask_spans, pick_spans, SplitMix64};
use cdiff::Partial;

use super::args::BenchArgs;
use super::{compile, config, load_grammar, micros, read_bytes, CliError};

/// A document of the corpus.
struct Doc {
    name: String,
    bytes: Vec<u8>,
}

/// Runs `cdiff bench`.
pub fn run(a: &BenchArgs) -> Result<(), CliError> {
    let (g, path) = match (&a.json_schema, &a.grammar) {
        (Some(schema), _) => (super::check::load_schema(schema, &a.schema, false)?, schema),
        (None, Some(grammar)) => (load_grammar(grammar, a.start.as_deref())?, grammar),
        (None, None) => return Err(CliError::Input("give --grammar or --json-schema".into())),
    };
    let cfg = config(Some(&a.limits));
    let mut compile_times = Vec::new();
    let (mut c, t) = compile(path, &g, &cfg)?;
    compile_times.push(t);
    for _ in 1..a.compiles {
        let (again, t) = compile(path, &g, &cfg)?;
        compile_times.push(t);
        c = again;
    }
    let compile_us = median_us(&compile_times);

    let recognizer = Recognizer::new(&g).map_err(|e| CliError::lib(path, e))?;
    let all = load_docs(&a.docs, a.field.as_deref())?;
    let n_all = all.len();
    let docs: Vec<Doc> = all
        .into_iter()
        .filter(|d| !d.bytes.is_empty() && matches!(recognizer.accepts(&d.bytes), Ok(true)))
        .collect();
    if docs.is_empty() {
        return Err(CliError::Input(format!(
            "{}: none of the {n_all} documents is nonempty and accepted by the grammar",
            a.docs.display()
        )));
    }

    let mut rng = SplitMix64::new(a.seed);
    let (lo, hi) = a.holes;
    let mut check_t = Vec::with_capacity(a.samples.min(1 << 16));
    let mut full_t = Vec::with_capacity(a.samples.min(1 << 16));
    let (mut n_ok, mut doc_len, mut holes) = (0usize, 0usize, 0usize);
    let mut peak = 0usize;
    let mut n_shortest = 0usize;
    let mut n_swallowing = 0usize;
    let mut swallowed_bytes = 0usize;
    let mut failures = Vec::new();
    for case in 0..a.samples {
        let joined;
        let doc = match a.size {
            None => &docs[rng.below(docs.len() as u64) as usize],
            Some(size) => {
                joined = join_docs(&docs, size, a, &mut rng);
                if !matches!(recognizer.accepts(&joined.bytes), Ok(true)) {
                    return Err(CliError::Input(format!(
                        "case {case}: the grammar does not accept {} (check --join, --prefix, \
                         --suffix)",
                        joined.name
                    )));
                }
                &joined
            }
        };
        let spans = match a.canvas {
            Some(fraction) => mask_spans(doc.bytes.len(), fraction, 8, &mut rng),
            None => {
                let k = lo + rng.below((hi - lo + 1) as u64) as usize;
                pick_spans(doc.bytes.len(), k, &mut rng)
            }
        };
        let p = Partial::cut(&doc.bytes, &spans);
        doc_len += doc.bytes.len();
        holes += p.n_holes();

        let before = cdiff::memory::allocated().unwrap_or(0);
        cdiff::memory::reset_peak();
        let t = Instant::now();
        let fast = c.check(&p).map_err(|e| case_err(case, doc, &spans, e))?;
        let mut best_check = t.elapsed();
        let t = Instant::now();
        let witness = |p: &Partial| match a.best {
            true => c.completable_best(p),
            false => c.completable(p),
        };
        let verdict = witness(&p).map_err(|e| case_err(case, doc, &spans, e))?;
        let mut best_full = t.elapsed();
        let grown = cdiff::memory::peak().unwrap_or(0).saturating_sub(before);
        peak = peak.max(grown);
        // Warm runs (`--repeat`): the same answers, the fastest time kept.
        for _ in 1..a.repeat {
            let t = Instant::now();
            let again = c.check(&p).map_err(|e| case_err(case, doc, &spans, e))?;
            best_check = best_check.min(t.elapsed());
            let t = Instant::now();
            let full = witness(&p).map_err(|e| case_err(case, doc, &spans, e))?;
            best_full = best_full.min(t.elapsed());
            if again != fast || full.completion() != verdict.completion() {
                return Err(CliError::Wrong(format!(
                    "case {case} ({}): a repeated run answered differently",
                    doc.name
                )));
            }
        }
        check_t.push(best_check);
        full_t.push(best_full);

        n_shortest += usize::from(verdict.completion().is_some_and(|d| d.shortest));
        if let Some(done) = verdict.completion() {
            let swallowed = recognizer
                .swallowed_text(&p, &done.fills)
                .map_err(|e| case_err(case, doc, &spans, e))?;
            n_swallowing += usize::from(swallowed.is_some_and(|n| n > 0));
            swallowed_bytes += swallowed.unwrap_or(0);
        }
        let problem = match (fast, verdict.completion()) {
            (true, Some(done)) => match recognizer.accepts(&done.text) {
                Ok(true) => None,
                Ok(false) => Some(format!(
                    "the recognizer rejects the completion {:?}",
                    String::from_utf8_lossy(&done.text)
                )),
                Err(e) => {
                    eprintln!(
                        "cdiff: warning: case {case}: the recognizer gave no answer on the completion: {e}"
                    );
                    None
                }
            },
            (false, None) => Some("not completable".into()),
            (true, None) => Some("check says completable, completable says not".into()),
            (false, Some(_)) => Some("check says not completable, completable says it is".into()),
        };
        match problem {
            None => n_ok += 1,
            Some(msg) => {
                eprintln!(
                    "cdiff: error: case {case} ({}, spans {spans:?}): {msg}",
                    doc.name
                );
                failures.push(case);
            }
        }
    }

    let n = a.samples.max(1) as f64;
    let report = Report {
        grammar: path.clone(),
        docs: a.docs.clone(),
        compiles: compile_times.len(),
        compile_us,
        lexer_states: c.lexer().len(),
        n_docs: n_all,
        n_accepted: docs.len(),
        mean_doc_len: doc_len as f64 / n,
        samples: a.samples,
        holes: a.holes,
        canvas: a.canvas,
        mean_holes: holes as f64 / n,
        peak_mib: peak as f64 / (1 << 20) as f64,
        seed: a.seed,
        repeat: a.repeat,
        check: Stats::of(&check_t),
        completable: Stats::of(&full_t),
        n_completable: n_ok,
        n_shortest,
        n_swallowing,
        swallowed_bytes,
    };
    let mut out = io::stdout().lock();
    if a.json {
        writeln!(out, "{}", report.json())
    } else {
        report.write_table(&mut out)
    }
    .and_then(|()| out.flush())
    .map_err(CliError::Write)?;
    if failures.is_empty() {
        Ok(())
    } else {
        Err(CliError::Wrong(format!(
            "{} of {} cases were not answered completable (first: case {})",
            failures.len(),
            a.samples,
            failures[0]
        )))
    }
}

/// A document of at least `size` bytes: random corpus documents joined with
/// `--join`, inside `--prefix` and `--suffix`.
fn join_docs(docs: &[Doc], size: usize, a: &BenchArgs, rng: &mut SplitMix64) -> Doc {
    let mut bytes = a.prefix.as_bytes().to_vec();
    let mut n = 0;
    while n == 0 || bytes.len() + a.suffix.len() < size {
        if n > 0 {
            bytes.extend_from_slice(a.join.as_bytes());
        }
        bytes.extend_from_slice(&docs[rng.below(docs.len() as u64) as usize].bytes);
        n += 1;
    }
    bytes.extend_from_slice(a.suffix.as_bytes());
    Doc {
        name: format!("{n} joined documents ({} bytes)", bytes.len()),
        bytes,
    }
}

fn case_err(case: usize, doc: &Doc, spans: &[(usize, usize)], e: cdiff::Error) -> CliError {
    CliError::Input(format!("case {case} ({}, spans {spans:?}): {e}", doc.name))
}

/// The documents: the files of a directory (sorted by name, not recursive),
/// the lines of a `.jsonl` file (each a JSON string, or with `field` an object
/// whose named string fields, joined by `+`, are concatenated), or one file.
fn load_docs(path: &Path, field: Option<&str>) -> Result<Vec<Doc>, CliError> {
    let read_err = |error| CliError::Read {
        path: path.to_path_buf(),
        error,
    };
    let meta = std::fs::metadata(path).map_err(read_err)?;
    if meta.is_dir() {
        let mut files: Vec<PathBuf> = Vec::new();
        for entry in std::fs::read_dir(path).map_err(read_err)? {
            let p = entry.map_err(read_err)?.path();
            if p.is_file() {
                files.push(p);
            }
        }
        files.sort();
        return files
            .into_iter()
            .map(|f| {
                Ok(Doc {
                    bytes: read_bytes(&f)?,
                    name: f.display().to_string(),
                })
            })
            .collect();
    }
    let bytes = read_bytes(path)?;
    if path.extension().is_some_and(|e| e == "jsonl") {
        let mut docs = Vec::new();
        for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
            let bad = |message: String| CliError::Line {
                path: path.to_path_buf(),
                line: i + 1,
                message,
            };
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let s: String = match field {
                None => serde_json::from_slice(line)
                    .map_err(|e| bad(format!("expected a JSON string: {e}")))?,
                Some(fields) => {
                    let v: Value = serde_json::from_slice(line)
                        .map_err(|e| bad(format!("expected a JSON object: {e}")))?;
                    let mut s = String::new();
                    for f in fields.split('+') {
                        match v.get(f).and_then(Value::as_str) {
                            Some(x) => s.push_str(x),
                            None => return Err(bad(format!("no string field {f:?}"))),
                        }
                    }
                    s
                }
            };
            docs.push(Doc {
                name: format!("{}:{}", path.display(), i + 1),
                bytes: s.into_bytes(),
            });
        }
        return Ok(docs);
    }
    Ok(vec![Doc {
        name: path.display().to_string(),
        bytes,
    }])
}

fn median_us(ts: &[Duration]) -> f64 {
    let mut v: Vec<Duration> = ts.to_vec();
    v.sort_unstable();
    v.get(v.len() / 2).map_or(0.0, |&d| micros(d))
}

/// Summary of timings, in µs.
struct Stats {
    median: f64,
    p90: f64,
    p99: f64,
    max: f64,
    mean: f64,
}

impl Stats {
    fn of(ts: &[Duration]) -> Stats {
        let mut v: Vec<f64> = ts.iter().map(|&d| micros(d)).collect();
        v.sort_unstable_by(f64::total_cmp);
        // Nearest rank: the smallest value with at least q of the samples at or below it.
        let rank = |q: f64| {
            let i = ((q * v.len() as f64).ceil() as usize).clamp(1, v.len().max(1)) - 1;
            v.get(i).copied().unwrap_or(0.0)
        };
        Stats {
            median: rank(0.5),
            p90: rank(0.9),
            p99: rank(0.99),
            max: v.last().copied().unwrap_or(0.0),
            mean: v.iter().sum::<f64>() / v.len().max(1) as f64,
        }
    }

    fn json(&self) -> Value {
        let r = |x: f64| (x * 10.0).round() / 10.0;
        json!({
            "median": r(self.median),
            "p90": r(self.p90),
            "p99": r(self.p99),
            "max": r(self.max),
            "mean": r(self.mean),
        })
    }
}

struct Report {
    grammar: PathBuf,
    docs: PathBuf,
    compiles: usize,
    compile_us: f64,
    lexer_states: usize,
    n_docs: usize,
    n_accepted: usize,
    mean_doc_len: f64,
    samples: usize,
    holes: (usize, usize),
    canvas: Option<f64>,
    mean_holes: f64,
    /// The most memory one case's check and completable added, in MiB.
    peak_mib: f64,
    seed: u64,
    /// Runs per case; each case's fastest is its time.
    repeat: u32,
    check: Stats,
    completable: Stats,
    n_completable: usize,
    /// Witnesses proven shortest.
    n_shortest: usize,
    /// Witnesses whose fills turn text into ignored lexemes (comment it
    /// out; [`Recognizer::swallowed_text`]).
    n_swallowing: usize,
    /// The text bytes those witnesses comment out, in all.
    swallowed_bytes: usize,
}

impl Report {
    fn json(&self) -> Value {
        json!({
            "grammar": self.grammar.display().to_string(),
            "docs": self.docs.display().to_string(),
            "compile_micros": (self.compile_us * 10.0).round() / 10.0,
            "compiles": self.compiles,
            "lexer_states": self.lexer_states,
            "documents": self.n_docs,
            "accepted_documents": self.n_accepted,
            "mean_doc_len": (self.mean_doc_len * 10.0).round() / 10.0,
            "samples": self.samples,
            "holes": [self.holes.0, self.holes.1],
            "canvas": self.canvas,
            "mean_holes": (self.mean_holes * 100.0).round() / 100.0,
            "peak_mib": (self.peak_mib * 100.0).round() / 100.0,
            "seed": self.seed,
            "repeat": self.repeat,
            "check_micros": self.check.json(),
            "completable_micros": self.completable.json(),
            "completable": self.n_completable,
            "shortest": self.n_shortest,
            "swallowing": self.n_swallowing,
            "swallowed_bytes": self.swallowed_bytes,
        })
    }

    fn write_table(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "grammar      {}: compiled in {:.3} ms (median of {}), lexer {} states",
            self.grammar.display(),
            self.compile_us / 1000.0,
            self.compiles,
            self.lexer_states
        )?;
        writeln!(
            out,
            "documents    {}: {} of {} accepted; mean sampled length {:.1} bytes",
            self.docs.display(),
            self.n_accepted,
            self.n_docs,
            self.mean_doc_len
        )?;
        let cut = match self.canvas {
            Some(f) => format!("{:.0} % masked in 1-8 byte spans", f * 100.0),
            None => format!("{}..{} spans cut", self.holes.0, self.holes.1),
        };
        writeln!(
            out,
            "cases        {} ({cut}, mean {:.2} holes), seed {}; best of {} runs each; peak memory {:.2} MiB",
            self.samples, self.mean_holes, self.seed, self.repeat, self.peak_mib
        )?;
        writeln!(
            out,
            "{:12} {:>10} {:>10} {:>10} {:>10} {:>10}",
            "µs", "median", "p90", "p99", "max", "mean"
        )?;
        for (name, s) in [("check", &self.check), ("completable", &self.completable)] {
            writeln!(
                out,
                "{name:12} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
                s.median, s.p90, s.p99, s.max, s.mean
            )?;
        }
        writeln!(
            out,
            "completable  {} of {} ({} witnesses proven shortest, {} comment out text)",
            self.n_completable, self.samples, self.n_shortest, self.n_swallowing
        )
    }
}

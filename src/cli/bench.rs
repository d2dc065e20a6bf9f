//! `cdiff bench`: timings of the checks on partial outputs cut out of valid
//! documents. Every case is completable (the cut-out text is a valid fill), so
//! a "not completable" answer is a bug and fails the run (exit code 1).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use cdiff::recognize::Recognizer;
use cdiff::Partial;

use super::args::BenchArgs;
use super::{compile, config, load_grammar, micros, read_bytes, CliError};

/// A small deterministic generator (SplitMix64); no external crate needed.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`), by multiply-high (bias below 2^-64·n).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }
}

/// A document of the corpus.
struct Doc {
    name: String,
    bytes: Vec<u8>,
}

/// Runs `cdiff bench`.
pub fn run(a: &BenchArgs) -> Result<(), CliError> {
    let (g, path) = match (&a.json_schema, &a.grammar) {
        (Some(schema), _) => (super::check::load_schema(schema, false)?, schema),
        (None, Some(grammar)) => (load_grammar(grammar, a.start.as_deref())?, grammar),
        (None, None) => return Err(CliError::Input("give --grammar or --json-schema".into())),
    };
    let cfg = config(a.budget);
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
    let all = load_docs(&a.docs)?;
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

    let mut rng = SplitMix64(a.seed);
    let (lo, hi) = a.holes;
    let mut check_t = Vec::with_capacity(a.samples.min(1 << 16));
    let mut full_t = Vec::with_capacity(a.samples.min(1 << 16));
    let (mut n_ok, mut doc_len, mut holes) = (0usize, 0usize, 0usize);
    let mut failures = Vec::new();
    for case in 0..a.samples {
        let doc = &docs[rng.below(docs.len())];
        let k = lo + rng.below(hi - lo + 1);
        let spans = cut(doc.bytes.len(), k, &mut rng);
        let p = partial(&doc.bytes, &spans);
        doc_len += doc.bytes.len();
        holes += p.n_holes();

        let t = Instant::now();
        let fast = c.check(&p).map_err(|e| case_err(case, doc, &spans, e))?;
        check_t.push(t.elapsed());
        let t = Instant::now();
        let verdict = c
            .completable(&p)
            .map_err(|e| case_err(case, doc, &spans, e))?;
        full_t.push(t.elapsed());

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
        mean_holes: holes as f64 / n,
        seed: a.seed,
        check: Stats::of(&check_t),
        completable: Stats::of(&full_t),
        n_completable: n_ok,
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

fn case_err(case: usize, doc: &Doc, spans: &[(usize, usize)], e: cdiff::Error) -> CliError {
    CliError::Input(format!("case {case} ({}, spans {spans:?}): {e}", doc.name))
}

/// Up to `k` disjoint, non-adjacent spans `[start, end)` of a text of length
/// `len > 0`: each of random length `1..=max(1, len/4)` at a random start;
/// overlapping or touching spans are merged.
fn cut(len: usize, k: usize, rng: &mut SplitMix64) -> Vec<(usize, usize)> {
    let max = (len / 4).max(1);
    let mut spans: Vec<(usize, usize)> = (0..k)
        .map(|_| {
            let l = (1 + rng.below(max)).min(len);
            let s = rng.below(len - l + 1);
            (s, s + l)
        })
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (s, e) in spans {
        match merged.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => merged.push((s, e)),
        }
    }
    merged
}

/// The document with each span replaced by a hole.
fn partial(doc: &[u8], spans: &[(usize, usize)]) -> Partial {
    let mut p = Partial::new();
    let mut pos = 0;
    for &(s, e) in spans {
        p.push_text(doc.get(pos..s).unwrap_or_default());
        p.push_hole();
        pos = e;
    }
    p.push_text(doc.get(pos..).unwrap_or_default());
    p
}

/// The documents: the files of a directory (sorted by name, not recursive),
/// the lines of a `.jsonl` file (each a JSON string), or one file.
fn load_docs(path: &Path) -> Result<Vec<Doc>, CliError> {
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
            let s: String = serde_json::from_slice(line)
                .map_err(|e| bad(format!("expected a JSON string: {e}")))?;
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
    mean_holes: f64,
    seed: u64,
    check: Stats,
    completable: Stats,
    n_completable: usize,
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
            "mean_holes": (self.mean_holes * 100.0).round() / 100.0,
            "seed": self.seed,
            "check_micros": self.check.json(),
            "completable_micros": self.completable.json(),
            "completable": self.n_completable,
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
        writeln!(
            out,
            "cases        {} ({}..{} spans cut, mean {:.2} holes), seed {}",
            self.samples, self.holes.0, self.holes.1, self.mean_holes, self.seed
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
            "completable  {} of {}",
            self.n_completable, self.samples
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_disjoint_nonempty_and_in_range() {
        let mut rng = SplitMix64(7);
        for len in 1..60 {
            for k in 1..5 {
                let spans = cut(len, k, &mut rng);
                assert!(!spans.is_empty() && spans.len() <= k);
                for w in spans.windows(2) {
                    assert!(w[0].1 < w[1].0);
                }
                for &(s, e) in &spans {
                    assert!(s < e && e <= len);
                }
                let doc: Vec<u8> = (0..len as u8).collect();
                assert_eq!(partial(&doc, &spans).n_holes(), spans.len());
            }
        }
    }

    #[test]
    fn seeded_generator_is_deterministic() {
        let a: Vec<usize> = (0..5)
            .map({
                let mut r = SplitMix64(1);
                move |_| r.below(100)
            })
            .collect();
        let b: Vec<usize> = (0..5)
            .map({
                let mut r = SplitMix64(1);
                move |_| r.below(100)
            })
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x < 100));
    }
}

//! A profiling loop: runs only `Constraint::check` on partial outputs cut out
//! of documents, over and over, so that `perf record` sees nothing else.
//!
//! ```text
//! cargo run --release --example check_loop -- GRAMMAR DOCS_FILE [CASES] [ROUNDS] [FRACTION]
//! ```
//!
//! `GRAMMAR` is a grammar file, or a JSON Schema (`.json`).
//! `DOCS_FILE` holds one document per line (`.jsonl`: one JSON string per
//! line, or a HumanEval-X record, whose `declaration` and
//! `canonical_solution` are the document), or, for a name ending in
//! `.partials.jsonl`, one partial output per line in the CLI's JSON form
//! (strings and nulls; `CASES` of them are taken in order and `FRACTION` is
//! ignored) — e.g. the canvases a decoder checked. Prints the median check time. Without `FRACTION` each case cuts 1–3
//! holes; with it, each case masks that fraction of the document's bytes in
//! 1–8-byte spans (a diffusion canvas, as `cdiff bench --canvas`). With
//! `CHECK_LOOP_WITNESS=1` in the environment it runs `completable` instead.
//! With `CHECK_LOOP_EVICT=MB` it writes and reads a buffer of that many
//! MiB between checks (untimed), so each check starts with cold caches, as
//! one does inside a decoder after the model's forward pass. With
//! `CHECK_LOOP_BETWEEN=1` it runs `completable` on each case (untimed)
//! before its check, and with `CHECK_LOOP_RECOGNIZE=1` as well the
//! recognizer on the completion, as `cdiff bench` does between its cases
//! (what makes that benchmark's checks slower than this loop's). With
//! `CHECK_LOOP_REPLAY=1` the checks run under [`Constraint::replaying`], as
//! a decoder's do (for partials that follow one another, as a decoder's
//! dumped canvases).

use std::time::Instant;

use cdiff::rng::{mask_spans, pick_spans, SplitMix64};
use cdiff::{Constraint, Grammar, Partial};

/// The document of one `.jsonl` line.
fn document(line: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("");
    Ok(match v.as_str() {
        Some(s) => s.to_string(),
        None => format!("{}{}", field("declaration"), field("canonical_solution")),
    })
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: check_loop GRAMMAR DOCS_FILE [CASES] [ROUNDS]");
        std::process::exit(2);
    }
    let cases: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(300);
    let rounds: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(20);
    let canvas: Option<f64> = args.get(5).and_then(|s| s.parse().ok());
    let run = || -> Result<(), String> {
        let src = std::fs::read_to_string(&args[1]).map_err(|e| e.to_string())?;
        // A `.json` file is a JSON Schema (default options: any property order).
        let g = if args[1].ends_with(".json") {
            let v: serde_json::Value = serde_json::from_str(&src).map_err(|e| e.to_string())?;
            cdiff::grammar::schema::json_schema_to_grammar(&v, &Default::default())
                .map_err(|e| e.to_string())?
                .0
        } else {
            Grammar::from_file_text(&args[1], &src, None).map_err(|e| e.to_string())?
        };
        let c = Constraint::compile(&g).map_err(|e| e.to_string())?;
        if args[2].ends_with(".partials.jsonl") {
            let text = std::fs::read_to_string(&args[2]).map_err(|e| e.to_string())?;
            let parts = text
                .lines()
                .filter(|l| !l.is_empty())
                .take(cases)
                .map(Partial::from_json)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| e.to_string())?;
            return time_checks(&g, &c, &parts, rounds);
        }
        let jsonl = args[2].ends_with(".jsonl");
        let docs: Vec<String> = std::fs::read_to_string(&args[2])
            .map_err(|e| e.to_string())?
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| match jsonl {
                true => document(l),
                false => Ok(l.to_string()),
            })
            .collect::<Result<_, _>>()?;
        if docs.is_empty() {
            return Err("no documents".into());
        }
        let mut rng = SplitMix64::new(0);
        let parts: Vec<Partial> = (0..cases)
            .map(|_| {
                let d = docs[rng.below(docs.len() as u64) as usize].as_bytes();
                let spans = match canvas {
                    Some(f) => mask_spans(d.len(), f, 8, &mut rng),
                    None => {
                        let k = 1 + rng.below(3) as usize;
                        pick_spans(d.len(), k, &mut rng)
                    }
                };
                Partial::cut(d, &spans)
            })
            .collect();
        time_checks(&g, &c, &parts, rounds)
    };
    if let Err(e) = run() {
        eprintln!("check_loop: {e}");
        std::process::exit(2);
    }
}

/// Checks (or completes) every partial of `parts`, `rounds` times, and
/// prints the median and p90 time.
fn time_checks(
    g: &Grammar,
    c: &Constraint,
    parts: &[Partial],
    rounds: usize,
) -> Result<(), String> {
    let witness = std::env::var_os("CHECK_LOOP_WITNESS").is_some_and(|v| v == "1");
    let between = std::env::var_os("CHECK_LOOP_BETWEEN").is_some_and(|v| v == "1");
    let recognizer = match std::env::var_os("CHECK_LOOP_RECOGNIZE").is_some_and(|v| v == "1") {
        true => Some(cdiff::recognize::Recognizer::new(g).map_err(|e| e.to_string())?),
        false => None,
    };
    let evict: usize = std::env::var("CHECK_LOOP_EVICT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut junk = vec![0u64; evict << 17];
    let mut sink = 0u64;
    let mut times = Vec::new();
    let replay = std::env::var_os("CHECK_LOOP_REPLAY").is_some_and(|v| v == "1");
    let _kept = replay.then(|| c.replaying());
    for _ in 0..rounds {
        for p in parts {
            for (i, x) in junk.iter_mut().enumerate() {
                *x = x.wrapping_add(i as u64);
                sink ^= *x;
            }
            if between {
                let v = c.completable(p).map_err(|e| e.to_string())?;
                if let (Some(r), Some(done)) = (&recognizer, v.completion()) {
                    r.accepts(&done.text).map_err(|e| e.to_string())?;
                    r.swallowed_text(p, &done.fills)
                        .map_err(|e| e.to_string())?;
                }
            }
            let t = Instant::now();
            if witness {
                c.completable(p).map_err(|e| e.to_string())?;
            } else {
                c.check(p).map_err(|e| e.to_string())?;
            }
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
    }
    std::hint::black_box(sink);
    times.sort_by(f64::total_cmp);
    println!(
        "{} {}: median {:.1} µs, p90 {:.1} µs",
        times.len(),
        if witness { "completables" } else { "checks" },
        times[times.len() / 2],
        times[times.len() * 9 / 10]
    );
    Ok(())
}

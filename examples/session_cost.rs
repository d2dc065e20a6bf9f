//! What a [`cdiff::Session`] saves a diffusion-style decoding loop: each
//! document starts fully masked (one byte per mask) and its bytes are
//! unmasked in random order; at each step a random masked position gets
//! `WRONG` proposals of random bytes of the document, then its own byte,
//! until one is kept, like a decoder's rejection sampling (a kept wrong
//! byte stays; a position where every proposal is refused stays masked). The same proposals are answered by a session
//! (`Session::try_place`) and by a fresh `Constraint::check` of each
//! resulting partial output, built from the canvas (one segment per run);
//! the answers must agree.
//!
//! ```sh
//! cargo run --release --example session_cost -- [GRAMMAR] [DOCS] [N] [WRONG]
//! ```
//!
//! Defaults: `grammars/cpp.ebnf`, the HumanEval-X C++ solutions
//! (`datasets/humaneval-x-cpp`, declaration + solution), 10 documents, 2
//! wrong proposals per step. `DOCS` is a `.jsonl` file (strings or
//! HumanEval-X records) or a file with one document per line.

use std::time::{Duration, Instant};

use cdiff::rng::SplitMix64;
use cdiff::{Constraint, Grammar, Partial, Place};

/// The document of one line of `DOCS`.
fn document(line: &str, jsonl: bool) -> Result<Vec<u8>, String> {
    if !jsonl {
        return Ok(line.as_bytes().to_vec());
    }
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("");
    Ok(match v.as_str() {
        Some(s) => s.as_bytes().to_vec(),
        None => format!("{}{}", field("declaration"), field("canonical_solution")).into_bytes(),
    })
}

/// The partial output of `doc` with the positions in `masked` as holes.
fn partial(doc: &[u8], masked: &[bool]) -> Partial {
    let mut p = Partial::new();
    for (&b, &m) in doc.iter().zip(masked) {
        match m {
            true => p.push_hole(),
            false => p.push_text([b]),
        }
    }
    p
}

/// The hole and place of masked position `i`.
fn hole_place(masked: &[bool], i: usize) -> (usize, Place) {
    let runs = (0..i)
        .filter(|&k| masked[k] && (k == 0 || !masked[k - 1]))
        .count();
    let (before, after) = (
        i > 0 && masked[i - 1],
        i + 1 < masked.len() && masked[i + 1],
    );
    let hole = if before { runs - 1 } else { runs };
    let place = match (before, after) {
        (false, false) => Place::Fill,
        (false, true) => Place::Start,
        (true, false) => Place::End,
        (true, true) => Place::Inside,
    };
    (hole, place)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let root = env!("CARGO_MANIFEST_DIR");
    let gpath = args
        .get(1)
        .cloned()
        .unwrap_or(format!("{root}/grammars/cpp.ebnf"));
    let dpath = args.get(2).cloned().unwrap_or(format!(
        "{root}/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
    ));
    let n: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(10);
    let wrong: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(2);
    let run = || -> Result<(), String> {
        let src = std::fs::read_to_string(&gpath).map_err(|e| e.to_string())?;
        let g = Grammar::from_file_text(&gpath, &src, None).map_err(|e| e.to_string())?;
        let c = Constraint::compile(&g).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(&dpath).map_err(|e| e.to_string())?;
        let jsonl = dpath.ends_with(".jsonl");
        let docs: Vec<Vec<u8>> = text
            .lines()
            .filter(|l| !l.is_empty())
            .map(|l| document(l, jsonl))
            .collect::<Result<_, _>>()?;
        let mut rng = SplitMix64::new(7);
        let (mut t_session, mut t_fresh) = (Duration::ZERO, Duration::ZERO);
        let (mut proposals, mut bytes) = (0usize, 0usize);
        let mut stats = Vec::new();
        for doc in docs.iter().filter(|d| !d.is_empty()).take(n) {
            bytes += doc.len();
            // The session's pass; the partial outputs it answered about are
            // checked afresh after it (a session's replayed hole exits live
            // on the thread while it does, and would serve the fresh checks
            // too).
            let mut asked: Vec<(Vec<u8>, Vec<bool>, bool)> = Vec::new();
            let mut masked = vec![true; doc.len()];
            // The bytes kept so far (a wrong proposal may be kept too).
            let mut cur = doc.clone();
            let mut s = c.session(partial(doc, &masked));
            let mut order: Vec<usize> = (0..doc.len()).collect();
            for i in (1..order.len()).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            for &i in &order {
                let (hole, place) = hole_place(&masked, i);
                for k in 0..=wrong {
                    let b = match k == wrong {
                        true => doc[i],
                        false => doc[rng.below(doc.len() as u64) as usize],
                    };
                    let t = Instant::now();
                    let kept = s.try_place(hole, place, &[b]).map_err(|e| e.to_string())?;
                    t_session += t.elapsed();
                    let mut after = masked.clone();
                    after[i] = false;
                    let mut with = cur.clone();
                    with[i] = b;
                    asked.push((with, after, kept));
                    if kept {
                        masked[i] = false;
                        cur[i] = b;
                        break;
                    }
                }
            }
            stats.push(s.stats());
            drop(s);
            for (with, after, kept) in &asked {
                // Building the partial output is part of a check's cost
                // to a loop, as the session's own building is part of its.
                let t = Instant::now();
                let p = partial(with, after);
                let fresh = c.check(&p).map_err(|e| e.to_string())?;
                t_fresh += t.elapsed();
                if *kept != fresh {
                    return Err(format!("session {kept}, check {fresh} on {p:?}"));
                }
            }
            proposals += asked.len();
        }
        let per = |d: Duration| d.as_secs_f64() * 1e6 / proposals.max(1) as f64;
        let sum = |f: fn(&cdiff::SessionStats) -> usize| stats.iter().map(f).sum::<usize>();
        println!(
            "{} documents ({} B on average), {proposals} proposals: fresh checks {:.1} µs, session {:.1} µs per proposal ({:.2}x); session: {} checks, {} answered by {} insertion points",
            stats.len(),
            bytes / stats.len().max(1),
            per(t_fresh),
            per(t_session),
            t_fresh.as_secs_f64() / t_session.as_secs_f64().max(1e-12),
            sum(|s| s.checks),
            sum(|s| s.by_point),
            sum(|s| s.points),
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("session_cost: {e}");
        std::process::exit(2);
    }
}

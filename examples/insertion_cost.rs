//! Cost per proposed token of an autoregressive infilling loop's
//! constraint (`cdiff::mask::Insertion`) against the length of the
//! document: at random points of each document a region of `REGION` bytes is
//! cut out; the loop then walks the region token by token (1–4 bytes), asks
//! `allows` for three tokens taken from elsewhere in the document and then
//! the true one (which must be allowed), and `advance`s past it. No model:
//! only the constraint is timed.
//!
//! ```sh
//! cargo run --release --example insertion_cost -- DOCS [POINTS] [REGION] [KEPT_MIB] [KEPT_TAILS_MIB] [in-order]
//! ```
//!
//! `DOCS` is a file of one JSON value per line (`.jsonl`: a string, or a
//! HumanEval-X record, whose `declaration` and `canonical_solution` are the
//! document), or any other file taken as one document; the grammar is `grammars/cpp.ebnf`. Prints
//! the median and p90 of `allows`, and the mean cost per proposal with
//! `Insertion::new` and `advance` included. `KEPT_MIB` (default 64) is the
//! constraint's `Config::kept_charts` in MiB: 0 keeps no chart of the text
//! before a point for later points (each region parses its text before
//! the point from the start), for comparison on one binary;
//! `KEPT_TAILS_MIB` (default 64) is `Config::kept_tails` in MiB: 0 keeps
//! no automaton of the text after a point for later points (each region
//! makes and searches its own). With `in-order` the points lie in the
//! first document, at random places taken from its start to its end, as
//! an infilling loop fills the regions of one template one after another
//! (the text before each point starts with the one before the point
//! before it, and the text after it ends the one after that point).

use std::time::Instant;

use cdiff::mask::Insertion;
use cdiff::rng::SplitMix64;
use cdiff::{Config, Constraint, Grammar, Partial};

/// The document of one `.jsonl` line.
fn document(line: &str) -> Result<Vec<u8>, String> {
    let v: serde_json::Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("");
    match v.as_str() {
        Some(s) => Ok(s.as_bytes().to_vec()),
        None => Ok(format!("{}{}", field("declaration"), field("canonical_solution")).into_bytes()),
    }
}

fn main() {
    cdiff::memory::keep_freed_memory();
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!(
            "usage: insertion_cost DOCS [POINTS] [REGION] [KEPT_MIB] [KEPT_TAILS_MIB] [in-order]"
        );
        std::process::exit(2);
    };
    let points: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(40);
    let region: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(30);
    let kept_mib: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(64);
    let tails_mib: usize = args.get(5).and_then(|s| s.parse().ok()).unwrap_or(64);
    let in_order = args.get(6).is_some_and(|s| s == "in-order");
    let run = || -> Result<(), String> {
        let gpath = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/cpp.ebnf");
        let src = std::fs::read_to_string(gpath).map_err(|e| e.to_string())?;
        let g = Grammar::from_file_text(gpath, &src, None).map_err(|e| e.to_string())?;
        let config = Config {
            kept_charts: kept_mib << 20,
            kept_tails: tails_mib << 20,
            ..Config::default()
        };
        let c = Constraint::with_config(&g, config).map_err(|e| e.to_string())?;
        let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
        let docs: Vec<Vec<u8>> = match path.ends_with(".jsonl") {
            true => text
                .lines()
                .filter(|l| !l.is_empty())
                .map(document)
                .collect::<Result<_, _>>()?,
            false => vec![text.into_bytes()],
        };
        let docs: Vec<&Vec<u8>> = docs.iter().filter(|d| d.len() >= region + 10).collect();
        if docs.is_empty() {
            return Err(format!("no document longer than {} bytes", region + 10));
        }
        let mut rng = SplitMix64::new(1);
        let mut allows: Vec<f64> = Vec::new();
        let (mut other, mut bytes) = (0.0f64, 0usize);
        // In order: the points' places drawn first (another generator),
        // one document, sorted, as the regions of one template are filled.
        let mut places: Vec<usize> = Vec::new();
        if in_order {
            let mut draw = SplitMix64::new(2);
            let d = docs[0];
            places = (0..points)
                .map(|_| draw.below((d.len() - region) as u64) as usize)
                .collect();
            places.sort_unstable();
        }
        let mut places = places.into_iter();
        for _ in 0..points {
            let (d, p) = match places.next() {
                Some(p) => (docs[0], p),
                None => {
                    let d = docs[rng.below(docs.len() as u64) as usize];
                    (d, rng.below((d.len() - region) as u64) as usize)
                }
            };
            bytes += d.len();
            let left = Partial::new().text(&d[..p]);
            let right = Partial::new().hole().text(&d[p + region..]);
            let t = Instant::now();
            let mut at = Insertion::new(&c, &left, &right)
                .map_err(|e| e.to_string())?
                .expecting_many();
            other += t.elapsed().as_secs_f64();
            let mut q = p;
            while q < p + region {
                let k = 1 + rng.below(4) as usize;
                let tok = &d[q..(q + k).min(p + region)];
                for i in 0..4 {
                    let cand = match i {
                        3 => tok,
                        _ => {
                            let s = rng.below((d.len() - k) as u64) as usize;
                            &d[s..s + k]
                        }
                    };
                    let t = Instant::now();
                    let ok = at.allows(cand).map_err(|e| e.to_string())?;
                    allows.push(t.elapsed().as_secs_f64() * 1e6);
                    if i == 3 && !ok {
                        return Err("the document's own token was refused".into());
                    }
                }
                let t = Instant::now();
                at.advance(tok);
                other += t.elapsed().as_secs_f64();
                q += tok.len();
            }
        }
        let n = allows.len();
        let total: f64 = allows.iter().sum::<f64>() + other * 1e6;
        allows.sort_by(f64::total_cmp);
        println!(
            "{points} points in documents of {} B on average, {n} proposals: allows median {:.1} µs, p90 {:.1} µs; per proposal with new + advance {:.1} µs",
            bytes / points.max(1),
            allows[n / 2],
            allows[n * 9 / 10],
            total / n as f64
        );
        Ok(())
    };
    if let Err(e) = run() {
        eprintln!("insertion_cost: {e}");
        std::process::exit(2);
    }
}

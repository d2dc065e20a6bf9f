//! Per-token cost of the constraint in multi-region infilling: HumanEval-X
//! C++ solutions (`datasets/humaneval-x-cpp`, those `grammars/cpp.ebnf`
//! accepts) with 1, 2 or 3 random spans of 5-50 bytes removed, filled by an
//! autoregressive FIM model (default: a tiny random StarCoder2 written to a
//! temporary directory) in `vanilla` and `con` mode, the latter with
//! rejection sampling only (`mask_after: None`), with allowed-token masks
//! after 8 rejections at a position, that again with every proposal
//! answered by a fresh check (`fresh_checks`: the paper's way, for
//! comparison; the same tokens), and with masks ahead (the default: a mask
//! at every position, computed while the forward pass runs).
//!
//! ```sh
//! cargo run --release --example infill_overhead -- [--model DIR] [--limit 40] [--max-tokens 32]
//! ```
//!
//! Prints a markdown table: per region count and mode, the tokens generated,
//! model and constraint time per generated token (and the constraint's time
//! outside the forward passes), that time per proposed token (generated
//! plus rejected; and without the witness completions `con` finishes
//! from, once per instance), the constraint's share, rejections
//! and masks per instance.

use std::path::PathBuf;
use std::time::Duration;

use candle_core::{DType, Device};
use cdiff::infill::{infill_ar, ArInfillConfig, Mode, Template};
use cdiff::model::{init_random_ar, load_causal, ArFamily, Size};
use cdiff::rng::SplitMix64;
use cdiff::{Constraint, Grammar, Partial};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `n` disjoint random spans of 5-50 bytes of `text`, sorted (up to 3 tries).
fn spans(text: &[u8], n: usize, rng: &mut SplitMix64) -> Option<Vec<(usize, usize)>> {
    for _ in 0..3 {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for _ in 0..n {
            let len = 5 + rng.below(46) as usize;
            if len >= text.len() {
                break;
            }
            let start = rng.below((text.len() - len) as u64) as usize;
            out.push((start, start + len));
        }
        out.sort_unstable();
        if out.len() == n && out.windows(2).all(|w| w[0].1 < w[1].0) {
            return Some(out);
        }
    }
    None
}

fn main() -> cdiff::Result<()> {
    cdiff::memory::keep_freed_memory();
    cdiff::model::pin_cpu_threads();
    let args: Vec<String> = std::env::args().collect();
    let limit: usize = arg(&args, "--limit").map_or(40, |s| s.parse().unwrap_or(40));
    let max_tokens: usize = arg(&args, "--max-tokens").map_or(32, |s| s.parse().unwrap_or(32));
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let model_dir = match arg(&args, "--model") {
        Some(m) => PathBuf::from(m),
        None => {
            let d = std::env::temp_dir().join("cdiff-infill-overhead-starcoder2");
            init_random_ar(ArFamily::StarCoder2, Size::Tiny, &d, 0, None)?;
            d
        }
    };
    let mut m = load_causal(&model_dir.to_string_lossy(), &Device::Cpu, DType::F32)?;
    let gpath = root.join("grammars/cpp.ebnf");
    let g = Grammar::from_lark(&std::fs::read_to_string(&gpath).unwrap_or_default(), None)?;
    let c = Constraint::compile(&g)?;
    let data = std::fs::read_to_string(root.join("datasets/humaneval-x-cpp/humaneval_cpp.jsonl"))
        .unwrap_or_default();
    let mut sources = Vec::new();
    for line in data.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let text = format!(
            "{}{}",
            v["declaration"].as_str().unwrap_or(""),
            v["canonical_solution"].as_str().unwrap_or("")
        );
        if c.check(&Partial::complete(text.as_bytes()))? {
            sources.push(text.into_bytes());
        }
        if sources.len() == limit {
            break;
        }
    }
    println!(
        "model {}, {} solutions, at most {max_tokens} tokens per region\n",
        model_dir.display(),
        sources.len()
    );
    println!("| regions | mode | instances | tokens | model ms/token | constraint ms/token (outside forward passes) | constraint µs/proposal outside forward passes (without witnesses) | constraint share | rejections/instance | masks/instance | valid | witness |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
    let modes = [
        ("vanilla", Mode::Vanilla, None, false),
        ("con, rejection sampling", Mode::Con, None, false),
        ("con, masks after 8", Mode::Con, Some(8), false),
        ("con, masks after 8, fresh checks", Mode::Con, Some(8), true),
        ("con, masks ahead", Mode::Con, Some(0), false),
    ];
    for n in 1..=3 {
        for (name, mode, mask_after, fresh_checks) in modes {
            // A constraint per mode: the charts an earlier mode's points
            // kept for the same templates (`Config::kept_charts`) would
            // otherwise serve this one's.
            let c = c.clone();
            let mut rng = SplitMix64::new(n as u64);
            let (mut tokens, mut tm, mut tc) = (0usize, Duration::ZERO, Duration::ZERO);
            let mut tw = Duration::ZERO;
            let mut overlapped = Duration::ZERO;
            let (mut count, mut valid, mut witness) = (0, 0, 0);
            let (mut rejections, mut masks) = (0, 0);
            for (i, src) in sources.iter().enumerate() {
                let Some(sp) = spans(src, n, &mut rng) else {
                    continue;
                };
                let mut chunks = Vec::new();
                let mut pos = 0;
                for &(s, e) in &sp {
                    chunks.push(src[pos..s].to_vec());
                    pos = e;
                }
                chunks.push(src[pos..].to_vec());
                let t = Template::new(chunks)?;
                let cfg = ArInfillConfig {
                    mode,
                    temperature: 1.0,
                    seed: i as u64,
                    max_tokens,
                    mask_after,
                    fresh_checks,
                    ..ArInfillConfig::default()
                };
                let out = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg)?;
                tokens += out.tokens;
                tm += out.time_model;
                tc += out.time_constraint;
                tw += out.time_witness;
                overlapped += out.time_overlapped;
                count += 1;
                valid += out.valid as usize;
                witness += out.used_witness as usize;
                rejections += out.rejections;
                masks += out.masks;
            }
            let per = |d: Duration| d.as_secs_f64() * 1e3 / tokens.max(1) as f64;
            let proposals = (tokens + rejections).max(1) as f64;
            let per_proposal = |d: Duration| d.as_secs_f64() * 1e6 / proposals;
            println!(
                "| {n} | {name} | {count} | {tokens} | {:.3} | {:.3} ({:.3}) | {:.1} ({:.1}) | {:.0} % | {:.1} | {:.1} | {valid}/{count} | {witness} |",
                per(tm),
                per(tc),
                per(tc - overlapped),
                per_proposal(tc - overlapped),
                per_proposal(tc - overlapped - tw),
                100.0 * tc.as_secs_f64() / (tm + tc).as_secs_f64().max(1e-12),
                rejections as f64 / count.max(1) as f64,
                masks as f64 / count.max(1) as f64
            );
        }
    }
    Ok(())
}

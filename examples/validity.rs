//! Validity of what cdiff's own models generate in the three modes: vanilla
//! (no constraint), con-minus and con.
//!
//! ```text
//! cargo run --release --example validity -- [--task smiles|json] [--model DIR]
//!     [--n 200] [--max-tokens N] [--steps N] [--block 0] [--temperature T]
//!     [--remasking random|low-confidence] [--seed 0] [--samples 8]
//!     [--modes vanilla,con-minus,con]
//! ```
//!
//! `--task smiles` (default): `models/smiles-tiny` under `grammars/smiles.ebnf`;
//! `--task json`: `models/json-tiny` under `grammars/json.ebnf`. Canvas
//! length, steps and temperature default to the model card's (the training
//! context, half as many steps, the card's temperature).
//!
//! For each mode, `n` generations with seeds `seed..seed+n` from an empty
//! prompt, in blocks of `block` tokens (0: one block of `max-tokens`). Prints
//! a Markdown table: the share accepted by the grammar's recognizer, the
//! share accepted by an independent check (JSON: serde_json parses it; SMILES:
//! balanced ring closures — every ring label, `1`..`9` or `%nn`, occurs an
//! even number of times outside brackets, which the grammar does not check),
//! the share with both, distinct outputs, runs that gave up (con-minus) or
//! finished from the witness (con), mean rejections, time per sample and the
//! constraint's share of it; then a few samples per mode.

use std::collections::{HashMap, HashSet};
use std::time::Instant;

use candle_core::{DType, Device};
use cdiff::decode::{decode, DecodeConfig, Mode, Remasking};
use cdiff::model::{load, Denoiser, Shipped, JSON_TINY, SMILES_TINY};
use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar};

/// Whether every ring-closure label of `s` occurs an even number of times
/// (labels: a digit, or `%` and two digits; bracket atoms are skipped).
fn rings_balanced(s: &[u8]) -> bool {
    let mut count: HashMap<u32, u32> = HashMap::new();
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            b'[' => {
                while i < s.len() && s[i] != b']' {
                    i += 1;
                }
            }
            b'%' => {
                if i + 2 < s.len() && s[i + 1].is_ascii_digit() && s[i + 2].is_ascii_digit() {
                    let l = 10 * (s[i + 1] - b'0') as u32 + (s[i + 2] - b'0') as u32;
                    *count.entry(l).or_default() += 1;
                    i += 2;
                } else {
                    return false;
                }
            }
            c if c.is_ascii_digit() => *count.entry((c - b'0') as u32).or_default() += 1,
            _ => {}
        }
        i += 1;
    }
    count.values().all(|c| c.is_multiple_of(2))
}

/// Whether `s` is one JSON document by serde_json (not cdiff's code).
fn serde_json_accepts(s: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Value>(s).is_ok()
}

struct Args {
    task: &'static Shipped,
    model: Option<String>,
    n: u64,
    max_tokens: usize,
    steps: usize,
    temperature: f64,
    seed: u64,
    samples: usize,
    block: usize,
    modes: Vec<String>,
    random_remasking: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        task: &SMILES_TINY,
        model: None,
        n: 200,
        max_tokens: 0,
        steps: 0,
        temperature: f64::NAN,
        seed: 0,
        samples: 8,
        block: 0,
        modes: vec!["vanilla".into(), "con-minus".into(), "con".into()],
        random_remasking: true,
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().ok_or(format!("{k} needs a value"))?;
        let bad = |e: &dyn std::fmt::Display| format!("{k} {v}: {e}");
        match k.as_str() {
            "--model" => a.model = Some(v),
            "--task" => {
                a.task = match v.as_str() {
                    "smiles" => &SMILES_TINY,
                    "json" => &JSON_TINY,
                    _ => return Err(bad(&"expected smiles or json")),
                }
            }
            "--n" => a.n = v.parse().map_err(|e| bad(&e))?,
            "--max-tokens" => a.max_tokens = v.parse().map_err(|e| bad(&e))?,
            "--steps" => a.steps = v.parse().map_err(|e| bad(&e))?,
            "--temperature" => a.temperature = v.parse().map_err(|e| bad(&e))?,
            "--seed" => a.seed = v.parse().map_err(|e| bad(&e))?,
            "--samples" => a.samples = v.parse().map_err(|e| bad(&e))?,
            "--block" => a.block = v.parse().map_err(|e| bad(&e))?,
            "--modes" => a.modes = v.split(',').map(String::from).collect(),
            "--remasking" => {
                a.random_remasking = match v.as_str() {
                    "random" => true,
                    "low-confidence" => false,
                    _ => return Err(bad(&"expected random or low-confidence")),
                }
            }
            _ => return Err(format!("unknown option {k}")),
        }
    }
    Ok(a)
}

fn main() {
    cdiff::memory::keep_freed_memory();
    cdiff::model::pin_cpu_threads();
    if let Err(e) = run() {
        eprintln!("validity: {e}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let mut a = parse_args()?;
    if a.max_tokens == 0 {
        a.max_tokens = a.task.max_tokens;
    }
    if a.steps == 0 {
        a.steps = (a.max_tokens / 2).max(1);
    }
    if a.temperature.is_nan() {
        a.temperature = a.task.temperature;
    }
    let model = a.model.clone().unwrap_or(a.task.dir.to_string());
    let json = a.task == &JSON_TINY;
    let err = |e: cdiff::Error| e.to_string();
    let grammar = a.task.grammar;
    let src = std::fs::read_to_string(grammar).map_err(|e| format!("{grammar}: {e}"))?;
    let g = Grammar::from_file_text(grammar, &src, None).map_err(err)?;
    let c = Constraint::compile(&g).map_err(err)?;
    let rec = Recognizer::new(&g).map_err(err)?;
    let mut m = load(&model, &Device::Cpu, DType::F32).map_err(err)?;
    let prompt = m.chat_prompt_ids("").map_err(err)?;
    println!(
        "model {}, grammar {}, {} generations per mode (seeds {}..{}), max_tokens {}, steps {}, block length {}, temperature {}, {} remasking\n",
        model,
        grammar.rsplit('/').next().unwrap_or(grammar),
        a.n,
        a.seed,
        a.seed + a.n,
        a.max_tokens,
        a.steps,
        if a.block == 0 { a.max_tokens } else { a.block },
        a.temperature,
        if a.random_remasking { "random" } else { "low-confidence" }
    );
    let independent = if json { "serde_json" } else { "rings balanced" };
    println!("| mode | grammar-valid | {independent} | both | distinct | gave up | from witness | mean rejections | ms / sample | constraint share |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut shown = Vec::new();
    for (name, mode) in [
        ("vanilla", Mode::Vanilla),
        ("con-minus", Mode::ConMinus),
        ("con", Mode::Con),
    ] {
        if !a.modes.iter().any(|m| m == name) {
            continue;
        }
        let (mut ok, mut rings, mut both, mut failed, mut rej) = (0u64, 0u64, 0u64, 0u64, 0u64);
        let mut witness = 0u64;
        let mut distinct = HashSet::new();
        let mut t_con = 0f64;
        let mut samples = Vec::new();
        let t0 = Instant::now();
        for seed in a.seed..a.seed + a.n {
            let mut cfg = DecodeConfig::llada();
            cfg.mode = mode;
            cfg.max_tokens = a.max_tokens;
            cfg.steps = a.steps;
            cfg.block_length = if a.block == 0 { a.max_tokens } else { a.block };
            cfg.temperature = a.temperature;
            cfg.seed = seed;
            if a.random_remasking {
                cfg.remasking = Remasking::Random;
            }
            let model: &mut dyn Denoiser = &mut m.model;
            let out = decode(
                model,
                &m.tokenizer,
                &m.special,
                Some(&c),
                &prompt,
                &cfg,
                None,
            )
            .map_err(err)?;
            let v = rec.accepts(&out.text).map_err(err)?;
            let r = if json {
                serde_json_accepts(&out.text)
            } else {
                rings_balanced(&out.text)
            };
            ok += v as u64;
            rings += r as u64;
            both += (v && r) as u64;
            failed += out.failed as u64;
            witness += out.used_witness as u64;
            rej += out.rejections as u64;
            t_con += out.time_constraint.as_secs_f64();
            distinct.insert(out.text.clone());
            if samples.len() < a.samples {
                samples.push(format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.text),
                    if v { "" } else { "   (invalid)" }
                ));
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        let n = a.n.max(1) as f64;
        let pct = |x: u64| format!("{:.1} %", 100.0 * x as f64 / n);
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {:.2} | {:.1} | {:.1} % |",
            pct(ok),
            pct(rings),
            pct(both),
            distinct.len(),
            failed,
            witness,
            rej as f64 / n,
            1000.0 * wall / n,
            100.0 * t_con / wall.max(1e-9)
        );
        shown.push((name, samples));
    }
    for (name, samples) in shown {
        println!("\n{name} samples:");
        for s in samples {
            println!("    {s}");
        }
    }
    Ok(())
}

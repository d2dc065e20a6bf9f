//! Constrained decoding with real (tiny, random) Dream and LLaDA models built
//! by `init_random`: the harshest proposer there is. In `Con` mode every
//! output must be accepted by the independent recognizer; in `Vanilla` mode
//! most are not, which shows the constraint does the work.

use candle_core::{DType, Device};
use cdiff::decode::{decode, DecodeConfig, Mode};
use cdiff::model::{init_random, load, Arch, Denoiser, Size};
use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar};

const ARITH: &str = r#"
    start: expr
    expr: term (("+" | "-") term)*
    term: factor (("*" | "/") factor)*
    factor: NUMBER | "(" expr ")"
    NUMBER: /[0-9]+/
    %ignore " "
"#;

fn run(arch: Arch, grammar_src: &str, name: &str) {
    let dir = std::env::temp_dir().join(format!(
        "cdiff-tiny-{name}-{:?}-{}",
        arch,
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    init_random(arch, Size::Tiny, &dir, 7, None).unwrap();
    let mut m = load(&dir.to_string_lossy(), &Device::Cpu, DType::F32).unwrap();
    let g = Grammar::from_lark(grammar_src, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    let prompt = m.chat_prompt_ids("generate").unwrap();
    let (mut con_valid, mut van_valid) = (0, 0);
    let seeds: usize = 20;
    for seed in 0..seeds {
        for mode in [Mode::Con, Mode::Vanilla] {
            let mut cfg = match arch {
                Arch::Dream => DecodeConfig::dream(),
                Arch::Llada => DecodeConfig::llada(),
            };
            cfg.mode = mode;
            cfg.max_tokens = 16;
            cfg.steps = 8;
            cfg.block_length = 8;
            cfg.seed = seed as u64;
            cfg.max_rejections = 50;
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
            .unwrap();
            let ok = rec.accepts(&out.text).unwrap();
            match mode {
                Mode::Con => {
                    assert!(
                        ok,
                        "{name} {arch:?} seed {seed}: {:?} rejected by the recognizer",
                        String::from_utf8_lossy(&out.text)
                    );
                    assert!(out.valid);
                    con_valid += 1;
                }
                _ => van_valid += ok as usize,
            }
        }
    }
    eprintln!("{name} {arch:?}: con {con_valid}/{seeds} valid, vanilla {van_valid}/{seeds} valid");
    assert!(
        van_valid * 2 < seeds,
        "{name}: vanilla valid too often ({van_valid}/{seeds})"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn tiny_dream_json() {
    run(Arch::Dream, include_str!("../grammars/json.ebnf"), "json");
}

#[test]
fn tiny_dream_arithmetic() {
    run(Arch::Dream, ARITH, "arith");
}

#[test]
fn tiny_llada_json() {
    run(Arch::Llada, include_str!("../grammars/json.ebnf"), "json");
}

#[test]
fn tiny_llada_smiles() {
    run(
        Arch::Llada,
        include_str!("../grammars/smiles.ebnf"),
        "smiles",
    );
}

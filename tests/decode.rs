//! The decoder with mock models: constrained output is always in the grammar.

use candle_core::{Device, Tensor};
use cdiff::decode::{decode, Alg, ArchStyle, DecodeConfig, DecodeOutput, Mode, Overlap, Remasking};
use cdiff::model::{Denoiser, SpecialTokens, TextCodec};
use cdiff::recognize::Recognizer;
use cdiff::rng::SplitMix64;
use cdiff::{Constraint, Error, ErrorKind, Grammar, Partial, Result};

const MASK: u32 = 256;
const EOS: u32 = 257;
const N_TOKENS: usize = 258;
/// The embedding is wider than the vocabulary, as Dream's is.
const WIDTH: usize = 264;

fn special() -> SpecialTokens {
    SpecialTokens {
        mask: MASK,
        eos: EOS,
        pad: EOS,
        n_tokens: N_TOKENS,
    }
}

/// Byte-level codec: token i < 256 is byte i.
struct Bytes(Vec<[u8; 1]>);

impl Bytes {
    fn new() -> Bytes {
        Bytes((0..=255u8).map(|b| [b]).collect())
    }
}

impl TextCodec for Bytes {
    fn encode(&self, text: &[u8]) -> Result<Vec<u32>> {
        Ok(text.iter().map(|&b| b as u32).collect())
    }
    fn token_bytes(&self, id: u32) -> &[u8] {
        self.0.get(id as usize).map_or(&[], |b| &b[..])
    }
    fn max_token_bytes(&self) -> usize {
        1
    }
}

/// A harsh proposer: random logits from a seeded generator (a fresh stream
/// per forward pass), with huge logits on the mask id and on the ids past the
/// vocabulary, which must never be sampled. `bias` adds to chosen bytes so
/// that some tests see plausible text.
struct Harsh {
    rng: SplitMix64,
    scale: f32,
    bias: Vec<(u32, f32)>,
    calls: usize,
    /// `Some(seed)`: each forward pass draws from a stream seeded by `seed`
    /// and the canvas, so its logits are a function of the canvas alone (as
    /// a real model's are).
    pure: Option<u64>,
}

impl Harsh {
    fn new(seed: u64) -> Harsh {
        Harsh {
            rng: SplitMix64::new(seed ^ 0x5eed),
            scale: 4.0,
            bias: Vec::new(),
            calls: 0,
            pure: None,
        }
    }
}

impl Denoiser for Harsh {
    fn vocab_size(&self) -> usize {
        WIDTH
    }
    fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.calls += 1;
        let mut pure = self.pure.map(|seed| {
            let h = tokens.iter().fold(seed, |h, &t| {
                (h ^ u64::from(t)).wrapping_mul(0x100_0000_01b3)
            });
            SplitMix64::new(h)
        });
        let rng = pure.as_mut().unwrap_or(&mut self.rng);
        let mut v = Vec::with_capacity(tokens.len() * WIDTH);
        for _ in tokens {
            for id in 0..WIDTH as u32 {
                let x = if id == MASK || id as usize >= N_TOKENS {
                    1.0e4
                } else {
                    (rng.unit() as f32 - 0.5) * self.scale
                };
                let b = self
                    .bias
                    .iter()
                    .find(|(i, _)| *i == id)
                    .map_or(0.0, |(_, b)| *b);
                v.push(x + b);
            }
        }
        Tensor::from_vec(v, (tokens.len(), WIDTH), &Device::Cpu)
            .map_err(|e| Error::new(ErrorKind::Model, e.to_string()))
    }
}

const BRACKETS: &str = r#"
start: item*
?item: "(" item* ")" | "[" item* "]" | "x"
"#;

const ARITH: &str = r#"
start: expr
?expr: term (("+" | "-") term)*
?term: atom (("*" | "/") atom)*
?atom: NUMBER | "(" expr ")"
NUMBER: /[0-9]+/
%ignore " "
"#;

fn grammars() -> Vec<(&'static str, Grammar)> {
    vec![
        (
            "json",
            Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap(),
        ),
        ("brackets", Grammar::from_lark(BRACKETS, None).unwrap()),
        ("arith", Grammar::from_lark(ARITH, None).unwrap()),
    ]
}

fn small(mode: Mode, style: ArchStyle, seed: u64) -> DecodeConfig {
    let base = match style {
        ArchStyle::Dream => DecodeConfig::dream(),
        ArchStyle::Llada => DecodeConfig {
            temperature: 0.5,
            block_length: 8,
            ..DecodeConfig::llada()
        },
    };
    DecodeConfig {
        mode,
        steps: 8,
        max_tokens: 16,
        seed,
        ..base
    }
}

fn run(g: &Constraint, cfg: &DecodeConfig, seed: u64) -> DecodeOutput {
    let prompt: Vec<u32> = b"Q: give me one.\nA:".iter().map(|&b| b as u32).collect();
    decode(
        &mut Harsh::new(seed),
        &Bytes::new(),
        &special(),
        Some(g),
        &prompt,
        cfg,
        None,
    )
    .unwrap()
}

#[test]
fn con_is_always_in_the_grammar() {
    for (name, g) in grammars() {
        let c = Constraint::compile(&g).unwrap();
        let rec = Recognizer::new(&g).unwrap();
        for (style, limit_holes) in [
            (ArchStyle::Dream, false),
            (ArchStyle::Llada, false),
            (ArchStyle::Dream, true),
        ] {
            for seed in 0..20 {
                let cfg = DecodeConfig {
                    limit_holes,
                    ..small(Mode::Con, style, seed)
                };
                let out = run(&c, &cfg, seed);
                let shown = String::from_utf8_lossy(&out.text);
                assert!(out.valid, "{name} {style:?} seed {seed}: {shown:?}");
                assert!(
                    rec.accepts(&out.text).unwrap(),
                    "{name} {style:?} seed {seed}: recognizer rejects {shown:?}"
                );
                assert!(c.check(&Partial::complete(&out.text)).unwrap());
                assert!(!out.failed);
                if !out.text_fallback || out.text.len() < 16 {
                    assert_eq!(out.tokens.len(), 18 + 16);
                }
                assert!(out.forward_passes <= 8);
            }
        }
    }
}

#[test]
fn vanilla_is_mostly_invalid_and_never_samples_forbidden_ids() {
    for (name, g) in grammars() {
        let c = Constraint::compile(&g).unwrap();
        let rec = Recognizer::new(&g).unwrap();
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            let mut invalid = 0;
            for seed in 0..20 {
                let out = run(&c, &small(Mode::Vanilla, style, seed), seed);
                assert_eq!(out.valid, rec.accepts(&out.text).unwrap());
                invalid += usize::from(!out.valid);
                assert_eq!(out.rejections, 0);
                assert_eq!(out.accepted, 16);
                let answer = &out.tokens[18..];
                assert_eq!(answer.len(), 16);
                assert!(
                    answer.iter().all(|&t| t != MASK && (t as usize) < N_TOKENS),
                    "{answer:?}"
                );
            }
            assert!(invalid > 10, "{name} {style:?}: only {invalid}/20 invalid");
        }
    }
}

#[test]
fn con_minus_is_valid_or_reports_failure() {
    for (name, g) in grammars() {
        let c = Constraint::compile(&g).unwrap();
        let rec = Recognizer::new(&g).unwrap();
        for seed in 0..20 {
            let out = run(&c, &small(Mode::ConMinus, ArchStyle::Dream, seed), seed);
            assert!(!out.used_witness);
            if out.failed {
                assert!(!out.valid);
            } else {
                assert!(out.valid, "{name} seed {seed}");
                assert!(rec.accepts(&out.text).unwrap());
            }
        }
    }
}

/// How many of 20 seeds con-minus finishes with a model that favours the
/// bytes of the brackets language and a generous rejection budget.
fn con_minus_finished(limit_holes: bool) -> usize {
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut ok = 0;
    for seed in 0..20 {
        let cfg = DecodeConfig {
            max_rejections: 10_000,
            limit_holes,
            ..small(Mode::ConMinus, ArchStyle::Dream, seed)
        };
        let mut m = Harsh::new(seed);
        m.bias = b"()[]x"
            .iter()
            .map(|&b| (b as u32, 3.0))
            .chain([(EOS, 3.0)])
            .collect();
        let out = decode(&mut m, &Bytes::new(), &special(), Some(&c), &[], &cfg, None).unwrap();
        if !out.failed {
            assert!(out.valid);
            ok += 1;
        }
    }
    ok
}

#[test]
fn con_minus_succeeds_with_a_helpful_model() {
    // The constraint alone often finishes the canvas. The others get stuck:
    // a single mask left where the grammar needs two or more bytes (holes
    // are unbounded in the completability check), so every id of that
    // position is rejected.
    let ok = con_minus_finished(false);
    assert!(ok >= 5, "{ok}/20");
}

#[test]
fn limited_holes_get_con_minus_stuck_less() {
    // With each hole limited to its masks, a token that leaves more to
    // write than the masks can hold is refused when it is proposed.
    let (free, limited) = (con_minus_finished(false), con_minus_finished(true));
    eprintln!("con-minus finished {free}/20 with unlimited holes, {limited}/20 limited");
    assert!(limited > free && limited >= 18, "{limited} vs {free}");
}

#[test]
fn same_seed_same_output() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    for mode in [Mode::Vanilla, Mode::ConMinus, Mode::Con] {
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            let cfg = small(mode, style, 7);
            let a = run(&c, &cfg, 7);
            let b = run(&c, &cfg, 7);
            assert_eq!(a.tokens, b.tokens);
            assert_eq!(a.text, b.text);
            assert_eq!(a.rejections, b.rejections);
            let other = run(&c, &small(mode, style, 8), 8);
            if mode == Mode::Vanilla {
                assert_ne!(a.tokens, other.tokens);
            }
        }
    }
}

#[test]
fn every_alg_and_remasking_works() {
    let g = Grammar::from_lark(ARITH, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    for alg in [Alg::Entropy, Alg::MaskgitPlus, Alg::TopkMargin, Alg::Random] {
        for temperature in [0.0, 0.2, 1.0] {
            let cfg = DecodeConfig {
                alg,
                temperature,
                ..small(Mode::Con, ArchStyle::Dream, 3)
            };
            assert!(run(&c, &cfg, 3).valid, "{alg:?} {temperature}");
        }
    }
    for remasking in [Remasking::LowConfidence, Remasking::Random] {
        for temperature in [0.0, 1.0] {
            let cfg = DecodeConfig {
                remasking,
                temperature,
                ..small(Mode::Con, ArchStyle::Llada, 3)
            };
            assert!(run(&c, &cfg, 3).valid, "{remasking:?} {temperature}");
        }
    }
}

#[test]
fn prefill_and_fence() {
    // The constrained text starts with the prefill; the answer is fenced.
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    for seed in 0..10 {
        let cfg = DecodeConfig {
            prefill: b"([".to_vec(),
            fence: Some("txt".into()),
            max_tokens: 24,
            ..small(Mode::Con, ArchStyle::Dream, seed)
        };
        let out = run(&c, &cfg, seed);
        assert!(out.text.starts_with(b"(["));
        assert!(out.answer.starts_with(b"```txt\n"), "{:?}", out.answer);
        assert!(out.valid && rec.accepts(&out.text).unwrap());
    }
}

#[test]
fn progress_hook_sees_every_step() {
    let g = Grammar::from_lark(ARITH, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut seen = Vec::new();
    let mut hook = |s: &cdiff::decode::StepInfo| seen.push((s.step, s.masked));
    let cfg = small(Mode::Vanilla, ArchStyle::Llada, 1);
    decode(
        &mut Harsh::new(1),
        &Bytes::new(),
        &special(),
        Some(&c),
        &[],
        &cfg,
        Some(&mut hook),
    )
    .unwrap();
    // Two blocks of 8, four steps each, two tokens per step.
    let masked: Vec<usize> = seen.iter().map(|s| s.1).collect();
    assert_eq!(masked, vec![14, 12, 10, 8, 6, 4, 2, 0]);
}

#[test]
fn constrained_modes_need_a_grammar() {
    let cfg = small(Mode::Con, ArchStyle::Dream, 0);
    let e = decode(
        &mut Harsh::new(0),
        &Bytes::new(),
        &special(),
        None,
        &[],
        &cfg,
        None,
    );
    assert!(e.is_err());
}

/// Prints validity, witness use and timing per grammar, style and mode
/// (`cargo test --release --test decode stats -- --ignored --nocapture`).
#[test]
#[ignore]
fn stats() {
    for (name, g) in grammars() {
        let c = Constraint::compile(&g).unwrap();
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            for mode in [Mode::Vanilla, Mode::ConMinus, Mode::Con] {
                let (mut valid, mut failed, mut witness, mut fallback, mut rej) = (0, 0, 0, 0, 0);
                let (mut tm, mut tc) = (0.0, 0.0);
                for seed in 0..20 {
                    let cfg = DecodeConfig {
                        max_tokens: 32,
                        steps: 16,
                        block_length: 8,
                        ..small(mode, style, seed)
                    };
                    let out = run(&c, &cfg, seed);
                    valid += usize::from(out.valid);
                    failed += usize::from(out.failed);
                    witness += usize::from(out.used_witness);
                    fallback += usize::from(out.text_fallback);
                    rej += out.rejections;
                    tm += out.time_model.as_secs_f64();
                    tc += out.time_constraint.as_secs_f64();
                }
                println!(
                    "{name:8} {style:5?} {mode:8?} valid {valid:2}/20 failed {failed:2} witness {witness:2} \
                     text-fallback {fallback:2} rejections/decode {:6.1} model {:6.2} ms constraint {:6.2} ms",
                    rej as f64 / 20.0,
                    tm * 50.0,
                    tc * 50.0
                );
            }
        }
    }
}

/// A decode by the harsh proposer (`helpful`: biased toward the grammar's
/// bytes, so that most proposals are kept).
fn harsh_decode(c: &Constraint, cfg: &DecodeConfig, helpful: bool, seed: u64) -> DecodeOutput {
    let mut m = harsh(seed, helpful);
    decode(&mut m, &Bytes::new(), &special(), Some(c), &[], cfg, None).unwrap()
}

/// The harsh proposer of `seed`; `helpful`: favouring the brackets
/// language's bytes.
fn harsh(seed: u64, helpful: bool) -> Harsh {
    let mut m = Harsh::new(seed);
    if helpful {
        m.bias = b"()[]x".iter().map(|&b| (b as u32, 6.0)).collect();
    }
    m
}

#[test]
fn overlapped_forward_passes_commit_what_sequential_ones_commit() {
    // With overlap the next step's forward pass runs on a guessed canvas
    // before the checks; it is used only when the canvas is the guess. With
    // a model whose logits depend on the canvas alone, the decode must be
    // token for token the sequential one, and the guesses must have been
    // both used and wasted (else the test proves nothing).
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let (mut sequential, mut wasted, mut decodes) = (0, 0, 0);
    for helpful in [true, false] {
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            for mode in [Mode::Con, Mode::ConMinus] {
                for seed in 0..6 {
                    let cfg = DecodeConfig {
                        max_tokens: 32,
                        steps: 16,
                        ..small(mode, style, seed)
                    };
                    let run = |overlap| {
                        let mut m = harsh(seed, helpful);
                        m.pure = Some(seed);
                        let cfg = DecodeConfig {
                            overlap,
                            ..cfg.clone()
                        };
                        let out =
                            decode(&mut m, &Bytes::new(), &special(), Some(&c), &[], &cfg, None)
                                .unwrap();
                        assert_eq!(m.calls, out.forward_passes);
                        out
                    };
                    let (a, b) = (run(Overlap::Never), run(Overlap::Always));
                    let at = format!("helpful {helpful} {style:?} {mode:?} seed {seed}");
                    assert_same_decode(&a, &b, &at);
                    assert!(b.forward_passes >= a.forward_passes, "{at}");
                    sequential += a.forward_passes;
                    wasted += b.forward_passes - a.forward_passes;
                    decodes += 1;
                    // On the CPU, `Auto` never guesses.
                    assert_eq!(run(Overlap::Auto).forward_passes, a.forward_passes, "{at}");
                }
            }
        }
    }
    // Every step but a decode's last guesses once: some guesses were
    // wasted and most were not.
    assert!(wasted > 0, "no guess was ever wrong");
    assert!(wasted < sequential - decodes, "{wasted} of {sequential}");
}

#[test]
fn samplers_built_in_parallel_draw_what_one_thread_draws() {
    // A step builds its rows' samplers on rayon's threads, each from a seed
    // drawn in position order: the decode must not depend on the number of
    // threads.
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    for style in [ArchStyle::Dream, ArchStyle::Llada] {
        for seed in 0..4 {
            let cfg = DecodeConfig {
                max_tokens: 32,
                steps: 8,
                ..small(Mode::Con, style, seed)
            };
            let on = |threads| {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap();
                pool.install(|| harsh_decode(&c, &cfg, true, seed))
            };
            assert_same_decode(&on(1), &on(4), &format!("{style:?} seed {seed}"));
        }
    }
}

/// [`harsh_decode`] with `cfg` and with `cfg` changed by `change`, which
/// must commit the same tokens: the same tokens and text, accepted and
/// rejected proposals, masks, failure and witness use (`at` names the
/// case). Returns both outputs (without and with the change).
fn same_decode_with(
    c: &Constraint,
    cfg: &DecodeConfig,
    helpful: bool,
    seed: u64,
    at: &str,
    change: impl Fn(&mut DecodeConfig),
) -> (DecodeOutput, DecodeOutput) {
    let a = harsh_decode(c, cfg, helpful, seed);
    let mut changed = cfg.clone();
    change(&mut changed);
    let b = harsh_decode(c, &changed, helpful, seed);
    assert_same_decode(&a, &b, at);
    (a, b)
}

/// See [`same_decode_with`].
fn assert_same_decode(a: &DecodeOutput, b: &DecodeOutput, at: &str) {
    assert_eq!(a.tokens, b.tokens, "{at}");
    assert_eq!(a.text, b.text, "{at}");
    assert_eq!(
        (a.accepted, a.rejections, a.masks, a.failed, a.used_witness),
        (b.accepted, b.rejections, b.masks, b.failed, b.used_witness),
        "{at}"
    );
}

#[test]
fn proposals_together_commit_what_one_by_one_commits() {
    // One check of a step's first proposals all committed decides them
    // when it accepts (fewer completions with more tokens): the decode must
    // be token for token the one-by-one decode. With a model whose
    // proposals are mostly kept that takes fewer checks; with the harsh
    // one, which gets most refused, about as many (proposals go together
    // only while most first proposals are kept).
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    for helpful in [true, false] {
        let (mut together, mut one_by_one, mut known) = (0, 0, 0);
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            for mode in [Mode::Con, Mode::ConMinus] {
                for seed in 0..12 {
                    let cfg = DecodeConfig {
                        max_tokens: 32,
                        steps: 16,
                        ..small(mode, style, seed)
                    };
                    let at = format!("helpful {helpful} {style:?} {mode:?} seed {seed}");
                    let (a, b) =
                        same_decode_with(&c, &cfg, helpful, seed, &at, |cfg| cfg.one_by_one = true);
                    together += a.checks;
                    one_by_one += b.checks;
                    known += a.known_refusals;
                    assert_eq!(b.known_refusals, 0, "{at}");
                }
            }
        }
        eprintln!(
            "helpful {helpful}: checks {together} together, {one_by_one} one by one, \
             {known} proposals refused as holding refused proposals together"
        );
        if helpful {
            assert!(together < one_by_one, "{together} vs {one_by_one}");
            // Refused proposals together come back one by one.
            assert!(known > 0);
        } else {
            assert!(
                together * 20 <= one_by_one * 21,
                "{together} vs {one_by_one}"
            );
        }
    }
}

#[test]
fn fresh_checks_commit_what_reused_checks_commit() {
    // `fresh_checks` answers every proposal by a check of the canvas (no
    // proposals together, no insertion-point answers, no replayed hole
    // exits): token for token the same decode, with more checks.
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let (mut reused_checks, mut fresh_checks) = (0, 0);
    for helpful in [true, false] {
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            for seed in 0..8 {
                let cfg = DecodeConfig {
                    max_tokens: 32,
                    steps: 16,
                    ..small(Mode::Con, style, seed)
                };
                let at = format!("helpful {helpful} {style:?} seed {seed}");
                let (a, b) =
                    same_decode_with(&c, &cfg, helpful, seed, &at, |cfg| cfg.fresh_checks = true);
                reused_checks += a.checks;
                fresh_checks += b.checks;
            }
        }
    }
    assert!(
        reused_checks < fresh_checks,
        "{reused_checks} vs {fresh_checks}"
    );
}

#[test]
fn masks_change_nothing_where_no_position_reaches_their_count() {
    // Masks come only after `k` rejections at one position in one step (or
    // at the rejection limit): a run that never gets there is token for
    // token the rejection-sampling run. A model that favours the brackets
    // language, with holes limited to their masks (no dead ends), gets
    // there in some runs only.
    let g = Grammar::from_lark(BRACKETS, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut same = 0;
    for seed in 0..20 {
        let decode_with = |mask_after| {
            let cfg = DecodeConfig {
                max_rejections: 10_000,
                mask_after,
                limit_holes: true,
                ..small(Mode::Con, ArchStyle::Dream, seed)
            };
            let mut m = Harsh::new(seed);
            m.bias = b"()[]x".iter().map(|&b| (b as u32, 3.0)).collect();
            decode(&mut m, &Bytes::new(), &special(), Some(&c), &[], &cfg, None).unwrap()
        };
        let (plain, masked) = (decode_with(None), decode_with(Some(8)));
        assert_eq!(plain.masks, 0);
        if masked.masks == 0 {
            assert_eq!(masked.tokens, plain.tokens, "seed {seed}");
            assert_eq!(masked.rejections, plain.rejections);
            same += 1;
        }
        assert!(masked.valid, "seed {seed}");
    }
    eprintln!("{same} of 20 runs never reached 8 rejections at a position");
    assert!(same > 0 && same < 20, "{same}");
}

#[test]
fn with_masks_rejections_never_end_con_minus() {
    // Without masks con-minus gives up at the rejection limit; with them a
    // position that keeps refusing draws from its mask, so a decode fails
    // only when positions run out of allowed tokens.
    for (name, g) in grammars() {
        let c = Constraint::compile(&g).unwrap();
        let rec = Recognizer::new(&g).unwrap();
        let (mut failed_plain, mut failed_masked, mut masks) = (0, 0, 0);
        for seed in 0..20 {
            let base = DecodeConfig {
                max_rejections: 20,
                ..small(Mode::ConMinus, ArchStyle::Dream, seed)
            };
            let plain = run(
                &c,
                &DecodeConfig {
                    mask_after: None,
                    ..base.clone()
                },
                seed,
            );
            let masked = run(
                &c,
                &DecodeConfig {
                    mask_after: Some(4),
                    ..base
                },
                seed,
            );
            failed_plain += usize::from(plain.failed);
            failed_masked += usize::from(masked.failed);
            masks += masked.masks;
            assert!(!masked.used_witness);
            if !masked.failed {
                assert!(
                    masked.valid && rec.accepts(&masked.text).unwrap(),
                    "{name} {seed}"
                );
            }
        }
        eprintln!("{name}: con-minus failed {failed_plain}/20 without masks, {failed_masked}/20 with ({masks} masks)");
        assert!(masks > 0, "{name}");
        assert!(
            failed_masked < failed_plain,
            "{name}: {failed_masked} vs {failed_plain}"
        );
    }
}

/// `reference_compat` samples what the authors' loops sample: ids past the
/// tokenizer, and the mask id, which leaves its position masked.
#[test]
fn reference_compat_samples_padding_ids_and_the_mask_id() {
    let prompt: Vec<u32> = b"Q:".iter().map(|&b| b as u32).collect();
    for style in [ArchStyle::Dream, ArchStyle::Llada] {
        for (mask_bias, want) in [(-2.0e4, 258), (0.0, MASK)] {
            let mut cfg = small(Mode::Vanilla, style, 0);
            cfg.temperature = 0.0;
            cfg.reference_compat = true;
            let mut m = Harsh::new(1);
            m.bias = vec![(MASK, mask_bias)];
            let out = decode(&mut m, &Bytes::new(), &special(), None, &prompt, &cfg, None).unwrap();
            // Ties at 1e4 go to the lowest id, as torch's argmax.
            assert!(
                out.tokens[2..].iter().all(|&t| t == want),
                "{style:?} {:?}",
                out.tokens
            );
            cfg.reference_compat = false;
            let mut m = Harsh::new(1);
            m.bias = vec![(MASK, mask_bias)];
            let out = decode(&mut m, &Bytes::new(), &special(), None, &prompt, &cfg, None).unwrap();
            assert!(out.tokens[2..]
                .iter()
                .all(|&t| t != MASK && (t as usize) < N_TOKENS));
        }
    }
}

/// The authors' `generate.py` asserts that the answer splits into whole
/// blocks and the steps evenly over them; cdiff's own rules split unevenly.
#[test]
fn reference_compat_refuses_llada_uneven_blocks() {
    let prompt = [b'Q' as u32];
    for (max_tokens, block_length, steps, ok) in [
        (16, 8, 8, true),
        (16, 6, 8, false),
        (16, 8, 5, false),
        (16, 16, 3, true),
    ] {
        let mut cfg = small(Mode::Vanilla, ArchStyle::Llada, 0);
        (cfg.max_tokens, cfg.block_length, cfg.steps) = (max_tokens, block_length, steps);
        let run = |cfg: &DecodeConfig| {
            decode(
                &mut Harsh::new(0),
                &Bytes::new(),
                &special(),
                None,
                &prompt,
                cfg,
                None,
            )
        };
        assert!(run(&cfg).is_ok());
        cfg.reference_compat = true;
        match run(&cfg) {
            Ok(_) => assert!(ok, "{max_tokens}/{block_length}/{steps} accepted"),
            Err(e) => {
                assert!(!ok, "{max_tokens}/{block_length}/{steps}: {e}");
                assert_eq!(e.kind(), ErrorKind::Setting);
            }
        }
    }
}

/// LLaDA's `confidence_eos_eot_inf` as its code runs: the line comes after
/// the argmax, so EOS and end-of-turn are still sampled, with confidence 0
/// (committed when the quota needs them); cdiff's own rule commits them last
/// too. Either way, where they are the best tokens everywhere the answer is
/// made of them, and with `logits_eos_inf` EOS is never sampled.
#[test]
fn reference_compat_confidence_eos_eot_inf_keeps_the_tokens() {
    const EOT: u32 = 200;
    let prompt = [b'Q' as u32];
    for compat in [false, true] {
        for eos_inf in [false, true] {
            let mut cfg = small(Mode::Vanilla, ArchStyle::Llada, 0);
            cfg.temperature = 0.0;
            cfg.confidence_eos_eot_inf = true;
            cfg.logits_eos_inf = eos_inf;
            cfg.end_of_turn = Some(EOT);
            cfg.reference_compat = compat;
            let mut m = Harsh::new(2);
            // The mask and padding ids lose; EOS, then EOT, win everywhere.
            m.bias = vec![(MASK, -2.0e4), (EOS, 100.0), (EOT, 50.0)];
            m.bias.extend((258..WIDTH as u32).map(|i| (i, -2.0e4)));
            let out = decode(&mut m, &Bytes::new(), &special(), None, &prompt, &cfg, None).unwrap();
            let want = if eos_inf { EOT } else { EOS };
            assert!(
                out.tokens[1..].iter().all(|&t| t == want),
                "{:?}",
                out.tokens
            );
        }
    }
}

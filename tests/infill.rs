//! Multi-region infilling (`cdiff::infill`) with real tiny random models of
//! every supported family: in `Con` mode every output must be accepted by
//! the independent recognizer and keep every chunk of the template in
//! place; `Vanilla` outputs mostly are not, which shows the constraint does
//! the work. Also the errors of bad templates.

mod common;

use std::path::PathBuf;

use candle_core::{DType, Device};
use cdiff::decode::{DecodeConfig, Mode};
use cdiff::infill::{infill_ar, infill_diffusion, ArInfillConfig, InfillOutput, Template};
use cdiff::model::{
    init_random, init_random_ar, load, load_causal, ArFamily, Arch, LoadedModel, Size,
};
use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn grammar(name: &str) -> Grammar {
    let path = root().join("grammars").join(name);
    Grammar::from_file_text(name, &std::fs::read_to_string(&path).unwrap(), None).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cdiff-infill-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

const CPP: &str = "#include<vector>\nusing namespace std;\nint count_positive(vector<int> xs){\n    int n = 0;\n    for (int i = 0; i < xs.size(); i++) {\n        if (<F>) n += 1;\n    }\n    return <F>;\n}\n";

const JSON: &str = r#"["{\"name\": ", null, ", \"tags\": [", null, "], \"id\": ", null, "}"]"#;

fn templates() -> Vec<(&'static str, Template)> {
    vec![
        (
            "cpp.ebnf",
            Template::from_marked(CPP.as_bytes(), b"<F>").unwrap(),
        ),
        ("json.ebnf", Template::from_json(JSON).unwrap()),
        // A region at the very end: nothing after it when it closes.
        (
            "json.ebnf",
            Template::from_json(r#"["{\"a\": [1, ", null]"#).unwrap(),
        ),
    ]
}

/// Infills `t` with a diffusion model under `c`, `hole` masks per region,
/// no prompt.
fn infill_dlm(
    m: &mut LoadedModel,
    c: &Constraint,
    t: &Template,
    hole: usize,
    cfg: &DecodeConfig,
) -> InfillOutput {
    infill_diffusion(
        &mut m.model,
        &m.tokenizer,
        &m.special,
        Some(c),
        &[],
        t,
        hole,
        cfg,
    )
    .unwrap()
}

/// Every chunk of `t` occurs in `text` in order, with the fills between.
fn assert_in_place(t: &Template, out: &InfillOutput, what: &str) {
    assert_eq!(
        out.fills.len(),
        t.n_regions(),
        "{what}: one fill per region"
    );
    assert_eq!(t.fill(&out.fills), out.text, "{what}: chunks in place");
}

#[test]
fn every_ar_family_infills_under_the_constraint() {
    for family in [
        ArFamily::StarCoder2,
        ArFamily::Llama,
        ArFamily::Gemma,
        ArFamily::Qwen2,
    ] {
        let dir = tmp(family.model_type());
        init_random_ar(family, Size::Tiny, &dir, 3, None).unwrap();
        let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
        for (gname, t) in templates() {
            let g = grammar(gname);
            let c = Constraint::compile(&g).unwrap();
            let rec = Recognizer::new(&g).unwrap();
            let mut vanilla_valid = 0;
            let seeds = 4;
            for seed in 0..seeds {
                for mode in [Mode::Con, Mode::Vanilla] {
                    let cfg = ArInfillConfig {
                        mode,
                        temperature: 1.0,
                        seed,
                        max_tokens: 24,
                        max_rejections: 40,
                        ..ArInfillConfig::default()
                    };
                    let out =
                        infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap();
                    let what = format!("{family:?} {gname} seed {seed} {mode:?}");
                    assert_in_place(&t, &out, &what);
                    assert_eq!(out.valid, rec.accepts(&out.text).unwrap(), "{what}");
                    if mode == Mode::Con {
                        assert!(
                            out.valid,
                            "{what}: {:?}",
                            String::from_utf8_lossy(&out.text)
                        );
                    } else if out.valid {
                        vanilla_valid += 1;
                    }
                }
            }
            assert!(
                vanilla_valid < seeds,
                "{family:?} {gname}: a random model should fail without the constraint"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn ar_con_minus_fails_instead_of_using_the_witness() {
    let dir = tmp("conminus");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 1, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let (_, t) = templates().remove(0);
    let c = Constraint::compile(&grammar("cpp.ebnf")).unwrap();
    let cfg = ArInfillConfig {
        mode: Mode::ConMinus,
        temperature: 1.0,
        max_rejections: 5,
        max_tokens: 16,
        mask_after: None,
        ..ArInfillConfig::default()
    };
    let out = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap();
    assert!(!out.used_witness);
    assert_eq!(out.failed, !out.valid);
    assert_in_place(&t, &out, "con-minus");
    let _ = std::fs::remove_dir_all(&dir);
}

/// With allowed-token masks after 8 rejections at a position, con-minus
/// never gives up for rejections (rejection sampling alone often does with
/// a random model; a region may still reach the token limit unclosed),
/// and a run that needed no
/// mask is the very run rejection sampling makes: same text, same
/// rejections (reused checks change nothing but the time).
#[test]
fn ar_masks_keep_con_minus_going_and_change_nothing_else() {
    let dir = tmp("masks");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 5, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let (mut gave_up, mut masked_runs, mut same) = (0, 0, 0);
    let mut cases = templates();
    // Inside a string almost every token fits: rejection sampling rarely
    // gives up there.
    let string = Template::from_json(r#"["{\"a\": \"", null, "\"}"]"#).unwrap();
    cases.push(("json.ebnf", string));
    for (gname, t) in cases {
        let c = Constraint::compile(&grammar(gname)).unwrap();
        let rec = Recognizer::new(&grammar(gname)).unwrap();
        for seed in 0..6 {
            let run = |m: &mut cdiff::model::LoadedCausal, mask_after, max_rejections| {
                let cfg = ArInfillConfig {
                    mode: Mode::ConMinus,
                    temperature: 1.0,
                    seed,
                    max_rejections,
                    max_tokens: 20,
                    mask_after,
                    ..ArInfillConfig::default()
                };
                infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap()
            };
            let plain = run(&mut m, None, 30);
            let masked = run(&mut m, Some(8), 30);
            // Masks only where rejection sampling would have given up.
            let late = run(&mut m, Some(usize::MAX), 30);
            let what = format!("{gname} seed {seed}");
            assert_in_place(&t, &masked, &what);
            // A region may still hit the token limit unclosed (the random
            // model rarely stops); rejections never end a masked run.
            assert!(!masked.failed || masked.tokens >= 20, "{what}: gave up");
            assert_eq!(masked.valid, !masked.failed, "{what}");
            assert_eq!(rec.accepts(&masked.text).unwrap(), masked.valid, "{what}");
            assert_eq!(plain.masks, 0);
            gave_up += (plain.failed && plain.rejections >= 30) as usize;
            masked_runs += (masked.masks > 0) as usize;
            if !plain.failed || plain.rejections < 30 {
                assert_eq!(late.masks, 0, "{what}");
                assert_eq!(late.text, plain.text, "{what}");
                assert_eq!(late.rejections, plain.rejections, "{what}");
                same += 1;
            } else {
                assert!(late.masks > 0, "{what}");
            }
        }
    }
    eprintln!("rejection sampling gave up {gave_up}/18; {masked_runs} runs used masks; {same} identical runs");
    assert!(
        gave_up > 0 && masked_runs > 0 && same > 0,
        "both cases must occur"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Masks ahead (`mask_after: Some(0)`): every position's mask computed
/// while the forward pass runs, no proposal refused. Greedy, the infill is
/// the one unlimited rejection sampling makes (same text, tokens, witness
/// use); sampled, every output is in the grammar and keeps the template in
/// place, and con-minus never gives up for rejections.
#[test]
fn ar_masks_ahead_refuse_nothing_and_keep_greedy_infills() {
    let dir = tmp("ahead");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 3, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let mut cases = templates();
    cases.push((
        "json.ebnf",
        Template::from_json(r#"["{\"a\": \"", null, "\"}"]"#).unwrap(),
    ));
    let mut masks = 0;
    for (gname, t) in cases {
        let c = Constraint::compile(&grammar(gname)).unwrap();
        let rec = Recognizer::new(&grammar(gname)).unwrap();
        for (mode, temperature, seed) in [
            (Mode::Con, 0.0, 0),
            (Mode::ConMinus, 0.0, 0),
            (Mode::Con, 1.0, 1),
            (Mode::ConMinus, 1.0, 2),
        ] {
            let mut run = |mask_after| {
                let cfg = ArInfillConfig {
                    mode,
                    temperature,
                    seed,
                    max_rejections: usize::MAX,
                    max_tokens: 10,
                    mask_after,
                    ..ArInfillConfig::default()
                };
                infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap()
            };
            let ahead = run(Some(0));
            let what = format!("{gname} {mode:?} t={temperature} seed {seed}");
            assert_eq!(ahead.rejections, 0, "{what}");
            assert!(ahead.masks > ahead.tokens, "{what}: a mask per position");
            assert!(ahead.time_overlapped <= ahead.time_constraint, "{what}");
            assert_in_place(&t, &ahead, &what);
            assert!(!ahead.failed || ahead.tokens >= 10, "{what}: gave up");
            assert_eq!(rec.accepts(&ahead.text).unwrap(), ahead.valid, "{what}");
            assert_eq!(ahead.valid, !ahead.failed, "{what}");
            masks += ahead.masks;
            if temperature == 0.0 {
                let plain = run(None);
                assert_eq!(ahead.text, plain.text, "{what}");
                assert_eq!(
                    (ahead.tokens, ahead.used_witness, ahead.failed),
                    (plain.tokens, plain.used_witness, plain.failed),
                    "{what}"
                );
            }
        }
    }
    assert!(masks > 0);
    // Fresh checks answer proposals; masks ahead make none.
    let (_, t) = templates().remove(0);
    let c = Constraint::compile(&grammar("cpp.ebnf")).unwrap();
    let cfg = ArInfillConfig {
        fresh_checks: true,
        mask_after: Some(0),
        ..ArInfillConfig::default()
    };
    let e = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap_err();
    assert_eq!(e.kind(), cdiff::ErrorKind::Setting, "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A mask ahead that runs out of the work budget gives way to rejection
/// sampling at its position: over a range of budgets, wherever rejection
/// sampling alone finishes the infill, masks ahead finish it too, with the
/// same greedy text, and some of those runs abandoned a mask. The model's
/// byte-level vocabulary gets runs of up to 1,024 `[`: a mask decides them
/// all, and growing that many nested arrays is what runs out first.
#[test]
fn ar_masks_ahead_that_run_out_of_budget_fall_back_to_proposals() {
    use cdiff::Config;
    use serde_json::{json, Value};
    let dir = tmp("ahead-budget");
    let (bytes, tok) = (dir.join("bytes"), dir.join("tok"));
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &bytes, 3, None).unwrap();
    let read = |f: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(bytes.join(f)).unwrap()).unwrap()
    };
    let mut tj = read("tokenizer.json");
    let next = tj["added_tokens"].as_array().unwrap().len() + 256;
    let mut merges = Vec::new();
    for k in 1..=10 {
        let n = 1usize << k;
        tj["model"]["vocab"][&"[".repeat(n)] = json!(next + k);
        merges.push(json!(format!(
            "{} {}",
            "[".repeat(n / 2),
            "[".repeat(n / 2)
        )));
    }
    tj["model"]["merges"] = Value::Array(merges);
    std::fs::create_dir_all(&tok).unwrap();
    for (f, v) in [
        ("tokenizer.json", tj),
        ("tokenizer_config.json", read("tokenizer_config.json")),
    ] {
        std::fs::write(tok.join(f), v.to_string()).unwrap();
    }
    let model = dir.join("model");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &model, 3, Some(&tok)).unwrap();
    let mut m = load_causal(model.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let t = Template::from_json(r#"["{\"a\": [1, ", null, "]}"]"#).unwrap();
    let g = grammar("json.ebnf");
    let (mut both, mut abandoned_and_done) = (0, 0);
    let mut budget = 200u64;
    while budget < 60_000 {
        let config = Config {
            budget,
            ..Config::default()
        };
        let c = Constraint::with_config(&g, config).unwrap();
        let mut run = |mask_after| {
            let cfg = ArInfillConfig {
                mode: Mode::Con,
                max_rejections: usize::MAX,
                max_tokens: 6,
                mask_after,
                ..ArInfillConfig::default()
            };
            infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg)
        };
        let (plain, ahead) = (run(None), run(Some(0)));
        if let Ok(plain) = plain {
            let ahead = ahead.unwrap_or_else(|e| panic!("budget {budget}: {e}"));
            assert_eq!(ahead.text, plain.text, "budget {budget}");
            both += 1;
            abandoned_and_done += usize::from(ahead.masks_abandoned > 0);
        }
        budget = budget * 5 / 4;
    }
    assert!(
        both > 0 && abandoned_and_done > 0,
        "{both} runs, {abandoned_and_done} abandoned a mask"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ar_fresh_checks_give_the_same_infill() {
    // Every proposal answered by a fresh check of the template (the
    // paper's way) instead of the insertion point and replayed hole exits:
    // the same tokens, rejections and masks, con and con-minus.
    let dir = tmp("fresh");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 7, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let mut rejections = 0;
    for (gname, t) in templates() {
        let c = Constraint::compile(&grammar(gname)).unwrap();
        for (mode, seed) in [(Mode::Con, 0), (Mode::ConMinus, 1), (Mode::Con, 2)] {
            let mut run = |fresh_checks| {
                // Masks after rejections, not ahead: proposals are checked.
                let cfg = ArInfillConfig {
                    mode,
                    temperature: 1.0,
                    seed,
                    max_rejections: 30,
                    max_tokens: 12,
                    mask_after: Some(8),
                    fresh_checks,
                    ..ArInfillConfig::default()
                };
                infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap()
            };
            let (reused, fresh) = (run(false), run(true));
            let what = format!("{gname} {mode:?} seed {seed}");
            assert_eq!(reused.text, fresh.text, "{what}");
            assert_eq!(
                (
                    reused.tokens,
                    reused.rejections,
                    reused.masks,
                    reused.failed,
                    reused.used_witness
                ),
                (
                    fresh.tokens,
                    fresh.rejections,
                    fresh.masks,
                    fresh.failed,
                    fresh.used_witness
                ),
                "{what}"
            );
            rejections += fresh.rejections;
        }
    }
    assert!(rejections > 0, "the comparison needs refused proposals");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn diffusion_models_infill_under_the_constraint() {
    for arch in [Arch::Dream, Arch::Llada] {
        let dir = tmp(&format!("{arch:?}"));
        init_random(arch, Size::Tiny, &dir, 5, None).unwrap();
        let mut m = load(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
        for (gname, t) in templates() {
            let g = grammar(gname);
            let c = Constraint::compile(&g).unwrap();
            let rec = Recognizer::new(&g).unwrap();
            for seed in 0..3 {
                let mut cfg = match arch {
                    Arch::Dream => DecodeConfig::dream(),
                    Arch::Llada => DecodeConfig::llada(),
                };
                cfg.seed = seed;
                cfg.temperature = 1.0;
                cfg.steps = 12;
                cfg.block_length = 8;
                cfg.max_rejections = 60;
                let out = infill_dlm(&mut m, &c, &t, 8, &cfg);
                let what = format!("{arch:?} {gname} seed {seed}");
                assert_in_place(&t, &out, &what);
                assert!(
                    out.valid,
                    "{what}: {:?}",
                    String::from_utf8_lossy(&out.text)
                );
                assert!(rec.accepts(&out.text).unwrap(), "{what}: recognizer");
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[test]
fn shipped_json_model_infills_a_json_template() {
    let mut m = load("json-tiny", &Device::Cpu, DType::F32).unwrap();
    let t = Template::from_json(JSON).unwrap();
    let g = grammar("json.ebnf");
    let c = Constraint::compile(&g).unwrap();
    for seed in 0..3 {
        let mut cfg = DecodeConfig::llada();
        cfg.seed = seed;
        cfg.temperature = 0.5;
        cfg.steps = 24;
        cfg.block_length = 48;
        let out = infill_dlm(&mut m, &c, &t, 16, &cfg);
        assert_in_place(&t, &out, "json-tiny");
        assert!(out.valid);
        let v: Result<serde_json::Value, _> = serde_json::from_slice(&out.text);
        assert!(
            v.is_ok(),
            "serde_json rejects {:?}",
            String::from_utf8_lossy(&out.text)
        );
    }
}

#[test]
fn shipped_cpp_model_infills_humaneval_x_templates() {
    use cdiff::eval::tasks::{make_mri, read_humaneval, MriKind};
    let mut m = load("cpp-tiny", &Device::Cpu, DType::F32).unwrap();
    let g = grammar("cpp.ebnf");
    let c = Constraint::compile(&g).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    let rows =
        read_humaneval(&root().join("datasets/humaneval-x-cpp/humaneval_cpp.jsonl")).unwrap();
    // The shortest problems (the model's context is 512 tokens), two per
    // region count.
    let mut rows: Vec<_> = rows.into_iter().collect();
    rows.sort_by_key(|r| r.prompt.len() + r.canonical_solution.len());
    rows.truncate(40);
    let mut checked = 0;
    for n in 1..=3 {
        let insts = make_mri(&rows, MriKind::Spans, n, 0, |t| {
            rec.accepts(t.as_bytes()).unwrap()
        });
        for inst in insts.iter().take(2) {
            let t = inst.template().unwrap();
            assert_eq!(t.n_regions(), n);
            for mode in [Mode::Con, Mode::Vanilla] {
                let mut cfg = DecodeConfig::llada();
                cfg.mode = mode;
                cfg.seed = 1;
                cfg.temperature = 0.5;
                cfg.steps = 8 * n;
                cfg.block_length = 8 * n;
                cfg.max_rejections = 30;
                let out = infill_dlm(&mut m, &c, &t, 8, &cfg);
                let what = format!("{} {mode:?}", inst.instance_id);
                assert_in_place(&t, &out, &what);
                assert_eq!(out.valid, rec.accepts(&out.text).unwrap(), "{what}");
                if mode == Mode::Con {
                    assert!(
                        out.valid,
                        "{what}: {:?}",
                        String::from_utf8_lossy(&out.text)
                    );
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 6, "two instances per region count");
}

#[test]
fn template_that_cannot_be_completed_names_the_chunk() {
    let g = Grammar::from_lark(r#"start: "a" ("b" | "c")* "d""#, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let t = Template::from_json(r#"["a", null, "d", null, "c"]"#).unwrap();
    let e = cdiff::infill::check_template(&c, &t).unwrap_err();
    assert!(e.to_string().contains("not completable"), "{e}");
    assert!(e.to_string().contains("chunk 2 (after region 2)"), "{e}");
    let t = Template::from_json(r#"["d", null]"#).unwrap();
    let e = cdiff::infill::check_template(&c, &t).unwrap_err();
    assert!(e.to_string().contains("first chunk"), "{e}");
    let t = Template::from_json(r#"["a", null, "d"]"#).unwrap();
    assert!(cdiff::infill::check_template(&c, &t).is_ok());
}

/// Autoregressive infilling answers "is the template completable?" by the
/// first region's insertion point (the empty insertion there), not by a
/// check of its own: the same verdicts, and a refused template still gets
/// the check's message naming the chunk; fresh checks ask the check.
#[test]
fn ar_infill_refuses_a_dead_template_by_its_first_point() {
    let dir = tmp("dead-template");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 1, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let g = Grammar::from_lark(r#"start: "a" ("b" | "c")* "d""#, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let cases = [
        (
            r#"["a", null, "d", null, "c"]"#,
            Some("chunk 2 (after region 2)"),
        ),
        (r#"["d", null]"#, Some("first chunk")),
        (
            r#"["a", null, "b", null, "a"]"#,
            Some("chunk 2 (after region 2)"),
        ),
        (r#"["a", null, "d"]"#, None),
        (r#"["a", null, "b", null, "d"]"#, None),
    ];
    for (json, refused) in cases {
        let t = Template::from_json(json).unwrap();
        for fresh_checks in [false, true] {
            let cfg = ArInfillConfig {
                mode: Mode::Con,
                max_tokens: 4,
                mask_after: Some(8),
                fresh_checks,
                ..ArInfillConfig::default()
            };
            let got = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg);
            match (refused, got) {
                (Some(chunk), Err(e)) => {
                    assert!(e.to_string().contains("not completable"), "{json}: {e}");
                    assert!(e.to_string().contains(chunk), "{json}: {e}");
                }
                (None, Ok(out)) => assert!(out.valid, "{json}: con is always valid"),
                (want, got) => panic!("{json} (fresh checks {fresh_checks}): {want:?}, {got:?}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn adjacent_regions_get_one_fill_each() {
    let t = Template::from_json(r#"["[", null, null, "]"]"#).unwrap();
    assert_eq!(t.n_regions(), 2);
    let dir = tmp("adjacent");
    init_random_ar(ArFamily::StarCoder2, Size::Tiny, &dir, 2, None).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let c = Constraint::compile(&grammar("json.ebnf")).unwrap();
    for seed in 0..4 {
        let cfg = ArInfillConfig {
            temperature: 1.0,
            seed,
            max_tokens: 8,
            max_rejections: 10,
            ..ArInfillConfig::default()
        };
        let out = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap();
        assert_eq!(out.fills.len(), 2);
        assert!(out.valid);
        assert_in_place(&t, &out, "adjacent");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `init-random --tokenizer` for autoregressive families: a copied
/// tokenizer gives the config its special ids and a tiny embedding grows to
/// cover it; a tokenizer without the family's FIM tokens is a typed error.
/// Also: a loaded tokenizer builds its vocabulary trie once per width.
#[test]
fn ar_models_take_a_copied_tokenizer() {
    let src = tmp("tok-src");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &src, 1, None).unwrap();
    let dst = tmp("tok-dst");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dst, 2, Some(&src)).unwrap();
    let a = load_causal(src.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    let b = load_causal(dst.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    assert_eq!(a.fim.open, b.fim.open);
    assert_eq!(a.fim.stops, b.fim.stops);
    // The tokenizer keeps its trie for masks: one build per width.
    use cdiff::model::TextCodec;
    let n = a.tokenizer.n_tokens();
    let v = a.tokenizer.vocabulary(n);
    assert_eq!(v.len(), n);
    assert!(std::sync::Arc::ptr_eq(&v, &a.tokenizer.vocabulary(n)));
    assert_eq!(a.tokenizer.vocabulary(n - 1).len(), n - 1);
    assert!(!std::sync::Arc::ptr_eq(&v, &a.tokenizer.vocabulary(n)));
    let bad = tmp("tok-bad");
    let e = init_random_ar(ArFamily::StarCoder2, Size::Tiny, &bad, 1, Some(&src)).unwrap_err();
    assert_eq!(e.kind(), cdiff::ErrorKind::Model);
    assert!(e.to_string().contains("<fim_prefix>"), "{e}");
    for d in [src, dst, bad] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// A tiny Qwen2 FIM model with the real Qwen2 tokenizer (the Dream
/// tokenizer of `../shared`: 151,667 tokens) loads, finds its FIM format
/// and infills a C++ region under the constraint (skipped without
/// `../shared`).
#[test]
fn tiny_qwen2_with_the_real_tokenizer_infills() {
    let Some(shared) = common::shared::dir("", "tiny_qwen2_with_the_real_tokenizer_infills") else {
        return;
    };
    let dir = tmp("qwen2-real-tok");
    let tok = shared.join("tokenizers/dream-v0-instruct-7b");
    init_random_ar(ArFamily::Qwen2, Size::Tiny, &dir, 1, Some(&tok)).unwrap();
    let mut m = load_causal(dir.to_str().unwrap(), &Device::Cpu, DType::F32).unwrap();
    assert_eq!(m.fim.open, 151659);
    assert!(m.fim.stops.contains(&151643));
    let g = grammar("cpp.ebnf");
    let c = Constraint::compile(&g).unwrap();
    let t = Template::from_marked(CPP.as_bytes(), b"<F>").unwrap();
    let cfg = ArInfillConfig {
        mode: Mode::Con,
        max_tokens: 8,
        ..ArInfillConfig::default()
    };
    let out = infill_ar(&mut m.model, &m.tokenizer, &m.fim, Some(&c), &t, &cfg).unwrap();
    assert_in_place(&t, &out, "qwen2 with the real tokenizer");
    assert!(out.valid);
    assert!(Recognizer::new(&g).unwrap().accepts(&out.text).unwrap());
    let _ = std::fs::remove_dir_all(&dir);
}

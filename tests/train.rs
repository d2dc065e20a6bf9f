//! Masked-diffusion training (`cdiff::model::train`), `cdiff train`, and the
//! shipped model `models/smiles-tiny` used by `cdiff decode` by default.

use std::path::PathBuf;
use std::process::Command;

use candle_core::{DType, Device};
use cdiff::decode::{decode, DecodeConfig, Mode};
use cdiff::model::train::{model_config, read_texts, saved_config, train, Trainer};
use cdiff::model::{
    load, Denoiser, Shipped, TrainConfig, DEFAULT_GRAMMAR, DEFAULT_MODEL, JSON_TINY, SMILES_TINY,
};
use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar};

fn tiny() -> TrainConfig {
    TrainConfig {
        steps: 60,
        batch: 8,
        ctx: 16,
        layers: 1,
        hidden: 32,
        heads: 2,
        mlp: 64,
        lr: 3e-3,
        warmup: 5,
        seed: 3,
        checkpoint_every: 0,
        ..TrainConfig::default()
    }
}

fn texts() -> Vec<Vec<u8>> {
    ["CCO", "c1ccccc1", "CC(=O)O", "N#CC", "OC(=O)c1ccccc1"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect()
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cdiff-train-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn loss_falls_on_a_tiny_repeated_dataset() {
    let r = train(&tiny(), &texts(), None, false, |_| {}).unwrap();
    assert_eq!(r.losses.len(), 60);
    let mean = |s: &[f32]| s.iter().sum::<f32>() / s.len() as f32;
    let (first, last) = (mean(&r.losses[..8]), mean(&r.losses[52..]));
    eprintln!("loss: first 8 steps {first:.3}, last 8 steps {last:.3}");
    assert!(
        last < 0.6 * first,
        "loss did not fall: {first:.3} -> {last:.3}"
    );
}

#[test]
fn training_is_deterministic_for_a_seed() {
    let tc = TrainConfig { steps: 4, ..tiny() };
    let a = train(&tc, &texts(), None, false, |_| {}).unwrap();
    let b = train(&tc, &texts(), None, false, |_| {}).unwrap();
    assert_eq!(a.losses, b.losses);
    let c = train(
        &TrainConfig {
            seed: 4,
            ..tc.clone()
        },
        &texts(),
        None,
        false,
        |_| {},
    )
    .unwrap();
    assert_ne!(a.losses, c.losses);
}

#[test]
fn saved_model_loads_back_with_identical_logits() {
    let dir = tmp("save");
    let (mut tr, skipped) = Trainer::new(&tiny(), &texts()).unwrap();
    assert_eq!(skipped, 0);
    for _ in 0..3 {
        tr.train_step().unwrap();
    }
    tr.save(&dir).unwrap();
    let mut m = load(&dir.to_string_lossy(), &Device::Cpu, DType::F32).unwrap();
    assert_eq!(m.special.mask, 261);
    assert_eq!(m.special.eos, 257);
    assert!(m.chat_prompt_ids("").unwrap().is_empty());
    assert_eq!(m.chat_prompt_ids("CC").unwrap(), vec![67, 67]);
    let tokens: Vec<u32> = vec![67, 67, 261, 79, 261, 257, 257, 261];
    let a = tr.model().logits(&tokens).unwrap();
    let b = m.model.forward(&tokens).unwrap();
    let diff = (a - b)
        .unwrap()
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(diff <= 1e-6, "logits differ by {diff}");
    // The training forward computes the same function up to rounding.
    let ids = candle_core::Tensor::new(tokens.as_slice(), &Device::Cpu)
        .unwrap()
        .unsqueeze(0)
        .unwrap();
    let c = tr.model().forward_train(&ids).unwrap().squeeze(0).unwrap();
    let d = tr.model().logits(&tokens).unwrap();
    let diff = (c - d)
        .unwrap()
        .abs()
        .unwrap()
        .max_all()
        .unwrap()
        .to_scalar::<f32>()
        .unwrap();
    assert!(
        diff < 1e-3,
        "training and inference forward differ by {diff}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn resume_continues_from_the_checkpoint() {
    let dir = tmp("resume");
    let tc = TrainConfig {
        steps: 3,
        checkpoint_every: 2,
        ..tiny()
    };
    let a = train(&tc, &texts(), Some(&dir), false, |_| {}).unwrap();
    assert_eq!(a.step, 3);
    assert_eq!(a.resumed_from, None);
    let state: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("train_state.json")).unwrap())
            .unwrap();
    assert_eq!(state["step"], 3);
    assert!(dir.join("optimizer.safetensors").is_file());
    let b = train(
        &TrainConfig { steps: 5, ..tc },
        &texts(),
        Some(&dir),
        true,
        |_| {},
    )
    .unwrap();
    assert_eq!(b.step, 5);
    assert_eq!(b.losses.len(), 2);
    assert_eq!(b.resumed_from, Some(3));
    assert!(b.moments_restored);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Weights of a model directory, by tensor name.
fn weights(dir: &std::path::Path) -> Vec<(String, Vec<f32>)> {
    let map = candle_core::safetensors::load(dir.join("model.safetensors"), &Device::Cpu).unwrap();
    let mut w: Vec<(String, Vec<f32>)> = map
        .into_iter()
        .map(|(k, t)| (k, t.flatten_all().unwrap().to_vec1::<f32>().unwrap()))
        .collect();
    w.sort_by(|x, y| x.0.cmp(&y.0));
    w
}

#[test]
fn stopped_and_resumed_run_equals_an_uninterrupted_one() {
    let (whole, split) = (tmp("whole"), tmp("split"));
    let tc = TrainConfig {
        steps: 6,
        checkpoint_every: 0,
        ..tiny()
    };
    let a = train(&tc, &texts(), Some(&whole), false, |_| {}).unwrap();
    // A run killed after its checkpoint at step 4.
    let stopped = |dir: &std::path::Path| {
        let (mut tr, _) = Trainer::new(&tc, &texts()).unwrap();
        for _ in 0..4 {
            tr.train_step().unwrap();
        }
        tr.save(dir).unwrap();
    };
    stopped(&split);
    let b = train(&tc, &texts(), Some(&split), true, |_| {}).unwrap();
    assert_eq!(
        &a.losses[4..],
        &b.losses[..],
        "losses after the resume differ"
    );
    assert_eq!(weights(&whole), weights(&split));
    // Without the moments, the resumed run is a different run.
    stopped(&split);
    std::fs::remove_file(split.join("optimizer.safetensors")).unwrap();
    let c = train(&tc, &texts(), Some(&split), true, |_| {}).unwrap();
    assert!(!c.moments_restored);
    assert_ne!(weights(&whole), weights(&split));
    let _ = std::fs::remove_dir_all(&whole);
    let _ = std::fs::remove_dir_all(&split);
}

#[test]
fn jsonl_training_data_is_reserialized_compactly() {
    let dir = tmp("jsonl");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("docs.jsonl");
    std::fs::write(&p, "{\"a\": [1, 2],  \"b\": \"é\"}\n\n[true, null]\n").unwrap();
    let t = read_texts(std::slice::from_ref(&p)).unwrap();
    assert_eq!(
        t,
        vec![
            br#"{"a":[1,2],"b":"\u00e9"}"#.to_vec(),
            b"[true,null]".to_vec()
        ]
    );
    std::fs::write(&p, "{\"a\": 1}\n{oops\n").unwrap();
    let e = read_texts(std::slice::from_ref(&p)).unwrap_err();
    assert!(e.to_string().contains(":2:"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn jsonl_text_fields_are_read_raw() {
    let dir = tmp("jsonl-text");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("code.jsonl");
    let code = "#include<vector>\nint f(int a) {\n    return a + 1; // \"one\"\n}\n";
    let lines = [
        serde_json::json!({ "text": code, "source": "x" }).to_string(),
        serde_json::json!({ "text": "int g(); // é" }).to_string(),
        serde_json::json!({ "text": "" }).to_string(),
        serde_json::json!({ "text": 3 }).to_string(),
        serde_json::json!(["text"]).to_string(),
    ];
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let t = read_texts(std::slice::from_ref(&p)).unwrap();
    assert_eq!(
        t,
        vec![
            code.as_bytes().to_vec(),
            br#"{"text":3}"#.to_vec(),
            br#"["text"]"#.to_vec()
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shipped_configs_are_what_train_writes() {
    for shipped in [&SMILES_TINY, &JSON_TINY] {
        let dir = std::path::Path::new(shipped.dir);
        let tc = saved_config(dir, &TrainConfig::default()).unwrap();
        let text = std::fs::read_to_string(dir.join("config.json")).unwrap();
        let on_disk: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(model_config(&tc), on_disk, "{}", shipped.name);
    }
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    assert!(read_texts(&[PathBuf::from("/nonexistent/x.smi")]).is_err());
    let long = vec![b"C".repeat(100)];
    assert!(Trainer::new(&tiny(), &long).is_err());
    let bad = TrainConfig {
        hidden: 30,
        heads: 4,
        ..tiny()
    };
    assert!(Trainer::new(&bad, &texts()).is_err());
    let out = Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .args([
            "train",
            "--data",
            "/nonexistent/x.smi",
            "--out",
            "/tmp/never",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!std::path::Path::new("/tmp/never").exists());
}

/// Constrained decodes of a shipped model with its card's temperature: the
/// outputs, each checked by the recognizer of the model's grammar.
fn shipped_con_outputs(shipped: &Shipped, max_tokens: usize, steps: usize) -> Vec<Vec<u8>> {
    let mut m = load(shipped.name, &Device::Cpu, DType::F32).unwrap();
    let src = std::fs::read_to_string(shipped.grammar).unwrap();
    let g = Grammar::from_file_text(shipped.grammar, &src, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    let prompt = m.chat_prompt_ids("").unwrap();
    assert!(prompt.is_empty());
    let mut outs = Vec::new();
    for seed in 0..3 {
        let mut cfg = DecodeConfig::llada();
        cfg.mode = Mode::Con;
        cfg.max_tokens = max_tokens;
        cfg.steps = steps;
        cfg.block_length = max_tokens;
        cfg.temperature = shipped.temperature;
        cfg.seed = seed;
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
        let text = String::from_utf8_lossy(&out.text).to_string();
        assert!(
            rec.accepts(&out.text).unwrap(),
            "seed {seed}: {text:?} rejected"
        );
        outs.push(out.text);
    }
    outs
}

#[test]
fn shipped_model_con_outputs_are_accepted() {
    assert_eq!(Shipped::by_name("smiles-tiny").unwrap().dir, DEFAULT_MODEL);
    assert_eq!(
        Shipped::by_name("smiles-tiny").unwrap().grammar,
        DEFAULT_GRAMMAR
    );
    shipped_con_outputs(&SMILES_TINY, 32, 16);
}

#[test]
fn shipped_json_model_con_outputs_are_json() {
    for text in shipped_con_outputs(&JSON_TINY, 32, 8) {
        assert!(
            serde_json::from_slice::<serde_json::Value>(&text).is_ok(),
            "serde_json rejects {:?}",
            String::from_utf8_lossy(&text)
        );
    }
}

/// Runs `cdiff decode ARGS --quiet --json` in the crate's folder; its JSON.
fn decode_json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .arg("decode")
        .args(args)
        .args(["--quiet", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn decode_with_the_json_grammar_uses_the_json_model() {
    let v = decode_json(&[
        "--grammar",
        "grammars/json.ebnf",
        "--max-tokens",
        "24",
        "--steps",
        "6",
    ]);
    assert_eq!(v["valid"], true, "{v}");
    let model = v["model"].as_str().unwrap_or("");
    assert!(model.contains("json-tiny"), "{v}");
    let text = v["text"].as_str().unwrap();
    let parsed = serde_json::from_str::<serde_json::Value>(text);
    assert!(parsed.is_ok(), "{text:?}");
}

#[test]
fn decode_without_model_uses_the_shipped_one() {
    let v = decode_json(&["--max-tokens", "24", "--steps", "8"]);
    assert_eq!(v["valid"], true, "{v}");
    assert!(
        v["model"].as_str().unwrap_or("").contains("smiles-tiny"),
        "{v}"
    );
}

//! The autoregressive FIM families against their authors' code: logits and
//! greedy generations of tiny random models written by Hugging Face
//! `transformers` (`eval/golden/ar_golden.py`, fixtures in
//! `tests/golden/ar/`), loaded by cdiff through candle-transformers.

use std::path::{Path, PathBuf};

use candle_core::DType;
use cdiff::model::{load_causal, CausalLm, LoadedCausal};
use serde_json::Value;

#[path = "common/device.rs"]
mod device;

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden/ar")
        .join(name)
}

fn reference(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference JSON")
}

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

fn argmax(row: &[f32]) -> u32 {
    let mut best = 0;
    for (i, &x) in row.iter().enumerate() {
        if x > row[best] {
            best = i;
        }
    }
    best as u32
}

/// Checks the last-position logits and the 12 greedy tokens (KV cache)
/// of the model in `dir` against `reference.json` of `ref_dir`.
fn check(dir: &Path, ref_dir: &Path) -> LoadedCausal {
    let r = reference(ref_dir);
    let mut m = load_causal(dir.to_str().unwrap(), &device::test_device(), DType::F32)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    let prompt = ids(&r["prompt_ids"]);
    let want: Vec<f64> = r["last_logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    let got = m.model.forward(&prompt, 0).unwrap();
    assert_eq!(got.len(), want.len(), "{}: logits width", dir.display());
    let diff = got
        .iter()
        .zip(&want)
        .map(|(&g, &w)| (g as f64 - w).abs())
        .fold(0.0, f64::max);
    assert!(diff <= 1e-4, "{}: max |Δlogit| = {diff}", dir.display());
    let want_greedy = ids(&r["greedy_ids"]);
    let mut row = got;
    let mut greedy = Vec::new();
    for offset in prompt.len()..prompt.len() + want_greedy.len() {
        let t = argmax(&row);
        greedy.push(t);
        row = m.model.forward(&[t], offset).unwrap();
    }
    assert_eq!(greedy, want_greedy, "{}: greedy tokens", dir.display());
    // After clearing the cache the prompt gives the same logits again.
    CausalLm::clear(&mut m.model).unwrap();
    let again = m.model.forward(&prompt, 0).unwrap();
    assert_eq!(argmax(&again), want_greedy[0]);
    m
}

#[test]
fn starcoder2_matches_transformers() {
    check(&golden("starcoder2"), &golden("starcoder2"));
}

#[test]
fn deepseek_llama_with_linear_rope_scaling_and_shards_matches_transformers() {
    check(&golden("llama"), &golden("llama"));
}

#[test]
fn gemma_matches_transformers() {
    check(&golden("gemma"), &golden("gemma"));
}

/// CodeGemma's real config says `"hidden_act": "gelu", "hidden_activation":
/// null`; transformers then uses the tanh GELU, and so must cdiff.
#[test]
fn codegemma_style_config_uses_the_tanh_gelu() {
    let src = golden("gemma");
    let tmp = std::env::temp_dir().join(format!("cdiff-codegemma-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    for e in std::fs::read_dir(&src).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_owned();
        if name == "config.json" {
            continue;
        }
        std::fs::copy(&p, tmp.join(&name)).unwrap();
    }
    std::fs::copy(
        src.join("config.codegemma-style.json"),
        tmp.join("config.json"),
    )
    .unwrap();
    check(&tmp, &src);
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn qwen2_tied_with_null_sliding_window_matches_transformers() {
    check(&golden("qwen2"), &golden("qwen2"));
}

#[test]
fn fim_formats_come_from_the_tokenizers() {
    for name in ["starcoder2", "llama", "gemma", "qwen2"] {
        let dir = golden(name);
        let r = reference(&dir);
        let m = load_causal(dir.to_str().unwrap(), &device::test_device(), DType::F32).unwrap();
        let fim = &r["fim"];
        let prompt = m
            .fim
            .prompt(
                &m.tokenizer,
                fim["prefix"].as_str().unwrap().as_bytes(),
                fim["suffix"].as_str().unwrap().as_bytes(),
            )
            .unwrap();
        assert_eq!(prompt, ids(&r["prompt_ids"]), "{name}: FIM prompt");
        assert!(!m.fim.stops.is_empty(), "{name}: stop tokens");
    }
}

//! Model directories as downloads lay them out and as untrusted input: the
//! slow tokenizer files (no `tokenizer.json`), transformers ≥ 5's
//! `rope_parameters`, and weight files that try to escape the directory or
//! lie about their contents.

mod common;

use std::path::{Path, PathBuf};

use candle_core::{DType, Device};
use cdiff::model::causal::{load_causal, ArFamily};
use cdiff::model::init_ar::init_random_ar;
use cdiff::model::{init, load, Arch, Denoiser, Size, TextCodec, Tokenizer};
use cdiff::{Error, ErrorKind};
use common::scratch::Scratch;

const SLOW_FILES: &[&str] = &[
    "vocab.json",
    "merges.txt",
    "added_tokens.json",
    "special_tokens_map.json",
    "tokenizer_config.json",
];

fn data(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(sub)
}

/// A folder holding only the slow tokenizer files of `src`.
fn slow_copy(src: &Path, name: &str) -> Scratch {
    let s = Scratch::new("files", name);
    for f in SLOW_FILES {
        std::fs::copy(src.join(f), s.path().join(f)).unwrap();
    }
    s
}

/// The Qwen2 test vectors shipped in `tests/data`: (text, ids).
fn qwen2_vectors() -> Vec<(String, Vec<u32>)> {
    let dir = data("qwen2-test-vectors");
    let inp = std::fs::read_to_string(dir.join("ggml-vocab-qwen2.gguf.inp")).unwrap();
    let out = std::fs::read_to_string(dir.join("ggml-vocab-qwen2.gguf.out")).unwrap();
    let texts: Vec<&str> = inp.split("\n__ggml_vocab_test__\n").collect();
    let ids: Vec<&str> = out.split('\n').collect();
    // Both end with an empty element after the last separator / newline.
    let n = texts.len() - 1;
    assert_eq!(ids.len() - 1, n);
    (0..n)
        .map(|i| {
            let want = ids[i]
                .split_whitespace()
                .map(|s| s.parse().unwrap())
                .collect();
            (texts[i].to_string(), want)
        })
        .collect()
}

fn model_err<T>(r: Result<T, Error>) -> String {
    match r {
        Ok(_) => panic!("expected a model error"),
        Err(e) => {
            assert_eq!(e.kind(), ErrorKind::Model, "{e}");
            let m = e.to_string();
            assert!(!m.contains('\n'), "one line: {m}");
            m
        }
    }
}

fn loaded(dir: &str) -> load::LoadedModel {
    match load::load(dir, &Device::Cpu, DType::F32) {
        Ok(m) => m,
        Err(e) => panic!("{dir}: {e}"),
    }
}

fn texts() -> Vec<String> {
    let mut v: Vec<String> = qwen2_vectors().into_iter().map(|(t, _)| t).collect();
    v.extend(
        [
            "int main() {\n    return 0;\n}\n",
            "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n",
            "a<|mask|><|mask|>b <|endoftext|>",
            "  tabs\t\tand\r\nCRLF, 日本語, emoji 🦀, Ελληνικά, e\u{301} (decomposed é)",
            "",
        ]
        .map(String::from),
    );
    let mut rng = cdiff::rng::SplitMix64::new(7);
    for _ in 0..20 {
        let s: String = (0..80)
            .map(|_| match rng.below(5) {
                0 => char::from_u32(0x20 + rng.below(95) as u32).unwrap(),
                1 => [' ', '\n', '\t'][rng.below(3) as usize],
                2 => char::from_u32(0x400 + rng.below(0x100) as u32).unwrap(),
                3 => char::from_u32(0x4e00 + rng.below(0x500) as u32).unwrap(),
                _ => char::from_u32(0x1f600 + rng.below(0x40) as u32).unwrap(),
            })
            .collect();
        v.push(s);
    }
    v
}

#[test]
fn slow_tokenizer_files_match_tokenizer_json() {
    let mini = data("qwen2-mini");
    let fast = Tokenizer::from_file(&mini.join("tokenizer.json")).unwrap();
    let dir = slow_copy(&mini, "mini-slow");
    let slow = Tokenizer::from_dir(dir.path()).unwrap();
    assert!(slow.origin().contains("vocab.json + merges.txt"));
    assert_eq!(slow.n_tokens(), fast.n_tokens());
    assert_eq!(slow.n_tokens(), 151_667);
    for (tok, id) in [
        ("<|endoftext|>", 151_643),
        ("<|im_start|>", 151_644),
        ("<|fim_prefix|>", 151_659),
        ("<|beginoftext|>", 151_665),
        ("<|mask|>", 151_666),
        ("in", 258),
    ] {
        assert_eq!(slow.token_id(tok), Some(id), "{tok}");
        assert_eq!(fast.token_id(tok), Some(id), "{tok}");
    }
    for id in 0..slow.n_tokens() as u32 {
        assert_eq!(slow.token_bytes(id), fast.token_bytes(id), "token {id}");
    }
    for t in texts() {
        let a = slow.encode(t.as_bytes()).unwrap();
        let b = fast.encode(t.as_bytes()).unwrap();
        assert_eq!(a, b, "{t:?}");
    }
}

#[test]
fn dream_slow_files_reproduce_qwen2_vectors() {
    let Some(shared) = common::shared::dir(
        "tokenizers/dream-v0-instruct-7b",
        "dream_slow_files_reproduce_qwen2_vectors",
    ) else {
        return;
    };
    let dir = slow_copy(&shared, "dream-slow");
    let tok = Tokenizer::from_dir(dir.path()).unwrap();
    assert_eq!(tok.n_tokens(), 151_667);
    assert_eq!(tok.token_id("<|mask|>"), Some(151_666));
    for (i, (text, want)) in qwen2_vectors().iter().enumerate() {
        assert_eq!(&tok.encode(text.as_bytes()).unwrap(), want, "vector {i}");
    }
}

#[test]
fn a_dream_download_without_tokenizer_json_loads() {
    let s = Scratch::new("files", "dream-download");
    init::init_random(
        Arch::Dream,
        Size::Tiny,
        s.path(),
        3,
        Some(&data("qwen2-mini")),
    )
    .unwrap();
    let with_json = loaded(s.str());
    std::fs::remove_file(s.path().join("tokenizer.json")).unwrap();
    let mut slow = loaded(s.str());
    assert_eq!(slow.special.mask, with_json.special.mask);
    assert_eq!(slow.special.n_tokens, with_json.special.n_tokens);
    let ids = slow.tokenizer.encode(b"int x = 1;").unwrap();
    assert_eq!(ids, with_json.tokenizer.encode(b"int x = 1;").unwrap());
    let logits = slow.model.forward(&ids).unwrap();
    assert_eq!(logits.dims()[0], ids.len());
    // Without vocab.json either, the message names what was looked for.
    std::fs::remove_file(s.path().join("vocab.json")).unwrap();
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains("merges.txt but not vocab.json"), "{m}");
}

/// Rewrites `config.json` in `dir` with `f`.
fn edit_config(dir: &Path, f: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let p = dir.join("config.json");
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    f(v.as_object_mut().unwrap());
    std::fs::write(&p, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn rope_parameters_are_read_as_rope_theta() {
    for arch in [Arch::Dream, Arch::Llada] {
        let s = Scratch::new("files", &format!("rope-{arch:?}"));
        init::init_random(arch, Size::Tiny, s.path(), 5, None).unwrap();
        let toks = [1u32, 2, 3, 4, 5, 6, 7, 8];
        let want = {
            let mut m = loaded(s.str());
            m.model.forward(&toks).unwrap().to_vec2::<f32>().unwrap()
        };
        // transformers >= 5 writes the base inside rope_parameters; with a
        // different base the logits would differ.
        edit_config(s.path(), |c| {
            let theta = c.remove("rope_theta").unwrap();
            c.insert(
                "rope_parameters".into(),
                serde_json::json!({"rope_theta": theta, "rope_type": "default"}),
            );
        });
        let mut m = loaded(s.str());
        let got = m.model.forward(&toks).unwrap().to_vec2::<f32>().unwrap();
        assert_eq!(got, want, "{arch:?}");
        edit_config(s.path(), |c| {
            c.insert(
                "rope_parameters".into(),
                serde_json::json!({"rope_theta": 10.0, "rope_type": "default"}),
            );
        });
        let mut m = loaded(s.str());
        let other = m.model.forward(&toks).unwrap().to_vec2::<f32>().unwrap();
        assert_ne!(other, want, "{arch:?}: the base must be used");
        // A scaling cdiff does not run is refused by name.
        edit_config(s.path(), |c| {
            c.insert(
                "rope_parameters".into(),
                serde_json::json!({"rope_theta": 10000.0, "rope_type": "yarn", "factor": 4.0}),
            );
        });
        let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
        assert!(m.contains("yarn"), "{m}");
        // Both fields, disagreeing.
        edit_config(s.path(), |c| {
            c.insert("rope_theta".into(), serde_json::json!(500.0));
            c.insert(
                "rope_parameters".into(),
                serde_json::json!({"rope_theta": 10000.0, "rope_type": "default"}),
            );
        });
        let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
        assert!(m.contains("disagree"), "{m}");
    }
}

#[test]
fn rope_parameters_are_read_by_the_autoregressive_families() {
    for family in [ArFamily::StarCoder2, ArFamily::Llama, ArFamily::Qwen2] {
        let s = Scratch::new("files", &format!("ar-rope-{family:?}"));
        init_random_ar(family, Size::Tiny, s.path(), 2, None).unwrap();
        let want = {
            let mut m = load_causal(s.str(), &Device::Cpu, DType::F32).unwrap();
            m.model.forward(&[1, 2, 3, 4], 0).unwrap()
        };
        edit_config(s.path(), |c| {
            let theta = c.remove("rope_theta").unwrap();
            c.insert(
                "rope_parameters".into(),
                serde_json::json!({"rope_theta": theta, "rope_type": "default"}),
            );
        });
        let mut m = load_causal(s.str(), &Device::Cpu, DType::F32).unwrap();
        assert_eq!(
            m.model.forward(&[1, 2, 3, 4], 0).unwrap(),
            want,
            "{family:?}"
        );
    }
}

/// The safetensors header of `file`: (header length, JSON).
fn header(file: &Path) -> (usize, serde_json::Value) {
    let bytes = std::fs::read(file).unwrap();
    let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
    (n, serde_json::from_slice(&bytes[8..8 + n]).unwrap())
}

/// Rewrites the header of `file` (the data stays where it was: the new
/// header is padded to the old length with spaces).
fn rewrite_header(file: &Path, f: impl FnOnce(&mut serde_json::Value)) {
    let mut bytes = std::fs::read(file).unwrap();
    let (n, mut h) = header(file);
    f(&mut h);
    let mut text = serde_json::to_string(&h).unwrap().into_bytes();
    assert!(text.len() <= n);
    text.resize(n, b' ');
    bytes[8..8 + n].copy_from_slice(&text);
    std::fs::write(file, bytes).unwrap();
}

/// A tensor name of a tiny Dream model.
fn some_tensor(h: &serde_json::Value) -> String {
    h.as_object()
        .unwrap()
        .keys()
        .find(|k| k.as_str() != "__metadata__")
        .unwrap()
        .clone()
}

#[test]
fn weight_map_naming_a_file_outside_the_model_is_refused() {
    let root = Scratch::new("files", "escape");
    let dir = root.path().join("model");
    init::init_random(Arch::Dream, Size::Tiny, &dir, 1, None).unwrap();
    let weights = dir.join("model.safetensors");
    let outside = root.path().join("elsewhere.safetensors");
    std::fs::copy(&weights, &outside).unwrap();
    let (_, h) = header(&weights);
    let names: Vec<String> = h
        .as_object()
        .unwrap()
        .keys()
        .filter(|k| k.as_str() != "__metadata__")
        .cloned()
        .collect();
    std::fs::remove_file(&weights).unwrap();
    let dir_str = dir.to_str().unwrap();
    for target in [
        "../elsewhere.safetensors".to_string(),
        outside.display().to_string(),
    ] {
        let map: serde_json::Map<String, serde_json::Value> = names
            .iter()
            .map(|n| (n.clone(), serde_json::json!(target)))
            .collect();
        std::fs::write(
            dir.join("model.safetensors.index.json"),
            serde_json::json!({"metadata": {}, "weight_map": map}).to_string(),
        )
        .unwrap();
        let m = model_err(load::load(dir_str, &Device::Cpu, DType::F32));
        assert!(m.contains("not a file inside the model directory"), "{m}");
    }
    // A symlink out of the directory is refused too.
    std::fs::remove_file(dir.join("model.safetensors.index.json")).unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&outside, &weights).unwrap();
        let m = model_err(load::load(dir_str, &Device::Cpu, DType::F32));
        assert!(m.contains("outside the model directory"), "{m}");
        std::fs::remove_file(&weights).unwrap();
    }
    // The same file inside the directory loads.
    std::fs::copy(&outside, &weights).unwrap();
    assert!(load::load(dir_str, &Device::Cpu, DType::F32).is_ok());
}

#[test]
fn integer_tensor_in_a_model_file_is_refused() {
    let s = Scratch::new("files", "int-tensor");
    init::init_random(Arch::Dream, Size::Tiny, s.path(), 1, None).unwrap();
    let weights = s.path().join("model.safetensors");
    let (_, h) = header(&weights);
    let name = some_tensor(&h);
    // I32 has F32's size: only the header's dtype tells them apart.
    rewrite_header(&weights, |h| h[&name]["dtype"] = serde_json::json!("I32"));
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains("I32") && m.contains(&name), "{m}");
}

#[test]
fn safetensors_header_that_lies_is_refused() {
    let s = Scratch::new("files", "bad-header");
    init::init_random(Arch::Dream, Size::Tiny, s.path(), 1, None).unwrap();
    let weights = s.path().join("model.safetensors");
    let good = std::fs::read(&weights).unwrap();
    let (_, h) = header(&weights);
    let name = some_tensor(&h);
    // Offsets that do not match the shape.
    rewrite_header(&weights, |h| {
        h[&name]["shape"] = serde_json::json!([3]);
    });
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains(&name), "{m}");
    // A file cut short: the last tensor's data is past its end.
    std::fs::write(&weights, &good[..good.len() - 100]).unwrap();
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains("bad safetensors file"), "{m}");
    // A header length past the end of the file.
    let mut huge = good.clone();
    huge[..8].copy_from_slice(&(u64::MAX / 2).to_le_bytes());
    std::fs::write(&weights, &huge).unwrap();
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains("bad safetensors file"), "{m}");
    // A tensor of the right dtype but the wrong shape for the config.
    std::fs::write(&weights, &good).unwrap();
    edit_config(s.path(), |c| {
        let h = c["hidden_size"].as_u64().unwrap();
        c.insert("intermediate_size".into(), serde_json::json!(h * 5));
    });
    let m = model_err(load::load(s.str(), &Device::Cpu, DType::F32));
    assert!(m.contains("has shape") && m.contains("needs"), "{m}");
}

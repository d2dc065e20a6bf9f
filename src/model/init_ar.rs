//! Randomly initialized FIM model directories of every autoregressive family
//! ([`ArFamily`]) in their Hugging Face layout, for tests and timing without
//! real weights.
//!
//! [`init_random_ar`] writes `config.json` with the real field names (and,
//! for `Size::Full`, the real sizes of StarCoder2-7B, DeepSeek-Coder-6.7B,
//! CodeGemma-7B and Qwen2.5-Coder-7B, including DeepSeek's linear RoPE
//! scaling), weights under the real tensor names, and a byte-level
//! `tokenizer.json` (256 bytes, then the family's special tokens with its FIM
//! tokens, spelled as in the real tokenizers) with `tokenizer_config.json`,
//! or a real tokenizer's files.

use std::path::Path;

use serde_json::{json, Value};

use super::causal::ArFamily;
use super::init::{
    byte_level_tokenizer_json, copy_tokenizer, rows_for, special_id, write_json, write_weights,
    Size,
};
use crate::error::{Error, ErrorKind, Result};

/// The special tokens of the stand-in tokenizer (ids from 256), with the
/// names of (bos, eos) among them.
pub fn ar_specials(family: ArFamily) -> (&'static [&'static str], &'static str, &'static str) {
    match family {
        ArFamily::StarCoder2 => (
            &[
                "<|endoftext|>",
                "<fim_prefix>",
                "<fim_middle>",
                "<fim_suffix>",
                "<fim_pad>",
                "<file_sep>",
            ],
            "<|endoftext|>",
            "<|endoftext|>",
        ),
        ArFamily::Llama => (
            &[
                "<\u{ff5c}begin\u{2581}of\u{2581}sentence\u{ff5c}>",
                "<\u{ff5c}end\u{2581}of\u{2581}sentence\u{ff5c}>",
                "<\u{ff5c}fim\u{2581}hole\u{ff5c}>",
                "<\u{ff5c}fim\u{2581}begin\u{ff5c}>",
                "<\u{ff5c}fim\u{2581}end\u{ff5c}>",
                "<|EOT|>",
            ],
            "<\u{ff5c}begin\u{2581}of\u{2581}sentence\u{ff5c}>",
            "<\u{ff5c}end\u{2581}of\u{2581}sentence\u{ff5c}>",
        ),
        ArFamily::Gemma => (
            &[
                "<pad>",
                "<eos>",
                "<bos>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
                "<|file_separator|>",
            ],
            "<bos>",
            "<eos>",
        ),
        ArFamily::Qwen2 => (
            &[
                "<|endoftext|>",
                "<|im_start|>",
                "<|im_end|>",
                "<|fim_prefix|>",
                "<|fim_middle|>",
                "<|fim_suffix|>",
                "<|fim_pad|>",
                "<|repo_name|>",
                "<|file_sep|>",
            ],
            "<|endoftext|>",
            "<|endoftext|>",
        ),
    }
}

/// Embedding rows of tiny models.
const TINY_ROWS: usize = 320;

/// The `config.json` of `family` at `size`, with `bos`/`eos` ids.
pub fn ar_config(family: ArFamily, size: Size, bos: u32, eos: u32) -> Value {
    let tiny = size == Size::Tiny;
    match family {
        ArFamily::StarCoder2 => {
            let (h, i, l, a, kv, v) = if tiny {
                (64, 128, 2, 4, 2, TINY_ROWS)
            } else {
                (4608, 18432, 32, 36, 4, 49152)
            };
            json!({
                "architectures": ["Starcoder2ForCausalLM"], "model_type": "starcoder2",
                "vocab_size": v, "hidden_size": h, "intermediate_size": i,
                "num_hidden_layers": l, "num_attention_heads": a, "num_key_value_heads": kv,
                "hidden_act": "gelu_pytorch_tanh", "max_position_embeddings": 16384,
                "norm_epsilon": 1e-5, "rope_theta": 1_000_000.0, "use_bias": true,
                "sliding_window": 4096, "bos_token_id": bos, "eos_token_id": eos,
                "initializer_range": 0.018, "torch_dtype": if tiny { "float32" } else { "bfloat16" }
            })
        }
        ArFamily::Llama => {
            let (h, i, l, a, kv, v) = if tiny {
                (64, 128, 2, 4, 2, TINY_ROWS)
            } else {
                (4096, 11008, 32, 32, 32, 32256)
            };
            json!({
                "architectures": ["LlamaForCausalLM"], "model_type": "llama",
                "vocab_size": v, "hidden_size": h, "intermediate_size": i,
                "num_hidden_layers": l, "num_attention_heads": a, "num_key_value_heads": kv,
                "hidden_act": "silu", "max_position_embeddings": 16384,
                "rms_norm_eps": 1e-6, "rope_theta": 100000.0,
                "rope_scaling": {"type": "linear", "factor": 4.0},
                "tie_word_embeddings": false, "bos_token_id": bos, "eos_token_id": eos,
                "torch_dtype": if tiny { "float32" } else { "bfloat16" }
            })
        }
        ArFamily::Gemma => {
            let (h, i, l, a, kv, hd, v) = if tiny {
                (64, 128, 2, 4, 2, 16, TINY_ROWS)
            } else {
                (3072, 24576, 28, 16, 16, 256, 256000)
            };
            json!({
                "architectures": ["GemmaForCausalLM"], "model_type": "gemma",
                "vocab_size": v, "hidden_size": h, "intermediate_size": i,
                "num_hidden_layers": l, "num_attention_heads": a, "num_key_value_heads": kv,
                "head_dim": hd, "hidden_act": "gelu_pytorch_tanh", "hidden_activation": "gelu_pytorch_tanh",
                "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
                "attention_bias": false, "bos_token_id": bos, "eos_token_id": eos, "pad_token_id": 256,
                "torch_dtype": if tiny { "float32" } else { "bfloat16" }
            })
        }
        ArFamily::Qwen2 => {
            let (h, i, l, a, kv, v) = if tiny {
                (64, 128, 2, 4, 2, TINY_ROWS)
            } else {
                (3584, 18944, 28, 28, 4, 152064)
            };
            json!({
                "architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2",
                "vocab_size": v, "hidden_size": h, "intermediate_size": i,
                "num_hidden_layers": l, "num_attention_heads": a, "num_key_value_heads": kv,
                "hidden_act": "silu", "max_position_embeddings": 32768,
                "rms_norm_eps": 1e-6, "rope_theta": 1_000_000.0, "sliding_window": 131072,
                "max_window_layers": l, "use_sliding_window": false,
                "tie_word_embeddings": false, "bos_token_id": bos, "eos_token_id": eos,
                "torch_dtype": if tiny { "float32" } else { "bfloat16" }
            })
        }
    }
}

/// The tensor names and shapes a `config.json` of `family` needs.
///
/// # Errors
/// [`ErrorKind::Model`] when a size field is missing.
pub fn ar_tensor_shapes(family: ArFamily, cfg: &Value) -> Result<Vec<(String, Vec<usize>)>> {
    let get = |k: &str| {
        cfg.get(k)
            .and_then(Value::as_u64)
            .map(|v| v as usize)
            .ok_or_else(|| Error::new(ErrorKind::Model, format!("config has no {k:?}")))
    };
    let (h, i, l, a, kv, v) = (
        get("hidden_size")?,
        get("intermediate_size")?,
        get("num_hidden_layers")?,
        get("num_attention_heads")?,
        get("num_key_value_heads")?,
        get("vocab_size")?,
    );
    let hd = match family {
        ArFamily::Gemma => get("head_dim")?,
        _ => h / a,
    };
    let mut t: Vec<(String, Vec<usize>)> = vec![("model.embed_tokens.weight".into(), vec![v, h])];
    let biased = matches!(family, ArFamily::StarCoder2);
    for n in 0..l {
        let p = |s: &str| format!("model.layers.{n}.{s}");
        for (name, rows, cols) in [
            ("q_proj", a * hd, h),
            ("k_proj", kv * hd, h),
            ("v_proj", kv * hd, h),
            ("o_proj", h, a * hd),
        ] {
            t.push((p(&format!("self_attn.{name}.weight")), vec![rows, cols]));
            let bias = biased || (family == ArFamily::Qwen2 && name != "o_proj");
            if bias {
                t.push((p(&format!("self_attn.{name}.bias")), vec![rows]));
            }
        }
        if family == ArFamily::StarCoder2 {
            t.push((p("mlp.c_fc.weight"), vec![i, h]));
            t.push((p("mlp.c_fc.bias"), vec![i]));
            t.push((p("mlp.c_proj.weight"), vec![h, i]));
            t.push((p("mlp.c_proj.bias"), vec![h]));
        } else {
            t.push((p("mlp.gate_proj.weight"), vec![i, h]));
            t.push((p("mlp.up_proj.weight"), vec![i, h]));
            t.push((p("mlp.down_proj.weight"), vec![h, i]));
        }
        for norm in ["input_layernorm", "post_attention_layernorm"] {
            t.push((p(&format!("{norm}.weight")), vec![h]));
            if family == ArFamily::StarCoder2 {
                t.push((p(&format!("{norm}.bias")), vec![h]));
            }
        }
    }
    t.push(("model.norm.weight".into(), vec![h]));
    if family == ArFamily::StarCoder2 {
        t.push(("model.norm.bias".into(), vec![h]));
    }
    let tied = matches!(family, ArFamily::StarCoder2 | ArFamily::Gemma)
        || cfg.get("tie_word_embeddings").and_then(Value::as_bool) == Some(true);
    if !tied {
        t.push(("lm_head.weight".into(), vec![v, h]));
    }
    Ok(t)
}

/// Writes a randomly initialized FIM model of `family` at `out` (created if
/// needed); `Size::Tiny` (2 layers, width 64, 320 rows, f32) or `Size::Full`
/// (the 7B shapes named in the module docs, bf16, 2 GiB shards: about 14-17
/// GB; minutes). Same seed, same files.
///
/// The tokenizer: with `tokenizer_dir`, its files are copied (e.g. the Qwen2
/// tokenizer of `../shared/tokenizers/dream-v0-instruct-7b` for a Qwen2.5-Coder
/// shaped model: the real vocabulary, for timing masks), the bos/eos ids are
/// looked up in it, its FIM tokens must be the family's, and a tiny model's
/// embedding grows to cover it; without, the byte-level stand-in above.
///
/// # Errors
/// [`ErrorKind::Model`] for a bad tokenizer folder (or one without the
/// family's special tokens), [`ErrorKind::Io`] when writing fails.
pub fn init_random_ar(
    family: ArFamily,
    size: Size,
    out: &Path,
    seed: u64,
    tokenizer_dir: Option<&Path>,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot create {}: {e}", out.display()),
        )
    })?;
    let (specials, bos, eos) = ar_specials(family);
    let cfg = match tokenizer_dir {
        Some(dir) => {
            let tok = copy_tokenizer(dir, out)?;
            // The FIM tokens too: the loader finds the format by them.
            for s in specials.iter().filter(|s| s.contains("fim")) {
                special_id(&tok, dir, s)?;
            }
            let mut cfg = ar_config(
                family,
                size,
                special_id(&tok, dir, bos)?,
                special_id(&tok, dir, eos)?,
            );
            let real_rows = cfg
                .get("vocab_size")
                .and_then(Value::as_u64)
                .unwrap_or(TINY_ROWS as u64) as usize;
            cfg["vocab_size"] = json!(rows_for(&tok, real_rows, size)?);
            cfg
        }
        None => {
            let id = |s: &str| 256 + specials.iter().position(|x| *x == s).unwrap_or(0) as u32;
            write_json(
                &out.join("tokenizer.json"),
                &byte_level_tokenizer_json(specials),
            )?;
            let add_bos = matches!(family, ArFamily::Llama | ArFamily::Gemma);
            let tc = json!({
                "add_bos_token": add_bos,
                "add_eos_token": false,
                "bos_token": bos,
                "eos_token": eos,
                "clean_up_tokenization_spaces": false,
                "tokenizer_class": "PreTrainedTokenizerFast"
            });
            write_json(&out.join("tokenizer_config.json"), &tc)?;
            ar_config(family, size, id(bos), id(eos))
        }
    };
    write_json(&out.join("config.json"), &cfg)?;
    let shapes = ar_tensor_shapes(family, &cfg)?;
    write_weights(out, &shapes, seed, size)
}

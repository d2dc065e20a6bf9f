//! Randomly initialized model directories with the real file layout, for
//! tests and benchmarks without the real weights.
//!
//! [`init_random`] writes `config.json` (the real field names), weights with
//! the real tensor names, `tokenizer.json` and `tokenizer_config.json`; the
//! result loads with [`super::load::load`]. Weights depend only on the seed
//! and the tensor name.

use std::collections::HashMap;
use std::path::Path;
use std::str::FromStr;

use candle_core::{DType, Device, Tensor};
use rayon::prelude::*;
use serde_json::{json, Value};

use super::load::{model_err, Arch};
use super::tokenizer::{byte_to_char, Tokenizer};
use crate::error::{Error, ErrorKind, Result};
use crate::rng::SplitMix64;

/// Model size for [`init_random`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Size {
    /// 2 layers, width 64, 4 heads, 2 KV heads, MLP 128, 320 embedding rows
    /// (a byte-level tokenizer of 256 bytes plus a few specials), f32.
    Tiny,
    /// The real size: Dream 7B or LLaDA 8B, bf16, 2 GiB shards.
    Full,
}

impl FromStr for Size {
    type Err = Error;

    /// `tiny`, or `7b` / `8b` / `full` for the real size.
    fn from_str(s: &str) -> Result<Size> {
        match s.to_ascii_lowercase().as_str() {
            "tiny" => Ok(Size::Tiny),
            "7b" | "8b" | "full" => Ok(Size::Full),
            _ => Err(Error::new(
                ErrorKind::Model,
                format!("unknown size {s:?} (expected tiny, 7b or 8b)"),
            )),
        }
    }
}

/// Embedding rows of tiny models.
const TINY_ROWS: usize = 320;

/// Special tokens of the stand-in tokenizer, from id 256 on, and the names of
/// (mask, eos) among them.
fn stand_in_specials(arch: Arch) -> (&'static [&'static str], &'static str, &'static str) {
    match arch {
        Arch::Dream => (
            &["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|mask|>"],
            "<|mask|>",
            "<|endoftext|>",
        ),
        Arch::Llada => (
            &[
                "<|startoftext|>",
                "<|endoftext|>",
                "<|start_header_id|>",
                "<|end_header_id|>",
                "<|eot_id|>",
                "<|mdm_mask|>",
            ],
            "<|mdm_mask|>",
            "<|endoftext|>",
        ),
    }
}

/// A byte-level BPE `tokenizer.json`: the 256 byte tokens (no merges) then
/// `specials` as special added tokens.
pub fn byte_level_tokenizer_json(specials: &[&str]) -> Value {
    let table = byte_to_char();
    let vocab: serde_json::Map<String, Value> = table
        .iter()
        .enumerate()
        .map(|(b, c)| (c.to_string(), json!(b)))
        .collect();
    let added: Vec<Value> = specials
        .iter()
        .enumerate()
        .map(|(i, s)| {
            json!({"id": 256 + i, "content": s, "single_word": false, "lstrip": false,
                   "rstrip": false, "normalized": false, "special": true})
        })
        .collect();
    let byte_level = json!({"type": "ByteLevel", "add_prefix_space": false,
                            "trim_offsets": true, "use_regex": true});
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": byte_level,
        "post_processor": null,
        "decoder": byte_level,
        "model": {"type": "BPE", "dropout": null, "unk_token": null,
                  "continuing_subword_prefix": null, "end_of_word_suffix": null,
                  "fuse_unk": false, "byte_fallback": false, "ignore_merges": false,
                  "vocab": vocab, "merges": []}
    })
}

/// Chat templates written for stand-in tokenizers (short Jinja templates
/// producing the same text as the real ones for plain messages).
fn stand_in_template(arch: Arch) -> &'static str {
    match arch {
        Arch::Dream => {
            "{% if messages[0]['role'] != 'system' %}{{ '<|im_start|>system\\nYou are a helpful assistant.<|im_end|>\\n' }}{% endif %}\
             {% for m in messages %}{{ '<|im_start|>' + m['role'] + '\\n' + m['content'] + '<|im_end|>\\n' }}{% endfor %}\
             {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
        }
        Arch::Llada => {
            "{{ bos_token }}{% for m in messages %}{{ '<|start_header_id|>' + m['role'] + '<|end_header_id|>\\n\\n' + m['content'] | trim + '<|eot_id|>' }}{% endfor %}\
             {{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
        }
    }
}

/// Special ids written into a config.
struct Ids {
    mask: u32,
    eos: u32,
    bos: u32,
}

/// The sizes and ids of a LLaDA `config.json`.
pub(crate) struct LladaShape {
    pub(crate) d_model: usize,
    pub(crate) mlp: usize,
    pub(crate) layers: usize,
    pub(crate) heads: usize,
    pub(crate) kv_heads: usize,
    /// Embedding rows.
    pub(crate) rows: usize,
    /// Tokenizer vocabulary (at most `rows`).
    pub(crate) vocab: usize,
    pub(crate) ctx: usize,
    pub(crate) rope_theta: f64,
    pub(crate) eos: u32,
    pub(crate) mask: u32,
}

/// A LLaDA `config.json` (OLMo field names) for `s`; the fields not in
/// [`LladaShape`] are those of LLaDA-8B.
pub(crate) fn llada_config(s: &LladaShape) -> Value {
    json!({
        "architectures": ["LLaDAModelLM"],
        "model_type": "llada",
        "activation_type": "silu",
        "alibi": false,
        "attention_layer_norm": false,
        "block_type": "llama",
        "d_model": s.d_model,
        "embedding_size": s.rows,
        "eos_token_id": s.eos,
        "pad_token_id": s.eos,
        "mask_token_id": s.mask,
        "include_bias": false,
        "include_qkv_bias": false,
        "input_emb_norm": false,
        "layer_norm_type": "rms",
        "layer_norm_with_affine": true,
        "max_sequence_length": s.ctx,
        "mlp_hidden_size": s.mlp,
        "mlp_ratio": 4,
        "n_heads": s.heads,
        "n_kv_heads": s.kv_heads,
        "n_layers": s.layers,
        "rms_norm_eps": 1e-5,
        "rope": true,
        "rope_full_precision": true,
        "rope_theta": s.rope_theta,
        "scale_logits": false,
        "vocab_size": s.vocab,
        "weight_tying": false
    })
}

/// The `config.json` of `arch` at `size` with `rows` embedding rows and the
/// given special ids. Full sizes carry the real checkpoints' values.
fn config_with(arch: Arch, size: Size, rows: usize, ids: &Ids) -> Value {
    match (arch, size) {
        (Arch::Dream, _) => {
            let (h, i, l, heads, kv, eps, dtype) = match size {
                Size::Tiny => (64, 128, 2, 4, 2, 1e-6, "float32"),
                Size::Full => (3584, 18944, 28, 28, 4, 1e-6, "bfloat16"),
            };
            json!({
                "architectures": ["DreamModel"],
                "model_type": "Dream",
                "attention_dropout": 0.0,
                "bos_token_id": ids.bos,
                "eos_token_id": ids.eos,
                "pad_token_id": ids.eos,
                "mask_token_id": ids.mask,
                "hidden_act": "silu",
                "hidden_size": h,
                "initializer_range": 0.02,
                "intermediate_size": i,
                "max_position_embeddings": 131072,
                "max_window_layers": l,
                "num_attention_heads": heads,
                "num_hidden_layers": l,
                "num_key_value_heads": kv,
                "rms_norm_eps": eps,
                "rope_scaling": null,
                "rope_theta": 1000000.0,
                "sliding_window": null,
                "tie_word_embeddings": false,
                "torch_dtype": dtype,
                "use_cache": true,
                "use_mrope": false,
                "use_sliding_window": false,
                "vocab_size": rows
            })
        }
        (Arch::Llada, _) => {
            let (d, f, l, heads, kv) = match size {
                Size::Tiny => (64, 128, 2, 4, 2),
                Size::Full => (4096, 12288, 32, 32, 32),
            };
            llada_config(&LladaShape {
                d_model: d,
                mlp: f,
                layers: l,
                heads,
                kv_heads: kv,
                rows,
                vocab: rows,
                ctx: 4096,
                rope_theta: 500000.0,
                eos: ids.eos,
                mask: ids.mask,
            })
        }
    }
}

/// The `config.json` [`init_random`] writes for `arch` and `size` with the
/// stand-in byte-level tokenizer at tiny size, or the real vocabulary and
/// special ids at full size (Dream: 152,064 rows, mask 151666; LLaDA:
/// 126,464 rows, mask 126336).
pub fn config(arch: Arch, size: Size) -> Value {
    match (arch, size) {
        (_, Size::Tiny) => {
            let (specials, mask, eos) = stand_in_specials(arch);
            let id = |s: &str| 256 + specials.iter().position(|x| *x == s).unwrap_or(0) as u32;
            let ids = Ids {
                mask: id(mask),
                eos: id(eos),
                bos: id(specials[0]),
            };
            config_with(arch, size, TINY_ROWS, &ids)
        }
        (Arch::Dream, Size::Full) => config_with(
            arch,
            size,
            152064,
            &Ids {
                mask: 151666,
                eos: 151643,
                bos: 151643,
            },
        ),
        (Arch::Llada, Size::Full) => config_with(
            arch,
            size,
            126464,
            &Ids {
                mask: 126336,
                eos: 126081,
                bos: 126080,
            },
        ),
    }
}

/// The tensors (real names, shapes) of a model with config `cfg`, as written
/// by [`init_random`].
///
/// # Errors
/// [`ErrorKind::Model`] for a config that does not deserialize.
pub fn tensor_shapes(arch: Arch, cfg: &Value) -> Result<Vec<(String, Vec<usize>)>> {
    let bad = |e: serde_json::Error| model_err("bad config", e);
    let mut t: Vec<(String, Vec<usize>)> = Vec::new();
    let mut add = |name: String, shape: &[usize]| t.push((name, shape.to_vec()));
    match arch {
        Arch::Dream => {
            let c: super::dream::Config = serde_json::from_value(cfg.clone()).map_err(bad)?;
            c.validate()?;
            let (h, i, v) = (c.hidden_size, c.intermediate_size, c.vocab_size);
            let kv = c.num_key_value_heads * (h / c.num_attention_heads);
            add("model.embed_tokens.weight".into(), &[v, h]);
            for l in 0..c.num_hidden_layers {
                let p = format!("model.layers.{l}");
                add(format!("{p}.input_layernorm.weight"), &[h]);
                add(format!("{p}.post_attention_layernorm.weight"), &[h]);
                add(format!("{p}.self_attn.q_proj.weight"), &[h, h]);
                add(format!("{p}.self_attn.q_proj.bias"), &[h]);
                add(format!("{p}.self_attn.k_proj.weight"), &[kv, h]);
                add(format!("{p}.self_attn.k_proj.bias"), &[kv]);
                add(format!("{p}.self_attn.v_proj.weight"), &[kv, h]);
                add(format!("{p}.self_attn.v_proj.bias"), &[kv]);
                add(format!("{p}.self_attn.o_proj.weight"), &[h, h]);
                add(format!("{p}.mlp.gate_proj.weight"), &[i, h]);
                add(format!("{p}.mlp.up_proj.weight"), &[i, h]);
                add(format!("{p}.mlp.down_proj.weight"), &[h, i]);
            }
            add("model.norm.weight".into(), &[h]);
            if !c.tie_word_embeddings {
                add("lm_head.weight".into(), &[v, h]);
            }
        }
        Arch::Llada => {
            let c: super::llada::Config = serde_json::from_value(cfg.clone()).map_err(bad)?;
            c.validate()?;
            let (d, f, v) = (c.d_model, c.mlp_width(), c.embedding_rows());
            let kv = c.kv_heads() * (d / c.n_heads);
            add("model.transformer.wte.weight".into(), &[v, d]);
            for l in 0..c.n_layers {
                let p = format!("model.transformer.blocks.{l}");
                add(format!("{p}.attn_norm.weight"), &[d]);
                add(format!("{p}.ff_norm.weight"), &[d]);
                add(format!("{p}.q_proj.weight"), &[d, d]);
                add(format!("{p}.k_proj.weight"), &[kv, d]);
                add(format!("{p}.v_proj.weight"), &[kv, d]);
                add(format!("{p}.attn_out.weight"), &[d, d]);
                add(format!("{p}.ff_proj.weight"), &[f, d]);
                add(format!("{p}.up_proj.weight"), &[f, d]);
                add(format!("{p}.ff_out.weight"), &[d, f]);
            }
            add("model.transformer.ln_f.weight".into(), &[d]);
            if !c.weight_tying {
                add("model.transformer.ff_out.weight".into(), &[v, d]);
            }
        }
    }
    Ok(t)
}

/// FNV-1a of a name, to give every tensor its own random stream.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A random tensor for `name`: norms are ones; embeddings, weights and
/// biases uniform in `±bound` (tiny: 1 for embeddings, `sqrt(3 / fan_in)`
/// otherwise; full: std 0.02).
fn random_tensor(
    name: &str,
    shape: &[usize],
    seed: u64,
    size: Size,
    dtype: DType,
) -> candle_core::Result<Tensor> {
    let dev = Device::Cpu;
    let is_norm = name.contains("norm") || name.contains("ln_f");
    if is_norm {
        return Tensor::ones(shape, dtype, &dev);
    }
    let is_embed = name.contains("embed_tokens") || name.contains("wte");
    let fan_in = *shape.last().unwrap_or(&1) as f64;
    let bound = match size {
        Size::Tiny if is_embed => 1.0,
        Size::Tiny if shape.len() == 1 => 0.1,
        Size::Tiny => (3.0 / fan_in).sqrt(),
        Size::Full => 0.02 * 3f64.sqrt(),
    };
    let mut rng = SplitMix64::new(seed ^ name_hash(name));
    let total: usize = shape.iter().product();
    const CHUNK: usize = 1 << 24;
    let mut parts = Vec::new();
    let mut done = 0;
    while done < total || parts.is_empty() {
        let n = CHUNK.min(total - done);
        let v: Vec<f32> = (0..n)
            .map(|_| ((rng.unit() * 2.0 - 1.0) * bound) as f32)
            .collect();
        parts.push(Tensor::from_vec(v, n, &dev)?.to_dtype(dtype)?);
        done += n;
    }
    let flat = if parts.len() == 1 {
        parts.remove(0)
    } else {
        Tensor::cat(&parts, 0)?
    };
    flat.reshape(shape)
}

/// Shard size limit for full-size models.
const SHARD_BYTES: usize = 2 << 30;

/// Writes a randomly initialized model directory at `out` (created if
/// needed): `config.json`, weights, `tokenizer.json`, `tokenizer_config.json`.
///
/// - `Size::Tiny`: f32, one `model.safetensors`.
/// - `Size::Full`: the real Dream 7B / LLaDA 8B shapes in bf16, in 2 GiB
///   shards with `model.safetensors.index.json` (about 15 / 16 GB; minutes).
///
/// The tokenizer: with `tokenizer_dir`, its files (`tokenizer.json`,
/// `tokenizer_config.json`, `vocab.json`, `merges.txt`,
/// `special_tokens_map.json`, `added_tokens.json`, where present) are copied,
/// the special ids are looked up in it and a tiny model's embedding grows to
/// cover it; without, a byte-level stand-in (256 bytes + the model's special
/// tokens from id 256) is written and the config's special ids point into it.
/// Same seed, same files.
///
/// # Errors
/// [`ErrorKind::Model`] for a bad tokenizer folder, [`ErrorKind::Io`] when
/// writing fails.
pub fn init_random(
    arch: Arch,
    size: Size,
    out: &Path,
    seed: u64,
    tokenizer_dir: Option<&Path>,
) -> Result<()> {
    let io = |what: &str, p: &Path, e: &dyn std::fmt::Display| {
        Error::new(ErrorKind::Io, format!("{what} {}: {e}", p.display()))
    };
    std::fs::create_dir_all(out).map_err(|e| io("cannot create", out, &e))?;
    let (specials, mask_name, eos_name) = stand_in_specials(arch);
    let full_cfg = config(arch, size);
    let real_rows = full_cfg
        .get("vocab_size")
        .and_then(Value::as_u64)
        .unwrap_or(TINY_ROWS as u64) as usize;
    let (rows, ids) = match tokenizer_dir {
        Some(dir) => {
            let tok = copy_tokenizer(dir, out)?;
            let find = |s: &str| special_id(&tok, dir, s);
            let bos_name = if arch == Arch::Llada {
                "<|startoftext|>"
            } else {
                eos_name
            };
            let ids = Ids {
                mask: find(mask_name)?,
                eos: find(eos_name)?,
                bos: find(bos_name).or_else(|_| find(eos_name))?,
            };
            (rows_for(&tok, real_rows, size)?, ids)
        }
        None => {
            let id = |s: &str| 256 + specials.iter().position(|x| *x == s).unwrap_or(0) as u32;
            let ids = Ids {
                mask: id(mask_name),
                eos: id(eos_name),
                bos: 256,
            };
            let tj = byte_level_tokenizer_json(specials);
            write_json(&out.join("tokenizer.json"), &tj)?;
            let tc = json!({
                "add_bos_token": false,
                "add_eos_token": false,
                "bos_token": specials[0],
                "eos_token": eos_name,
                "pad_token": eos_name,
                "mask_token": mask_name,
                "chat_template": stand_in_template(arch),
                "clean_up_tokenization_spaces": false,
                "tokenizer_class": "PreTrainedTokenizerFast"
            });
            write_json(&out.join("tokenizer_config.json"), &tc)?;
            (real_rows, ids)
        }
    };
    let cfg = config_with(arch, size, rows, &ids);
    write_json(&out.join("config.json"), &cfg)?;
    let shapes = tensor_shapes(arch, &cfg)?;
    write_weights(out, &shapes, seed, size)
}

/// Loads `dir/tokenizer.json` and copies the tokenizer's files
/// (`tokenizer.json`, `tokenizer_config.json`, `vocab.json`, `merges.txt`,
/// `special_tokens_map.json`, `added_tokens.json`, where present) into
/// `out`.
///
/// # Errors
/// [`ErrorKind::Model`] for a bad `tokenizer.json`, [`ErrorKind::Io`] when
/// copying fails.
pub(crate) fn copy_tokenizer(dir: &Path, out: &Path) -> Result<Tokenizer> {
    let tok = Tokenizer::from_file(&dir.join("tokenizer.json"))?;
    for f in [
        "tokenizer.json",
        "tokenizer_config.json",
        "vocab.json",
        "merges.txt",
        "special_tokens_map.json",
        "added_tokens.json",
    ] {
        let src = dir.join(f);
        if src.is_file() {
            std::fs::copy(&src, out.join(f)).map_err(|e| {
                Error::new(ErrorKind::Io, format!("cannot copy {}: {e}", src.display()))
            })?;
        }
    }
    Ok(tok)
}

/// The id of special token `name` in the tokenizer read from `dir`.
///
/// # Errors
/// [`ErrorKind::Model`] when it has no such token.
pub(crate) fn special_id(tok: &Tokenizer, dir: &Path, name: &str) -> Result<u32> {
    tok.token_id(name).ok_or_else(|| {
        Error::new(
            ErrorKind::Model,
            format!("tokenizer in {} has no {name} token", dir.display()),
        )
    })
}

/// The embedding rows of a model of `size` whose real vocabulary has
/// `real_rows` rows, with tokenizer `tok`: the real rows, or at tiny size
/// enough to cover a larger tokenizer (a multiple of 64).
///
/// # Errors
/// [`ErrorKind::Model`] when a full-size model's rows do not cover it.
pub(crate) fn rows_for(tok: &Tokenizer, real_rows: usize, size: Size) -> Result<usize> {
    let n = tok.n_tokens();
    match (n > real_rows, size) {
        (false, _) => Ok(real_rows),
        (true, Size::Tiny) => Ok(n.div_ceil(64) * 64),
        (true, Size::Full) => Err(Error::new(
            ErrorKind::Model,
            format!("tokenizer has {n} tokens, more than the model's {real_rows} rows"),
        )),
    }
}

/// Writes random weights of `shapes` into `out`: `Size::Tiny` in f32 as one
/// `model.safetensors`, `Size::Full` in bf16 as 2 GiB shards with
/// `model.safetensors.index.json`, one shard in memory at a time.
///
/// # Errors
/// [`ErrorKind::Io`] when writing fails.
pub(crate) fn write_weights(
    out: &Path,
    shapes: &[(String, Vec<usize>)],
    seed: u64,
    size: Size,
) -> Result<()> {
    let io = |what: &str, p: &Path, e: &dyn std::fmt::Display| {
        Error::new(ErrorKind::Io, format!("{what} {}: {e}", p.display()))
    };
    let dtype = match size {
        Size::Tiny => DType::F32,
        Size::Full => DType::BF16,
    };
    let gen = |name: &str, shape: &[usize]| {
        random_tensor(name, shape, seed, size, dtype).map_err(|e| model_err("init", e))
    };
    let weights_io = |p: &Path, e: candle_core::Error| io("cannot write", p, &e);
    if size == Size::Tiny {
        let mut map = HashMap::new();
        for (name, shape) in shapes {
            map.insert(name.clone(), gen(name, shape)?);
        }
        let p = out.join("model.safetensors");
        return candle_core::safetensors::save(&map, &p).map_err(|e| weights_io(&p, e));
    }
    // Plan the shards, then fill them one at a time (bounded memory).
    let elt = dtype.size_in_bytes();
    let mut plan: Vec<Vec<usize>> = vec![Vec::new()];
    let mut used = 0usize;
    for (k, (_, shape)) in shapes.iter().enumerate() {
        let bytes = shape.iter().product::<usize>() * elt;
        if used > 0 && used + bytes > SHARD_BYTES {
            plan.push(Vec::new());
            used = 0;
        }
        used += bytes;
        if let Some(last) = plan.last_mut() {
            last.push(k);
        }
    }
    let n = plan.len();
    let mut weight_map = serde_json::Map::new();
    let mut total = 0usize;
    for (s, members) in plan.iter().enumerate() {
        let file = format!("model-{:05}-of-{:05}.safetensors", s + 1, n);
        // A shard's tensors are made in parallel: each has its own random
        // stream (seeded by its name), so the weights do not depend on the
        // number of threads.
        let made = members
            .par_iter()
            .map(|&k| gen(&shapes[k].0, &shapes[k].1))
            .collect::<Result<Vec<Tensor>>>()?;
        let mut map = HashMap::new();
        for (&k, t) in members.iter().zip(made) {
            let (name, shape) = &shapes[k];
            total += shape.iter().product::<usize>() * elt;
            map.insert(name.clone(), t);
            weight_map.insert(name.clone(), json!(file));
        }
        let p = out.join(&file);
        candle_core::safetensors::save(&map, &p).map_err(|e| weights_io(&p, e))?;
    }
    let index = json!({"metadata": {"total_size": total}, "weight_map": weight_map});
    write_json(&out.join("model.safetensors.index.json"), &index)
}

pub(crate) fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot serialize {}: {e}", path.display()),
        )
    })?;
    std::fs::write(path, text).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot write {}: {e}", path.display()),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Full-size shards are made tensor by tensor in parallel: the bytes
    /// written must not depend on the number of threads.
    #[test]
    fn full_size_weights_do_not_depend_on_the_thread_count() {
        let shapes: Vec<(String, Vec<usize>)> = (0..6)
            .map(|i| {
                (
                    format!("model.layers.{i}.mlp.up_proj.weight"),
                    vec![24, 16 + i],
                )
            })
            .chain([("model.norm.weight".to_string(), vec![16])])
            .collect();
        let write = |threads: usize| {
            let dir = std::env::temp_dir().join(format!(
                "cdiff-init-threads-{}-{threads}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            pool.install(|| write_weights(&dir, &shapes, 7, Size::Full))
                .unwrap();
            let shard = std::fs::read(dir.join("model-00001-of-00001.safetensors")).unwrap();
            let index = std::fs::read(dir.join("model.safetensors.index.json")).unwrap();
            let _ = std::fs::remove_dir_all(&dir);
            (shard, index)
        };
        let one = write(1);
        assert!(one.0.len() > 6 * 24 * 16 * 2);
        assert_eq!(one, write(3));
    }
}

//! Autoregressive fill-in-the-middle (FIM) code models, from
//! candle-transformers: StarCoder2 (`starcoder2`), DeepSeek-Coder (`llama`),
//! CodeGemma (`gemma`) and Qwen2.5-Coder (`qwen2`).
//!
//! [`load_causal`] reads a Hugging Face model directory (or an alias in the
//! local hub cache): `config.json` picks the family by `model_type`, the
//! weights are the (sharded) safetensors, `tokenizer.json` (or the slow
//! `vocab.json` + `merges.txt`, see [`Tokenizer::from_dir`]) the tokenizer, and
//! the FIM prompt format comes from the tokenizer's special tokens
//! ([`FimFormat::detect`]). The model keeps a KV cache: [`CausalModel::forward`]
//! takes the new tokens and the number already in the cache.
//!
//! Config quirks of real downloads handled here: DeepSeek-Coder's linear
//! RoPE scaling (`{"type": "linear", "factor": 4}`) is expressed in
//! candle's Llama-3 scaling form with every frequency in the "divide by
//! factor" band, which is exactly linear scaling; `rope_parameters`
//! (transformers ≥ 5) stands in for a missing `rope_theta`; Gemma's MLP
//! uses `hidden_activation` (the tanh GELU when unset, whatever `hidden_act`
//! says), as transformers' Gemma does; a Qwen2 `sliding_window` that
//! transformers would not use (`use_sliding_window: false`, or saved as
//! `null`) is widened to the whole context, since candle always applies it.

use std::path::PathBuf;
use std::str::FromStr;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::{gemma, llama, qwen2, starcoder2};
use serde_json::{json, Value};

use super::load::{model_err, model_error, read_json, resolve, weight_files};
use super::tokenizer::Tokenizer;
use super::TextCodec;
use crate::error::{Error, Result};

/// The supported autoregressive families.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArFamily {
    /// StarCoder2 (`model_type: starcoder2`).
    StarCoder2,
    /// LLaMA-architecture models, e.g. DeepSeek-Coder (`model_type: llama`).
    Llama,
    /// Gemma, e.g. CodeGemma (`model_type: gemma`).
    Gemma,
    /// Qwen2, e.g. Qwen2.5-Coder (`model_type: qwen2`).
    Qwen2,
}

/// Every family, in the order messages list them.
pub const AR_FAMILIES: [ArFamily; 4] = [
    ArFamily::StarCoder2,
    ArFamily::Llama,
    ArFamily::Gemma,
    ArFamily::Qwen2,
];

impl ArFamily {
    /// The `model_type` of its `config.json`.
    pub fn model_type(self) -> &'static str {
        match self {
            ArFamily::StarCoder2 => "starcoder2",
            ArFamily::Llama => "llama",
            ArFamily::Gemma => "gemma",
            ArFamily::Qwen2 => "qwen2",
        }
    }

    /// The family of a parsed `config.json`, by `model_type`; `None` for
    /// anything else.
    pub fn of_config(config: &Value) -> Option<ArFamily> {
        let t = config.get("model_type")?.as_str()?;
        AR_FAMILIES
            .into_iter()
            .find(|f| f.model_type().eq_ignore_ascii_case(t))
    }
}

impl FromStr for ArFamily {
    type Err = Error;

    /// A `model_type` name (any case).
    fn from_str(s: &str) -> Result<ArFamily> {
        AR_FAMILIES
            .into_iter()
            .find(|f| f.model_type().eq_ignore_ascii_case(s))
            .ok_or_else(|| model_error(format!("unknown family {s:?} ({})", supported_types())))
    }
}

fn supported_types() -> String {
    let names: Vec<&str> = AR_FAMILIES.iter().map(|f| f.model_type()).collect();
    format!("supported model_type values: {}", names.join(", "))
}

/// Known aliases of published FIM models and their Hugging Face repositories.
pub const AR_ALIASES: &[(&str, &str)] = &[
    ("starcoder2-7b", "bigcode/starcoder2-7b"),
    ("starcoder2-3b", "bigcode/starcoder2-3b"),
    ("codegemma-7b", "google/codegemma-7b"),
    ("codegemma-2b", "google/codegemma-2b"),
    (
        "deepseek-coder-1.3b",
        "deepseek-ai/deepseek-coder-1.3b-base",
    ),
    (
        "deepseek-coder-6.7b",
        "deepseek-ai/deepseek-coder-6.7b-base",
    ),
    ("deepseek-coder-33b", "deepseek-ai/deepseek-coder-33b-base"),
    ("qwen2.5-coder-7b", "Qwen/Qwen2.5-Coder-7B"),
    ("qwen2.5-coder-1.5b", "Qwen/Qwen2.5-Coder-1.5B"),
];

/// The repository an alias of [`AR_ALIASES`] names.
pub fn ar_alias(name: &str) -> Option<&'static str> {
    AR_ALIASES
        .iter()
        .find(|(a, _)| a.eq_ignore_ascii_case(name))
        .map(|(_, r)| *r)
}

/// How a family writes a fill-in-the-middle prompt, in token ids.
///
/// The prompt is `[bos] open prefix hole suffix close` ("PSM" order): the
/// model then writes the middle and ends it with one of `stops`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FimFormat {
    /// Token added first (DeepSeek-Coder and CodeGemma add their BOS).
    pub bos: Option<u32>,
    /// Opens the prefix (`<fim_prefix>`, `<|fim_prefix|>`, `<｜fim▁begin｜>`).
    pub open: u32,
    /// Between prefix and suffix (`<fim_suffix>`, `<｜fim▁hole｜>`).
    pub hole: u32,
    /// After the suffix: the middle follows (`<fim_middle>`, `<｜fim▁end｜>`).
    pub close: u32,
    /// Tokens that end the middle (end of text, file separators).
    pub stops: Vec<u32>,
}

/// The FIM token spellings of the families: (open, hole, close, stops).
const FIM_SPELLINGS: &[(&str, &str, &str, &[&str])] = &[
    (
        "<fim_prefix>",
        "<fim_suffix>",
        "<fim_middle>",
        &["<|endoftext|>", "<file_sep>", "<fim_pad>"],
    ),
    (
        "<|fim_prefix|>",
        "<|fim_suffix|>",
        "<|fim_middle|>",
        &[
            "<|endoftext|>",
            "<|file_sep|>",
            "<|fim_pad|>",
            "<|file_separator|>",
            "<eos>",
        ],
    ),
    (
        "<\u{ff5c}fim\u{2581}begin\u{ff5c}>",
        "<\u{ff5c}fim\u{2581}hole\u{ff5c}>",
        "<\u{ff5c}fim\u{2581}end\u{ff5c}>",
        &["<\u{ff5c}end\u{2581}of\u{2581}sentence\u{ff5c}>", "<|EOT|>"],
    ),
];

impl FimFormat {
    /// The FIM format of a tokenizer: the first spelling whose three tokens
    /// it has; `eos` (from the config) is always a stop; `bos` is added when
    /// the family does (`Llama`, `Gemma`).
    ///
    /// # Errors
    /// [`crate::ErrorKind::Model`] when the tokenizer has no FIM tokens.
    pub fn detect(
        tok: &Tokenizer,
        family: ArFamily,
        bos: Option<u32>,
        eos: Option<u32>,
    ) -> Result<FimFormat> {
        for (open, hole, close, stops) in FIM_SPELLINGS {
            let (Some(o), Some(h), Some(c)) =
                (tok.token_id(open), tok.token_id(hole), tok.token_id(close))
            else {
                continue;
            };
            let mut ids: Vec<u32> = stops.iter().filter_map(|s| tok.token_id(s)).collect();
            ids.extend(eos);
            ids.sort_unstable();
            ids.dedup();
            let bos = match family {
                ArFamily::Llama | ArFamily::Gemma => bos,
                ArFamily::StarCoder2 | ArFamily::Qwen2 => None,
            };
            return Ok(FimFormat {
                bos,
                open: o,
                hole: h,
                close: c,
                stops: ids,
            });
        }
        Err(model_error(
            "the tokenizer has no fill-in-the-middle tokens (<fim_prefix>/<fim_suffix>/<fim_middle>, \
             <|fim_prefix|>/..., or <｜fim▁begin｜>/...): this model cannot infill",
        ))
    }

    /// The prompt for `prefix` and `suffix`.
    ///
    /// # Errors
    /// A tokenizer error.
    pub fn prompt(&self, codec: &dyn TextCodec, prefix: &[u8], suffix: &[u8]) -> Result<Vec<u32>> {
        let mut ids: Vec<u32> = self.bos.into_iter().collect();
        ids.push(self.open);
        ids.extend(codec.encode(prefix)?);
        ids.push(self.hole);
        ids.extend(codec.encode(suffix)?);
        ids.push(self.close);
        Ok(ids)
    }
}

/// The weights of one family.
enum Inner {
    StarCoder2(starcoder2::Model),
    Llama {
        model: Box<llama::Llama>,
        cache: Box<llama::Cache>,
        config: Box<llama::Config>,
        dtype: DType,
    },
    Gemma(gemma::Model),
    Qwen2(qwen2::ModelForCausalLM),
}

/// One of the supported autoregressive models, with its KV cache.
pub struct CausalModel {
    inner: Inner,
    device: Device,
    vocab_size: usize,
    max_positions: usize,
}

fn candle_err(e: candle_core::Error) -> Error {
    model_err("model", e)
}

impl CausalModel {
    /// Runs `tokens` after `offset` tokens already in the KV cache and
    /// returns the logits of the last one, as f32.
    ///
    /// # Errors
    /// A model error (shapes, device, a context longer than the model's).
    pub fn forward(&mut self, tokens: &[u32], offset: usize) -> Result<Vec<f32>> {
        if tokens.is_empty() {
            return Err(model_error("forward of no tokens"));
        }
        if offset + tokens.len() > self.max_positions {
            return Err(model_error(format!(
                "the context would reach {} tokens, past the model's {} positions",
                offset + tokens.len(),
                self.max_positions
            )));
        }
        let input = Tensor::new(tokens, &self.device)
            .and_then(|t| t.unsqueeze(0))
            .map_err(candle_err)?;
        let logits = match &mut self.inner {
            Inner::StarCoder2(m) => m.forward(&input, offset),
            Inner::Llama { model, cache, .. } => model.forward(&input, offset, cache),
            Inner::Gemma(m) => m.forward(&input, offset),
            Inner::Qwen2(m) => m.forward(&input, offset),
        }
        .map_err(candle_err)?;
        logits
            .flatten_all()
            .and_then(|l| l.to_dtype(DType::F32))
            .and_then(|l| l.to_vec1())
            .map_err(candle_err)
    }

    /// Empties the KV cache (the next forward starts at offset 0).
    ///
    /// # Errors
    /// A model error making a fresh Llama cache.
    pub fn clear(&mut self) -> Result<()> {
        match &mut self.inner {
            Inner::StarCoder2(m) => m.clear_kv_cache(),
            Inner::Llama {
                cache,
                config,
                dtype,
                ..
            } => {
                **cache =
                    llama::Cache::new(true, *dtype, config, &self.device).map_err(candle_err)?
            }
            Inner::Gemma(m) => m.clear_kv_cache(),
            Inner::Qwen2(m) => m.clear_kv_cache(),
        }
        Ok(())
    }

    /// The family.
    pub fn family(&self) -> ArFamily {
        match self.inner {
            Inner::StarCoder2(_) => ArFamily::StarCoder2,
            Inner::Llama { .. } => ArFamily::Llama,
            Inner::Gemma(_) => ArFamily::Gemma,
            Inner::Qwen2(_) => ArFamily::Qwen2,
        }
    }

    /// Rows of the output layer (may exceed the tokenizer's tokens).
    pub fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    /// Longest context the model supports (`max_position_embeddings`).
    pub fn max_positions(&self) -> usize {
        self.max_positions
    }

    /// The device the weights live on.
    pub fn device(&self) -> &Device {
        &self.device
    }
}

impl super::CausalLm for CausalModel {
    fn vocab_size(&self) -> usize {
        self.vocab_size
    }

    fn forward(&mut self, tokens: &[u32], offset: usize) -> Result<Vec<f32>> {
        CausalModel::forward(self, tokens, offset)
    }

    fn clear(&mut self) -> Result<()> {
        CausalModel::clear(self)
    }
}

/// A loaded FIM model with everything infilling needs.
pub struct LoadedCausal {
    /// The model.
    pub model: CausalModel,
    /// Its tokenizer.
    pub tokenizer: Tokenizer,
    /// Its FIM prompt format.
    pub fim: FimFormat,
    /// The directory the files were read from.
    pub dir: PathBuf,
}

/// A number field of the config, or an error naming it.
fn usize_field(cfg: &Value, key: &str) -> Result<usize> {
    cfg.get(key)
        .and_then(Value::as_u64)
        .map(|v| v as usize)
        .ok_or_else(|| model_error(format!("config.json: missing or bad {key:?}")))
}

/// Rewrites the config quirks of real downloads into what candle reads
/// (see the module docs).
///
/// # Errors
/// An unsupported `rope_scaling`.
pub fn normalize_config(family: ArFamily, mut cfg: Value) -> Result<Value> {
    let Some(obj) = cfg.as_object_mut() else {
        return Err(model_error("config.json is not a JSON object"));
    };
    if !obj.contains_key("rope_theta") {
        if let Some(t) = obj
            .get("rope_parameters")
            .and_then(|p| p.get("rope_theta"))
            .cloned()
        {
            obj.insert("rope_theta".into(), t);
        } else if family != ArFamily::Llama {
            obj.insert("rope_theta".into(), json!(10000.0));
        }
    }
    match obj.get("rope_scaling").cloned() {
        None | Some(Value::Null) => {}
        Some(s) => {
            let kind = s
                .get("rope_type")
                .or_else(|| s.get("type"))
                .and_then(Value::as_str)
                .unwrap_or("");
            match (family, kind) {
                (ArFamily::Llama, "linear") => {
                    let factor = s.get("factor").and_then(Value::as_f64).ok_or_else(|| {
                        model_error("config.json: linear rope_scaling without a factor")
                    })?;
                    // Every wavelength (≥ 2π) is above original/low = 1, so
                    // candle divides every frequency by the factor.
                    obj.insert(
                        "rope_scaling".into(),
                        json!({"rope_type": "llama3", "factor": factor,
                               "low_freq_factor": 1.0, "high_freq_factor": 2.0,
                               "original_max_position_embeddings": 1}),
                    );
                }
                (ArFamily::Llama, "llama3") => {}
                (_, "default") => {
                    obj.remove("rope_scaling");
                }
                _ => {
                    return Err(model_error(format!(
                        "config.json: unsupported rope_scaling {s} for {} (supported: linear and llama3 for llama)",
                        family.model_type()
                    )))
                }
            }
        }
    }
    if family == ArFamily::Gemma {
        // transformers' Gemma MLP uses `hidden_activation`, the tanh GELU
        // when it is unset, and ignores `hidden_act` (CodeGemma's configs
        // say `"hidden_act": "gelu", "hidden_activation": null`).
        let act = obj
            .get("hidden_activation")
            .filter(|v| !v.is_null())
            .cloned()
            .unwrap_or_else(|| json!("gelu_pytorch_tanh"));
        obj.insert("hidden_activation".into(), act);
        obj.insert("hidden_act".into(), Value::Null);
    }
    if family == ArFamily::Qwen2 {
        // candle's Qwen2 always applies `sliding_window`; transformers only
        // when `use_sliding_window` is true (and saves null otherwise).
        let used = obj.get("use_sliding_window").and_then(Value::as_bool) == Some(true);
        let window = obj.get("sliding_window").and_then(Value::as_u64);
        let max = obj
            .get("max_position_embeddings")
            .and_then(Value::as_u64)
            .unwrap_or(32768);
        let w = match window {
            Some(w) if used => w,
            _ => max.max(window.unwrap_or(0)),
        };
        obj.insert("sliding_window".into(), json!(w));
        if !obj.contains_key("max_window_layers") {
            let l = obj.get("num_hidden_layers").cloned().unwrap_or(json!(0));
            obj.insert("max_window_layers".into(), l);
        }
        for (k, v) in [
            ("use_sliding_window", json!(false)),
            ("tie_word_embeddings", json!(false)),
        ] {
            if obj.get(k).is_none_or(Value::is_null) {
                obj.insert(k.into(), v);
            }
        }
    }
    if family == ArFamily::StarCoder2 && !obj.contains_key("sliding_window") {
        obj.insert("sliding_window".into(), Value::Null);
    }
    Ok(cfg)
}

/// Loads a FIM model directory or alias ([`AR_ALIASES`], shipped names and
/// `ORG/NAME` repositories are looked up offline in the hub cache).
///
/// # Errors
/// [`crate::ErrorKind::Model`]: files missing, an unknown `model_type` (the
/// message lists the supported ones), a bad config, missing or misshapen
/// tensors, a tokenizer larger than the embedding, no FIM tokens.
pub fn load_causal(dir_or_alias: &str, device: &Device, dtype: DType) -> Result<LoadedCausal> {
    let dir = match ar_alias(dir_or_alias) {
        Some(repo) => resolve(repo)?,
        None => resolve(dir_or_alias)?,
    };
    let cfg_path = dir.join("config.json");
    if !cfg_path.is_file() {
        return Err(model_error(format!("{} not found", cfg_path.display())));
    }
    let raw = read_json(&cfg_path)?;
    let family = ArFamily::of_config(&raw).ok_or_else(|| {
        let t = raw
            .get("model_type")
            .map_or("none".to_string(), |v| v.to_string());
        model_error(format!(
            "{}: model_type {t} is not an infilling model cdiff runs ({})",
            cfg_path.display(),
            supported_types()
        ))
    })?;
    let cfg = normalize_config(family, raw)?;
    let tokenizer = Tokenizer::from_dir(&dir)?;
    let vocab_size = usize_field(&cfg, "vocab_size")?;
    if tokenizer.n_tokens() > vocab_size {
        return Err(model_error(format!(
            "tokenizer {} has {} tokens but the model has only {vocab_size} rows",
            tokenizer.origin(),
            tokenizer.n_tokens()
        )));
    }
    let max_positions = usize_field(&cfg, "max_position_embeddings")?;
    let bos = super::load::id_of(cfg.get("bos_token_id"));
    let eos = super::load::id_of(cfg.get("eos_token_id"));
    let fim = FimFormat::detect(&tokenizer, family, bos, eos)?;
    let files = weight_files(&dir)?;
    // SAFETY: the files are memory-mapped read-only; they must not change
    // while the model is loaded (as with every mmap-based loader).
    let vb = unsafe { VarBuilder::from_mmaped_safetensors(&files, dtype, device) }
        .map_err(|e| model_err(&format!("cannot map weights in {}", dir.display()), e))?;
    let bad_cfg =
        |e: serde_json::Error| model_err(&format!("bad config {}", cfg_path.display()), e);
    let bad_weights = |e: candle_core::Error| {
        model_err(
            &format!("weights in {} do not fit the config", dir.display()),
            e,
        )
    };
    let inner = match family {
        ArFamily::StarCoder2 => {
            let c: starcoder2::Config = serde_json::from_value(cfg).map_err(bad_cfg)?;
            Inner::StarCoder2(starcoder2::Model::new(&c, vb).map_err(bad_weights)?)
        }
        ArFamily::Llama => {
            let c: llama::LlamaConfig = serde_json::from_value(cfg).map_err(bad_cfg)?;
            let config = c.into_config(false);
            let model = llama::Llama::load(vb, &config).map_err(bad_weights)?;
            let cache = llama::Cache::new(true, dtype, &config, device).map_err(candle_err)?;
            Inner::Llama {
                model: Box::new(model),
                cache: Box::new(cache),
                config: Box::new(config),
                dtype,
            }
        }
        ArFamily::Gemma => {
            let c: gemma::Config = serde_json::from_value(cfg).map_err(bad_cfg)?;
            Inner::Gemma(gemma::Model::new(false, &c, vb).map_err(bad_weights)?)
        }
        ArFamily::Qwen2 => {
            let c: qwen2::Config = serde_json::from_value(cfg).map_err(bad_cfg)?;
            Inner::Qwen2(qwen2::ModelForCausalLM::new(&c, vb).map_err(bad_weights)?)
        }
    };
    Ok(LoadedCausal {
        model: CausalModel {
            inner,
            device: device.clone(),
            vocab_size,
            max_positions,
        },
        tokenizer,
        fim,
        dir,
    })
}

/// Whether `model` (an alias or a directory) is an autoregressive model of a
/// supported family: an AR alias, or a directory whose `config.json` has an
/// autoregressive `model_type`. Anything unreadable is `false` (the loaders
/// report it).
pub fn is_autoregressive(model: &str) -> bool {
    if ar_alias(model).is_some() {
        return true;
    }
    let Ok(dir) = super::load::resolve(model) else {
        return false;
    };
    std::fs::read_to_string(dir.join("config.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .is_some_and(|v| ArFamily::of_config(&v).is_some())
}

//! LLaDA (GSAI-ML/LLaDA-8B-Instruct): a LLaMA-style transformer with
//! **bidirectional** attention and OLMo-style weight names
//! (`model.transformer.blocks.N.q_proj`, `attn_out`, `ff_proj`, `up_proj`,
//! `ff_out`, `wte`, `ln_f`). Logits are not shifted.
//!
//! The MLP is SwiGLU with `ff_proj` as the gate:
//! `ff_out(silu(ff_proj(x)) * up_proj(x))`, as in LLaDA's `LLaDALlamaBlock`.

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, linear_no_bias, Embedding, Linear, VarBuilder};

use super::torch_ops::{rms_norm, silu, RmsNorm};
use serde::Deserialize;

use super::dream::{
    bidirectional_attention, check_heads, check_ids, check_rope_scaling, normalize_rope,
    rope_tables, valid_non_negative, valid_positive,
};
use super::load::model_err;
use crate::error::{Error, ErrorKind, Result};

/// The fields of LLaDA's `config.json` this implementation uses (unknown
/// fields are ignored; those that select unsupported variants are checked by
/// [`Config::validate`]). RoPE's base is read from `rope_theta` or from
/// transformers ≥ 5's `rope_parameters` (see [`normalize_rope`]).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(remote = "Self")]
pub struct Config {
    /// Width of the residual stream.
    pub d_model: usize,
    /// Number of query heads.
    pub n_heads: usize,
    /// Number of key/value heads (defaults to `n_heads`).
    #[serde(default)]
    pub n_kv_heads: Option<usize>,
    /// Number of blocks.
    pub n_layers: usize,
    /// Width of the SwiGLU MLP (defaults to `mlp_ratio * d_model`).
    #[serde(default)]
    pub mlp_hidden_size: Option<usize>,
    /// MLP width ratio, used when `mlp_hidden_size` is absent.
    #[serde(default = "default_ratio")]
    pub mlp_ratio: usize,
    /// Tokenizer vocabulary size.
    pub vocab_size: usize,
    /// Embedding rows (defaults to `vocab_size`); the logits have this width.
    #[serde(default)]
    pub embedding_size: Option<usize>,
    /// RoPE base.
    #[serde(default = "default_theta")]
    pub rope_theta: f64,
    /// RMSNorm epsilon.
    #[serde(default = "default_eps")]
    pub rms_norm_eps: f64,
    /// Whether the output projection shares `wte`.
    #[serde(default)]
    pub weight_tying: bool,
    /// Block type (only `llama`).
    #[serde(default = "default_block")]
    pub block_type: String,
    /// MLP activation (only `silu`).
    #[serde(default = "default_act")]
    pub activation_type: String,
    /// Norm type (only `rms`).
    #[serde(default = "default_norm")]
    pub layer_norm_type: String,
    /// Biases in linear layers (only `false`).
    #[serde(default)]
    pub include_bias: bool,
    /// Biases in q/k/v (only `false`).
    #[serde(default)]
    pub include_qkv_bias: bool,
    /// ALiBi (only `false`).
    #[serde(default)]
    pub alibi: bool,
    /// RoPE (only `true`).
    #[serde(default = "default_true")]
    pub rope: bool,
    /// Q/K layer norm (only `false`).
    #[serde(default)]
    pub attention_layer_norm: bool,
    /// Norm on the input embedding (only `false`).
    #[serde(default)]
    pub input_emb_norm: bool,
    /// Logit scaling (only `false`).
    #[serde(default)]
    pub scale_logits: bool,
    /// RoPE scaling (only absent, `null` or type `default`).
    #[serde(default)]
    pub rope_scaling: Option<serde_json::Value>,
    /// Apply RoPE in f32 whatever the weights' dtype (LLaDA's
    /// `rope_full_precision`, true in its configs and by default).
    #[serde(default = "default_true")]
    pub rope_full_precision: bool,
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Config, D::Error> {
        use serde::de::Error as _;
        let mut v = serde_json::Value::deserialize(d)?;
        normalize_rope(&mut v).map_err(|e| D::Error::custom(e.message()))?;
        Config::deserialize(v).map_err(D::Error::custom)
    }
}

fn default_ratio() -> usize {
    4
}
fn default_theta() -> f64 {
    10000.0
}
fn default_eps() -> f64 {
    1e-5
}
fn default_block() -> String {
    "llama".to_string()
}
fn default_act() -> String {
    "silu".to_string()
}
fn default_norm() -> String {
    "rms".to_string()
}
fn default_true() -> bool {
    true
}

impl Config {
    /// Number of key/value heads.
    pub fn kv_heads(&self) -> usize {
        self.n_kv_heads.unwrap_or(self.n_heads)
    }

    /// Width of the MLP.
    pub fn mlp_width(&self) -> usize {
        self.mlp_hidden_size
            .unwrap_or(self.mlp_ratio.saturating_mul(self.d_model))
    }

    /// Embedding rows, i.e. the width of the logits.
    pub fn embedding_rows(&self) -> usize {
        self.embedding_size.unwrap_or(self.vocab_size)
    }

    /// Checks that the configuration describes the LLaMA-style variant this
    /// implementation runs.
    ///
    /// # Errors
    /// [`ErrorKind::Model`] naming the unsupported field.
    pub fn validate(&self) -> Result<()> {
        check_heads(self.d_model, self.n_heads, self.kv_heads())?;
        let unsupported = |what: &str| {
            Err(Error::new(
                ErrorKind::Model,
                format!("config: unsupported LLaDA variant: {what}"),
            ))
        };
        if self.block_type != "llama" {
            return unsupported(&format!(
                "block_type {:?} (only \"llama\")",
                self.block_type
            ));
        }
        if self.activation_type != "silu" {
            return unsupported(&format!(
                "activation_type {:?} (only \"silu\")",
                self.activation_type
            ));
        }
        if self.layer_norm_type != "rms" {
            return unsupported(&format!(
                "layer_norm_type {:?} (only \"rms\")",
                self.layer_norm_type
            ));
        }
        if self.include_bias || self.include_qkv_bias {
            return unsupported("linear biases");
        }
        if self.alibi || !self.rope {
            return unsupported("position encoding other than RoPE");
        }
        if self.attention_layer_norm || self.input_emb_norm || self.scale_logits {
            return unsupported("attention_layer_norm / input_emb_norm / scale_logits");
        }
        if self.n_layers == 0 || self.mlp_width() == 0 || self.embedding_rows() == 0 {
            return unsupported("zero layers, MLP width or embedding rows");
        }
        if self.embedding_rows() < self.vocab_size {
            return unsupported("embedding_size smaller than vocab_size");
        }
        if !valid_positive(self.rope_theta) || !valid_non_negative(self.rms_norm_eps) {
            return unsupported("rope_theta must be positive and rms_norm_eps non-negative");
        }
        check_rope_scaling(self.rope_scaling.as_ref(), "LLaDA")
    }
}

struct Block {
    attn_norm: RmsNorm,
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    attn_out: Linear,
    ff_norm: RmsNorm,
    ff_proj: Linear,
    up_proj: Linear,
    ff_out: Linear,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
    /// RoPE in f32 (`rope_full_precision`); the tables are then f32.
    rope_f32: bool,
}

impl Block {
    fn new(cfg: &Config, vb: VarBuilder) -> candle_core::Result<Block> {
        let d = cfg.d_model;
        let head_dim = d / cfg.n_heads;
        let kv = cfg.kv_heads() * head_dim;
        let f = cfg.mlp_width();
        Ok(Block {
            attn_norm: rms_norm(d, cfg.rms_norm_eps, vb.pp("attn_norm"))?,
            q_proj: linear_no_bias(d, d, vb.pp("q_proj"))?,
            k_proj: linear_no_bias(d, kv, vb.pp("k_proj"))?,
            v_proj: linear_no_bias(d, kv, vb.pp("v_proj"))?,
            attn_out: linear_no_bias(d, d, vb.pp("attn_out"))?,
            ff_norm: rms_norm(d, cfg.rms_norm_eps, vb.pp("ff_norm"))?,
            ff_proj: linear_no_bias(d, f, vb.pp("ff_proj"))?,
            up_proj: linear_no_bias(d, f, vb.pp("up_proj"))?,
            ff_out: linear_no_bias(f, d, vb.pp("ff_out"))?,
            heads: cfg.n_heads,
            kv_heads: cfg.kv_heads(),
            head_dim,
            rope_f32: cfg.rope_full_precision,
        })
    }

    /// RoPE on `x` (`cos`/`sin` in f32 when `rope_f32`, then `x` is rotated
    /// in f32 and cast back, as LLaDA's `rope_full_precision`).
    fn rope(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        if self.rope_f32 && x.dtype() != DType::F32 {
            candle_nn::rotary_emb::rope(&x.to_dtype(DType::F32)?, cos, sin)?.to_dtype(x.dtype())
        } else {
            candle_nn::rotary_emb::rope(x, cos, sin)
        }
    }

    fn forward(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        let (b, n, _) = x.dims3()?;
        let h = self.attn_norm.forward(x)?;
        let split = |t: Tensor, heads: usize| -> candle_core::Result<Tensor> {
            t.reshape((b, n, heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.q_proj.forward(&h)?, self.heads)?;
        let k = split(self.k_proj.forward(&h)?, self.kv_heads)?;
        let v = split(self.v_proj.forward(&h)?, self.kv_heads)?;
        let q = self.rope(&q, cos, sin)?;
        let k = self.rope(&k, cos, sin)?;
        let a = self
            .attn_out
            .forward(&bidirectional_attention(&q, &k, &v)?)?;
        let x = (x + a)?;
        let h = self.ff_norm.forward(&x)?;
        let gate = silu(&self.ff_proj.forward(&h)?)?;
        let m = self.ff_out.forward(&(gate * self.up_proj.forward(&h)?)?)?;
        x + m
    }

    /// [`Block::forward`] with differentiable operations only (RMSNorm,
    /// RoPE and softmax written with basic tensor ops), for training.
    fn forward_diff(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        let (b, n, _) = x.dims3()?;
        let h = self.attn_norm.forward_diff(x)?;
        let split = |t: Tensor, heads: usize| -> candle_core::Result<Tensor> {
            t.reshape((b, n, heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(self.q_proj.forward(&h)?, self.heads)?;
        let k = split(self.k_proj.forward(&h)?, self.kv_heads)?;
        let v = split(self.v_proj.forward(&h)?, self.kv_heads)?;
        let q = candle_nn::rotary_emb::rope_slow(&q, cos, sin)?;
        let k = candle_nn::rotary_emb::rope_slow(&k, cos, sin)?;
        let rep = self.heads / self.kv_heads;
        let expand = |t: &Tensor| -> candle_core::Result<Tensor> {
            if rep == 1 {
                Ok(t.clone())
            } else {
                t.unsqueeze(2)?
                    .expand((b, self.kv_heads, rep, n, self.head_dim))?
                    .reshape((b, self.heads, n, self.head_dim))
            }
        };
        let k = expand(&k)?.contiguous()?;
        let v = expand(&v)?.contiguous()?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let scores = (q.matmul(&k.t()?)? * scale)?;
        let probs = candle_nn::ops::softmax(&scores, candle_core::D::Minus1)?;
        let ctx = probs
            .matmul(&v)?
            .transpose(1, 2)?
            .reshape((b, n, self.heads * self.head_dim))?;
        let x = (x + self.attn_out.forward(&ctx)?)?;
        let h = self.ff_norm.forward_diff(&x)?;
        let gate = silu(&self.ff_proj.forward(&h)?)?;
        let m = self.ff_out.forward(&(gate * self.up_proj.forward(&h)?)?)?;
        x + m
    }
}

/// A LLaDA model: LLaMA-style blocks, bidirectional attention, unshifted logits.
pub struct Model {
    wte: Embedding,
    blocks: Vec<Block>,
    ln_f: RmsNorm,
    ff_out: Linear,
    cfg: Config,
    dtype: DType,
    device: Device,
}

impl Model {
    /// Builds the model from weights named as in the Hugging Face checkpoint
    /// (`model.transformer.wte`, `model.transformer.blocks.N...`,
    /// `model.transformer.ln_f`, `model.transformer.ff_out`).
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: invalid config, missing tensor or wrong shape.
    pub fn new(cfg: &Config, vb: VarBuilder) -> Result<Model> {
        cfg.validate()?;
        Model::build(cfg, vb).map_err(|e| model_err("loading LLaDA weights", e))
    }

    fn build(cfg: &Config, vb: VarBuilder) -> candle_core::Result<Model> {
        let t = vb.pp("model").pp("transformer");
        let rows = cfg.embedding_rows();
        let wte = embedding(rows, cfg.d_model, t.pp("wte"))?;
        let blocks = (0..cfg.n_layers)
            .map(|i| Block::new(cfg, t.pp("blocks").pp(i)))
            .collect::<candle_core::Result<Vec<_>>>()?;
        let ln_f = rms_norm(cfg.d_model, cfg.rms_norm_eps, t.pp("ln_f"))?;
        let ff_out = if cfg.weight_tying {
            Linear::new(wte.embeddings().clone(), None)
        } else {
            linear_no_bias(cfg.d_model, rows, t.pp("ff_out"))?
        };
        Ok(Model {
            wte,
            blocks,
            ln_f,
            ff_out,
            cfg: cfg.clone(),
            dtype: vb.dtype(),
            device: vb.device().clone(),
        })
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Logits `[n, embedding_rows]` f32; row `i` is the distribution of token `i`.
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: a token id past the embedding, or a tensor error.
    pub fn logits(&self, tokens: &[u32]) -> Result<Tensor> {
        self.logits_native(tokens)?
            .to_dtype(DType::F32)
            .map_err(|e| model_err("LLaDA forward", e))
    }

    /// [`Model::logits`] in the model's dtype (zero rows in f32).
    fn logits_native(&self, tokens: &[u32]) -> Result<Tensor> {
        let rows = self.cfg.embedding_rows();
        check_ids(tokens, rows)?;
        if tokens.is_empty() {
            return Tensor::zeros((0, rows), DType::F32, &self.device)
                .map_err(|e| model_err("LLaDA forward", e));
        }
        self.run(tokens).map_err(|e| model_err("LLaDA forward", e))
    }

    /// Logits `[b, n, embedding_rows]` for a `[b, n]` u32 batch of canvases,
    /// computed with differentiable operations only (for training; the same
    /// function as [`Model::logits`] up to float rounding).
    ///
    /// # Errors
    /// A tensor error (shapes, ids past the embedding).
    pub fn forward_train(&self, ids: &Tensor) -> candle_core::Result<Tensor> {
        let (_, n) = ids.dims2()?;
        let head_dim = self.cfg.d_model / self.cfg.n_heads;
        let (cos, sin) = rope_tables(n, head_dim, self.cfg.rope_theta, self.dtype, &self.device)?;
        let mut x = self.wte.forward(ids)?;
        for block in &self.blocks {
            x = block.forward_diff(&x, &cos, &sin)?;
        }
        let x = self.ln_f.forward_diff(&x)?;
        self.ff_out.forward(&x)
    }

    /// The logits in the model's dtype.
    fn run(&self, tokens: &[u32]) -> candle_core::Result<Tensor> {
        let n = tokens.len();
        let ids = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let head_dim = self.cfg.d_model / self.cfg.n_heads;
        let table_dtype = if self.cfg.rope_full_precision {
            DType::F32
        } else {
            self.dtype
        };
        let (cos, sin) = rope_tables(n, head_dim, self.cfg.rope_theta, table_dtype, &self.device)?;
        let mut x = self.wte.forward(&ids)?;
        for block in &self.blocks {
            x = block.forward(&x, &cos, &sin)?;
        }
        let x = self.ln_f.forward(&x)?;
        self.ff_out.forward(&x)?.squeeze(0)
    }
}

impl super::Denoiser for Model {
    fn vocab_size(&self) -> usize {
        self.cfg.embedding_rows()
    }

    fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.logits(tokens)
    }

    fn forward_native(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.logits_native(tokens)
    }
}

//! Dream (Dream-org/Dream-v0-Instruct-7B, Dream-Coder, DiffuCoder): a Qwen2
//! transformer body with **bidirectional** attention whose logits are shifted
//! by one position (row `i` is predicted from hidden state `i - 1`).
//!
//! Weight names are those of the Hugging Face checkpoints
//! (`model.layers.N.self_attn.q_proj`, `lm_head`, ...).

use candle_core::{DType, Device, Module, Tensor};
use candle_nn::{embedding, linear, linear_no_bias, Embedding, Linear, VarBuilder};
use serde::Deserialize;

use super::load::model_err;
use super::torch_ops::{linear_biased, rms_norm, silu, RmsNorm};
use crate::error::{Error, ErrorKind, Result};

/// The fields of Dream's Hugging Face `config.json` this implementation uses
/// (unknown fields are ignored).
///
/// RoPE's base is read from `rope_theta` or, as transformers ≥ 5 writes
/// configs, from `rope_parameters: {"rope_theta": ..., "rope_type":
/// "default"}` (see [`normalize_rope`]).
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(remote = "Self")]
pub struct Config {
    /// Embedding rows (and logits width).
    pub vocab_size: usize,
    /// Width of the residual stream.
    pub hidden_size: usize,
    /// Width of the SwiGLU MLP.
    pub intermediate_size: usize,
    /// Number of decoder layers.
    pub num_hidden_layers: usize,
    /// Number of query heads.
    pub num_attention_heads: usize,
    /// Number of key/value heads (grouped-query attention).
    pub num_key_value_heads: usize,
    /// RoPE base.
    pub rope_theta: f64,
    /// RMSNorm epsilon.
    pub rms_norm_eps: f64,
    /// Whether `lm_head` shares the embedding matrix.
    #[serde(default)]
    pub tie_word_embeddings: bool,
    /// Activation of the MLP (only `silu` is supported).
    #[serde(default = "default_act")]
    pub hidden_act: String,
    /// RoPE scaling (only `null` or type `default` is supported).
    #[serde(default)]
    pub rope_scaling: Option<serde_json::Value>,
}

impl<'de> Deserialize<'de> for Config {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Config, D::Error> {
        use serde::de::Error as _;
        let mut v = serde_json::Value::deserialize(d)?;
        normalize_rope(&mut v).map_err(|e| D::Error::custom(e.message()))?;
        Config::deserialize(v).map_err(D::Error::custom)
    }
}

/// Reads transformers ≥ 5's `rope_parameters` into the older fields: its
/// `rope_theta` becomes the config's `rope_theta` (both present must agree),
/// and a `rope_type` other than `default` is refused (cdiff runs no RoPE
/// scaling). A config without `rope_parameters` is left as it is.
///
/// # Errors
/// [`ErrorKind::Model`] naming the field.
pub fn normalize_rope(cfg: &mut serde_json::Value) -> Result<()> {
    let Some(params) = cfg.get("rope_parameters").filter(|p| !p.is_null()) else {
        return Ok(());
    };
    let Some(params) = params.as_object() else {
        return Err(Error::new(
            ErrorKind::Model,
            format!("config: rope_parameters must be an object, found {params}"),
        ));
    };
    if let Some(t) = params.get("rope_type").or_else(|| params.get("type")) {
        if t.as_str() != Some("default") {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "config: rope_parameters.rope_type {t} is not supported (cdiff runs RoPE \
                     without scaling: only \"default\")"
                ),
            ));
        }
    }
    let Some(theta) = params.get("rope_theta").filter(|t| !t.is_null()).cloned() else {
        return Ok(());
    };
    if !theta.is_number() {
        return Err(Error::new(
            ErrorKind::Model,
            format!("config: rope_parameters.rope_theta must be a number, found {theta}"),
        ));
    }
    match cfg.get("rope_theta").filter(|t| !t.is_null()) {
        Some(old) if old.as_f64() != theta.as_f64() => Err(Error::new(
            ErrorKind::Model,
            format!("config: rope_theta {old} and rope_parameters.rope_theta {theta} disagree"),
        )),
        _ => {
            if let Some(o) = cfg.as_object_mut() {
                o.insert("rope_theta".to_string(), theta);
            }
            Ok(())
        }
    }
}

/// Checks a config's `rope_scaling`: absent, `null`, or an object whose
/// `rope_type` (or `type`) is `default` (no scaling).
///
/// # Errors
/// [`ErrorKind::Model`] naming the scaling type.
pub(crate) fn check_rope_scaling(scaling: Option<&serde_json::Value>, model: &str) -> Result<()> {
    let Some(v) = scaling.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let kind = v.get("rope_type").or_else(|| v.get("type"));
    if kind.and_then(|k| k.as_str()) == Some("default") {
        return Ok(());
    }
    let what = match kind {
        Some(k) => format!("type {k}"),
        None => v.to_string(),
    };
    Err(Error::new(
        ErrorKind::Model,
        format!(
            "config: rope_scaling {what} is not supported for {model} (cdiff runs RoPE without \
             scaling: only null or \"default\")"
        ),
    ))
}

fn default_act() -> String {
    "silu".to_string()
}

impl Config {
    /// Checks that the configuration describes a model this implementation
    /// can run (positive sizes, heads dividing the width, SiLU, no RoPE scaling).
    ///
    /// # Errors
    /// [`ErrorKind::Model`] naming the offending field.
    pub fn validate(&self) -> Result<()> {
        check_heads(
            self.hidden_size,
            self.num_attention_heads,
            self.num_key_value_heads,
        )?;
        if self.vocab_size == 0 || self.intermediate_size == 0 || self.num_hidden_layers == 0 {
            return Err(Error::new(
                ErrorKind::Model,
                "config: vocab_size, intermediate_size and num_hidden_layers must be positive",
            ));
        }
        if self.hidden_act != "silu" {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "config: unsupported hidden_act {:?} (only \"silu\")",
                    self.hidden_act
                ),
            ));
        }
        check_rope_scaling(self.rope_scaling.as_ref(), "Dream")?;
        if !valid_positive(self.rope_theta) || !valid_non_negative(self.rms_norm_eps) {
            return Err(Error::new(
                ErrorKind::Model,
                "config: rope_theta must be positive and rms_norm_eps non-negative",
            ));
        }
        Ok(())
    }
}

/// `x > 0` and finite.
pub(crate) fn valid_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// `x >= 0` and finite.
pub(crate) fn valid_non_negative(x: f64) -> bool {
    x.is_finite() && x >= 0.0
}

/// Checks a head layout: positive, `heads` divides `hidden` into an even head
/// width, `kv_heads` divides `heads`.
pub(crate) fn check_heads(hidden: usize, heads: usize, kv_heads: usize) -> Result<()> {
    let ok = hidden > 0
        && heads > 0
        && kv_heads > 0
        && hidden.is_multiple_of(heads)
        && (hidden / heads).is_multiple_of(2)
        && heads.is_multiple_of(kv_heads);
    if ok {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::Model,
            format!(
                "config: bad head layout (hidden {hidden}, heads {heads}, kv heads {kv_heads}): \
                 heads must divide hidden into an even width and kv heads must divide heads"
            ),
        ))
    }
}

/// RoPE tables `(cos, sin)`, each `[n, head_dim / 2]` in `dtype`, for
/// positions `0..n` (the "rotate half" convention of Qwen2, LLaMA and OLMo),
/// computed in f32.
pub(crate) fn rope_tables(
    n: usize,
    head_dim: usize,
    theta: f64,
    dtype: DType,
    device: &Device,
) -> candle_core::Result<(Tensor, Tensor)> {
    let half = head_dim / 2;
    let inv: Vec<f32> = (0..half)
        .map(|i| (1.0 / theta.powf((2 * i) as f64 / head_dim as f64)) as f32)
        .collect();
    let inv = Tensor::from_vec(inv, (1, half), device)?;
    let pos: Vec<f32> = (0..n).map(|p| p as f32).collect();
    let pos = Tensor::from_vec(pos, (n, 1), device)?;
    let freqs = pos.matmul(&inv)?;
    Ok((freqs.cos()?.to_dtype(dtype)?, freqs.sin()?.to_dtype(dtype)?))
}

/// Full (non-causal) scaled dot-product attention over `[1, heads, n, d]`
/// queries and `[1, kv_heads, n, d]` keys/values, with grouped-query sharing
/// (kv head `j` serves query heads `j * r .. (j + 1) * r`). Scores, their
/// maximum, `exp(score − max)` and its sum run in f32 whatever the model's
/// dtype; in bf16/f16 the exponentials are rounded to that dtype before the
/// weighted sum of values (accumulated in f32, divided by the sum, then
/// rounded), as PyTorch's fused attention kernels (CPU flash attention,
/// flash-attention 2) do: with [`super::torch_ops`] this makes cdiff's bf16
/// logits those of the authors' code (`tests/dlm_golden.rs`). Returns
/// `[1, n, heads * d]`.
pub(crate) fn bidirectional_attention(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
) -> candle_core::Result<Tensor> {
    let (b, heads, n, d) = q.dims4()?;
    let kv_heads = k.dim(1)?;
    let rep = heads / kv_heads;
    let expand = |x: &Tensor| -> candle_core::Result<Tensor> {
        if rep == 1 {
            Ok(x.clone())
        } else {
            x.unsqueeze(2)?
                .expand((b, kv_heads, rep, n, d))?
                .reshape((b, heads, n, d))
        }
    };
    let dtype = q.dtype();
    let f32 = |x: &Tensor| x.to_dtype(DType::F32);
    let k = f32(&expand(k)?)?.contiguous()?;
    let v = f32(&expand(v)?)?.contiguous()?;
    let q = f32(q)?;
    let scale = 1.0 / (d as f64).sqrt();
    let scores = (q.matmul(&k.t()?)? * scale)?;
    if dtype == DType::F32 {
        return candle_nn::ops::softmax_last_dim(&scores)?
            .matmul(&v)?
            .transpose(1, 2)?
            .reshape((b, n, heads * d));
    }
    let max = scores.max_keepdim(candle_core::D::Minus1)?;
    let e = scores.broadcast_sub(&max)?.exp()?;
    let sum = e.sum_keepdim(candle_core::D::Minus1)?;
    let e = e.to_dtype(dtype)?.to_dtype(DType::F32)?;
    e.matmul(&v)?
        .broadcast_div(&sum)?
        .to_dtype(dtype)?
        .transpose(1, 2)?
        .reshape((b, n, heads * d))
}

struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    heads: usize,
    kv_heads: usize,
    head_dim: usize,
}

impl Attention {
    fn new(cfg: &Config, vb: VarBuilder) -> candle_core::Result<Attention> {
        let h = cfg.hidden_size;
        let head_dim = h / cfg.num_attention_heads;
        let kv = cfg.num_key_value_heads * head_dim;
        Ok(Attention {
            q_proj: linear(h, h, vb.pp("q_proj"))?,
            k_proj: linear(h, kv, vb.pp("k_proj"))?,
            v_proj: linear(h, kv, vb.pp("v_proj"))?,
            o_proj: linear_no_bias(h, h, vb.pp("o_proj"))?,
            heads: cfg.num_attention_heads,
            kv_heads: cfg.num_key_value_heads,
            head_dim,
        })
    }

    fn forward(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        let (b, n, _) = x.dims3()?;
        let split = |t: Tensor, heads: usize| -> candle_core::Result<Tensor> {
            t.reshape((b, n, heads, self.head_dim))?
                .transpose(1, 2)?
                .contiguous()
        };
        let q = split(linear_biased(&self.q_proj, x)?, self.heads)?;
        let k = split(linear_biased(&self.k_proj, x)?, self.kv_heads)?;
        let v = split(linear_biased(&self.v_proj, x)?, self.kv_heads)?;
        let q = candle_nn::rotary_emb::rope(&q, cos, sin)?;
        let k = candle_nn::rotary_emb::rope(&k, cos, sin)?;
        let y = bidirectional_attention(&q, &k, &v)?;
        self.o_proj.forward(&y)
    }
}

struct Mlp {
    gate_proj: Linear,
    up_proj: Linear,
    down_proj: Linear,
}

impl Mlp {
    fn new(cfg: &Config, vb: VarBuilder) -> candle_core::Result<Mlp> {
        let (h, i) = (cfg.hidden_size, cfg.intermediate_size);
        Ok(Mlp {
            gate_proj: linear_no_bias(h, i, vb.pp("gate_proj"))?,
            up_proj: linear_no_bias(h, i, vb.pp("up_proj"))?,
            down_proj: linear_no_bias(i, h, vb.pp("down_proj"))?,
        })
    }

    fn forward(&self, x: &Tensor) -> candle_core::Result<Tensor> {
        let gate = silu(&self.gate_proj.forward(x)?)?;
        self.down_proj.forward(&(gate * self.up_proj.forward(x)?)?)
    }
}

struct DecoderLayer {
    input_layernorm: RmsNorm,
    self_attn: Attention,
    post_attention_layernorm: RmsNorm,
    mlp: Mlp,
}

impl DecoderLayer {
    fn new(cfg: &Config, vb: VarBuilder) -> candle_core::Result<DecoderLayer> {
        let (h, eps) = (cfg.hidden_size, cfg.rms_norm_eps);
        Ok(DecoderLayer {
            input_layernorm: rms_norm(h, eps, vb.pp("input_layernorm"))?,
            self_attn: Attention::new(cfg, vb.pp("self_attn"))?,
            post_attention_layernorm: rms_norm(h, eps, vb.pp("post_attention_layernorm"))?,
            mlp: Mlp::new(cfg, vb.pp("mlp"))?,
        })
    }

    fn forward(&self, x: &Tensor, cos: &Tensor, sin: &Tensor) -> candle_core::Result<Tensor> {
        let a = self
            .self_attn
            .forward(&self.input_layernorm.forward(x)?, cos, sin)?;
        let x = (x + a)?;
        let m = self
            .mlp
            .forward(&self.post_attention_layernorm.forward(&x)?)?;
        x + m
    }
}

/// A Dream model: Qwen2 body, bidirectional attention, shifted logits.
pub struct Model {
    embed_tokens: Embedding,
    layers: Vec<DecoderLayer>,
    norm: RmsNorm,
    lm_head: Linear,
    cfg: Config,
    dtype: DType,
    device: Device,
}

impl Model {
    /// Builds the model from weights named as in the Hugging Face checkpoint
    /// (`model.embed_tokens`, `model.layers.N...`, `model.norm`, `lm_head`).
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: invalid config, missing tensor or wrong shape.
    pub fn new(cfg: &Config, vb: VarBuilder) -> Result<Model> {
        cfg.validate()?;
        Model::build(cfg, vb).map_err(|e| model_err("loading Dream weights", e))
    }

    fn build(cfg: &Config, vb: VarBuilder) -> candle_core::Result<Model> {
        let m = vb.pp("model");
        let embed_tokens = embedding(cfg.vocab_size, cfg.hidden_size, m.pp("embed_tokens"))?;
        let layers = (0..cfg.num_hidden_layers)
            .map(|i| DecoderLayer::new(cfg, m.pp("layers").pp(i)))
            .collect::<candle_core::Result<Vec<_>>>()?;
        let norm = rms_norm(cfg.hidden_size, cfg.rms_norm_eps, m.pp("norm"))?;
        let lm_head = if cfg.tie_word_embeddings {
            Linear::new(embed_tokens.embeddings().clone(), None)
        } else {
            linear_no_bias(cfg.hidden_size, cfg.vocab_size, vb.pp("lm_head"))?
        };
        Ok(Model {
            embed_tokens,
            layers,
            norm,
            lm_head,
            cfg: cfg.clone(),
            dtype: vb.dtype(),
            device: vb.device().clone(),
        })
    }

    /// The configuration the model was built from.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Unshifted logits, `[n, vocab_size]` f32: row `i` comes from hidden
    /// state `i` (so it predicts token `i + 1`). [`Model::logits`] is this
    /// shifted by one row.
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: a token id past the embedding, or a tensor error.
    pub fn raw_logits(&self, tokens: &[u32]) -> Result<Tensor> {
        to_f32(self.raw_native(tokens)?)
    }

    /// [`Model::raw_logits`] in the model's dtype (zero rows in f32).
    fn raw_native(&self, tokens: &[u32]) -> Result<Tensor> {
        check_ids(tokens, self.cfg.vocab_size)?;
        if tokens.is_empty() {
            return Tensor::zeros((0, self.cfg.vocab_size), DType::F32, &self.device)
                .map_err(|e| model_err("Dream forward", e));
        }
        self.raw(tokens).map_err(|e| model_err("Dream forward", e))
    }

    /// The unshifted logits in the model's dtype.
    fn raw(&self, tokens: &[u32]) -> candle_core::Result<Tensor> {
        let n = tokens.len();
        let ids = Tensor::new(tokens, &self.device)?.unsqueeze(0)?;
        let head_dim = self.cfg.hidden_size / self.cfg.num_attention_heads;
        let (cos, sin) = rope_tables(n, head_dim, self.cfg.rope_theta, self.dtype, &self.device)?;
        let mut x = self.embed_tokens.forward(&ids)?;
        for layer in &self.layers {
            x = layer.forward(&x, &cos, &sin)?;
        }
        let x = self.norm.forward(&x)?;
        self.lm_head.forward(&x)?.squeeze(0)
    }

    /// Dream's logits, `[n, vocab_size]` f32: row `i` is the distribution of
    /// token `i`, i.e. row `i - 1` of [`Model::raw_logits`] (row 0 repeats raw
    /// row 0, as `cat(logits[:1], logits[:-1])` in the reference code).
    ///
    /// # Errors
    /// As [`Model::raw_logits`].
    pub fn logits(&self, tokens: &[u32]) -> Result<Tensor> {
        to_f32(self.logits_native(tokens)?)
    }

    /// [`Model::logits`] in the model's dtype (the shift is a copy).
    fn logits_native(&self, tokens: &[u32]) -> Result<Tensor> {
        let raw = self.raw_native(tokens)?;
        let n = tokens.len();
        if n <= 1 {
            return Ok(raw);
        }
        shift_rows(&raw, n).map_err(|e| model_err("Dream logit shift", e))
    }
}

/// Logits turned to f32 (exact from bf16/f16).
fn to_f32(t: Tensor) -> Result<Tensor> {
    t.to_dtype(DType::F32)
        .map_err(|e| model_err("Dream forward", e))
}

/// `cat(raw[:1], raw[:-1])` along the rows, for `n >= 2` rows.
fn shift_rows(raw: &Tensor, n: usize) -> candle_core::Result<Tensor> {
    Tensor::cat(&[raw.narrow(0, 0, 1)?, raw.narrow(0, 0, n - 1)?], 0)
}

/// Errors unless every id is below `vocab`.
pub(crate) fn check_ids(tokens: &[u32], vocab: usize) -> Result<()> {
    match tokens.iter().find(|&&t| t as usize >= vocab) {
        Some(t) => Err(Error::new(
            ErrorKind::Model,
            format!("token id {t} is past the embedding ({vocab} rows)"),
        )),
        None => Ok(()),
    }
}

impl super::Denoiser for Model {
    fn vocab_size(&self) -> usize {
        self.cfg.vocab_size
    }

    fn forward(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.logits(tokens)
    }

    fn forward_native(&mut self, tokens: &[u32]) -> Result<Tensor> {
        self.logits_native(tokens)
    }
}

//! Masked-diffusion training of small LLaDA-architecture models on CPU, with
//! a byte-level tokenizer (one token per byte), as used for cdiff's own
//! `models/smiles-tiny`.
//!
//! The objective is LLaDA's: per sequence, `t ~ U(ε, 1]`; every token is
//! replaced by the mask id with probability `t`; the loss is the
//! cross-entropy of the masked positions weighted by `1 / t`, summed and
//! divided by the number of tokens of the batch. A sequence is the text's
//! bytes, then EOS, padded with EOS to the context length, so the model learns
//! to end its answers.
//!
//! Optimizer: AdamW (Loshchilov & Hutter, decoupled weight decay, bias
//! correction as in Adam), linear warmup then cosine decay to 10 % of the
//! peak learning rate, gradients clipped to a global norm. It is written here
//! rather than taken from candle-nn because its moments must be saved: a
//! checkpoint holds them in `optimizer.safetensors`, so a resumed run
//! continues exactly where the interrupted one stopped.
//!
//! Determinism: the initial weights, the data order (a shuffle per epoch) and
//! the masks depend only on the seed and the step number (all drawn with
//! [`SplitMix64`]), and parameters are visited in name order, so a run is
//! reproducible, and a run stopped at a checkpoint and resumed gives the same
//! weights as an uninterrupted one.

use std::path::{Path, PathBuf};
use std::time::Instant;

use candle_core::backprop::GradStore;
use candle_core::{DType, Device, Tensor, Var, D};
use candle_nn::{VarBuilder, VarMap};
use serde_json::{json, Value};

use super::init::{byte_level_tokenizer_json, llada_config, tensor_shapes, LladaShape};
use super::llada;
use super::load::{model_err, Arch};
use super::tokenizer::PLAIN_TEMPLATE;
use crate::error::{Error, ErrorKind, Result};
use crate::rng::SplitMix64;

/// Special tokens of trained models, from id 256 on (LLaDA's names).
pub const SPECIALS: &[&str] = &[
    "<|startoftext|>",
    "<|endoftext|>",
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eot_id|>",
    "<|mdm_mask|>",
];
/// End-of-sequence (and padding) id of trained models.
pub const EOS: u32 = 257;
/// Mask id of trained models.
pub const MASK: u32 = 261;
/// Embedding rows of trained models (256 bytes + specials, rounded up).
pub const ROWS: usize = 320;

/// Smallest masking ratio drawn.
const EPS: f64 = 1e-3;

/// Hyperparameters of a training run.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Total optimizer steps (a resumed run stops at the same total).
    pub steps: usize,
    /// Sequences per batch.
    pub batch: usize,
    /// Context length: tokens per sequence (text + EOS padding).
    pub ctx: usize,
    /// Transformer blocks.
    pub layers: usize,
    /// Width of the residual stream.
    pub hidden: usize,
    /// Attention heads.
    pub heads: usize,
    /// Width of the SwiGLU MLP.
    pub mlp: usize,
    /// Peak learning rate.
    pub lr: f64,
    /// Linear warmup steps.
    pub warmup: usize,
    /// AdamW weight decay.
    pub weight_decay: f64,
    /// Global gradient-norm clip (0: none).
    pub clip: f64,
    /// Seed of the initialization, data order and masks.
    pub seed: u64,
    /// Write a checkpoint every this many steps (0: only at the end).
    pub checkpoint_every: usize,
}

impl Default for TrainConfig {
    fn default() -> TrainConfig {
        TrainConfig {
            steps: 2000,
            batch: 32,
            ctx: 64,
            layers: 4,
            hidden: 192,
            heads: 4,
            mlp: 512,
            lr: 1e-3,
            warmup: 100,
            weight_decay: 0.01,
            clip: 1.0,
            seed: 0,
            checkpoint_every: 200,
        }
    }
}

impl TrainConfig {
    /// The learning rate at `step` (0-based): linear warmup, then cosine
    /// decay to 10 % of the peak at the last step.
    pub fn lr_at(&self, step: usize) -> f64 {
        if step < self.warmup {
            return self.lr * (step + 1) as f64 / self.warmup as f64;
        }
        let span = self.steps.saturating_sub(self.warmup).max(1) as f64;
        let p = ((step - self.warmup) as f64 / span).min(1.0);
        let min = 0.1 * self.lr;
        min + (self.lr - min) * 0.5 * (1.0 + (std::f64::consts::PI * p).cos())
    }

    fn check(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::new(ErrorKind::Model, format!("train: {m}")));
        if self.batch == 0 || self.ctx < 2 || self.layers == 0 || self.hidden == 0 {
            return bad("batch, layers and hidden must be positive and ctx at least 2");
        }
        if self.heads == 0
            || !self.hidden.is_multiple_of(self.heads)
            || !(self.hidden / self.heads).is_multiple_of(2)
        {
            return bad("hidden must be a multiple of heads with an even head width");
        }
        if self.mlp == 0 || !(self.lr.is_finite() && self.lr > 0.0) {
            return bad("mlp must be positive and lr a positive number");
        }
        Ok(())
    }
}

/// The LLaDA `config.json` of a trained model.
pub fn model_config(tc: &TrainConfig) -> Value {
    llada_config(&LladaShape {
        d_model: tc.hidden,
        mlp: tc.mlp,
        layers: tc.layers,
        heads: tc.heads,
        kv_heads: tc.heads,
        rows: ROWS,
        vocab: 256 + SPECIALS.len(),
        ctx: tc.ctx,
        rope_theta: 10000.0,
        eos: EOS,
        mask: MASK,
    })
}

/// Reads training texts: one per line. `.jsonl` files: one JSON value per
/// line. A line that is a JSON object with a string field `"text"`
/// contributes that string's raw bytes (source code with its newlines and
/// indentation, say); any other line is the document itself, re-serialized
/// compactly (serde_json, keys in file order, non-ASCII escaped as
/// `\uXXXX`). `.csv` files: the `smiles` column (by header,
/// case-insensitive); other files: the first whitespace-separated field of
/// each line, skipping a header line whose first field is `smiles`. Empty
/// lines and non-ASCII texts (including `"text"` fields) are skipped.
///
/// # Errors
/// [`ErrorKind::Io`] for an unreadable file, [`ErrorKind::Model`] for a CSV
/// without a `smiles` column or a `.jsonl` line that is not JSON.
pub fn read_texts(paths: &[PathBuf]) -> Result<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for p in paths {
        let text = std::fs::read_to_string(p)
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot read {}: {e}", p.display())))?;
        let ext = |e: &str| p.extension().is_some_and(|x| x.eq_ignore_ascii_case(e));
        if ext("jsonl") {
            for (i, line) in text.lines().enumerate() {
                if line.trim().is_empty() {
                    continue;
                }
                let v: Value = serde_json::from_str(line).map_err(|e| {
                    Error::new(
                        ErrorKind::Model,
                        format!("{}:{}: not JSON: {e}", p.display(), i + 1),
                    )
                })?;
                match v.get("text") {
                    Some(Value::String(t)) => {
                        if !t.is_empty() && t.is_ascii() {
                            out.push(t.as_bytes().to_vec());
                        }
                    }
                    _ => out.push(compact_ascii_json(&v).into_bytes()),
                }
            }
            continue;
        }
        let is_csv = ext("csv");
        let mut lines = text.lines();
        let col = if is_csv {
            let header = lines.next().unwrap_or("");
            let col = header
                .split(',')
                .position(|h| h.trim().eq_ignore_ascii_case("smiles"));
            match col {
                Some(c) => Some(c),
                None => {
                    return Err(Error::new(
                        ErrorKind::Model,
                        format!("{}: no \"smiles\" column in the header", p.display()),
                    ))
                }
            }
        } else {
            None
        };
        for line in lines {
            let field = match col {
                Some(c) => line.split(',').nth(c).unwrap_or("").trim(),
                None => line.split_whitespace().next().unwrap_or(""),
            };
            if field.is_empty() || !field.is_ascii() || field.eq_ignore_ascii_case("smiles") {
                continue;
            }
            out.push(field.as_bytes().to_vec());
        }
    }
    Ok(out)
}

/// `v` as compact JSON with every non-ASCII character escaped (`\uXXXX`,
/// surrogate pairs beyond the BMP), so that one byte is one token.
pub fn compact_ascii_json(v: &Value) -> String {
    let text = v.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            let mut buf = [0u16; 2];
            for u in c.encode_utf16(&mut buf) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        }
    }
    out
}

/// What a training run reports after each step.
#[derive(Clone, Debug)]
pub struct Progress {
    /// Steps done (1-based).
    pub step: usize,
    /// Total steps.
    pub steps: usize,
    /// This step's loss.
    pub loss: f32,
    /// Exponential moving average of the loss (0.98).
    pub loss_ema: f32,
    /// Learning rate of the step.
    pub lr: f64,
    /// Gradient norm before clipping.
    pub grad_norm: f32,
    /// Tokens per second over the run so far.
    pub tokens_per_s: f64,
    /// Whether a checkpoint was written after this step.
    pub checkpoint: bool,
}

/// The end of a training run.
#[derive(Clone, Debug)]
pub struct TrainReport {
    /// Every step's loss, from the first step of this run.
    pub losses: Vec<f32>,
    /// The final loss EMA.
    pub loss_ema: f32,
    /// Steps done in total (including before a resume).
    pub step: usize,
    /// Sequences used (texts that fit the context).
    pub sequences: usize,
    /// Texts skipped as longer than `ctx - 1` bytes.
    pub skipped: usize,
    /// Trainable parameters.
    pub parameters: usize,
    /// Wall time of this run.
    pub seconds: f64,
    /// The step a resumed run started from (`None`: a fresh run).
    pub resumed_from: Option<usize>,
    /// Whether a resumed run found the optimizer moments (a checkpoint
    /// written before they were saved restarts them from zero).
    pub moments_restored: bool,
}

fn tensor_err(e: candle_core::Error) -> Error {
    model_err("training", e)
}

fn io_err(p: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("cannot write {}: {e}", p.display()))
}

/// FNV-1a of a name (one random stream per tensor).
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A trainer: parameters, optimizer, data, step counter.
pub struct Trainer {
    tc: TrainConfig,
    cfg: Value,
    varmap: VarMap,
    model: llada::Model,
    opt: AdamW,
    data: Vec<Vec<u32>>,
    step: usize,
    loss_ema: f32,
    perm: (usize, Vec<usize>),
    moments_restored: bool,
    device: Device,
}

impl Trainer {
    /// A fresh model for `tc` (weights from the seed: norms one, the rest
    /// uniform with standard deviation 0.02, output projection scaled by
    /// `1/sqrt(2·layers)`), over `texts` (those longer than `ctx - 1` bytes
    /// are dropped). Returns the trainer and the number of texts dropped.
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: bad hyperparameters, no text fits the context.
    pub fn new(tc: &TrainConfig, texts: &[Vec<u8>]) -> Result<(Trainer, usize)> {
        Trainer::new_on(tc, texts, &Device::Cpu)
    }

    /// As [`Trainer::new`], with the parameters and the computation on
    /// `device` (initial values are drawn on the CPU, so a seed gives the
    /// same start on every device).
    ///
    /// # Errors
    /// As [`Trainer::new`], and a device that cannot hold the tensors.
    pub fn new_on(
        tc: &TrainConfig,
        texts: &[Vec<u8>],
        device: &Device,
    ) -> Result<(Trainer, usize)> {
        tc.check()?;
        let mut data = Vec::new();
        let mut skipped = 0;
        for t in texts {
            if t.len() + 1 > tc.ctx {
                skipped += 1;
                continue;
            }
            let mut ids: Vec<u32> = t.iter().map(|&b| b as u32).collect();
            ids.resize(tc.ctx, EOS);
            data.push(ids);
        }
        if data.is_empty() {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "train: no training text fits the context of {} tokens",
                    tc.ctx
                ),
            ));
        }
        let cfg = model_config(tc);
        let varmap = VarMap::new();
        {
            let mut vars = varmap
                .data()
                .lock()
                .map_err(|_| Error::new(ErrorKind::Model, "train: poisoned lock"))?;
            for (name, shape) in tensor_shapes(Arch::Llada, &cfg)? {
                let t = init_tensor(&name, &shape, tc)
                    .and_then(|t| t.to_device(device))
                    .map_err(tensor_err)?;
                vars.insert(name, Var::from_tensor(&t).map_err(tensor_err)?);
            }
        }
        let vb = VarBuilder::from_varmap(&varmap, DType::F32, device);
        let lcfg: llada::Config =
            serde_json::from_value(cfg.clone()).map_err(|e| model_err("config", e))?;
        let model = llada::Model::new(&lcfg, vb)?;
        let opt = AdamW::new(&varmap, tc.weight_decay)?;
        Ok((
            Trainer {
                tc: tc.clone(),
                cfg,
                varmap,
                model,
                opt,
                data,
                step: 0,
                loss_ema: f32::NAN,
                perm: (usize::MAX, Vec::new()),
                moments_restored: false,
                device: device.clone(),
            },
            skipped,
        ))
    }

    /// The model being trained (its inference path, [`llada::Model::logits`],
    /// is what [`super::load()`] gives back after [`Trainer::save`]).
    pub fn model(&self) -> &llada::Model {
        &self.model
    }

    /// Whether [`Trainer::restore`] found and loaded the optimizer moments.
    pub fn moments_restored(&self) -> bool {
        self.moments_restored
    }

    /// Steps done.
    pub fn step_count(&self) -> usize {
        self.step
    }

    /// Number of trainable parameters.
    pub fn parameters(&self) -> usize {
        self.opt
            .params
            .iter()
            .map(|(_, v)| v.as_tensor().elem_count())
            .sum()
    }

    /// The index into the data of the `i`-th sequence of the batch of `step`:
    /// the data is reshuffled each epoch, from the seed and the epoch.
    fn index(&mut self, step: usize, i: usize) -> usize {
        let n = self.data.len();
        let pos = step * self.tc.batch + i;
        let epoch = pos / n;
        if self.perm.0 != epoch {
            let mut rng = SplitMix64::new(self.tc.seed ^ 0xD1B5_4A32_D192_ED03 ^ epoch as u64);
            let mut p: Vec<usize> = (0..n).collect();
            for k in (1..n).rev() {
                let j = rng.below(k as u64 + 1) as usize;
                p.swap(k, j);
            }
            self.perm = (epoch, p);
        }
        self.perm.1[pos % n]
    }

    /// One optimizer step; returns (loss, gradient norm before clipping).
    ///
    /// # Errors
    /// A tensor error.
    pub fn train_step(&mut self) -> Result<(f32, f32)> {
        let (b, n) = (self.tc.batch, self.tc.ctx);
        let step = self.step;
        let mut rng = SplitMix64::new(
            self.tc
                .seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add((step as u64 + 1).wrapping_mul(0xBF58_476D_1CE4_E5B9)),
        );
        let mut input = Vec::with_capacity(b * n);
        let mut target = Vec::with_capacity(b * n);
        let mut weight = Vec::with_capacity(b * n);
        for i in 0..b {
            let k = self.index(step, i);
            let t = EPS + (1.0 - EPS) * (1.0 - rng.unit());
            for &id in &self.data[k] {
                let masked = rng.unit() < t;
                input.push(if masked { MASK } else { id });
                target.push(id);
                weight.push(if masked { (1.0 / t) as f32 } else { 0.0 });
            }
        }
        let dev = self.device.clone();
        let lr = self.tc.lr_at(step);
        let run = || -> candle_core::Result<(f32, f32, candle_core::backprop::GradStore)> {
            let ids = Tensor::from_vec(input.clone(), (b, n), &dev)?;
            let logits = self.model.forward_train(&ids)?.reshape((b * n, ROWS))?;
            let logp = candle_nn::ops::log_softmax(&logits, D::Minus1)?;
            let tgt = Tensor::from_vec(target.clone(), (b * n, 1), &dev)?;
            let w = Tensor::from_vec(weight.clone(), (b * n, 1), &dev)?;
            let nll = logp.gather(&tgt, 1)?.neg()?;
            let loss = ((nll * w)?.sum_all()? / (b * n) as f64)?;
            let mut grads = loss.backward()?;
            let vars: Vec<&Var> = self.opt.params.iter().map(|(_, v)| v).collect();
            let mut sq = 0f64;
            for &v in &vars {
                if let Some(g) = grads.get(v) {
                    sq += g.sqr()?.sum_all()?.to_scalar::<f32>()? as f64;
                }
            }
            let norm = sq.sqrt();
            if self.tc.clip > 0.0 && norm > self.tc.clip {
                let s = self.tc.clip / norm;
                for &v in &vars {
                    if let Some(g) = grads.remove(v) {
                        grads.insert(v, (g * s)?);
                    }
                }
            }
            Ok((loss.to_scalar::<f32>()?, norm as f32, grads))
        };
        let (loss, norm, grads) = run().map_err(tensor_err)?;
        if !loss.is_finite() {
            return Err(Error::new(
                ErrorKind::Model,
                format!("train: loss is {loss} at step {}", step + 1),
            ));
        }
        self.opt.step(&grads, lr).map_err(tensor_err)?;
        self.step += 1;
        self.loss_ema = if self.loss_ema.is_nan() {
            loss
        } else {
            0.98 * self.loss_ema + 0.02 * loss
        };
        Ok((loss, norm))
    }

    /// Writes a model directory at `out`: `config.json`, `model.safetensors`
    /// (the real LLaDA tensor names), `tokenizer.json` (byte-level),
    /// `tokenizer_config.json` (plain chat template) and `train_state.json`
    /// (step, seed, loss EMA, hyperparameters).
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when writing fails.
    pub fn save(&self, out: &Path) -> Result<()> {
        std::fs::create_dir_all(out).map_err(|e| io_err(out, e))?;
        write_json(&out.join("config.json"), &self.cfg)?;
        write_json(
            &out.join("tokenizer.json"),
            &byte_level_tokenizer_json(SPECIALS),
        )?;
        let tc = json!({
            "add_bos_token": false,
            "add_eos_token": false,
            "bos_token": SPECIALS[0],
            "eos_token": "<|endoftext|>",
            "pad_token": "<|endoftext|>",
            "mask_token": "<|mdm_mask|>",
            "chat_template": PLAIN_TEMPLATE,
            "clean_up_tokenization_spaces": false,
            "tokenizer_class": "PreTrainedTokenizerFast"
        });
        write_json(&out.join("tokenizer_config.json"), &tc)?;
        let tmp = out.join("model.safetensors.tmp");
        self.varmap.save(&tmp).map_err(|e| io_err(&tmp, e))?;
        let dst = out.join("model.safetensors");
        std::fs::rename(&tmp, &dst).map_err(|e| io_err(&dst, e))?;
        let tmp = out.join("optimizer.safetensors.tmp");
        self.opt.save(&tmp).map_err(|e| io_err(&tmp, e))?;
        let dst = out.join("optimizer.safetensors");
        std::fs::rename(&tmp, &dst).map_err(|e| io_err(&dst, e))?;
        let t = &self.tc;
        let state = json!({
            "step": self.step,
            "seed": t.seed,
            "loss_ema": self.loss_ema,
            "batch": t.batch, "ctx": t.ctx, "layers": t.layers, "hidden": t.hidden,
            "heads": t.heads, "mlp": t.mlp, "lr": t.lr, "warmup": t.warmup,
            "weight_decay": t.weight_decay, "clip": t.clip, "steps": t.steps,
            "optimizer_steps": self.opt.t,
        });
        write_json(&out.join("train_state.json"), &state)
    }

    /// Restores the weights, step and optimizer moments of a directory
    /// written by [`Trainer::save`] (same model shape). A directory without
    /// `optimizer.safetensors` (written before the moments were saved)
    /// restores the weights and step and restarts the moments from zero;
    /// [`Trainer::moments_restored`] tells which happened.
    ///
    /// # Errors
    /// [`ErrorKind::Model`]: missing or mismatched files.
    pub fn restore(&mut self, dir: &Path) -> Result<()> {
        let sp = dir.join("train_state.json");
        let text = std::fs::read_to_string(&sp)
            .map_err(|e| model_err(&format!("cannot read {}", sp.display()), e))?;
        let state: Value =
            serde_json::from_str(&text).map_err(|e| model_err(&format!("{}", sp.display()), e))?;
        let step = state.get("step").and_then(Value::as_u64).ok_or_else(|| {
            Error::new(ErrorKind::Model, format!("{}: no \"step\"", sp.display()))
        })?;
        let wp = dir.join("model.safetensors");
        self.varmap
            .load(&wp)
            .map_err(|e| model_err(&format!("cannot load {}", wp.display()), e))?;
        self.step = step as usize;
        let op = dir.join("optimizer.safetensors");
        self.moments_restored = op.is_file();
        if self.moments_restored {
            let t = state
                .get("optimizer_steps")
                .and_then(Value::as_u64)
                .unwrap_or(step);
            self.opt
                .load(&op, t as usize)
                .map_err(|e| model_err(&format!("cannot load {}", op.display()), e))?;
        }
        self.loss_ema = state
            .get("loss_ema")
            .and_then(Value::as_f64)
            .map_or(f32::NAN, |x| x as f32);
        Ok(())
    }
}

/// AdamW over the trainable tensors, in name order, with moments that can be
/// saved and loaded (β₁ = 0.9, β₂ = 0.999, ε = 10⁻⁸, the defaults of PyTorch
/// and candle-nn).
struct AdamW {
    params: Vec<(String, Var)>,
    m: Vec<Tensor>,
    v: Vec<Tensor>,
    /// Updates done (for the bias correction).
    t: usize,
    weight_decay: f64,
}

const BETA1: f64 = 0.9;
const BETA2: f64 = 0.999;
const ADAM_EPS: f64 = 1e-8;

impl AdamW {
    fn new(varmap: &VarMap, weight_decay: f64) -> Result<AdamW> {
        let mut params: Vec<(String, Var)> = varmap
            .data()
            .lock()
            .map_err(|_| Error::new(ErrorKind::Model, "train: poisoned lock"))?
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        params.sort_by(|a, b| a.0.cmp(&b.0));
        let zeros = || -> candle_core::Result<Vec<Tensor>> {
            params
                .iter()
                .map(|(_, v)| v.as_tensor().zeros_like())
                .collect()
        };
        let (m, v) = (zeros().map_err(tensor_err)?, zeros().map_err(tensor_err)?);
        Ok(AdamW {
            params,
            m,
            v,
            t: 0,
            weight_decay,
        })
    }

    /// One update with learning rate `lr`; parameters without a gradient
    /// are left alone.
    fn step(&mut self, grads: &GradStore, lr: f64) -> candle_core::Result<()> {
        self.t += 1;
        let bc1 = 1.0 - BETA1.powi(self.t as i32);
        let bc2 = 1.0 - BETA2.powi(self.t as i32);
        for (i, (_, var)) in self.params.iter().enumerate() {
            let Some(g) = grads.get(var) else { continue };
            let m = ((&self.m[i] * BETA1)? + (g * (1.0 - BETA1))?)?;
            let v = ((&self.v[i] * BETA2)? + (g.sqr()? * (1.0 - BETA2))?)?;
            let step = ((&m / bc1)? / ((&v / bc2)?.sqrt()? + ADAM_EPS)?)?;
            let decayed = (var.as_tensor() * (1.0 - lr * self.weight_decay))?;
            var.set(&(decayed - (step * lr)?)?)?;
            self.m[i] = m;
            self.v[i] = v;
        }
        Ok(())
    }

    fn save(&self, path: &Path) -> candle_core::Result<()> {
        let mut map = std::collections::HashMap::new();
        for (i, (name, _)) in self.params.iter().enumerate() {
            map.insert(format!("m.{name}"), self.m[i].clone());
            map.insert(format!("v.{name}"), self.v[i].clone());
        }
        candle_core::safetensors::save(&map, path)
    }

    fn load(&mut self, path: &Path, t: usize) -> candle_core::Result<()> {
        let device = self
            .params
            .first()
            .map_or(Device::Cpu, |(_, v)| v.device().clone());
        let mut map = candle_core::safetensors::load(path, &device)?;
        for (i, (name, var)) in self.params.iter().enumerate() {
            for (prefix, slot) in [("m", &mut self.m[i]), ("v", &mut self.v[i])] {
                let key = format!("{prefix}.{name}");
                let x = map
                    .remove(&key)
                    .ok_or_else(|| candle_core::Error::Msg(format!("no tensor {key}")))?;
                if x.shape() != var.as_tensor().shape() {
                    return Err(candle_core::Error::Msg(format!(
                        "{key} has shape {:?}, the model {:?}",
                        x.shape(),
                        var.as_tensor().shape()
                    )));
                }
                *slot = x;
            }
        }
        self.t = t;
        Ok(())
    }
}

/// The initial value of parameter `name`.
fn init_tensor(name: &str, shape: &[usize], tc: &TrainConfig) -> candle_core::Result<Tensor> {
    let dev = Device::Cpu;
    if name.contains("norm") || name.contains("ln_f") {
        return Tensor::ones(shape, DType::F32, &dev);
    }
    let residual_out = name.ends_with("attn_out.weight")
        || (name.contains("blocks.") && name.ends_with("ff_out.weight"));
    let std = if residual_out {
        0.02 / ((2 * tc.layers) as f64).sqrt()
    } else {
        0.02
    };
    let bound = std * 3f64.sqrt();
    let mut rng = SplitMix64::new(tc.seed ^ name_hash(name));
    let total: usize = shape.iter().product();
    let v: Vec<f32> = (0..total)
        .map(|_| ((rng.unit() * 2.0 - 1.0) * bound) as f32)
        .collect();
    Tensor::from_vec(v, shape, &dev)
}

fn write_json(path: &Path, v: &Value) -> Result<()> {
    let text = serde_json::to_string_pretty(v).map_err(|e| io_err(path, e))?;
    std::fs::write(path, text).map_err(|e| io_err(path, e))
}

/// The hyperparameters saved in `dir/train_state.json` (to resume with the
/// shape the model was trained with), `steps` and `checkpoint_every` taken
/// from `base`.
///
/// # Errors
/// [`ErrorKind::Model`]: missing or malformed file.
pub fn saved_config(dir: &Path, base: &TrainConfig) -> Result<TrainConfig> {
    let sp = dir.join("train_state.json");
    let text = std::fs::read_to_string(&sp)
        .map_err(|e| model_err(&format!("cannot read {}", sp.display()), e))?;
    let s: Value =
        serde_json::from_str(&text).map_err(|e| model_err(&format!("{}", sp.display()), e))?;
    let u = |k: &str| -> Result<usize> {
        s.get(k)
            .and_then(Value::as_u64)
            .map(|x| x as usize)
            .ok_or_else(|| Error::new(ErrorKind::Model, format!("{}: no \"{k}\"", sp.display())))
    };
    let f = |k: &str| -> Result<f64> {
        s.get(k)
            .and_then(Value::as_f64)
            .ok_or_else(|| Error::new(ErrorKind::Model, format!("{}: no \"{k}\"", sp.display())))
    };
    Ok(TrainConfig {
        steps: base.steps,
        checkpoint_every: base.checkpoint_every,
        batch: u("batch")?,
        ctx: u("ctx")?,
        layers: u("layers")?,
        hidden: u("hidden")?,
        heads: u("heads")?,
        mlp: u("mlp")?,
        lr: f("lr")?,
        warmup: u("warmup")?,
        weight_decay: f("weight_decay")?,
        clip: f("clip")?,
        seed: s.get("seed").and_then(Value::as_u64).unwrap_or(base.seed),
    })
}

/// Trains on `texts` for `tc.steps` steps, writing checkpoints to `out`
/// (every `tc.checkpoint_every` steps and at the end); with `resume`, starts
/// from the checkpoint in `out` (weights and step; its saved hyperparameters
/// replace `tc`'s except `steps` and `checkpoint_every`). `progress` is
/// called after every step.
///
/// # Errors
/// See [`Trainer::new`], [`Trainer::restore`], [`Trainer::save`].
pub fn train(
    tc: &TrainConfig,
    texts: &[Vec<u8>],
    out: Option<&Path>,
    resume: bool,
    progress: impl FnMut(&Progress),
) -> Result<TrainReport> {
    train_on(tc, texts, out, resume, &Device::Cpu, progress)
}

/// [`train`] on `device` (see [`Trainer::new_on`]).
///
/// # Errors
/// As [`train`].
pub fn train_on(
    tc: &TrainConfig,
    texts: &[Vec<u8>],
    out: Option<&Path>,
    resume: bool,
    device: &Device,
    mut progress: impl FnMut(&Progress),
) -> Result<TrainReport> {
    let tc = match (resume, out) {
        (true, Some(dir)) => saved_config(dir, tc)?,
        _ => tc.clone(),
    };
    let (mut tr, skipped) = Trainer::new_on(&tc, texts, device)?;
    if let (true, Some(dir)) = (resume, out) {
        tr.restore(dir)?;
    }
    let start = Instant::now();
    let first = tr.step;
    let mut losses = Vec::new();
    while tr.step < tc.steps {
        let lr = tc.lr_at(tr.step);
        let (loss, grad_norm) = tr.train_step()?;
        losses.push(loss);
        let done = tr.step;
        let checkpoint = out.is_some()
            && ((tc.checkpoint_every > 0 && done.is_multiple_of(tc.checkpoint_every))
                || done == tc.steps);
        if checkpoint {
            if let Some(dir) = out {
                tr.save(dir)?;
            }
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        progress(&Progress {
            step: done,
            steps: tc.steps,
            loss,
            loss_ema: tr.loss_ema,
            lr,
            grad_norm,
            tokens_per_s: ((done - first) * tc.batch * tc.ctx) as f64 / secs,
            checkpoint,
        });
    }
    if let (Some(dir), true) = (out, losses.is_empty()) {
        tr.save(dir)?;
    }
    Ok(TrainReport {
        losses,
        loss_ema: tr.loss_ema,
        step: tr.step,
        sequences: tr.data.len(),
        skipped,
        parameters: tr.parameters(),
        seconds: start.elapsed().as_secs_f64(),
        resumed_from: (resume && out.is_some()).then_some(first),
        moments_restored: tr.moments_restored,
    })
}

//! Decoding diffusion language models, with or without a context-free
//! constraint.
//!
//! [`decode`] runs the denoising loop of Dream or LLaDA as their authors ship
//! it ([`schedule`] for how many tokens each step commits, [`sample`] for
//! which token and which positions), on a canvas `prompt ++ answer` whose
//! answer starts as `max_tokens` masks. The constrained text of a canvas —
//! `prefill ++` the answer, masks as holes — is defined in [`canvas`].
//!
//! With [`Mode::ConMinus`] or [`Mode::Con`] every token is committed only if
//! the canvas stays completable for the grammar (arXiv 2508.10111, Alg. 1
//! and App. D.2; see [`constrained`]). `Con` finishes from the witness
//! completion once rejections run out, so its output is always a word of the
//! grammar.
//!
//! # Reference compatibility
//!
//! cdiff deliberately departs from the authors' code (Dream's
//! `generation_utils.py`, LLaDA's `generate.py`) in a few places; with
//! [`DecodeConfig::reference_compat`] it does what they do instead:
//!
//! | | cdiff | authors (`reference_compat`) |
//! | --- | --- | --- |
//! | the mask id and ids past the tokenizer (embedding padding rows) | never sampled | sampled like any id; a committed mask id leaves its position masked, to be predicted again |
//! | confidences | over the ids that may be sampled (renormalized) | over the whole model vocabulary |
//! | LLaDA: which masked positions a step ranks | those of the current block | every masked position before the current block's end (earlier blocks' committed mask ids too) |
//! | LLaDA: answer length not a multiple of the block length, or steps not a multiple of the blocks | a shorter last block; steps divided with at least one per block | refused, as the authors' asserts do |
//! | LLaDA `confidence_eos_eot_inf` | positions whose token is EOS, padding or end-of-turn are committed last | the code's literal effect (its line runs after the argmax): the token stands; confidences are softmax probabilities with end-of-turn (and at temperature 0 EOS too) taken out of the softmax, 0 for those tokens |
//! | infilling regions | supported | refused (the authors' loops have no regions) |
//!
//! What compatibility cannot reproduce: PyTorch's random numbers (at
//! temperature > 0, `alg_temp > 0`, `origin` or random remasking the
//! distributions are the authors' but the draws are cdiff's), and the order
//! of exactly tied confidences (cdiff takes the earlier position; PyTorch's
//! CPU `topk` returns ties in an order that depends on its partial-sort
//! internals and on the canvas length). Dream's softmax and entropy run in
//! f64 here and in the model's dtype there, so in bf16 (where confidences
//! are rounded to 8 bits and tie often) decodes can differ; at f32 they are
//! token-identical to the authors' on the golden fixtures
//! (`tests/dlm_golden.rs`).
//!
//! # Example
//! ```
//! use cdiff::decode::{decode, DecodeConfig, Mode};
//! use cdiff::model::{Denoiser, SpecialTokens, TextCodec};
//! use cdiff::{Constraint, Grammar, Result};
//! use candle_core::{Device, Tensor};
//!
//! // A byte-level "model" that always prefers ')': ids < 256 are bytes.
//! struct Paren;
//! impl Denoiser for Paren {
//!     fn vocab_size(&self) -> usize { 258 }
//!     fn forward(&mut self, t: &[u32]) -> Result<Tensor> {
//!         let mut v = vec![0f32; t.len() * 258];
//!         for i in 0..t.len() { v[i * 258 + b')' as usize] = 5.0; }
//!         Tensor::from_vec(v, (t.len(), 258), &Device::Cpu)
//!             .map_err(|e| cdiff::Error::new(cdiff::ErrorKind::Model, e.to_string()))
//!     }
//! }
//! struct Bytes(Vec<[u8; 1]>);
//! impl TextCodec for Bytes {
//!     fn encode(&self, s: &[u8]) -> Result<Vec<u32>> { Ok(s.iter().map(|&b| b as u32).collect()) }
//!     fn token_bytes(&self, id: u32) -> &[u8] { self.0.get(id as usize).map_or(&[], |b| &b[..]) }
//! }
//! let codec = Bytes((0..=255u8).map(|b| [b]).collect());
//! let special = SpecialTokens { mask: 256, eos: 257, pad: 257, n_tokens: 258 };
//! let g = Grammar::from_lark(r#"start: "(" start ")" start | "#, None)?;
//! let c = Constraint::compile(&g)?;
//! let cfg = DecodeConfig { mode: Mode::Con, steps: 8, max_tokens: 8, ..DecodeConfig::dream() };
//! let out = decode(&mut Paren, &codec, &special, Some(&c), &[], &cfg, None)?;
//! assert!(out.valid);
//! # Ok::<(), cdiff::Error>(())
//! ```

pub mod canvas;
pub mod constrained;
pub mod sample;
pub mod schedule;

use std::time::Duration;

pub use canvas::Layout;
pub use constrained::{decode, decode_answer};
pub use sample::{Alg, ArchStyle, Remasking};

/// How the constraint is used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No constraint while decoding (the output is only checked at the end).
    Vanilla,
    /// Every commit keeps the canvas completable; after `max_rejections`
    /// rejections the decode stops and reports failure.
    ConMinus,
    /// As `ConMinus`, but after `max_rejections` (or when positions run out)
    /// the remaining holes are filled from the witness completion: the output
    /// is always in the grammar.
    Con,
}

/// When a constrained step starts the next step's forward pass before its
/// checks ([`DecodeConfig::overlap`]). Either way only while first
/// proposals are mostly kept lately (else the guess is mostly wrong).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlap {
    /// On a device that runs the model asynchronously (CUDA, Metal): there
    /// the forward pass is queued on the device and the checks run on the
    /// CPU meanwhile. On the CPU the forward pass would only come earlier,
    /// so it does not.
    Auto,
    /// On every device, the CPU too (for tests: the guess is then computed
    /// before the checks, not beside them).
    Always,
    /// Never: each forward pass starts after the step's checks.
    Never,
}

/// Everything a decode needs besides the model and the grammar.
#[derive(Clone, Debug)]
pub struct DecodeConfig {
    /// Constraint mode.
    pub mode: Mode,
    /// Denoising steps (forward passes, at most).
    pub steps: usize,
    /// Answer length in tokens (the canvas after the prompt).
    pub max_tokens: usize,
    /// Dream's position-selection rule.
    pub alg: Alg,
    /// Sampling temperature (0: greedy).
    pub temperature: f64,
    /// Dream's nucleus mass (1: off).
    pub top_p: f64,
    /// Dream's top-k filter, after top-p (`None`: off).
    pub top_k: Option<usize>,
    /// Dream's `alg_temp`: 0 commits the most confident positions; above 0
    /// the step's positions are drawn without replacement with
    /// probabilities `softmax(confidence / alg_temp)` (Gumbel top-k).
    pub alg_temp: f64,
    /// LLaDA's classifier-free guidance scale (0: off): each step also runs
    /// the model with the prompt masked and uses
    /// `un + (cfg_scale + 1)·(cond − un)`.
    pub cfg_scale: f64,
    /// LLaDA's `logits_eos_inf`: EOS is never sampled.
    pub logits_eos_inf: bool,
    /// LLaDA's `confidence_eos_eot_inf`: a position whose sampled token is
    /// EOS, padding or [`DecodeConfig::end_of_turn`] gets the lowest
    /// confidence (committed last). Under
    /// [`DecodeConfig::reference_compat`], what the authors' code does
    /// instead (see "Reference compatibility" above).
    pub confidence_eos_eot_inf: bool,
    /// LLaDA's end-of-turn id (`<|eot_id|>`, 126348 in LLaDA-8B), which
    /// `confidence_eos_eot_inf` covers besides EOS (`None`: none).
    pub end_of_turn: Option<u32>,
    /// Decode exactly as the authors' code does where cdiff's own rules
    /// differ (see "Reference compatibility" above), so that their published
    /// numbers can be re-run.
    pub reference_compat: bool,
    /// LLaDA's block length.
    pub block_length: usize,
    /// LLaDA's remasking rule.
    pub remasking: Remasking,
    /// Rejections allowed in one decode before `ConMinus` gives up and `Con`
    /// uses the witness.
    pub max_rejections: usize,
    /// Whether checks also ask that each hole be fillable within its masks:
    /// a run of `k` masks holds at most `k` tokens, so at most
    /// `k ·` [`TextCodec::max_token_bytes`](crate::model::TextCodec::max_token_bytes)
    /// bytes ([`Constraint::check_within`](crate::Constraint::check_within);
    /// App. E of arXiv 2508.10111). Sound: a token after which the canvas
    /// can still be completed within its masks is never refused. Off by
    /// default.
    pub limit_holes: bool,
    /// After this many rejections at one position in one step (or once
    /// `max_rejections` is reached), the position's allowed-token mask is
    /// computed ([`crate::mask::Insertion::mask`]) and the rest of its
    /// draws come from the masked distribution — what unlimited rejection
    /// sampling draws from — so rejections no longer end the decode.
    /// `Some(0)` is `Some(1)` here (masks ahead are for autoregressive
    /// infilling). `None`: rejection sampling only, as in the paper.
    pub mask_after: Option<usize>,
    /// Try a step's proposals one by one even where one check of them all
    /// committed decides them (see "Proposals together" in
    /// [`constrained`]): the same tokens either way, more checks; for
    /// comparison. Off by default.
    pub one_by_one: bool,
    /// Answer every proposal by a fresh [`Constraint::check`] of the canvas
    /// (as in the paper): no proposals together, no answers from insertion
    /// points, no replayed hole exits. The same tokens either way (masks
    /// still come from the position's insertion point); for comparison.
    /// Off by default.
    ///
    /// [`Constraint::check`]: crate::Constraint::check
    pub fresh_checks: bool,
    /// Whether a constrained step starts the next step's forward pass on
    /// the canvas it guesses — this step's first proposals committed, as
    /// most steps end — before checking them, so that the model computes
    /// while the constraint checks (see "Overlap" in [`constrained`]). A
    /// forward pass depends on the canvas only: the next step uses the
    /// guess's logits when the canvas is the guess and runs the model again
    /// otherwise, so the tokens are the same either way. Default
    /// [`Overlap::Never`]: measured on an H100 with random-weight 7B/8B
    /// models, whose proposals are mostly refused, the wasted guesses made
    /// steps 19–31 % slower; a gain needs a model whose steps mostly keep
    /// their first proposals, not measured yet.
    pub overlap: Overlap,
    /// Seed of all randomness.
    pub seed: u64,
    /// Constrained bytes before the answer (e.g. a function signature).
    pub prefill: Vec<u8>,
    /// Markdown fence language: the answer opens with ```` ```lang\n ````.
    pub fence: Option<String>,
    /// Dream or LLaDA rules.
    pub arch_style: ArchStyle,
}

impl DecodeConfig {
    /// Dream's recommended settings: entropy, temperature 0.2, top-p 0.95;
    /// 256 tokens in 256 steps; `Con` mode.
    pub fn dream() -> DecodeConfig {
        DecodeConfig {
            mode: Mode::Con,
            steps: 256,
            max_tokens: 256,
            alg: Alg::Entropy,
            temperature: 0.2,
            top_p: 0.95,
            top_k: None,
            alg_temp: 0.0,
            cfg_scale: 0.0,
            logits_eos_inf: false,
            confidence_eos_eot_inf: false,
            end_of_turn: None,
            reference_compat: false,
            block_length: 32,
            remasking: Remasking::LowConfidence,
            max_rejections: 100,
            limit_holes: false,
            mask_after: Some(8),
            one_by_one: false,
            fresh_checks: false,
            overlap: Overlap::Never,
            seed: 0,
            prefill: Vec::new(),
            fence: None,
            arch_style: ArchStyle::Dream,
        }
    }

    /// LLaDA's settings from its `generate.py`: blocks of 32, low-confidence
    /// remasking, temperature 0; 256 tokens in 256 steps; `Con` mode.
    pub fn llada() -> DecodeConfig {
        DecodeConfig {
            temperature: 0.0,
            top_p: 1.0,
            arch_style: ArchStyle::Llada,
            ..DecodeConfig::dream()
        }
    }
}

/// The longest canvas (prompt and answer, in tokens) a decode accepts: the
/// bidirectional attention holds `heads × n²` scores per layer at once
/// (8,192 tokens: 1.6 GB in f32 for 6 heads, 7.5 GB for Dream-7B's 28).
pub const MAX_CANVAS_TOKENS: usize = 8192;

/// `Err` naming `what` unless `ok`.
pub(crate) fn setting(ok: bool, what: impl FnOnce() -> String) -> Result<(), crate::Error> {
    if ok {
        Ok(())
    } else {
        Err(crate::Error::new(crate::ErrorKind::Setting, what()))
    }
}

impl DecodeConfig {
    /// Checks every number: temperature finite and ≥ 0, `top_p` in (0, 1],
    /// at least one step, a block length ≥ 1, and a canvas of `canvas`
    /// tokens at most [`MAX_CANVAS_TOKENS`].
    ///
    /// # Errors
    /// [`crate::ErrorKind::Setting`] naming the first bad value.
    pub fn validate(&self, canvas: usize) -> Result<(), crate::Error> {
        let t = self.temperature;
        setting(t.is_finite() && t >= 0.0, || {
            format!("temperature must be a finite number ≥ 0, not {t}")
        })?;
        let p = self.top_p;
        setting(p.is_finite() && p > 0.0 && p <= 1.0, || {
            format!("top-p must be in (0, 1], not {p}")
        })?;
        setting(self.steps >= 1, || "steps must be at least 1".into())?;
        setting(self.top_k != Some(0), || "top-k must be at least 1".into())?;
        let (a, c) = (self.alg_temp, self.cfg_scale);
        setting(a.is_finite() && a >= 0.0, || {
            format!("alg-temp must be a finite number ≥ 0, not {a}")
        })?;
        setting(c.is_finite() && c >= 0.0, || {
            format!("cfg-scale must be a finite number ≥ 0, not {c}")
        })?;
        setting(self.block_length >= 1, || {
            "block length must be at least 1".into()
        })?;
        setting(canvas <= MAX_CANVAS_TOKENS, || {
            format!(
                "a canvas of {canvas} tokens (prompt and answer) is more than {MAX_CANVAS_TOKENS}: \
                 the attention's memory grows with its square; use fewer --max-tokens"
            )
        })
    }
}

impl Default for DecodeConfig {
    fn default() -> DecodeConfig {
        DecodeConfig::dream()
    }
}

/// Progress after one denoising step.
#[derive(Clone, Debug)]
pub struct StepInfo {
    /// 0-based step index.
    pub step: usize,
    /// Planned steps.
    pub steps: usize,
    /// Tokens committed at this step.
    pub committed: usize,
    /// Masks left in the answer.
    pub masked: usize,
    /// Rejections so far.
    pub rejections: usize,
    /// The constrained text so far, masks shown as nothing (for display).
    pub text: Vec<u8>,
}

/// The result of a decode.
#[derive(Clone, Debug)]
pub struct DecodeOutput {
    /// The constrained text: `prefill ++` the answer up to its first EOS,
    /// without fences.
    pub text: Vec<u8>,
    /// The raw answer bytes (fences included, up to the first EOS).
    pub answer: Vec<u8>,
    /// The final canvas (prompt and answer); after a text fallback, the
    /// prompt followed by the re-encoded answer.
    pub tokens: Vec<u32>,
    /// Whether `text` is a word of the grammar (`true` without a grammar in
    /// `Vanilla` mode).
    pub valid: bool,
    /// `ConMinus` gave up (rejections exhausted or positions left unfilled).
    pub failed: bool,
    /// Denoising steps run.
    pub steps: usize,
    /// Model forward passes.
    pub forward_passes: usize,
    /// Tokens accepted by the constraint (all commits in `Vanilla`).
    pub accepted: usize,
    /// Tokens rejected by the constraint.
    pub rejections: usize,
    /// Allowed-token masks computed ([`DecodeConfig::mask_after`]).
    pub masks: usize,
    /// Plain completability checks of the canvas (proposals answered by an
    /// insertion point's reuse, masks and the witness not counted).
    pub checks: usize,
    /// Proposals refused without a check: the canvas held every token of
    /// the step's refused first proposals together (not counted in
    /// `checks`; counted in `rejections`).
    pub known_refusals: usize,
    /// Time in the model (forward passes and copying logits).
    pub time_model: Duration,
    /// Time in completability checks and the witness.
    pub time_constraint: Duration,
    /// The part of `time_constraint` spent on the witness completion `Con`
    /// finished from (once per output, not per proposal).
    pub time_witness: Duration,
    /// `Con` finished from the witness completion.
    pub used_witness: bool,
    /// The witness could not be written as tokens into the canvas, so the
    /// final text was written directly.
    pub text_fallback: bool,
    /// With infilling regions ([`constrained::decode_answer`]): the text of
    /// each region (empty otherwise).
    pub region_fills: Vec<Vec<u8>>,
}

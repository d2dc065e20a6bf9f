//! Multi-region infilling: fill the regions of a [`Template`] so that the
//! whole text is a word of the grammar.
//!
//! Two kinds of models infill:
//!
//! * **Autoregressive fill-in-the-middle models** ([`infill_ar`]; StarCoder2,
//!   DeepSeek-Coder, CodeGemma, Qwen2.5-Coder through
//!   [`crate::model::load_causal`]). Regions are filled left to right, as in
//!   Mündler et al. (arXiv 2508.10111, §4.2, App. D): region `i`'s prompt is
//!   the family's FIM format with prefix = all text so far and suffix = the
//!   rest of the template, later regions shown by
//!   [`ArInfillConfig::placeholder`]. The model writes the middle token by
//!   token from its KV cache. In the constrained modes a drawn token is kept
//!   iff the partial output with it — region `i` still open, later regions
//!   holes — is completable; the end-of-middle token is kept iff the partial
//!   with region `i` closed is completable; a rejected token is removed from
//!   the distribution and another is drawn from the rest.
//! * **Diffusion models** ([`infill_diffusion`]; Dream, LLaDA and cdiff's
//!   shipped models). Each region becomes `hole_tokens` mask tokens in the
//!   canvas, which holds the template itself; the denoising loop of
//!   [`crate::decode`] runs on it. A region may end early: EOS/pad is allowed
//!   only as a suffix of a region's run and is not part of the text.
//!
//! In both, [`Mode::ConMinus`] stops after `max_rejections` rejections (the
//! output is then marked failed) and [`Mode::Con`] finishes every remaining
//! region from the witness completion ([`Constraint::completable`]), so its
//! text is always in the grammar and keeps every chunk of the template in
//! place. Autoregressive infilling goes further by default
//! ([`ArInfillConfig::mask_after`]): it computes every position's
//! allowed-token mask ([`crate::mask`]) in a second thread while the
//! model's forward pass for that position runs, and draws from the masked
//! distribution — the distribution unlimited rejection sampling draws
//! from; greedy, the very token it ends on — so no proposal is refused and
//! neither mode stops for rejections; only a region that reaches the token
//! limit unclosed still does. (`mask_after: Some(k)` instead computes a
//! mask after `k` rejections at one position; `None` is the paper's
//! rejection sampling.)
//!
//! Cost (AR): per region one prompt forward pass, then one cached forward
//! pass per accepted token. The constraint follows the region's end as an
//! insertion point ([`crate::mask::Insertion`], advanced past each accepted
//! token in `O(token)`): a tried token costs a few lexer steps, plus one
//! completability check of the whole partial output (`O(text)`) when no
//! earlier token at the point had its lexing relation; a mask costs one
//! trie walk over the vocabulary plus a check per distinct relation; per
//! rejection an `O(V)` redraw. Whether a region may end (a stop token, a
//! mask's stops, the token limit) is asked of a second point with the
//! region closed, made at the first such question and moved up to the
//! region's end at each next one; whether the template is completable at
//! all, of the first region's point (its empty insertion) — no check of
//! the whole template per question.

mod ar;
mod diffusion;
mod template;

use std::time::Duration;

pub use ar::{check_template, infill_ar, ArInfillConfig};
pub use diffusion::infill_diffusion;
pub use template::Template;

pub use crate::decode::Mode;
#[allow(unused_imports)] // for the docs
use crate::Constraint;

/// The result of an infill.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InfillOutput {
    /// The filled template.
    pub text: Vec<u8>,
    /// One fill per region.
    pub fills: Vec<Vec<u8>>,
    /// Whether `text` is a word of the grammar (`true` without a grammar in
    /// `Vanilla` mode).
    pub valid: bool,
    /// `ConMinus` gave up, or the template itself is not completable.
    pub failed: bool,
    /// Tokens the model generated and that were kept (diffusion models:
    /// commits into the regions, EOS/pad included; witness fills excluded).
    pub tokens: usize,
    /// Tokens rejected by the constraint.
    pub rejections: usize,
    /// Allowed-token masks computed (autoregressive infilling, see
    /// [`ArInfillConfig::mask_after`]).
    pub masks: usize,
    /// Masks ahead that ran out of their work or memory budget (counted in
    /// `masks`): their positions fell back to rejection sampling.
    pub masks_abandoned: usize,
    /// `Con` finished from the witness completion.
    pub used_witness: bool,
    /// Model forward passes.
    pub forward_passes: usize,
    /// Time in the model.
    pub time_model: Duration,
    /// Time in completability checks and the witness.
    pub time_constraint: Duration,
    /// The part of `time_constraint` spent on the witness completion `Con`
    /// finished from (once per output, not per proposal).
    pub time_witness: Duration,
    /// The part of `time_constraint` spent while the model's forward passes
    /// ran (masks ahead, [`ArInfillConfig::mask_after`] `Some(0)`): the
    /// constraint cost the infill only `time_constraint - time_overlapped`.
    pub time_overlapped: Duration,
}

//! The denoising loop, unconstrained or constrained.
//!
//! Each step runs the model on the canvas, builds a [`RowSampler`] for every
//! masked answer position in scope (the whole answer for Dream, the current
//! block for LLaDA), ranks the positions by confidence (ties: the earlier
//! position first) and commits the step's quota ([`super::schedule`]).
//!
//! * **Vanilla** commits the quota's most confident positions with their
//!   sampled tokens, as the authors' code does.
//! * **ConMinus / Con** (arXiv 2508.10111, Alg. 1; App. D.2): the positions
//!   are visited in the same ranked order. For each, the sampled token is
//!   tried: the canvas with it committed is mapped to a partial output
//!   ([`Layout::view`]) and kept iff [`Constraint::check`] says it is still
//!   completable. On a rejection the token is removed from the position's
//!   distribution and another drawn from the renormalized rest
//!   ([`RowSampler::next_token`]); when every allowed id of a position has
//!   been rejected the loop moves on to the next position. Once the quota of
//!   accepted tokens is reached the step ends and the model runs again.
//!   Positions after a committed EOS can only hold EOS/pad: their
//!   distribution is restricted to those ids (a structural rule, not counted
//!   as rejections), and committing them needs no check (the partial does
//!   not change). A canvas that breaks the structural rules (ordinary token
//!   after EOS, missing fence) is rejected without a check.
//!
//!   **Masks** ([`DecodeConfig::mask_after`], default 8): after that many
//!   rejections at one position in one step, or once `max_rejections` is
//!   reached, the position's allowed-token mask is computed from its
//!   insertion point ([`Insertion::mask`]: exactly the ids a check would
//!   accept; ids without bytes are left to the check) and the sampler is
//!   restricted to it, so the next draw is one the constraint keeps, drawn
//!   from the masked distribution — what unlimited rejection sampling at
//!   that position draws from. Rejections then never end a decode. Runs that
//!   never reach that many rejections at a position are token for token
//!   those of plain rejection sampling.
//!
//!   When the steps end with masks left (positions exhausted), or, without
//!   masks (`mask_after: None`, the paper's algorithm), when the rejections
//!   of the whole decode reach `max_rejections`, `ConMinus` stops and
//!   reports failure; `Con` asks [`Constraint::completable`] for a witness
//!   of the current canvas and writes it in: each hole's fill is encoded
//!   with [`TextCodec::encode`] into that hole's mask run; a shorter fill is
//!   padded with EOS only for the last run when nothing but the end follows
//!   it. If a fill needs more tokens than its run has, a shorter one cannot
//!   be padded, the runs do not correspond to the holes, or the decoded
//!   canvas does not reproduce the witness text, the witness *text* is the
//!   output directly ([`DecodeOutput::text_fallback`]; `tokens` are then the
//!   prompt and the re-encoded answer, padded with EOS to the canvas length
//!   when it fits, else followed by one EOS). The output text is checked at the
//!   end with [`Constraint::check`] on the complete text.
//!
//!   **Proposals together.** A canvas with more tokens committed has
//!   fewer completions (each fill of it is one of the canvas with those
//!   positions masked), so when the canvas with the step's first `quota`
//!   proposals (each position's sampled token, in ranked order) all
//!   committed is completable, each of them is accepted when tried one by
//!   one as above, and they are committed together after one check. Only
//!   when that check refuses do they go one by one: the same tokens are
//!   committed either way, with one check instead of `quota` on the
//!   common step where every first proposal is kept (not with hole limits,
//!   whose check is not exact for longer fills). When that check refuses,
//!   the refused canvas is kept for the step: a proposal whose canvas holds
//!   all its tokens (one by one comes back to it when all but the last
//!   proposal are kept) has no completion either and is refused without a
//!   check ([`DecodeOutput::known_refusals`]).
//!
//!   **Overlap** ([`DecodeConfig::overlap`], off by default). On a GPU the
//!   forward pass is queued on the device and the CPU is free until its
//!   logits are read. With overlap, a constrained step that is not the last
//!   one, while its first proposals are mostly kept lately, starts the next
//!   step's forward pass before its checks, on the canvas it will most
//!   likely leave — its first `quota` proposals committed (EOS where an
//!   earlier one forces it), what the proposals-together check keeps —, so
//!   the checks run while the model computes. A forward pass depends on the
//!   canvas only: the next step takes the guess's logits when the canvas is
//!   the guess and runs the model again otherwise (the guess's pass is
//!   then wasted, counted in [`DecodeOutput::forward_passes`], and the next
//!   pass waits behind it on the device). The same tokens either way. On an
//!   H100 with random-weight Dream-7B/LLaDA-8B, whose proposals are mostly
//!   refused, 26–29 of 31 guesses were wasted and steps took 19–31 % longer
//!   (before the guesses were limited to steps whose first proposals are
//!   mostly kept), hence off until a trained model shows the gain.
//!
//! Cost per step: one forward pass, `O(masked in scope × V)` to build the
//! samplers, plus per tried token a completability check (the partial is
//! rebuilt from the canvas, `O(answer)`) and per rejection an `O(V)` redraw.
//! The rejected position's sampler is kept for the rest of the step. The
//! proposals at one position go through one insertion point
//! ([`crate::mask::Insertion`]): a proposal whose lexing relation an earlier
//! one there had is answered without a check (the same answer a check
//! gives), so a run of rejected identifiers, numbers or punctuation costs one
//! check per kind, not per token.

use std::sync::Arc;
use std::time::Instant;

use candle_core::{DType, Device, Tensor};
use rayon::prelude::*;

use super::canvas::{AnswerView, Layout};
use super::sample::{
    allow_only, forbid_specials, normalize_log, Alg, ArchStyle, Remasking, RowSampler, SampleParams,
};
use super::schedule::{dream_timesteps, dream_transfer, llada_transfer_counts, LladaPlan};
use super::{DecodeConfig, DecodeOutput, Mode, Overlap, StepInfo};
use crate::completable::{Constraint, Verdict};
use crate::error::{Error, ErrorKind, Result};
use crate::mask::{Insertion, Vocabulary};
use crate::model::{Denoiser, SpecialTokens, TextCodec};
use crate::partial::Partial;
use crate::rng::SplitMix64;

/// How the proposals at one answer position are answered (for the canvas
/// as it is).
enum Reuse<'a> {
    /// The first proposal: a plain check (most are accepted, and building
    /// an insertion point lexes everything before the position).
    First,
    /// After a rejection: build the insertion point.
    Build,
    /// The insertion point at the position and the partial output after
    /// the token; proposals go through it only if `answers`
    /// ([`Insertion::is_narrow`]), masks always.
    At {
        point: Box<(Insertion<'a>, Partial)>,
        answers: bool,
    },
}

fn model_err(e: candle_core::Error) -> Error {
    Error::new(ErrorKind::Model, e.to_string())
}

/// Runs one decode: `prompt` followed by `cfg.max_tokens` masks, denoised in
/// `cfg.steps` steps under `cfg.mode`. `constraint` is required for
/// `ConMinus`/`Con`; in `Vanilla` it only decides [`DecodeOutput::valid`].
/// `on_step` is called after every step.
///
/// # Errors
/// A model error (including logits of the wrong shape), a constraint error
/// (budget, size limit), or `ConMinus`/`Con` without a constraint
/// ([`ErrorKind::Partial`]).
pub fn decode(
    model: &mut dyn Denoiser,
    codec: &dyn TextCodec,
    special: &SpecialTokens,
    constraint: Option<&Constraint>,
    prompt: &[u32],
    cfg: &DecodeConfig,
    on_step: Option<&mut dyn FnMut(&StepInfo)>,
) -> Result<DecodeOutput> {
    cfg.validate(prompt.len().saturating_add(cfg.max_tokens))?;
    let answer = vec![special.mask; cfg.max_tokens];
    decode_answer(
        model,
        codec,
        special,
        constraint,
        prompt,
        &answer,
        &[],
        cfg,
        on_step,
    )
}

/// As [`decode`], but the answer starts as `answer` (fixed tokens and masks)
/// and, when `regions` is not empty, is a template to infill: each range of
/// answer positions is a region (see "Regions" in [`super::canvas`]), every
/// mask lies in one, and `cfg.max_tokens` and `cfg.fence` are ignored.
/// `decode` is the case of an answer of `cfg.max_tokens` masks and no
/// regions.
///
/// # Errors
/// As [`decode`]; also [`ErrorKind::Partial`] when a mask lies outside the
/// regions or the regions are unsorted, overlapping or out of range.
#[allow(clippy::too_many_arguments)]
pub fn decode_answer(
    model: &mut dyn Denoiser,
    codec: &dyn TextCodec,
    special: &SpecialTokens,
    constraint: Option<&Constraint>,
    prompt: &[u32],
    answer: &[u32],
    regions: &[std::ops::Range<usize>],
    cfg: &DecodeConfig,
    on_step: Option<&mut dyn FnMut(&StepInfo)>,
) -> Result<DecodeOutput> {
    cfg.validate(prompt.len() + answer.len())?;
    if !regions.is_empty() {
        let mut pos = 0;
        for r in regions {
            if r.start < pos || r.end < r.start || r.end > answer.len() {
                return Err(Error::new(
                    ErrorKind::Partial,
                    "infilling regions must be sorted, disjoint and inside the answer",
                ));
            }
            if answer[pos..r.start].contains(&special.mask) {
                return Err(Error::new(
                    ErrorKind::Partial,
                    "a template token outside the regions is the mask token",
                ));
            }
            pos = r.end;
        }
        if answer[pos..].contains(&special.mask) {
            return Err(Error::new(
                ErrorKind::Partial,
                "a template token outside the regions is the mask token",
            ));
        }
    }
    if cfg.reference_compat && !regions.is_empty() {
        return Err(Error::new(
            ErrorKind::Setting,
            "reference compatibility reproduces the authors' decoding loops, which have no \
             infilling regions",
        ));
    }
    if cfg.mode != Mode::Vanilla && constraint.is_none() {
        return Err(Error::new(
            ErrorKind::Partial,
            "constrained decoding needs a grammar",
        ));
    }
    let d = Decoder {
        model,
        codec,
        special,
        constraint,
        cfg,
        layout: Layout {
            special,
            prefill: &cfg.prefill,
            fence: if regions.is_empty() {
                cfg.fence.as_deref()
            } else {
                None
            },
            regions,
        },
        canvas: [prompt, answer].concat(),
        prompt_len: prompt.len(),
        rng: SplitMix64::new(cfg.seed),
        params: SampleParams {
            style: cfg.arch_style,
            temperature: cfg.temperature,
            top_p: cfg.top_p,
            top_k: cfg.top_k,
            alg: cfg.alg,
            remasking: cfg.remasking,
        },
        out: DecodeOutput {
            text: Vec::new(),
            answer: Vec::new(),
            tokens: Vec::new(),
            valid: false,
            failed: false,
            steps: 0,
            forward_passes: 0,
            accepted: 0,
            rejections: 0,
            masks: 0,
            checks: 0,
            known_refusals: 0,
            time_model: Default::default(),
            time_constraint: Default::default(),
            time_witness: Default::default(),
            used_witness: false,
            text_fallback: false,
            region_fills: Vec::new(),
        },
        on_step,
        vocab: None,
        firsts: Firsts::default(),
        refused: None,
        guess: None,
        async_model: false,
    };
    // The canvases checked next differ by a token or a few each.
    let _kept = constraint
        .filter(|_| !cfg.fresh_checks)
        .map(Constraint::replaying);
    d.run()
}

/// The rules that turn a row of logits into a position's distribution:
/// forbidden ids at −∞ (the mask id and ids past the tokenizer unless
/// reference-compatible, EOS under `logits_eos_inf`) and only EOS/pad after
/// a committed EOS. Shared by the threads that build a step's samplers.
struct RowRules<'r> {
    cfg: &'r DecodeConfig,
    special: &'r SpecialTokens,
    layout: &'r Layout<'r>,
    answer: &'r [u32],
    end_ids: &'r [u32],
    constrained: bool,
}

impl RowRules<'_> {
    /// Row `r` of `rows` (answer position `pos`) with forbidden ids at −∞.
    fn row(&self, rows: &Tensor, r: usize, pos: usize) -> Result<Vec<f32>> {
        let mut row = row_f32(rows, r)?;
        if !self.cfg.reference_compat {
            forbid_specials(&mut row, self.special);
        }
        if self.cfg.logits_eos_inf {
            if let Some(x) = row.get_mut(self.special.eos as usize) {
                *x = f32::NEG_INFINITY;
            }
        }
        if self.constrained && self.layout.forced_end(self.answer, pos) {
            allow_only(&mut row, self.end_ids);
        }
        Ok(row)
    }
}

/// Row `r` of `rows` (f32, or a 16-bit float f32 holds exactly) in f32.
fn row_f32(rows: &Tensor, r: usize) -> Result<Vec<f32>> {
    rows.get(r)
        .and_then(|x| x.to_dtype(DType::F32))
        .and_then(|x| x.to_vec1())
        .map_err(model_err)
}

enum Stop {
    /// Keep decoding.
    Go,
    /// Rejections exhausted.
    OutOfRejections,
}

struct Decoder<'a, 'b> {
    model: &'a mut dyn Denoiser,
    codec: &'a dyn TextCodec,
    special: &'a SpecialTokens,
    constraint: Option<&'a Constraint>,
    cfg: &'a DecodeConfig,
    layout: Layout<'a>,
    canvas: Vec<u32>,
    prompt_len: usize,
    rng: SplitMix64,
    params: SampleParams,
    out: DecodeOutput,
    on_step: Option<&'b mut dyn FnMut(&StepInfo)>,
    /// The vocabulary as a byte trie, asked of the codec at the first mask
    /// (a tokenizer keeps it for every later decode).
    vocab: Option<Arc<Vocabulary>>,
    /// How often first proposals were kept lately.
    firsts: Firsts,
    /// This step's first proposals committed together, when that canvas
    /// was refused (see "Proposals together"): a canvas holding all its
    /// tokens is refused without a check.
    refused: Option<Vec<u32>>,
    /// The next step's forward pass started on a guessed canvas (see
    /// "Overlap"): the canvas and its logits, every row.
    guess: Option<(Vec<u32>, Tensor)>,
    /// Whether the model's logits live on a device that computes
    /// asynchronously (known after the first forward pass).
    async_model: bool,
}

/// First proposals (a position's sampled token) kept of those checked,
/// halved every [`Firsts::WINDOW`] so that they follow the decode: steps
/// try their first proposals together only while most are kept.
#[derive(Default)]
struct Firsts {
    kept: u32,
    tried: u32,
}

impl Firsts {
    const WINDOW: u32 = 32;

    fn note(&mut self, kept: u32, tried: u32) {
        self.kept += kept;
        self.tried += tried;
        if self.tried >= Self::WINDOW {
            self.kept /= 2;
            self.tried /= 2;
        }
    }

    /// Whether at least 4 in 5 were kept, of at least two. With
    /// `p` of them kept, `k` together cost one check plus, with chance
    /// `1 − pᵏ`, the checks one by one: worth it from about 0.8 for
    /// `k = 2` (the harsh proposers of the tests keep fewer, `dlm-cpp`'s
    /// model 96 %).
    fn mostly_kept(&self) -> bool {
        self.tried >= 2 && self.kept * 5 >= self.tried * 4
    }
}

impl<'a> Decoder<'a, '_> {
    fn answer(&self) -> &[u32] {
        &self.canvas[self.prompt_len..]
    }

    fn masked_in(&self, scope: impl IntoIterator<Item = usize>) -> Vec<usize> {
        scope
            .into_iter()
            .filter(|&i| self.canvas[self.prompt_len + i] == self.special.mask)
            .collect()
    }

    fn run(mut self) -> Result<DecodeOutput> {
        let n = self.canvas.len() - self.prompt_len;
        if let Some(open) = self.layout.fence_open() {
            let ids = self.codec.encode(&open)?;
            for (k, id) in ids.into_iter().take(n).enumerate() {
                self.canvas[self.prompt_len + k] = id;
            }
        }
        let constrained = self.cfg.mode != Mode::Vanilla;
        if constrained && !self.check_canvas(&self.canvas.clone())? {
            // Nothing the model writes can help: the prefill itself is dead.
            return self.give_up();
        }
        let steps = self.cfg.steps.max(1);
        let mut stop = Stop::Go;
        match self.cfg.arch_style {
            ArchStyle::Dream => {
                let ts = dream_timesteps(steps);
                for s in 0..steps {
                    let masked = self.masked_in(0..n);
                    let k = if self.cfg.alg == Alg::Origin {
                        self.origin_quota(&ts, s, steps, masked.len())
                    } else {
                        dream_transfer(&ts, s, steps, masked.len())
                    };
                    stop = self.step(s, steps, &masked, k)?;
                    if !matches!(stop, Stop::Go) {
                        break;
                    }
                }
            }
            ArchStyle::Llada => {
                // Blocks over the answer positions; with regions, over the
                // masked positions only (the template's fixed tokens take
                // no steps).
                let masked0 = self.masked_in(0..n);
                let plan_len = if self.layout.regions.is_empty() {
                    n
                } else {
                    masked0.len()
                };
                let plan = LladaPlan::new(plan_len, self.cfg.block_length, steps);
                if self.cfg.reference_compat {
                    llada_reference_split(plan_len, self.cfg.block_length, steps)?;
                }
                let total = plan.blocks.len() * plan.steps_per_block;
                let scopes: Vec<Vec<usize>> = plan
                    .blocks
                    .iter()
                    .map(|b| {
                        if self.layout.regions.is_empty() {
                            b.clone().collect()
                        } else {
                            masked0[b.clone()].to_vec()
                        }
                    })
                    .collect();
                'blocks: for (b, block) in scopes.iter().enumerate() {
                    let counts = llada_transfer_counts(
                        self.masked_in(block.iter().copied()).len(),
                        plan.steps_per_block,
                    );
                    // The authors rank every masked position before the
                    // block's end (a committed mask id stays masked).
                    let ranked: Vec<usize> = match (self.cfg.reference_compat, block.last()) {
                        (true, Some(&last)) => (0..=last).collect(),
                        _ => block.clone(),
                    };
                    for (i, &k) in counts.iter().enumerate() {
                        let masked = self.masked_in(ranked.iter().copied());
                        let s = b * plan.steps_per_block + i;
                        stop = self.step(s, total, &masked, k)?;
                        if !matches!(stop, Stop::Go) {
                            break 'blocks;
                        }
                    }
                }
            }
        }
        let left = self.masked_in(0..n).len();
        if constrained && (matches!(stop, Stop::OutOfRejections) || left > 0) {
            if self.cfg.mode == Mode::ConMinus {
                return self.give_up();
            }
            self.fill_from_witness()?;
        }
        self.finish()
    }

    /// One denoising step over the masked answer positions `masked`,
    /// committing `quota` of them.
    fn step(&mut self, s: usize, steps: usize, masked: &[usize], quota: usize) -> Result<Stop> {
        self.out.steps += 1;
        self.refused = None;
        let quota = quota.min(masked.len());
        let mut committed = 0;
        let mut stop = Stop::Go;
        if quota > 0 {
            let rows = self.logits(masked)?;
            let constrained = self.cfg.mode != Mode::Vanilla;
            let end_ids = [self.special.eos, self.special.pad];
            let eot = self.cfg.end_of_turn;
            // (position, row, seed, first token, confidence); samplers are
            // dropped and rebuilt from the seed on a rejection, so memory
            // stays O(V) per position in use.
            // The rows' samplers are built in parallel (each from its own
            // seed, drawn in position order: the same draws for any number
            // of threads); with a real vocabulary they cost more than the
            // forward pass on a GPU.
            let seeds: Vec<u64> = masked.iter().map(|_| self.rng.next_u64()).collect();
            let rules = self.row_rules(&end_ids, constrained);
            let params = &self.params;
            let mut cands = masked
                .par_iter()
                .zip(&seeds)
                .enumerate()
                .map(|(r, (&pos, &seed))| {
                    let row = rules.row(&rows, r, pos)?;
                    let sampler = RowSampler::new(&row, params, seed);
                    Ok((pos, r, seed, sampler.first(), sampler.confidence()))
                })
                .collect::<Result<Vec<(usize, usize, u64, Option<u32>, f64)>>>()?;
            if self.cfg.confidence_eos_eot_inf && !self.cfg.reference_compat {
                for c in &mut cands {
                    if c.3.is_some_and(|t| end_ids.contains(&t) || Some(t) == eot) {
                        c.4 = f64::NEG_INFINITY;
                    }
                }
            }
            if self.literal_eos_eot_confidence() {
                // The authors' line runs after the argmax: the token stands;
                // its confidence is the softmax of the logits without
                // end-of-turn (and, at temperature 0, where the noisy logits
                // are the logits themselves, without EOS): 0 for those.
                let mut out: Vec<u32> = eot.into_iter().collect();
                if self.cfg.temperature == 0.0 || self.cfg.logits_eos_inf {
                    out.push(self.special.eos);
                }
                for c in &mut cands {
                    if let Some(t) = c.3 {
                        let raw = row_f32(&rows, c.1)?;
                        c.4 = softmax_without(&raw, t, &out);
                    }
                }
            }
            let alg_temp = self.cfg.alg_temp;
            if alg_temp > 0.0 && self.cfg.arch_style == ArchStyle::Dream {
                // Sampling positions without replacement with probabilities
                // softmax(confidence / alg_temp) = ranking by
                // confidence / alg_temp plus Gumbel noise.
                for c in &mut cands {
                    let u = self.rng.unit().max(f64::MIN_POSITIVE);
                    c.4 = c.4 / alg_temp - (-u.ln()).ln();
                }
            }
            // Rank by confidence, descending; ties keep position order.
            cands.sort_by(|a, b| b.4.total_cmp(&a.4));
            if constrained && s + 1 < steps {
                self.start_guess(&cands, quota)?;
            }
            if !constrained {
                for &(pos, _, _, first, _) in cands.iter().take(quota) {
                    if let Some(tok) = first {
                        self.canvas[self.prompt_len + pos] = tok;
                        committed += 1;
                    }
                }
                self.out.accepted += committed;
            } else if self.commit_together(&cands, quota)? {
                committed = quota;
                self.out.accepted += quota;
            } else {
                'positions: for (pos, r, seed, first, _) in cands {
                    if committed == quota {
                        break;
                    }
                    let mut sampler: Option<RowSampler> = None;
                    let mut reuse = Reuse::First;
                    let mut tok = first;
                    let (mut here, mut masked) = (0, false);
                    if self.layout.forced_end(self.answer(), pos) {
                        // An EOS was committed earlier in this step: only
                        // EOS/pad may follow (structural, no check).
                        tok = Some(self.special.eos);
                    }
                    while let Some(t) = tok {
                        if self.try_commit(pos, t, &mut reuse)? {
                            committed += 1;
                            self.out.accepted += 1;
                            continue 'positions;
                        }
                        self.out.rejections += 1;
                        here += 1;
                        let spent = self.out.rejections >= self.cfg.max_rejections;
                        if spent && self.cfg.mask_after.is_none() {
                            stop = Stop::OutOfRejections;
                            break 'positions;
                        }
                        if sampler.is_none() {
                            // Rebuilt as at ranking time, so the draws replay.
                            let row = self.row_rules(&end_ids, constrained).row(&rows, r, pos)?;
                            sampler = Some(RowSampler::new(&row, &self.params, seed));
                        }
                        let s = sampler.as_mut().expect("built above");
                        if let Some(k) = self.cfg.mask_after {
                            if !masked && (here >= k || spent) {
                                masked = true;
                                if let Some(allowed) = self.mask(&mut reuse, s.len())? {
                                    s.restrict(&allowed);
                                }
                            }
                        }
                        tok = s.next_token();
                    }
                }
            }
        }
        if let Some(f) = self.on_step.as_mut() {
            let answer = &self.canvas[self.prompt_len..];
            let info = StepInfo {
                step: s,
                steps,
                committed,
                masked: answer.iter().filter(|&&t| t == self.special.mask).count(),
                rejections: self.out.rejections,
                text: self.layout.final_text(self.codec, answer),
            };
            f(&info);
        }
        Ok(stop)
    }

    /// Whether confidences are the authors' literal `confidence_eos_eot_inf`
    /// ones (LLaDA, low-confidence remasking, reference compatibility).
    fn literal_eos_eot_confidence(&self) -> bool {
        self.cfg.reference_compat
            && self.cfg.confidence_eos_eot_inf
            && self.cfg.arch_style == ArchStyle::Llada
            && self.cfg.remasking == Remasking::LowConfidence
    }

    /// Dream `origin`'s quota at step `s`: each of `n_masked` positions
    /// with probability `1 − t_{s+1}/t_s`, all at the last step.
    fn origin_quota(&mut self, ts: &[f32], s: usize, steps: usize, n_masked: usize) -> usize {
        if s + 1 >= steps {
            return n_masked;
        }
        let p = 1.0 - f64::from(ts[s + 1]) / f64::from(ts[s]);
        (0..n_masked).filter(|_| self.rng.unit() < p).count()
    }

    /// The model's logits for every position of `canvas` (with
    /// classifier-free guidance when set), left on the model's device: in
    /// the model's dtype ([`Denoiser::forward_native`]: a bf16 model's rows
    /// are copied off a GPU at half the bytes and turned to f32 row by row
    /// on the CPU, the same values), f32 with guidance (computed in f32).
    fn forward(&mut self, canvas: &[u32]) -> Result<Tensor> {
        let guided = self.cfg.cfg_scale > 0.0 && self.prompt_len > 0;
        let mut logits = match guided {
            true => self.model.forward(canvas)?,
            false => self.model.forward_native(canvas)?,
        };
        self.out.forward_passes += 1;
        self.async_model = !logits.device().is_cpu();
        if guided {
            // Classifier-free guidance: the same canvas with the prompt
            // masked gives the unconditional logits.
            let mut un_canvas = canvas.to_vec();
            for t in &mut un_canvas[..self.prompt_len] {
                *t = self.special.mask;
            }
            let un = self.model.forward(&un_canvas)?;
            self.out.forward_passes += 1;
            let w = self.cfg.cfg_scale + 1.0;
            logits = (logits - &un)
                .and_then(|d| d.affine(w, 0.0))
                .and_then(|d| d + un)
                .map_err(model_err)?;
        }
        Ok(logits)
    }

    /// Starts the next step's forward pass on the canvas with the step's
    /// first proposals committed (see "Overlap" in the module docs), where
    /// [`DecodeConfig::overlap`] asks for it.
    fn start_guess(
        &mut self,
        cands: &[(usize, usize, u64, Option<u32>, f64)],
        quota: usize,
    ) -> Result<()> {
        let wanted = match self.cfg.overlap {
            Overlap::Auto => self.async_model,
            Overlap::Always => true,
            Overlap::Never => false,
        } && self.firsts.mostly_kept();
        if !wanted {
            return Ok(());
        }
        if let Some((canvas, _)) = self.firsts_committed(cands, quota) {
            let t0 = Instant::now();
            let logits = self.forward(&canvas)?;
            self.out.time_model += t0.elapsed();
            self.guess = Some((canvas, logits));
        }
        Ok(())
    }

    /// The canvas with the first `quota` candidates' sampled tokens
    /// committed in ranked order (EOS where one committed before forces
    /// it), and how many of them are not forced (need a check); `None`
    /// when there are fewer candidates or one has no token.
    fn firsts_committed(
        &self,
        cands: &[(usize, usize, u64, Option<u32>, f64)],
        quota: usize,
    ) -> Option<(Vec<u32>, u32)> {
        let firsts = cands.get(..quota)?;
        if firsts.iter().any(|c| c.3.is_none()) {
            return None;
        }
        let mut canvas = self.canvas.clone();
        let mut checked = 0;
        for &(pos, _, _, first, _) in firsts {
            let answer = &canvas[self.prompt_len..];
            let tok = match self.layout.forced_end(answer, pos) {
                true => self.special.eos,
                false => {
                    checked += 1;
                    first?
                }
            };
            canvas[self.prompt_len + pos] = tok;
        }
        Some((canvas, checked))
    }

    /// Runs the model and returns the logits of the answer positions
    /// `masked` as a CPU tensor `[masked.len(), V]` in the dtype
    /// [`Decoder::forward`] leaves (rows are read with [`row_f32`]).
    fn logits(&mut self, masked: &[usize]) -> Result<Tensor> {
        let t0 = Instant::now();
        let logits = match self.guess.take() {
            Some((canvas, logits)) if canvas == self.canvas => logits,
            _ => {
                let canvas = self.canvas.clone();
                self.forward(&canvas)?
            }
        };
        let dims = logits.dims().to_vec();
        if dims.len() != 2 || dims[0] != self.canvas.len() {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "logits of shape {dims:?} for a canvas of {} tokens",
                    self.canvas.len()
                ),
            ));
        }
        let idx: Vec<u32> = masked
            .iter()
            .map(|&p| (self.prompt_len + p) as u32)
            .collect();
        let idx = Tensor::new(idx.as_slice(), logits.device()).map_err(model_err)?;
        let rows = logits
            .index_select(&idx, 0)
            .and_then(|r| r.to_device(&Device::Cpu))
            .map_err(model_err)?;
        self.out.time_model += t0.elapsed();
        Ok(rows)
    }

    /// What [`RowRules::row`] needs of the decoder, borrowed.
    fn row_rules<'r>(&'r self, end_ids: &'r [u32], constrained: bool) -> RowRules<'r> {
        RowRules {
            cfg: self.cfg,
            special: self.special,
            layout: &self.layout,
            answer: self.answer(),
            end_ids,
            constrained,
        }
    }

    /// Commits `tok` at answer position `pos` if the canvas stays
    /// completable. From the second proposal at `pos` on, a proposal whose
    /// partial output is `left · bytes · right` of the insertion point at
    /// `pos` is answered by it (reusing earlier checks, [`crate::mask`]);
    /// any other by a check.
    fn try_commit(&mut self, pos: usize, tok: u32, reuse: &mut Reuse<'a>) -> Result<bool> {
        let at = self.prompt_len + pos;
        let is_end = tok == self.special.eos || tok == self.special.pad;
        if is_end && self.layout.forced_end(self.answer(), pos) {
            self.canvas[at] = tok;
            return Ok(true);
        }
        self.canvas[at] = tok;
        let t0 = Instant::now();
        let ok = match self
            .layout
            .view(self.codec, &self.canvas[self.prompt_len..])
        {
            None => false,
            Some(v) => self.judge(pos, tok, v, reuse)?,
        };
        self.out.time_constraint += t0.elapsed();
        if !ok {
            self.canvas[at] = self.special.mask;
        }
        Ok(ok)
    }

    /// The step's first proposals decided by one check (see "Proposals
    /// together" in the module docs): the first `quota` candidates of
    /// `cands` (ranked), each with its sampled token (EOS where an EOS
    /// committed before it in this order forces it), written into the
    /// canvas together and kept iff that canvas is completable. Returns
    /// `false`, the canvas unchanged, when they are refused or the rule
    /// does not apply (fewer than two that need a check — a forced EOS
    /// needs none —, a position without a token, hole limits, first
    /// proposals lately refused too often: [`Firsts`]); the proposals then
    /// go one by one.
    fn commit_together(
        &mut self,
        cands: &[(usize, usize, u64, Option<u32>, f64)],
        quota: usize,
    ) -> Result<bool> {
        if quota < 2
            || cands.len() < quota
            || self.cfg.limit_holes
            || self.cfg.one_by_one
            || self.cfg.fresh_checks
            || !self.firsts.mostly_kept()
        {
            return Ok(false);
        }
        let Some((canvas, checked)) = self.firsts_committed(cands, quota) else {
            return Ok(false);
        };
        if checked < 2 {
            // One by one costs at most one check too.
            return Ok(false);
        }
        let t0 = Instant::now();
        let ok = match self.layout.view(self.codec, &canvas[self.prompt_len..]) {
            None => false,
            Some(v) => self.check_view(&v)?,
        };
        self.out.time_constraint += t0.elapsed();
        if ok {
            self.canvas = canvas;
            self.firsts.note(checked, checked);
        } else {
            self.refused = Some(canvas);
        }
        Ok(ok)
    }

    /// Whether `view` (the canvas with `tok` at `pos`) is completable
    /// (within its holes' masks when [`DecodeConfig::limit_holes`] is set).
    fn judge(
        &mut self,
        pos: usize,
        tok: u32,
        view: AnswerView,
        reuse: &mut Reuse<'a>,
    ) -> Result<bool> {
        let c = self.constraint.expect("constrained");
        let bytes = self.codec.token_bytes(tok);
        if matches!(reuse, Reuse::First) {
            *reuse = Reuse::Build;
            let ok = match self.holds_refused() {
                true => {
                    self.out.known_refusals += 1;
                    false
                }
                false => self.check_view(&view)?,
            };
            self.firsts.note(ok as u32, 1);
            return Ok(ok);
        }
        let limits = self.limits(&view);
        if matches!(reuse, Reuse::Build) && !bytes.is_empty() {
            let o = self.layout.offset_of(self.codec, self.answer(), pos);
            let (left, rest) = view.partial.split_at(o);
            let (_, right) = rest.split_at(bytes.len());
            let at = Insertion::new(c, &left, &right)?.with_limits(limits.clone());
            let answers = at.is_narrow() && !self.cfg.fresh_checks;
            *reuse = Reuse::At {
                point: Box::new((at, right)),
                answers,
            };
        }
        match reuse {
            Reuse::At {
                point,
                answers: true,
            } if !bytes.is_empty() => {
                let (at, right) = &mut **point;
                let mut same = at.left().clone();
                same.push_text(bytes);
                same.append(right);
                if same == view.partial && at.limits() == limits.as_slice() {
                    at.allows(bytes)
                } else {
                    self.check_view(&view)
                }
            }
            _ => self.check_view(&view),
        }
    }

    /// The allowed ids at the position of `reuse`'s insertion point, for a
    /// vocabulary of `n` ids: those whose bytes keep the canvas completable,
    /// and every id without bytes (EOS, pad: judged by a check when drawn).
    /// `None` when there is no point (only byte-less tokens were tried), or
    /// when no hole follows the position in a fenced answer: there a token
    /// may complete the closing fence, which the canvas's text drops, so
    /// inserting bytes at the point is not what the canvas does.
    fn mask(&mut self, reuse: &mut Reuse<'a>, n: usize) -> Result<Option<Vec<bool>>> {
        let Reuse::At { point, .. } = reuse else {
            return Ok(None);
        };
        if self.layout.fence.is_some() && point.1.n_holes() == 0 {
            return Ok(None);
        }
        let t0 = Instant::now();
        let codec = self.codec;
        let vocab = self.vocab.get_or_insert_with(|| codec.vocabulary(n));
        let mut allowed = point.0.mask(vocab)?;
        for (id, a) in allowed.iter_mut().enumerate() {
            *a |= codec.token_bytes(id as u32).is_empty();
        }
        self.out.time_constraint += t0.elapsed();
        self.out.masks += 1;
        Ok(Some(allowed))
    }

    /// Whether the canvas holds every token of this step's refused
    /// canvas ([`Decoder::refused`]) at its position: it then has no more
    /// completions than that one (none), and is refused without a check —
    /// after proposals together are refused, going one by one comes back
    /// to that very canvas whenever all but the last of them are kept.
    fn holds_refused(&self) -> bool {
        let mask = self.special.mask;
        self.refused.as_ref().is_some_and(|r| {
            r.len() == self.canvas.len()
                && r.iter()
                    .zip(&self.canvas)
                    .all(|(&a, &b)| a == mask || a == b)
        })
    }

    fn check_canvas(&mut self, canvas: &[u32]) -> Result<bool> {
        let t0 = Instant::now();
        let ok = match self.layout.view(self.codec, &canvas[self.prompt_len..]) {
            None => false,
            Some(v) => self.check_view(&v)?,
        };
        self.out.time_constraint += t0.elapsed();
        Ok(ok)
    }

    /// The byte limit of each hole of `view` when
    /// [`DecodeConfig::limit_holes`] is set (empty otherwise).
    fn limits(&self, view: &AnswerView) -> Vec<Option<usize>> {
        if self.cfg.limit_holes {
            view.hole_limits(self.codec.max_token_bytes())
        } else {
            Vec::new()
        }
    }

    /// A plain check of `view`, within its holes' masks when
    /// [`DecodeConfig::limit_holes`] is set.
    fn check_view(&mut self, view: &AnswerView) -> Result<bool> {
        let c = self.constraint.expect("constrained");
        let limits = self.limits(view);
        self.out.checks += 1;
        if limits.is_empty() {
            c.check(&view.partial)
        } else {
            c.check_within(&view.partial, &limits)
        }
    }

    /// `ConMinus` failure: the output is what was decoded, marked failed.
    fn give_up(mut self) -> Result<DecodeOutput> {
        self.out.failed = true;
        self.finish()
    }

    /// Fills the remaining holes from the witness completion (`Con`).
    fn fill_from_witness(&mut self) -> Result<()> {
        self.out.used_witness = true;
        let t0 = Instant::now();
        let view = self.layout.view(self.codec, self.answer());
        let verdict = match &view {
            Some(v) => self
                .constraint
                .expect("constrained")
                .completable_best(&v.partial)?,
            None => Verdict::NotCompletable,
        };
        let spent = t0.elapsed();
        self.out.time_constraint += spent;
        self.out.time_witness += spent;
        let (Some(view), Verdict::Completable(done)) = (view, verdict) else {
            // Only when the prefill itself is not completable.
            self.out.failed = true;
            return Ok(());
        };
        if !self.layout.regions.is_empty() {
            self.out.region_fills =
                self.layout
                    .region_fills(self.codec, self.answer(), &view, &done.fills);
        }
        if let Some(canvas) = self.write_fills(&view, &done.fills)? {
            let text = self
                .layout
                .final_text(self.codec, &canvas[self.prompt_len..]);
            if text == done.text {
                self.canvas = canvas;
                return Ok(());
            }
        }
        // Text fallback.
        self.out.text_fallback = true;
        if !self.layout.regions.is_empty() {
            // The template's shape stays: remaining masks become EOS and the
            // text is the witness's (region_fills holds each region's fill).
            for t in self.canvas[self.prompt_len..].iter_mut() {
                if *t == self.special.mask {
                    *t = self.special.eos;
                }
            }
            self.out.text = done.text;
            return Ok(());
        }
        let body = &done.text[self.cfg.prefill.len().min(done.text.len())..];
        let mut raw = self.layout.fence_open().unwrap_or_default();
        raw.extend_from_slice(body);
        if self.cfg.fence.is_some() {
            raw.extend_from_slice(b"\n```");
        }
        let mut canvas = self.canvas[..self.prompt_len].to_vec();
        canvas.extend(self.codec.encode(&raw)?);
        // Padded with EOS to the canvas length when it fits, else one EOS.
        let full = self.prompt_len + self.cfg.max_tokens;
        let pad = full.saturating_sub(canvas.len()).max(1);
        canvas.extend(std::iter::repeat_n(self.special.eos, pad));
        self.canvas = canvas;
        self.out.text = done.text;
        Ok(())
    }

    /// The canvas with each hole's fill encoded into its mask run, or `None`
    /// when they do not fit (see the module docs).
    fn write_fills(&self, view: &AnswerView, fills: &[Vec<u8>]) -> Result<Option<Vec<u32>>> {
        if view.runs.len() != fills.len() {
            return Ok(None);
        }
        let mut canvas = self.canvas.clone();
        if view.run_holes.iter().enumerate().any(|(k, &h)| h != k) {
            // Runs merged into one hole: no fill per run.
            return Ok(None);
        }
        for (k, (run, fill)) in view.runs.iter().zip(fills).enumerate() {
            let ids = self.codec.encode(fill)?;
            let may_pad = self.layout.may_pad(view, k, self.answer());
            if ids.len() > run.len() || (ids.len() < run.len() && !may_pad) {
                return Ok(None);
            }
            for (j, p) in run.clone().enumerate() {
                canvas[self.prompt_len + p] = ids.get(j).copied().unwrap_or(self.special.eos);
            }
        }
        // Masks after the end of text become EOS.
        for t in canvas[self.prompt_len..].iter_mut() {
            if *t == self.special.mask {
                *t = self.special.eos;
            }
        }
        Ok(Some(canvas))
    }

    fn finish(mut self) -> Result<DecodeOutput> {
        let answer = &self.canvas[self.prompt_len..];
        self.out.answer = self.layout.answer_bytes(self.codec, answer);
        if !self.out.text_fallback {
            self.out.text = self.layout.final_text(self.codec, answer);
        }
        self.out.tokens = self.canvas.clone();
        if !self.layout.regions.is_empty() && !self.out.text_fallback {
            self.out.region_fills = self.layout.region_texts(self.codec, answer);
        }
        self.out.valid = match self.constraint {
            Some(c) if !self.out.failed || self.cfg.mode == Mode::Vanilla => {
                let t0 = Instant::now();
                let ok = c.check(&Partial::complete(&self.out.text))?;
                self.out.time_constraint += t0.elapsed();
                ok
            }
            Some(_) => false,
            None => true,
        };
        Ok(self.out)
    }
}

/// The authors' LLaDA asserts: the answer splits into whole blocks and the
/// steps evenly over them.
fn llada_reference_split(gen_length: usize, block_length: usize, steps: usize) -> Result<()> {
    let blocks = gen_length / block_length.max(1);
    if !gen_length.is_multiple_of(block_length.max(1))
        || blocks == 0
        || !steps.is_multiple_of(blocks)
    {
        return Err(Error::new(
            ErrorKind::Setting,
            format!(
                "reference compatibility: LLaDA's generate.py needs the answer length ({gen_length}) \
                 to be a multiple of the block length ({block_length}) and the steps ({steps}) a \
                 multiple of the number of blocks"
            ),
        ));
    }
    Ok(())
}

/// The probability of `tok` under the softmax of `raw` with the ids `out`
/// taken out; 0 for those ids themselves.
fn softmax_without(raw: &[f32], tok: u32, out: &[u32]) -> f64 {
    let mut logp: Vec<f64> = raw.iter().map(|&x| f64::from(x)).collect();
    for &o in out {
        if let Some(x) = logp.get_mut(o as usize) {
            *x = f64::NEG_INFINITY;
        }
    }
    normalize_log(&mut logp);
    logp.get(tok as usize).map_or(0.0, |x| x.exp())
}

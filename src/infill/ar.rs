//! Region-by-region infilling with an autoregressive FIM model (see the
//! module docs of [`crate::infill`]).

use std::sync::Arc;
use std::time::Instant;

use super::{InfillOutput, Mode, Template};
use crate::completable::{Constraint, Verdict};
use crate::decode::sample::{ArchStyle, RowSampler, SampleParams};
use crate::decode::{Alg, Remasking};
use crate::error::{Error, ErrorKind, Result};
use crate::mask::{Insertion, Vocabulary};
use crate::model::{CausalLm, FimFormat, TextCodec};
use crate::partial::{Partial, Segment};
use crate::rng::SplitMix64;

/// Settings of [`infill_ar`].
#[derive(Clone, Debug, PartialEq)]
pub struct ArInfillConfig {
    /// Constraint mode.
    pub mode: Mode,
    /// Sampling temperature (0: greedy).
    pub temperature: f64,
    /// Nucleus mass (1: off).
    pub top_p: f64,
    /// Seed of all randomness.
    pub seed: u64,
    /// Rejections allowed in the whole infill before `ConMinus` gives up and
    /// `Con` finishes from the witness.
    pub max_rejections: usize,
    /// Tokens per region at most.
    pub max_tokens: usize,
    /// What stands for a later, still unfilled region in a prompt's suffix.
    pub placeholder: Vec<u8>,
    /// After this many rejections at one position, the allowed-token mask
    /// of the position is computed ([`crate::mask`]) and the token drawn
    /// from the masked distribution (the distribution rejection sampling
    /// without a limit draws from); `max_rejections` then no longer ends
    /// the infill. `Some(0)`, masks ahead: every position's mask is
    /// computed in a second thread while the model's forward pass for that
    /// position runs, and the token drawn from it (no proposal is refused;
    /// greedy decoding gives the tokens unlimited rejection sampling gives).
    /// On a GPU the mask then costs only what it takes beyond the forward
    /// pass ([`InfillOutput::time_overlapped`]). `None`: rejection sampling
    /// as in the paper.
    pub mask_after: Option<usize>,
    /// Answer every proposal by a fresh [`Constraint::check`] of the
    /// template with the region so far and the token (as in the paper):
    /// no answers from the insertion point, no replayed hole exits. The
    /// same tokens either way (masks still come from the insertion point);
    /// for comparison. Off by default; masks ahead check no proposal, so
    /// with `mask_after: Some(0)` it is a setting error.
    pub fresh_checks: bool,
}

impl Default for ArInfillConfig {
    /// `Con`, greedy, 100 rejections, 256 tokens per region, empty
    /// placeholder, masks ahead (`mask_after: Some(0)`).
    fn default() -> ArInfillConfig {
        ArInfillConfig {
            mode: Mode::Con,
            temperature: 0.0,
            top_p: 1.0,
            seed: 0,
            max_rejections: 100,
            max_tokens: 256,
            placeholder: Vec::new(),
            mask_after: Some(0),
            fresh_checks: false,
        }
    }
}

/// Checks that some fill of the template's regions is in the grammar; if
/// not, names the first chunk that no fill of the regions before it (with
/// everything after it open) can reach.
///
/// # Errors
/// [`ErrorKind::Partial`] "the template is not completable", or a
/// constraint error.
pub fn check_template(constraint: &Constraint, template: &Template) -> Result<()> {
    if constraint.check(&template.partial())? {
        return Ok(());
    }
    let chunks = template.chunks();
    for k in 0..chunks.len() {
        let mut p = Partial::new().text(&chunks[0]);
        for c in &chunks[1..=k] {
            p.push_hole();
            p.push_text(c);
        }
        p.push_hole();
        if !constraint.check(&p)? {
            let at = if k == 0 {
                "its first chunk (before region 1)".to_string()
            } else {
                format!("chunk {k} (after region {k})")
            };
            return Err(Error::new(
                ErrorKind::Partial,
                format!(
                    "the template is not completable: no fill of the regions reaches past {at}"
                ),
            ));
        }
    }
    Err(Error::new(
        ErrorKind::Partial,
        "the template is not completable: its last chunk cannot end the text",
    ))
}

struct Run<'a> {
    model: &'a mut dyn CausalLm,
    codec: &'a dyn TextCodec,
    fim: &'a FimFormat,
    constraint: Option<&'a Constraint>,
    template: &'a Template,
    cfg: &'a ArInfillConfig,
    /// Ids that may be sampled: ordinary tokens with bytes, and the stops.
    allowed: Vec<bool>,
    rng: SplitMix64,
    fills: Vec<Vec<u8>>,
    out: InfillOutput,
    /// The model's vocabulary as a trie, asked of the codec at the first
    /// mask (a tokenizer keeps it for every later run).
    vocab: Option<Arc<Vocabulary>>,
    /// The first region's insertion points, made where the template was
    /// checked (their first answer), for the region's proposals.
    first: Option<Points<'a>>,
}

/// The insertion points of the region being written, after what it holds
/// so far: `open`, with the region open (where tokens are proposed and
/// masked), and `closed`, with the region closed — whether it may end
/// there — made the first time that is asked and moved up to the region's
/// end each time it is asked again (with masks ahead, in the mask's
/// thread), so that a region's later questions search the charts its
/// first one built instead of checking the whole template each (with masks
/// ahead, one per token).
struct Points<'a> {
    open: Insertion<'a>,
    /// The closed point and how many bytes of the region it is past.
    closed: Option<(Insertion<'a>, usize)>,
    /// The text before the region, and the rest of the template after it
    /// (the closed point's `right`).
    left: Partial,
    rest: Partial,
}

impl<'a> Points<'a> {
    /// Whether the region may end after `fill`, what it holds (the bytes
    /// `open` was moved past).
    fn closes(&mut self, c: &'a Constraint, fill: &[u8]) -> Result<bool> {
        let closed = match &mut self.closed {
            Some((closed, past)) => {
                if fill.len() > *past {
                    closed.advance(&fill[*past..]);
                    *past = fill.len();
                }
                closed
            }
            None => {
                let mut left = self.left.clone();
                if !fill.is_empty() {
                    left.push_text(fill);
                }
                let at = Insertion::new(c, &left, &self.rest)?.expecting_many();
                &mut self.closed.insert((at, fill.len())).0
            }
        };
        closed.allows(b"")
    }
}

/// Fills `template` with an autoregressive FIM model, region by region (see
/// the module docs). `codec` must be the model's tokenizer and `fim` its
/// prompt format. `constraint` is required for `ConMinus`/`Con`; in
/// `Vanilla` it only decides [`InfillOutput::valid`].
///
/// # Errors
/// A model error (including a prompt longer than the model's context), a
/// constraint error, `ConMinus`/`Con` without a constraint, or a template
/// that is not completable ([`check_template`]) in a constrained mode.
pub fn infill_ar(
    model: &mut dyn CausalLm,
    codec: &dyn TextCodec,
    fim: &FimFormat,
    constraint: Option<&Constraint>,
    template: &Template,
    cfg: &ArInfillConfig,
) -> Result<InfillOutput> {
    let t = cfg.temperature;
    crate::decode::setting(t.is_finite() && t >= 0.0, || {
        format!("temperature must be a finite number ≥ 0, not {t}")
    })?;
    let p = cfg.top_p;
    crate::decode::setting(p.is_finite() && p > 0.0 && p <= 1.0, || {
        format!("top-p must be in (0, 1], not {p}")
    })?;
    crate::decode::setting(!(cfg.fresh_checks && cfg.mask_after == Some(0)), || {
        "fresh checks answer proposals, and masks ahead (mask_after 0) make none: \
         use masks after rejections or none"
            .to_string()
    })?;
    let constrained = cfg.mode != Mode::Vanilla;
    if constrained {
        let Some(c) = constraint else {
            return Err(Error::new(
                ErrorKind::Partial,
                "constrained infilling needs a grammar",
            ));
        };
        let t0 = Instant::now();
        // The partial outputs checked next differ by a token each.
        let _kept = (!cfg.fresh_checks).then(|| c.replaying());
        let mut run = Run::new(model, codec, fim, constraint, template, cfg);
        if cfg.fresh_checks {
            check_template(c, template)?;
            run.out.time_constraint += t0.elapsed();
            return run.go();
        }
        run.out.time_constraint += t0.elapsed();
        // The template is completable exactly when the empty insertion at
        // the first region's point is (the point's `right` begins with the
        // region's hole): that point's first answer, whose work (the charts
        // of the text before and after it) the region's proposals build on,
        // instead of a check of the whole template of its own. Where it is
        // refused, the check says where the template fails.
        let mut first = run.insertion(0)?;
        let t0 = Instant::now();
        let completable = first.open.allows(b"")?;
        run.out.time_constraint += t0.elapsed();
        if !completable {
            let t0 = Instant::now();
            let checked = check_template(c, template);
            run.out.time_constraint += t0.elapsed();
            checked?;
        }
        run.first = Some(first);
        return run.go();
    }
    Run::new(model, codec, fim, constraint, template, cfg).go()
}

/// How a region ended.
enum End {
    /// Closed by a stop token or the token limit.
    Closed,
    /// Rejections ran out.
    OutOfRejections,
}

impl<'a> Run<'a> {
    fn new(
        model: &'a mut dyn CausalLm,
        codec: &'a dyn TextCodec,
        fim: &'a FimFormat,
        constraint: Option<&'a Constraint>,
        template: &'a Template,
        cfg: &'a ArInfillConfig,
    ) -> Run<'a> {
        let v = model.vocab_size();
        let allowed = (0..v as u32)
            .map(|id| !codec.token_bytes(id).is_empty() || fim.stops.contains(&id))
            .collect();
        Run {
            model,
            codec,
            fim,
            constraint,
            template,
            cfg,
            allowed,
            rng: SplitMix64::new(cfg.seed),
            fills: Vec::new(),
            out: InfillOutput::default(),
            vocab: None,
            first: None,
        }
    }

    fn go(mut self) -> Result<InfillOutput> {
        let n = self.template.n_regions();
        for r in 0..n {
            match self.region(r)? {
                End::Closed => {}
                End::OutOfRejections => {
                    if self.cfg.mode == Mode::ConMinus {
                        self.out.failed = true;
                        while self.fills.len() < n {
                            self.fills.push(Vec::new());
                        }
                    }
                    break;
                }
            }
        }
        self.finish()
    }

    fn constraint(&self) -> &'a Constraint {
        self.constraint
            .expect("constrained modes have a constraint")
    }

    fn check(&mut self, p: &Partial) -> Result<bool> {
        let t0 = Instant::now();
        let ok = self.constraint().check(p)?;
        self.out.time_constraint += t0.elapsed();
        Ok(ok)
    }

    fn forward(&mut self, tokens: &[u32], offset: usize) -> Result<Vec<f32>> {
        let t0 = Instant::now();
        let mut row = self.model.forward(tokens, offset)?;
        self.out.forward_passes += 1;
        self.out.time_model += t0.elapsed();
        if row.len() != self.allowed.len() {
            return Err(Error::new(
                ErrorKind::Model,
                format!(
                    "logits of width {} for a vocabulary of {}",
                    row.len(),
                    self.allowed.len()
                ),
            ));
        }
        for (x, &ok) in row.iter_mut().zip(&self.allowed) {
            if !ok {
                *x = f32::NEG_INFINITY;
            }
        }
        Ok(row)
    }

    /// The prompt of region `r`: prefix = everything so far, suffix = the
    /// rest of the template with later regions as the placeholder.
    fn prompt(&self, r: usize) -> Result<Vec<u32>> {
        let chunks = self.template.chunks();
        let prefix = self.template.fill(&self.fills);
        let prefix = &prefix[..prefix.len() - chunks[r + 1..].iter().map(Vec::len).sum::<usize>()];
        let mut suffix = chunks[r + 1].clone();
        for c in &chunks[r + 2..] {
            suffix.extend_from_slice(&self.cfg.placeholder);
            suffix.extend_from_slice(c);
        }
        self.fim.prompt(self.codec, prefix, &suffix)
    }

    /// Writes region `r` into `self.fills`.
    fn region(&mut self, r: usize) -> Result<End> {
        let constrained = self.cfg.mode != Mode::Vanilla;
        let params = SampleParams {
            style: ArchStyle::Dream,
            temperature: self.cfg.temperature,
            top_p: self.cfg.top_p,
            top_k: None,
            alg: Alg::MaskgitPlus,
            remasking: Remasking::LowConfidence,
        };
        let prompt = self.prompt(r)?;
        let t0 = Instant::now();
        self.model.clear()?;
        self.out.time_model += t0.elapsed();
        // The insertion point at the region's end: what is written so far
        // before it, the open region and the rest of the template after it.
        let mut point = match (constrained, self.first.take()) {
            (true, Some(first)) if r == 0 => Some(first),
            (true, _) => Some(self.insertion(r)?),
            (false, _) => None,
        };
        // Masks ahead: every position's mask is computed while the model's
        // forward pass for it runs.
        let ahead = constrained && self.cfg.mask_after == Some(0);
        let mut fill: Vec<u8> = Vec::new();
        let (mut row, mut ready) = self.forward_ahead(&prompt, 0, point.as_mut(), ahead, &fill)?;
        for offset in prompt.len()..prompt.len() + self.cfg.max_tokens {
            let seed = self.rng.next_u64();
            let chosen = match ready.take() {
                Some(allowed) => draw_masked(&row, &params, seed, &allowed),
                None if ahead => {
                    // The position's mask ran out of its budget: rejection
                    // sampling there, as in the paper.
                    self.propose(&row, &params, seed, point.as_mut(), r, &fill, None)?
                }
                None => {
                    let k = self.cfg.mask_after;
                    self.propose(&row, &params, seed, point.as_mut(), r, &fill, k)?
                }
            };
            let Some(t) = chosen else {
                // Every allowed id was rejected, or (masks ahead) none is
                // allowed.
                return self.out_of_rejections(r, fill);
            };
            if self.fim.stops.contains(&t) {
                self.fills.push(fill);
                return Ok(End::Closed);
            }
            let bytes = self.codec.token_bytes(t);
            fill.extend_from_slice(bytes);
            if let Some(at) = point.as_mut() {
                let t0 = Instant::now();
                at.open.advance(bytes);
                self.out.time_constraint += t0.elapsed();
            }
            self.out.tokens += 1;
            (row, ready) = self.forward_ahead(&[t], offset, point.as_mut(), ahead, &fill)?;
        }
        // The token limit: close the region if the grammar allows.
        if constrained && !self.closes(point.as_mut(), r, &fill)? {
            return self.out_of_rejections(r, fill);
        }
        self.fills.push(fill);
        Ok(End::Closed)
    }

    /// The token at a position by rejection sampling: the sampler's
    /// proposals in order, each kept only if the constraint allows it at
    /// `point` (after `fill` in region `r`); after `mask_after` rejections
    /// here the rest are drawn from the position's mask. `None`: every
    /// allowed id was refused, or the rejections ran out.
    #[allow(clippy::too_many_arguments)]
    fn propose(
        &mut self,
        row: &[f32],
        params: &SampleParams,
        seed: u64,
        mut point: Option<&mut Points<'a>>,
        r: usize,
        fill: &[u8],
        mask_after: Option<usize>,
    ) -> Result<Option<u32>> {
        // Greedy: the first proposal is the row's clear maximum, and the
        // sampler (a log-softmax of the whole row and its nucleus) is built
        // only if it is refused — the same draws.
        let build = || RowSampler::new(row, params, seed);
        let mut sampler = None;
        let mut tok = match RowSampler::greedy_first(row, params) {
            Some(t) => Some(t),
            None => sampler.insert(build()).first(),
        };
        let mut here = 0;
        let mut masked = false;
        let chosen = loop {
            let Some(t) = tok else { break None };
            let ok = match point.as_deref_mut() {
                None => true,
                Some(at) if self.fim.stops.contains(&t) => self.closes(Some(at), r, fill)?,
                Some(_) if self.cfg.fresh_checks => {
                    let mut with = fill.to_vec();
                    with.extend_from_slice(self.codec.token_bytes(t));
                    let p = self.template.partial_at(&self.fills, r, &with, true);
                    self.check(&p)?
                }
                Some(at) => {
                    let t0 = Instant::now();
                    let ok = at.open.allows(self.codec.token_bytes(t))?;
                    self.out.time_constraint += t0.elapsed();
                    ok
                }
            };
            if ok {
                break Some(t);
            }
            self.out.rejections += 1;
            here += 1;
            match mask_after {
                Some(k)
                    if !masked && (here >= k || self.out.rejections >= self.cfg.max_rejections) =>
                {
                    let at = point
                        .as_deref_mut()
                        .expect("a rejection means a constraint");
                    let allowed = self.mask(at, r, fill)?;
                    sampler.get_or_insert_with(build).restrict(&allowed);
                    masked = true;
                }
                Some(_) => {}
                None if self.out.rejections >= self.cfg.max_rejections => {
                    return Ok(None);
                }
                None => {}
            }
            tok = sampler.get_or_insert_with(build).next_token();
        };
        Ok(chosen)
    }

    /// The insertion points at the start of region `r` (the regions before
    /// it filled, the later ones open).
    fn insertion(&mut self, r: usize) -> Result<Points<'a>> {
        let t0 = Instant::now();
        let p = self.template.partial_at(&self.fills, r, b"", true);
        let (mut left, mut right) = (Partial::new(), Partial::new());
        let mut before = true;
        for seg in p.segments() {
            match seg {
                Segment::Text(t) if before => left.push_text(t),
                Segment::Hole if before => {
                    before = false;
                    right.push_hole();
                }
                Segment::Text(t) => right.push_text(t),
                Segment::Hole => right.push_hole(),
            }
        }
        // The point moves along the region, token by token.
        let open = Insertion::new(self.constraint(), &left, &right).map(Insertion::expecting_many);
        // The region closed: the rest after its hole.
        let mut rest = Partial::new();
        for seg in right.segments().iter().skip(1) {
            match seg {
                Segment::Text(t) => rest.push_text(t),
                Segment::Hole => rest.push_hole(),
            }
        }
        self.out.time_constraint += t0.elapsed();
        Ok(Points {
            open: open?,
            closed: None,
            left,
            rest,
        })
    }

    /// Whether region `r` may end with `fill`: asked of its points `at`
    /// (see [`Points`]), or with fresh checks (or no points) by a check of
    /// the template.
    fn closes(&mut self, at: Option<&mut Points<'a>>, r: usize, fill: &[u8]) -> Result<bool> {
        match at.filter(|_| !self.cfg.fresh_checks) {
            Some(at) => {
                let t0 = Instant::now();
                let ok = at.closes(self.constraint(), fill);
                self.out.time_constraint += t0.elapsed();
                ok
            }
            None => {
                let p = self.template.partial_at(&self.fills, r, fill, false);
                self.check(&p)
            }
        }
    }

    /// The ids the model may produce at the point `at` (after `fill` in
    /// region `r`): ordinary tokens the constraint allows there, and the
    /// stops if the region may end.
    fn mask(&mut self, at: &mut Points<'a>, r: usize, fill: &[u8]) -> Result<Vec<bool>> {
        let t0 = Instant::now();
        let codec = self.codec;
        let n = self.allowed.len();
        let vocab = self.vocab.get_or_insert_with(|| codec.vocabulary(n));
        let allowed = at.open.mask(vocab)?;
        self.out.time_constraint += t0.elapsed();
        self.out.masks += 1;
        let stop = self.closes(Some(at), r, fill)?;
        Ok(self.permitted(allowed, stop))
    }

    /// The ids the model may produce, from the insertion point's mask over
    /// the vocabulary and whether the region may end (the stops). An id
    /// that may be sampled at all and is not a stop has bytes
    /// (`self.allowed`), so one pass over the ids and one over the stops.
    fn permitted(&self, mut allowed: Vec<bool>, stop: bool) -> Vec<bool> {
        for (a, &ok) in allowed.iter_mut().zip(&self.allowed) {
            *a &= ok;
        }
        for &s in &self.fim.stops {
            if let Some(a) = allowed.get_mut(s as usize) {
                *a = stop && self.allowed[s as usize];
            }
        }
        allowed
    }

    /// The model's row after `tokens` and, with `ahead`, the ids it may
    /// produce at `at` (after `fill`, what the region holds): the mask is computed in
    /// a second thread while the forward pass runs, so it costs the decode
    /// only what it takes beyond the forward pass
    /// ([`InfillOutput::time_overlapped`] is the rest). A mask that runs
    /// out of its work or memory budget gives no ids (`None`): the position
    /// falls back to rejection sampling, so the relations a mask decides
    /// beyond the proposals' do not end the infill with a budget error.
    fn forward_ahead(
        &mut self,
        tokens: &[u32],
        offset: usize,
        at: Option<&mut Points<'a>>,
        ahead: bool,
        fill: &[u8],
    ) -> Result<(Vec<f32>, Option<Vec<bool>>)> {
        let Some(at) = at.filter(|_| ahead) else {
            return Ok((self.forward(tokens, offset)?, None));
        };
        let t0 = Instant::now();
        let (codec, n) = (self.codec, self.allowed.len());
        let vocab = self
            .vocab
            .get_or_insert_with(|| codec.vocabulary(n))
            .clone();
        self.out.time_constraint += t0.elapsed();
        let c = self.constraint();
        let (row, job, waited) = std::thread::scope(|s| {
            let job = s.spawn(move || {
                let t0 = Instant::now();
                let ids = at
                    .open
                    .mask(&vocab)
                    .and_then(|ids| Ok((ids, at.closes(c, fill)?)));
                (ids, t0.elapsed())
            });
            let row = self.forward(tokens, offset);
            let t0 = Instant::now();
            let job = job.join();
            (row, job, t0.elapsed())
        });
        let (ids, spent) = job.unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        self.out.time_constraint += spent;
        self.out.time_overlapped += spent.saturating_sub(waited);
        self.out.masks += 1;
        let row = row?;
        match ids {
            Ok((ids, stop)) => Ok((row, Some(self.permitted(ids, stop)))),
            Err(e) if matches!(e.kind(), ErrorKind::Budget | ErrorKind::SizeLimit) => {
                self.out.masks_abandoned += 1;
                Ok((row, None))
            }
            Err(e) => Err(e),
        }
    }

    /// Region `r` cannot go on: `ConMinus` keeps what it has; `Con` finishes
    /// it and every later region from the witness.
    fn out_of_rejections(&mut self, r: usize, fill: Vec<u8>) -> Result<End> {
        if self.cfg.mode != Mode::Con {
            self.fills.push(fill);
            return Ok(End::OutOfRejections);
        }
        self.out.used_witness = true;
        let (p, holes) = self
            .template
            .partial_with_holes(&self.fills, r, &fill, true);
        let t0 = Instant::now();
        let verdict = self.constraint().completable_best(&p)?;
        let spent = t0.elapsed();
        self.out.time_constraint += spent;
        self.out.time_witness += spent;
        let Verdict::Completable(done) = verdict else {
            // Unreachable after a successful check of the same partial.
            self.fills.push(fill);
            self.out.failed = true;
            return Ok(End::OutOfRejections);
        };
        let hole_fill = |h: Option<usize>| {
            h.and_then(|h| done.fills.get(h))
                .cloned()
                .unwrap_or_default()
        };
        let mut cur = fill;
        cur.extend(hole_fill(holes[r]));
        self.fills.push(cur);
        for h in &holes[r + 1..] {
            self.fills.push(hole_fill(*h));
        }
        Ok(End::OutOfRejections)
    }

    fn finish(mut self) -> Result<InfillOutput> {
        while self.fills.len() < self.template.n_regions() {
            self.fills.push(Vec::new());
        }
        self.out.text = self.template.fill(&self.fills);
        self.out.valid = match self.constraint {
            Some(c) => {
                let t0 = Instant::now();
                let ok = c.check(&Partial::complete(&self.out.text))?;
                self.out.time_constraint += t0.elapsed();
                ok
            }
            None => true,
        };
        self.out.fills = self.fills;
        Ok(self.out)
    }
}

/// The token drawn at a position whose mask is known: the first draw if
/// `allowed` holds it, else a draw from the masked distribution (the
/// distribution rejection sampling without a limit draws from; greedy: the
/// best allowed id, the token rejection sampling would end on). `None`
/// when nothing is allowed.
fn draw_masked(row: &[f32], params: &SampleParams, seed: u64, allowed: &[bool]) -> Option<u32> {
    let ok = |t: u32| allowed.get(t as usize).copied().unwrap_or(false);
    if let Some(t) = RowSampler::greedy_first(row, params) {
        if ok(t) {
            return Some(t);
        }
        // The best allowed id, where it is clearly best.
        let masked: Vec<f32> = (0..row.len())
            .map(|i| match ok(i as u32) {
                true => row[i],
                false => f32::NEG_INFINITY,
            })
            .collect();
        if let Some(t) = RowSampler::greedy_first(&masked, params) {
            return Some(t);
        }
    }
    let mut sampler = RowSampler::new(row, params, seed);
    match sampler.first() {
        Some(t) if ok(t) => Some(t),
        _ => {
            sampler.restrict(allowed);
            sampler.next_token()
        }
    }
}

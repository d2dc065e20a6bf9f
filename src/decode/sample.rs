//! Sampling one position: its token and its confidence, and further draws
//! after a rejection.
//!
//! A [`RowSampler`] is built from one row of logits. Ids that must never be
//! produced (the mask id, ids at or past [`SpecialTokens::n_tokens`], and any
//! the caller forbids) are set to −∞ first, so no temperature, noise or
//! nucleus can bring them back.
//!
//! * **Dream** (`sample_tokens` in `generation_utils.py`): logits divided by
//!   the temperature (when > 0), restricted to the top-p nucleus (the
//!   smallest prefix of the tokens by decreasing probability whose mass
//!   exceeds `top_p`; the first token always kept), softmax; the token is
//!   sampled from these probabilities (argmax at temperature 0). Confidence:
//!   `maskgit_plus` the probability of the chosen token (the top probability
//!   at temperature 0), `topk_margin` top-1 minus top-2 probability,
//!   `entropy` the negative entropy `Σ p log(p + 1e-10)`, `random` a uniform
//!   draw.
//! * **LLaDA** (`generate.py`): the token is `argmax(exp(l) / (−ln u)^T)`
//!   with `u` uniform per id, computed in f64 — here in the log domain,
//!   `l − T·ln(−ln u)`, which has the same argmax and cannot overflow (the
//!   Gumbel-max trick: a sample of `softmax(l / T)`); argmax at temperature
//!   0. Confidence: `low_confidence` the softmax probability (no temperature)
//!   of the chosen token, `random` a uniform draw.
//!
//! **Further draws** (constrained decoding, after the previous token was
//! rejected): the rejected token is removed and the distribution
//! renormalized. Dream samples again from the remaining nucleus; once the
//! nucleus is exhausted, from the remaining tokens of the full tempered
//! distribution (the constraint may need a token the nucleus cut). Weights
//! are taken relative to the largest remaining one, so the draw never fails
//! for underflow. LLaDA takes the next-best id under the same noise, which is
//! a draw without replacement from `softmax(l / T)`. At temperature 0 both
//! take the next id by logit. A row is exhausted only when every allowed id
//! has been rejected.
//!
//! Randomness comes from a per-row [`SplitMix64`] seeded by the caller, so a
//! row rebuilt later replays the same draws. A caller that needs only the
//! first draw at temperature 0 (an autoregressive step, until a refusal)
//! can skip building the sampler: [`RowSampler::greedy_first`].
//!
//! Cost per row: `O(V)` to build (Dream: one `exp` per id plus a partial
//! selection of the nucleus; LLaDA at temperature > 0: one uniform and two
//! logarithms per id). The first draw scans the row; further draws go
//! through a `Redraw` built at the first of them: by rank (argmax rules)
//! the next 16, then 64, 256, … ids in order, each batch selected by one
//! scan of the row, `O(V / batch)` amortized per draw; by weight (Dream
//! sampling) a tree of partial sums, `O(V)` once and `O(log V)` per draw. Both draw what a scan of the row would: the
//! same order of ids by rank; by weight the same id for the same uniform
//! number, up to the rounding of the sums (weights relative to the largest
//! one left when the tree was built, not when drawing). A constrained step
//! with a real vocabulary may redraw a row hundreds of times (random
//! weights: about 200 refusals a step), where a scan of 152,064 ids with an
//! `exp` each cost about a millisecond.

use crate::model::SpecialTokens;
use crate::rng::SplitMix64;

/// Dream's rule for choosing which positions to unmask.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Alg {
    /// Negative entropy of the position's distribution (Dream's default).
    Entropy,
    /// Probability of the sampled token.
    MaskgitPlus,
    /// Top-1 minus top-2 probability.
    TopkMargin,
    /// A uniform random number.
    Random,
    /// Dream's `origin` (the default of its `generation_config.json`): each
    /// masked position is unmasked with probability `1 − s/t` at each step
    /// (all at the last), in no particular order: the step's quota is a
    /// binomial draw and positions are ranked at random.
    Origin,
}

/// LLaDA's remasking rule (which positions keep their prediction).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Remasking {
    /// Softmax probability of the sampled token.
    LowConfidence,
    /// A uniform random number.
    Random,
}

/// Which authors' sampling rules to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArchStyle {
    /// Dream: whole canvas, timestep schedule, nucleus sampling.
    Dream,
    /// LLaDA: semi-autoregressive blocks, Gumbel noise.
    Llada,
}

/// The sampling parameters a [`RowSampler`] needs.
#[derive(Clone, Copy, Debug)]
pub struct SampleParams {
    /// Dream or LLaDA rules.
    pub style: ArchStyle,
    /// Temperature (0: greedy).
    pub temperature: f64,
    /// Dream's nucleus mass (1: no nucleus).
    pub top_p: f64,
    /// Dream's top-k filter (applied after top-p, as Dream's
    /// `sample_tokens`; `None`: off).
    pub top_k: Option<usize>,
    /// Dream's confidence rule.
    pub alg: Alg,
    /// LLaDA's confidence rule.
    pub remasking: Remasking,
}

/// Sets the logits of ids that may never be produced to −∞: the mask id, ids
/// at or past `n_tokens`.
pub fn forbid_specials(row: &mut [f32], special: &SpecialTokens) {
    if let Some(x) = row.get_mut(special.mask as usize) {
        *x = f32::NEG_INFINITY;
    }
    for x in row.iter_mut().skip(special.n_tokens) {
        *x = f32::NEG_INFINITY;
    }
}

/// Keeps only `allowed` ids (all others −∞).
pub fn allow_only(row: &mut [f32], allowed: &[u32]) {
    for (i, x) in row.iter_mut().enumerate() {
        if !allowed.contains(&(i as u32)) {
            *x = f32::NEG_INFINITY;
        }
    }
}

/// Ids of the top-p nucleus of log-probabilities `logp`, by decreasing
/// probability: the shortest prefix whose mass exceeds `top_p` (all of it if
/// it never does). Partial selection of growing size, `O(V)` per round:
/// while the nucleus is small (a trained model's usually is) of the ids
/// compared through `logp`; past `SELECT_ROUNDS_UP_TO` (1,024) ids of keys made
/// once (probability, then id), each round selecting among the ids left
/// only. A flat row, as a random model's, puts nearly every id in the
/// nucleus; there the keys take 152,064 ids from 11.8 to 8 ms. Keys order
/// equal probabilities by id; the first rounds leave their order to the
/// selection, which only matters where equal probabilities straddle the end
/// of the nucleus (the sums are the same).
pub fn nucleus(logp: &[f64], top_p: f64) -> Vec<u32> {
    let finite: Vec<u32> = (0..logp.len() as u32)
        .filter(|&i| logp[i as usize] > f64::NEG_INFINITY)
        .collect();
    let by_prob = |a: &u32, b: &u32| logp[*b as usize].total_cmp(&logp[*a as usize]);
    let mut m = 64usize;
    while m <= SELECT_ROUNDS_UP_TO {
        let mut ids = finite.clone();
        let full = m >= ids.len();
        if !full {
            ids.select_nth_unstable_by(m - 1, by_prob);
            ids.truncate(m);
        }
        ids.sort_unstable_by(by_prob);
        if let Some(k) = crossing(logp, &ids, top_p) {
            ids.truncate(k + 1);
            return ids;
        }
        if full {
            return ids;
        }
        m *= 4;
    }
    // Then by keys: ascending in the key is descending in probability (the
    // order-preserving map of an f64's bits, complemented), then by id; each
    // round selects the next ids among those left and sorts them, so the
    // ids before `done` stay the sorted top.
    let mut keyed: Vec<(u64, u32)> = finite
        .iter()
        .map(|&i| {
            let b = logp[i as usize].to_bits();
            let up = if b >> 63 == 1 { !b } else { b | 1 << 63 };
            (!up, i)
        })
        .collect();
    let (mut done, mut cum) = (0, 0.0);
    loop {
        let end = m.min(keyed.len());
        if end < keyed.len() {
            keyed[done..].select_nth_unstable(end - done - 1);
        }
        keyed[done..end].sort_unstable();
        for k in done..end {
            cum += logp[keyed[k].1 as usize].exp();
            if cum > top_p {
                return keyed[..=k].iter().map(|&(_, i)| i).collect();
            }
        }
        if end == keyed.len() {
            return keyed.into_iter().map(|(_, i)| i).collect();
        }
        done = end;
        m *= 4;
    }
}

/// The largest selection [`nucleus`] makes by rounds before sorting every
/// id.
const SELECT_ROUNDS_UP_TO: usize = 1024;

/// The first position in `ids` (by decreasing probability) where the mass
/// summed in that order exceeds `top_p`.
fn crossing(logp: &[f64], ids: &[u32], top_p: f64) -> Option<usize> {
    let mut cum = 0.0;
    for (k, &i) in ids.iter().enumerate() {
        cum += logp[i as usize].exp();
        if cum > top_p {
            return Some(k);
        }
    }
    None
}

/// One position's proposal: the first token and its confidence, and further
/// draws after rejections (see the module docs).
#[derive(Clone, Debug)]
pub struct RowSampler {
    /// Dream: tempered log-probabilities; LLaDA: noisy log-scores.
    key: Vec<f64>,
    /// Dream: whether an id is in the nucleus (tier 0) or not (tier 1).
    in_nucleus: Vec<bool>,
    taken: Vec<bool>,
    sample: bool,
    rng: SplitMix64,
    first: Option<u32>,
    confidence: f64,
    /// The further draws' structure, built at the first of them (dropped
    /// by [`RowSampler::restrict`]).
    redraw: Option<Redraw>,
}

impl RowSampler {
    /// Builds the sampler of a row of logits (forbidden ids already −∞),
    /// drawing the first token and its confidence with `seed`.
    pub fn new(row: &[f32], params: &SampleParams, seed: u64) -> RowSampler {
        let mut rng = SplitMix64::new(seed);
        let v = row.len();
        let t = params.temperature;
        let mut s = RowSampler {
            key: Vec::new(),
            in_nucleus: Vec::new(),
            taken: vec![false; v],
            sample: false,
            rng: SplitMix64::new(0),
            first: None,
            confidence: f64::NEG_INFINITY,
            redraw: None,
        };
        match params.style {
            ArchStyle::Dream => {
                let scale = if t > 0.0 { 1.0 / t } else { 1.0 };
                let mut logp: Vec<f64> = row.iter().map(|&x| x as f64 * scale).collect();
                normalize_log(&mut logp);
                let nuc = if params.top_p < 1.0 {
                    nucleus(&logp, params.top_p)
                } else {
                    (0..v as u32)
                        .filter(|&i| logp[i as usize] > f64::NEG_INFINITY)
                        .collect()
                };
                let nuc = match params.top_k {
                    Some(k) => top_k(&logp, nuc, k),
                    None => nuc,
                };
                let mut in_nucleus = vec![false; v];
                for &i in &nuc {
                    in_nucleus[i as usize] = true;
                }
                // Probabilities renormalized over the nucleus.
                let mass: f64 = nuc.iter().map(|&i| logp[i as usize].exp()).sum();
                s.key = logp;
                s.in_nucleus = in_nucleus;
                s.sample = t > 0.0;
                s.rng = rng;
                s.first = s.draw();
                if let Some(x) = s.first {
                    let p = |i: u32| s.key[i as usize].exp() / mass;
                    s.confidence = match params.alg {
                        Alg::MaskgitPlus => p(x),
                        Alg::TopkMargin => {
                            let mut top = [0.0f64; 2];
                            for &i in &nuc {
                                let q = p(i);
                                if q > top[0] {
                                    top = [q, top[0]];
                                } else if q > top[1] {
                                    top[1] = q;
                                }
                            }
                            top[0] - top[1]
                        }
                        Alg::Entropy => nuc
                            .iter()
                            .map(|&i| {
                                let q = p(i);
                                q * (q + 1e-10).ln()
                            })
                            .sum(),
                        Alg::Random | Alg::Origin => s.rng.unit(),
                    };
                }
            }
            ArchStyle::Llada => {
                let key: Vec<f64> = if t > 0.0 {
                    row.iter()
                        .map(|&x| {
                            let u = rng.unit();
                            x as f64 - t * (-u.ln()).ln()
                        })
                        .collect()
                } else {
                    row.iter().map(|&x| x as f64).collect()
                };
                s.key = key;
                s.in_nucleus = vec![true; v];
                s.rng = rng;
                s.first = s.draw();
                if let Some(x) = s.first {
                    s.confidence = match params.remasking {
                        Remasking::LowConfidence => {
                            let mut logp: Vec<f64> = row.iter().map(|&x| x as f64).collect();
                            normalize_log(&mut logp);
                            logp[x as usize].exp()
                        }
                        Remasking::Random => s.rng.unit(),
                    };
                }
            }
        }
        s
    }

    /// The first token [`RowSampler::new`] draws from `row` at temperature
    /// 0, found by one pass over the row without building the sampler
    /// (which takes a log-softmax of the row and a nucleus): the largest
    /// logit, when it leads every other by a margin that no rounding of the
    /// sampler's own arithmetic can close. `None` when it does not, at a
    /// temperature above 0, or when every id is forbidden: then build the
    /// sampler. An autoregressive loop needs one only after its first
    /// proposal is refused.
    ///
    /// ```
    /// use cdiff::decode::sample::{Alg, ArchStyle, Remasking, RowSampler, SampleParams};
    /// let p = SampleParams {
    ///     style: ArchStyle::Dream, temperature: 0.0, top_p: 0.95, top_k: None,
    ///     alg: Alg::MaskgitPlus, remasking: Remasking::LowConfidence,
    /// };
    /// let row = [0.5f32, 3.0, -1.0, 2.0];
    /// assert_eq!(RowSampler::greedy_first(&row, &p), Some(1));
    /// assert_eq!(RowSampler::new(&row, &p, 7).first(), Some(1));
    /// assert_eq!(RowSampler::greedy_first(&[1.0, 1.0], &p), None); // a tie
    /// ```
    pub fn greedy_first(row: &[f32], params: &SampleParams) -> Option<u32> {
        if params.temperature != 0.0 {
            return None;
        }
        let (mut best, mut top, mut second) = (0u32, f32::NEG_INFINITY, f32::NEG_INFINITY);
        for (i, &x) in row.iter().enumerate() {
            if x > top {
                (best, top, second) = (i as u32, x, top);
            } else if x > second {
                second = x;
            }
        }
        if !top.is_finite() {
            return None;
        }
        // The sampler subtracts a log-sum-exp within about `ln V` of the
        // top in f64; a lead of 1e-9 relative to the magnitudes involved is
        // far above that rounding.
        let (t, s) = (f64::from(top), f64::from(second));
        let scale = t.abs() + s.abs().min(1e30) + (row.len() as f64).ln() + 16.0;
        (second == f32::NEG_INFINITY || t - s > 1e-9 * scale).then_some(best)
    }

    /// The first token drawn (`None`: every id is forbidden).
    pub fn first(&self) -> Option<u32> {
        self.first
    }

    /// The confidence of the position (higher: unmasked earlier).
    pub fn confidence(&self) -> f64 {
        self.confidence
    }

    /// The number of ids (the row's width).
    pub fn len(&self) -> usize {
        self.key.len()
    }

    /// Whether the row has no ids.
    pub fn is_empty(&self) -> bool {
        self.key.is_empty()
    }

    /// From now on never draws an id whose entry in `allowed` is false (or
    /// past its end): the next draw is one of the allowed ids, from the
    /// renormalized rest as after rejections, so restricting after a mask is
    /// sampling from the masked distribution.
    pub fn restrict(&mut self, allowed: &[bool]) {
        for (i, t) in self.taken.iter_mut().enumerate() {
            if !allowed.get(i).copied().unwrap_or(false) {
                *t = true;
            }
        }
        self.redraw = None;
    }

    /// Draws another token, never one drawn before; `None` when exhausted.
    /// The same token a scan of the row would draw (see the module docs),
    /// without the scan.
    pub fn next_token(&mut self) -> Option<u32> {
        loop {
            let tier = match &mut self.redraw {
                Some(r) => match r.draw(&self.key, &self.taken, &self.in_nucleus, &mut self.rng) {
                    Drawn::Id(i) => {
                        self.taken[i as usize] = true;
                        return Some(i);
                    }
                    Drawn::Rebuild => r.tier,
                    Drawn::Exhausted if r.tier => false,
                    Drawn::Exhausted => return None,
                },
                None => true,
            };
            self.redraw = Some(Redraw::build(
                tier,
                self.sample,
                &self.key,
                &self.taken,
                &self.in_nucleus,
            ));
        }
    }

    /// Draws among the untaken ids of the best nonempty tier.
    fn draw(&mut self) -> Option<u32> {
        for tier in [true, false] {
            let mut best: Option<u32> = None;
            let mut max = f64::NEG_INFINITY;
            for (i, &k) in self.key.iter().enumerate() {
                if !self.taken[i] && self.in_nucleus[i] == tier && k > max {
                    max = k;
                    best = Some(i as u32);
                }
            }
            let Some(mut pick) = best else { continue };
            if self.sample {
                let w = |k: f64| (k - max).exp();
                let total: f64 = self
                    .key
                    .iter()
                    .enumerate()
                    .filter(|&(i, _)| !self.taken[i] && self.in_nucleus[i] == tier)
                    .map(|(_, &k)| w(k))
                    .sum();
                let mut u = self.rng.unit() * total;
                for (i, &k) in self.key.iter().enumerate() {
                    if self.taken[i] || self.in_nucleus[i] != tier || k == f64::NEG_INFINITY {
                        continue;
                    }
                    pick = i as u32;
                    u -= w(k);
                    if u < 0.0 {
                        break;
                    }
                }
            }
            self.taken[pick as usize] = true;
            return Some(pick);
        }
        None
    }
}

/// A row's further draws within one tier (nucleus or not): see the module
/// docs.
#[derive(Clone, Debug)]
struct Redraw {
    /// The tier drawn from.
    tier: bool,
    how: How,
}

/// How a [`Redraw`] draws.
#[derive(Clone, Debug)]
enum How {
    Ranked(Ranked),
    Weighted(Weighted),
}

/// Argmax rules: the next ids of the tier by decreasing key (lower id
/// first among equal keys, as a scan for the strict maximum finds them),
/// `ids[next..]`: the best `want` untaken ones, selected by one scan of the
/// row and sorted; the next `4 · want` selected when they are used up.
#[derive(Clone, Debug)]
struct Ranked {
    ids: Vec<u32>,
    next: usize,
    want: usize,
}

/// Sampling: the tier's ids as leaves of a tree of sums of their weights
/// `exp(key − top)` (`top` the largest key among them when built; a drawn
/// leaf's weight becomes 0).
#[derive(Clone, Debug)]
struct Weighted {
    ids: Vec<u32>,
    /// `sums[1]` is the root, `sums[k] = sums[2k] + sums[2k + 1]`, the
    /// leaves are `sums[width..]`.
    sums: Vec<f64>,
    width: usize,
    /// Leaves not drawn yet.
    left: usize,
}

/// What a [`Redraw`] gave.
enum Drawn {
    Id(u32),
    /// Its tier has nothing left to draw.
    Exhausted,
    /// The weights left underflowed: build again, relative to the largest
    /// key left.
    Rebuild,
}

impl Redraw {
    /// The further draws of `tier`: its untaken ids with finite keys.
    fn build(tier: bool, sample: bool, key: &[f64], taken: &[bool], in_nucleus: &[bool]) -> Redraw {
        let how = match sample {
            false => How::Ranked(Ranked {
                ids: Vec::new(),
                next: 0,
                want: 16,
            }),
            true => {
                let ids: Vec<u32> = drawable(tier, key, taken, in_nucleus)
                    .map(|(i, _)| i)
                    .collect();
                How::Weighted(Weighted::new(ids, key))
            }
        };
        Redraw { tier, how }
    }

    /// The next draw (`rng` gives sampling's uniform number).
    fn draw(
        &mut self,
        key: &[f64],
        taken: &[bool],
        in_nucleus: &[bool],
        rng: &mut SplitMix64,
    ) -> Drawn {
        match &mut self.how {
            How::Ranked(r) => r.draw(self.tier, key, taken, in_nucleus),
            How::Weighted(w) => w.draw(rng),
        }
    }
}

/// The ids that may still be drawn in `tier` (untaken, in the tier, with
/// a finite key) and their keys.
fn drawable<'a>(
    tier: bool,
    key: &'a [f64],
    taken: &'a [bool],
    in_nucleus: &'a [bool],
) -> impl Iterator<Item = (u32, f64)> + 'a {
    key.iter()
        .zip(taken)
        .zip(in_nucleus)
        .enumerate()
        .filter(move |&(_, ((&k, &t), &n))| !t && n == tier && k > f64::NEG_INFINITY)
        .map(|(i, ((&k, _), _))| (i as u32, k))
}

/// An id in a ranked selection: greater is worse (lower key, then higher
/// id), so a max-heap's top is the worst one kept.
#[derive(Clone, Copy, Debug)]
struct Worse(f64, u32);

impl PartialEq for Worse {
    fn eq(&self, other: &Worse) -> bool {
        self.cmp(other) == std::cmp::Ordering::Equal
    }
}

impl Eq for Worse {}

impl PartialOrd for Worse {
    fn partial_cmp(&self, other: &Worse) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Worse {
    fn cmp(&self, other: &Worse) -> std::cmp::Ordering {
        other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
    }
}

impl Ranked {
    /// The next id in order; a scan of the row selects the next `want`
    /// when those selected are used up (every id selected before is taken
    /// by then, so the scan skips them).
    fn draw(&mut self, tier: bool, key: &[f64], taken: &[bool], in_nucleus: &[bool]) -> Drawn {
        if self.next == self.ids.len() {
            if self.next > 0 && self.ids.len() < self.want / 4 {
                // The last selection took every id left.
                return Drawn::Exhausted;
            }
            let mut best: std::collections::BinaryHeap<Worse> =
                std::collections::BinaryHeap::with_capacity(self.want + 1);
            // Once `want` are kept: the key of the worst kept. Ids come in
            // increasing order, so one with that key or less is worse.
            // Before that, −∞: ids with an infinite key are never drawn.
            let mut bar = f64::NEG_INFINITY;
            let n = key.len().min(taken.len()).min(in_nucleus.len());
            let (key, taken, in_nucleus) = (&key[..n], &taken[..n], &in_nucleus[..n]);
            for i in 0..n {
                // The key first: once `want` are kept, most ids fail there.
                let k = key[i];
                if k <= bar || taken[i] || in_nucleus[i] != tier {
                    continue;
                }
                if best.len() == self.want {
                    best.pop();
                }
                best.push(Worse(k, i as u32));
                if best.len() == self.want {
                    bar = best.peek().map_or(f64::NEG_INFINITY, |w| w.0);
                }
            }
            self.ids = best.into_sorted_vec().into_iter().map(|w| w.1).collect();
            self.next = 0;
            self.want = self.want.saturating_mul(4);
            if self.ids.is_empty() {
                return Drawn::Exhausted;
            }
        }
        self.next += 1;
        Drawn::Id(self.ids[self.next - 1])
    }
}

impl Weighted {
    fn new(ids: Vec<u32>, key: &[f64]) -> Weighted {
        let top = ids
            .iter()
            .map(|&i| key[i as usize])
            .fold(f64::NEG_INFINITY, f64::max);
        let width = ids.len().next_power_of_two();
        let mut sums = vec![0.0f64; 2 * width];
        for (leaf, &i) in ids.iter().enumerate() {
            sums[width + leaf] = (key[i as usize] - top).exp();
        }
        for k in (1..width).rev() {
            sums[k] = sums[2 * k] + sums[2 * k + 1];
        }
        let left = ids.len();
        Weighted {
            ids,
            sums,
            width,
            left,
        }
    }

    /// The leaf where `u · total` falls in the partial sums in id order
    /// (`u` uniform), as a scan subtracting the weights in id order finds
    /// it; its weight becomes 0.
    fn draw(&mut self, rng: &mut SplitMix64) -> Drawn {
        if self.left == 0 {
            return Drawn::Exhausted;
        }
        let total = self.sums.get(1).copied().unwrap_or(0.0);
        if total < 1e-280 {
            return Drawn::Rebuild;
        }
        let mut u = rng.unit() * total;
        let mut k = 1;
        while k < self.width {
            let (l, r) = (self.sums[2 * k], self.sums[2 * k + 1]);
            // Rounding may leave `u` at or past a subtree's total: then the
            // left one, which has weight (as a scan's last pick would).
            k = if u < l || r == 0.0 {
                2 * k
            } else {
                u -= l;
                2 * k + 1
            };
        }
        self.sums[k] = 0.0;
        let mut up = k / 2;
        while up >= 1 {
            self.sums[up] = self.sums[2 * up] + self.sums[2 * up + 1];
            up /= 2;
        }
        self.left -= 1;
        Drawn::Id(self.ids[k - self.width])
    }
}

/// The ids of `ids` whose value is at least the `k`-th largest value among
/// them (ties at the boundary kept, as `logits < topk(logits, k)[-1]` is
/// what Dream's `top_k_logits` removes).
fn top_k(logp: &[f64], ids: Vec<u32>, k: usize) -> Vec<u32> {
    if k == 0 || k >= ids.len() {
        return ids;
    }
    let mut vals: Vec<f64> = ids.iter().map(|&i| logp[i as usize]).collect();
    vals.sort_by(|a, b| b.total_cmp(a));
    let kth = vals[k - 1];
    ids.into_iter()
        .filter(|&i| logp[i as usize] >= kth)
        .collect()
}

/// Subtracts the log-sum-exp, turning logits into log-probabilities
/// (−∞ stays −∞).
pub(crate) fn normalize_log(x: &mut [f64]) {
    let max = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if max == f64::NEG_INFINITY {
        return;
    }
    let lse = max + x.iter().map(|&v| (v - max).exp()).sum::<f64>().ln();
    for v in x.iter_mut() {
        *v -= lse;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(style: ArchStyle, temperature: f64, top_p: f64) -> SampleParams {
        SampleParams {
            style,
            temperature,
            top_p,
            top_k: None,
            alg: Alg::Entropy,
            remasking: Remasking::LowConfidence,
        }
    }

    #[test]
    fn top_k_keeps_the_k_best_and_their_ties() {
        let logp = [-1.0, -0.5, -3.0, -0.5, -2.0];
        assert_eq!(top_k(&logp, vec![0, 1, 2, 3, 4], 1), vec![1, 3]);
        assert_eq!(top_k(&logp, vec![0, 1, 2, 3, 4], 3), vec![0, 1, 3]);
        assert_eq!(top_k(&logp, vec![0, 2, 4], 2), vec![0, 4]);
        // With top-k 1 and sampling, the draw is always the argmax.
        let row = [0.0f32, 2.0, 1.0, -1.0];
        let mut p = params(ArchStyle::Dream, 1.0, 1.0);
        p.top_k = Some(1);
        for seed in 0..50 {
            assert_eq!(RowSampler::new(&row, &p, seed).first(), Some(1));
        }
    }

    #[test]
    fn nucleus_keeps_the_crossing_token() {
        let mut lp: Vec<f64> = [0.5f64, 0.3, 0.15, 0.05].iter().map(|p| p.ln()).collect();
        lp.push(f64::NEG_INFINITY);
        assert_eq!(nucleus(&lp, 0.95), vec![0, 1, 2]);
        assert_eq!(nucleus(&lp, 0.5), vec![0, 1]);
        assert_eq!(nucleus(&lp, 0.4), vec![0]);
        assert_eq!(nucleus(&lp, 1.0), vec![0, 1, 2, 3]);
        // Large vocabulary: the selection grows until the mass is reached.
        let n = 1000;
        let lp: Vec<f64> = (0..n).map(|_| -(n as f64).ln()).collect();
        assert_eq!(nucleus(&lp, 0.5005).len(), 501);
    }

    /// Large nuclei (past the selection rounds) are what sorting every id
    /// by probability and cutting at the crossing gives: the same ids in
    /// the same order where probabilities are distinct, and with ties a
    /// nucleus of the same size and mass whose ids outrank every id left
    /// out.
    #[test]
    fn large_nuclei_are_the_sorted_prefix() {
        let mut rng = SplitMix64::new(11);
        for (v, spread, ties) in [
            (3000, 1.0, false),
            (20_000, 0.3, false),
            (20_000, 4.0, false),
            (5000, 1.0, true),
        ] {
            for top_p in [0.5, 0.9, 0.95, 0.999] {
                let mut lp: Vec<f64> = (0..v)
                    .map(|i| match i % 97 {
                        0 => f64::NEG_INFINITY,
                        _ if ties => (rng.below(40) as f64) * spread / 40.0,
                        _ => rng.unit() * spread,
                    })
                    .collect();
                normalize_log(&mut lp);
                let got = nucleus(&lp, top_p);
                let mut all: Vec<u32> = (0..v as u32)
                    .filter(|&i| lp[i as usize] > f64::NEG_INFINITY)
                    .collect();
                all.sort_by(|a, b| lp[*b as usize].total_cmp(&lp[*a as usize]));
                let want = match crossing(&lp, &all, top_p) {
                    Some(k) => all[..=k].to_vec(),
                    None => all,
                };
                assert!(
                    got.len() > SELECT_ROUNDS_UP_TO || top_p < 0.9,
                    "v={v} top_p={top_p}: {}",
                    got.len()
                );
                if !ties {
                    assert_eq!(got, want, "v={v} top_p={top_p}");
                    continue;
                }
                assert_eq!(got.len(), want.len());
                let mass = |ids: &[u32]| ids.iter().map(|&i| lp[i as usize].exp()).sum::<f64>();
                assert_eq!(mass(&got), mass(&want));
                let last = lp[got[got.len() - 1] as usize];
                let inside: std::collections::HashSet<u32> = got.iter().copied().collect();
                assert!((0..v as u32).all(|i| inside.contains(&i) || lp[i as usize] <= last));
            }
        }
    }

    /// `greedy_first` is the sampler's first draw wherever it answers, and
    /// answers on rows with a clear maximum (rows with ties at the top, a
    /// near-tie, forbidden ids, both styles, nucleus and top-k on or off).
    #[test]
    fn greedy_first_is_the_samplers_first_draw() {
        let mut rng = SplitMix64::new(17);
        let mut answered = 0;
        for case in 0..400 {
            let v = 1 + rng.below(300) as usize;
            let mut row: Vec<f32> = (0..v)
                .map(|_| match case % 4 {
                    0 => (rng.below(8) as f32) - 4.0,
                    1 => f32::NEG_INFINITY,
                    _ => (rng.unit() as f32 - 0.5) * 30.0,
                })
                .collect();
            if case % 4 == 1 {
                row[rng.below(v as u64) as usize] = 1.0;
            }
            if case % 7 == 0 && v > 1 {
                // A near-tie at the top.
                let (i, _) = row
                    .iter()
                    .enumerate()
                    .fold(
                        (0, f32::NEG_INFINITY),
                        |b, (i, &x)| if x > b.1 { (i, x) } else { b },
                    );
                let j = (i + 1) % v;
                row[j] = row[i] - row[i].abs() * 1e-7;
            }
            for style in [ArchStyle::Dream, ArchStyle::Llada] {
                for (top_p, top_k) in [(1.0, None), (0.9, None), (0.95, Some(3))] {
                    let mut p = params(style, 0.0, top_p);
                    p.top_k = top_k;
                    let sampler = RowSampler::new(&row, &p, case);
                    if let Some(t) = RowSampler::greedy_first(&row, &p) {
                        assert_eq!(Some(t), sampler.first(), "case {case} {style:?}");
                        answered += 1;
                    }
                    let mut hot = p;
                    hot.temperature = 0.5;
                    assert_eq!(RowSampler::greedy_first(&row, &hot), None);
                }
            }
        }
        assert!(answered > 1000, "{answered}");
        let p = params(ArchStyle::Dream, 0.0, 0.95);
        assert_eq!(RowSampler::greedy_first(&[2.0, 2.0, 1.0], &p), None);
        assert_eq!(RowSampler::greedy_first(&[f32::NEG_INFINITY; 3], &p), None);
        assert_eq!(RowSampler::greedy_first(&[], &p), None);
    }

    #[test]
    fn greedy_draws_in_logit_order_and_never_forbidden() {
        let special = SpecialTokens {
            mask: 3,
            eos: 4,
            pad: 4,
            n_tokens: 5,
        };
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            let mut row = vec![1.0f32, 3.0, 2.0, 100.0, 0.0, 200.0];
            forbid_specials(&mut row, &special);
            let mut s = RowSampler::new(&row, &params(style, 0.0, 1.0), 1);
            assert_eq!(s.first(), Some(1));
            let rest: Vec<u32> = std::iter::from_fn(|| s.next_token()).collect();
            assert_eq!(rest, vec![2, 0, 4]);
        }
    }

    #[test]
    fn sampling_exhausts_every_allowed_id_once() {
        let special = SpecialTokens {
            mask: 7,
            eos: 8,
            pad: 8,
            n_tokens: 9,
        };
        for style in [ArchStyle::Dream, ArchStyle::Llada] {
            for seed in 0..20 {
                let mut row: Vec<f32> = (0..12).map(|i| (i as f32 * 1.7).sin() * 30.0).collect();
                forbid_specials(&mut row, &special);
                let mut s = RowSampler::new(&row, &params(style, 0.7, 0.9), seed);
                let mut all: Vec<u32> = s.first().into_iter().collect();
                all.extend(std::iter::from_fn(|| s.next_token()));
                all.sort_unstable();
                assert_eq!(all, vec![0, 1, 2, 3, 4, 5, 6, 8]);
            }
        }
    }

    /// Further draws through a [`Redraw`] are the draws a scan of the row
    /// makes (the first draw's code), for argmax and sampling rules, with
    /// ties, forbidden ids, nucleus tiers, rows wider than a selection,
    /// and weights that underflow.
    #[test]
    fn redraws_draw_what_a_scan_of_the_row_draws() {
        let mut rng = SplitMix64::new(3);
        let mut rows: Vec<Vec<f32>> = Vec::new();
        for v in [1usize, 2, 5, 63, 64, 65, 300, 1000] {
            rows.push((0..v).map(|_| (rng.unit() as f32 - 0.5) * 20.0).collect());
            // Ties and forbidden ids.
            rows.push(
                (0..v)
                    .map(|i| match i % 7 {
                        0 => f32::NEG_INFINITY,
                        k => (k % 3) as f32,
                    })
                    .collect(),
            );
        }
        // A peaked row: most weights underflow next to the top ones.
        rows.push(
            (0..500)
                .map(|i| if i % 50 == 0 { 2000.0 } else { (i % 13) as f32 })
                .collect(),
        );
        let mut cases = 0;
        for row in &rows {
            for (style, t, top_p) in [
                (ArchStyle::Dream, 0.0, 1.0),
                (ArchStyle::Dream, 0.0, 0.9),
                (ArchStyle::Dream, 0.7, 0.9),
                (ArchStyle::Dream, 1.0, 1.0),
                (ArchStyle::Llada, 0.0, 1.0),
                (ArchStyle::Llada, 1.0, 1.0),
            ] {
                for seed in 0..4 {
                    let mut fast = RowSampler::new(row, &params(style, t, top_p), seed);
                    let mut scan = fast.clone();
                    let a: Vec<u32> = std::iter::from_fn(|| fast.next_token()).collect();
                    let b: Vec<u32> = std::iter::from_fn(|| scan.draw()).collect();
                    assert_eq!(
                        a,
                        b,
                        "{style:?} t={t} top_p={top_p} seed={seed} v={}",
                        row.len()
                    );
                    cases += 1;
                }
            }
        }
        assert_eq!(cases, rows.len() * 24);
    }

    /// A restriction between draws drops the structure: what follows is
    /// what a scan draws under the restriction.
    #[test]
    fn redraws_after_a_restriction_follow_it() {
        let mut rng = SplitMix64::new(5);
        let row: Vec<f32> = (0..400).map(|_| (rng.unit() as f32 - 0.5) * 8.0).collect();
        let allowed: Vec<bool> = (0..400).map(|i| i % 3 != 0).collect();
        for (style, t) in [
            (ArchStyle::Dream, 0.8),
            (ArchStyle::Dream, 0.0),
            (ArchStyle::Llada, 1.0),
        ] {
            let mut fast = RowSampler::new(&row, &params(style, t, 0.95), 9);
            for _ in 0..5 {
                fast.next_token();
            }
            let mut scan = fast.clone();
            fast.restrict(&allowed);
            scan.restrict(&allowed);
            let a: Vec<u32> = std::iter::from_fn(|| fast.next_token()).collect();
            let b: Vec<u32> = std::iter::from_fn(|| scan.draw()).collect();
            assert_eq!(a, b, "{style:?}");
            assert!(a.iter().all(|&i| i % 3 != 0));
        }
    }

    #[test]
    fn dream_sampling_follows_probabilities() {
        // p = (0.7, 0.2, 0.1) at temperature 1, no nucleus.
        let row: Vec<f32> = [0.7f32, 0.2, 0.1].iter().map(|p| p.ln()).collect();
        let mut counts = [0usize; 3];
        for seed in 0..3000 {
            let s = RowSampler::new(&row, &params(ArchStyle::Dream, 1.0, 1.0), seed);
            counts[s.first().unwrap() as usize] += 1;
        }
        assert!((1950..2250).contains(&counts[0]), "{counts:?}");
        assert!((450..750).contains(&counts[1]), "{counts:?}");
        // The same for LLaDA's Gumbel-max.
        let mut counts = [0usize; 3];
        for seed in 0..3000 {
            let s = RowSampler::new(&row, &params(ArchStyle::Llada, 1.0, 1.0), seed);
            counts[s.first().unwrap() as usize] += 1;
        }
        assert!((1950..2250).contains(&counts[0]), "{counts:?}");
        assert!((450..750).contains(&counts[1]), "{counts:?}");
    }

    #[test]
    fn confidences() {
        let row: Vec<f32> = [0.5f32, 0.3, 0.2].iter().map(|p| p.ln()).collect();
        let mut p = params(ArchStyle::Dream, 0.0, 1.0);
        p.alg = Alg::MaskgitPlus;
        assert!((RowSampler::new(&row, &p, 0).confidence() - 0.5).abs() < 1e-6);
        p.alg = Alg::TopkMargin;
        assert!((RowSampler::new(&row, &p, 0).confidence() - 0.2).abs() < 1e-6);
        p.alg = Alg::Entropy;
        let h: f64 = [0.5f64, 0.3, 0.2]
            .iter()
            .map(|q| q * (q + 1e-10).ln())
            .sum();
        assert!((RowSampler::new(&row, &p, 0).confidence() - h).abs() < 1e-6);
        let mut p = params(ArchStyle::Llada, 0.0, 1.0);
        p.remasking = Remasking::LowConfidence;
        assert!((RowSampler::new(&row, &p, 0).confidence() - 0.5).abs() < 1e-6);
    }

    /// Cost of one row at real vocabulary sizes
    /// (`cargo test --release --lib row_cost -- --ignored --nocapture`).
    #[test]
    #[ignore]
    fn row_cost() {
        let mut rng = SplitMix64::new(1);
        for (style, v, t) in [
            (ArchStyle::Dream, 152_064, 0.2),
            // A random model's flat row: nearly every id in the nucleus.
            (ArchStyle::Dream, 152_064, 20.0),
            (ArchStyle::Llada, 126_464, 0.0),
            (ArchStyle::Llada, 126_464, 1.0),
        ] {
            let row: Vec<f32> = (0..v).map(|_| (rng.unit() as f32 - 0.5) * 20.0).collect();
            let p = params(style, t, 0.95);
            let t0 = std::time::Instant::now();
            let ss: Vec<RowSampler> = (0..20)
                .map(|seed| RowSampler::new(&row, &p, seed))
                .collect();
            let built = t0.elapsed() / 20;
            let mut greedy = p;
            greedy.temperature = 0.0;
            let t0 = std::time::Instant::now();
            let firsts: usize = (0..20)
                .filter(|_| RowSampler::greedy_first(&row, &greedy).is_some())
                .count();
            let scan = t0.elapsed() / 20;
            let t0 = std::time::Instant::now();
            let _: Vec<RowSampler> = (0..20)
                .map(|seed| RowSampler::new(&row, &greedy, seed))
                .collect();
            println!(
                "{style:?} V={v}: at temperature 0, greedy_first {scan:?} ({firsts}/20 answered) \
                 against a sampler {:?}",
                t0.elapsed() / 20
            );
            // Per sampler, on fresh copies (as hot as each other): the
            // scan further draws made before `Redraw` (the first draw's
            // code), then `next_token`'s first draw and 200 more.
            let z = std::time::Duration::ZERO;
            let (mut scan, mut first, mut then) = (z, z, z);
            for s in &ss {
                let mut a = s.clone();
                let t0 = std::time::Instant::now();
                for _ in 0..10 {
                    a.draw();
                }
                scan += t0.elapsed() / 10;
                let mut b = s.clone();
                let t0 = std::time::Instant::now();
                b.next_token();
                first += t0.elapsed();
                let t0 = std::time::Instant::now();
                for _ in 0..200 {
                    b.next_token();
                }
                then += t0.elapsed() / 200;
            }
            let (scan, first, then) = (scan / 20, first / 20, then / 20);
            println!(
                "{style:?} V={v} T={t}: build {built:?}; further draws: a scan {scan:?} each, \
                 now the first {first:?}, then {then:?} each"
            );
        }
    }
}

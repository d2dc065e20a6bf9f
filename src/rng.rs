//! A small deterministic pseudo-random generator (SplitMix64), used wherever
//! cdiff needs reproducible randomness: benchmarks, test corpora with holes
//! cut out, and sampling. Same seed → same sequence on every platform.

/// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, one add and three
/// xor-shift-multiplies per output.
///
/// ```
/// let mut r = cdiff::rng::SplitMix64::new(7);
/// let a = r.next_u64();
/// assert_eq!(cdiff::rng::SplitMix64::new(7).next_u64(), a);
/// assert!(r.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform integer in `0..n` (0 when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // Lemire's multiply-shift; the tiny bias is irrelevant here.
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// A uniform float in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Picks up to `holes` random spans `[start, end)` of a text of length `len`:
/// each at least one byte and at most a quarter of the text (one byte for
/// short texts), sorted, never overlapping or touching — so cutting them out
/// leaves exactly one hole per span. Fewer are returned when the text is too
/// short.
///
/// ```
/// let mut r = cdiff::rng::SplitMix64::new(3);
/// let spans = cdiff::rng::pick_spans(40, 3, &mut r);
/// assert!(spans.windows(2).all(|w| w[0].1 < w[1].0));
/// ```
pub fn pick_spans(len: usize, holes: usize, rng: &mut SplitMix64) -> Vec<(usize, usize)> {
    let max_len = (len / 4).max(1);
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for _ in 0..holes * 8 {
        if spans.len() == holes || len == 0 {
            break;
        }
        let l = 1 + rng.below(max_len as u64) as usize;
        if l > len {
            continue;
        }
        let start = rng.below((len - l + 1) as u64) as usize;
        let (s, e) = (start, start + l);
        if spans.iter().all(|&(a, b)| e < a || s > b) {
            spans.push((s, e));
        }
    }
    spans.sort_unstable();
    spans
}

/// Cuts `holes` random spans ([`pick_spans`]) out of `text`, returning the
/// partial output and the removed spans in order.
///
/// ```
/// let mut r = cdiff::rng::SplitMix64::new(1);
/// let (p, cut) = cdiff::rng::cut_spans(b"[1, 2, 3]", 2, &mut r);
/// assert_eq!(p.n_holes(), cut.len());
/// assert_eq!(p.fill(&cut).unwrap(), b"[1, 2, 3]");
/// ```
pub fn cut_spans(
    text: &[u8],
    holes: usize,
    rng: &mut SplitMix64,
) -> (crate::Partial, Vec<Vec<u8>>) {
    let spans = pick_spans(text.len(), holes, rng);
    let cut = spans.iter().map(|&(s, e)| text[s..e].to_vec()).collect();
    (crate::Partial::cut(text, &spans), cut)
}

/// Masks about `fraction` of a text's bytes the way a diffusion canvas is
/// masked mid-decoding: random spans of `1..=max_span` bytes, merged where
/// they touch or overlap. Returns the sorted, disjoint, non-touching spans
/// `[start, end)` (cut them out with [`Partial::cut`](crate::Partial::cut):
/// one hole per span).
///
/// ```
/// let mut r = cdiff::rng::SplitMix64::new(5);
/// let spans = cdiff::rng::mask_spans(1000, 0.3, 8, &mut r);
/// let masked: usize = spans.iter().map(|&(s, e)| e - s).sum();
/// assert!((250..=350).contains(&masked));
/// assert!(spans.windows(2).all(|w| w[0].1 < w[1].0));
/// ```
pub fn mask_spans(
    len: usize,
    fraction: f64,
    max_span: usize,
    rng: &mut SplitMix64,
) -> Vec<(usize, usize)> {
    let mut masked = vec![false; len];
    let target = ((len as f64) * fraction.clamp(0.0, 1.0)).round() as usize;
    let mut count = 0;
    let mut tries = 0;
    while count < target && tries < 64 * len + 64 {
        tries += 1;
        let l = 1 + rng.below(max_span.max(1) as u64) as usize;
        let start = rng.below(len as u64) as usize;
        for m in masked.iter_mut().skip(start).take(l) {
            if count < target && !*m {
                *m = true;
                count += 1;
            }
        }
    }
    let mut spans = Vec::new();
    let mut i = 0;
    while i < len {
        if masked[i] {
            let s = i;
            while i < len && masked[i] {
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_disjoint_nonempty_and_in_range() {
        let mut rng = SplitMix64::new(7);
        for len in 1..60 {
            for k in 1..5 {
                let spans = pick_spans(len, k, &mut rng);
                assert!(!spans.is_empty() && spans.len() <= k);
                assert!(spans.windows(2).all(|w| w[0].1 < w[1].0));
                assert!(spans.iter().all(|&(s, e)| s < e && e <= len));
                let doc: Vec<u8> = (0..len as u8).collect();
                assert_eq!(crate::Partial::cut(&doc, &spans).n_holes(), spans.len());
            }
        }
    }

    #[test]
    fn seeded_generator_is_deterministic() {
        let a: Vec<u64> = (0..5)
            .scan(SplitMix64::new(1), |r, _| Some(r.below(100)))
            .collect();
        let b: Vec<u64> = (0..5)
            .scan(SplitMix64::new(1), |r, _| Some(r.below(100)))
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x < 100));
    }
}

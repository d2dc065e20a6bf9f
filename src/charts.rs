//! Charts of texts before insertion points, kept for the next points whose
//! text before them starts with one.
//!
//! An insertion point `left · □ · right` answers proposals from the chart
//! of `left` (the mask module's `Prefix`: the automaton of `left` as a
//! prefix and its phase-1 chart, every item to the fixpoint). Building it
//! costs a parse of `left`, once per point: in a 2.3 KB C++ file whose
//! regions of 30 bytes take about 50 proposals each, that parse was about
//! a fifth of each proposal's cost. Points of one constraint often share
//! most of `left`: the regions of one file filled one after the other (the
//! second region's `left` is the first's, its fill and the text between
//! them), the same template run again (another seed, another mode of an
//! evaluation), an editor asking for completions at several places of one
//! file. So a point whose `left` is fixed text keeps its chart here when it
//! is built, and again when the point is dropped after moving (its `left`
//! grown by the accepted tokens); a later point takes the kept chart of the
//! longest text its own `left` starts with and grows it by the rest, as
//! [`crate::mask::Insertion::advance`] does after an accepted token (an
//! Earley step over the terminals the bytes emit), instead of parsing
//! `left` again.
//!
//! Answers cannot depend on it: the chart grown from a kept one is the
//! chart `advance` builds over the same bytes, whose answers equal a full
//! check's (the mask tests compare every token with one), and a grown
//! chart whose lexer states at the end differ from the point's own lexing
//! of `left` is dropped and built afresh instead.
//!
//! Cost: a lookup compares `left` with each kept text (at most
//! [`MAX_KEPT`], a memory comparison each) under a lock; keeping is a lock
//! and a copy of the chart's list of layers (the layers themselves are
//! shared, never copied: a chart only ever grows by new layers). Memory:
//! the kept charts hold at most [`crate::Config::kept_charts`] bytes
//! together (estimated from their tables), least recently used first out;
//! a chart larger than half of that is not kept.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use crate::intersect::Base;

/// Kept charts at most (a lookup compares `left` with each).
pub(crate) const MAX_KEPT: usize = 64;

/// The chart of one fixed text before an insertion point.
#[derive(Clone, Debug)]
pub(crate) struct KeptChart {
    /// The text (the whole `left` of the point that built it).
    pub(crate) text: Arc<[u8]>,
    /// The lexer states at the end of `text`, sorted.
    pub(crate) states: Vec<u32>,
    /// `(lexer state, automaton state)`: the chart's frontier states per
    /// lexer state at the end of `text`, sorted.
    pub(crate) at: Vec<(u32, u32)>,
    /// The chart.
    pub(crate) base: Base,
}

impl KeptChart {
    /// Bytes it holds, estimated (its layers' tables and the text).
    fn bytes(&self) -> usize {
        self.base.bytes() + self.text.len() + 8 * (self.states.len() + self.at.len())
    }
}

/// The kept charts of one constraint, shared by the threads that use it,
/// most recently used last.
#[derive(Debug, Default)]
pub(crate) struct KeptCharts {
    kept: Mutex<VecDeque<(KeptChart, usize)>>,
}

impl Clone for KeptCharts {
    /// A cache: a clone starts empty.
    fn clone(&self) -> KeptCharts {
        KeptCharts::default()
    }
}

impl KeptCharts {
    /// The kept chart of the longest text that `left` starts with (`None`
    /// where none does), now the most recently used.
    pub(crate) fn longest_prefix_of(&self, left: &[u8]) -> Option<KeptChart> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let best = kept
            .iter()
            .enumerate()
            .filter(|(_, (k, _))| left.starts_with(&k.text))
            .max_by_key(|(_, (k, _))| k.text.len())
            .map(|(i, _)| i)?;
        let entry = kept.remove(best)?;
        let chart = entry.0.clone();
        kept.push_back(entry);
        Some(chart)
    }

    /// Keeps `chart` (replacing one of the same text), dropping the least
    /// recently used ones past `max_bytes` together or [`MAX_KEPT`]; a
    /// chart larger than half of `max_bytes` is not kept.
    pub(crate) fn keep(&self, chart: KeptChart, max_bytes: usize) {
        let bytes = chart.bytes();
        if bytes > max_bytes / 2 {
            return;
        }
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        kept.retain(|(k, _)| k.text != chart.text);
        kept.push_back((chart, bytes));
        let mut total: usize = kept.iter().map(|(_, b)| b).sum();
        while total > max_bytes || kept.len() > MAX_KEPT {
            match kept.pop_front() {
                Some((_, b)) => total -= b,
                None => break,
            }
        }
    }

    /// Charts kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(text: &str) -> KeptChart {
        KeptChart {
            text: Arc::from(text.as_bytes()),
            states: vec![1],
            at: vec![(1, 0)],
            base: Base::default(),
        }
    }

    #[test]
    fn longest_kept_prefix_is_taken() {
        let k = KeptCharts::default();
        for t in ["ab", "abcd", "abx", ""] {
            k.keep(chart(t), 1 << 20);
        }
        let text = |c: Option<KeptChart>| c.map(|c| c.text.to_vec());
        assert_eq!(text(k.longest_prefix_of(b"abcdef")), Some(b"abcd".to_vec()));
        assert_eq!(text(k.longest_prefix_of(b"abc")), Some(b"ab".to_vec()));
        assert_eq!(text(k.longest_prefix_of(b"xyz")), Some(Vec::new()));
        assert_eq!(k.len(), 4);
    }

    #[test]
    fn kept_charts_are_bounded_least_recently_used_first_out() {
        let k = KeptCharts::default();
        for i in 0..MAX_KEPT + 5 {
            k.keep(chart(&format!("{i:03}")), 1 << 20);
        }
        assert_eq!(k.len(), MAX_KEPT);
        assert!(k.longest_prefix_of(b"000").is_none());
        assert!(k.longest_prefix_of(b"020").is_some());
        // A chart larger than half the bound is not kept; one at the bound
        // drops the others.
        let big = chart("big");
        let b = big.bytes();
        k.keep(big.clone(), 2 * b - 1);
        assert!(k.longest_prefix_of(b"big").is_none());
        k.keep(big, 2 * b);
        assert!(k.len() <= 2);
        assert!(k.longest_prefix_of(b"big").is_some());
    }
}

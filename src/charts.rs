//! Charts of texts before insertion points, kept for the next points whose
//! text before them starts with one, and automata of texts after them,
//! kept for the next points whose text after them they bound.
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
//! # Texts after points
//!
//! The text after a point is searched through an automaton with its own
//! chart (the intersection module's `Tail`), and its first search parses
//! all of it: in that 2.3 KB file, about as much as the rest of a region's
//! proposals together. When it begins with a hole, `□ · S` (the rest of an
//! autoregressive region, then the text after it), other points' texts
//! answer for it exactly, because a hole can hold anything:
//!
//! * every completion of `left · t · □ · S` is one of `left · t · □` (the
//!   hole takes `S` too): what `□` alone refuses, the point refuses;
//! * every completion of `left · t · □ · X · S` is one of
//!   `left · t · □ · S` (the hole takes `X` too): what a longer text that
//!   ends with `S` allows, the point allows.
//!
//! So a point that expects many proposals keeps its automata when dropped
//! (those of an `S` of [`crate::Config::kept_tails_from`] bytes or more),
//! by the key of `S` ([`tail_key`]); a later point takes those of its own
//! `S` if kept, and otherwise asks `□` alone first (one small automaton
//! for every point, kept too) and then the longest kept text that ends with
//! its `S` and has an automaton from the row's lexer state; only a row
//! neither answers makes the point's own automaton. In C++ the two agree
//! on nearly every row (the hole can close what `left · t` opened and open
//! what the text after it closes), and their charts are warm: a search
//! climbs from `left`'s items through the hole to items kept from earlier
//! searches. Answers cannot depend on it: each bound is a full check's
//! answer for another partial output, implied by the language inclusions
//! above (the mask tests compare every answer with a full check, on
//! grammars where the text after the hole decides answers too). A kept
//! text is taken out while a point uses it (its chart grows with every
//! search) and given back when the point is dropped; its memory is bounded
//! by [`crate::Config::kept_tails`] as the charts' is.
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

use crate::intersect::{Base, Tail};
use crate::partial::{Partial, Segment};

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

/// Values a constraint keeps for later insertion points, shared by the
/// threads that use it, most recently used last, with the bytes each
/// holds (estimated).
#[derive(Debug)]
struct Kept<T> {
    kept: Mutex<VecDeque<(T, usize)>>,
}

impl<T> Default for Kept<T> {
    fn default() -> Kept<T> {
        Kept {
            kept: Mutex::new(VecDeque::new()),
        }
    }
}

impl<T> Clone for Kept<T> {
    /// A cache: a clone starts empty.
    fn clone(&self) -> Kept<T> {
        Kept::default()
    }
}

impl<T> Kept<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<(T, usize)>> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes out the value `rank` ranks highest (`None` ranks out), with
    /// its bytes.
    fn take_best<K: Ord>(&self, rank: impl Fn(&T) -> Option<K>) -> Option<(T, usize)> {
        let mut kept = self.lock();
        let best = kept
            .iter()
            .enumerate()
            .filter_map(|(i, (v, _))| rank(v).map(|k| (k, i)))
            .max_by(|a, b| a.0.cmp(&b.0))
            .map(|(_, i)| i)?;
        kept.remove(best)
    }

    /// Keeps `value` of `bytes` (replacing those `same` picks), dropping
    /// the least recently used ones past `max_bytes` together or `max`
    /// values; a value larger than half of `max_bytes` is not kept.
    fn keep(
        &self,
        value: T,
        bytes: usize,
        max_bytes: usize,
        max: usize,
        same: impl Fn(&T) -> bool,
    ) {
        if bytes > max_bytes / 2 {
            return;
        }
        let mut kept = self.lock();
        kept.retain(|(k, _)| !same(k));
        kept.push_back((value, bytes));
        let mut total: usize = kept.iter().map(|(_, b)| b).sum();
        while total > max_bytes || kept.len() > max {
            match kept.pop_front() {
                Some((_, b)) => total -= b,
                None => break,
            }
        }
    }

    /// Values kept now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().len()
    }
}

/// The kept charts of one constraint (see the module docs).
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptCharts(Kept<KeptChart>);

impl KeptCharts {
    /// The kept chart of the longest text that `left` starts with (`None`
    /// where none does), now the most recently used.
    pub(crate) fn longest_prefix_of(&self, left: &[u8]) -> Option<KeptChart> {
        let (chart, bytes) = self
            .0
            .take_best(|k| left.starts_with(&k.text).then_some(k.text.len()))?;
        let mut kept = self.0.lock();
        kept.push_back((chart.clone(), bytes));
        Some(chart)
    }

    /// Keeps `chart` (replacing one of the same text), dropping the least
    /// recently used ones past `max_bytes` together or [`MAX_KEPT`]; a
    /// chart larger than half of `max_bytes` is not kept.
    pub(crate) fn keep(&self, chart: KeptChart, max_bytes: usize) {
        let bytes = chart.bytes();
        let text = chart.text.clone();
        self.0
            .keep(chart, bytes, max_bytes, MAX_KEPT, |k| k.text == text);
    }

    /// Charts kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// The automata of the text after an insertion point with their kept
/// charts: one main automaton with an entry per lexer state it was made
/// for, and automata read from one state each for states it was not made
/// for (the mask module's `tail_for` makes them).
#[derive(Debug)]
pub(crate) struct Tails {
    /// Per lexer state, its entry in `main` (`NO_ENTRY`: not made for it).
    pub(crate) entry_of: Vec<u32>,
    /// Which states `main` was made for.
    pub(crate) reach: Reach,
    pub(crate) main: Tail,
    /// Read from one lexer state each, for states `main` was not made for.
    pub(crate) extra: Vec<(u32, Tail)>,
}

impl Tails {
    /// Whether an automaton was made for lexer state `l`.
    pub(crate) fn has(&self, l: u32) -> bool {
        self.entry_of
            .get(l as usize)
            .is_some_and(|&k| k != NO_ENTRY)
            || self.extra.iter().any(|&(x, _)| x == l)
    }

    /// Bytes they hold, estimated.
    fn bytes(&self) -> usize {
        let extra: usize = self.extra.iter().map(|(_, t)| t.bytes()).sum();
        self.main.bytes() + extra + 4 * self.entry_of.len()
    }
}

/// The lexer states the main automaton of a [`Tails`] was made for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reach {
    /// The first one asked for.
    One,
    /// Those the constraint learned (see `Constraint::tail_starts`).
    Learned,
    /// Every lexer state.
    Every,
}

/// No entry (see [`Tails::entry_of`]).
pub(crate) const NO_ENTRY: u32 = u32::MAX;

/// The text after an insertion point that begins with a hole, `□ · S`,
/// with its automata, kept for later points (see the module docs).
#[derive(Debug)]
pub(crate) struct KeptTail {
    /// `S` encoded by [`tail_key`].
    pub(crate) key: Arc<[u8]>,
    /// `□ · S` itself.
    pub(crate) right: Partial,
    /// Its automata, once made.
    pub(crate) tails: Option<Tails>,
}

impl KeptTail {
    /// Bytes it holds, estimated.
    fn bytes(&self) -> usize {
        2 * self.key.len() + self.tails.as_ref().map_or(0, Tails::bytes)
    }
}

/// Which kept text after a point [`KeptTails::take`] looks for, given the
/// key of `□ · S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Want {
    /// `□ · S` itself.
    Same,
    /// The longest `□ · X · S` kept (`X` not empty) with an automaton
    /// read from lexer state `l`: every completion of
    /// `left · t · □ · X · S` is one of `left · t · □ · S` (the hole
    /// takes `X` too), so its "allowed" is this point's.
    LongerFrom(u32),
}

/// Escape byte of [`tail_key`]: a text byte equal to it is written
/// `[ESCAPE, 0]`, a hole `[ESCAPE, 1]`.
const ESCAPE: u8 = 0xFF;

/// The key of `right` when it is `□ · S` (a hole, then anything): `S`
/// encoded so that `S` is a suffix of `X · S` as partial outputs exactly
/// where the key is a suffix of the other key starting at a symbol (see
/// [`ends_with`]); `None` where `right` does not begin with a hole.
pub(crate) fn tail_key(right: &Partial) -> Option<Vec<u8>> {
    let (first, rest) = right.segments().split_first()?;
    if *first != Segment::Hole {
        return None;
    }
    let mut key = Vec::new();
    for s in rest {
        match s {
            Segment::Hole => key.extend_from_slice(&[ESCAPE, 1]),
            Segment::Text(t) => {
                for &b in t {
                    key.push(b);
                    if b == ESCAPE {
                        key.push(0);
                    }
                }
            }
        }
    }
    Some(key)
}

/// Whether key `long` ends with key `short` at a symbol's start (not in
/// the middle of an escaped pair), `short` shorter.
fn ends_with(long: &[u8], short: &[u8]) -> bool {
    let cut = long.len().wrapping_sub(short.len());
    long.len() > short.len() && long.ends_with(short) && (cut == 0 || long[cut - 1] != ESCAPE)
}

/// The kept texts after points of one constraint with their automata
/// (see the module docs). A point takes one out while it uses it and
/// gives it back when dropped: a chart of a text after a point grows
/// with every search.
#[derive(Clone, Debug, Default)]
pub(crate) struct KeptTails(Kept<KeptTail>);

impl KeptTails {
    /// Takes out the kept text after a point `want` asks for, given the
    /// key of this point's.
    pub(crate) fn take(&self, key: &[u8], want: Want) -> Option<KeptTail> {
        let taken = match want {
            Want::Same => self.0.take_best(|t| (*t.key == *key).then_some(0)),
            Want::LongerFrom(l) => self.0.take_best(|t| {
                let from = t.tails.as_ref().is_some_and(|x| x.has(l));
                (from && ends_with(&t.key, key)).then_some(t.key.len())
            }),
        };
        taken.map(|(t, _)| t)
    }

    /// Whether a text that ends with the one of `key` (longer) is kept.
    pub(crate) fn any_longer(&self, key: &[u8]) -> bool {
        self.0.lock().iter().any(|(t, _)| ends_with(&t.key, key))
    }

    /// Keeps `tail` (replacing one of the same key), as
    /// [`KeptCharts::keep`] does.
    pub(crate) fn keep(&self, tail: KeptTail, max_bytes: usize) {
        let bytes = tail.bytes();
        let key = tail.key.clone();
        self.0
            .keep(tail, bytes, max_bytes, MAX_KEPT, |t| t.key == key);
    }

    /// Texts kept now.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
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
    #[test]
    fn tail_keys_end_with_suffixes_at_symbols_only() {
        let key = |p: Partial| tail_key(&p).unwrap();
        // A hole, then `S`: only `S` is in the key.
        assert_eq!(key(Partial::new().hole().text("ab")), b"ab".to_vec());
        assert_eq!(tail_key(&Partial::new().text("ab")), None);
        assert!(key(Partial::new().hole()).is_empty());
        // `□ · x □ ab` ends with `□ · ab` and with `□ · b`, not with `□ · □ab`.
        let long = key(Partial::new().hole().text("x").hole().text("ab"));
        assert!(ends_with(&long, &key(Partial::new().hole().text("ab"))));
        assert!(ends_with(&long, &key(Partial::new().hole().text("b"))));
        assert!(!ends_with(&long, &long));
        // An escaped byte or a hole is one symbol: a key is not a suffix
        // of another one from the middle of its `[ff 00]` (a text byte
        // 0xff) or `[ff 01]` (a hole).
        let one = key(Partial::new().hole().text(b"\x01ab"));
        let ff = key(Partial::new().hole().text(b"\xffab"));
        assert_eq!(ff, vec![ESCAPE, 0, b'a', b'b']);
        assert!(!ends_with(&ff, &key(Partial::new().hole().text(b"\x00ab"))));
        assert!(ends_with(&ff, &key(Partial::new().hole().text("ab"))));
        let after_hole = key(Partial::new().hole().text("c").hole().text(b"\x01ab"));
        assert_eq!(&after_hole[1..3], &[ESCAPE, 1]);
        assert!(ends_with(&after_hole, &one));
        assert!(!ends_with(&after_hole, &after_hole[2..]));
    }

    #[test]
    fn kept_tails_are_taken_by_key() {
        let tail = |s: &str| KeptTail {
            key: Arc::from(tail_key(&Partial::new().hole().text(s)).unwrap()),
            right: Partial::new().hole().text(s),
            tails: None,
        };
        let k = KeptTails::default();
        for s in ["abc", "xabc", "zzabc", "c"] {
            k.keep(tail(s), 1 << 20);
        }
        let key = |s: &str| tail_key(&Partial::new().hole().text(s)).unwrap();
        let taken = k.take(&key("abc"), Want::Same).map(|t| t.key.to_vec());
        assert_eq!(taken, Some(b"abc".to_vec()));
        assert!(k.take(&key("abc"), Want::Same).is_none());
        // A longer one is taken only with automata read from the state.
        assert!(k.take(&key("abc"), Want::LongerFrom(0)).is_none());
        assert_eq!(k.len(), 3);
    }
}

//! Phase 1: generating triples, filtered top-down (Earley over DFA states).
//!
//! Items are `(production, dot, origin)` at a DFA state. Predicting `A` at
//! state `j` adds `A`'s productions with origin `j`; a terminal after the dot
//! is scanned along `D`'s edges; a finished item completes the triple
//! `(origin, A, j)`, which advances every item waiting for `A` at `origin`.
//! Because `D` has cycles, completions may arrive before or after the items
//! that wait for them: each completed triple is also kept in `ends`, and an
//! item that starts waiting looks there first. The fixpoint is reached with a
//! worklist; each item and triple is handled once.
//!
//! The worklist hands out the item at the highest-numbered state first
//! (states are numbered breadth-first, so roughly the furthest into the
//! text): a race to the end, which [`check`](crate::Constraint::check) stops
//! at the goal. Order does not change the fixpoint, but on canvases with
//! many holes it decides how much of it is built before the goal: in a plain
//! LIFO order a 1 KB C++ canvas with 68 holes built 1.2 million items
//! (0.45 s) before the goal, and 2 ms of work in this order.
//!
//! The race to the end can lose when the text begins with a hole: the
//! hole predicts every symbol, and the furthest items are those of every
//! derivation started in it, not the goal's (a 4 KB JSON canvas with 309
//! holes and a fixed end built most of its fixpoint, 14 s). [`Order::StartFirst`]
//! hands out the items whose origin is a start state first, the goal's own
//! derivation racing ahead of the rest: 6 ms there. It is not the default
//! order, because on C++ canvases that start with fixed text it can be far
//! slower (a few ran out of budget); the front door uses it as a second
//! try when a canvas's search runs long (`Config::long_search_per_state`).
//!
//! Items with the dot at 0 before a nonterminal never enter the worklist:
//! a prediction makes them wait (and predicts their nonterminal) at once,
//! depth first along chains of first nonterminals ([`Earley::predict`]),
//! which on C++ functions reaches the goal with about a third fewer
//! completions than handing them out in the worklist's order. At a
//! recorded state without edges (the frontier of a growth, where every
//! production is predicted) the dot-0 items before a terminal skip the
//! worklist too: all their scan does there is record them.
//!
//! No set of items is kept: an item with the dot after its first symbol is
//! made by exactly one (dot-0 item, edge) or (dot-0 item, completed triple)
//! pair, because dot-0 items are made once per prediction, edges and triples
//! are unique, and each (waiting item, completion) pair is handled once —
//! either when the item starts waiting (the completion is already in `ends`)
//! or when the completion's wake reaches it (the item waited before the
//! completion: a wake skips waiting cells newer than its completion).

use super::table::{Heads, KeySet, MaxQueue, Sets, NIL};
use super::{key, Intersector};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::Result;
use crate::hash::FxMap;
use crate::lexer::{EpsClosure, TokenNfa};
use std::sync::Arc;

/// The order the worklist hands out items in (see the module docs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Order {
    /// The item at the highest-numbered state first.
    #[default]
    Furthest,
    /// Items whose origin is a start state first (by highest state), then
    /// the rest (by highest state): races the goal's own derivation.
    StartFirst,
    /// The item at the lowest-numbered state first, and a completion's
    /// wake before it if the completion ends no further: the searches of
    /// a [`Tail`] once it remembers a triple (see [`Tail::search`]).
    Nearest,
}

/// The completed triples of phase 1 and whether the goal was reached.
pub(crate) struct Chart {
    /// Every completed (generating and predicted) nonterminal triple whose
    /// origin is a state of the automaton searched, by [`Chart::index`].
    done: KeySet,
    /// States of the automaton searched, numbered from `off`.
    len: u64,
    off: u32,
    /// Terminals (nonterminal symbols start here).
    n_terms: u32,
    /// A goal triple `(q0, S, f)`, if one completed.
    pub(crate) goal: Option<u64>,
    /// Whether the search reached its fixpoint (every triple is here).
    pub(crate) fixpoint: bool,
    /// Whether the goal was reached at a triple remembered from an
    /// earlier search of a [`Tail`].
    remembered: bool,
    /// How many triples completed (sizes phase 2's tables).
    pub(crate) n_done: usize,
    /// The `(state, terminal)` pairs some item scanned, by
    /// [`Chart::scan_index`]: the only terminal edges phase 2 needs.
    scanned: KeySet,
}

impl Chart {
    /// The index of triple `(i, A, k)` for nonterminal symbol `A` (both
    /// ends states of the automaton searched).
    #[inline]
    fn index(&self, i: u32, a: u32, k: u32) -> u64 {
        ((a - self.n_terms) as u64 * self.len + (i - self.off) as u64) * self.len
            + (k - self.off) as u64
    }

    /// The index of the pair (state `p`, terminal `t`).
    #[inline]
    fn scan_index(&self, p: u32, t: u32) -> u64 {
        t as u64 * self.len + (p - self.off) as u64
    }

    /// Whether some item scanned terminal `t` at state `p`.
    pub(crate) fn was_scanned(&self, p: u32, t: u32) -> bool {
        self.scanned.contains(self.scan_index(p, t))
    }

    /// Whether the nonterminal triple `(i, A, k)` completed.
    pub(crate) fn is_done(&self, i: u32, a: u32, k: u32) -> bool {
        self.done.contains(self.index(i, a, k))
    }
}

/// Initial table size: `per_state` entries per automaton state, capped (large
/// inputs amortise growth anyway).
fn cap(per_state: usize, states: usize) -> usize {
    (per_state * states).min(1 << 14)
}

/// Initial size of the hash tables of one search of a [`Tail`] (they grow
/// as needed).
const TAIL_SEARCH_CAP: usize = 64;

/// Initial size of the hash set of completed triples: 16 per state, up to
/// 2¹⁷. With the cap of [`cap`] (2¹⁴) the set of a 4 KB JSON canvas (30 %
/// masked) grew by rehashing several times: 15 % of its check.
fn done_cap(states: usize) -> usize {
    (16 * states).min(1 << 17)
}

#[inline]
fn item(prod: u32, dot: u32, origin: u32, state: u32) -> u64 {
    ((prod as u64) << 44) | ((dot as u64) << 42) | ((origin as u64) << 21) | state as u64
}

#[inline]
fn unitem(it: u64) -> (u32, u32, u32, u32) {
    (
        (it >> 44) as u32,
        ((it >> 42) & 3) as u32,
        ((it >> 21) & 0x1f_ffff) as u32,
        (it & 0x1f_ffff) as u32,
    )
}

/// The tables of the items at the states of the automaton searched: all of
/// them, or (searching a [`Tail`]) those whose origin is there too.
struct Own {
    work: MaxQueue,
    /// Predicted `(nonterminal, state)` pairs.
    predicted: KeySet,
    /// (nonterminal, state) → head of the list of items waiting there.
    waiting: Heads,
    /// (nonterminal, origin) → head of the list of completed end states
    /// (origins here only: an item waits only here).
    ends: Heads,
    /// Arena of list cells `(value, next)`: waiting items or end states.
    arena: Vec<(u64, u32)>,
    /// Completed triples from here, by [`Chart::index`].
    done: KeySet,
    /// Per state, `g.term_words` words: the terminals on its edges (see
    /// [`Intersector::may_start`]).
    out: Vec<u64>,
    /// Scratch for ε-closures (a tail keeps it with its tables: made per
    /// search, it was a zeroed array as long as the text after the point).
    eps: EpsClosure,
    /// Searching a [`Tail`]: the triples from the base into the tail
    /// known to lead to the goal, by [`live_key`] (see [`Tail::search`]).
    live: crate::hash::FxSet<u128>,
}

impl Own {
    /// Bytes its tables hold, estimated.
    fn bytes(&self) -> usize {
        self.work.bytes()
            + self.predicted.bytes()
            + self.waiting.bytes()
            + self.ends.bytes()
            + 16 * self.arena.capacity()
            + self.done.bytes()
            + 8 * self.out.capacity()
            + self.eps.bytes()
            + 32 * self.live.capacity()
    }

    fn new(g: &Intersector, dfa: &TokenNfa, ceiling: Ceiling) -> Fits<Own> {
        Own::with_order(g, dfa, ceiling, Order::Furthest, Sets::Many)
    }

    /// Tables for one of the many searches of an insertion point's
    /// relations (few entries set: see [`Sets::Few`]).
    fn for_extension(g: &Intersector, dfa: &TokenNfa, ceiling: Ceiling) -> Fits<Own> {
        Own::with_order(g, dfa, ceiling, Order::Furthest, Sets::Few)
    }

    /// Tables for a search in `order` ([`Order::StartFirst`] keys its
    /// worklist twice over).
    fn with_order(
        g: &Intersector,
        dfa: &TokenNfa,
        ceiling: Ceiling,
        order: Order,
        sets: Sets,
    ) -> Fits<Own> {
        let len = dfa.len() as u64;
        let keys = match order {
            Order::Furthest | Order::Nearest => len,
            Order::StartFirst => 2 * len,
        };
        let nts = (g.n_syms - g.n_terms) as u64;
        // Hash tables (large inputs) are sized for a few dozen items per
        // state: growing them was a tenth of a check's time.
        Ok(Own {
            work: MaxQueue::new(keys as usize, ceiling)?,
            predicted: KeySet::new(nts * len, cap(16, dfa.len()), ceiling)?,
            waiting: Heads::new(nts * len, cap(32, dfa.len()), ceiling, sets)?,
            ends: Heads::new(nts * len, cap(16, dfa.len()), ceiling, sets)?,
            arena: Vec::with_capacity(cap(64, dfa.len())),
            done: KeySet::new(nts * len * len, done_cap(dfa.len()), ceiling)?,
            out: out_terminals(g, dfa, &ceiling)?,
            eps: EpsClosure::new(dfa),
            live: Default::default(),
        })
    }
}

/// The items of one search of a [`Tail`] whose origin is before it (in the
/// base): dropped when the search ends.
struct Temp {
    waiting: Heads,
    arena: Vec<(u64, u32)>,
    /// Per cell of `arena`: the cause of its item (see [`Earley::cur`]).
    causes: Vec<u32>,
    /// The triples from base states into the tail completed in this
    /// search: their [`live_key`] and the index here of the triple whose
    /// wake led to them ([`NIL`]: none did). (Here, not in [`Earley`]: a
    /// check's search has no use for them.)
    far_log: Vec<(u128, u32)>,
    /// The causes of the items in the worklist whose origin is in the base
    /// and which a triple of `far_log` led to (see [`Earley::cur`]).
    queued: FxMap<u64, u32>,
}

/// The scratch vectors of a search, kept per thread from one search to
/// the next (see [`Spare::take`]).
///
/// An insertion point's mask runs hundreds of small searches (one per row
/// of its relations, growing a few terminals or entering the text after
/// the point); each grew its worklists, its temporary items and its log of
/// triples from nothing and freed them at its end: in C++ masks about a
/// twentieth of their instructions went to the allocator and to growing
/// those vectors. Taken from here they are the vectors an earlier search
/// used, emptied, with the room they grew to. Nothing reads a vector's
/// capacity, so no answer changes.
#[derive(Default)]
struct Spare {
    wakes: Vec<Wake>,
    predicting: Vec<(u32, u32)>,
    closure: Vec<u32>,
    lands: Vec<u32>,
    land_of: FxMap<u32, (u32, u32)>,
    arena: Vec<(u64, u32)>,
    causes: Vec<u32>,
    far_log: Vec<(u128, u32)>,
    queued: FxMap<u64, u32>,
}

/// A kept scratch vector holds at most this many elements' room (a
/// check's search may grow its vectors far larger; those are freed).
const SPARE_MAX: usize = 1 << 14;

thread_local! {
    static SPARE: std::cell::RefCell<Option<Spare>> = const { std::cell::RefCell::new(None) };
}

impl Spare {
    /// The thread's kept scratch, or new empty vectors (the first search
    /// of a thread, or a search inside another one).
    fn take() -> Spare {
        SPARE
            .try_with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.take()))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Keeps the scratch for the thread's next search, emptied; vectors
    /// grown past [`SPARE_MAX`] are freed.
    fn give(mut self) {
        fn empty<T>(v: &mut Vec<T>) {
            v.clear();
            if v.capacity() > SPARE_MAX {
                *v = Vec::new();
            }
        }
        fn empty_map<K, V>(m: &mut FxMap<K, V>) {
            m.clear();
            if m.capacity() > SPARE_MAX {
                *m = FxMap::default();
            }
        }
        empty(&mut self.wakes);
        empty(&mut self.predicting);
        empty(&mut self.closure);
        empty(&mut self.lands);
        empty_map(&mut self.land_of);
        empty(&mut self.arena);
        empty(&mut self.causes);
        empty(&mut self.far_log);
        empty_map(&mut self.queued);
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                *s = Some(self);
            }
        });
    }
}

struct Earley<'a, const TRACK: bool> {
    g: &'a Intersector,
    order: Order,
    /// The automaton searched; its state `s` has the id `off + s` here.
    dfa: &'a TokenNfa,
    off: u32,
    /// States of `dfa`: the tables are indexed by states of `dfa` only
    /// (items, predictions and waiting lists are made there and nowhere
    /// else), so extending a long base costs what the extension needs.
    len: u64,
    /// The chart extended (see [`Base`]); its state `s` has the id
    /// `base_at + s` here.
    base: Option<&'a Base>,
    base_at: u32,
    /// Recording a base layer: per state, whether it is a frontier state,
    /// and the items there with a terminal after the dot.
    record: Vec<bool>,
    scans: FxMap<u32, Vec<u64>>,
    own: Own,
    /// Searching a [`Tail`]: the items whose origin is in the base.
    temp: Option<Temp>,
    /// The goal was found; only the tail's own items are still processed.
    draining: bool,
    /// Completed triples whose origin is in the base, by (symbol, origin,
    /// end); ids are below `n_ids`.
    far: KeySet,
    n_ids: u64,
    chart: Chart,
    /// The states the start reaches by ε-moves (the start included); in an
    /// extension, the base's (no state of `dfa` is one).
    is_start: std::borrow::Cow<'a, [bool]>,
    /// Scratch: the states of the current ε-closure.
    closure: Vec<u32>,
    /// Debug builds check that no item is made twice (see the module docs).
    #[cfg(debug_assertions)]
    made: crate::hash::FxSet<u64>,
    /// `(origin, symbol, end, cell, temp cell)`: `cell` is the completion's
    /// cell in `ends` and `temp cell` the length of the temporary arena
    /// then; waiting cells from then on already saw it.
    wakes: Vec<Wake>,
    /// Searching a [`Tail`] (no log of scanned terminals).
    tail: bool,
    /// Scratch: the stack of [`Earley::predict`]'s depth-first walk.
    predicting: Vec<(u32, u32)>,
    /// What the tables may grow to.
    ceiling: Ceiling,
    /// While an item or a wake is handled: the index in [`Temp::far_log`] of the
    /// triple from a base state whose wake led to it ([`NIL`]: none
    /// did, or the item is the tail's own); what it makes inherits it.
    cur: u32,
}

/// A completion's wake: `(origin, symbol, end, cell, temp cell)` (see
/// [`Earley::wakes`]).
type Wake = (u32, u32, u32, u32, u32);

/// How many waiting wakes [`Order::Nearest`] chooses among (see
/// [`Earley::next_wake`]).
const NEAREST_WAKES: usize = 32;

/// The key of triple `(b, A, k)` for [`Own::live`], `b` a state of the
/// base layer `uid` (layer-local) and `k` a state of a tail: both fit an
/// item's 21 bits. By the layer's uid, not the base's state ids: the
/// layers grown for an insertion's terminals are taken off after its
/// search, and the next ones grown take their ids.
#[inline]
fn live_key(uid: u64, a: u32, b: u32, k: u32) -> u128 {
    ((uid as u128) << 64) | ((a as u128) << 42) | ((b as u128) << 21) | k as u128
}

/// The most triples a [`Tail`] remembers ([`Own::live`]; about 2 MB): a
/// C++ mask over Qwen2's vocabulary adds about 2,000, mostly from the
/// layers of its rows' own terminals, which later masks never see again.
const MAX_LIVE: usize = 1 << 16;

/// Source of [`Layer::uid`]s.
static LAYER_UIDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How a search enters a [`Tail`] (see [`Tail::search`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entering<'e> {
    /// The tail's entry.
    pub(crate) k: usize,
    /// The base's frontier states the tail follows.
    pub(crate) from: &'e [u32],
    /// Terminals (sorted) read over to the entry first, if any.
    pub(crate) before: Option<&'e [u32]>,
    /// Whether the tail remembers the triples from the base that led to
    /// the goal, for its later searches (see [`Tail::search`]).
    pub(crate) remember: bool,
}

/// How long phase 1 runs.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Until {
    /// Until the goal completes (or the fixpoint, if it never does).
    Goal,
    /// Until the fixpoint, unless that costs more than `effort` times the
    /// work that found the goal plus `floor` units (then it stops there and
    /// [`Chart::fixpoint`] is false).
    Fixpoint { effort: u64, floor: u64 },
}

/// Runs phase 1 as long as `until` says. Phase 2 finds the shortest witness
/// among the triples completed here, so only the fixpoint makes it the
/// shortest of all.
pub(crate) fn search(
    g: &Intersector,
    dfa: &TokenNfa,
    budget: &mut Budget,
    until: Until,
    order: Order,
) -> Result<Chart> {
    let own = Own::with_order(g, dfa, budget.ceiling(), order, Sets::Many)?;
    let s = Search {
        until,
        order,
        ..Search::default()
    };
    Ok(search_in(g, dfa, budget, own, s)?.0)
}

/// The phase-1 chart of a prefix's automaton ([`crate::lexer::Frontier`])
/// at its fixpoint, kept to be extended by [`extend`] and grown by
/// [`grow`]: no goal (the prefix has no final state), and at the
/// `frontier` states every production is predicted (what follows the
/// prefix is not known yet) and the items waiting for a terminal are kept.
///
/// Cost: one fixpoint search over the prefix; the prefix has no hole here,
/// so its automaton is acyclic and the chart is about linear in its length.
pub(crate) fn base(
    g: &Intersector,
    dfa: &TokenNfa,
    frontier: &[u32],
    budget: &mut Budget,
) -> Result<Base> {
    let own = Own::new(g, dfa, budget.ceiling())?;
    let s = Search {
        frontier: Some(frontier),
        ..Search::default()
    };
    let (_, layer, is_start, _) = search_in(g, dfa, budget, own, s)?;
    Ok(Base {
        layers: vec![Arc::new(layer)],
        is_start: is_start.into_owned(),
    })
}

/// How a [`Base`] grows (see [`grow`]): by the automaton `ext`, entered by
/// the `seeds` (as in [`extend`]); `frontier` (states of `ext`) are the new
/// frontier states (any terminal may follow them).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Growth<'g> {
    pub(crate) ext: &'g TokenNfa,
    pub(crate) seeds: &'g [Seed<'g>],
    pub(crate) frontier: &'g [u32],
}

/// Grows `base` as `by` says: the prefix is now the base's followed by
/// `by.ext`. The chart of the longer prefix is the base's plus a layer
/// holding what `ext` adds, searched to its fixpoint: items and
/// predictions are made only at `ext`'s states, and a completion that
/// starts in the base wakes the base's waiting items, which never change
/// again (no item is ever made at a state of an older layer). This is an
/// Earley parser's step over the terminals an accepted token emits: its
/// cost is that of the new items, not of the prefix.
pub(crate) fn grow(
    g: &Intersector,
    base: &mut Base,
    by: Growth<'_>,
    budget: &mut Budget,
) -> Result<()> {
    let own = Own::new(g, by.ext, budget.ceiling())?;
    let s = Search {
        base: Some(&*base),
        seeds: by.seeds,
        frontier: Some(by.frontier),
        ..Search::default()
    };
    let (_, layer, _, _) = search_in(g, by.ext, budget, own, s)?;
    base.layers.push(Arc::new(layer));
    Ok(())
}

/// Phase 1 to its fixpoint, however long that takes.
const FIXPOINT: Until = Until::Fixpoint {
    effort: u64::MAX,
    floor: u64::MAX,
};

/// How an extension of a [`Base`] is entered: every item at the base's
/// frontier states `from` waiting for a terminal `t` moves over it to each
/// state `d` of the extension with `(t, d)` in `steps` (sorted), and the
/// states its ε-moves reach.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seed<'s> {
    pub(crate) from: &'s [u32],
    pub(crate) steps: &'s [(u32, u32)],
}

/// Whether the goal is reachable when `ext` follows the base as the
/// `seeds` say; the search goes on in `ext` alone, waking the base's
/// waiting items when a completion starts in the base. The goal: the
/// grammar's start symbol from a start state of the base to a final state
/// of `ext`.
///
/// This answers, for `left · s · right` with `left` the base's prefix, the
/// question of a full check on the words whose terminals up to the point
/// follow the base, whose next terminal is one of a seed's steps, and whose
/// rest is a word of `ext` from there — without building or searching
/// `left` again.
pub(crate) fn extend(
    g: &Intersector,
    base: &Base,
    ext: &TokenNfa,
    seeds: &[Seed<'_>],
    budget: &mut Budget,
) -> Result<bool> {
    let own = Own::for_extension(g, ext, budget.ceiling())?;
    let s = Search {
        until: Until::Goal,
        base: Some(base),
        seeds,
        ..Search::default()
    };
    Ok(search_in(g, ext, budget, own, s)?.0.goal.is_some())
}

/// The automaton of the text after an insertion point with the part of its
/// chart that does not depend on what comes before it: the items whose
/// origin is one of its states (predicted there), their completions and
/// waiting lists, kept across searches ([`Tail::search`]). A search from a
/// base makes the items whose origin is in the base (dropped after it) and
/// the predictions they need; the tail's own items are then processed to
/// their fixpoint before the search returns, so the next search finds every
/// completion of what was predicted so far and adds only what it predicts
/// anew. Over the many relations of one insertion point — and over every
/// point of an autoregressive loop, where the text after the point stays
/// the same — the text after the point is searched about once.
///
/// A tail may have several entries (the text read from several lexer
/// states, [`crate::lexer::TokenNfa::build_entries`]): a search enters by
/// one of them, and the kept chart serves them all, since its items are
/// those of the automaton's own states whichever entry led there.
pub(crate) struct Tail {
    nfa: TokenNfa,
    /// The kept chart; `None` before the first search, and after a search
    /// failed (its tables may be inconsistent).
    own: Option<Own>,
    /// Searches so far.
    searches: u32,
    /// Searches that reached the goal at a remembered triple.
    remembered: u32,
    /// Per entry: its state (`None`: nothing is accepted from it).
    entries: Vec<Option<u32>>,
    /// Per entry, made on first use.
    entered: Vec<Option<Entered>>,
}

/// How a [`Tail`] is entered at one of its entries: the steps out of the
/// entry's ε-closure (sorted) and whether that closure holds a final
/// state.
type Entered = (Vec<(u32, u32)>, bool);

impl std::fmt::Debug for Tail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tail")
            .field("states", &self.nfa.len())
            .finish_non_exhaustive()
    }
}

impl Tail {
    /// The tail of `nfa` entered at the states `entries`, nothing searched
    /// yet.
    pub(crate) fn new(nfa: TokenNfa, entries: Vec<Option<u32>>) -> Tail {
        let entered = vec![None; entries.len()];
        Tail {
            nfa,
            own: None,
            searches: 0,
            remembered: 0,
            entries,
            entered,
        }
    }

    /// Bytes it holds, estimated: its automaton and its chart's tables.
    pub(crate) fn bytes(&self) -> usize {
        let entered: usize = self
            .entered
            .iter()
            .flatten()
            .map(|(s, _)| 8 * s.capacity() + 32)
            .sum();
        self.nfa.bytes()
            + self.own.as_ref().map_or(0, Own::bytes)
            + 8 * self.entries.len()
            + entered
    }

    /// The state of entry `k`, if anything is accepted from it.
    fn entry(&self, k: usize) -> Option<u32> {
        self.entries
            .get(k)
            .copied()
            .flatten()
            .filter(|_| !self.nfa.is_empty())
    }

    /// The steps out of entry `k`'s ε-closure and whether it accepts the
    /// empty word (empty and `false` where nothing is accepted from it).
    fn entered(&mut self, k: usize) -> (&[(u32, u32)], bool) {
        if self.entered.get(k).is_some_and(Option::is_none) {
            let start = match self.entry(k) {
                Some(e) => self.nfa.closure(&[e]),
                None => Vec::new(),
            };
            let nfa = &self.nfa;
            let accepts_empty = start.iter().any(|&q| nfa.finals[q as usize]);
            let mut steps: Vec<(u32, u32)> = start
                .iter()
                .flat_map(|&q| nfa.edges(q).iter().copied())
                .collect();
            steps.sort_unstable();
            steps.dedup();
            self.entered[k] = Some((steps, accepts_empty));
        }
        match self.entered.get(k) {
            Some(Some((steps, e))) => (steps, *e),
            _ => (&[], false),
        }
    }

    /// How many searches reached the goal at a triple remembered from an
    /// earlier one (see [`Tail::search`]).
    pub(crate) fn remembered(&self) -> u32 {
        self.remembered
    }

    /// The automaton (its start leads to every entry).
    pub(crate) fn nfa(&self) -> &TokenNfa {
        &self.nfa
    }

    /// The automaton read from entry `k` (a copy of it with that start).
    pub(crate) fn nfa_from(&self, k: usize) -> TokenNfa {
        let mut nfa = self.nfa.clone();
        if let Some(e) = self.entry(k) {
            nfa.start = e;
        }
        nfa
    }

    /// Whether the automaton accepts nothing from entry `k`.
    pub(crate) fn is_empty(&self, k: usize) -> bool {
        self.entry(k).is_none()
    }

    /// Whether the automaton accepts the empty word from entry `k`.
    pub(crate) fn accepts_empty(&mut self, k: usize) -> bool {
        self.entered(k).1
    }

    /// Whether the goal is reachable when the automaton, entered at entry
    /// `at.k`, follows the base's frontier states `at.from` (every item
    /// there waiting for a terminal the automaton starts with there moves
    /// into it; with `at.before`, sorted, every item waiting for one of
    /// those terminals moves over it to the entry): [`extend`] with the
    /// tail's own items reused and kept.
    ///
    /// Once a triple is remembered (below), a search hands out the item
    /// and the wake at the lowest state first ([`Order::Nearest`]; the
    /// first searches race to the end, [`Order::Furthest`]): a tail's
    /// states are numbered from its entries, so when the text after the
    /// point begins with a hole, what enters the tail is finished in the
    /// hole, where a remembered triple usually waits, before it is
    /// followed into the text after the hole. In C++ masks over Qwen2's
    /// vocabulary these searches took a third fewer instructions so
    /// (1.15 -> 0.76 G in the mask report), every completion of a chain
    /// of unit productions being woken at one end of the hole at a time
    /// instead of at all of them (the hole's states after one lexeme or
    /// another) before the next item.
    ///
    /// With `at.remember`, a triple from a state of the base into the
    /// tail leads to the goal or not whatever the search that made it:
    /// what it wakes are the items of that state's layer and the layers
    /// under it, which never change, and what those need next is the
    /// tail's. So each triple remembers the one whose wake led to it, and
    /// when the goal completes, the chain of triples that led there is
    /// kept as live, by layer ([`live_key`]); a later search that
    /// completes one of them has reached the goal. That holds for the
    /// layers an insertion's terminals grew too, whenever they are put
    /// back on the same layers (a layer is only ever put back where it
    /// was grown): a row's second search with other `l₁`, or a longer
    /// row grown on its layers, stops where the climb from the
    /// insertion's own items reaches a triple remembered there.
    ///
    /// # Errors
    /// As [`extend`]; the tail is then unusable (and says so on every later
    /// search).
    pub(crate) fn search(
        &mut self,
        g: &Intersector,
        base: &Base,
        at: Entering<'_>,
        budget: &mut Budget,
    ) -> Result<bool> {
        let Entering {
            k,
            from,
            before,
            remember,
        } = at;
        let Some(state) = self.entry(k) else {
            return Ok(false);
        };
        // Taken out while the search borrows the tail (put back after it;
        // made again if a search fails).
        self.entered(k);
        let made = self.entered[k].take();
        let entry: Vec<(u32, u32)>;
        let steps = match before {
            None => made.as_ref().map_or(&[][..], |m| &m.0[..]),
            Some(ts) => {
                entry = ts.iter().map(|&t| (t, state)).collect();
                &entry[..]
            }
        };
        let seeds = [Seed { from, steps }];
        // No item at `from` waits for a terminal the entry reads: nothing
        // enters the tail, so nothing from the base's start reaches its
        // end. In C++ masks every refused row was of this kind (57 % of
        // the rows searched), each paying for a search's tables.
        if !seeds_any(g, base, &seeds) {
            self.entered[k] = made;
            return Ok(false);
        }
        self.searches += 1;
        // The tail's own items are kept from its first search on. Racing
        // the first search without keeping them (most tails of a mask's
        // walk are searched once) was slower since the rows ending in
        // states that end their lexeme in place share the start state's
        // tail: C++ masks over Qwen2 6.9 -> 6.3 ms median, and an
        // autoregressive loop in a 2.3 KB file 77 -> 60 us per proposal.
        // Its tables are a check's (dense arrays where they fit): a point
        // keeps one tail, not one per lexer state (the same loop 56-59 ->
        // 40-41 us per proposal).
        let own = match self.own.take() {
            Some(mut own) => {
                // Triples from the layers of rows long gone stay: the set
                // is forgotten (a cache) before it holds more than this.
                if own.live.len() >= MAX_LIVE {
                    own.live.clear();
                }
                own
            }
            None if self.searches == 1 => Own::new(g, &self.nfa, budget.ceiling())?,
            None => {
                return Err(crate::error::Error::new(
                    crate::error::ErrorKind::Budget,
                    "an earlier search of the text after this insertion point failed",
                ))
            }
        };
        let order = match own.live.is_empty() {
            true => Order::Furthest,
            false => Order::Nearest,
        };
        let s = Search {
            until: Until::Goal,
            base: Some(base),
            seeds: &seeds,
            tail: true,
            remember,
            order,
            ..Search::default()
        };
        let (chart, _, _, own) = search_in(g, &self.nfa, budget, own, s)?;
        self.own = Some(own);
        self.entered[k] = made;
        self.remembered += u32::from(chart.remembered);
        Ok(chart.goal.is_some())
    }
}

/// Whether some item at a seed's frontier states waits for a terminal one
/// of its steps reads.
pub(super) fn seeds_any(g: &Intersector, base: &Base, seeds: &[Seed<'_>]) -> bool {
    seeds.iter().any(|seed| {
        seed.from.iter().any(|&f| {
            base.scans(f).iter().any(|&it| {
                let (prod, dot, _, _) = unitem(it);
                let y = g.prods[prod as usize].1[dot as usize];
                let lo = seed.steps.partition_point(|&(t, _)| t < y);
                seed.steps.get(lo).is_some_and(|&(t, _)| t == y)
            })
        })
    })
}

/// A phase-1 chart kept for extension (see [`base`], [`grow`] and
/// [`extend`]): one layer per automaton searched, the first the prefix's
/// own, each later one grown from the layers before it. A layer never
/// changes once made: layers are shared (a base's clone, and the layers
/// grown for one search that are kept to be put back, share them).
#[derive(Clone, Debug, Default)]
pub(crate) struct Base {
    layers: Vec<Arc<Layer>>,
    /// The states the start reaches by ε-moves (all in the first layer).
    is_start: Vec<bool>,
}

/// The layers grown on a [`Base`] for a search, taken off it (see
/// [`Base::detach_above`]) to be put back by [`Base::attach`]: shared with
/// the base while attached, so keeping them costs nothing.
#[derive(Clone, Debug)]
pub(crate) struct Grown(Vec<Arc<Layer>>);

/// The part of a [`Base`] one search made: its states are `off..off + len`.
#[derive(Clone, Debug)]
struct Layer {
    off: u32,
    len: u32,
    /// Unique to this layer (among every base's): it keys the triples
    /// from its states that a tail remembers ([`live_key`]).
    uid: u64,
    /// Keyed by `(state - off, nonterminal)` ([`side_index`]), as the
    /// search's tables.
    waiting: Heads,
    arena: Vec<(u64, u32)>,
    /// Per frontier state (by id): the items there with a terminal after
    /// the dot.
    scans: FxMap<u32, Vec<u64>>,
}

impl Layer {
    /// Appends to `out` the items of the waiting list from cell `head` on
    /// whose origin is not `skip`, as `(production, dot, origin, the
    /// production's nonterminal)`.
    fn walk(&self, g: &Intersector, head: u32, skip: u32, out: &mut Vec<(u32, u32, u32, u32)>) {
        let mut c = head;
        while c != NIL {
            let (it, next) = self.arena[c as usize];
            let (prod, dot, origin, _) = unitem(it);
            if origin != skip {
                out.push((prod, dot, origin, g.prods[prod as usize].0));
            }
            c = next;
        }
    }
}

impl Base {
    /// Number of states of the prefix's automaton, every layer's.
    pub(crate) fn len(&self) -> u64 {
        self.layers.last().map_or(0, |l| (l.off + l.len) as u64)
    }

    /// Bytes its layers' tables hold, estimated (layers shared with other
    /// bases counted in full).
    pub(crate) fn bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| {
                let scans: usize = l.scans.values().map(|v| 32 + 8 * v.capacity()).sum();
                l.waiting.bytes() + 16 * l.arena.capacity() + scans
            })
            .sum();
        layers + self.is_start.capacity()
    }

    /// Takes off the layers grown past the first `len` states (a search's
    /// temporary extension), to be put back by [`Base::attach`] while the
    /// layers under them stay. The first layer (the prefix's own) stays.
    pub(crate) fn detach_above(&mut self, len: u64) -> Grown {
        let k = self.layers.partition_point(|l| (l.off as u64) < len).max(1);
        Grown(self.layers.split_off(k.min(self.layers.len())))
    }

    /// Puts back layers taken off by [`Base::detach_above`] when the base
    /// had the layers it has now; `false` (and nothing done) if it has
    /// others.
    pub(crate) fn attach(&mut self, grown: &Grown) -> bool {
        if grown.0.first().map(|l| l.off as u64) != Some(self.len()) {
            return false;
        }
        self.layers.extend(grown.0.iter().cloned());
        true
    }

    /// The layer holding state `s`.
    fn layer(&self, s: u32) -> &Layer {
        let k = self.layers.partition_point(|l| l.off + l.len <= s);
        &self.layers[k.min(self.layers.len() - 1)]
    }

    /// The items at frontier state `f` whose origin is another state into
    /// `out`, as `(production, dot, origin, the production's nonterminal)`,
    /// sorted: those waiting for a nonterminal or a terminal. (The items
    /// whose origin is `f` follow from these: at a frontier every
    /// production they lead to is predicted.)
    ///
    /// Items at a state never change once its layer is made, so what a
    /// search from a frontier state can do is a function of these and of
    /// what completions from their origins wake there ([`Base::waiting_at`];
    /// see the mask module's `KeptRows`).
    ///
    /// Cost: the items at `f`, plus one lookup per nonterminal (or a walk
    /// of a small layer's table), plus sorting those from other states.
    pub(crate) fn items_at(&self, g: &Intersector, f: u32, out: &mut Vec<(u32, u32, u32, u32)>) {
        out.clear();
        let l = self.layer(f);
        let nts = (g.n_syms - g.n_terms) as u64;
        let at = (f - l.off) as u64 * nts;
        l.waiting
            .each_in(at..at + nts, |head| l.walk(g, head, f, out));
        for &it in self.scans(f) {
            let (prod, dot, origin, _) = unitem(it);
            if origin != f {
                out.push((prod, dot, origin, g.prods[prod as usize].0));
            }
        }
        // In the order of the items, not of a table.
        out.sort_unstable();
    }

    /// Appends to `out` the items at state `s` waiting for nonterminal
    /// symbol `a` (what a completion of `a` from `s` wakes), as
    /// `(production, dot, origin, the production's nonterminal)`.
    pub(crate) fn waiting_at(
        &self,
        g: &Intersector,
        s: u32,
        a: u32,
        out: &mut Vec<(u32, u32, u32, u32)>,
    ) {
        let l = self.layer(s);
        let nts = g.n_syms - g.n_terms;
        l.walk(
            g,
            l.waiting.get(side_index(s - l.off, a - g.n_terms, nts)),
            NIL,
            out,
        );
    }

    /// Whether `s` is a start state.
    pub(crate) fn is_start(&self, s: u32) -> bool {
        self.is_start.get(s as usize).copied().unwrap_or(false)
    }

    /// The items at frontier state `f` waiting for a terminal.
    fn scans(&self, f: u32) -> &[u64] {
        self.layer(f).scans.get(&f).map_or(&[][..], Vec::as_slice)
    }
}

/// What a search does besides the plain search.
#[derive(Default)]
struct Search<'b> {
    until: Until,
    /// The chart extended.
    base: Option<&'b Base>,
    seeds: &'b [Seed<'b>],
    /// Record a base layer: its frontier states (any terminal may follow
    /// them).
    frontier: Option<&'b [u32]>,
    /// The automaton is a [`Tail`]'s: its states come first, the base's
    /// after them, items whose origin is in the base are temporary.
    tail: bool,
    /// The worklist's order (the [`Own`] must have been made for it).
    order: Order,
    /// Searching a [`Tail`]: whether it remembers ([`Entering::remember`]).
    remember: bool,
}

impl Default for Until {
    fn default() -> Until {
        FIXPOINT
    }
}

fn search_in<'a>(
    g: &'a Intersector,
    dfa: &'a TokenNfa,
    budget: &mut Budget,
    own: Own,
    s: Search<'a>,
) -> Result<(Chart, Layer, std::borrow::Cow<'a, [bool]>, Own)> {
    // Following triples from a tail's base to the goal (see
    // [`Tail::search`]) is compiled into tail searches only: a check's
    // search runs the code it ran before, with no test of its own.
    match s.tail && s.remember {
        true => search_with::<true>(g, dfa, budget, own, s),
        false => search_with::<false>(g, dfa, budget, own, s),
    }
}

/// [`search_in`], following triples from a tail's base if `TRACK`.
fn search_with<'a, const TRACK: bool>(
    g: &'a Intersector,
    dfa: &'a TokenNfa,
    budget: &mut Budget,
    own: Own,
    s: Search<'a>,
) -> Result<(Chart, Layer, std::borrow::Cow<'a, [bool]>, Own)> {
    let started = budget.left();
    let mut stop_after: Option<u64> = None;
    let base_len = s.base.map_or(0, |b| b.len() as u32);
    let len = dfa.len() as u64;
    // Ids: a tail's states first, then the base's; else the base's first.
    let (off, base_at) = if s.tail {
        (0, len as u32)
    } else {
        (base_len, 0)
    };
    let n = base_len as u64 + len;
    let nts = (g.n_syms - g.n_terms) as u64;
    let ceiling = budget.ceiling();
    // A tail's search makes few temporary items and far triples, and no
    // phase 2 reads what it scanned: no tables sized by the tail's length,
    // made and cleared per search.
    let (temp_cap, far_cap) = match s.tail {
        true => (TAIL_SEARCH_CAP, TAIL_SEARCH_CAP),
        false => (cap(8, dfa.len()), cap(4, dfa.len())),
    };
    let mut spare = Spare::take();
    let mut e = Earley::<TRACK> {
        g,
        order: s.order,
        dfa,
        len,
        off,
        base: s.base,
        base_at,
        own,
        temp: match s.tail {
            true => Some(Temp {
                waiting: Heads::new(nts * len, temp_cap, ceiling, Sets::Few)?,
                arena: std::mem::take(&mut spare.arena),
                causes: std::mem::take(&mut spare.causes),
                far_log: std::mem::take(&mut spare.far_log),
                queued: std::mem::take(&mut spare.queued),
            }),
            false => None,
        },
        draining: false,
        // Only triples from a base are far. A tail's search and a base's
        // growth by an insertion's few terminals complete few of them: a
        // bitset over every (symbol, base state, state) was most of what
        // they allocated and zeroed (in C++ masks, 20-80 KB per search).
        far: match (s.base, s.tail || s.frontier.is_some()) {
            (None, _) => KeySet::new(0, 0, ceiling)?,
            (Some(_), true) => KeySet::sparse(far_cap, ceiling)?,
            (Some(_), false) => KeySet::new(nts * n * len, far_cap, ceiling)?,
        },
        n_ids: n,
        chart: Chart {
            done: KeySet::new(0, 0, ceiling)?,
            len,
            off,
            n_terms: g.n_terms,
            goal: None,
            fixpoint: false,
            remembered: false,
            n_done: 0,
            scanned: match s.tail {
                true => KeySet::new(0, 0, ceiling)?,
                false => KeySet::new(g.n_terms as u64 * len, cap(4, dfa.len()), ceiling)?,
            },
        },
        wakes: std::mem::take(&mut spare.wakes),
        predicting: std::mem::take(&mut spare.predicting),
        tail: s.tail,
        ceiling,
        is_start: match s.base {
            Some(b) => std::borrow::Cow::Borrowed(&b.is_start[..]),
            None => std::borrow::Cow::Owned(vec![false; dfa.len()]),
        },
        record: Vec::new(),
        scans: FxMap::default(),
        closure: std::mem::take(&mut spare.closure),
        #[cfg(debug_assertions)]
        made: Default::default(),
        cur: NIL,
    };
    // A recording search's tables are its own (never a tail's): the
    // frontier's terminals may be overwritten for good.
    if let Some(frontier) = s.frontier {
        e.record = vec![false; dfa.len()];
        let w = g.term_words;
        for &f in frontier {
            e.record[f as usize] = true;
            e.own.out[f as usize * w..(f as usize + 1) * w].fill(u64::MAX);
        }
    }
    match s.base {
        None => {
            let starts = dfa.closure(&[dfa.start]);
            for &q in &starts {
                e.is_start.to_mut()[q as usize] = true;
            }
            for q in starts {
                e.predict(q, g.start, budget)?;
            }
        }
        Some(base) => {
            // Where a step's target lands, closed under ε-moves: made when
            // an item first takes a step there, once per target. A tail
            // entered through a hole has a step on nearly every terminal,
            // nearly all to one state, and few of them are taken: closing
            // every step's target up front was a tenth of a C++ mask.
            let (lands, land_of) = (&mut spare.lands, &mut spare.land_of);
            for seed in s.seeds {
                for &f in seed.from {
                    for &it in base.scans(f) {
                        budget.spend(1)?;
                        let (prod, dot, origin, _) = unitem(it);
                        let y = g.prods[prod as usize].1[dot as usize];
                        let steps = seed.steps;
                        let lo = steps.partition_point(|&(t, _)| t < y);
                        for &(_, d) in steps[lo..].iter().take_while(|s| s.0 == y) {
                            let (a, b) = match land_of.get(&d) {
                                Some(&r) => r,
                                None => {
                                    let land = e.close([d], budget)?;
                                    let r = (lands.len() as u32, (lands.len() + land.len()) as u32);
                                    e.ceiling.reserve(lands, land.len())?;
                                    lands.extend_from_slice(&land);
                                    e.closure = land;
                                    land_of.insert(d, r);
                                    r
                                }
                            };
                            for x in a..b {
                                e.advance(prod, dot, base_at + origin, lands[x as usize])?;
                            }
                        }
                    }
                }
            }
        }
    }
    loop {
        if e.chart.goal.is_some() && !e.draining {
            let spent = started - budget.left();
            match (s.until, stop_after) {
                (Until::Goal, _) if s.tail => {
                    // Finish the tail's own items (see [`Tail`]).
                    e.draining = true;
                }
                (Until::Goal, _) => break,
                (Until::Fixpoint { effort, floor }, None) => {
                    // Going on never runs the budget out: at most half of
                    // what is left (the rest is for the witness's words
                    // and bytes); a trial runs out to learn it runs long.
                    let room = match budget.is_trial() {
                        true => u64::MAX,
                        false => spent.saturating_add(budget.left() / 2),
                    };
                    stop_after = Some(
                        spent
                            .saturating_mul(effort.saturating_add(1))
                            .saturating_add(floor)
                            .min(room),
                    );
                }
                (_, Some(limit)) if spent > limit => break,
                _ => {}
            }
        }
        budget.spend(1)?;
        if let Some(wake) = e.next_wake() {
            e.wake(wake, budget)?;
            continue;
        }
        let Some(it) = e.own.work.pop() else {
            e.chart.fixpoint = true;
            break;
        };
        let (prod, dot, origin, j) = unitem(it);
        if e.draining && !e.is_own(origin) {
            continue;
        }
        e.cur = match TRACK && !e.is_own(origin) {
            true => e
                .temp
                .as_mut()
                .and_then(|t| t.queued.remove(&it))
                .unwrap_or(NIL),
            false => NIL,
        };
        let (_, rhs, _) = g.prods[prod as usize];
        let y = rhs[dot as usize];
        if y < g.n_terms {
            e.scan(it, budget)?;
        } else {
            e.wait(it, budget)?;
            e.predict(j, y, budget)?;
        }
    }
    spare.wakes = std::mem::take(&mut e.wakes);
    spare.predicting = std::mem::take(&mut e.predicting);
    spare.closure = std::mem::take(&mut e.closure);
    if let Some(t) = e.temp.take() {
        (spare.arena, spare.causes) = (t.arena, t.causes);
        (spare.far_log, spare.queued) = (t.far_log, t.queued);
    }
    spare.give();
    let mut own = e.own;
    // The tables a base keeps are moved, not copied: keeping them costs
    // nothing when the chart is not recorded. A tail keeps them all.
    let mut layer = Layer {
        off,
        len: len as u32,
        uid: LAYER_UIDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        waiting: Heads::none(),
        arena: Vec::new(),
        scans: e.scans,
    };
    if !s.tail {
        layer.waiting = std::mem::replace(&mut own.waiting, Heads::none());
        layer.arena = std::mem::take(&mut own.arena);
        e.chart.done = std::mem::replace(&mut own.done, KeySet::Dense(Vec::new()));
    }
    Ok((e.chart, layer, e.is_start, own))
}

/// Per state of `dfa`, the bitset of terminals on its edges.
fn out_terminals(g: &Intersector, dfa: &TokenNfa, ceiling: &Ceiling) -> Fits<Vec<u64>> {
    let w = g.term_words;
    ceiling.admit(dfa.len().saturating_mul(w * 8))?;
    let mut out = vec![0u64; dfa.len() * w];
    for (s, es) in dfa.all_edges().enumerate() {
        for &(t, _) in es {
            out[s * w + t as usize / 64] |= 1 << (t % 64);
        }
    }
    Ok(out)
}

/// The index of (local state `s`, nonterminal `a`, numbered from 0) in the
/// tables keyed by both (waiting lists, completed ends, predictions), for a
/// grammar of `nts` nonterminals: state-major, so the entries of one state
/// (an Earley set predicts and waits for many nonterminals at its state)
/// share cache lines. Nonterminal-major, a C++ function's search touched a
/// line per (state, nonterminal) of 190 KB tables; inside a decoder, whose
/// model's forward pass has evicted them, those misses were 40 % of the
/// search.
#[inline]
fn side_index(s: u32, a: u32, nts: u32) -> u64 {
    s as u64 * nts as u64 + a as u64
}

impl<const TRACK: bool> Earley<'_, TRACK> {
    /// The table index of `(state, nonterminal symbol)`.
    #[inline]
    fn side(&self, s: u32, a: u32) -> u64 {
        side_index(
            s - self.off,
            a - self.g.n_terms,
            self.g.n_syms - self.g.n_terms,
        )
    }

    /// Whether `s` is a state of the automaton searched.
    #[inline]
    fn is_own(&self, s: u32) -> bool {
        s.wrapping_sub(self.off) < self.len as u32
    }

    /// Whether `s` is a start state.
    #[inline]
    fn is_start(&self, s: u32) -> bool {
        match self.base {
            Some(_) => self.is_start.get(s.wrapping_sub(self.base_at) as usize),
            None => self.is_start.get(s as usize),
        }
        .copied()
        .unwrap_or(false)
    }

    /// The ε-closure of `from` (states of `dfa`, as ids of `dfa`; returned
    /// as ids here), each state once, `from`'s first (taken from
    /// the scratch vector: give it back to `self.closure` when done),
    /// charged to `budget`.
    fn close(
        &mut self,
        from: impl IntoIterator<Item = u32>,
        budget: &mut Budget,
    ) -> Result<Vec<u32>> {
        let mut land = std::mem::take(&mut self.closure);
        self.own.eps.close(self.dfa, from, &mut land);
        budget.spend(land.len() as u64)?;
        if self.off != 0 {
            land.iter_mut().for_each(|k| *k += self.off);
        }
        Ok(land)
    }

    /// Item `it` (at an own state, a terminal after its dot) moves over
    /// the terminal along the automaton's edges.
    fn scan(&mut self, it: u64, budget: &mut Budget) -> Result<()> {
        let (prod, dot, origin, j) = unitem(it);
        let y = self.g.prods[prod as usize].1[dot as usize];
        if !self.tail {
            let at = self.chart.scan_index(j, y);
            self.chart.scanned.insert(at)?;
        }
        let dfa = self.dfa;
        let off = self.off;
        let local = (j - off) as usize;
        if self.record.get(local).copied().unwrap_or(false) {
            self.scans.entry(j).or_default().push(it);
        }
        let es = dfa.edges(local as u32);
        let from = es.partition_point(|&(t, _)| t < y);
        let to = es[from..].iter().take_while(|&&(t, _)| t == y);
        if to.clone().all(|&(_, k)| dfa.eps(k).is_empty()) {
            for &(_, k) in to {
                self.advance(prod, dot, origin, off + k)?;
            }
        } else {
            // A terminal lands on its targets and on every state their
            // ε-moves reach (each once); completions then end on all
            // of them, so the ends of triples (and where items wait)
            // are closed under ε-moves and nothing else follows them.
            let land = self.close(to.map(|&(_, k)| k), budget)?;
            for &k in &land {
                self.advance(prod, dot, origin, k)?;
            }
            self.closure = land;
        }
        Ok(())
    }

    /// Item `it` (at an own state, a nonterminal after its dot) waits
    /// there: completions already known advance it now, later ones when
    /// they wake its list. The caller predicts the nonterminal.
    fn wait(&mut self, it: u64, budget: &mut Budget) -> Result<()> {
        let (prod, dot, origin, j) = unitem(it);
        let y = self.g.prods[prod as usize].1[dot as usize];
        let s = self.side(j, y);
        let temporary = !self.is_own_origin(origin);
        match self.temp.as_mut().filter(|_| temporary) {
            Some(t) => {
                let head = t.waiting.get(s);
                self.ceiling.push(&mut t.arena, (it, head))?;
                if TRACK {
                    self.ceiling.push(&mut t.causes, self.cur)?;
                }
                t.waiting.set(s, t.arena.len() as u32 - 1)?;
            }
            None => {
                let head = self.own.waiting.get(s);
                self.ceiling.push(&mut self.own.arena, (it, head))?;
                let cell = self.own.arena.len() as u32 - 1;
                self.own.waiting.set(s, cell)?;
            }
        }
        let mut i = self.own.ends.get(s);
        while i != NIL {
            budget.spend(1)?;
            let (k, next) = self.own.arena[i as usize];
            self.advance(prod, dot, origin, k as u32)?;
            i = next;
        }
        Ok(())
    }

    /// Whether an item with this origin belongs to the own tables (always,
    /// unless searching a tail).
    #[inline]
    fn is_own_origin(&self, origin: u32) -> bool {
        self.temp.is_none() || self.is_own(origin)
    }

    /// Wakes the items waiting for `a` at `i` with the completion `(i, a,
    /// k)` (iteratively, not by recursion: completion cascades can be as
    /// deep as the text). A completion that starts in a base wakes the
    /// base's list, all of whose items are older than it; lists are newest
    /// first, and cells newer than the completion found it in `ends`.
    fn wake(
        &mut self,
        (i, a, k, bound, temp_bound): (u32, u32, u32, u32, u32),
        budget: &mut Budget,
    ) -> Result<()> {
        let g = self.g;
        if !self.is_own(i) {
            let Some(base) = self.base else {
                return Ok(());
            };
            if self.draining {
                return Ok(());
            }
            // A completion from the base carries its index in `far_log`
            // (or NIL) where an own one has its cell.
            if TRACK {
                self.cur = bound;
            }
            let b = i - self.base_at;
            let l = base.layer(b);
            let mut c = l
                .waiting
                .get(side_index(b - l.off, a - g.n_terms, g.n_syms - g.n_terms));
            while c != NIL {
                budget.spend(1)?;
                let (it, next) = l.arena[c as usize];
                let (prod, dot, origin, _) = unitem(it);
                self.advance(prod, dot, self.base_at + origin, k)?;
                c = next;
            }
            return Ok(());
        }
        let s = self.side(i, a);
        if TRACK {
            self.cur = NIL;
        }
        let mut c = self.own.waiting.get(s);
        while c != NIL && c > bound {
            c = self.own.arena[c as usize].1;
        }
        while c != NIL {
            budget.spend(1)?;
            let (it, next) = self.own.arena[c as usize];
            let (prod, dot, origin, _) = unitem(it);
            self.advance(prod, dot, origin, k)?;
            c = next;
        }
        if self.draining {
            return Ok(());
        }
        let Some(t) = &self.temp else {
            return Ok(());
        };
        let mut c = t.waiting.get(s);
        while c != NIL && c >= temp_bound {
            c = self.temp.as_ref().map_or(NIL, |t| t.arena[c as usize].1);
        }
        while c != NIL {
            budget.spend(1)?;
            let Some((it, next)) = self.temp.as_ref().map(|t| t.arena[c as usize]) else {
                break;
            };
            if TRACK {
                self.cur = self.temp.as_ref().map_or(NIL, |t| t.causes[c as usize]);
            }
            let (prod, dot, origin, _) = unitem(it);
            self.advance(prod, dot, origin, k)?;
            c = next;
        }
        Ok(())
    }

    /// Adds the item `(prod, 1, origin)` at `state`, unless the symbol after
    /// its dot cannot begin there (it would wait forever).
    fn add(&mut self, prod: u32, origin: u32, state: u32) -> Fits {
        if self.draining && !self.is_own(origin) {
            return Ok(());
        }
        let w = self.g.term_words;
        let y = self.g.prods[prod as usize].1[1];
        let local = (state - self.off) as usize;
        if !self
            .g
            .may_begin(y, &self.own.out[local * w..(local + 1) * w])
        {
            return Ok(());
        }
        let it = item(prod, 1, origin, state);
        #[cfg(debug_assertions)]
        if self.temp.is_none() {
            assert!(self.made.insert(it), "item made twice: {:?}", unitem(it));
        }
        if TRACK && self.cur != NIL && !self.is_own(origin) {
            if let Some(t) = self.temp.as_mut() {
                self.ceiling.room_in_map(&t.queued)?;
                t.queued.insert(it, self.cur);
            }
        }
        self.push_work(origin, state, it)
    }

    /// Queues `it` (an item at `state` with origin `origin`) in the
    /// search's [`Order`].
    #[inline]
    fn push_work(&mut self, origin: u32, state: u32, it: u64) -> Fits {
        let key = match self.order {
            Order::Furthest => state - self.off,
            Order::Nearest => self.nearest_key(state),
            Order::StartFirst => {
                u32::from(self.is_start(origin)) * self.len as u32 + state - self.off
            }
        };
        self.own.work.push(key, it)
    }

    /// Predicts `a` at `j`: its productions that may start there, with the
    /// dot at 0.
    ///
    /// Those that begin with a nonterminal `B` do not go to the worklist:
    /// all such an item does when handed out is wait for `B` (and predict
    /// it), so it does that here, depth first — `B`'s productions before
    /// `a`'s next one. Over half of a C++ check's items are of this kind;
    /// besides their pushes and pops, predicting depth first reaches the
    /// goal with fewer items (HumanEval-X functions: about 1,160 → 970
    /// waiting items and 1,460 → 1,020 completions per check, 107 → 77 µs
    /// in `check_loop`). The depth first walk keeps its own stack of
    /// nonterminals with the next production to look at, not the call
    /// stack: a chain of first nonterminals may be as long as the grammar.
    fn predict(&mut self, j: u32, a: u32, budget: &mut Budget) -> Result<()> {
        if !self.own.predicted.insert(self.side(j, a))? {
            return Ok(());
        }
        let g = self.g;
        let w = g.term_words;
        let local = (j - self.off) as usize;
        let out = local * w..(local + 1) * w;
        // A recorded state without edges (the frontier of a growth): all
        // an item with a terminal after its dot does there when handed
        // out is be recorded, so it is scanned now instead of queued. A
        // growth predicts every production at its frontier, and those
        // items' trip through the worklist was a sixth of its time.
        let ends_here = self.record.get(local).copied().unwrap_or(false)
            && self.dfa.edges(local as u32).is_empty();
        let mut stack = std::mem::take(&mut self.predicting);
        stack.clear();
        self.ceiling.push(&mut stack, (a, 0))?;
        while let Some(top) = stack.last_mut() {
            let (a, next) = *top;
            let ps = g.prods_of(a);
            let p = ps.start + next;
            if p >= ps.end {
                stack.pop();
                continue;
            }
            top.1 += 1;
            if !g.may_start(p, &self.own.out[out.clone()]) {
                // It could never scan or complete here (FIRST-set filter).
                continue;
            }
            let (_, rhs, len) = g.prods[p as usize];
            if len == 0 {
                // Only at `j`, not along ε-moves from it: every item that
                // waits at `j` after a terminal also waits at the states
                // its ε-moves reach, and predicts there; so no triple needs
                // to start with an ε-move, and every triple's word is
                // nonempty or its ends equal — the triples phase 2 builds.
                self.complete(j, a, j)?;
            } else if rhs[0] >= g.n_terms {
                // Charged as the worklist's items are.
                budget.spend(1)?;
                self.wait(item(p, 0, j, j), budget)?;
                if self.own.predicted.insert(self.side(j, rhs[0]))? {
                    self.ceiling.push(&mut stack, (rhs[0], 0))?;
                }
            } else if ends_here {
                budget.spend(1)?;
                self.scan(item(p, 0, j, j), budget)?;
            } else {
                // New by construction: `(j, a)` is predicted only once, and
                // only prediction makes items with the dot at 0.
                self.push_work(j, j, item(p, 0, j, j))?;
            }
        }
        self.predicting = stack;
        Ok(())
    }

    /// Moves the dot of `(prod, dot, origin)` over one symbol, ending at `k`.
    fn advance(&mut self, prod: u32, dot: u32, origin: u32, k: u32) -> Fits {
        let (a, _, len) = self.g.prods[prod as usize];
        if dot + 1 == len as u32 {
            self.complete(origin, a, k)
        } else {
            // Right-hand sides have at most two symbols: the dot is now 1.
            self.add(prod, origin, k)
        }
    }

    /// Logs the new triple `(i, A, k)` from the base with its cause (its
    /// index in `far_log` is returned), and reaches the goal if it is
    /// known to lead there.
    fn log_far(&mut self, i: u32, a: u32, k: u32) -> Fits<u32> {
        let (Some(base), Some(t)) = (self.base, self.temp.as_mut()) else {
            return Ok(NIL);
        };
        let b = i - self.base_at;
        let l = base.layer(b);
        let at = live_key(l.uid, a, b - l.off, k);
        let logged = t.far_log.len() as u32;
        self.ceiling.push(&mut t.far_log, (at, self.cur))?;
        if self.own.live.contains(&at) {
            self.chart.remembered |= self.chart.goal.is_none();
            self.chart.goal.get_or_insert(key(i, a, k));
            self.keep_live(logged)?;
        }
        Ok(logged)
    }

    /// Keeps the triples of `far_log` that led to triple `x` of it (and
    /// `x`) as live: `x` leads to the goal, so does each of them.
    fn keep_live(&mut self, mut x: u32) -> Fits {
        let Some(t) = self.temp.as_ref() else {
            return Ok(());
        };
        while let Some(&(at, cause)) = t.far_log.get(x as usize) {
            self.ceiling.insert(&mut self.own.live, at)?;
            x = cause;
        }
        Ok(())
    }

    fn complete(&mut self, i: u32, a: u32, k: u32) -> Fits {
        let own = self.is_own(i);
        if own {
            let at = self.chart.index(i, a, k);
            if !self.own.done.insert(at)? {
                return Ok(());
            }
            self.chart.n_done += 1;
        } else {
            if self.draining {
                return Ok(());
            }
            let at = ((a - self.g.n_terms) as u64 * self.n_ids + i as u64) * self.len
                + (k - self.off) as u64;
            if !self.far.insert(at)? {
                return Ok(());
            }
        }
        let logged = match TRACK && !own {
            true => self.log_far(i, a, k)?,
            false => NIL,
        };
        if a == self.g.start && self.is_start(i) && self.dfa.finals[(k - self.off) as usize] {
            self.chart.goal.get_or_insert(key(i, a, k));
            if TRACK {
                self.keep_live(logged)?;
            }
        }
        if !own {
            // No item waits at a base state from now on: the wake reaches
            // the base's (older) items, and no later item needs the end.
            return self.ceiling.push(&mut self.wakes, (i, a, k, logged, NIL));
        }
        let s = self.side(i, a);
        let head = self.own.ends.get(s);
        self.ceiling.push(&mut self.own.arena, (k as u64, head))?;
        let cell = self.own.arena.len() as u32 - 1;
        self.own.ends.set(s, cell)?;
        let temp_bound = self.temp.as_ref().map_or(NIL, |t| t.arena.len() as u32);
        self.ceiling
            .push(&mut self.wakes, (i, a, k, cell, temp_bound))
    }

    /// The worklist's key of an own state in [`Order::Nearest`]: the
    /// nearer, the higher.
    #[inline]
    fn nearest_key(&self, state: u32) -> u32 {
        self.len as u32 - 1 - (state - self.off)
    }

    /// The wake to handle next, if one comes before the worklist's next
    /// item: always, last in first out, but in [`Order::Nearest`] the one
    /// that ends nearest (the last of those), and only if no item waits at
    /// a nearer state. Past [`NEAREST_WAKES`] waiting wakes the last comes
    /// first, so choosing stays cheap. (When a wake is handled does not
    /// change the fixpoint: a completion is in `ends` from the start, and
    /// its wake reaches only the items that waited before it.)
    fn next_wake(&mut self) -> Option<Wake> {
        let n = self.wakes.len();
        if self.order != Order::Nearest || n > NEAREST_WAKES {
            return self.wakes.pop();
        }
        let mut best = n.checked_sub(1)?;
        for x in (0..best).rev() {
            if self.wakes[x].2 < self.wakes[best].2 {
                best = x;
            }
        }
        let key = self.nearest_key(self.wakes[best].2);
        if self.own.work.max_key().is_some_and(|k| k > key) {
            return None;
        }
        Some(self.wakes.remove(best))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A search's kept scratch comes back empty, with its room; a vector
    /// grown past [`SPARE_MAX`] is freed instead of kept.
    #[test]
    fn kept_scratch_comes_back_empty() {
        let mut s = Spare::take();
        s.wakes.extend((0..100).map(|i| (i, i, i, i, i)));
        s.far_log.push((7, 7));
        s.land_of.insert(3, (1, 2));
        s.lands.extend(0..(SPARE_MAX as u32 + 1));
        s.give();
        let s = Spare::take();
        assert!(s.wakes.is_empty() && s.wakes.capacity() >= 100);
        assert!(s.far_log.is_empty() && s.land_of.is_empty());
        assert!(s.lands.capacity() <= SPARE_MAX);
        // Taken, the thread keeps none: a search inside another one makes
        // its own.
        assert_eq!(Spare::take().wakes.capacity(), 0);
        s.give();
    }
}

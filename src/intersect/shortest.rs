//! Phase 2: a shortest witness, by Knuth's generalisation of Dijkstra's
//! algorithm over the triples phase 1 found.
//!
//! Triples are finalised in order of the length of their shortest yield with a
//! bucket queue (costs are small integers that never decrease along the
//! search), each recording the production and split point that gave its
//! minimum; only triples completed in phase 1 (and terminal edges) are ever
//! offered, so this phase costs about as much as phase 1 did.
//!
//! Yield lengths can be astronomically large (`r0: r1 r1`, …, `r40: "a"` has
//! a shortest word of 2⁴⁰ terminals): costs add with saturation, costs past
//! [`BUCKETS`] go to a binary heap instead of a bucket per length (so memory
//! follows the number of triples, not their lengths), and a witness longer
//! than the caller's limit (`Config::max_witness_terminals`, 10⁷ by default)
//! is refused with a size-limit error before it is expanded. Emptiness itself
//! is phase 1's and is never refused.

use super::earley::Chart;
use super::table::{Heads, Sets, NIL};
use super::{key, unkey, Intersector};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::{Error, Limit, Result};
use crate::hash::FxMap;
use crate::lexer::{EpsClosure, TokenNfa, WeighedClosure};

/// Costs below this are kept in a bucket per cost; larger ones in a heap.
const BUCKETS: usize = 1 << 16;

/// The most triples phase 2's tables are sized for before they are used.
const PRESIZE_MAX: usize = 1 << 16;

/// `(terminal, state of D it leaves)` along an accepting path.
type Path = Vec<(u32, u32)>;

/// Why a triple is generating.
#[derive(Clone, Copy, Debug)]
enum Reason {
    /// A DFA edge labelled by the terminal.
    Edge,
    /// `A → X`, or `A → X Y` / `A → Y X` with `Y` nullable: the child `X`.
    Unit(u32),
    /// `A → X Y` split at the middle state.
    Bin(u32, u32, u32),
}

/// A shortest word of `L(G) ∩ L(D)`, given phase 1's chart, as
/// `(terminal, state of D it leaves)` pairs along one accepting path, and
/// its cost (terminals, plus swallowed bytes on a weighed automaton).
///
/// On a weighed automaton ([`TokenNfa::build_weighed`]) "shortest" counts
/// terminals plus the bytes the path's moves swallow: a terminal edge costs
/// one plus its weight and the ε-moves after it, and the ε-moves from the
/// start to the first edge are added where a goal is found (so the search
/// goes on until nothing cheaper can come). `empty`: the cost of the empty
/// word when the grammar and the automaton both accept it (the empty path
/// is returned when nothing is cheaper).
pub(crate) fn witness(
    g: &Intersector,
    dfa: &TokenNfa,
    chart: &Chart,
    budget: &mut Budget,
    max_terminals: u32,
    empty: Option<u32>,
) -> Result<Option<(Path, u32)>> {
    let ceiling = budget.ceiling();
    // Tables sized for the triples phase 1 completed (and about as many
    // terminal edges), up to a bound: growing them from empty rehashed each
    // several times, a sixth of a canvas witness.
    let hint = chart.n_done.min(PRESIZE_MAX);
    let mut queue = Queue::with_capacity(ceiling, 2 * hint)?;
    let mut adj = Adjacency::with_capacity(ceiling, hint, dfa.len(), g.by_unit.len())?;
    // The fewest bytes swallowed from the start to each state of its
    // closure (NIL: not in it).
    let weighed = dfa.is_weighed();
    let mut wclose = WeighedClosure::new(dfa);
    let mut wland: Vec<(u32, u32)> = Vec::new();
    let mut from_start = vec![NIL; dfa.len()];
    wclose.close(dfa, dfa.start, &mut wland);
    for &(s, d) in &wland {
        from_start[s as usize] = d;
    }
    // The cost of a goal triple, if it is one.
    let goal = |k: u64, c: u32| -> Option<u32> {
        let (p, x, q) = unkey(k);
        (x == g.start && from_start[p as usize] != NIL && dfa.finals[q as usize])
            .then(|| c.saturating_add(from_start[p as usize]))
    };
    let allowed = |k: u64| -> bool {
        let (p, x, q) = unkey(k);
        x < g.n_terms || chart.is_done(p, x, q)
    };
    // Terminal edges, each also ending where the ε-moves after it lead (as
    // in phase 1, so triples only ever end on closed sets of states).
    // Only the edges phase 1 scanned can be part of a triple it completed.
    let mut eps = EpsClosure::new(dfa);
    let mut land: Vec<u32> = Vec::new();
    for (p, es) in dfa.all_edges().enumerate() {
        let costs = dfa.edge_costs(p as u32);
        for (i, &(t, q)) in es.iter().enumerate() {
            if !chart.was_scanned(p as u32, t) {
                continue;
            }
            let c = 1 + costs.map_or(0, |c| c[i]);
            queue.offer(key(p as u32, t, q), c, Reason::Edge)?;
            if dfa.eps(q).is_empty() {
                continue;
            }
            if weighed {
                wclose.close(dfa, q, &mut wland);
                budget.spend(wland.len() as u64)?;
                for &(r, d) in &wland[1..] {
                    queue.offer(key(p as u32, t, r), c.saturating_add(d), Reason::Edge)?;
                }
            } else {
                eps.close(dfa, [q], &mut land);
                budget.spend(land.len() as u64)?;
                for &r in &land[1..] {
                    queue.offer(key(p as u32, t, r), c, Reason::Edge)?;
                }
            }
        }
    }
    // The cheapest goal so far: `None` for the empty word.
    let mut best: Option<(Option<u64>, u32)> = empty.map(|c| (None, c));
    while let Some((k, c)) = queue.pop() {
        budget.spend(1)?;
        if best.is_some_and(|(_, b)| c >= b) {
            break; // nothing cheaper can come
        }
        if let Some(total) = goal(k, c) {
            if best.is_none_or(|(_, b)| total < b) {
                best = Some((Some(k), total));
            }
            if total == c {
                break; // reached from the start at no cost: the cheapest
            }
        }
        let (p, x, q) = unkey(k);
        adj.insert(p, x, q, c)?;
        for &a in &g.by_unit[x as usize] {
            let nk = key(p, a, q);
            queue.offer_if(nk, c, Reason::Unit(x), allowed)?;
        }
        for &(a, y) in &g.by_left[x as usize] {
            let mut i = adj.right(q, y);
            while i != NIL {
                budget.spend(1)?;
                let (r, c2, next) = adj.arena[i as usize];
                let nk = key(p, a, r);
                queue.offer_if(nk, c.saturating_add(c2), Reason::Bin(x, y, q), allowed)?;
                i = next;
            }
        }
        for &(a, w) in &g.by_right[x as usize] {
            let mut i = adj.left(p, w);
            while i != NIL {
                budget.spend(1)?;
                let (o, c2, next) = adj.arena[i as usize];
                let nk = key(o, a, q);
                queue.offer_if(nk, c.saturating_add(c2), Reason::Bin(w, x, p), allowed)?;
                i = next;
            }
        }
    }
    let (goal_key, total) = match best {
        None => return Ok(None),
        Some((None, c)) => return Ok(Some((Vec::new(), c))),
        Some((Some(k), c)) => (k, c),
    };
    // At least the number of terminals (weighed: plus swallowed bytes).
    let length = queue.entries[queue.index[&goal_key] as usize].cost;
    if length > max_terminals {
        return Err(Error::limit(
            Limit::WitnessTerminals,
            length as u64,
            max_terminals as u64,
            format!(
                "the partial output is completable, but its shortest completion has {} terminals \
                 (more than the witness limit of {max_terminals})",
                if length == u32::MAX {
                    format!("at least {}", u32::MAX)
                } else {
                    length.to_string()
                }
            ),
        ));
    }
    // Expand the derivation, left to right.
    let mut word = Vec::new();
    let mut stack = vec![goal_key];
    while let Some(k) = stack.pop() {
        budget.spend(1)?;
        let (p, x, q) = unkey(k);
        let idx = queue.index[&k] as usize;
        match queue.entries[idx].reason {
            Reason::Edge => ceiling.push(&mut word, (x, p))?,
            Reason::Unit(y) => ceiling.push(&mut stack, key(p, y, q))?,
            Reason::Bin(y, z, m) => {
                ceiling.reserve(&mut stack, 2)?;
                stack.push(key(m, z, q));
                stack.push(key(p, y, m));
            }
        }
    }
    debug_assert!(word.iter().all(|&(t, _)| t < g.n_terms));
    Ok(Some((word, total)))
}

/// One triple of the search.
struct Entry {
    key: u64,
    cost: u32,
    reason: Reason,
    done: bool,
}

/// Knuth's generalisation of Dijkstra's algorithm: triples are finalised in
/// order of the length of their shortest yield, using a bucket queue (costs
/// are small integers and never decrease along the search), so the witness is
/// a shortest word and each finalisation is O(1).
struct Queue {
    index: FxMap<u64, u32>,
    entries: Vec<Entry>,
    /// Bucket queue of entry indices by cost, for costs below [`BUCKETS`].
    buckets: Vec<Vec<u32>>,
    current: usize,
    /// `(cost, entry)` for costs of at least [`BUCKETS`], popped after the
    /// buckets (costs never decrease along the search).
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32)>>,
    ceiling: Ceiling,
}

impl Queue {
    /// An empty queue with room for `n` triples.
    fn with_capacity(ceiling: Ceiling, n: usize) -> Fits<Queue> {
        ceiling.admit(n.saturating_mul(16 + std::mem::size_of::<Entry>()))?;
        let (mut index, mut entries, buckets) = spare::take(|s| {
            (
                std::mem::take(&mut s.index),
                std::mem::take(&mut s.entries),
                std::mem::take(&mut s.buckets),
            )
        });
        index.reserve(n);
        entries.reserve(n);
        Ok(Queue {
            index,
            entries,
            buckets,
            current: 0,
            heap: Default::default(),
            ceiling,
        })
    }

    /// Offers a derivation of `k` with yield length `cost`.
    #[inline]
    fn offer(&mut self, k: u64, cost: u32, why: Reason) -> Fits {
        self.offer_if(k, cost, why, |_| true)
    }

    /// [`Queue::offer`] where `k` is new to the queue only if `allowed(k)`
    /// (a triple queued before was allowed then): one hash of `k` for a
    /// triple seen before, and the chart asked only about new ones.
    #[inline]
    fn offer_if(
        &mut self,
        k: u64,
        cost: u32,
        why: Reason,
        allowed: impl FnOnce(u64) -> bool,
    ) -> Fits {
        self.ceiling.room_in_map(&self.index)?;
        let idx = match self.index.entry(k) {
            std::collections::hash_map::Entry::Occupied(o) => {
                let i = *o.get();
                let e = &mut self.entries[i as usize];
                if e.done || e.cost <= cost {
                    return Ok(());
                }
                e.cost = cost;
                e.reason = why;
                i
            }
            std::collections::hash_map::Entry::Vacant(v) => {
                if !allowed(k) {
                    return Ok(());
                }
                let i = self.entries.len() as u32;
                v.insert(i);
                let e = Entry {
                    key: k,
                    cost,
                    reason: why,
                    done: false,
                };
                self.ceiling.push(&mut self.entries, e)?;
                i
            }
        };
        let c = cost as usize;
        if c >= BUCKETS {
            if self.heap.len() == self.heap.capacity() {
                let entry = std::mem::size_of::<(u32, u32)>();
                self.ceiling
                    .admit(self.heap.capacity().max(4).saturating_mul(2 * entry))?;
            }
            self.heap.push(std::cmp::Reverse((cost, idx)));
            return Ok(());
        }
        if self.buckets.len() <= c {
            self.buckets.resize_with(c + 1, Vec::new);
        }
        self.ceiling.push(&mut self.buckets[c], idx)
    }

    /// Finalises and returns the cheapest pending triple and its cost.
    fn pop(&mut self) -> Option<(u64, u32)> {
        while self.current < self.buckets.len() {
            while let Some(i) = self.buckets[self.current].pop() {
                let e = &mut self.entries[i as usize];
                if e.done || e.cost as usize != self.current {
                    continue; // stale
                }
                e.done = true;
                return Some((e.key, e.cost));
            }
            self.current += 1;
        }
        while let Some(std::cmp::Reverse((cost, i))) = self.heap.pop() {
            let e = &mut self.entries[i as usize];
            if e.done || e.cost != cost {
                continue; // stale
            }
            e.done = true;
            return Some((e.key, e.cost));
        }
        None
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        let mut index = std::mem::take(&mut self.index);
        let entries = spare::emptied(std::mem::take(&mut self.entries));
        let mut buckets = std::mem::take(&mut self.buckets);
        if index.capacity().saturating_mul(16) > spare::KEEP_BYTES {
            index = FxMap::default();
        }
        index.clear();
        let room: usize = buckets.iter().map(|b| b.capacity() * 4).sum();
        if room > spare::KEEP_BYTES {
            buckets = Vec::new();
        }
        buckets.iter_mut().for_each(Vec::clear);
        spare::give(|s| {
            s.index = index;
            s.entries = entries;
            s.buckets = buckets;
        });
    }
}

/// Finalised triples as linked lists in one arena, per `(p, X)` to the right
/// and per `(q, X)` to the left: no allocation per key. The heads are
/// indexed by `X · states + s`: an array from the intersection tables'
/// per-thread pool when that is small enough ([`Sets::Spread`]), else
/// hashed.
struct Adjacency {
    right: Heads,
    left: Heads,
    states: u64,
    /// `(other state, cost, next)`.
    arena: Vec<(u32, u32, u32)>,
    ceiling: Ceiling,
}

/// The most array slots per expected entry for [`Adjacency`]'s list heads
/// to be an array.
const DENSE_SPREAD: u64 = 32;

impl Adjacency {
    /// Empty lists with room for `n` triples, over `states` automaton
    /// states and `symbols` grammar symbols.
    fn with_capacity(ceiling: Ceiling, n: usize, states: usize, symbols: usize) -> Fits<Adjacency> {
        ceiling.admit(n.saturating_mul(2 * 12))?;
        let bound = states as u64 * symbols as u64;
        // An array only where the search fills a fair share of it (JSON and
        // SMILES canvases: one entry per 5-10 slots; C++ grammars have
        // fifteen times more symbols, one per 250, and there hashing costs
        // no more and takes less memory); within a tight memory ceiling,
        // hash rather than fail.
        let dense =
            bound <= DENSE_SPREAD * n.max(1024) as u64 && ceiling.admit(bound as usize * 8).is_ok();
        let heads = || match dense {
            true => Heads::new(bound, n, ceiling, Sets::Spread),
            false => Heads::sparse(n, ceiling),
        };
        let mut arena = spare::take(|s| std::mem::take(&mut s.arena));
        arena.reserve(2 * n);
        Ok(Adjacency {
            right: heads()?,
            left: heads()?,
            states: states as u64,
            arena,
            ceiling,
        })
    }

    /// The index of `(s, x)`'s list head.
    #[inline]
    fn slot(&self, s: u32, x: u32) -> u64 {
        x as u64 * self.states + s as u64
    }

    /// The first entry of the right list of `(p, x)`, or [`NIL`].
    #[inline]
    fn right(&self, p: u32, x: u32) -> u32 {
        self.right.get(self.slot(p, x))
    }

    /// The first entry of the left list of `(q, x)`, or [`NIL`].
    #[inline]
    fn left(&self, q: u32, x: u32) -> u32 {
        self.left.get(self.slot(q, x))
    }

    fn insert(&mut self, p: u32, x: u32, q: u32, cost: u32) -> Fits {
        let n = self.arena.len() as u32;
        self.ceiling.reserve(&mut self.arena, 2)?;
        let r = self.right.replace(self.slot(p, x), n)?;
        self.arena.push((q, cost, r));
        let l = self.left.replace(self.slot(q, x), n + 1)?;
        self.arena.push((p, cost, l));
        Ok(())
    }
}

impl Drop for Adjacency {
    fn drop(&mut self) {
        let arena = spare::emptied(std::mem::take(&mut self.arena));
        spare::give(|s| s.arena = arena);
    }
}

/// Phase 2's queue and arena, kept per thread between witnesses with
/// their room (emptied).
///
/// A witness of a 2 KB SMILES canvas fills about 10,000 triples: its
/// tables are a few hundred KiB each, and allocated afresh the allocator
/// mapped and faulted in their pages and unmapped them again on every
/// witness (a quarter of `completable`'s time, in the kernel). Tables
/// larger than [`spare::KEEP_BYTES`] are not kept.
mod spare {
    use super::Entry;
    use crate::hash::FxMap;
    use std::cell::RefCell;

    /// The most bytes of room kept per table (enough for canvases of about
    /// 8 KB; a larger search's tables go back to the allocator).
    pub(super) const KEEP_BYTES: usize = 4 << 20;

    /// The kept tables, all empty.
    #[derive(Default)]
    pub(super) struct Spare {
        pub(super) index: FxMap<u64, u32>,
        pub(super) entries: Vec<Entry>,
        pub(super) buckets: Vec<Vec<u32>>,
        pub(super) arena: Vec<(u32, u32, u32)>,
    }

    thread_local! {
        static SPARE: RefCell<Spare> = RefCell::new(Spare::default());
    }

    /// What `f` takes out of this thread's spare tables (empty ones when
    /// they are in use or gone).
    pub(super) fn take<T: Default>(f: impl FnOnce(&mut Spare) -> T) -> T {
        SPARE
            .try_with(|s| {
                s.try_borrow_mut()
                    .map(|mut s| f(&mut s))
                    .unwrap_or_default()
            })
            .unwrap_or_default()
    }

    /// Puts tables back with `f`, where they are empty and not too large.
    pub(super) fn give(f: impl FnOnce(&mut Spare)) {
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                f(&mut s);
            }
        });
    }

    /// `v` emptied, or an empty vector when its room is past
    /// [`KEEP_BYTES`].
    pub(super) fn emptied<T>(mut v: Vec<T>) -> Vec<T> {
        if v.capacity().saturating_mul(std::mem::size_of::<T>()) > KEEP_BYTES {
            return Vec::new();
        }
        v.clear();
        v
    }
}

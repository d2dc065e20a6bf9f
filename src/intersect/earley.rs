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

use super::{key, side, Intersector};
use crate::budget::Budget;
use crate::error::Result;
use crate::hash::{FxMap, FxSet};
use crate::lexer::TokenNfa;

const NIL: u32 = u32::MAX;

/// The completed triples of phase 1 and whether the goal was reached.
pub(crate) struct Chart {
    /// Every completed (generating and predicted) nonterminal triple.
    pub(crate) done: FxSet<u64>,
    /// A goal triple `(q0, S, f)`, if one completed.
    pub(crate) goal: Option<u64>,
}

/// Initial table size: `per_state` entries per automaton state, capped (large
/// inputs amortise growth anyway).
fn cap(per_state: usize, states: usize) -> usize {
    (per_state * states).min(1 << 14)
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

struct Earley<'a> {
    g: &'a Intersector,
    dfa: &'a TokenNfa,
    items: FxSet<u64>,
    work: Vec<u64>,
    predicted: FxSet<u64>,
    /// (state, symbol) → head of the list of items waiting there.
    waiting: FxMap<u64, u32>,
    /// (origin, symbol) → head of the list of completed end states.
    ends: FxMap<u64, u32>,
    /// Arena of list cells `(value, next)`: waiting items or end states.
    arena: Vec<(u64, u32)>,
    done: FxSet<u64>,
    /// Completed triples whose waiting items are still to be woken.
    wakes: Vec<(u32, u32, u32)>,
    goal: Option<u64>,
}

/// Runs phase 1 until the goal completes or the fixpoint is reached.
pub(crate) fn search(g: &Intersector, dfa: &TokenNfa, budget: &mut Budget) -> Result<Chart> {
    let mut e = Earley {
        g,
        dfa,
        // Sized for a few dozen items per state: growing hash tables was a
        // tenth of a small check's time.
        items: FxSet::with_capacity_and_hasher(cap(64, dfa.len()), Default::default()),
        work: Vec::new(),
        predicted: FxSet::with_capacity_and_hasher(cap(16, dfa.len()), Default::default()),
        waiting: FxMap::with_capacity_and_hasher(cap(32, dfa.len()), Default::default()),
        ends: FxMap::with_capacity_and_hasher(cap(16, dfa.len()), Default::default()),
        arena: Vec::with_capacity(cap(64, dfa.len())),
        done: FxSet::with_capacity_and_hasher(cap(16, dfa.len()), Default::default()),
        wakes: Vec::new(),
        goal: None,
    };
    e.predict(dfa.start, g.start);
    loop {
        if e.goal.is_some() {
            break;
        }
        budget.spend(1)?;
        if let Some((i, a, k)) = e.wakes.pop() {
            // Wake the items waiting for `a` at `i` (iteratively, not by
            // recursion: completion cascades can be as deep as the text).
            let mut c = e.waiting.get(&side(i, a)).copied().unwrap_or(NIL);
            while c != NIL {
                budget.spend(1)?;
                let (it, next) = e.arena[c as usize];
                let (prod, dot, origin, _) = unitem(it);
                e.advance(prod, dot, origin, k);
                c = next;
            }
            continue;
        }
        let Some(it) = e.work.pop() else { break };
        let (prod, dot, origin, j) = unitem(it);
        let (_, rhs, _) = g.prods[prod as usize];
        let y = rhs[dot as usize];
        if y < g.n_terms {
            let es = &dfa.edges[j as usize];
            let from = es.partition_point(|&(t, _)| t < y);
            for &(t, k) in &es[from..] {
                if t != y {
                    break;
                }
                e.advance(prod, dot, origin, k);
            }
        } else {
            // Wait for y at j; use completions already known.
            let s = side(j, y);
            let head = e.waiting.get(&s).copied().unwrap_or(NIL);
            e.arena.push((it, head));
            let cell = e.arena.len() as u32 - 1;
            e.waiting.insert(s, cell);
            let mut i = e.ends.get(&s).copied().unwrap_or(NIL);
            while i != NIL {
                budget.spend(1)?;
                let (k, next) = e.arena[i as usize];
                e.advance(prod, dot, origin, k as u32);
                i = next;
            }
            e.predict(j, y);
        }
    }
    Ok(Chart {
        done: e.done,
        goal: e.goal,
    })
}

impl Earley<'_> {
    fn add(&mut self, prod: u32, dot: u32, origin: u32, state: u32) {
        let it = item(prod, dot, origin, state);
        if self.items.insert(it) {
            self.work.push(it);
        }
    }

    fn predict(&mut self, j: u32, a: u32) {
        if !self.predicted.insert(side(j, a)) {
            return;
        }
        let g = self.g;
        for &p in &g.prods_of[a as usize] {
            if g.prods[p as usize].2 == 0 {
                self.complete(j, a, j);
            } else {
                // New by construction: `(j, a)` is predicted only once, and
                // only prediction makes items with the dot at 0.
                self.work.push(item(p, 0, j, j));
            }
        }
    }

    /// Moves the dot of `(prod, dot, origin)` over one symbol, ending at `k`.
    fn advance(&mut self, prod: u32, dot: u32, origin: u32, k: u32) {
        let (a, _, len) = self.g.prods[prod as usize];
        if dot + 1 == len as u32 {
            self.complete(origin, a, k);
        } else {
            self.add(prod, dot + 1, origin, k);
        }
    }

    fn complete(&mut self, i: u32, a: u32, k: u32) {
        let t = key(i, a, k);
        if !self.done.insert(t) {
            return;
        }
        if a == self.g.start && i == self.dfa.start && self.dfa.finals[k as usize] {
            self.goal = Some(t);
        }
        let s = side(i, a);
        let head = self.ends.get(&s).copied().unwrap_or(NIL);
        self.arena.push((k as u64, head));
        let cell = self.arena.len() as u32 - 1;
        self.ends.insert(s, cell);
        self.wakes.push((i, a, k));
    }
}

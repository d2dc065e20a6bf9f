//! Emptiness of `L(G) ∩ L(D)` for a grammar `G` in C2F+ε normal form and a DFA
//! `D` over terminals, with a witness.
//!
//! This is the implicit bottom-up search of Mündler et al. (arXiv 2508.10111,
//! Alg. 2) adapted to C2F+ε: a triple `(p, X, q)` is *generating* when symbol
//! `X` derives some word that leads `D` from `p` to `q`. Seeds are the DFA edges
//! `p –a→ q` (giving `(p, a, q)`). Nullable symbols are folded into the
//! productions once per grammar (`A → X Y` with `Y ⇒* ε` also acts as `A → X`,
//! and symmetrically), so no `(p, A, p)` triple is ever created just for ε —
//! that would cost one triple per state and nullable symbol. Each new triple
//! is combined through `A → X` and, with the already-known neighbours on either
//! side, through `A → X Y`; only symbols reachable from generating ones are ever
//! touched, and the full intersection grammar is never built. The search stops
//! as soon as `(q0, S, f)` is generating for a final `f`.
//!
//! Each triple records the production (and split point) that first made it
//! generating, so the derivation DAG is acyclic and a witness word is read off
//! by expanding `(q0, S, f)`. Cost: `O(|P| · n³)` in the worst case for `n` DFA
//! states, far less on the chain-like DFAs of partial outputs. Every step is
//! charged to a [`Budget`](crate::budget::Budget); running out is an error,
//! never a silent "empty".

use crate::budget::Budget;
use crate::error::{Error, ErrorKind, Result};
use crate::grammar::{Cfg, Sym};
use crate::hash::FxMap;
use crate::lexer::TokenDfa;

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

/// A grammar indexed for the emptiness search. Built once per grammar.
#[derive(Clone, Debug)]
pub struct Intersector {
    n_terms: u32,
    n_syms: u32,
    start: u32,
    /// Whether the start symbol derives the empty word.
    start_nullable: bool,
    /// For symbol X: productions `A → X Y` as `(A, Y)`.
    by_left: Vec<Vec<(u32, u32)>>,
    /// For symbol Y: productions `A → X Y` as `(A, X)`.
    by_right: Vec<Vec<(u32, u32)>>,
    /// For symbol X: every `A` with `A → X`, or `A → X Y`/`A → Y X` and `Y` nullable.
    by_unit: Vec<Vec<u32>>,
}

const BITS: u32 = 21;
const MASK: u64 = (1 << BITS) - 1;
const NIL: u32 = u32::MAX;

#[inline]
fn key(p: u32, x: u32, q: u32) -> u64 {
    ((x as u64) << (2 * BITS)) | ((p as u64) << BITS) | q as u64
}

#[inline]
fn unkey(k: u64) -> (u32, u32, u32) {
    (
        ((k >> BITS) & MASK) as u32,
        (k >> (2 * BITS)) as u32,
        (k & MASK) as u32,
    )
}

#[inline]
fn side(s: u32, x: u32) -> u64 {
    ((x as u64) << BITS) | s as u64
}

impl Intersector {
    /// Indexes `cfg`.
    pub fn new(cfg: &Cfg) -> Intersector {
        let n_terms = cfg.n_terms as u32;
        let n_syms = n_terms + cfg.nt_names.len() as u32;
        let sym = |s: Sym| match s {
            Sym::T(t) => t.0,
            Sym::N(n) => n_terms + n.0,
        };
        // Nullable symbols, by fixpoint.
        let mut nullable = vec![false; n_syms as usize];
        for a in &cfg.epsilon {
            nullable[(n_terms + a.0) as usize] = true;
        }
        loop {
            let mut changed = false;
            for &(a, x) in &cfg.unary {
                let a = (n_terms + a.0) as usize;
                if !nullable[a] && nullable[sym(x) as usize] {
                    nullable[a] = true;
                    changed = true;
                }
            }
            for &(a, x, y) in &cfg.binary {
                let a = (n_terms + a.0) as usize;
                if !nullable[a] && nullable[sym(x) as usize] && nullable[sym(y) as usize] {
                    nullable[a] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut by_left = vec![Vec::new(); n_syms as usize];
        let mut by_right = vec![Vec::new(); n_syms as usize];
        let mut by_unit: Vec<Vec<u32>> = vec![Vec::new(); n_syms as usize];
        for &(a, x, y) in &cfg.binary {
            let (a, x, y) = (n_terms + a.0, sym(x), sym(y));
            by_left[x as usize].push((a, y));
            by_right[y as usize].push((a, x));
            if nullable[y as usize] {
                by_unit[x as usize].push(a);
            }
            if nullable[x as usize] {
                by_unit[y as usize].push(a);
            }
        }
        for &(a, x) in &cfg.unary {
            by_unit[sym(x) as usize].push(n_terms + a.0);
        }
        for u in &mut by_unit {
            u.sort_unstable();
            u.dedup();
        }
        let start = n_terms + cfg.start.0;
        Intersector {
            n_terms,
            n_syms,
            start,
            start_nullable: nullable[start as usize],
            by_left,
            by_right,
            by_unit,
        }
    }

    /// Decides whether some word of the grammar is accepted by `dfa`; if so,
    /// returns one such word (a terminal sequence), as short as possible.
    ///
    /// # Errors
    /// [`ErrorKind::Budget`] when `budget` runs out; [`ErrorKind::SizeLimit`]
    /// for a DFA with more than 2²¹ states or a grammar with more than 2²² symbols.
    pub(crate) fn witness(&self, dfa: &TokenDfa, budget: &mut Budget) -> Result<Option<Vec<u32>>> {
        if dfa.is_empty() {
            return Ok(None);
        }
        if self.start_nullable && dfa.finals[dfa.start as usize] {
            return Ok(Some(Vec::new()));
        }
        if dfa.len() as u64 > MASK || self.n_syms as u64 >= (1 << 22) {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                "automaton or grammar too large for the emptiness search",
            ));
        }
        let mut queue = Queue::default();
        let mut adj = Adjacency::default();
        let goal = |k: u64| -> bool {
            let (p, x, q) = unkey(k);
            x == self.start && p == dfa.start && dfa.finals[q as usize]
        };
        for (p, es) in dfa.edges.iter().enumerate() {
            for &(t, q) in es {
                queue.offer(key(p as u32, t, q), 1, Reason::Edge);
            }
        }
        let mut done: Option<u64> = None;
        while let Some((k, c)) = queue.pop() {
            budget.spend(1)?;
            if goal(k) {
                done = Some(k);
                break;
            }
            let (p, x, q) = unkey(k);
            adj.insert(p, x, q, c);
            for &a in &self.by_unit[x as usize] {
                queue.offer(key(p, a, q), c, Reason::Unit(x));
            }
            for &(a, y) in &self.by_left[x as usize] {
                let mut i = adj.right.get(&side(q, y)).copied().unwrap_or(NIL);
                while i != NIL {
                    budget.spend(1)?;
                    let (r, c2, next) = adj.arena[i as usize];
                    queue.offer(key(p, a, r), c + c2, Reason::Bin(x, y, q));
                    i = next;
                }
            }
            for &(a, w) in &self.by_right[x as usize] {
                let mut i = adj.left.get(&side(p, w)).copied().unwrap_or(NIL);
                while i != NIL {
                    budget.spend(1)?;
                    let (o, c2, next) = adj.arena[i as usize];
                    queue.offer(key(o, a, q), c + c2, Reason::Bin(w, x, p));
                    i = next;
                }
            }
        }
        let Some(goal_key) = done else {
            return Ok(None);
        };
        // Expand the derivation, left to right.
        let mut word = Vec::new();
        let mut stack = vec![goal_key];
        while let Some(k) = stack.pop() {
            budget.spend(1)?;
            let (p, x, q) = unkey(k);
            let idx = queue.index[&k] as usize;
            match queue.entries[idx].reason {
                Reason::Edge => word.push(x),
                Reason::Unit(y) => stack.push(key(p, y, q)),
                Reason::Bin(y, z, m) => {
                    stack.push(key(m, z, q));
                    stack.push(key(p, y, m));
                }
            }
        }
        debug_assert!(word.iter().all(|&t| t < self.n_terms));
        Ok(Some(word))
    }
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
#[derive(Default)]
struct Queue {
    index: FxMap<u64, u32>,
    entries: Vec<Entry>,
    /// Bucket queue of entry indices by cost.
    buckets: Vec<Vec<u32>>,
    current: usize,
}

impl Queue {
    /// Offers a derivation of `k` with yield length `cost`.
    #[inline]
    fn offer(&mut self, k: u64, cost: u32, why: Reason) {
        let idx = match self.index.get(&k) {
            Some(&i) => {
                let e = &mut self.entries[i as usize];
                if e.done || e.cost <= cost {
                    return;
                }
                e.cost = cost;
                e.reason = why;
                i
            }
            None => {
                let i = self.entries.len() as u32;
                self.index.insert(k, i);
                self.entries.push(Entry {
                    key: k,
                    cost,
                    reason: why,
                    done: false,
                });
                i
            }
        };
        let c = cost as usize;
        if self.buckets.len() <= c {
            self.buckets.resize_with(c + 1, Vec::new);
        }
        self.buckets[c].push(idx);
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
        None
    }
}

/// Finalised triples as linked lists in one arena, per `(p, X)` to the right
/// and per `(q, X)` to the left: no allocation per key.
#[derive(Default)]
struct Adjacency {
    right: FxMap<u64, u32>,
    left: FxMap<u64, u32>,
    /// `(other state, cost, next)`.
    arena: Vec<(u32, u32, u32)>,
}

impl Adjacency {
    fn insert(&mut self, p: u32, x: u32, q: u32, cost: u32) {
        let n = self.arena.len() as u32;
        let r = self.right.entry(side(p, x)).or_insert(NIL);
        self.arena.push((q, cost, *r));
        *r = n;
        let l = self.left.entry(side(q, x)).or_insert(NIL);
        self.arena.push((p, cost, *l));
        *l = n + 1;
    }
}

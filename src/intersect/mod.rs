//! Emptiness of `L(G) ∩ L(D)` for a grammar `G` in C2F+ε normal form and a DFA
//! `D` over terminals, with a witness.
//!
//! This is the implicit bottom-up search of Mündler et al. (arXiv 2508.10111,
//! Alg. 2) adapted to C2F+ε: a triple `(p, X, q)` is *generating* when symbol
//! `X` derives some word that leads `D` from `p` to `q`. Seeds are the DFA edges
//! `p –a→ q` (giving `(p, a, q)`) and `(p, A, p)` for `A → ε`. Each new triple
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
    Edge,
    Eps,
    Unit(u32),
    Bin(u32, u32, u32),
}

/// A grammar indexed for the emptiness search. Built once per grammar.
#[derive(Clone, Debug)]
pub struct Intersector {
    n_terms: u32,
    n_syms: u32,
    start: u32,
    /// For symbol X: productions `A → X Y` as `(A, Y)`.
    by_left: Vec<Vec<(u32, u32)>>,
    /// For symbol Y: productions `A → X Y` as `(A, X)`.
    by_right: Vec<Vec<(u32, u32)>>,
    /// For symbol X: productions `A → X` as `A`.
    by_unit: Vec<Vec<u32>>,
    /// Nonterminals with `A → ε` (as symbol ids).
    eps: Vec<u32>,
}

const BITS: u32 = 21;
const MASK: u64 = (1 << BITS) - 1;

#[inline]
fn key(p: u32, x: u32, q: u32) -> u64 {
    ((x as u64) << (2 * BITS)) | ((p as u64) << BITS) | q as u64
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
        let mut by_left = vec![Vec::new(); n_syms as usize];
        let mut by_right = vec![Vec::new(); n_syms as usize];
        let mut by_unit = vec![Vec::new(); n_syms as usize];
        for &(a, x, y) in &cfg.binary {
            let a = n_terms + a.0;
            by_left[sym(x) as usize].push((a, sym(y)));
            by_right[sym(y) as usize].push((a, sym(x)));
        }
        for &(a, x) in &cfg.unary {
            by_unit[sym(x) as usize].push(n_terms + a.0);
        }
        let eps = cfg.epsilon.iter().map(|a| n_terms + a.0).collect();
        Intersector {
            n_terms,
            n_syms,
            start: n_terms + cfg.start.0,
            by_left,
            by_right,
            by_unit,
            eps,
        }
    }

    /// Decides whether some word of the grammar is accepted by `dfa`; if so,
    /// returns one such word (a terminal sequence).
    ///
    /// # Errors
    /// [`ErrorKind::Budget`] when `budget` runs out; [`ErrorKind::SizeLimit`]
    /// for a DFA with more than 2²¹ states or a grammar with more than 2²² symbols.
    pub(crate) fn witness(&self, dfa: &TokenDfa, budget: &mut Budget) -> Result<Option<Vec<u32>>> {
        if dfa.is_empty() {
            return Ok(None);
        }
        if dfa.len() as u64 > MASK || self.n_syms as u64 >= (1 << 22) {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                "automaton or grammar too large for the emptiness search",
            ));
        }
        let mut s = Search {
            found: FxMap::default(),
            reasons: Vec::new(),
            right: FxMap::default(),
            left: FxMap::default(),
            work: Vec::new(),
        };
        let goal = |k: u64| -> bool {
            let x = (k >> (2 * BITS)) as u32;
            let p = ((k >> BITS) & MASK) as u32;
            let q = (k & MASK) as u32;
            x == self.start && p == dfa.start && dfa.finals[q as usize]
        };
        for (p, es) in dfa.edges.iter().enumerate() {
            for &(t, q) in es {
                s.add(key(p as u32, t, q), Reason::Edge);
            }
        }
        for p in 0..dfa.len() as u32 {
            for &a in &self.eps {
                s.add(key(p, a, p), Reason::Eps);
            }
        }
        let mut done: Option<u64> = s.reasons.iter().map(|r| r.0).find(|&k| goal(k));
        while done.is_none() {
            let Some(k) = s.work.pop() else { break };
            budget.spend(1)?;
            let x = (k >> (2 * BITS)) as u32;
            let p = ((k >> BITS) & MASK) as u32;
            let q = (k & MASK) as u32;
            for &a in &self.by_unit[x as usize] {
                let nk = key(p, a, q);
                if s.add(nk, Reason::Unit(x)) && goal(nk) {
                    done = Some(nk);
                }
            }
            for &(a, y) in &self.by_left[x as usize] {
                let Some(rs) = s.right.get(&side(q, y)) else {
                    continue;
                };
                budget.spend(rs.len() as u64)?;
                let rs = rs.clone();
                for r in rs {
                    let nk = key(p, a, r);
                    if s.add(nk, Reason::Bin(x, y, q)) && goal(nk) {
                        done = Some(nk);
                    }
                }
            }
            for &(a, w) in &self.by_right[x as usize] {
                let Some(ls) = s.left.get(&side(p, w)) else {
                    continue;
                };
                budget.spend(ls.len() as u64)?;
                let ls = ls.clone();
                for o in ls {
                    let nk = key(o, a, q);
                    if s.add(nk, Reason::Bin(w, x, p)) && goal(nk) {
                        done = Some(nk);
                    }
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
            let x = (k >> (2 * BITS)) as u32;
            let p = ((k >> BITS) & MASK) as u32;
            let q = (k & MASK) as u32;
            let idx = s.found[&k] as usize;
            match s.reasons[idx].1 {
                Reason::Edge => word.push(x),
                Reason::Eps => {}
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

struct Search {
    found: FxMap<u64, u32>,
    reasons: Vec<(u64, Reason)>,
    /// (p, X) → states q with (p, X, q) generating.
    right: FxMap<u64, Vec<u32>>,
    /// (q, X) → states p with (p, X, q) generating.
    left: FxMap<u64, Vec<u32>>,
    work: Vec<u64>,
}

impl Search {
    /// Records a triple; true if it is new.
    #[inline]
    fn add(&mut self, k: u64, why: Reason) -> bool {
        if self.found.contains_key(&k) {
            return false;
        }
        self.found.insert(k, self.reasons.len() as u32);
        self.reasons.push((k, why));
        let x = (k >> (2 * BITS)) as u32;
        let p = ((k >> BITS) & MASK) as u32;
        let q = (k & MASK) as u32;
        self.right.entry(side(p, x)).or_default().push(q);
        self.left.entry(side(q, x)).or_default().push(p);
        self.work.push(k);
        true
    }
}

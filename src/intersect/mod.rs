//! Emptiness of `L(G) ∩ L(D)` for a grammar `G` in C2F+ε normal form and a DFA
//! `D` over terminals, with a shortest witness.
//!
//! A triple `(p, X, q)` is *generating* when symbol `X` derives a word that
//! leads `D` from state `p` to state `q`; the intersection is nonempty iff
//! `(q0, S, f)` is generating for a final `f`. Mündler et al. (arXiv
//! 2508.10111, Alg. 2) find generating triples bottom-up, never building the
//! intersection grammar. On the chain-like DFAs of partial outputs a purely
//! bottom-up search is quadratic in practice: a list `x*` derives *every*
//! contiguous run of elements, so a 1 MB JSON array has ~10¹¹ such triples.
//! cdiff therefore runs the search in two phases:
//!
//! 1. `earley`: the same generating triples, restricted top-down to symbols
//!    *predicted* where they start (Earley's algorithm run over the states of
//!    `D` instead of string positions, with a worklist so cycles in `D` — the
//!    holes — reach a fixpoint). With left-recursive repetition (what the
//!    normaliser produces) a list completes only where it can end, so the work
//!    is near-linear on real documents. It stops as soon as `(q0, S, f)`
//!    completes; this phase alone decides [`check`](crate::Constraint::check).
//! 2. `shortest`: to build a witness, Knuth's generalisation of Dijkstra's
//!    algorithm re-derives the triples of phase 1, bottom-up, in order of the
//!    length of their shortest yield, recording the production and split point
//!    that gave each its minimum. Expanding `(q0, S, f)` gives a shortest word.
//!
//! # Canvases: where the cost goes
//!
//! A diffusion canvas has tens to hundreds of holes, and a hole state can
//! emit any terminal, so it predicts nearly every nonterminal, and nearly
//! every symbol started at one hole can be completed at every later one: at
//! its fixpoint the chart holds about `h²·|N|` triples for `h` hole states
//! (1.2 million items on a 1 KB C++ canvas with 68 holes). Nothing that
//! decides emptiness needs all of them. [`check`](crate::Constraint::check)
//! stops at the first goal and phase 1 pops the item at the furthest state
//! first, so a completable canvas is usually decided after a near-linear
//! amount of work (the canvas benchmark, `eval/canvas.sh`, measures growth
//! exponents 0.7–1.1 in bytes and in holes); a canvas that begins with a
//! hole can defeat that race, and is tried again with the start's own items
//! first (`Order::StartFirst`, see `earley`). The witness runs phase 1 on to
//! the fixpoint only within a bounded effort (`Config::witness_effort`):
//! inputs with a few holes get their shortest witness, canvases the shortest
//! among the triples found by then, and phase 2 starts only from the
//! terminal edges phase 1 scanned. What still grows faster than the text is
//! the canvas that is *not* completable: its search can only say so at
//! the fixpoint. When that is because of the fixed text after its last hole
//! (a decoder that has put a token at the end of its answer), the front door
//! stops a search that runs long and checks that end alone
//! (`Config::long_search_per_state`).
//!
//! Predictions are filtered by FIRST sets: at a state, a production is
//! predicted only if its right-hand side is nullable or can begin with a
//! terminal on one of the state's edges, and an item whose next symbol
//! cannot begin at its state is dropped. Neither could ever scan or
//! complete there, so the completed triples — and the witness — are those
//! of the unfiltered search; on C++ it removed a fifth of a check's time
//! (most states of a text have one or two outgoing terminals, and a
//! statement predicts every level of the expression grammar).
//!
//! A chart can also be kept and *extended* (`earley::base`,
//! `earley::extend`): the chart of a prefix of the text, searched to its
//! fixpoint once, answers many continuations (an insertion point's
//! candidate tokens followed by the rest of the text) by searching only the
//! continuation, waking the prefix's waiting items when a completion starts
//! in it (see [`crate::mask`]). It *grows* (`earley::grow`) by the
//! terminals of an accepted token as a new layer — items are made only at
//! the new states, so older layers never change and the step costs what it
//! adds (an incremental Earley parser over an autoregressive loop). And the
//! continuation's own part of the chart — items predicted at its states,
//! which do not depend on what precedes it — is kept across searches
//! (`earley::Tail`): from its second search on, a search makes only the
//! items whose origin is in the prefix and the predictions they need, then
//! finishes the kept items to their fixpoint, so the text after an
//! insertion point is searched about once however many tokens are asked
//! there or accepted before it.
//!
//! Nullable symbols are known per grammar, so `A → X Y` with `Y ⇒* ε` also
//! acts as `A → X` in phase 2 and no triple is created just for ε. Every step
//! of both phases is charged to a work budget; running
//! out is an error, never a silent "empty". Cost, worst case: `O(|G| · n³)`
//! for `n` DFA states (ambiguous grammars on highly cyclic automata).

mod earley;
mod shortest;
mod table;

use crate::budget::Budget;
use crate::error::{Error, ErrorKind, Result};
use crate::grammar::{Cfg, Sym};
use crate::lexer::{TokenNfa, WeighedClosure};
use earley::Until;
pub(crate) use earley::{Base, Entering, Grown, Growth, Order, Seed, Tail};

/// A word of `L(G) ∩ L(D)` found by [`Intersector::witness`].
pub(crate) struct Witness {
    /// Each terminal, with the state of `D` it leaves on one accepting path.
    pub(crate) path: Vec<(u32, u32)>,
    /// Whether no word has fewer terminals (the search reached its fixpoint).
    pub(crate) shortest: bool,
    /// On a weighed automaton: the text bytes the path swallows (0
    /// otherwise), the fewest the path's fills can swallow.
    pub(crate) swallowed: u32,
}

/// A grammar indexed for the emptiness search. Built once per grammar.
#[derive(Clone, Debug)]
pub struct Intersector {
    n_terms: u32,
    n_syms: u32,
    start: u32,
    /// Per symbol: whether it derives the empty word.
    nullable: Vec<bool>,
    /// Productions as `(lhs, rhs)`, rhs of length 0, 1 or 2 (`NONE` padded).
    prods: Vec<(u32, [u32; 2], u8)>,
    /// Per symbol `a`: its productions are `prods_at[a]..prods_at[a + 1]`
    /// (`prods` is sorted by left-hand side: a prediction reads a symbol's
    /// productions and their FIRST sets right after a decoder's forward
    /// pass has evicted the caches, and each run of memory is a miss or
    /// two; a `Vec` of indices per symbol, then one array of them, were
    /// more).
    prods_at: Vec<u32>,
    /// Phase 2: for symbol X, productions `A → X Y` as `(A, Y)`.
    by_left: Vec<Vec<(u32, u32)>>,
    /// Phase 2: for symbol Y, productions `A → X Y` as `(A, X)`.
    by_right: Vec<Vec<(u32, u32)>>,
    /// Phase 2: for symbol X, every `A` with `A → X`, or `A → X Y`/`A → Y X` and `Y` nullable.
    by_unit: Vec<Vec<u32>>,
    /// Words of a terminal bitset.
    term_words: usize,
    /// Per production, `term_words` words: the terminals a word derived
    /// from its right-hand side can begin with (its FIRST set). Phase 1
    /// predicts a production at a state only if the state has an edge on
    /// one of them, or the right-hand side is nullable.
    first: Vec<u64>,
    /// Per production: whether its right-hand side derives the empty word.
    rhs_nullable: Vec<bool>,
    /// Per symbol, `term_words` words: its FIRST set.
    sym_first: Vec<u64>,
}

pub(crate) const BITS: u32 = 21;
pub(crate) const MASK: u64 = (1 << BITS) - 1;

/// Packs a triple `(p, X, q)`.
#[inline]
pub(crate) fn key(p: u32, x: u32, q: u32) -> u64 {
    ((x as u64) << (2 * BITS)) | ((p as u64) << BITS) | q as u64
}

/// Unpacks a triple into `(p, X, q)`.
#[inline]
pub(crate) fn unkey(k: u64) -> (u32, u32, u32) {
    (
        ((k >> BITS) & MASK) as u32,
        (k >> (2 * BITS)) as u32,
        (k & MASK) as u32,
    )
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
        let mut prods: Vec<(u32, [u32; 2], u8)> = Vec::new();
        for &(a, x, y) in &cfg.binary {
            prods.push((n_terms + a.0, [sym(x), sym(y)], 2));
        }
        for &(a, x) in &cfg.unary {
            prods.push((n_terms + a.0, [sym(x), u32::MAX], 1));
        }
        for &a in &cfg.epsilon {
            prods.push((n_terms + a.0, [u32::MAX; 2], 0));
        }
        // By left-hand side (stably: a symbol's productions keep their
        // order), so that a symbol's productions and their FIRST sets are
        // each one run of memory.
        prods.sort_by_key(|p| p.0);
        let mut prods_at = vec![0u32; n_syms as usize + 1];
        for p in &prods {
            prods_at[p.0 as usize + 1] += 1;
        }
        for a in 0..n_syms as usize {
            prods_at[a + 1] += prods_at[a];
        }
        // Nullable symbols, by fixpoint.
        let mut nullable = vec![false; n_syms as usize];
        loop {
            let mut changed = false;
            for &(a, rhs, len) in &prods {
                if !nullable[a as usize]
                    && rhs[..len as usize].iter().all(|&x| nullable[x as usize])
                {
                    nullable[a as usize] = true;
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
        for &(a, [x, y], len) in &prods {
            match len {
                2 => {
                    by_left[x as usize].push((a, y));
                    by_right[y as usize].push((a, x));
                    if nullable[y as usize] {
                        by_unit[x as usize].push(a);
                    }
                    if nullable[x as usize] {
                        by_unit[y as usize].push(a);
                    }
                }
                1 => by_unit[x as usize].push(a),
                _ => {}
            }
        }
        for u in &mut by_unit {
            u.sort_unstable();
            u.dedup();
        }
        let (term_words, sym_first, first, rhs_nullable) =
            first_sets(n_terms, n_syms, &prods, &nullable);
        Intersector {
            n_terms,
            n_syms,
            start: n_terms + cfg.start.0,
            nullable,
            prods,
            prods_at,
            by_left,
            by_right,
            by_unit,
            term_words,
            first,
            rhs_nullable,
            sym_first,
        }
    }

    /// The indices of `a`'s productions.
    #[inline]
    pub(crate) fn prods_of(&self, a: u32) -> std::ops::Range<u32> {
        self.prods_at[a as usize]..self.prods_at[a as usize + 1]
    }

    /// Whether symbol `x` may derive a word at a state whose outgoing
    /// terminals are `out`: it is nullable or its FIRST set meets `out`.
    #[inline]
    pub(crate) fn may_begin(&self, x: u32, out: &[u64]) -> bool {
        self.nullable[x as usize] || meets(&self.sym_first, self.term_words, x, out)
    }

    /// Whether production `p` may be worth predicting at a state whose
    /// outgoing terminals are `out` (a terminal bitset): its right-hand side
    /// is nullable or can begin with one of them. A production that fails
    /// this never scans or completes there, so skipping it changes no
    /// completed triple.
    #[inline]
    pub(crate) fn may_start(&self, p: u32, out: &[u64]) -> bool {
        self.rhs_nullable[p as usize] || meets(&self.first, self.term_words, p, out)
    }

    fn check_sizes(&self, dfa: &TokenNfa) -> Result<()> {
        self.check_states(dfa.len() as u64)
    }

    /// [`Intersector::check_sizes`] for `n` states.
    fn check_states(&self, n: u64) -> Result<()> {
        // The phase-1 tables index (symbol or production, state, state).
        let widest = (self.n_syms as u64).max(self.prods.len() as u64);
        if n > MASK
            || self.n_syms as u64 >= (1 << 22)
            || self.prods.len() >= (1 << 20)
            || widest.checked_mul(n * n).is_none_or(|x| x >= 1 << 63)
        {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                "automaton or grammar too large for the emptiness search",
            ));
        }
        Ok(())
    }

    /// The phase-1 chart of a prefix's automaton (see [`earley::base`]).
    ///
    /// # Errors
    /// As [`Intersector::check`].
    pub(crate) fn base(
        &self,
        dfa: &TokenNfa,
        frontier: &[u32],
        budget: &mut Budget,
    ) -> Result<Base> {
        self.check_sizes(dfa)?;
        earley::base(self, dfa, frontier, budget)
    }

    /// Grows `base` as `by` says (see [`earley::grow`]).
    ///
    /// # Errors
    /// As [`Intersector::check`].
    pub(crate) fn grow(&self, base: &mut Base, by: Growth<'_>, budget: &mut Budget) -> Result<()> {
        self.fits(base, by.ext)?;
        earley::grow(self, base, by, budget)
    }

    /// Whether an item at a seed's `from` states waits for a terminal of
    /// its `steps`: if none does, nothing moves into an extension entered
    /// so, and no growth or search from there can reach anything.
    pub(crate) fn enters(&self, base: &Base, seeds: &[Seed<'_>]) -> bool {
        earley::seeds_any(self, base, seeds)
    }

    /// Whether a word of the grammar reads the base's prefix to a state of a
    /// seed's `from`, then a terminal `t` to `ext`'s state `d` for a step
    /// `(t, d)` of its `steps` (sorted), then a word of `ext` from `d` to a
    /// final state (see [`earley::extend`]).
    ///
    /// # Errors
    /// As [`Intersector::check`].
    pub(crate) fn extend(
        &self,
        base: &Base,
        ext: &TokenNfa,
        seeds: &[Seed<'_>],
        budget: &mut Budget,
    ) -> Result<bool> {
        if ext.is_empty() || seeds.iter().all(|s| s.from.is_empty()) {
            return Ok(false);
        }
        self.fits(base, ext)?;
        earley::extend(self, base, ext, seeds, budget)
    }

    /// The [`Tail`] of `nfa` entered at `entries`: its chart, kept across
    /// searches from bases.
    ///
    /// # Errors
    /// [`ErrorKind::SizeLimit`] as [`Intersector::check`].
    pub(crate) fn tail(&self, nfa: TokenNfa, entries: Vec<Option<u32>>) -> Result<Tail> {
        self.check_sizes(&nfa)?;
        Ok(Tail::new(nfa, entries))
    }

    /// [`Intersector::extend`] into a tail, entered as `at` says (see
    /// [`Tail::search`]).
    ///
    /// # Errors
    /// As [`Intersector::check`].
    pub(crate) fn search_tail(
        &self,
        base: &Base,
        tail: &mut Tail,
        at: Entering<'_>,
        budget: &mut Budget,
    ) -> Result<bool> {
        if tail.is_empty(at.k) || at.from.is_empty() {
            return Ok(false);
        }
        self.fits(base, tail.nfa())?;
        tail.search(self, base, at, budget)
    }

    /// Whether the states of `base` and `ext` together fit an item.
    fn fits(&self, base: &Base, ext: &TokenNfa) -> Result<()> {
        self.check_states(base.len() + ext.len() as u64)
    }

    /// Whether some word of the grammar is accepted by `dfa` (phase 1 only).
    ///
    /// # Errors
    /// [`ErrorKind::Budget`] when `budget` runs out; [`ErrorKind::SizeLimit`]
    /// for a DFA with more than 2²¹ states or a grammar with more than 2²²
    /// symbols or 2²⁰ productions.
    pub(crate) fn check(&self, dfa: &TokenNfa, budget: &mut Budget, order: Order) -> Result<bool> {
        if dfa.is_empty() {
            return Ok(false);
        }
        if self.nullable[self.start as usize] && accepts_empty(dfa) {
            return Ok(true);
        }
        self.check_sizes(dfa)?;
        Ok(earley::search(self, dfa, budget, Until::Goal, order)?
            .goal
            .is_some())
    }

    /// Decides whether some word of the grammar is accepted by `dfa`; if so,
    /// returns a shortest such word among those phase 1 found (a terminal
    /// sequence, each terminal with the state of `dfa` it leaves on one
    /// accepting path) and whether it is a shortest of all.
    ///
    /// With `effort` `None`, phase 1 stops at its first goal; the witness is
    /// then the shortest among the triples completed by then (often, not
    /// always, the shortest of all; cheapest). With `Some((f, floor))`,
    /// phase 1 goes on to its fixpoint unless that costs more than `f` times
    /// the work that found the goal plus `floor` units: a fixpoint makes the
    /// witness the shortest of all.
    ///
    /// # Errors
    /// As [`Intersector::check`].
    /// A witness longer than `max_terminals` is a size-limit error.
    pub(crate) fn witness(
        &self,
        dfa: &TokenNfa,
        budget: &mut Budget,
        max_terminals: u32,
        effort: Option<(u64, u64)>,
        order: Order,
    ) -> Result<Option<Witness>> {
        if dfa.is_empty() {
            return Ok(None);
        }
        // The empty word, and what it swallows (on a weighed automaton the
        // ε-moves to a final state may comment out the whole text).
        let empty = match self.nullable[self.start as usize] {
            true => empty_word_cost(dfa),
            false => None,
        };
        if empty == Some(0) {
            return Ok(Some(Witness {
                path: Vec::new(),
                shortest: true,
                swallowed: 0,
            }));
        }
        self.check_sizes(dfa)?;
        let until = match effort {
            None => Until::Goal,
            Some((effort, floor)) => Until::Fixpoint { effort, floor },
        };
        let chart = earley::search(self, dfa, budget, until, order)?;
        if chart.goal.is_none() {
            return Ok(empty.map(|swallowed| Witness {
                path: Vec::new(),
                shortest: chart.fixpoint,
                swallowed,
            }));
        }
        let word = shortest::witness(self, dfa, &chart, budget, max_terminals, empty)?;
        Ok(word.map(|(path, cost)| Witness {
            swallowed: cost.saturating_sub(path.len() as u32),
            path,
            shortest: chart.fixpoint,
        }))
    }
}

/// Whether row `i` of `rows` (bitsets of `w` words each) meets `out`.
#[inline]
fn meets(rows: &[u64], w: usize, i: u32, out: &[u64]) -> bool {
    rows[i as usize * w..(i as usize + 1) * w]
        .iter()
        .zip(out)
        .any(|(a, b)| a & b != 0)
}

/// FIRST sets: per symbol and per production, a bitset of `n_terms` bits (in words) of
/// the terminals its right-hand side's words can begin with, and whether
/// the right-hand side is nullable; by fixpoint over the symbols' sets.
fn first_sets(
    n_terms: u32,
    n_syms: u32,
    prods: &[(u32, [u32; 2], u8)],
    nullable: &[bool],
) -> (usize, Vec<u64>, Vec<u64>, Vec<bool>) {
    let w = (n_terms as usize).div_ceil(64).max(1);
    let mut sym = vec![0u64; n_syms as usize * w];
    for t in 0..n_terms as usize {
        sym[t * w + t / 64] |= 1 << (t % 64);
    }
    // The symbols whose FIRST set feeds the right-hand side's.
    let feeds = |rhs: &[u32; 2], len: u8| -> ([u32; 2], usize) {
        match len {
            2 if nullable[rhs[0] as usize] => (*rhs, 2),
            0 => ([0; 2], 0),
            _ => ([rhs[0], 0], 1),
        }
    };
    loop {
        let mut changed = false;
        for &(a, rhs, len) in prods {
            let (xs, k) = feeds(&rhs, len);
            for &x in &xs[..k] {
                for i in 0..w {
                    let add = sym[x as usize * w + i] & !sym[a as usize * w + i];
                    if add != 0 {
                        sym[a as usize * w + i] |= add;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            break;
        }
    }
    let mut first = vec![0u64; prods.len() * w];
    let mut rhs_nullable = Vec::with_capacity(prods.len());
    for (p, &(_, rhs, len)) in prods.iter().enumerate() {
        let (xs, k) = feeds(&rhs, len);
        for &x in &xs[..k] {
            for i in 0..w {
                first[p * w + i] |= sym[x as usize * w + i];
            }
        }
        rhs_nullable.push(rhs[..len as usize].iter().all(|&x| nullable[x as usize]));
    }
    (w, sym, first, rhs_nullable)
}

/// Whether `dfa` accepts the empty word (a final state within ε-moves of the start).
/// The fewest bytes swallowed on the way from the start to a final state by
/// ε-moves alone (`None`: the automaton does not accept the empty word).
fn empty_word_cost(dfa: &TokenNfa) -> Option<u32> {
    let mut land = Vec::new();
    WeighedClosure::new(dfa).close(dfa, dfa.start, &mut land);
    land.iter()
        .filter(|&&(s, _)| dfa.finals[s as usize])
        .map(|&(_, d)| d)
        .min()
}

fn accepts_empty(dfa: &TokenNfa) -> bool {
    dfa.closure(&[dfa.start])
        .iter()
        .any(|&s| dfa.finals[s as usize])
}

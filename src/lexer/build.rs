//! Construction of the lexer automaton `L` (see the module docs).

use crate::automata::{ByteDfa, DEAD};
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::grammar::Grammar;
use std::collections::HashMap;

/// The dead state of `L`.
pub(crate) const LDEAD: u32 = 0;

/// Default limit on the number of lexer-automaton states.
pub const DEFAULT_LEXER_LIMIT: usize = 200_000;

/// The maximal-munch lexer automaton of a grammar's terminals.
#[derive(Clone, Debug)]
pub struct Lexer {
    pub(crate) dfa: ByteDfa,
    pub(crate) n_terms: usize,
    /// Per L-state: `(q, checkers, fresh)`.
    pub(crate) states: Vec<(u32, Vec<u32>, bool)>,
    /// `step[l * n_classes + class]`: successor on a byte of that class.
    pub(crate) step: Vec<u32>,
    /// Per L-state: the state after ending the current lexeme (`LDEAD` if `q` does not accept).
    pub(crate) emit: Vec<u32>,
    /// Per L-state: the non-ignored terminals that may be emitted.
    pub(crate) emit_terms: Vec<u32>,
    /// Distinct sorted terminal sets, indexed by `emit_terms`.
    pub(crate) term_sets: Vec<Vec<u32>>,
    /// Per L-state: whether the current lexeme may be skipped (an ignored terminal accepts it).
    pub(crate) skippable: Vec<bool>,
    /// The initial state `(q0, ∅, fresh)`.
    pub(crate) start: u32,
    /// A byte representative per byte class, preferring readable ASCII.
    pub(crate) class_rep: Vec<u8>,
    /// Words per L-state bitset.
    pub(crate) words: usize,
    /// `hole_closure[l * words ..][..words]`: the L-states reachable from `l`
    /// inside a hole (any bytes, skipped ignored lexemes), `l` included.
    pub(crate) hole_closure: Vec<u64>,
    /// `live_on[b * words ..][..words]`: the L-states with a live successor on byte `b`.
    pub(crate) live_on: Vec<u64>,
    /// The L-states between lexemes (`fresh`), as a bitset.
    pub(crate) fresh_set: Vec<u64>,
    /// The L-states that can end a lexeme as a (non-ignored) terminal, as a bitset.
    pub(crate) emitting_set: Vec<u64>,
    /// Per L-state: the L-states that *subsume* it — same lexeme state and
    /// freshness, a strict subset of its checkers — so every continuation
    /// valid from it is valid from them, with the same terminals.
    pub(crate) dominators: Vec<Vec<u32>>,
    /// The L-states with at least one dominator, as a bitset.
    pub(crate) dominated_set: Vec<u64>,
    /// Per terminal: the length in bytes of its shortest lexeme (`u32::MAX`
    /// if it matches nothing). Lower bounds for hole-size limits.
    pub(crate) min_len: Vec<u32>,
    /// Per terminal, made at its first use by a witness search: the fewest
    /// bytes each L-state reads before it can emit it (see
    /// [`ToEmit`](super::witness::ToEmit)).
    pub(crate) to_emit: super::witness::ToEmit,
    /// Unique per lexer built in this process (a clone keeps it: same
    /// automaton), so caches keyed by lexer states can tell lexers apart.
    pub(crate) uid: u64,
}

impl Lexer {
    /// Compiles the terminals of `g` into the lexer automaton.
    ///
    /// # Errors
    /// [`ErrorKind::Regex`] for a bad pattern or a terminal matching the empty
    /// string; [`ErrorKind::SizeLimit`] past `limit` states.
    pub fn new(g: &Grammar, limit: usize) -> Result<Lexer> {
        let patterns: Vec<&str> = g.terminals.iter().map(|t| t.pattern.as_str()).collect();
        let dfa = ByteDfa::from_patterns(&patterns)?;
        if let Some(&t) = dfa.tags(dfa.start()).first() {
            return Err(Error::new(
                ErrorKind::Regex,
                format!(
                    "terminal {} matches the empty string",
                    g.terminals[t as usize].name
                ),
            ));
        }
        let n_terms = g.terminals.len();
        let mut ignored = vec![false; n_terms];
        for t in &g.ignore {
            if let Some(x) = ignored.get_mut(t.0 as usize) {
                *x = true;
            }
        }
        let k = dfa.n_classes;
        let mut class_rep = vec![0u8; k];
        let mut best = vec![u8::MAX; k];
        for b in 0..=255u8 {
            let c = dfa.class_of[b as usize] as usize;
            let rank = byte_rank(b);
            if rank < best[c] {
                best[c] = rank;
                class_rep[c] = b;
            }
        }
        // Terminal sets per accept-set of D, split into emit / skip.
        let mut term_sets: Vec<Vec<u32>> = vec![Vec::new()];
        let mut set_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        set_ids.insert(Vec::new(), 0);
        let mut acc_emit: Vec<u32> = Vec::with_capacity(dfa.accept_sets.len());
        let mut acc_skip: Vec<bool> = Vec::with_capacity(dfa.accept_sets.len());
        for set in &dfa.accept_sets {
            let emit: Vec<u32> = set
                .iter()
                .copied()
                .filter(|&t| !ignored[t as usize])
                .collect();
            let id = match set_ids.get(&emit) {
                Some(&id) => id,
                None => {
                    let id = term_sets.len() as u32;
                    set_ids.insert(emit.clone(), id);
                    term_sets.push(emit);
                    id
                }
            };
            acc_emit.push(id);
            acc_skip.push(set.iter().any(|&t| ignored[t as usize]));
        }

        let canon = CheckerCanon::new(&dfa);
        static UIDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let mut lx = Lexer {
            uid: UIDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            dfa,
            n_terms,
            states: vec![(DEAD, Vec::new(), false)],
            step: vec![LDEAD; k],
            emit: vec![LDEAD],
            emit_terms: vec![0],
            term_sets,
            skippable: vec![false],
            start: 1,
            class_rep,
            words: 0,
            hole_closure: Vec::new(),
            live_on: Vec::new(),
            fresh_set: Vec::new(),
            emitting_set: Vec::new(),
            dominators: Vec::new(),
            dominated_set: Vec::new(),
            min_len: Vec::new(),
            to_emit: super::witness::ToEmit::new(n_terms),
        };
        let mut ids: HashMap<(u32, Vec<u32>, bool), u32> = HashMap::new();
        let q0 = lx.dfa.start();
        let start_key = (q0, Vec::new(), true);
        ids.insert(start_key.clone(), 1);
        lx.states.push(start_key);
        let mut head = 1usize;
        while head < lx.states.len() {
            let l = head;
            head += 1;
            let (q, checkers, _) = lx.states[l].clone();
            lx.step.resize((l + 1) * k, LDEAD);
            for c in 0..k {
                let nq = lx.dfa.trans[q as usize * k + c];
                if nq == DEAD {
                    continue;
                }
                let mut nc: Vec<u32> = Vec::with_capacity(checkers.len());
                let mut ok = true;
                for &ch in &checkers {
                    let x = lx.dfa.trans[ch as usize * k + c];
                    if lx.dfa.is_accepting(x) {
                        ok = false;
                        break;
                    }
                    if x != DEAD && canon.after_step[x as usize] != DEAD {
                        nc.push(canon.after_step[x as usize]);
                    }
                }
                if !ok {
                    continue;
                }
                nc.sort_unstable();
                nc.dedup();
                let id = intern(&mut lx, &mut ids, (nq, nc, false), limit)?;
                lx.step[l * k + c] = id;
            }
            let acc = lx.dfa.accept[q as usize] as usize;
            let (e, et, sk) = if acc != 0 {
                let mut nc = checkers.clone();
                if canon.at_insert[q as usize] != DEAD {
                    nc.push(canon.at_insert[q as usize]);
                }
                nc.sort_unstable();
                nc.dedup();
                let id = intern(&mut lx, &mut ids, (q0, nc, true), limit)?;
                (id, acc_emit[acc], acc_skip[acc])
            } else {
                (LDEAD, 0, false)
            };
            lx.emit.resize(l + 1, LDEAD);
            lx.emit_terms.resize(l + 1, 0);
            lx.skippable.resize(l + 1, false);
            lx.emit[l] = e;
            lx.emit_terms[l] = et;
            lx.skippable[l] = sk;
        }
        lx.compute_hole_closures();
        lx.compute_dominators();
        lx.compute_min_lens();
        Ok(lx)
    }

    /// Fills `min_len`: breadth-first over the terminal DFA, a terminal's
    /// shortest lexeme ends at the first depth where a state accepts it.
    fn compute_min_lens(&mut self) {
        let d = &self.dfa;
        let k = d.n_classes;
        let mut min_len = vec![u32::MAX; self.n_terms];
        let mut depth = vec![u32::MAX; d.len()];
        let mut queue = std::collections::VecDeque::from([d.start()]);
        depth[d.start() as usize] = 0;
        while let Some(s) = queue.pop_front() {
            let ds = depth[s as usize];
            for &t in d.tags(s) {
                let m = &mut min_len[t as usize];
                *m = (*m).min(ds);
            }
            for c in 0..k {
                let n = d.trans[s as usize * k + c];
                if n != DEAD && depth[n as usize] == u32::MAX {
                    depth[n as usize] = ds + 1;
                    queue.push_back(n);
                }
            }
        }
        self.min_len = min_len;
    }

    /// Fills `hole_closure` by a fixpoint over the successor graph, visiting
    /// states in reverse breadth-first order so most states settle in one pass.
    fn compute_hole_closures(&mut self) {
        let n = self.states.len();
        let w = n.div_ceil(64);
        let k = self.dfa.n_classes;
        let mut clo = vec![0u64; n * w];
        for l in 1..n {
            clo[l * w + l / 64] |= 1 << (l % 64);
        }
        let mut succ: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (l, ss) in succ.iter_mut().enumerate().skip(1) {
            for c in 0..k {
                let t = self.step[l * k + c];
                if t != LDEAD {
                    ss.push(t);
                }
            }
            if self.skippable[l] && self.emit[l] != LDEAD {
                ss.push(self.emit[l]);
            }
            ss.sort_unstable();
            ss.dedup();
        }
        let mut changed = true;
        let mut tmp = vec![0u64; w];
        while changed {
            changed = false;
            for l in (1..n).rev() {
                tmp.copy_from_slice(&clo[l * w..(l + 1) * w]);
                for &t in &succ[l] {
                    let t = t as usize;
                    for i in 0..w {
                        tmp[i] |= clo[t * w + i];
                    }
                }
                if tmp[..] != clo[l * w..(l + 1) * w] {
                    clo[l * w..(l + 1) * w].copy_from_slice(&tmp);
                    changed = true;
                }
            }
        }
        self.words = w;
        self.hole_closure = clo;
        let mut live_on = vec![0u64; 256 * w];
        let mut fresh_set = vec![0u64; w];
        let mut emitting_set = vec![0u64; w];
        for l in 1..n {
            if self.emit[l] != LDEAD && !self.term_sets[self.emit_terms[l] as usize].is_empty() {
                emitting_set[l / 64] |= 1 << (l % 64);
            }
            for b in 0..256usize {
                let c = self.dfa.class_of[b] as usize;
                if self.step[l * k + c] != LDEAD {
                    live_on[b * w + l / 64] |= 1 << (l % 64);
                }
            }
            if self.states[l].2 {
                fresh_set[l / 64] |= 1 << (l % 64);
            }
        }
        self.live_on = live_on;
        self.fresh_set = fresh_set;
        self.emitting_set = emitting_set;
    }

    /// Fills `dominators` (see the field), grouping states by lexeme state
    /// and freshness. Checkers only ever kill paths, so fewer checkers accept
    /// more continuations: a set of alternatives may drop a dominated state.
    fn compute_dominators(&mut self) {
        let n = self.states.len();
        let mut groups: HashMap<(u32, bool), Vec<u32>> = HashMap::new();
        for l in 1..n {
            let (q, _, fresh) = &self.states[l];
            groups.entry((*q, *fresh)).or_default().push(l as u32);
        }
        let mut dom = vec![Vec::new(); n];
        let mut keys: Vec<&(u32, bool)> = groups.keys().collect();
        keys.sort_unstable();
        for key in keys {
            let members = &groups[key];
            if members.len() < 2 || members.len() > 512 {
                continue; // nothing to compare, or too costly to bother
            }
            for &a in members {
                let ca = &self.states[a as usize].1;
                for &b in members {
                    let cb = &self.states[b as usize].1;
                    if a != b
                        && cb.len() < ca.len()
                        && cb.iter().all(|x| ca.binary_search(x).is_ok())
                    {
                        dom[a as usize].push(b);
                    }
                }
            }
        }
        let mut set = vec![0u64; self.words];
        for (l, d) in dom.iter().enumerate() {
            if !d.is_empty() {
                set[l / 64] |= 1 << (l % 64);
            }
        }
        self.dominators = dom;
        self.dominated_set = set;
    }

    /// The L-states that survive reading byte `b`.
    #[inline]
    pub(crate) fn live_on(&self, b: u8) -> &[u64] {
        let w = self.words;
        &self.live_on[b as usize * w..(b as usize + 1) * w]
    }

    /// The hole closure of `l` as a bitset.
    #[inline]
    pub(crate) fn hole_closure(&self, l: u32) -> &[u64] {
        let w = self.words;
        &self.hole_closure[l as usize * w..(l as usize + 1) * w]
    }

    /// Terminals whose languages overlap, as `(a, b, a ⊆ b)` with `a < b` or,
    /// for a strict subset, `a` the smaller: a lexeme matching both may stand
    /// for either (for `a ⊆ b` — a keyword inside an identifier — this is the
    /// rewriting `b → b | a` of Mündler et al., done by the lexer). Sorted.
    pub fn overlaps(&self) -> Vec<(u32, u32, bool)> {
        let n = self.n_terms;
        // Reachable accepting sets of the union DFA (all of its states are reachable).
        let sets: Vec<&Vec<u32>> = (0..self.dfa.len() as u32)
            .map(|s| &self.dfa.accept_sets[self.dfa.accept[s as usize] as usize])
            .collect();
        let mut together = std::collections::BTreeSet::new();
        let mut alone = vec![false; n * n]; // alone[a * n + b]: a accepts somewhere b does not
        for set in &sets {
            for &a in set.iter() {
                for b in 0..n as u32 {
                    if set.binary_search(&b).is_err() {
                        alone[a as usize * n + b as usize] = true;
                    }
                }
                for &b in set.iter() {
                    if a < b {
                        together.insert((a, b));
                    }
                }
            }
        }
        together
            .into_iter()
            .map(|(a, b)| {
                let a_in_b = !alone[a as usize * n + b as usize];
                let b_in_a = !alone[b as usize * n + a as usize];
                if b_in_a && !a_in_b {
                    (b, a, true)
                } else {
                    (a, b, a_in_b)
                }
            })
            .collect()
    }

    /// Number of states of the lexer automaton.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Always false (the dead state exists).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }

    /// Number of terminals.
    pub fn n_terms(&self) -> usize {
        self.n_terms
    }

    /// Number of byte classes.
    pub(crate) fn n_classes(&self) -> usize {
        self.dfa.n_classes
    }

    /// The class of byte `b`: L-states step alike on bytes of one class.
    #[inline]
    pub(crate) fn class(&self, b: u8) -> usize {
        self.dfa.class_of[b as usize] as usize
    }

    /// Successor of L-state `l` on byte `b` (`LDEAD` if the path dies).
    #[inline]
    pub(crate) fn next(&self, l: u32, b: u8) -> u32 {
        self.step[l as usize * self.dfa.n_classes + self.dfa.class_of[b as usize] as usize]
    }

    /// Whether the lexeme in progress in L-state `l` can end here (as a
    /// terminal or skipped).
    #[inline]
    pub(crate) fn can_end(&self, l: u32) -> bool {
        self.emit[l as usize] != LDEAD
    }

    /// Whether the lexeme in progress in L-state `l` cannot go on with
    /// byte `b` (it must end, or be skipped, before `b`).
    #[inline]
    pub(crate) fn dies_on(&self, l: u32, b: u8) -> bool {
        self.next(l, b) == LDEAD
    }

    /// Successor of `l` on byte class `c`.
    #[inline]
    pub(crate) fn next_class(&self, l: u32, c: usize) -> u32 {
        self.step[l as usize * self.dfa.n_classes + c]
    }

    /// The terminals `l` may emit now.
    #[inline]
    pub(crate) fn emits(&self, l: u32) -> &[u32] {
        &self.term_sets[self.emit_terms[l as usize] as usize]
    }

    /// Whether `l` is between lexemes (nothing read of the current one).
    #[inline]
    pub(crate) fn is_fresh(&self, l: u32) -> bool {
        self.states[l as usize].2
    }
}

fn intern(
    lx: &mut Lexer,
    ids: &mut HashMap<(u32, Vec<u32>, bool), u32>,
    key: (u32, Vec<u32>, bool),
    limit: usize,
) -> Result<u32> {
    if let Some(&id) = ids.get(&key) {
        return Ok(id);
    }
    if lx.states.len() >= limit {
        return Err(Error::limit(
            Limit::LexerStates,
            limit as u64 + 1,
            limit as u64,
            format!("the maximal-munch lexer automaton needs more than {limit} states"),
        ));
    }
    let id = lx.states.len() as u32;
    ids.insert(key.clone(), id);
    lx.states.push(key);
    Ok(id)
}

/// Canonical names for munch checkers.
///
/// A checker only ever asks "does some continuation of the bytes read so far
/// reach an accepting state?", so two DFA states are interchangeable as
/// checkers when they are equivalent for acceptance by *any* terminal
/// (Myhill–Nerode for the coarser partition accepting / not accepting), and,
/// at insertion (where the state's own acceptance is never consulted), when
/// their successors on every byte are. Without this, every keyword's final
/// state would be a checker of its own and the lexer automaton, and each hole
/// of a partial output, would carry one copy per keyword.
struct CheckerCanon {
    /// Representative of a state's class, for a checker that has read bytes.
    after_step: Vec<u32>,
    /// Representative for a checker being inserted (a lexeme just ended).
    at_insert: Vec<u32>,
}

impl CheckerCanon {
    fn new(dfa: &ByteDfa) -> CheckerCanon {
        let n = dfa.len();
        let k = dfa.n_classes;
        let acc: Vec<u32> = (0..n as u32).map(|s| dfa.is_accepting(s) as u32).collect();
        let block = crate::automata::minimize::hopcroft(n, k, &dfa.trans, &acc);
        let mut rep = vec![u32::MAX; n];
        for (s, &b) in block.iter().enumerate() {
            if rep[b as usize] == u32::MAX {
                rep[b as usize] = s as u32;
            }
        }
        let dead_block = block[DEAD as usize] as usize;
        let after_step: Vec<u32> = (0..n)
            .map(|s| {
                if block[s] as usize == dead_block {
                    DEAD
                } else {
                    rep[block[s] as usize]
                }
            })
            .collect();
        let mut by_succ: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut at_insert = vec![DEAD; n];
        for s in 0..n {
            let key: Vec<u32> = (0..k)
                .map(|c| block[dfa.trans[s * k + c] as usize])
                .collect();
            if key.iter().all(|&b| b as usize == dead_block) {
                continue; // can never extend: no checker needed
            }
            at_insert[s] = *by_succ.entry(key).or_insert(s as u32);
        }
        CheckerCanon {
            after_step,
            at_insert,
        }
    }
}

/// Preference order for witness bytes: letters and digits, then space,
/// then other printable ASCII, then the rest.
fn byte_rank(b: u8) -> u8 {
    match b {
        b'a'..=b'z' => 0,
        b'0'..=b'9' => 1,
        b'A'..=b'Z' => 2,
        b' ' => 3,
        b'!'..=b'~' => 4,
        b'\n' => 5,
        0x80..=0xff => 6,
        _ => 7,
    }
}

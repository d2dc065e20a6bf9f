//! Dense DFAs over byte equivalence classes, built by the subset construction.
//!
//! State [`DEAD`] (0) is the sink: every DFA has it, it accepts nothing, and it
//! loops on every byte. Each state carries the sorted set of NFA tags
//! (terminals) that accept the word read so far. After [`ByteDfa::minimize`]
//! the states are numbered dead first, then breadth-first from the start in
//! byte order, so equal languages give identical DFAs in every process.

use super::minimize::hopcroft;
use super::nfa::{Nfa, StateId};
use crate::error::{Error, ErrorKind, Result};
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// The dead (sink) state of every [`ByteDfa`].
pub const DEAD: u32 = 0;

/// A dense DFA over bytes whose states carry sets of accepting tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ByteDfa {
    /// Byte → equivalence class.
    pub(crate) class_of: [u8; 256],
    /// Number of byte classes.
    pub(crate) n_classes: usize,
    /// `trans[s * n_classes + c]`.
    pub(crate) trans: Vec<u32>,
    /// Index into `accept_sets` per state (0 = the empty set).
    pub(crate) accept: Vec<u32>,
    /// Distinct accepting-tag sets, sorted tags; entry 0 is empty.
    pub(crate) accept_sets: Vec<Vec<u32>>,
    /// The start state.
    pub(crate) start: u32,
}

/// Default limit on the number of DFA states.
pub const DEFAULT_DFA_LIMIT: usize = 200_000;

impl ByteDfa {
    /// Determinises `nfa` by the subset construction.
    ///
    /// # Errors
    /// [`ErrorKind::SizeLimit`] if more than `limit` states are needed.
    pub fn from_nfa(nfa: &Nfa, limit: usize) -> Result<ByteDfa> {
        // Byte classes: boundaries of every range in the NFA.
        let mut boundary = [false; 257];
        boundary[0] = true;
        for st in &nfa.states {
            for &(lo, hi, _) in &st.ranges {
                boundary[lo as usize] = true;
                boundary[hi as usize + 1] = true;
            }
        }
        let mut class_of = [0u8; 256];
        let mut reps: Vec<u8> = Vec::new();
        let mut c: i32 = -1;
        for b in 0..256usize {
            if boundary[b] {
                c += 1;
                reps.push(b as u8);
            }
            class_of[b] = c as u8;
        }
        let k = reps.len();

        let mut accept_sets: Vec<Vec<u32>> = vec![Vec::new()];
        let mut accept_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        accept_ids.insert(Vec::new(), 0);
        let mut ids: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut sets: Vec<Vec<u32>> = vec![Vec::new()]; // dead
        ids.insert(Vec::new(), DEAD);
        let mut trans: Vec<u32> = vec![DEAD; k];
        let mut accept: Vec<u32> = vec![0];
        let mut stack: Vec<u32> = Vec::new();
        let mut seen: Vec<bool> = vec![false; nfa.states.len()];
        let start_set = closure(nfa, vec![nfa.start.0], &mut seen, &mut stack);
        let mut queue: Vec<u32> = Vec::new();
        let start = intern(start_set, &mut ids, &mut sets, &mut queue, limit)?;
        let mut nexts: Vec<Vec<u32>> = vec![Vec::new(); k];
        let mut head = 0;
        while head < queue.len() {
            let s = queue[head];
            head += 1;
            let set = sets[s as usize].clone();
            // Accepting tags.
            let mut tags: Vec<u32> = set
                .iter()
                .filter_map(|&q| nfa.states[q as usize].tag)
                .collect();
            tags.sort_unstable();
            tags.dedup();
            ensure_len(&mut accept, s as usize + 1);
            accept[s as usize] = accept_id(tags, &mut accept_ids, &mut accept_sets);
            ensure_len(&mut trans, (s as usize + 1) * k);
            // The targets per class, range by range (a range covers whole
            // classes): linear in the edges, not in edges × classes.
            for &q in &set {
                for &(lo, hi, to) in &nfa.states[q as usize].ranges {
                    let (a, b) = (class_of[lo as usize], class_of[hi as usize]);
                    for next in &mut nexts[a as usize..=b as usize] {
                        next.push(to.0);
                    }
                }
            }
            for (ci, next) in nexts.iter_mut().enumerate() {
                let t = if next.is_empty() {
                    DEAD
                } else {
                    let next = closure(nfa, std::mem::take(next), &mut seen, &mut stack);
                    intern(next, &mut ids, &mut sets, &mut queue, limit)?
                };
                trans[s as usize * k + ci] = t;
            }
        }
        let tables = (trans, accept, accept_sets);
        Ok(ByteDfa::padded(sets.len(), (class_of, k), tables, start))
    }

    /// Builds the minimal DFA of the union of `patterns` (tag `i` = pattern
    /// `i`), with at most [`DEFAULT_DFA_LIMIT`] states before minimisation.
    ///
    /// # Errors
    /// As [`ByteDfa::from_patterns_limit`].
    pub fn from_patterns(patterns: &[&str]) -> Result<ByteDfa> {
        ByteDfa::from_patterns_limit(patterns, DEFAULT_DFA_LIMIT)
    }

    /// [`ByteDfa::from_patterns`] with a limit on the states built before
    /// minimisation (per pattern, and for their product).
    ///
    /// Each pattern is determinised and minimised on its own, then the
    /// minimal DFAs run in parallel ([`ByteDfa::product`]). Determinising
    /// the union NFA in one subset construction instead builds states that
    /// differ only in *which* of several equivalent NFA states a pattern is
    /// in: a JSON key terminal that excludes `n` declared names has one copy
    /// of "any further characters" per trie node it may leave the names at,
    /// and next to a length-bounded string terminal `{0,45}` every copy
    /// times every count is a distinct subset. On the maskbench schemas
    /// that made the subset DFA 30–100 times its minimal size (61,625
    /// states for 735; see `src/grammar/schema/mod.rs`, *Lexer size*); the
    /// product of minimal DFAs never has more states than the subset DFA
    /// (a subset determines each pattern's residual language) and here has
    /// about as many as the minimal union.
    ///
    /// # Errors
    /// As [`Nfa::union`]; [`ErrorKind::SizeLimit`] if a pattern or the
    /// product needs more than `limit` states.
    pub fn from_patterns_limit(patterns: &[&str], limit: usize) -> Result<ByteDfa> {
        ByteDfa::from_patterns_with(patterns, limit, &mut HashMap::new())
    }

    /// [`ByteDfa::from_patterns_limit`], taking the minimal DFA of each
    /// pattern from `parts` (by pattern text) and adding those it builds:
    /// for callers that build the union of similar pattern lists.
    ///
    /// # Errors
    /// As [`ByteDfa::from_patterns_limit`].
    pub fn from_patterns_with(
        patterns: &[&str],
        limit: usize,
        parts: &mut HashMap<String, ByteDfa>,
    ) -> Result<ByteDfa> {
        let mut distinct: Vec<&str> = Vec::new();
        let mut part_of: HashMap<&str, u32> = HashMap::new();
        let mut which: Vec<u32> = Vec::with_capacity(patterns.len());
        for &p in patterns {
            let i = match part_of.get(p) {
                Some(&i) => i,
                None => {
                    ByteDfa::pattern_part(p, limit, parts)?;
                    distinct.push(p);
                    part_of.insert(p, distinct.len() as u32 - 1);
                    distinct.len() as u32 - 1
                }
            };
            which.push(i);
        }
        let refs: Vec<&ByteDfa> = distinct.iter().filter_map(|&p| parts.get(p)).collect();
        let mut dfa = ByteDfa::product(&refs, limit)?;
        if which.iter().enumerate().any(|(i, &w)| w as usize != i) {
            // Repeated patterns: part `w` accepts for every pattern `i` with
            // `which[i] == w`.
            for set in &mut dfa.accept_sets {
                let mut tags: Vec<u32> = (0..which.len() as u32)
                    .filter(|&i| set.binary_search(&which[i as usize]).is_ok())
                    .collect();
                tags.sort_unstable();
                *set = tags;
            }
        }
        Ok(dfa.minimize())
    }

    /// The minimal DFA of `pattern` alone, from `parts` or built there.
    ///
    /// # Errors
    /// As [`Nfa::union`]; [`ErrorKind::SizeLimit`] past `limit` states.
    pub fn pattern_part<'p>(
        pattern: &str,
        limit: usize,
        parts: &'p mut HashMap<String, ByteDfa>,
    ) -> Result<&'p ByteDfa> {
        match parts.entry(pattern.to_string()) {
            Entry::Occupied(e) => Ok(e.into_mut()),
            Entry::Vacant(e) => {
                let nfa = Nfa::union(&[pattern], super::nfa::DEFAULT_NFA_LIMIT)?;
                Ok(e.insert(ByteDfa::from_nfa(&nfa, limit)?.minimize()))
            }
        }
    }

    /// The DFA running `parts` in parallel: it accepts a word with tag `i`
    /// when `parts[i]` accepts it (with any tag). Not minimised.
    ///
    /// # Errors
    /// [`ErrorKind::SizeLimit`] if more than `limit` states are needed.
    pub fn product(parts: &[&ByteDfa], limit: usize) -> Result<ByteDfa> {
        // Byte classes: the common refinement of the parts' classes (each
        // part's classes are runs of bytes).
        let mut class_of = [0u8; 256];
        let mut reps: Vec<u8> = vec![0];
        for (b, class) in class_of.iter_mut().enumerate().skip(1) {
            if parts.iter().any(|p| p.class_of[b] != p.class_of[b - 1]) {
                reps.push(b as u8);
            }
            *class = (reps.len() - 1) as u8;
        }
        let k = reps.len();
        // A product state: the live parts and their states, `(i << 32) | q`,
        // sorted by part.
        let mut ids: crate::hash::FxMap<Vec<u64>, u32> = Default::default();
        let mut sets: Vec<Vec<u64>> = vec![Vec::new()];
        ids.insert(Vec::new(), DEAD);
        let mut accept_sets: Vec<Vec<u32>> = vec![Vec::new()];
        let mut accept_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        accept_ids.insert(Vec::new(), 0);
        let mut trans: Vec<u32> = vec![DEAD; k];
        let mut accept: Vec<u32> = vec![0];
        let start_set: Vec<u64> = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| p.start != DEAD)
            .map(|(i, p)| ((i as u64) << 32) | p.start as u64)
            .collect();
        let mut queue: Vec<u32> = Vec::new();
        let start = intern(start_set, &mut ids, &mut sets, &mut queue, limit)?;
        let mut head = 0;
        let mut next: Vec<u64> = Vec::new();
        while head < queue.len() {
            let s = queue[head];
            head += 1;
            let set = std::mem::take(&mut sets[s as usize]);
            let tags: Vec<u32> = set
                .iter()
                .filter(|&&x| parts[(x >> 32) as usize].is_accepting(x as u32))
                .map(|&x| (x >> 32) as u32)
                .collect();
            ensure_len(&mut accept, s as usize + 1);
            accept[s as usize] = accept_id(tags, &mut accept_ids, &mut accept_sets);
            ensure_len(&mut trans, (s as usize + 1) * k);
            for (ci, &rep) in reps.iter().enumerate() {
                next.clear();
                for &x in &set {
                    let t = parts[(x >> 32) as usize].next(x as u32, rep);
                    if t != DEAD {
                        next.push((x & !0xFFFF_FFFF) | t as u64);
                    }
                }
                let t = match ids.get(next.as_slice()) {
                    Some(&t) => t,
                    None => intern(next.clone(), &mut ids, &mut sets, &mut queue, limit)?,
                };
                trans[s as usize * k + ci] = t;
            }
            sets[s as usize] = set;
        }
        let tables = (trans, accept, accept_sets);
        Ok(ByteDfa::padded(sets.len(), (class_of, k), tables, start))
    }

    /// The DFA of `n` states over `classes` (byte → class, number of
    /// classes), its transition and accept tables padded to `n` states.
    /// `tables`: transitions, accept ids, accept sets.
    fn padded(
        n: usize,
        classes: ([u8; 256], usize),
        tables: (Vec<u32>, Vec<u32>, Vec<Vec<u32>>),
        start: u32,
    ) -> ByteDfa {
        let (class_of, k) = classes;
        let (mut trans, mut accept, accept_sets) = tables;
        ensure_len(&mut trans, n * k);
        ensure_len(&mut accept, n);
        ByteDfa {
            class_of,
            n_classes: k,
            trans,
            accept,
            accept_sets,
            start,
        }
    }

    /// Number of states (including [`DEAD`]).
    pub fn len(&self) -> usize {
        self.accept.len()
    }

    /// Always false: every DFA has the dead state.
    pub fn is_empty(&self) -> bool {
        self.accept.is_empty()
    }

    /// The start state.
    pub fn start(&self) -> u32 {
        self.start
    }

    /// Successor of `s` on byte `b`.
    #[inline]
    pub fn next(&self, s: u32, b: u8) -> u32 {
        self.trans[s as usize * self.n_classes + self.class_of[b as usize] as usize]
    }

    /// The tags accepting at `s` (sorted; empty if `s` is not accepting).
    #[inline]
    pub fn tags(&self, s: u32) -> &[u32] {
        &self.accept_sets[self.accept[s as usize] as usize]
    }

    /// Whether `s` accepts for at least one tag.
    #[inline]
    pub fn is_accepting(&self, s: u32) -> bool {
        self.accept[s as usize] != 0
    }

    /// Runs the DFA on `word` from the start; the tags accepting it.
    pub fn matches(&self, word: &[u8]) -> &[u32] {
        let mut s = self.start;
        for &b in word {
            s = self.next(s, b);
        }
        self.tags(s)
    }

    /// The minimal equivalent DFA (Hopcroft), canonically numbered.
    pub fn minimize(&self) -> ByteDfa {
        let n = self.len();
        let k = self.n_classes;
        let block = hopcroft(n, k, &self.trans, &self.accept);
        let (order, _) =
            canonical_order(self.start, block[DEAD as usize], n, k, &self.trans, &block);
        // order: new id -> old representative state.
        let mut new_id = vec![u32::MAX; n];
        let nb = block.iter().copied().max().map_or(0, |m| m as usize + 1);
        let mut block_new = vec![u32::MAX; nb];
        for (i, &rep) in order.iter().enumerate() {
            block_new[block[rep as usize] as usize] = i as u32;
        }
        for s in 0..n {
            new_id[s] = block_new[block[s] as usize];
        }
        let m = order.len();
        let mut trans = vec![DEAD; m * k];
        let mut accept = vec![0u32; m];
        for (i, &rep) in order.iter().enumerate() {
            accept[i] = self.accept[rep as usize];
            for c in 0..k {
                let t = new_id[self.trans[rep as usize * k + c] as usize];
                trans[i * k + c] = if t == u32::MAX { DEAD } else { t };
            }
        }
        ByteDfa {
            class_of: self.class_of,
            n_classes: k,
            trans,
            accept,
            accept_sets: self.accept_sets.clone(),
            start: new_id[self.start as usize],
        }
    }
}

/// Breadth-first order of blocks from `start` (the dead block first): returns a
/// representative old state per new id. Unreachable blocks are dropped.
fn canonical_order(
    start: u32,
    dead_block: u32,
    n: usize,
    k: usize,
    trans: &[u32],
    block: &[u32],
) -> (Vec<u32>, usize) {
    let nb = block.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut rep = vec![u32::MAX; nb];
    for s in (0..n).rev() {
        rep[block[s] as usize] = s as u32;
    }
    let mut visited = vec![false; nb];
    let mut order = vec![rep[dead_block as usize]];
    visited[dead_block as usize] = true;
    let sb = block[start as usize] as usize;
    if !visited[sb] {
        visited[sb] = true;
        order.push(rep[sb]);
    }
    let mut head = 0;
    while head < order.len() {
        let s = order[head] as usize;
        head += 1;
        for c in 0..k {
            let b = block[trans[s * k + c] as usize] as usize;
            if !visited[b] {
                visited[b] = true;
                order.push(rep[b]);
            }
        }
    }
    let len = order.len();
    (order, len)
}

/// The index of the accepting-tag set `tags` in `sets`, added if new.
fn accept_id(tags: Vec<u32>, ids: &mut HashMap<Vec<u32>, u32>, sets: &mut Vec<Vec<u32>>) -> u32 {
    if let Some(&a) = ids.get(&tags) {
        return a;
    }
    let a = sets.len() as u32;
    ids.insert(tags.clone(), a);
    sets.push(tags);
    a
}

fn ensure_len(v: &mut Vec<u32>, len: usize) {
    if v.len() < len {
        v.resize(len, DEAD);
    }
}

fn closure(nfa: &Nfa, mut set: Vec<u32>, seen: &mut [bool], stack: &mut Vec<u32>) -> Vec<u32> {
    stack.clear();
    for &q in &set {
        if !seen[q as usize] {
            seen[q as usize] = true;
            stack.push(q);
        }
    }
    set.clear();
    while let Some(q) = stack.pop() {
        set.push(q);
        for &StateId(t) in &nfa.states[q as usize].eps {
            if !seen[t as usize] {
                seen[t as usize] = true;
                stack.push(t);
            }
        }
    }
    for &q in &set {
        seen[q as usize] = false;
    }
    // Keep only states that matter: with byte edges or a tag.
    set.retain(|&q| {
        let st = &nfa.states[q as usize];
        !st.ranges.is_empty() || st.tag.is_some()
    });
    set.sort_unstable();
    set
}

fn intern<T: Eq + std::hash::Hash + Clone, H: std::hash::BuildHasher>(
    set: Vec<T>,
    ids: &mut HashMap<Vec<T>, u32, H>,
    sets: &mut Vec<Vec<T>>,
    queue: &mut Vec<u32>,
    limit: usize,
) -> Result<u32> {
    if let Some(&id) = ids.get(&set) {
        return Ok(id);
    }
    if sets.len() >= limit {
        return Err(Error::new(
            ErrorKind::SizeLimit,
            format!("terminal automaton needs more than {limit} DFA states"),
        ));
    }
    let id = sets.len() as u32;
    ids.insert(set.clone(), id);
    sets.push(set);
    queue.push(id);
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_tags() {
        let d = ByteDfa::from_patterns(&["while", "[a-z]+", "[0-9]+"]).unwrap();
        assert_eq!(d.matches(b"while"), &[0, 1]);
        assert_eq!(d.matches(b"whil"), &[1]);
        assert_eq!(d.matches(b"123"), &[2]);
        assert!(d.matches(b"").is_empty());
        assert!(d.matches(b"1a").is_empty());
    }

    #[test]
    fn utf8_classes() {
        let d = ByteDfa::from_patterns(&["[^\"]+", "é"]).unwrap();
        assert_eq!(d.matches("é".as_bytes()), &[0, 1]);
        assert_eq!(d.matches("aé".as_bytes()), &[0]);
        assert!(d.matches(b"\xff").is_empty());
        assert!(d.matches(&"é".as_bytes()[..1]).is_empty());
    }

    #[test]
    fn minimal_is_small() {
        let d = ByteDfa::from_patterns(&["(a|b)*abb"]).unwrap();
        // 4 live states + dead.
        assert_eq!(d.len(), 5);
    }

    #[test]
    fn product_of_minimal_dfas_is_the_union_dfa() {
        // Pattern 0 has a copy of `[a-z]*` per first letter; next to a
        // counter the subset construction keeps every copy × every count
        // apart, the product of the minimal DFAs does not.
        let copies: Vec<String> = ('a'..='z').map(|c| format!("{c}[a-z]*")).collect();
        let p0 = format!("x(?:{})", copies.join("|"));
        let patterns = [p0.as_str(), "x[a-z]{0,40}", "xyz", "[0-9]+"];
        let nfa = Nfa::union(&patterns, super::super::nfa::DEFAULT_NFA_LIMIT).unwrap();
        let subset = ByteDfa::from_nfa(&nfa, DEFAULT_DFA_LIMIT).unwrap();
        let parts: Vec<ByteDfa> = patterns
            .iter()
            .map(|p| ByteDfa::from_patterns(&[p]).unwrap())
            .collect();
        let refs: Vec<&ByteDfa> = parts.iter().collect();
        let product = ByteDfa::product(&refs, DEFAULT_DFA_LIMIT).unwrap();
        assert!(
            product.len() * 10 < subset.len(),
            "product {} subset {}",
            product.len(),
            subset.len()
        );
        // Same language and tags: the canonical minimal DFAs are identical.
        assert_eq!(
            ByteDfa::from_patterns(&patterns).unwrap(),
            subset.minimize()
        );
        let d = ByteDfa::from_patterns(&patterns).unwrap();
        assert_eq!(d.matches(b"xyz"), &[0, 1, 2]);
        assert_eq!(d.matches(b"x"), &[1]);
        assert!(d.matches(b"x1").is_empty());
        // Repeated patterns keep one tag each.
        let d = ByteDfa::from_patterns(&["ab", "[a-z]+", "ab"]).unwrap();
        assert_eq!(d.matches(b"ab"), &[0, 1, 2]);
        assert_eq!(d.matches(b"abc"), &[1]);
    }

    #[test]
    fn product_past_the_limit_is_a_size_error() {
        let parts: Vec<ByteDfa> = ["[ab]*a[ab]{6}", "[ab]*b[ab]{6}"]
            .iter()
            .map(|p| ByteDfa::from_patterns(&[p]).unwrap())
            .collect();
        let refs: Vec<&ByteDfa> = parts.iter().collect();
        let e = ByteDfa::product(&refs, 100).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SizeLimit);
        assert!(ByteDfa::product(&refs, 1000).is_ok());
    }

    #[test]
    fn look_around_is_an_error() {
        let e = ByteDfa::from_patterns(&["^a"]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Regex);
    }
}

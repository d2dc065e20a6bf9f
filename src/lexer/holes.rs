//! The per-grammar cache of hole automata.
//!
//! Inside a hole every byte is allowed, so what a hole can do from a set of
//! lexer states depends on the grammar alone, not on the partial output: the
//! closed sets of lexer states (bitsets) and their transitions on terminals
//! form one DFA per grammar, discovered lazily as checks need it and shared by
//! all later checks. Only the *exits* of a hole (which lexer states survive the
//! bytes after it) depend on the partial output.
//!
//! Set ids depend on the order in which checks discover them; they are used
//! only as identities, never to order anything a check returns, so results do
//! not depend on a process's history.

use super::build::{Lexer, LDEAD};
use crate::hash::FxMap;
use std::sync::{Arc, Mutex, PoisonError};

/// Cached transitions of one set: `(terminal, next set id)`.
type Trans = Option<Arc<Vec<(u32, u32)>>>;

/// Above this many cached sets the cache starts afresh (memory bound).
const MAX_SETS: usize = 1 << 16;

/// Lazily built DFA over terminals of closed lexer-state sets inside holes.
#[derive(Debug, Default)]
pub struct HoleCache {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    ids: FxMap<Arc<Vec<u64>>, u32>,
    sets: Vec<Arc<Vec<u64>>>,
    trans: Vec<Trans>,
}

impl Clone for HoleCache {
    /// A clone starts with an empty cache (it is only an accelerator).
    fn clone(&self) -> HoleCache {
        HoleCache::default()
    }
}

impl Inner {
    fn intern(&mut self, bits: Vec<u64>) -> u32 {
        if let Some(&id) = self.ids.get(&bits) {
            return id;
        }
        if self.sets.len() >= MAX_SETS {
            *self = Inner::default();
        }
        let id = self.sets.len() as u32;
        let bits = Arc::new(bits);
        self.ids.insert(bits.clone(), id);
        self.sets.push(bits);
        self.trans.push(None);
        id
    }
}

/// A handle on one check's view of the cache: set ids stay valid for the
/// whole check even if the shared cache is reset meanwhile.
pub(crate) struct HoleView<'a> {
    cache: &'a HoleCache,
    lexer: &'a Lexer,
    /// Keyed by (what follows the hole, masked set): the mask, and so the
    /// successors' masks, depend on the byte after the hole.
    local_ids: FxMap<(u16, Arc<Vec<u64>>), u32>,
    local_sets: Vec<(u16, Arc<Vec<u64>>)>,
    local_trans: Vec<Trans>,
}

impl<'a> HoleView<'a> {
    pub(crate) fn new(cache: &'a HoleCache, lexer: &'a Lexer) -> HoleView<'a> {
        HoleView {
            cache,
            lexer,
            local_ids: FxMap::default(),
            local_sets: Vec::new(),
            local_trans: Vec::new(),
        }
    }

    /// The id of the set of a hole followed by `follow` (a byte, or 256 for
    /// the end of the text), whose surviving lexer states are `keep` (valid
    /// for this view). Only the states that can end a lexeme or leave the
    /// hole are kept: the others cannot influence anything, and dropping them
    /// makes sets that differ only in, say, the last lexeme's munch checker
    /// (which the next byte kills anyway) one state.
    pub(crate) fn intern(&mut self, mut bits: Vec<u64>, follow: u16, keep: &[u64]) -> u32 {
        for ((b, e), k) in bits.iter_mut().zip(&self.lexer.emitting_set).zip(keep) {
            *b &= e | k;
        }
        // Drop alternatives another member subsumes (fewer checkers).
        let full = bits.clone();
        let candidates: Vec<u64> = full
            .iter()
            .zip(&self.lexer.dominated_set)
            .map(|(b, d)| b & d)
            .collect();
        for l in super::tokens::ones(&candidates) {
            let has = |d: u32| full[d as usize / 64] & (1 << (d % 64)) != 0;
            if self.lexer.dominators[l as usize].iter().any(|&d| has(d)) {
                bits[l as usize / 64] &= !(1 << (l % 64));
            }
        }
        let key = (follow, Arc::new(bits));
        if let Some(&id) = self.local_ids.get(&key) {
            return id;
        }
        let id = self.local_sets.len() as u32;
        self.local_ids.insert(key.clone(), id);
        self.local_sets.push(key);
        self.local_trans.push(None);
        id
    }

    /// The set with id `id`.
    pub(crate) fn bits(&self, id: u32) -> Arc<Vec<u64>> {
        self.local_sets[id as usize].1.clone()
    }

    /// Transitions of set `id`: `(terminal, next set id)`, sorted by terminal;
    /// `keep` as given when `id` was interned (the hole does not change).
    pub(crate) fn transitions(&mut self, id: u32, keep: &[u64]) -> Arc<Vec<(u32, u32)>> {
        if let Some(t) = &self.local_trans[id as usize] {
            return t.clone();
        }
        let (follow, bits) = self.local_sets[id as usize].clone();
        // Shared cache: transitions as sets, translated to local ids.
        let shared: Vec<(u32, Arc<Vec<u64>>)> = {
            let mut inner = self
                .cache
                .inner
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let gid = inner.intern((*bits).clone());
            let t = match &inner.trans[gid as usize] {
                Some(t) => t.clone(),
                None => {
                    let computed = compute(self.lexer, &bits);
                    let t: Vec<(u32, u32)> = computed
                        .into_iter()
                        .map(|(term, set)| (term, inner.intern(set)))
                        .collect();
                    let t = Arc::new(t);
                    // `intern` may have reset the cache; re-intern this set.
                    let gid = inner.intern((*bits).clone());
                    inner.trans[gid as usize] = Some(t.clone());
                    t
                }
            };
            t.iter()
                .map(|&(term, g)| (term, inner.sets[g as usize].clone()))
                .collect()
        };
        let local: Vec<(u32, u32)> = shared
            .into_iter()
            .map(|(term, set)| (term, self.intern((*set).clone(), follow, keep)))
            .collect();
        let local = Arc::new(local);
        self.local_trans[id as usize] = Some(local.clone());
        local
    }
}

/// For each terminal some state of `bits` can end a lexeme with: the closed
/// set reached (the hole closures of the fresh states after the emission).
fn compute(lexer: &Lexer, bits: &[u64]) -> Vec<(u32, Vec<u64>)> {
    let w = lexer.words;
    let mut out: Vec<(u32, Vec<u64>)> = Vec::new();
    let mut by_term: FxMap<u32, usize> = FxMap::default();
    for l in super::tokens::ones(bits) {
        let e = lexer.emit[l as usize];
        if e == LDEAD {
            continue;
        }
        let clo = lexer.hole_closure(e);
        for &t in lexer.emits(l) {
            let i = *by_term.entry(t).or_insert_with(|| {
                out.push((t, vec![0u64; w]));
                out.len() - 1
            });
            for (x, c) in out[i].1.iter_mut().zip(clo) {
                *x |= c;
            }
        }
    }
    out.sort_unstable_by_key(|e| e.0);
    out
}

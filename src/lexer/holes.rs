//! The per-grammar cache of hole automata.
//!
//! Inside a hole every byte is allowed, so what a hole can do from a set of
//! lexer states depends on the grammar alone, not on the partial output: the
//! closed sets of lexer states (bitsets) and their transitions on terminals
//! form one DFA per grammar, discovered lazily as checks need it and shared by
//! all later checks. Only the *exits* of a hole (which lexer states survive the
//! bytes after it) depend on the partial output, and through them only on the
//! byte that follows the hole: so the transitions as a hole followed by a
//! given byte sees them (targets masked to the states that can end a lexeme
//! or survive that byte) are cached too, keyed by (set, byte), and a check
//! maps them to its own ids with one integer-keyed lookup per target.
//!
//! Set ids depend on the order in which checks discover them; they are used
//! only as identities, never to order anything a check returns, so results do
//! not depend on a process's history.

use super::build::{Lexer, LDEAD};
use crate::hash::FxMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// Transitions of one set: `(terminal, next set id)`, sorted.
type Edges = Vec<(u32, u32)>;

/// Cached transitions of one set.
type Trans = Option<Arc<Edges>>;

/// Above this many cached sets the cache starts afresh (memory bound).
const MAX_SETS: usize = 1 << 16;

/// Lazily built DFA over terminals of closed lexer-state sets inside holes.
#[derive(Debug)]
pub struct HoleCache {
    inner: Mutex<Inner>,
    /// Unique per cache made in this process (a clone gets its own), so a
    /// thread's kept view ([`HoleView`]) is only reused with its cache.
    uid: u64,
}

/// Source of [`HoleCache::uid`]s.
static UIDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Default for HoleCache {
    fn default() -> HoleCache {
        HoleCache::with_max_sets(MAX_SETS)
    }
}

impl HoleCache {
    /// A cache that starts afresh past `max_sets` sets (tests use a small
    /// bound to exercise that).
    pub(crate) fn with_max_sets(max_sets: usize) -> HoleCache {
        HoleCache {
            inner: Mutex::new(Inner {
                max_sets,
                ..Inner::default()
            }),
            uid: UIDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }
}

#[derive(Debug, Default)]
struct Inner {
    ids: FxMap<Arc<[u64]>, u32>,
    sets: Vec<Arc<[u64]>>,
    trans: Vec<Trans>,
    /// Transitions of a set *as a hole followed by a byte sees them*:
    /// keyed by (set id, what follows the hole), targets masked for that
    /// byte (see [`HoleView::intern`]). Every check used to redo this
    /// masking per hole state and terminal: a tenth of a C++ check.
    masked: FxMap<(u32, u16), Arc<Edges>>,
    /// Bumped when the cache starts afresh: ids of an older generation
    /// name other sets.
    generation: u64,
    /// Sets (and masked transition lists) kept before starting afresh.
    max_sets: usize,
}

impl Clone for HoleCache {
    /// A clone starts with an empty cache (it is only an accelerator).
    fn clone(&self) -> HoleCache {
        let max_sets = self
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .max_sets;
        HoleCache::with_max_sets(max_sets)
    }
}

impl Inner {
    /// Starts afresh if fewer than `room` new sets would pass the bound:
    /// called before each locked operation with `room` at least what it
    /// may add, so ids never change within one.
    fn make_room(&mut self, room: usize) {
        if self.sets.len().saturating_add(room) > self.max_sets
            || self.masked.len() >= self.max_sets
        {
            *self = Inner {
                generation: self.generation + 1,
                max_sets: self.max_sets,
                ..Inner::default()
            };
        }
    }

    fn intern(&mut self, bits: &[u64]) -> u32 {
        if let Some(&id) = self.ids.get(bits) {
            return id;
        }
        let id = self.sets.len() as u32;
        let bits: Arc<[u64]> = Arc::from(bits);
        self.ids.insert(bits.clone(), id);
        self.sets.push(bits);
        self.trans.push(None);
        id
    }

    /// The transitions of set `gid` (computed once per grammar); adds at
    /// most one set per terminal.
    fn trans_of(&mut self, lexer: &Lexer, gid: u32) -> Arc<Vec<(u32, u32)>> {
        if let Some(t) = &self.trans[gid as usize] {
            return t.clone();
        }
        let bits = self.sets[gid as usize].clone();
        let t: Vec<(u32, u32)> = compute(lexer, &bits)
            .into_iter()
            .map(|(term, set)| (term, self.intern(&set)))
            .collect();
        let t = Arc::new(t);
        self.trans[gid as usize] = Some(t.clone());
        t
    }
}

/// Keeps of `bits` only the lexer states that can end a lexeme or survive
/// what follows the hole (`keep`), minus those another member dominates
/// (see [`HoleView::intern`]).
pub(crate) fn mask(lexer: &Lexer, bits: &mut [u64], keep: &[u64]) {
    for ((b, e), k) in bits.iter_mut().zip(&lexer.emitting_set).zip(keep) {
        *b &= e | k;
    }
    let full = Bits::from_slice(bits);
    let has = |d: u32| full[d as usize / 64] & (1 << (d % 64)) != 0;
    for (i, (&w, &d)) in full.iter().zip(&lexer.dominated_set).enumerate() {
        let mut c = w & d;
        while c != 0 {
            let l = i as u32 * 64 + c.trailing_zeros();
            c &= c - 1;
            if lexer.dominators[l as usize].iter().any(|&d| has(d)) {
                bits[l as usize / 64] &= !(1 << (l % 64));
            }
        }
    }
}

/// A lexer-state bitset on the stack (up to 1,024 states; a copy made while
/// masking or interning, not kept).
type Bits = smallvec::SmallVec<[u64; 16]>;

/// A handle on one check's view of the cache: set ids stay valid for the
/// whole check even if the shared cache is reset meanwhile.
///
/// What a view learns (its sets and their transitions in its own ids) is
/// kept on the thread when it is dropped and taken up by the next view of
/// the same cache there, so a thread's later checks find the sets and
/// transitions of their holes without locking the shared cache: on C++
/// canvases, whose holes nearly all have sets seen before, asking the
/// shared cache was a fifth of a check after a model's forward pass had
/// evicted it. Local ids are only identities within an automaton, so a
/// view's history changes no answer.
pub(crate) struct HoleView<'a> {
    cache: &'a HoleCache,
    lexer: &'a Lexer,
    local: Local,
}

/// A view's own ids, kept per thread between checks (see [`HoleView`]).
#[derive(Default)]
struct Local {
    /// The [`HoleCache::uid`] of the cache these ids are of.
    cache: u64,
    /// Keyed by (what follows the hole, shared id of the masked set): the
    /// mask, and so the successors' masks, depend on the byte after the
    /// hole. Valid for the shared cache's `generation`.
    ids: FxMap<(u16, u32), u32>,
    generation: u64,
    /// Per local id: what follows, the set and its shared id.
    sets: Vec<(u16, Arc<[u64]>, u32)>,
    trans: Vec<Trans>,
}

/// Local sets past which a view is not kept for the next check.
const KEEP_LOCAL_SETS: usize = 1 << 14;

thread_local! {
    /// The last view dropped on this thread.
    static KEPT: std::cell::RefCell<Option<Local>> = const { std::cell::RefCell::new(None) };
}

impl Drop for HoleView<'_> {
    fn drop(&mut self) {
        if self.local.sets.len() <= KEEP_LOCAL_SETS {
            let local = std::mem::take(&mut self.local);
            let _ = KEPT.try_with(|k| {
                if let Ok(mut k) = k.try_borrow_mut() {
                    *k = Some(local);
                }
            });
        }
    }
}

impl<'a> HoleView<'a> {
    pub(crate) fn new(cache: &'a HoleCache, lexer: &'a Lexer) -> HoleView<'a> {
        let kept = KEPT
            .try_with(|k| k.try_borrow_mut().ok().and_then(|mut k| k.take()))
            .ok()
            .flatten()
            .filter(|l| l.cache == cache.uid)
            // A view of an older generation would intern all its sets into
            // the new one at its first lock, beyond the cache's room.
            .filter(|l| {
                let inner = cache.inner.lock().unwrap_or_else(PoisonError::into_inner);
                l.generation == inner.generation
            });
        let local = kept.unwrap_or_else(|| Local {
            cache: cache.uid,
            ..Local::default()
        });
        HoleView {
            cache,
            lexer,
            local,
        }
    }

    fn lock(&self) -> MutexGuard<'a, Inner> {
        self.cache
            .inner
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Brings this view's shared ids to `inner`'s generation: after the
    /// cache started afresh, every local set is interned again (so equal
    /// sets keep one local id, which the automaton's construction needs to
    /// terminate).
    fn sync(&mut self, inner: &mut Inner) {
        if self.local.generation == inner.generation {
            return;
        }
        self.local.generation = inner.generation;
        self.local.ids.clear();
        for (id, (follow, bits, gid)) in self.local.sets.iter_mut().enumerate() {
            *gid = inner.intern(bits);
            self.local.ids.insert((*follow, *gid), id as u32);
        }
    }

    /// The local id of the masked set with shared id `gid` (of the view's
    /// generation, see [`HoleView::sync`]), followed by `follow`.
    fn local(&mut self, inner: &Inner, follow: u16, gid: u32) -> u32 {
        if let Some(&id) = self.local.ids.get(&(follow, gid)) {
            return id;
        }
        let id = self.local.sets.len() as u32;
        self.local.ids.insert((follow, gid), id);
        self.local
            .sets
            .push((follow, inner.sets[gid as usize].clone(), gid));
        self.local.trans.push(None);
        id
    }

    /// The id of the set of a hole followed by `follow` (a byte, or 256 for
    /// the end of the text), whose surviving lexer states are `keep` (valid
    /// for this view). Only the states that can end a lexeme or leave the
    /// hole are kept: the others cannot influence anything, and dropping them
    /// makes sets that differ only in, say, the last lexeme's munch checker
    /// (which the next byte kills anyway) one state.
    pub(crate) fn intern(&mut self, bits: &[u64], follow: u16, keep: &[u64]) -> u32 {
        let mut bits: Bits = Bits::from_slice(bits);
        mask(self.lexer, &mut bits, keep);
        let mut inner = self.lock();
        inner.make_room(1);
        self.sync(&mut inner);
        let gid = inner.intern(&bits);
        self.local(&inner, follow, gid)
    }

    /// The set with id `id`.
    pub(crate) fn bits(&self, id: u32) -> Arc<[u64]> {
        self.local.sets[id as usize].1.clone()
    }

    /// Transitions of set `id`: `(terminal, next set id)`, sorted by terminal;
    /// `keep` as given when `id` was interned (the hole does not change).
    pub(crate) fn transitions(&mut self, id: u32, keep: &[u64]) -> Arc<Vec<(u32, u32)>> {
        if let Some(t) = &self.local.trans[id as usize] {
            return t.clone();
        }
        let mut inner = self.lock();
        // Its raw targets and their masked forms: at most 2 new sets per
        // terminal.
        inner.make_room(2 * self.lexer.n_terms);
        self.sync(&mut inner);
        let (follow, gid) = (
            self.local.sets[id as usize].0,
            self.local.sets[id as usize].2,
        );
        let masked = match inner.masked.get(&(gid, follow)) {
            Some(t) => t.clone(),
            None => {
                let raw = inner.trans_of(self.lexer, gid);
                let mut t: Vec<(u32, u32)> = Vec::with_capacity(raw.len());
                for &(term, g) in raw.iter() {
                    let mut next = Bits::from_slice(&inner.sets[g as usize]);
                    mask(self.lexer, &mut next, keep);
                    t.push((term, inner.intern(&next)));
                }
                let t = Arc::new(t);
                inner.masked.insert((gid, follow), t.clone());
                t
            }
        };
        let local: Vec<(u32, u32)> = masked
            .iter()
            .map(|&(term, g)| (term, self.local(&inner, follow, g)))
            .collect();
        drop(inner);
        let local = Arc::new(local);
        self.local.trans[id as usize] = Some(local.clone());
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

#[cfg(test)]
mod tests {
    use super::HoleCache;
    use crate::budget::Budget;
    use crate::grammar::Grammar;
    use crate::lexer::{Lexer, TokenNfa};
    use crate::partial::Partial;

    /// A cache that starts afresh many times within one automaton (and
    /// between automata) builds the same automata as one that never does.
    #[test]
    fn a_cache_that_starts_afresh_builds_the_same_automata() {
        let src = include_str!("../../grammars/json.ebnf");
        let g = Grammar::from_lark(src, None).unwrap();
        let lx = Lexer::new(&g, crate::lexer::DEFAULT_LEXER_LIMIT).unwrap();
        let big = HoleCache::default();
        let tiny = HoleCache::with_max_sets(lx.n_terms * 2 + 3);
        let cases = [
            Partial::new()
                .text("{\"a\": ")
                .hole()
                .text(", \"b")
                .hole()
                .text("]}"),
            Partial::new().hole().text("\"x").hole().text("1.").hole(),
            Partial::new()
                .text("[")
                .hole()
                .text(" tr")
                .hole()
                .text("e, -")
                .hole(),
        ];
        for round in 0..3 {
            for p in &cases {
                let build = |cache: &HoleCache| {
                    let mut budget = Budget::new(u64::MAX, "test");
                    TokenNfa::build(&lx, cache, p, &[], &mut budget, 1 << 20).unwrap()
                };
                assert_eq!(build(&big), build(&tiny), "round {round}: {p:?}");
            }
        }
        let generation = tiny.inner.lock().unwrap().generation;
        assert!(
            generation > 3,
            "the tiny cache started afresh {generation} times"
        );
    }

    /// A thread's later builds start from the view its earlier ones kept
    /// (of the same cache only); they build the same automata as a thread
    /// with no view kept, with caches that start afresh in between too.
    #[test]
    fn a_kept_view_builds_the_same_automata() {
        let src = include_str!("../../grammars/json.ebnf");
        let g = Grammar::from_lark(src, None).unwrap();
        let lx = Lexer::new(&g, crate::lexer::DEFAULT_LEXER_LIMIT).unwrap();
        let docs = [
            r#"{"a": [1, 2.5e3, "x\"y"], "b": {"c": null, "d": true}}"#,
            r#"[{"k": -0.5}, "s p a c e", [[], {}], false]"#,
        ];
        let mut rng = crate::rng::SplitMix64::new(3);
        let cases: Vec<Partial> = (0..24)
            .map(|i| {
                let d = docs[i % 2].as_bytes();
                let spans = crate::rng::mask_spans(d.len(), 0.3, 4, &mut rng);
                Partial::cut(d, &spans)
            })
            .collect();
        let build = |cache: &HoleCache, p: &Partial| {
            let mut budget = Budget::new(u64::MAX, "test");
            TokenNfa::build(&lx, cache, p, &[], &mut budget, 1 << 20).unwrap()
        };
        for max_sets in [usize::MAX, lx.n_terms * 2 + 3] {
            let cache = HoleCache::with_max_sets(max_sets);
            let other = HoleCache::with_max_sets(max_sets);
            for (i, p) in cases.iter().enumerate() {
                // Every third build is of another cache, whose view must
                // not be taken up by the next build of this one.
                if i % 3 == 2 {
                    build(&other, &cases[(i + 5) % cases.len()]);
                }
                let kept = build(&cache, p);
                let fresh = std::thread::scope(|s| s.spawn(|| build(&cache, p)).join().unwrap());
                assert_eq!(kept, fresh, "case {i}: {p:?}");
            }
        }
    }
}

//! The tables of the phase-1 search, dense when small.
//!
//! Every key of the search is an index below a bound known before it starts
//! (products of automaton states and grammar symbols or productions). When
//! the bound is small — a SMILES molecule or a short JSON document — a
//! bitset or an array is allocated zeroed and indexed directly; past a size
//! limit the same keys go to an Fx hash table. On small inputs hashing, and
//! allocating hash tables sized for the worst case, was about half of a
//! check's time. The arrays of list heads are the largest (up to 1 MiB) and
//! come from a per-thread pool of arrays already unset (see [`pool`]).

use crate::budget::{Ceiling, Fits};
use crate::hash::{FxMap, FxSet};

/// Largest bound (in bits) for which a [`KeySet`] is a bitset: 128 KiB.
const DENSE_BITS: u64 = 1 << 20;
/// Largest bound (in entries) for which [`Heads`] are an array: 1 MiB. A
/// C++ function's automaton (150–250 states × 236 nonterminals) used to
/// pass 2¹⁵ and hash every waiting list and completion: an array, even
/// filled with `NIL` per check, is 6 % faster there.
pub(crate) const DENSE_HEADS: u64 = 1 << 18;

/// The same for tables that hold few entries and are made many times (the
/// searches of an insertion point's relations, one per relation; a tail
/// keeps its tables, one per insertion point): larger ones are hashed.
const DENSE_HEADS_FEW: u64 = 1 << 15;

/// How many of a dense [`Heads`]' entries a search sets, which decides its
/// largest array (see [`Heads::Listed`] for how one is cleared).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sets {
    /// A good part (a whole search).
    Many,
    /// Few (one of the many small searches of an insertion point's
    /// relations): a smaller array, hashed beyond it.
    Few,
    /// Anywhere from one in ten to one in hundreds (phase 2's lists of
    /// finalised triples, by automaton state and symbol): the large
    /// array of [`Sets::Many`].
    Spread,
}

/// The value of [`Heads`] for a key never set.
pub(crate) const NIL: u32 = u32::MAX;

/// A set of indices below a bound.
pub(crate) enum KeySet {
    Dense(Vec<u64>),
    Sparse(FxSet<u64>, Ceiling),
}

impl KeySet {
    /// An empty set of indices below `bound`; `cap` sizes a hash table,
    /// which grows only within `ceiling`.
    pub(crate) fn new(bound: u64, cap: usize, ceiling: Ceiling) -> Fits<KeySet> {
        match bound <= DENSE_BITS {
            true => Ok(KeySet::Dense(vec![0; bound.div_ceil(64) as usize])),
            false => KeySet::sparse(cap, ceiling),
        }
    }

    /// Bytes it holds, estimated.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            KeySet::Dense(bits) => 8 * bits.capacity(),
            KeySet::Sparse(set, _) => 16 * set.capacity(),
        }
    }

    /// An empty hash set, whatever the bound (for sets that hold few of
    /// many possible indices); `cap` sizes it, and it grows only within
    /// `ceiling`.
    pub(crate) fn sparse(cap: usize, ceiling: Ceiling) -> Fits<KeySet> {
        ceiling.admit(cap * 16)?;
        Ok(KeySet::Sparse(small::set(cap), ceiling))
    }

    /// Adds `i`; whether it was new.
    #[inline]
    pub(crate) fn insert(&mut self, i: u64) -> Fits<bool> {
        match self {
            KeySet::Dense(bits) => {
                let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
                let new = bits[w] & b == 0;
                bits[w] |= b;
                Ok(new)
            }
            KeySet::Sparse(set, ceiling) => ceiling.insert(set, i),
        }
    }

    /// Whether `i` is in the set.
    #[inline]
    pub(crate) fn contains(&self, i: u64) -> bool {
        match self {
            KeySet::Dense(bits) => bits[(i / 64) as usize] & (1u64 << (i % 64)) != 0,
            KeySet::Sparse(set, _) => set.contains(&i),
        }
    }
}

/// A map from indices below a bound to `u32` (list heads), [`NIL`] when unset.
#[derive(Clone, Debug)]
pub(crate) enum Heads {
    /// An array too small for this thread's [`pool`] to keep (freed when
    /// dropped).
    Dense(Vec<u32>),
    /// An array from the pool (its first `used` entries in use), with the
    /// keys set listed while they are fewer than one per cache line: only
    /// they are cleared when it is given back (a decoder's canvases evict
    /// the caches between checks, and zeroing a whole array wrote lines
    /// its search never read); past that, the used part is filled (clearing
    /// keys at random over most lines of a 1 MiB array cost a 2.3 KB C++
    /// file's check more than a sequential fill).
    Listed(Vec<u32>, Vec<u32>, u32),
    Sparse(FxMap<u64, u32>, Ceiling),
}

impl Heads {
    /// An empty map over indices below `bound`; `cap` sizes a hash table,
    /// which grows only within `ceiling`.
    pub(crate) fn new(bound: u64, cap: usize, ceiling: Ceiling, sets: Sets) -> Fits<Heads> {
        let dense = match sets {
            Sets::Many | Sets::Spread => DENSE_HEADS,
            Sets::Few => DENSE_HEADS_FEW,
        };
        if bound > dense {
            return Heads::sparse(cap, ceiling);
        }
        // The array and its listed keys (counted as one per entry).
        ceiling.admit(bound as usize * 8)?;
        let v = pool::take(bound as usize);
        // A small array is not kept by the pool (it is dropped whole), so
        // listing its keys would be wasted work: a mask's thousands of
        // small searches paid for it (C++ mask loop 2-4 % slower).
        Ok(match bound < pool::MIN_LEN as u64 {
            true => Heads::Dense(v),
            false => Heads::Listed(v, Vec::new(), bound as u32),
        })
    }

    /// Bytes it holds, estimated.
    pub(crate) fn bytes(&self) -> usize {
        match self {
            Heads::Dense(v) => 4 * v.capacity(),
            Heads::Listed(v, keys, _) => 4 * (v.capacity() + keys.capacity()),
            Heads::Sparse(m, _) => 16 * m.capacity(),
        }
    }

    /// An empty hash map (for keys too thinly spread for an array); `cap`
    /// sizes it, and it grows only within `ceiling`.
    pub(crate) fn sparse(cap: usize, ceiling: Ceiling) -> Fits<Heads> {
        ceiling.admit(cap * 24)?;
        Ok(Heads::Sparse(small::map(cap), ceiling))
    }

    /// A map with no room (a placeholder for tables moved out).
    pub(crate) fn none() -> Heads {
        Heads::Dense(Vec::new())
    }

    /// The value at `i`, or [`NIL`].
    #[inline]
    pub(crate) fn get(&self, i: u64) -> u32 {
        match self {
            Heads::Dense(v) | Heads::Listed(v, ..) => v[i as usize],
            Heads::Sparse(m, _) => m.get(&i).copied().unwrap_or(NIL),
        }
    }

    /// Sets the value at `i`; returns the value it had ([`NIL`]: none).
    #[inline]
    pub(crate) fn replace(&mut self, i: u64, value: u32) -> Fits<u32> {
        Ok(match self {
            Heads::Dense(v) => std::mem::replace(&mut v[i as usize], value),
            Heads::Listed(v, keys, used) => {
                let old = std::mem::replace(&mut v[i as usize], value);
                if old == NIL {
                    list_key(keys, *used, i);
                }
                old
            }
            Heads::Sparse(m, ceiling) => sparse_insert(m, *ceiling, i, value)?,
        })
    }

    /// Calls `f` with the value of each index in `range` that has one, in
    /// no particular order: a hash map holding fewer entries than a few
    /// per index of the range is walked whole, not looked up index by
    /// index (a grown layer's few states).
    pub(crate) fn each_in(&self, range: std::ops::Range<u64>, mut f: impl FnMut(u32)) {
        match self {
            Heads::Dense(v) | Heads::Listed(v, ..) => {
                let slots = &v[range.start as usize..range.end as usize];
                slots.iter().filter(|&&x| x != NIL).for_each(|&x| f(x));
            }
            Heads::Sparse(m, _) if (m.len() as u64) < 4 * (range.end - range.start) => {
                for (&k, &x) in m {
                    if range.contains(&k) {
                        f(x);
                    }
                }
            }
            Heads::Sparse(m, _) => range.filter_map(|k| m.get(&k)).for_each(|&x| f(x)),
        }
    }

    /// Sets the value at `i`.
    #[inline(always)]
    pub(crate) fn set(&mut self, i: u64, value: u32) -> Fits {
        match self {
            Heads::Dense(v) => v[i as usize] = value,
            Heads::Listed(v, keys, used) => {
                let slot = &mut v[i as usize];
                if *slot == NIL {
                    list_key(keys, *used, i);
                }
                *slot = value;
            }
            Heads::Sparse(m, ceiling) => {
                sparse_insert(m, *ceiling, i, value)?;
            }
        }
        Ok(())
    }
}

/// Inserts into a [`Heads::Sparse`] map within its ceiling; the value it
/// had, or [`NIL`]. Out of line, so that [`Heads::set`] and
/// [`Heads::replace`] stay small enough to be inlined for arrays (the
/// hash map's insertion kept them out of line: 5 % of a 2.3 KB C++ file's
/// check in calls).
#[inline(never)]
fn sparse_insert(m: &mut FxMap<u64, u32>, ceiling: Ceiling, i: u64, value: u32) -> Fits<u32> {
    ceiling.room_in_map(m)?;
    Ok(m.insert(i, value).unwrap_or(NIL))
}

/// Lists key `i` of a [`Heads::Listed`] array of `used` entries, unless
/// more than [`pool::listed_max`] are listed already (then the array is
/// filled when given back, and the list is not needed).
#[inline]
fn list_key(keys: &mut Vec<u32>, used: u32, i: u64) {
    if keys.len() <= pool::listed_max(used) {
        keys.push(i as u32);
    }
}

impl Drop for Heads {
    fn drop(&mut self) {
        match self {
            Heads::Listed(v, keys, used) => pool::give(std::mem::take(v), keys, *used),
            Heads::Sparse(m, _) => small::give_map(std::mem::take(m)),
            Heads::Dense(_) => {}
        }
    }
}

impl Drop for KeySet {
    fn drop(&mut self) {
        if let KeySet::Sparse(set, _) = self {
            small::give_set(std::mem::take(set));
        }
    }
}

/// Small hash tables kept per thread between searches.
///
/// An insertion point's searches (a C++ mask runs about a thousand: one
/// per row of its relations, each growing a few terminals or entering the
/// text after the point) each made and dropped a few hash tables sized
/// for a few dozen entries: allocating, zeroing their control bytes and
/// freeing them was about a tenth of such a search. Taken from here, a
/// table is one the thread used before, emptied. No search iterates over
/// these tables (only the naming of an insertion point's frontier states
/// does, and it sorts what it finds), so a kept table's larger capacity
/// changes no answer.
mod small {
    use crate::hash::{FxMap, FxSet};
    use std::cell::RefCell;
    use std::thread::LocalKey;

    /// Tables kept per thread, of each kind: at most this many...
    const KEEP: usize = 16;
    /// ...with room for at most this many entries (clearing a larger one
    /// costs about what making it does).
    const MAX_CAP: usize = 1 << 10;

    thread_local! {
        static MAPS: RefCell<Vec<FxMap<u64, u32>>> = const { RefCell::new(Vec::new()) };
        static SETS: RefCell<Vec<FxSet<u64>>> = const { RefCell::new(Vec::new()) };
    }

    /// A kept table with room for `cap` entries, if any.
    fn take<T>(
        kept: &'static LocalKey<RefCell<Vec<T>>>,
        cap: usize,
        room: fn(&T) -> usize,
    ) -> Option<T> {
        if cap > MAX_CAP {
            return None;
        }
        kept.try_with(|kept| {
            let mut kept = kept.try_borrow_mut().ok()?;
            let k = kept.iter().rposition(|t| room(t) >= cap)?;
            Some(kept.swap_remove(k))
        })
        .ok()
        .flatten()
    }

    /// Keeps `t`, emptied by the caller, if it is small and there is room.
    fn give<T>(kept: &'static LocalKey<RefCell<Vec<T>>>, t: T, room: usize) {
        if room == 0 || room > MAX_CAP {
            return;
        }
        let _ = kept.try_with(|kept| {
            if let Ok(mut kept) = kept.try_borrow_mut() {
                if kept.len() < KEEP {
                    kept.push(t);
                }
            }
        });
    }

    /// An empty map with room for `cap` entries.
    pub(super) fn map(cap: usize) -> FxMap<u64, u32> {
        take(&MAPS, cap, |m| m.capacity())
            .unwrap_or_else(|| FxMap::with_capacity_and_hasher(cap, Default::default()))
    }

    /// An empty set with room for `cap` entries.
    pub(super) fn set(cap: usize) -> FxSet<u64> {
        take(&SETS, cap, |s| s.capacity())
            .unwrap_or_else(|| FxSet::with_capacity_and_hasher(cap, Default::default()))
    }

    /// Takes back a map no longer used.
    pub(super) fn give_map(mut m: FxMap<u64, u32>) {
        m.clear();
        let room = m.capacity();
        give(&MAPS, m, room);
    }

    /// Takes back a set no longer used.
    pub(super) fn give_set(mut s: FxSet<u64>) {
        s.clear();
        let room = s.capacity();
        give(&SETS, s, room);
    }
}

/// Arrays of [`NIL`] for dense [`Heads`], kept per thread between searches.
///
/// A check of a 2.3 KB C++ file has about 1,000 automaton states and 236
/// nonterminals: its two arrays of list heads are 1 MiB each. Allocated
/// afresh, a check sometimes paid for mapping and zeroing their pages
/// (depending on the allocator's state, runs of the same benchmark took
/// 0.58 or 1.0 ms per check). Taken from here they are already mapped
/// and unset; a search's entries are cleared when it gives them back.
mod pool {
    use super::{DENSE_HEADS, NIL};
    use std::cell::RefCell;

    /// Arrays kept per thread: at most this many...
    const KEEP: usize = 8;
    /// ...of at least this many entries (smaller ones cost little to make).
    pub(super) const MIN_LEN: usize = 1 << 12;

    thread_local! {
        static FREE: RefCell<Vec<Vec<u32>>> = const { RefCell::new(Vec::new()) };
    }

    /// An array of `len` entries, all [`NIL`].
    pub(super) fn take(len: usize) -> Vec<u32> {
        if len >= MIN_LEN {
            let kept = FREE
                .try_with(|free| {
                    let mut free = free.try_borrow_mut().ok()?;
                    let k = (0..free.len())
                        .filter(|&k| free[k].capacity() >= len)
                        .min_by_key(|&k| (free[k].len() < len, free[k].capacity()))?;
                    Some(free.swap_remove(k))
                })
                .ok()
                .flatten();
            if let Some(mut v) = kept {
                // Every entry is unset; a longer array stays longer (its
                // entries past `len` are never set, and not written again
                // when the next search needs them).
                if v.len() < len {
                    v.resize(len, NIL);
                }
                return v;
            }
        }
        vec![NIL; len]
    }

    /// The most keys of an array of `used` entries cleared one by one when
    /// it is given back: one per cache line of its used part (past that,
    /// filling it sequentially writes no more lines and runs faster).
    pub(super) fn listed_max(used: u32) -> usize {
        used as usize / 16
    }

    /// Takes back `v`, whose entries are [`NIL`] but those of `keys` — or
    /// of its first `used` entries when more than [`listed_max`] keys were
    /// set (the list then stops early).
    pub(super) fn give(mut v: Vec<u32>, keys: &[u32], used: u32) {
        if v.capacity() < MIN_LEN || v.capacity() as u64 > 2 * DENSE_HEADS {
            return;
        }
        match keys.len() <= listed_max(used) {
            true => keys.iter().for_each(|&i| v[i as usize] = NIL),
            false => v[..used as usize].fill(NIL),
        }
        let _ = FREE.try_with(|free| {
            if let Ok(mut free) = free.try_borrow_mut() {
                if free.len() < KEEP {
                    free.push(v);
                } else if let Some(k) = (0..free.len()).min_by_key(|&k| free[k].capacity()) {
                    // The smallest goes: the searches of a decode grow
                    // with its canvas.
                    if free[k].capacity() < v.capacity() {
                        free[k] = v;
                    }
                }
            }
        });
    }
}

/// A work list that pops an entry of the highest key first (keys below a
/// bound fixed up front; entries of one key in LIFO order): a linked stack
/// per key whose cells live in one arena (a popped cell is reused by the
/// next push), and two levels of bitsets over the nonempty keys, so a push
/// is O(1) and allocates nothing once the arena has grown, and a pop finds
/// the next nonempty key in a few word operations. (A `Vec` per key cost a
/// tenth of a C++ check in allocations and copies.)
pub(crate) struct MaxQueue {
    /// Per key: the arena index of its top cell, or [`NIL`].
    heads: Vec<u32>,
    /// Cells `(value, next)`; `free` heads the list of popped ones.
    cells: Vec<(u64, u32)>,
    free: u32,
    /// Bit `k` set: key `k` has entries.
    words: Vec<u64>,
    /// Bit `w` set: `words[w]` is nonzero.
    summary: Vec<u64>,
    /// No summary word above this one is nonzero.
    top: usize,
    ceiling: Ceiling,
}

impl MaxQueue {
    /// Bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        4 * self.heads.capacity()
            + 16 * self.cells.capacity()
            + 8 * (self.words.capacity() + self.summary.capacity())
    }

    /// An empty queue for keys below `bound`, growing only within `ceiling`.
    pub(crate) fn new(bound: usize, ceiling: Ceiling) -> Fits<MaxQueue> {
        let words = bound.div_ceil(64);
        ceiling.admit(bound.saturating_mul(std::mem::size_of::<u32>() + 1))?;
        Ok(MaxQueue {
            heads: vec![NIL; bound],
            cells: Vec::new(),
            free: NIL,
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
            top: 0,
            ceiling,
        })
    }

    /// Adds `value` under `key`.
    #[inline]
    pub(crate) fn push(&mut self, key: u32, value: u64) -> Fits {
        let k = key as usize;
        let next = self.heads[k];
        let cell = if self.free != NIL {
            let c = self.free;
            self.free = self.cells[c as usize].1;
            self.cells[c as usize] = (value, next);
            c
        } else {
            self.ceiling.push(&mut self.cells, (value, next))?;
            self.cells.len() as u32 - 1
        };
        self.heads[k] = cell;
        self.words[k / 64] |= 1 << (k % 64);
        self.summary[k / 4096] |= 1 << ((k / 64) % 64);
        self.top = self.top.max(k / 4096);
        Ok(())
    }

    /// The highest key with a value, if any.
    #[inline]
    pub(crate) fn max_key(&mut self) -> Option<u32> {
        self.highest().map(|(_, _, k)| k as u32)
    }

    /// Where the highest key with a value is: its summary word, its word
    /// and the key.
    #[inline]
    fn highest(&mut self) -> Option<(usize, usize, usize)> {
        while self.top > 0 && self.summary[self.top] == 0 {
            self.top -= 1;
        }
        let s = self.top;
        let sw = *self.summary.get(s).filter(|&&x| x != 0)?;
        let w = s * 64 + (63 - sw.leading_zeros() as usize);
        Some((s, w, w * 64 + (63 - self.words[w].leading_zeros() as usize)))
    }

    /// Removes and returns a value of the highest key.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<u64> {
        let (s, w, k) = self.highest()?;
        let c = self.heads[k];
        let (value, next) = self.cells[c as usize];
        self.cells[c as usize].1 = self.free;
        self.free = c;
        self.heads[k] = next;
        if next == NIL {
            self.words[w] &= !(1 << (k % 64));
            if self.words[w] == 0 {
                self.summary[s] &= !(1 << (w % 64));
            }
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::MaxQueue;
    use super::*;

    /// A small table comes back empty from the thread's kept ones, with
    /// room for what was asked; a large one is not kept.
    #[test]
    fn kept_small_tables_come_back_empty() {
        let mut h = Heads::sparse(64, Ceiling::NONE).unwrap();
        for i in 0..200u64 {
            h.set(i * 7919, i as u32).unwrap();
        }
        drop(h);
        let h = Heads::sparse(64, Ceiling::NONE).unwrap();
        assert!((0..200u64).all(|i| h.get(i * 7919) == NIL));
        let mut s = KeySet::sparse(32, Ceiling::NONE).unwrap();
        assert!(s.insert(3).unwrap() && s.insert(1 << 40).unwrap());
        drop(s);
        let mut s = KeySet::sparse(32, Ceiling::NONE).unwrap();
        assert!(!s.contains(3) && !s.contains(1 << 40));
        assert!(s.insert(3).unwrap());
        // Room for more than a kept table holds: made afresh, not kept.
        let big = small::map(1 << 12);
        assert!(big.capacity() >= 1 << 12);
        small::give_map(big);
        assert!(small::map(64).capacity() <= 2 * 1024);
    }

    #[test]
    fn dense_and_sparse_agree() {
        for bound in [100u64, DENSE_BITS + 1] {
            let mut s = KeySet::new(bound, 8, Ceiling::NONE).unwrap();
            let mut ins = |i| s.insert(i).unwrap();
            assert!(ins(5) && !ins(5));
            assert!(ins(bound - 1));
            assert!(s.contains(5) && !s.contains(6) && s.contains(bound - 1));
        }
        for (bound, sets) in [
            (100u64, Sets::Many),
            (100_000, Sets::Few),
            (DENSE_HEADS + 1, Sets::Many),
        ] {
            let mut h = Heads::new(bound, 8, Ceiling::NONE, sets).unwrap();
            assert_eq!(h.get(7), NIL);
            h.set(7, 3).unwrap();
            h.set(bound - 1, 9).unwrap();
            assert_eq!((h.get(7), h.get(bound - 1)), (3, 9));
            assert_eq!(h.replace(7, 4).unwrap(), 3);
            assert_eq!(h.replace(8, 5).unwrap(), NIL);
            assert_eq!((h.get(7), h.get(8)), (4, 5));
        }
    }

    #[test]
    fn pooled_arrays_come_back_unset() {
        // Larger and smaller than the arrays given back before, set
        // sparsely (the listed keys are cleared) and densely (filled).
        for sets in [Sets::Many, Sets::Few, Sets::Spread] {
            // Steps of 100 list every key (cleared one by one); the others
            // pass one key per 16 entries (the used part is filled).
            for (bound, step) in [
                (20_000u64, 7),
                (5_000, 1),
                (30_000, 100),
                (30_000, 1),
                (12_000, 3),
                (25_000, 100),
                (40_000, 100),
            ] {
                let mut h = Heads::new(bound, 8, Ceiling::NONE, sets).unwrap();
                assert!((0..bound).all(|i| h.get(i) == NIL), "{sets:?} {bound}");
                for i in (0..bound).step_by(step) {
                    h.set(i, i as u32).unwrap();
                }
                assert_eq!((h.get(0), h.get(1)), (0, if step == 1 { 1 } else { NIL }));
            }
        }
    }

    #[test]
    fn max_queue_pops_the_highest_key_first() {
        let mut q = MaxQueue::new(10_000, Ceiling::NONE).unwrap();
        assert_eq!(q.pop(), None);
        let keys = [5u32, 9_999, 0, 4_096, 4_095, 64, 63, 9_999, 5];
        for (i, &k) in keys.iter().enumerate() {
            q.push(k, i as u64).unwrap();
        }
        let mut want: Vec<(u32, u64)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u64))
            .collect();
        // Highest key first; within a key, the latest first.
        want.sort_by(|a, b| b.cmp(a));
        for (_, v) in want {
            assert_eq!(q.pop(), Some(v));
        }
        assert_eq!(q.pop(), None);
        q.push(3, 7).unwrap();
        assert_eq!(q.pop(), Some(7));
        assert_eq!(MaxQueue::new(0, Ceiling::NONE).unwrap().pop(), None);
    }
}

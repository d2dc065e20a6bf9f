//! The tables of the phase-1 search, dense when small.
//!
//! Every key of the search is an index below a bound known before it starts
//! (products of automaton states and grammar symbols or productions). When
//! the bound is small — a SMILES molecule or a short JSON document — a
//! bitset or an array is allocated zeroed and indexed directly; past a size
//! limit the same keys go to an Fx hash table. On small inputs hashing, and
//! allocating hash tables sized for the worst case, was about half of a
//! check's time.

use crate::hash::{FxMap, FxSet};

/// Largest bound (in bits) for which a [`KeySet`] is a bitset: 128 KiB.
const DENSE_BITS: u64 = 1 << 20;
/// Largest bound (in entries) for which [`Heads`] is an array: 128 KiB.
const DENSE_HEADS: u64 = 1 << 15;

/// The value of [`Heads`] for a key never set.
pub(crate) const NIL: u32 = u32::MAX;

/// A set of indices below a bound.
pub(crate) enum KeySet {
    Dense(Vec<u64>),
    Sparse(FxSet<u64>),
}

impl KeySet {
    /// An empty set of indices below `bound`; `cap` sizes a hash table.
    pub(crate) fn new(bound: u64, cap: usize) -> KeySet {
        if bound <= DENSE_BITS {
            KeySet::Dense(vec![0; bound.div_ceil(64) as usize])
        } else {
            KeySet::Sparse(FxSet::with_capacity_and_hasher(cap, Default::default()))
        }
    }

    /// Adds `i`; whether it was new.
    #[inline]
    pub(crate) fn insert(&mut self, i: u64) -> bool {
        match self {
            KeySet::Dense(bits) => {
                let (w, b) = ((i / 64) as usize, 1u64 << (i % 64));
                let new = bits[w] & b == 0;
                bits[w] |= b;
                new
            }
            KeySet::Sparse(set) => set.insert(i),
        }
    }

    /// Whether `i` is in the set.
    #[inline]
    pub(crate) fn contains(&self, i: u64) -> bool {
        match self {
            KeySet::Dense(bits) => bits[(i / 64) as usize] & (1u64 << (i % 64)) != 0,
            KeySet::Sparse(set) => set.contains(&i),
        }
    }
}

/// A map from indices below a bound to `u32` (list heads), [`NIL`] when unset.
pub(crate) enum Heads {
    Dense(Vec<u32>),
    Sparse(FxMap<u64, u32>),
}

impl Heads {
    /// An empty map over indices below `bound`; `cap` sizes a hash table.
    pub(crate) fn new(bound: u64, cap: usize) -> Heads {
        if bound <= DENSE_HEADS {
            Heads::Dense(vec![NIL; bound as usize])
        } else {
            Heads::Sparse(FxMap::with_capacity_and_hasher(cap, Default::default()))
        }
    }

    /// The value at `i`, or [`NIL`].
    #[inline]
    pub(crate) fn get(&self, i: u64) -> u32 {
        match self {
            Heads::Dense(v) => v[i as usize],
            Heads::Sparse(m) => m.get(&i).copied().unwrap_or(NIL),
        }
    }

    /// Sets the value at `i`.
    #[inline]
    pub(crate) fn set(&mut self, i: u64, value: u32) {
        match self {
            Heads::Dense(v) => v[i as usize] = value,
            Heads::Sparse(m) => {
                m.insert(i, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_agree() {
        for bound in [100u64, DENSE_BITS + 1] {
            let mut s = KeySet::new(bound, 8);
            assert!(s.insert(5) && !s.insert(5) && s.contains(5) && !s.contains(6));
            assert!(s.insert(bound - 1) && s.contains(bound - 1));
        }
        for bound in [100u64, DENSE_HEADS + 1] {
            let mut h = Heads::new(bound, 8);
            assert_eq!(h.get(7), NIL);
            h.set(7, 3);
            h.set(bound - 1, 9);
            assert_eq!((h.get(7), h.get(bound - 1)), (3, 9));
        }
    }
}

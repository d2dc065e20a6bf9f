//! A small, fast, deterministic hasher for integer keys (the Fx hash used by
//! rustc). Hash maps here are for lookup only; nothing iterates over them
//! where order could reach an output.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// The Fx hasher: one multiply and rotate per word.
#[derive(Clone, Copy, Default)]
pub(crate) struct FxHasher(u64);

const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // Whole words without a copy (a slice of integers hashes as its
        // bytes: a variable-length copy per word was a memmove call each).
        let mut words = bytes.chunks_exact(8);
        for w in &mut words {
            let mut a = [0u8; 8];
            a.copy_from_slice(w);
            self.write_u64(u64::from_le_bytes(a));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut a = [0u8; 8];
            a[..rest.len()].copy_from_slice(rest);
            self.write_u64(u64::from_le_bytes(a));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(K);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // The multiply only carries low bits upwards; fold the high half back
        // down so keys differing only in their high bits (packed pairs) do not
        // collide in hashbrown's low-bit bucket index.
        let h = self.0;
        (h ^ (h >> 29)).wrapping_mul(K) ^ (h >> 32)
    }
}

/// `HashMap` with the Fx hasher.
pub(crate) type FxMap<K, V> = HashMap<K, V, BuildHasherDefault<FxHasher>>;
/// `HashSet` with the Fx hasher.
pub(crate) type FxSet<K> = HashSet<K, BuildHasherDefault<FxHasher>>;

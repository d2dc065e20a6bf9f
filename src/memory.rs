//! A memory limit that is an error, not an out-of-memory abort.
//!
//! Rust aborts the process when an allocation fails, so a limit has to be
//! checked before memory runs out. [`CountingAlloc`] is a global allocator
//! that wraps the system's and counts the bytes in use; a program that
//! installs it (the `cdiff` binary does) lets [`Config::max_memory`]
//! (`--max-memory`) be checked by every search as it spends its work budget
//! (every 2¹⁶ units, so the cost is one atomic load per 65,536 units). The
//! limit is on growth: a search that adds more than the limit to what was in
//! use when it started (model weights and caches held before do not count)
//! stops with
//! [`ErrorKind::SizeLimit`](crate::ErrorKind::SizeLimit). Looking only every
//! 2¹⁶ units let one doubling of a large table through (peaks reached 1.8×
//! the limit), so the containers that grow with the input — the token
//! automaton's states and closures, phase 1's tables and arena, phase 2's
//! queue and adjacency lists, the witness-bytes search — also ask before
//! they grow whether the bytes in use plus the new allocation stay within
//! the limit. `tests/memory_limit.rs` measures the peak of hard inputs under
//! limits of 4–64 MiB: each stays within its limit.
//!
//! Without the allocator installed, [`allocated`] is `None` and the limit is
//! not enforced.
//!
//! [`Config::max_memory`]: crate::Config::max_memory

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static IN_USE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// The system allocator, counting the bytes in use.
///
/// ```no_run
/// #[global_allocator]
/// static ALLOC: cdiff::memory::CountingAlloc = cdiff::memory::CountingAlloc;
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct CountingAlloc;

// SAFETY: every call is forwarded to `System` with the same arguments; the
// counter is only bookkeeping.
unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            grow(layout.size());
            if !INSTALLED.load(Ordering::Relaxed) {
                INSTALLED.store(true, Ordering::Relaxed);
            }
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as is.
        unsafe { System.dealloc(ptr, layout) };
        IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            grow(layout.size());
            INSTALLED.store(true, Ordering::Relaxed);
        }
        p
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded as is.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            grow(new_size);
            IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
}

/// Counts `n` more bytes in use and raises the peak (a plain load in the
/// common case where it is not exceeded).
#[inline]
fn grow(n: usize) {
    let now = IN_USE.fetch_add(n, Ordering::Relaxed) + n;
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

/// The most bytes in use since the last [`reset_peak`] (or the start), when
/// [`CountingAlloc`] is the global allocator.
pub fn peak() -> Option<usize> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| PEAK.load(Ordering::Relaxed))
}

/// Starts a new peak measurement from the bytes in use now.
pub fn reset_peak() {
    PEAK.store(IN_USE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Bytes in use, when [`CountingAlloc`] is the global allocator.
pub fn allocated() -> Option<usize> {
    INSTALLED
        .load(Ordering::Relaxed)
        .then(|| IN_USE.load(Ordering::Relaxed))
}

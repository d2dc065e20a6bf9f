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

/// The glibc `mallopt` parameters set by [`keep_freed_memory`]:
/// allocations up to this size come from the heap instead of their own
/// mapping (glibc's largest allowed value on 64-bit systems)...
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: std::os::raw::c_int = 32 << 20;
/// ...and the heap is handed back to the system only when this much at its
/// top is free.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: std::os::raw::c_int = 1 << 30;

/// Makes the system allocator keep freed memory for the next allocations
/// instead of handing it back to the system at once (glibc on Linux; a
/// no-op elsewhere, and when `GLIBC_TUNABLES` sets malloc parameters,
/// which then win). Returns whether it changed anything.
///
/// glibc serves an allocation above its mapping threshold (128 KiB at
/// first, raised as such blocks are freed, up to 32 MiB) with a fresh
/// mapping and unmaps it on free, and hands the top of its heap back once
/// 128 KiB of it (later twice the threshold) are free. A decoder allocates
/// and frees the same large tensors at every step, and a witness search
/// its tables at every call: each time the kernel mapped, zeroed and
/// unmapped their pages again. Measured in the `cdiff` binary, which calls
/// this first: one `dlm-cpp` sample of the shipped cpp-tiny (256 forward
/// passes over 512 tokens) took 4.5 s of system time and 15.4-16.0 s wall,
/// 0.4 s and 11.8-12.2 s with it. Memory freed stays with the process (the
/// resident size stays near its peak); `--max-memory` counts the bytes in
/// use, so its limit is unchanged. A program that links the library can
/// call this itself, or set the same through `GLIBC_TUNABLES` (or use an
/// allocator that keeps memory).
///
/// ```
/// // Once, early in `main`, before threads start allocating.
/// cdiff::memory::keep_freed_memory();
/// ```
pub fn keep_freed_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("malloc")) {
            return false;
        }
        extern "C" {
            fn mallopt(
                param: std::os::raw::c_int,
                value: std::os::raw::c_int,
            ) -> std::os::raw::c_int;
        }
        const M_TRIM_THRESHOLD: std::os::raw::c_int = -1;
        const M_MMAP_THRESHOLD: std::os::raw::c_int = -3;
        // SAFETY: `mallopt` only sets the allocator's parameters; both
        // values are within glibc's documented ranges.
        unsafe {
            mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
                && mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

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

#[cfg(test)]
mod tests {
    /// The parameters are accepted where glibc is the allocator (a value
    /// out of its range would make `mallopt` refuse it).
    #[test]
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn glibc_takes_the_parameters() {
        if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("malloc")) {
            assert!(!super::keep_freed_memory());
        } else {
            assert!(super::keep_freed_memory());
        }
    }
}

//! Work budgets: every search counts its steps and stops with an error when
//! the budget runs out, instead of hanging or guessing.

use crate::error::{Error, Limit, Result};
use crate::hash::{FxMap, FxSet};

/// A countdown of work units.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    left: u64,
    /// The units it started with.
    total: u64,
    what: &'static str,
    /// Bytes the search may add to what was in use when it started (see
    /// [`crate::memory`]), that starting point, and the units left at which
    /// memory is looked at next.
    max_memory: Option<usize>,
    memory_at_start: usize,
    next_memory_check: u64,
    /// Whether this is a trial run's budget ([`Budget::trial`]).
    trial: bool,
}

/// Work units between two looks at the memory in use.
const MEMORY_CHECK_EVERY: u64 = 1 << 16;

impl Budget {
    pub(crate) fn new(units: u64, what: &'static str) -> Budget {
        Budget {
            left: units,
            total: units,
            what,
            max_memory: None,
            memory_at_start: 0,
            next_memory_check: 0,
            trial: false,
        }
    }

    /// As [`Budget::new`], also stopping when the bytes in use have grown by
    /// more than `max_memory` since now (when the counting allocator is
    /// installed).
    pub(crate) fn with_memory(units: u64, what: &'static str, max_memory: Option<usize>) -> Budget {
        Budget {
            max_memory,
            memory_at_start: crate::memory::allocated().unwrap_or(0),
            next_memory_check: units.saturating_sub(MEMORY_CHECK_EVERY),
            ..Budget::new(units, what)
        }
    }

    /// The bytes in use the search's containers may grow to (see
    /// [`Ceiling`]).
    pub(crate) fn ceiling(&self) -> Ceiling {
        match (self.max_memory, crate::memory::allocated()) {
            (Some(limit), Some(_)) => Ceiling {
                start: self.memory_at_start,
                limit,
            },
            _ => Ceiling::NONE,
        }
    }

    /// A budget for a trial run: at most `units` of what is left here,
    /// under the same memory limit. Charge what it spent with
    /// [`Budget::charge`].
    pub(crate) fn trial(&self, units: u64) -> Budget {
        let left = self.left.min(units);
        Budget {
            left,
            total: left,
            trial: true,
            ..self.clone()
        }
    }

    /// A budget for a part of the work: at most `units` of what is left
    /// here, under the same memory limit, not a trial (a search stops
    /// short of it where it can). Charge what it spent with
    /// [`Budget::charge`].
    pub(crate) fn part(&self, units: u64) -> Budget {
        Budget {
            trial: false,
            ..self.trial(units)
        }
    }

    /// Whether this is a trial run's budget: running out of it is how a
    /// trial learns it runs long, so a search should not stop short of it.
    pub(crate) fn is_trial(&self) -> bool {
        self.trial
    }

    /// Whether this (trial) budget ran out of units while the budget it
    /// was taken from had more: the trial's cap stopped it, not the limit.
    pub(crate) fn capped_before(&self, whole: &Budget) -> bool {
        self.left == 0 && self.total < whole.left
    }

    /// Spends here what `trial` (from [`Budget::trial`]) spent.
    pub(crate) fn charge(&mut self, trial: &Budget) -> Result<()> {
        self.spend(trial.total - trial.left)
    }

    /// The units left.
    pub(crate) fn left(&self) -> u64 {
        self.left
    }

    /// Spends `n` units.
    #[inline]
    pub(crate) fn spend(&mut self, n: u64) -> Result<()> {
        if self.max_memory.is_some() && self.left <= self.next_memory_check.saturating_add(n) {
            self.check_memory()?;
        }
        if self.left < n {
            let used = (self.total - self.left).saturating_add(n);
            self.left = 0;
            return Err(Error::limit(
                Limit::Budget,
                used,
                self.total,
                format!(
                    "{} ran out of its work budget of {} units",
                    self.what, self.total
                ),
            ));
        }
        self.left -= n;
        Ok(())
    }

    #[cold]
    fn check_memory(&mut self) -> Result<()> {
        self.next_memory_check = self.left.saturating_sub(MEMORY_CHECK_EVERY);
        let (Some(limit), Some(used)) = (self.max_memory, crate::memory::allocated()) else {
            return Ok(());
        };
        let grown = used.saturating_sub(self.memory_at_start);
        if grown > limit {
            return Err(Error::limit(
                Limit::Memory,
                grown as u64,
                limit as u64,
                format!(
                    "{} stopped at the memory limit: it grew by {}, more than {}",
                    self.what,
                    size(grown),
                    size(limit)
                ),
            ));
        }
        Ok(())
    }
}

/// The memory limit of a search, looked at before one of its containers
/// grows. The budget looks at the bytes in use only every 2¹⁶ units, and one
/// doubling of a large table (a hash set or an arena of a hundred MiB) can
/// happen between two looks: measured peaks reached 1.8× the limit. Growing
/// through a ceiling instead asks first whether the memory in use plus the
/// new allocation stays within the limit, so a search's peak stays within
/// its limit (the containers that grow with the input all grow this way).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ceiling {
    /// Bytes in use when the search started.
    start: usize,
    /// Bytes the search may add.
    limit: usize,
}

/// The result of growing within a [`Ceiling`].
pub(crate) type Fits<T = ()> = std::result::Result<T, OverLimit>;

/// A container of a search would have grown past its [`Ceiling`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct OverLimit {
    /// What the search would have added, in bytes.
    grown: usize,
    /// What it may add.
    limit: usize,
}

impl From<OverLimit> for Error {
    #[cold]
    fn from(o: OverLimit) -> Error {
        Error::limit(
            Limit::Memory,
            o.grown as u64,
            o.limit as u64,
            format!(
                "the search stopped at the memory limit: it would have grown by {}, more than {}",
                size(o.grown),
                size(o.limit)
            ),
        )
    }
}

impl Ceiling {
    /// No limit (none set, or the counting allocator is not installed).
    pub(crate) const NONE: Ceiling = Ceiling {
        start: 0,
        limit: usize::MAX,
    };

    /// Whether `bytes` more may be allocated now.
    #[inline]
    pub(crate) fn admit(self, bytes: usize) -> Fits {
        if self.limit == usize::MAX {
            return Ok(());
        }
        self.admit_slow(bytes)
    }

    #[cold]
    #[inline(never)]
    fn admit_slow(self, bytes: usize) -> Fits {
        let used = crate::memory::allocated().unwrap_or(0);
        let grown = used.saturating_sub(self.start).saturating_add(bytes);
        if grown > self.limit {
            return Err(OverLimit {
                grown,
                limit: self.limit,
            });
        }
        Ok(())
    }

    /// Makes room for `additional` more elements in `v`, admitting the
    /// allocation first when `v` must grow (to at least twice its capacity,
    /// as `Vec` does).
    #[inline]
    pub(crate) fn reserve<T>(self, v: &mut Vec<T>, additional: usize) -> Fits {
        if v.capacity() - v.len() >= additional {
            return Ok(());
        }
        self.grow(v, additional)
    }

    #[cold]
    #[inline(never)]
    fn grow<T>(self, v: &mut Vec<T>, additional: usize) -> Fits {
        let want = (v.len().saturating_add(additional))
            .max(v.capacity().saturating_mul(2))
            .max(4);
        self.admit(want.saturating_mul(std::mem::size_of::<T>()))?;
        v.reserve_exact(want - v.len());
        Ok(())
    }

    /// Pushes `x` onto `v` (see [`Ceiling::reserve`]).
    #[inline]
    pub(crate) fn push<T>(self, v: &mut Vec<T>, x: T) -> Fits {
        self.reserve(v, 1)?;
        v.push(x);
        Ok(())
    }

    /// Admits the growth of a hash table of `len` entries of `entry` bytes
    /// and capacity `capacity` that is about to take one more: a table
    /// full to its capacity doubles its buckets (a byte of control data per
    /// bucket besides the entry).
    #[inline]
    pub(crate) fn room_in_table(self, len: usize, capacity: usize, entry: usize) -> Fits {
        if len < capacity {
            return Ok(());
        }
        let buckets = (capacity.saturating_add(1).saturating_mul(8) / 7)
            .max(4)
            .next_power_of_two();
        self.admit(buckets.saturating_mul(2).saturating_mul(entry + 1))
    }

    /// Inserts `k` into `set` (see [`Ceiling::room_in_table`]); whether it
    /// was new.
    #[inline]
    pub(crate) fn insert<K: std::hash::Hash + Eq>(self, set: &mut FxSet<K>, k: K) -> Fits<bool> {
        self.room_in_table(set.len(), set.capacity(), std::mem::size_of::<K>())?;
        Ok(set.insert(k))
    }

    /// Makes room for one more entry in `map` (see
    /// [`Ceiling::room_in_table`]).
    #[inline]
    pub(crate) fn room_in_map<K, V>(self, map: &FxMap<K, V>) -> Fits {
        self.room_in_table(map.len(), map.capacity(), std::mem::size_of::<(K, V)>())
    }
}

/// `bytes` for a message: in MiB from 1 MiB up, else in KiB.
fn size(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes.div_ceil(1 << 10))
    }
}

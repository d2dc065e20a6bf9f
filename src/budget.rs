//! Work budgets: every search counts its steps and stops with an error when
//! the budget runs out, instead of hanging or guessing.

use crate::error::{Error, ErrorKind, Result};

/// A countdown of work units.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    left: u64,
    what: &'static str,
    /// Bytes the search may add to what was in use when it started (see
    /// [`crate::memory`]), that starting point, and the units left at which
    /// memory is looked at next.
    max_memory: Option<usize>,
    memory_at_start: usize,
    next_memory_check: u64,
}

/// Work units between two looks at the memory in use.
const MEMORY_CHECK_EVERY: u64 = 1 << 16;

impl Budget {
    pub(crate) fn new(units: u64, what: &'static str) -> Budget {
        Budget {
            left: units,
            what,
            max_memory: None,
            memory_at_start: 0,
            next_memory_check: 0,
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
            self.left = 0;
            return Err(Error::new(
                ErrorKind::Budget,
                format!(
                    "{} ran out of its work budget (raise Config::budget to search longer)",
                    self.what
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
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!(
                    "{} stopped at the memory limit: it grew by {}, more than {} (raise \
                     Config::max_memory / --max-memory)",
                    self.what,
                    size(grown),
                    size(limit)
                ),
            ));
        }
        Ok(())
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

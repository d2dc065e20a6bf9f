//! Work budgets: every search counts its steps and stops with an error when
//! the budget runs out, instead of hanging or guessing.

use crate::error::{Error, ErrorKind, Result};

/// A countdown of work units.
#[derive(Clone, Debug)]
pub(crate) struct Budget {
    left: u64,
    what: &'static str,
}

impl Budget {
    pub(crate) fn new(units: u64, what: &'static str) -> Budget {
        Budget { left: units, what }
    }

    /// Spends `n` units.
    #[inline]
    pub(crate) fn spend(&mut self, n: u64) -> Result<()> {
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
}

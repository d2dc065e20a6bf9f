//! Data that cdiff does not ship (other people's grammars, data sets without
//! a licence, tokenizers of published models). It is looked for in the
//! folder named by the environment variable `CDIFF_SHARED`, else in
//! `../shared` beside the crate root. A test whose data is absent prints
//! that it is skipped and why, and returns.
//!
//! Used by the integration tests (`mod common;`) and, through `#[path]`, by
//! the library's unit tests.
#![allow(dead_code)]

use std::ffi::OsString;
use std::path::PathBuf;

/// The environment variable naming the folder of data not shipped.
pub const VAR: &str = "CDIFF_SHARED";

/// The folder of data not shipped: `$CDIFF_SHARED`, else `../shared`
/// relative to the crate root.
pub fn root() -> PathBuf {
    root_from(std::env::var_os(VAR))
}

/// [`root`] for a given value of `CDIFF_SHARED` (unset or empty: `../shared`).
pub fn root_from(var: Option<OsString>) -> PathBuf {
    match var {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared"),
    }
}

/// The folder `sub` (e.g. `grammars-public`; `""`: the folder itself) of
/// [`root`], or `None` after printing that `test` is skipped because it is
/// absent.
pub fn dir(sub: &str, test: &str) -> Option<PathBuf> {
    let d = if sub.is_empty() {
        root()
    } else {
        root().join(sub)
    };
    if d.is_dir() {
        Some(d)
    } else {
        println!("{}", skip_message(test, &d));
        None
    }
}

/// The line a skipped test prints.
pub fn skip_message(test: &str, absent: &std::path::Path) -> String {
    format!(
        "skipped: {test}: {} is absent (data not shipped with cdiff; set {VAR} to the folder that \
         holds it, default ../shared beside the crate)",
        absent.display()
    )
}

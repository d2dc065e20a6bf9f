//! cdiff: exact context-free constraints for diffusion and infilling language models.
//!
//! A *partial output* is text with holes, `x1 □ x2 □ … □ xn`. It is
//! *completable* for a grammar iff some fill of the holes gives a text whose
//! maximal-munch lexing is a word of the grammar. [`completable`](fn@completable) decides it
//! exactly and returns a witness completion; [`Constraint`] is the compiled
//! form for repeated checks.
//!
//! ```
//! use cdiff::{Constraint, Grammar, Partial};
//! let json = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None)?;
//! let c = Constraint::compile(&json)?;
//! let p = Partial::from_json(r#"["{\"a\": [1, ", null, "}"]"#)?;
//! let v = c.completable(&p)?;
//! let done = v.completion().expect("completable");
//! assert!(done.text.starts_with(b"{\"a\": [1, "));
//! # Ok::<(), cdiff::Error>(())
//! ```
#![deny(missing_docs)]

pub mod automata;
mod budget;
mod charts;
mod completable;
#[cfg(feature = "models")]
pub mod decode;
pub mod error;
#[cfg(feature = "models")]
pub mod eval;
#[doc(hidden)]
pub mod fuzzing;
pub mod grammar;
mod hash;
#[cfg(feature = "models")]
pub mod infill;
pub mod intersect;
pub mod jsontext;
pub mod lexer;
pub mod mask;
pub mod memory;
#[cfg(feature = "models")]
pub mod model;
mod partial;
pub mod recognize;
pub mod rng;
mod session;

/// Where the unit tests find data not shipped with cdiff (`CDIFF_SHARED`).
#[cfg(test)]
#[path = "../tests/common/shared.rs"]
mod test_shared;

/// The README's Rust blocks, compiled and run as doc tests (each is a
/// complete `src/main.rs` of a crate that depends on cdiff).
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme {}

pub use completable::{completable, Completion, Config, Constraint, Replaying, Verdict};
pub use error::{Error, ErrorKind, Exceeded, Limit, Result};
pub use grammar::Grammar;
pub use partial::{Partial, Segment};
pub use session::{Edit, Place, Session, SessionStats};

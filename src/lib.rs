//! cdiff: exact context-free constraints for diffusion and infilling language models.
#![deny(missing_docs)]

pub mod automata;
pub mod error;
pub mod grammar;
pub mod intersect;
pub mod lexer;
pub mod recognize;

pub use error::{Error, ErrorKind, Result};

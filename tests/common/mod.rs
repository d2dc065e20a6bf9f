pub mod brute;
pub mod cpp;
pub mod eval;
pub mod scratch;
pub mod shared;
pub mod swallow;
pub mod words;

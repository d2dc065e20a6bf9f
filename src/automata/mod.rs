//! Finite automata over bytes (for terminals) and over terminals (for partial outputs).
//!
//! The pipeline is the textbook one, specialised to what cdiff needs:
//!
//! 1. [`nfa`]: a terminal's regular expression (parsed by `regex-syntax` into its
//!    high-level IR) is compiled by Thompson's construction into an NFA over
//!    **bytes**. Unicode classes become UTF-8 byte sequences, so a language-model
//!    token that splits a multi-byte character is handled naturally. Many terminals
//!    share one NFA, each with its own accepting state tagged by the terminal.
//! 2. [`dfa`]: the subset construction turns the NFA into a dense DFA over byte
//!    equivalence classes (bytes no pattern distinguishes share a column). Each DFA
//!    state knows the *set* of terminals whose language contains the word read so far.
//! 3. [`minimize`]: Hopcroft's partition refinement, `O(k·n·log n)` for `n` states
//!    and `k` letters, shared by byte-level DFAs and the per-check DFAs over
//!    terminals built by the lexer.
//!
//! Every construction has a size limit; exceeding it is an
//! [`ErrorKind::SizeLimit`](crate::ErrorKind::SizeLimit) error, never a panic.

pub mod dfa;
pub mod minimize;
pub mod nfa;

pub use dfa::{ByteDfa, DEAD};
pub use nfa::{Nfa, StateId};

//! The one error type of the crate.
//!
//! Every fallible operation returns [`Error`]. An error carries a [`ErrorKind`]
//! (what went wrong, for programs) and a message (for people). Grammar errors
//! carry the `line:column` where the problem was found.

use std::fmt;

/// What kind of failure an [`Error`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The grammar text could not be parsed or is not well formed
    /// (unknown rule, recursive terminal, empty language, ...).
    Grammar,
    /// A terminal's regular expression is invalid or uses an unsupported feature.
    Regex,
    /// A partial output (or a JSON description of one) is malformed.
    Partial,
    /// A search ran out of its work budget before reaching an answer.
    Budget,
    /// An automaton or grammar exceeded a configured size limit.
    SizeLimit,
    /// Reading or writing a file failed.
    Io,
    /// A model could not be found, loaded or run (missing files, bad config,
    /// tokenizer mismatch, tensor errors).
    Model,
    /// A setting is out of range (a NaN temperature, `top_p` above 1, zero
    /// steps, a canvas too long for the attention's memory).
    Setting,
}

/// The error type of every fallible operation in `cdiff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    position: Option<(usize, usize)>,
}

impl Error {
    /// Creates an error of `kind` with a human-readable `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            position: None,
        }
    }

    /// Creates a grammar error located at 1-based `line` and `column`.
    pub fn grammar_at(line: usize, column: usize, message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Grammar,
            message: message.into(),
            position: Some((line, column)),
        }
    }

    /// Attaches a 1-based `line:column` position to this error.
    pub fn at(mut self, line: usize, column: usize) -> Error {
        self.position = Some((line, column));
        self
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message, without position.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The 1-based `(line, column)` in the grammar text, when known.
    pub fn position(&self) -> Option<(usize, usize)> {
        self.position
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            ErrorKind::Grammar => "grammar error",
            ErrorKind::Regex => "regex error",
            ErrorKind::Partial => "bad partial output",
            ErrorKind::Budget => "budget exhausted",
            ErrorKind::SizeLimit => "size limit exceeded",
            ErrorKind::Io => "i/o error",
            ErrorKind::Model => "model error",
            ErrorKind::Setting => "invalid setting",
        };
        match self.position {
            Some((l, c)) => write!(f, "{what} at {l}:{c}: {}", self.message),
            None => write!(f, "{what}: {}", self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Shorthand for results whose error is [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

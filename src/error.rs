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

/// A limit of [`Config`](crate::Config) (or of the `cdiff` command line) that
/// an operation reached; see [`Error::exceeded`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Limit {
    /// Work units of one check ([`Config::budget`](crate::Config::budget),
    /// `--budget`).
    Budget,
    /// Bytes one check may add to the memory in use
    /// ([`Config::max_memory`](crate::Config::max_memory), `--max-memory`).
    Memory,
    /// Terminals of a witness
    /// ([`Config::max_witness_terminals`](crate::Config::max_witness_terminals),
    /// `--max-witness-terminals`).
    WitnessTerminals,
    /// Bytes of a witness's fills
    /// ([`Config::max_witness_bytes`](crate::Config::max_witness_bytes),
    /// `--max-witness-bytes`).
    WitnessBytes,
    /// States of the grammar's lexer automaton
    /// ([`Config::lexer_states`](crate::Config::lexer_states)).
    LexerStates,
    /// States of one partial output's terminal automaton
    /// ([`Config::partial_states`](crate::Config::partial_states)).
    PartialStates,
}

impl Limit {
    /// How to raise it: the setting and, where there is one, the flag.
    pub fn setting(self) -> &'static str {
        match self {
            Limit::Budget => "Config::budget / --budget",
            Limit::Memory => "Config::max_memory / --max-memory",
            Limit::WitnessTerminals => "Config::max_witness_terminals / --max-witness-terminals",
            Limit::WitnessBytes => "Config::max_witness_bytes / --max-witness-bytes",
            Limit::LexerStates => "Config::lexer_states",
            Limit::PartialStates => "Config::partial_states",
        }
    }
}

/// What an operation needed of a [`Limit`] when it stopped: `used` (what it
/// had used, or at least needed) went past `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exceeded {
    /// The limit reached.
    pub which: Limit,
    /// What was used or needed, in the limit's unit (work units, bytes,
    /// terminals, states); at least `limit`.
    pub used: u64,
    /// The limit's value.
    pub limit: u64,
}

/// The error type of every fallible operation in `cdiff`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    position: Option<(usize, usize)>,
    exceeded: Option<Exceeded>,
}

impl Error {
    /// Creates an error of `kind` with a human-readable `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            position: None,
            exceeded: None,
        }
    }

    /// An error for `which` limit reached (`used` past `limit`):
    /// [`ErrorKind::Budget`] for the work budget, else
    /// [`ErrorKind::SizeLimit`]. The message says how to raise it.
    pub(crate) fn limit(which: Limit, used: u64, limit: u64, message: impl Into<String>) -> Error {
        let kind = match which {
            Limit::Budget => ErrorKind::Budget,
            _ => ErrorKind::SizeLimit,
        };
        Error {
            kind,
            message: format!("{} (raise {})", message.into(), which.setting()),
            position: None,
            exceeded: Some(Exceeded {
                which,
                used: used.max(limit),
                limit,
            }),
        }
    }

    /// Creates a grammar error located at 1-based `line` and `column`.
    pub fn grammar_at(line: usize, column: usize, message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::Grammar,
            message: message.into(),
            position: Some((line, column)),
            exceeded: None,
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

    /// The configured limit this error reports, with what was needed: a
    /// program can raise that setting and try again.
    ///
    /// ```
    /// use cdiff::{Config, Constraint, Grammar, Limit, Partial};
    ///
    /// let g = Grammar::from_lark(r#"start: "a"+"#, None)?;
    /// let c = Constraint::with_config(&g, Config { budget: 3, ..Config::default() })?;
    /// let e = c.check(&Partial::new().text("aa").hole()).unwrap_err();
    /// let exceeded = e.exceeded().expect("a limit");
    /// assert_eq!((exceeded.which, exceeded.limit), (Limit::Budget, 3));
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    pub fn exceeded(&self) -> Option<Exceeded> {
        self.exceeded
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

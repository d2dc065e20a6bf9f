//! The command-line interface: argument definitions ([`args`]), one module per
//! command, and the error type every command returns.

mod args;
mod bench;
mod check;
#[cfg(feature = "models")]
mod decode_cmd;
#[cfg(feature = "models")]
mod eval_cmd;
#[cfg(feature = "models")]
mod eval_dlm;
mod grammar_cmd;
#[cfg(feature = "models")]
mod infill_cmd;
mod jsonobj;
#[cfg(feature = "models")]
mod train_cmd;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Parser;

use cdiff::{Config, Constraint, Grammar};

/// Parses the command line and runs the command.
///
/// Help, version and usage errors are reported by clap itself (exit code 0
/// for help and version, 2 for usage errors).
pub fn run() -> Result<(), CliError> {
    let cli = match args::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = e.exit_code();
            // Printing help to a closed pipe is not worth reporting.
            let _ = e.print();
            return if code == 0 {
                Ok(())
            } else {
                Err(CliError::Usage)
            };
        }
    };
    match cli.command {
        args::Command::Check(a) => check::run(&a),
        args::Command::Grammar(a) => grammar_cmd::run(&a),
        args::Command::Bench(a) => bench::run(&a),
        #[cfg(feature = "models")]
        args::Command::Decode(a) => decode_cmd::run(&a),
        #[cfg(feature = "models")]
        args::Command::InitRandom(a) => decode_cmd::init(&a),
        #[cfg(feature = "models")]
        args::Command::Infill(a) => infill_cmd::run(&a),
        #[cfg(feature = "models")]
        args::Command::Train(a) => train_cmd::run(&a),
        #[cfg(feature = "models")]
        args::Command::Eval(a) => eval_cmd::run(&a),
    }
}

/// Everything that can make a command fail.
#[derive(Debug)]
pub enum CliError {
    /// A library error (grammar, partial output, budget, size limit, ...),
    /// with the file it concerns when there is one.
    Lib {
        /// The file the error is about, if any.
        path: Option<PathBuf>,
        /// The library error.
        error: cdiff::Error,
    },
    /// Reading an input file failed.
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        error: io::Error,
    },
    /// Writing the output failed (a closed pipe is not reported).
    Write(io::Error),
    /// One line of a JSON-lines input is malformed or its check failed.
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// Bad input that is neither a file nor a library error.
    Input(String),
    /// The answer of the engine is wrong (a benchmark found a non-completable
    /// case that must be completable, or disagreement with the recognizer).
    Wrong(String),
    /// Clap already reported a usage error.
    Usage,
}

impl CliError {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Wrong(_) => 1,
            _ => 2,
        }
    }

    /// Whether this is a write to a closed pipe (`cdiff ... | head`), which
    /// ends the program quietly and successfully.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, CliError::Write(e) if e.kind() == io::ErrorKind::BrokenPipe)
    }

    /// Whether the message was already printed (clap's usage errors).
    pub fn is_reported(&self) -> bool {
        matches!(self, CliError::Usage)
    }

    /// A library error about `path`.
    pub fn lib(path: &Path, error: cdiff::Error) -> CliError {
        CliError::Lib {
            path: Some(path.to_path_buf()),
            error,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Lib { path, error } => {
                if let Some(p) = path {
                    write!(f, "{}: ", p.display())?;
                }
                write!(f, "{}", one_line(&error.to_string()))?;
                if error.kind() == cdiff::ErrorKind::Budget {
                    write!(f, " (see --budget)")?;
                }
                Ok(())
            }
            CliError::Read { path, error } => {
                write!(f, "cannot read {}: {}", path.display(), error)
            }
            CliError::Write(e) => write!(f, "cannot write output: {e}"),
            CliError::Line {
                path,
                line,
                message,
            } => write!(f, "{}: line {line}: {}", path.display(), one_line(message)),
            CliError::Input(m) | CliError::Wrong(m) => write!(f, "{}", one_line(m)),
            CliError::Usage => write!(f, "usage error"),
        }
    }
}

impl std::error::Error for CliError {}

impl From<cdiff::Error> for CliError {
    fn from(error: cdiff::Error) -> CliError {
        CliError::Lib { path: None, error }
    }
}

/// Keeps an error message on one line.
fn one_line(s: &str) -> String {
    if s.contains(['\n', '\r']) {
        s.split(['\n', '\r'])
            .filter(|l| !l.trim().is_empty())
            .collect::<Vec<_>>()
            .join(" / ")
    } else {
        s.to_string()
    }
}

/// Reads a whole file as bytes.
fn read_bytes(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|error| CliError::Read {
        path: path.to_path_buf(),
        error,
    })
}

/// Reads a whole file as UTF-8 text.
fn read_text(path: &Path) -> Result<String, CliError> {
    let bytes = read_bytes(path)?;
    String::from_utf8(bytes).map_err(|e| CliError::Read {
        path: path.to_path_buf(),
        error: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not valid UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        ),
    })
}

/// Reads and parses a grammar file: GBNF for `.gbnf`, the Lark dialect otherwise.
fn load_grammar(path: &Path, start: Option<&str>) -> Result<Grammar, CliError> {
    let src = read_text(path)?;
    let g = Grammar::from_file_text(&path.to_string_lossy(), &src, start)
        .map_err(|e| CliError::lib(path, e))?;
    for name in g.ignored_but_used() {
        eprintln!(
            "cdiff: warning: {}: terminal {name} is %ignore'd, so the rules that name it can never see it",
            path.display()
        );
    }
    Ok(g)
}

/// The library configuration, with the work budget overridden if asked.
/// The memory one check may add at the command line (`--max-memory`).
const DEFAULT_MAX_MEMORY: usize = 4 << 30;

/// The library's limits, with those given on the command line.
fn config(limits: Option<&args::LimitArgs>) -> Config {
    let mut c = Config {
        max_memory: Some(DEFAULT_MAX_MEMORY),
        ..Config::default()
    };
    let Some(l) = limits else {
        return c;
    };
    c.shortest_witness = !l.first_witness;
    c.count_swallowed = !l.witness_may_swallow;
    if let Some(e) = l.witness_effort {
        c.witness_effort = e;
        c.canvas_witness_effort = e;
    }
    if let Some(m) = l.max_memory {
        c.max_memory = (m > 0).then_some(m);
    }
    if let Some(b) = l.budget {
        c.budget = b;
    }
    if let Some(n) = l.max_witness_terminals {
        c.max_witness_terminals = n;
    }
    if let Some(n) = l.max_witness_bytes {
        c.max_witness_bytes = n;
    }
    c
}

/// Compiles a grammar, returning the constraint and the compile time.
fn compile(
    path: &Path,
    g: &Grammar,
    config: &Config,
) -> Result<(Constraint, std::time::Duration), CliError> {
    let t = Instant::now();
    let c = Constraint::with_config(g, config.clone()).map_err(|e| CliError::lib(path, e))?;
    Ok((c, t.elapsed()))
}

/// Microseconds as a float with nanosecond resolution.
fn micros(d: std::time::Duration) -> f64 {
    d.as_nanos() as f64 / 1000.0
}

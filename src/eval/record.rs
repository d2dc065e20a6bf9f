//! Result records: one JSON line per (instance, mode, seed), appended and
//! flushed as each finishes, so that a run can be resumed (records already
//! in the file are skipped) and shards can be merged.

use std::cmp::Ordering;
use std::collections::HashSet;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};

/// One result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The instance (`CPP/12_spans_2`, `JME_3`, `sample/17`).
    pub instance_id: String,
    /// The task (`mri-cpp`, `mri-cpp-lines`, `json`, `smiles`).
    pub task: String,
    /// The model as given to `--model` (`gold` for the oracle).
    pub model: String,
    /// `vanilla`, `con-minus`, `con` or `gp`.
    pub mode: String,
    /// The decoding seed.
    pub seed: u64,
    /// Regions (spans or lines) removed from the instance.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number_spans: Option<usize>,
    /// The output judged: for MRI the filled solution; for the DLM tasks
    /// the generated text.
    pub text: String,
    /// One fill per region.
    #[serde(default)]
    pub fills: Vec<String>,
    /// In the grammar, by cdiff's recognizer (MRI: the declaration followed
    /// by the filled solution; JSON: the schema's grammar, and serde_json
    /// parses the text).
    pub syntax_ok: bool,
    /// JSON: valid under the instance's schema by the `jsonschema` crate
    /// (`null`: not a JSON task).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema_ok: Option<bool>,
    /// Accepted by `g++ -std=c++17 -fsyntax-only` (`null`: not run).
    #[serde(default)]
    pub gxx_syntax_ok: Option<bool>,
    /// MRI: compiled with the test and exited with code 0; JSON:
    /// schema-valid and equal to the gold value; SMILES: the same molecule
    /// as the gold (`null`: not run).
    #[serde(default)]
    pub functional_ok: Option<bool>,
    /// What happened when compiled and run (`pass`, `exit 1: ...`,
    /// `compile error: ...`, `run timeout`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub functional_status: Option<String>,
    /// Tokens the model generated and that were kept (DLM tasks: the
    /// tokens committed on the canvas, end-of-text padding included).
    pub tokens: usize,
    /// Milliseconds in the model.
    pub ms_model: f64,
    /// Milliseconds in the constraint (checks and witness).
    pub ms_constraint: f64,
    /// The part of `ms_constraint` spent on the witness completion `con`
    /// finished from (absent in older records).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms_witness: Option<f64>,
    /// Milliseconds of the whole generation.
    #[serde(default)]
    pub ms_total: f64,
    /// Tokens rejected by the constraint.
    pub rejections: usize,
    /// `con` finished from the witness completion.
    pub used_witness: bool,
    /// `con-minus` gave up (or the template was not completable).
    pub gave_up: bool,
    /// Why this record has no real output (a model error); it then counts
    /// as wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Productions of the instance grammar's normal form (the size the
    /// paper's Fig. 7 plots the overhead against); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar_productions: Option<usize>,
    /// Fields this version does not know, kept through merges.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// What identifies a record: (task, instance, model, mode, seed).
pub type Key = (String, String, String, String, u64);

impl Record {
    /// The record's key.
    pub fn key(&self) -> Key {
        (
            self.task.clone(),
            self.instance_id.clone(),
            self.model.clone(),
            self.mode.clone(),
            self.seed,
        )
    }

    /// The record as one JSON line (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// Records of a file and the lines that are not records.
#[derive(Clone, Debug, Default)]
pub struct ReadResult {
    /// The records, in file order.
    pub records: Vec<Record>,
    /// `(1-based line number, message)` of each line that is not a record.
    pub bad_lines: Vec<(usize, String)>,
}

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Io, format!("{}: {e}", path.display()))
}

/// Reads a results file (a missing file has no records).
///
/// # Errors
/// [`ErrorKind::Io`]: the file exists but cannot be read.
pub fn read_records(path: &Path) -> Result<ReadResult> {
    let text = match std::fs::read(path) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io_err(path, e)),
    };
    let mut out = ReadResult::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(r) => out.records.push(r),
            Err(e) => out.bad_lines.push((i + 1, e.to_string())),
        }
    }
    Ok(out)
}

/// Opens `path` to append records. With `resume`, an unfinished last line
/// (a run killed while writing) is cut off and the keys of the records
/// already there are returned; without it, a file that already holds
/// anything is an error.
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be opened, read or truncated, or
/// (without `resume`) is not empty.
pub fn open_for_append(path: &Path, resume: bool) -> Result<(std::fs::File, HashSet<Key>)> {
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(|e| io_err(path, e))?;
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes).map_err(|e| io_err(path, e))?;
    if !resume {
        if bytes.iter().any(|b| !b.is_ascii_whitespace()) {
            return Err(io_err(
                path,
                "the results file already holds records: pass --resume to continue it, or remove it",
            ));
        }
        return Ok((f, HashSet::new()));
    }
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        f.set_len(keep as u64).map_err(|e| io_err(path, e))?;
        f.seek(SeekFrom::End(0)).map_err(|e| io_err(path, e))?;
        bytes.truncate(keep);
    }
    let keys = String::from_utf8_lossy(&bytes)
        .lines()
        .filter_map(|l| serde_json::from_str::<Record>(l).ok())
        .map(|r| r.key())
        .collect();
    Ok((f, keys))
}

/// Appends one record as a line and flushes it.
///
/// # Errors
/// [`ErrorKind::Io`]: the write fails.
pub fn append(out: &mut impl Write, r: &Record) -> Result<()> {
    writeln!(out, "{}", r.to_line())
        .and_then(|()| out.flush())
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot write a record: {e}")))
}

/// Rank of a mode name in tables and merged files.
pub fn mode_rank(mode: &str) -> usize {
    match mode {
        "vanilla" => 0,
        "con-minus" => 1,
        "con" => 2,
        "gp" => 3,
        _ => 4,
    }
}

/// Compares strings with digit runs as numbers (`CPP/9` < `CPP/10`).
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let nb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (da, db) = (&a[..na], &b[..nb]);
                let strip = |d: &[u8]| -> usize { d.iter().take_while(|&&c| c == b'0').count() };
                let (ta, tb) = (&da[strip(da)..], &db[strip(db)..]);
                let o = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb));
                if o != Ordering::Equal {
                    return o;
                }
                a = &a[na..];
                b = &b[nb..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}

/// The canonical order of records: task, model, instance (natural order),
/// mode (vanilla, con-minus, con), seed — the order of an unsharded run of
/// one task and model.
pub fn canonical_cmp(a: &Record, b: &Record) -> Ordering {
    a.task
        .cmp(&b.task)
        .then_with(|| a.model.cmp(&b.model))
        .then_with(|| natural_cmp(&a.instance_id, &b.instance_id))
        .then_with(|| mode_rank(&a.mode).cmp(&mode_rank(&b.mode)))
        .then_with(|| a.mode.cmp(&b.mode))
        .then_with(|| a.seed.cmp(&b.seed))
}

/// Merges record lists: the first record of each key wins (files in the
/// order given), and the result is in [`canonical_cmp`] order (stable).
/// Returns the records and how many duplicates were dropped.
pub fn merge(lists: Vec<Vec<Record>>) -> (Vec<Record>, usize) {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    let mut dups = 0;
    for r in lists.into_iter().flatten() {
        if seen.insert(r.key()) {
            out.push(r);
        } else {
            dups += 1;
        }
    }
    out.sort_by(canonical_cmp);
    (out, dups)
}

//! Task instances: multi-region infilling (MRI) on HumanEval-X C++, made
//! from the canonical solutions as in Mündler et al. (arXiv 2508.10111,
//! App. D.3), with the fields of the published data set
//! `eth-sri/HumanEval-MRI-Cpp`.
//!
//! * [`MriKind::Spans`] (`mri-cpp`): `n` random spans of
//!   [`MIN_SPAN`]–[`MAX_SPAN`] characters are removed from the canonical
//!   solution. Each span's size and position are drawn at most
//!   [`SPAN_DRAWS`] times until it neither overlaps nor touches an earlier
//!   one (at least one character stays between two regions); a solution
//!   where some span finds no place is dropped.
//! * [`MriKind::Lines`] (`mri-cpp-lines`): `n` distinct non-blank lines are
//!   removed (their text, indentation included, not their line breaks);
//!   adjacent removed lines are merged into one region.
//!
//! Everything is deterministic: the generator of an instance is seeded from
//! the data seed, the task id, the kind and `n` ([`instance_rng`]), so an
//! instance does not depend on which other instances were made, dropped or
//! skipped (`--limit`, `--shard`).

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind, Result};
use crate::infill::Template;
use crate::rng::SplitMix64;

/// Shortest removed span, in characters.
pub const MIN_SPAN: usize = 5;
/// Longest removed span, in characters.
pub const MAX_SPAN: usize = 100;
/// Draws of a span's size and position before the instance is dropped.
pub const SPAN_DRAWS: usize = 3;

/// One problem of HumanEval-X C++ (`datasets/humaneval-x-cpp`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HumanEvalRow {
    /// `CPP/0` ... `CPP/163`.
    pub task_id: String,
    /// Docstring comment, includes and the signature.
    pub prompt: String,
    /// Includes and the signature (without the docstring).
    pub declaration: String,
    /// The function body and closing brace (sometimes helpers after it).
    pub canonical_solution: String,
    /// A `main` with the assertions.
    pub test: String,
}

/// Reads a HumanEval-X JSON-lines file (blank lines skipped).
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be read, or a line is not a row.
pub fn read_humaneval(path: &Path) -> Result<Vec<HumanEvalRow>> {
    read_jsonl(path)
}

/// Reads a JSON-lines file of `T` (blank lines skipped).
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be read, or a line does not parse as `T`.
pub fn read_jsonl<T: serde::de::DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Io,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v = serde_json::from_str(line).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("{}: line {}: {e}", path.display(), i + 1),
            )
        })?;
        out.push(v);
    }
    Ok(out)
}

/// How regions are cut out of a solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MriKind {
    /// Random spans of [`MIN_SPAN`]–[`MAX_SPAN`] characters (`mri-cpp`).
    Spans,
    /// Whole lines, adjacent ones merged (`mri-cpp-lines`).
    Lines,
}

impl MriKind {
    /// The task name of `cdiff eval run --task`.
    pub fn task_name(self) -> &'static str {
        match self {
            MriKind::Spans => "mri-cpp",
            MriKind::Lines => "mri-cpp-lines",
        }
    }

    /// The word in instance ids (`CPP/0_spans_2`, `CPP/0_lines_2`).
    pub fn slug(self) -> &'static str {
        match self {
            MriKind::Spans => "spans",
            MriKind::Lines => "lines",
        }
    }
}

/// One MRI instance, with the fields of `eth-sri/HumanEval-MRI-Cpp` and the
/// HumanEval-X `test`.
///
/// `splits` and `removed_spans` interleave to the canonical solution:
/// `splits[0] + removed_spans[0] + splits[1] + … + splits[n]`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MriInstance {
    /// `{task_id}_{spans|lines}_{n}`, e.g. `CPP/12_spans_2`.
    pub instance_id: String,
    /// Spans (or lines) removed.
    pub number_spans: usize,
    /// The HumanEval-X prompt (docstring, includes, signature).
    pub prompt: String,
    /// The HumanEval-X declaration (includes, signature).
    pub declaration: String,
    /// The fixed chunks of the solution, one more than the regions.
    pub splits: Vec<String>,
    /// The removed text of each region.
    pub removed_spans: Vec<String>,
    /// The whole solution.
    pub canonical_solution: String,
    /// The HumanEval-X test `main` (empty when the data has none).
    #[serde(default)]
    pub test: String,
}

impl MriInstance {
    /// The HumanEval-X task id: the instance id up to its first `_`.
    pub fn task_id(&self) -> &str {
        self.instance_id
            .split_once('_')
            .map_or(&self.instance_id, |(t, _)| t)
    }

    /// The template the model fills: the prompt (docstring, includes,
    /// signature) and the splits as chunks, the removed spans as regions,
    /// as in the reference implementation of Mündler et al.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`]: no region (no removed span).
    pub fn template(&self) -> Result<Template> {
        let mut chunks: Vec<Vec<u8>> = self.splits.iter().map(|s| s.as_bytes().to_vec()).collect();
        if let Some(first) = chunks.first_mut() {
            let mut c = self.prompt.as_bytes().to_vec();
            c.extend_from_slice(first);
            *first = c;
        }
        Template::new(chunks)
    }

    /// The solution with region `i` filled by `fills[i]` (missing fills empty).
    pub fn solution(&self, fills: &[String]) -> String {
        let mut out = String::new();
        for (i, s) in self.splits.iter().enumerate() {
            if i > 0 {
                out.push_str(fills.get(i - 1).map_or("", String::as_str));
            }
            out.push_str(s);
        }
        out
    }

    /// Whether splits and removed spans interleave to the canonical solution.
    pub fn is_consistent(&self) -> bool {
        self.splits.len() == self.removed_spans.len() + 1
            && self.solution(&self.removed_spans) == self.canonical_solution
    }
}

/// The generator of one instance: a function of the data seed, the task
/// id, the kind and `n` only.
pub fn instance_rng(data_seed: u64, task_id: &str, kind: MriKind, n: usize) -> SplitMix64 {
    // FNV-1a over the task id, then mixed with the rest.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in task_id.bytes() {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    let k = match kind {
        MriKind::Spans => 1u64,
        MriKind::Lines => 2,
    };
    let mut mix = SplitMix64::new(data_seed ^ h.rotate_left(17) ^ (k << 56) ^ (n as u64) << 48);
    SplitMix64::new(mix.next_u64())
}

/// Byte offsets of the character boundaries of `text` (its length last).
fn char_bounds(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

/// Cuts `removed` (sorted, disjoint byte ranges) out of `text`.
fn cut(text: &str, removed: &[(usize, usize)]) -> (Vec<String>, Vec<String>) {
    let mut splits = Vec::with_capacity(removed.len() + 1);
    let mut spans = Vec::with_capacity(removed.len());
    let mut pos = 0;
    for &(s, e) in removed {
        splits.push(text[pos..s].to_string());
        spans.push(text[s..e].to_string());
        pos = e;
    }
    splits.push(text[pos..].to_string());
    (splits, spans)
}

/// Removes `n` random spans of [`MIN_SPAN`]–[`MAX_SPAN`] characters from
/// `text` (see the module docs): `(splits, removed_spans)`, or `None` when
/// some span finds no place in [`SPAN_DRAWS`] draws.
pub fn remove_spans(
    text: &str,
    n: usize,
    rng: &mut SplitMix64,
) -> Option<(Vec<String>, Vec<String>)> {
    let bounds = char_bounds(text);
    let len = bounds.len() - 1;
    if n == 0 || len < MIN_SPAN {
        return None;
    }
    let max = MAX_SPAN.min(len);
    // In characters: [start, end).
    let mut spans: Vec<(usize, usize)> = Vec::with_capacity(n);
    for _ in 0..n {
        let mut placed = false;
        for _ in 0..SPAN_DRAWS {
            let l = MIN_SPAN + rng.below((max - MIN_SPAN + 1) as u64) as usize;
            let s = rng.below((len - l + 1) as u64) as usize;
            let e = s + l;
            // Neither overlapping nor touching: a character stays between.
            if spans.iter().all(|&(a, b)| e < a || s > b) {
                spans.push((s, e));
                placed = true;
                break;
            }
        }
        if !placed {
            return None;
        }
    }
    spans.sort_unstable();
    let bytes: Vec<(usize, usize)> = spans.iter().map(|&(s, e)| (bounds[s], bounds[e])).collect();
    Some(cut(text, &bytes))
}

/// Removes `n` distinct random non-blank lines of `text` (their text, not
/// their line breaks), adjacent ones merged into one region: `(splits,
/// removed_spans)`, or `None` when `text` has fewer than `n` non-blank lines.
pub fn remove_lines(
    text: &str,
    n: usize,
    rng: &mut SplitMix64,
) -> Option<(Vec<String>, Vec<String>)> {
    // Byte ranges of the lines, without their '\n'.
    let mut lines = Vec::new();
    let mut start = 0;
    for (i, b) in text.bytes().enumerate() {
        if b == b'\n' {
            lines.push((start, i));
            start = i + 1;
        }
    }
    if start < text.len() {
        lines.push((start, text.len()));
    }
    let mut eligible: Vec<usize> = (0..lines.len())
        .filter(|&i| !text[lines[i].0..lines[i].1].trim().is_empty())
        .collect();
    if n == 0 || eligible.len() < n {
        return None;
    }
    // Partial Fisher-Yates: the first n are a uniform sample.
    for i in 0..n {
        let j = i + rng.below((eligible.len() - i) as u64) as usize;
        eligible.swap(i, j);
    }
    let mut chosen = eligible[..n].to_vec();
    chosen.sort_unstable();
    let mut removed: Vec<(usize, usize)> = Vec::new();
    let mut prev: Option<usize> = None;
    for &i in &chosen {
        match (prev, removed.last_mut()) {
            (Some(p), Some(last)) if p + 1 == i => last.1 = lines[i].1,
            _ => removed.push(lines[i]),
        }
        prev = Some(i);
    }
    Some(cut(text, &removed))
}

/// Makes the MRI instances of `rows` with `n` regions of `kind`, seeded by
/// `data_seed`. A row is dropped when `accepts(prompt + canonical_solution)`
/// is false (the grammar rejects the solution in its template), or when no
/// cut fits.
pub fn make_mri(
    rows: &[HumanEvalRow],
    kind: MriKind,
    n: usize,
    data_seed: u64,
    mut accepts: impl FnMut(&str) -> bool,
) -> Vec<MriInstance> {
    let mut out = Vec::new();
    for r in rows {
        let sol = &r.canonical_solution;
        if !accepts(&format!("{}{sol}", r.prompt)) {
            continue;
        }
        let mut rng = instance_rng(data_seed, &r.task_id, kind, n);
        let cutout = match kind {
            MriKind::Spans => remove_spans(sol, n, &mut rng),
            MriKind::Lines => remove_lines(sol, n, &mut rng),
        };
        let Some((splits, removed_spans)) = cutout else {
            continue;
        };
        out.push(MriInstance {
            instance_id: format!("{}_{}_{n}", r.task_id, kind.slug()),
            number_spans: n,
            prompt: r.prompt.clone(),
            declaration: r.declaration.clone(),
            splits,
            removed_spans,
            canonical_solution: sol.clone(),
            test: r.test.clone(),
        });
    }
    out
}

/// The text a filled solution is judged in: `head + solution`, where
/// `head` is the instance's declaration, or its prompt when `accepts`
/// rejects `declaration + canonical_solution` (HumanEval-X's `CPP/38`,
/// whose declaration field is a cut-off solution).
pub fn judged_head(inst: &MriInstance, mut accepts: impl FnMut(&str) -> bool) -> &str {
    if accepts(&format!("{}{}", inst.declaration, inst.canonical_solution)) {
        &inst.declaration
    } else {
        &inst.prompt
    }
}

/// One instance of C++ generation with a diffusion LM (`dlm-cpp`): a
/// HumanEval-X problem as an instruction and a prefilled signature.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DlmCppInstance {
    /// The HumanEval-X task id (`CPP/12`).
    pub instance_id: String,
    /// The instruction: the text of the comment before the function (its
    /// docstring), without the comment markers.
    pub input: String,
    /// The prompt without that comment: includes, helpers, the signature.
    /// The model's answer continues it.
    pub prefill: String,
    /// The gold continuation.
    pub canonical_solution: String,
    /// The HumanEval-X test `main`.
    pub test: String,
}

/// Splits a HumanEval-X prompt into the instruction (the text of its last
/// `/* ... */` comment, else of its last run of `//` lines) and the prompt
/// without that comment.
pub fn split_instruction(prompt: &str) -> (String, String) {
    if let Some(s) = prompt.rfind("/*") {
        if let Some(len) = prompt[s..].find("*/") {
            let e = s + len + 2;
            let body = prompt[s + 2..e - 2].trim().to_string();
            // Drop the comment's line break too when it ends a line.
            let rest_start = if prompt[e..].starts_with('\n') {
                e + 1
            } else {
                e
            };
            return (body, format!("{}{}", &prompt[..s], &prompt[rest_start..]));
        }
    }
    // The last run of `//` lines.
    let lines: Vec<&str> = prompt.split_inclusive('\n').collect();
    let is_comment = |l: &str| l.trim_start().starts_with("//");
    if let Some(last) = lines.iter().rposition(|l| is_comment(l)) {
        let mut first = last;
        while first > 0 && is_comment(lines[first - 1]) {
            first -= 1;
        }
        let body: Vec<&str> = lines[first..=last]
            .iter()
            .map(|l| l.trim_start().trim_start_matches('/').trim())
            .collect();
        let rest: String = lines[..first].concat() + &lines[last + 1..].concat();
        return (body.join("\n"), rest);
    }
    (String::new(), prompt.to_string())
}

/// The `dlm-cpp` instances of `rows`, in their order. A row is dropped when
/// `accepts(prefill + canonical_solution)` is false (the grammar rejects
/// the gold program).
pub fn make_dlm_cpp(
    rows: &[HumanEvalRow],
    mut accepts: impl FnMut(&str) -> bool,
) -> Vec<DlmCppInstance> {
    rows.iter()
        .filter_map(|r| {
            let (input, prefill) = split_instruction(&r.prompt);
            accepts(&format!("{prefill}{}", r.canonical_solution)).then(|| DlmCppInstance {
                instance_id: r.task_id.clone(),
                input,
                prefill,
                canonical_solution: r.canonical_solution.clone(),
                test: r.test.clone(),
            })
        })
        .collect()
}

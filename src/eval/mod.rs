//! The evaluation of Mündler et al., "Constrained Decoding of Diffusion LLMs
//! with Context-Free Grammars" (arXiv 2508.10111): what constraining buys on
//! a given model, as syntactic and functional correctness of its outputs
//! and the time the constraint costs (`cdiff eval`).
//!
//! # Procedure (multi-region infilling, their §5 and App. D.3)
//!
//! (The DLM tasks follow below.)
//!
//! 1. **Instances** ([`tasks`]). For each of the 164 HumanEval-X C++
//!    problems whose `prompt + canonical_solution` `grammars/cpp.ebnf`
//!    accepts, `n` ∈ {1, 2, 3} random spans of 5–100 characters are removed
//!    from the canonical solution (`mri-cpp`; each span's size and position
//!    drawn at most 3 times until it fits beside the earlier ones, else the
//!    instance is dropped), or `n` random non-blank lines (`mri-cpp-lines`,
//!    adjacent lines merged into one region, their Table 7). Instances have
//!    the fields of the published `eth-sri/HumanEval-MRI-Cpp`
//!    (`instance_id, number_spans, prompt, declaration, splits,
//!    removed_spans, canonical_solution`) plus the HumanEval-X `test`, and
//!    are a deterministic function of a data seed.
//! 2. **Generation.** The template is the prompt (docstring, includes,
//!    signature) followed by the splits, with one region per removed span
//!    ([`tasks::MriInstance::template`]); an infilling model fills it
//!    ([`crate::infill`]) in each mode (`vanilla`, `con-minus`, `con`) and
//!    seed. The oracle `gold` fills each region with the removed text and
//!    validates the harness.
//! 3. **Metrics** ([`metrics`]). The program judged is `declaration +
//!    filled solution` (for HumanEval-X's `CPP/38`, whose declaration field
//!    is malformed, `prompt + filled solution`). Syntax: cdiff's independent
//!    recognizer for the grammar ([`crate::recognize`]), and `g++ -std=c++17
//!    -fsyntax-only` as a judge that shares nothing with cdiff. Functional:
//!    the program followed by the test `main` is compiled with `g++
//!    -std=c++17` (`-lcrypto` where OpenSSL is included) and run; it passes
//!    iff it exits with code 0 (time limits, temporary directories removed).
//! 4. **Records** ([`record`]). One JSON line per (instance, mode, seed),
//!    appended and flushed as it finishes, so runs resume and shards merge.
//! 5. **Report** ([`report`]). Markdown tables in the paper's layout: rates
//!    per model × mode as mean ± 95 % CI over seeds, the constraint's
//!    overhead per generated token, rejections and witness use.
//!
//! # Procedure (the DLM tasks, their §5: C++, JSON and SMILES)
//!
//! 1. **Instances.** `dlm-cpp` ([`tasks::DlmCppInstance`]): the 164
//!    HumanEval-X C++ problems; the input (instruction) is the text of the
//!    docstring comment before the function, the prefill is the prompt
//!    without that comment (includes, helpers, the signature), which the
//!    answer continues. `json` ([`json`]): `{instance_id, input, schema,
//!    output}` as `eth-sri/json-mode-eval-extended`, read from a file, or by
//!    default the 100 shipped NousResearch json-mode-eval schemas with their
//!    gold completions (empty input: the files hold no prompt). `smiles`
//!    ([`smiles`]): `{instance_id, input, output}` as `eth-sri/smiles-eval`,
//!    read from a file, or by default the 500 molecules of
//!    `datasets/smiles/sample.smi` with empty inputs, in an order drawn from
//!    the data seed (so `--limit` takes a deterministic sample).
//! 2. **Generation.** A diffusion LM decodes one answer
//!    ([`crate::decode::decode`]) under the instance's grammar — for
//!    `dlm-cpp` `grammars/cpp.ebnf` over prefill and answer, for `json`
//!    the grammar of its schema ([`crate::grammar::json_schema_to_grammar`],
//!    keywords it cannot enforce left to the validator), for `smiles`
//!    `grammars/smiles.ebnf` — in each mode and seed. The prompt is the
//!    instance's `input` in the model's chat format, then the prefill; a
//!    model without a chat template (cdiff's shipped `json-tiny`,
//!    `smiles-tiny`, `cpp-tiny`, which are unconditional) gets only the
//!    prefill. The canvas is the shipped model's
//!    context left after the prompt (else 256 tokens), with its card's
//!    settings. The decoding seed is the run's seed mixed with the instance
//!    id, so that an unconditional model draws a different sample for each
//!    instance. The oracle `gold` answers the gold output.
//! 3. **Metrics.** `syntax_ok`: cdiff's independent recognizer for the
//!    grammar (JSON: and serde_json parses the text). C++: `g++
//!    -fsyntax-only` and the tests compiled and run as for MRI, on `prefill
//!    + answer`. JSON: `schema_ok`,
//!    valid under the schema by the `jsonschema` crate; `functional_ok`,
//!    schema-valid and equal to the gold value (key order ignored). SMILES:
//!    `functional_ok`, the same molecular graph as the gold by graph
//!    isomorphism (`petgraph`; stereo ignored, aromatic and Kekulé forms
//!    differ — see [`smiles`]; checked against RDKit on 1,967 pairs in
//!    `tests/eval_dlm.rs`).
//! 4. **Records and report** as above; the report adds the schema rate for
//!    JSON and the time per sample for the DLM tasks.

pub mod json;
pub mod metrics;
pub mod plots;
pub mod record;
pub mod report;
pub mod runner;
pub mod smiles;
pub mod tasks;

use crate::decode::Mode;

/// A mode of the evaluation: one of the decoding modes, or grammar prompting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EvalMode {
    /// Unconstrained decoding.
    Vanilla,
    /// Constrained, without finishing from the witness ([`Mode::ConMinus`]).
    ConMinus,
    /// Constrained ([`Mode::Con`]).
    Con,
    /// Grammar prompting: unconstrained decoding, with the grammar (for
    /// `json`, the schema) appended to the instruction, or, for the MRI
    /// tasks, put before the code in a comment. A model that takes no
    /// instruction (cdiff's shipped unconditional models on the DLM tasks)
    /// sees no difference from `vanilla`.
    Gp,
}

impl EvalMode {
    /// How the model decodes in this mode.
    pub fn decode_mode(self) -> Mode {
        match self {
            EvalMode::Vanilla | EvalMode::Gp => Mode::Vanilla,
            EvalMode::ConMinus => Mode::ConMinus,
            EvalMode::Con => Mode::Con,
        }
    }

    /// The name in records and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            EvalMode::Vanilla => "vanilla",
            EvalMode::ConMinus => "con-minus",
            EvalMode::Con => "con",
            EvalMode::Gp => "gp",
        }
    }
}

/// The name of a decoding mode in records and on the command line.
pub fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Vanilla => "vanilla",
        Mode::ConMinus => "con-minus",
        Mode::Con => "con",
    }
}

/// The instruction of grammar prompting: `input`, then the grammar text
/// (`what` names its kind, e.g. "grammar (Lark EBNF)" or "JSON Schema").
pub fn gp_instruction(input: &str, what: &str, grammar: &str) -> String {
    let sep = if input.is_empty() { "" } else { "\n\n" };
    format!("{input}{sep}The answer must be valid under this {what}:\n{grammar}")
}

/// The grammar as a C++ block comment to put before the code (grammar
/// prompting for the infilling tasks); a `*/` inside is broken up.
pub fn gp_cpp_comment(grammar: &str) -> String {
    format!(
        "/* The code below is in the language of this grammar (Lark EBNF):\n{}\n*/\n",
        grammar.replace("*/", "* /")
    )
}

/// Parses a comma-separated list of modes (`vanilla,con-minus,con,gp`).
///
/// ```
/// use cdiff::eval::{parse_modes, EvalMode};
/// assert_eq!(parse_modes("con,gp")?, vec![EvalMode::Con, EvalMode::Gp]);
/// # Ok::<(), String>(())
/// ```
///
/// # Errors
/// A message naming an unknown mode, or for an empty list.
pub fn parse_modes(s: &str) -> Result<Vec<EvalMode>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let m = match part {
            "vanilla" => EvalMode::Vanilla,
            "con-minus" | "conminus" | "con_minus" => EvalMode::ConMinus,
            "con" => EvalMode::Con,
            "gp" => EvalMode::Gp,
            other => {
                return Err(format!(
                    "unknown mode `{other}` (expected vanilla, con-minus, con, gp)"
                ))
            }
        };
        if !out.contains(&m) {
            out.push(m);
        }
    }
    if out.is_empty() {
        return Err("no mode given".into());
    }
    Ok(out)
}

/// Parses seeds: `LO..HI` (inclusive, also `LO..=HI`), `N`, or a
/// comma-separated list of those.
///
/// # Errors
/// A message for a malformed or empty list, or more than 10,000 seeds.
pub fn parse_seeds(s: &str) -> Result<Vec<u64>, String> {
    let num = |t: &str| {
        t.trim()
            .parse::<u64>()
            .map_err(|_| format!("`{t}` is not a seed (expected N, LO..HI or a list)"))
    };
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once("..") {
            Some((a, b)) => {
                let (lo, hi) = (num(a)?, num(b.strip_prefix('=').unwrap_or(b))?);
                if lo > hi || hi - lo >= 10_000 {
                    return Err(format!("bad seed range {lo}..{hi}"));
                }
                out.extend(lo..=hi);
            }
            None => out.push(num(part)?),
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|x| seen.insert(*x));
    if out.is_empty() {
        return Err("no seed given".into());
    }
    if out.len() > 10_000 {
        return Err("more than 10,000 seeds".into());
    }
    Ok(out)
}

/// Parses a shard `I/N` (0 ≤ I < N).
///
/// # Errors
/// A message for anything else.
pub fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("`{s}` is not a shard I/N with 0 <= I < N");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let i: usize = i.trim().parse().map_err(|_| bad())?;
    let n: usize = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lists() {
        assert_eq!(parse_seeds("0..3"), Ok(vec![0, 1, 2, 3]));
        assert_eq!(parse_seeds("2"), Ok(vec![2]));
        assert_eq!(parse_seeds("0,5,1..=2,5"), Ok(vec![0, 5, 1, 2]));
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("x").is_err());
        assert_eq!(parse_shard("1/3"), Ok((1, 3)));
        assert!(parse_shard("3/3").is_err());
        assert!(parse_shard("0/0").is_err());
        assert_eq!(
            parse_modes("vanilla,con,con"),
            Ok(vec![EvalMode::Vanilla, EvalMode::Con])
        );
        assert_eq!(parse_modes("gp"), Ok(vec![EvalMode::Gp]));
        assert_eq!(EvalMode::Gp.decode_mode(), Mode::Vanilla);
        for m in parse_modes("vanilla,con-minus,con,gp").unwrap() {
            assert_eq!(parse_modes(m.name()), Ok(vec![m]));
        }
        assert!(parse_modes("fast").is_err());
        assert!(parse_modes(",").is_err());
        assert!(gp_cpp_comment("a: \"*/\"").ends_with("a: \"* /\"\n*/\n"));
    }
}

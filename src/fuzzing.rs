//! Entry points for fuzzing: each takes arbitrary bytes, runs one kind of
//! untrusted input through cdiff under small limits, and must return
//! without panicking or aborting whatever the bytes are (errors are fine).
//!
//! The `cargo fuzz` targets in `fuzz/` call these (coverage-guided, nightly)
//! and `tests/fuzz_inputs.rs` runs them on proptest-generated inputs in
//! every `cargo test` (stable). Not a stable API.

use std::sync::OnceLock;

use crate::completable::{Config, Constraint};
use crate::grammar::Grammar;
#[cfg(feature = "models")]
use crate::infill::Template;
use crate::partial::Partial;

/// How far an input got: the harness asserts that well-formed inputs get
/// all the way, so a fuzz target cannot silently test nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reached {
    /// Rejected by the first reader (a typed error).
    Rejected,
    /// Read (parsed, converted), then stopped by an error or a limit.
    Read,
    /// Read, compiled and checked.
    Checked,
}

/// Limits small enough that one input runs in milliseconds.
fn small() -> Config {
    Config {
        budget: 200_000,
        lexer_states: 2_000,
        partial_states: 20_000,
        max_witness_terminals: 100_000,
        max_witness_bytes: 1 << 20,
        max_memory: None,
        shortest_witness: true,
        witness_effort: 2,
        canvas_witness_effort: 0,
        long_search_per_state: 250,
        count_swallowed: true,
        kept_charts: 1 << 20,
        kept_tails: 1 << 20,
        kept_tails_from: 0,
    }
}

/// A few partial outputs over `text`: holes around and inside it.
fn partials(text: &[u8]) -> Vec<Partial> {
    let mid = text.len() / 2;
    vec![
        Partial::new().hole(),
        Partial::new().text(text),
        Partial::new().text(&text[..mid]).hole().text(&text[mid..]),
        Partial::new().hole().text(text).hole(),
    ]
}

/// Compiles `g` under small limits and checks a few partial outputs built
/// from `sample`, re-checking every witness against `check`.
fn exercise(g: &Grammar, sample: &[u8]) -> Reached {
    let Ok(c) = Constraint::with_config(g, small()) else {
        return Reached::Read;
    };
    for p in partials(sample) {
        let checked = c.check(&p);
        if let Ok(v) = c.completable(&p) {
            if let Ok(b) = checked {
                assert_eq!(b, v.is_completable(), "check and completable disagree");
            }
        }
    }
    Reached::Checked
}

/// Grammar text: parsed as Lark and as GBNF, compiled, checked.
pub fn grammar_text(data: &[u8]) -> Reached {
    let text = String::from_utf8_lossy(data);
    let sample = data.get(..data.len().min(16)).unwrap_or(&[]);
    let mut reached = Reached::Rejected;
    if let Ok(g) = Grammar::from_lark(&text, None) {
        reached = reached.max(exercise(&g, sample));
    }
    if let Ok(g) = Grammar::from_gbnf(&text, None) {
        reached = reached.max(exercise(&g, sample));
    }
    reached
}

/// A JSON Schema: read, turned into a grammar, compiled, checked.
pub fn json_schema(data: &[u8]) -> Reached {
    let text = String::from_utf8_lossy(data);
    match Grammar::from_json_schema_str(&text) {
        Ok(g) => exercise(&g, b"{\"a\": 1}"),
        Err(_) => Reached::Rejected,
    }
}

/// A partial output and a template in their JSON forms, checked against
/// the JSON grammar.
pub fn partial(data: &[u8]) -> Reached {
    static JSON: OnceLock<Option<Constraint>> = OnceLock::new();
    let text = String::from_utf8_lossy(data);
    let c = JSON.get_or_init(|| {
        let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).ok()?;
        Constraint::with_config(&g, small()).ok()
    });
    let mut reached = Reached::Rejected;
    if let Ok(p) = Partial::from_json(&text) {
        if let Some(c) = c {
            let _ = c.completable(&p);
            reached = Reached::Checked;
        }
    }
    #[cfg(feature = "models")]
    if let Ok(t) = Template::from_json(&text) {
        let fills: Vec<Vec<u8>> = (0..t.n_regions()).map(|_| b"1".to_vec()).collect();
        let _ = t.fill(&fills);
        for region in 0..t.n_regions() {
            let (p, _) = t.partial_with_holes(&fills[..region], region, b"", true);
            if let Some(c) = c {
                let _ = c.check(&p);
            }
        }
        reached = reached.max(Reached::Checked);
    }
    reached
}

#[cfg(feature = "models")]
/// A model `config.json`: architecture detection, each family's config
/// reading and validation, and the tensor shapes it implies.
pub fn model_config(data: &[u8]) -> Reached {
    use crate::model::{causal, dream, init, llada, load};
    let Ok(v) = crate::jsontext::parse(&String::from_utf8_lossy(data)) else {
        return Reached::Rejected;
    };
    let mut reached = Reached::Read;
    if let Ok(c) = serde_json::from_value::<dream::Config>(v.clone()) {
        if c.validate().is_ok() {
            reached = Reached::Checked;
        }
    }
    if let Ok(c) = serde_json::from_value::<llada::Config>(v.clone()) {
        if c.validate().is_ok() {
            reached = Reached::Checked;
        }
    }
    if let Ok(arch) = load::detect_arch(&v) {
        let _ = init::tensor_shapes(arch, &v);
    }
    if let Some(family) = causal::ArFamily::of_config(&v) {
        if causal::normalize_config(family, v).is_ok() {
            reached = Reached::Checked;
        }
    }
    reached
}

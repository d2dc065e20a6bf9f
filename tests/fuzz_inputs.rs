//! The fuzz entry points (`cdiff::fuzzing`, also the `cargo fuzz` targets in
//! `fuzz/`) on proptest-generated inputs: grammar text, JSON Schemas,
//! partial outputs and templates, model configs. Each must return, never
//! panic, whatever the bytes. Inputs are drawn from alphabets near the real
//! syntax so that most of them get past the first character.

use cdiff::fuzzing::{self, Reached};
use proptest::prelude::*;

/// Text over a syntax's tokens, joined at random.
fn tokens(alphabet: &'static [&'static str], max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(alphabet), 0..max)
        .prop_map(|v| v.concat().into_bytes())
}

const GRAMMAR: &[&str] = &[
    "start",
    ":",
    "a",
    "b",
    "\"x\"",
    "\"\"",
    "|",
    "(",
    ")",
    "*",
    "+",
    "?",
    "[",
    "]",
    "\n",
    " ",
    "/[a-z]+/",
    "/(/",
    "~",
    "3",
    "..",
    "%ignore",
    "%import common.WS",
    "A",
    "B",
    "_c",
    "->",
    "::=",
    "root",
    "\"\\",
    "#",
    "//",
    "{",
    "}",
    ",",
    "1",
    "\u{e9}",
    "\\p{L}",
];

const JSON_SCHEMA: &[&str] = &[
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "\"type\"",
    "\"object\"",
    "\"array\"",
    "\"string\"",
    "\"integer\"",
    "\"number\"",
    "\"properties\"",
    "\"items\"",
    "\"required\"",
    "\"a\"",
    "\"minItems\"",
    "\"maxLength\"",
    "\"pattern\"",
    "\"^a+$\"",
    "\"$ref\"",
    "\"#\"",
    "\"#/$defs/x\"",
    "\"$defs\"",
    "\"x\"",
    "\"enum\"",
    "\"const\"",
    "\"anyOf\"",
    "\"allOf\"",
    "\"minimum\"",
    "\"format\"",
    "\"date\"",
    "0",
    "1",
    "64",
    "-1",
    "1e400",
    "true",
    "null",
    "\"additionalProperties\"",
    "false",
];

const PARTIAL: &[&str] = &[
    "[",
    "]",
    ",",
    "null",
    "\"",
    "\"{\"",
    "\"}\"",
    "\"[1, \"",
    "\"a\"",
    "\"\\\"\"",
    "\"\\u00\"",
    "{",
    "}",
    "1",
    " ",
    "\"\\n\"",
    "true",
];

const CONFIG: &[&str] = &[
    "{",
    "}",
    ",",
    ":",
    "\"model_type\"",
    "\"dream\"",
    "\"llada\"",
    "\"starcoder2\"",
    "\"llama\"",
    "\"gemma\"",
    "\"qwen2\"",
    "\"hidden_size\"",
    "\"d_model\"",
    "\"vocab_size\"",
    "\"num_attention_heads\"",
    "\"n_heads\"",
    "\"num_hidden_layers\"",
    "\"n_layers\"",
    "\"intermediate_size\"",
    "\"rope_theta\"",
    "\"rope_parameters\"",
    "\"rope_scaling\"",
    "\"rope_type\"",
    "\"linear\"",
    "\"default\"",
    "\"factor\"",
    "0",
    "1",
    "4",
    "-3",
    "1e300",
    "18446744073709551615",
    "null",
    "true",
    "\"num_key_value_heads\"",
    "\"max_position_embeddings\"",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn grammar_text_never_panics(data in tokens(GRAMMAR, 40)) {
        let _ = fuzzing::grammar_text(&data);
    }

    #[test]
    fn json_schema_never_panics(data in tokens(JSON_SCHEMA, 40)) {
        let _ = fuzzing::json_schema(&data);
    }

    #[test]
    fn partial_never_panics(data in tokens(PARTIAL, 24)) {
        let _ = fuzzing::partial(&data);
    }

    #[test]
    fn model_config_never_panics(data in tokens(CONFIG, 40)) {
        let _ = fuzzing::model_config(&data);
    }

    #[test]
    fn raw_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = fuzzing::grammar_text(&data);
        let _ = fuzzing::json_schema(&data);
        let _ = fuzzing::partial(&data);
        let _ = fuzzing::model_config(&data);
    }
}

/// Structured inputs go all the way through each entry point, so the
/// targets exercise the engine and not only the parsers.
#[test]
fn well_formed_inputs_run_the_whole_path() {
    assert_eq!(
        fuzzing::grammar_text(b"start: \"a\" b*\nb: /[0-9]+/ | \"x\"\n"),
        Reached::Checked
    );
    assert_eq!(
        fuzzing::json_schema(
            br#"{"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}"#
        ),
        Reached::Checked
    );
    assert_eq!(
        fuzzing::partial(br#"["{\"a\": ", null, "}"]"#),
        Reached::Checked
    );
    assert_eq!(
        fuzzing::model_config(
            br#"{"model_type": "llama", "hidden_size": 64, "rope_theta": 10000}"#
        ),
        Reached::Checked
    );
    // Hostile numbers are errors, not overflows.
    assert_eq!(
        fuzzing::model_config(br#"{"model_type": "dream", "vocab_size": 18446744073709551615, "hidden_size": 18446744073709551615, "num_attention_heads": 1, "num_key_value_heads": 1, "num_hidden_layers": 1, "intermediate_size": 1, "rope_theta": 1e300, "rms_norm_eps": 0}"#),
        Reached::Read
    );
}

/// A random grammar in cdiff's Lark dialect: `start` and up to two more
/// rules over a few terminals, rule references (possibly undefined),
/// groups and repetitions.
fn random_grammar(seed: u64) -> String {
    let mut rng = cdiff::rng::SplitMix64::new(seed);
    const SYMBOLS: &[&str] = &[
        "\"x\"",
        "\"y\"",
        "a",
        "b",
        "/[0-9]+/",
        "\"(\"",
        "\")\"",
        "(a | \"z\")",
    ];
    const OPS: &[&str] = &["", "", "*", "+", "?"];
    let mut rule = |name: &str| {
        let alts: Vec<String> = (0..1 + rng.below(3))
            .map(|_| {
                (0..1 + rng.below(4))
                    .map(|_| {
                        let s = SYMBOLS[rng.below(SYMBOLS.len() as u64) as usize];
                        format!("{s}{}", OPS[rng.below(OPS.len() as u64) as usize])
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        format!("{name}: {}\n", alts.join(" | "))
    };
    let mut g = rule("start");
    g.push_str(&rule("a"));
    g.push_str(&rule("b"));
    g
}

/// A random JSON Schema: nested arrays, objects and combinators over typed
/// leaves with bounds.
fn random_schema(rng: &mut cdiff::rng::SplitMix64, depth: u32) -> serde_json::Value {
    use serde_json::json;
    let leaf = |rng: &mut cdiff::rng::SplitMix64| match rng.below(7) {
        0 => json!({"type": "integer", "minimum": rng.below(5), "maximum": 3 + rng.below(100)}),
        1 => json!({"type": "string", "maxLength": rng.below(6)}),
        2 => json!({"type": "string", "pattern": "^a+$"}),
        3 => json!({"enum": ["a", 1, null]}),
        4 => json!({"const": "x"}),
        5 => json!({"type": "boolean"}),
        _ => json!({"type": "number"}),
    };
    if depth == 0 || rng.below(3) == 0 {
        return leaf(rng);
    }
    match rng.below(4) {
        0 => json!({"type": "array", "items": random_schema(rng, depth - 1),
                    "minItems": rng.below(3), "maxItems": 2 + rng.below(3)}),
        1 => {
            let (a, b) = (random_schema(rng, depth - 1), random_schema(rng, depth - 1));
            let required: Vec<&str> = ["a", "b"]
                .into_iter()
                .filter(|_| rng.below(2) == 0)
                .collect();
            json!({"type": "object", "properties": {"a": a, "b": b}, "required": required,
                   "additionalProperties": rng.below(2) == 0})
        }
        2 => json!({"anyOf": [random_schema(rng, depth - 1), random_schema(rng, depth - 1)]}),
        _ => json!({"$defs": {"n": random_schema(rng, depth - 1)},
                    "type": "array", "items": {"$ref": "#/$defs/n"}}),
    }
}

/// A random partial output in its JSON form: chunks of JSON text and nulls.
fn random_partial(seed: u64) -> String {
    let mut rng = cdiff::rng::SplitMix64::new(seed);
    const CHUNKS: &[&str] = &[
        "{", "}", "[", "]", ",", ":", "\"a\"", "1", "null", " ", "\"", "tr", "-",
    ];
    let items: Vec<serde_json::Value> = (0..rng.below(8))
        .map(|_| {
            if rng.below(3) == 0 {
                serde_json::Value::Null
            } else {
                let n = 1 + rng.below(3);
                let s: String = (0..n)
                    .map(|_| CHUNKS[rng.below(CHUNKS.len() as u64) as usize])
                    .collect();
                serde_json::Value::from(s)
            }
        })
        .collect();
    serde_json::Value::from(items).to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn random_grammars_never_panic(seed in any::<u64>()) {
        let _ = fuzzing::grammar_text(random_grammar(seed).as_bytes());
    }

    #[test]
    fn random_schemas_never_panic(seed in any::<u64>()) {
        let mut rng = cdiff::rng::SplitMix64::new(seed);
        let _ = fuzzing::json_schema(random_schema(&mut rng, 3).to_string().as_bytes());
    }

    #[test]
    fn random_partials_never_panic(seed in any::<u64>()) {
        let _ = fuzzing::partial(random_partial(seed).as_bytes());
    }
}

/// The structured generators reach the engine often enough to be worth
/// running (the token alphabets above mostly exercise the readers).
#[test]
fn generated_inputs_reach_the_engine() {
    let mut reached = [0usize; 3];
    for seed in 0..200u64 {
        let mut rng = cdiff::rng::SplitMix64::new(seed);
        let inputs = [
            fuzzing::grammar_text(random_grammar(seed).as_bytes()),
            fuzzing::json_schema(random_schema(&mut rng, 3).to_string().as_bytes()),
            fuzzing::partial(random_partial(seed).as_bytes()),
        ];
        for (r, got) in reached.iter_mut().zip(inputs) {
            *r += usize::from(got == Reached::Checked);
        }
    }
    println!(
        "reached the engine, of 200: grammars {}, schemas {}, partials {}",
        reached[0], reached[1], reached[2]
    );
    for (name, r) in ["grammars", "schemas", "partials"].iter().zip(reached) {
        assert!(r >= 40, "{name}: only {r}/200 reached the engine");
    }
}

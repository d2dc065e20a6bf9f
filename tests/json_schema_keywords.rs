//! The JSON Schema keywords enforced exactly beyond types, properties and
//! bounds (`multipleOf`, `propertyNames`, `dependentRequired`, `contains`,
//! `oneOf`, `not`, `if`/`then`/`else`), each checked against an independent
//! oracle, the `jsonschema` crate:
//!
//! * complete texts: for every text of a small enumerated universe (valid
//!   and invalid instances, and texts that are not JSON), cdiff accepts iff
//!   the text is JSON and `jsonschema` finds it valid;
//! * texts with a hole (spans of the universe's texts cut out): when cdiff
//!   says completable, its witness is JSON valid for `jsonschema`; when
//!   some valid text of the universe has that prefix and suffix, cdiff says
//!   completable. Both verdicts must occur.
//!
//! The schemas must compile with the keyword under test listed nowhere in
//! the unenforced entries: the grammar claims exactness.
#![cfg(feature = "models")]

use cdiff::automata::ByteDfa;
use cdiff::grammar::schema::STRING_DFA_LIMIT;
use cdiff::grammar::{json_schema_to_grammar, SchemaOptions};
use cdiff::rng::SplitMix64;
use cdiff::{Constraint, ErrorKind, Partial};
use serde_json::{json, Value};

struct Case {
    schema: Value,
    c: Constraint,
    v: jsonschema::Validator,
}

impl Case {
    /// Compiles `schema`; none of `exact` may be reported as unenforced.
    fn new(schema: Value, exact: &[&str]) -> Case {
        let oracle = schema.clone();
        Case::against(schema, &oracle, exact)
    }

    /// Compiles `schema`, whose language is that of `oracle` (the schema
    /// with the keywords it reports as relaxed removed); none of `exact`
    /// may be reported as unenforced.
    fn against(schema: Value, oracle: &Value, exact: &[&str]) -> Case {
        let (g, notes) = json_schema_to_grammar(&schema, &SchemaOptions::default())
            .unwrap_or_else(|e| panic!("{schema}: {e}"));
        for n in &notes {
            assert!(
                !exact.contains(&n.keyword.as_str()),
                "{schema}: {n} (expected exact)"
            );
        }
        Case {
            c: Constraint::compile(&g).unwrap_or_else(|e| panic!("{schema}: {e}")),
            v: jsonschema::validator_for(oracle).unwrap_or_else(|e| panic!("{oracle}: {e}")),
            schema,
        }
    }

    /// The oracle: `text` is JSON and valid.
    fn valid(&self, text: &[u8]) -> bool {
        serde_json::from_slice::<Value>(text).is_ok_and(|v| self.v.is_valid(&v))
    }

    fn accepts(&self, text: &str) -> bool {
        self.c.check(&Partial::complete(text)).unwrap()
    }

    /// Complete texts: cdiff's verdict equals the oracle's. Returns the
    /// number of (valid, invalid) texts.
    fn complete(&self, texts: &[String]) -> (usize, usize) {
        let mut n = (0, 0);
        for t in texts {
            let want = self.valid(t.as_bytes());
            assert_eq!(self.accepts(t), want, "{}: {t}", self.schema);
            if want {
                n.0 += 1;
            } else {
                n.1 += 1;
            }
        }
        n
    }

    /// Texts of `texts` cut with one hole (`per_text` random spans each, of
    /// length 0 to 4): cdiff's witness is valid, and a valid text of the
    /// universe with the prefix and suffix forces "completable". Returns the
    /// number of (completable, not completable) partial texts.
    fn holes(&self, texts: &[String], per_text: usize, seed: u64) -> (usize, usize) {
        let valid: Vec<&String> = texts.iter().filter(|t| self.valid(t.as_bytes())).collect();
        let mut rng = SplitMix64::new(seed);
        let mut n = (0, 0);
        for t in texts {
            let b = t.as_bytes();
            for _ in 0..per_text {
                let i = rng.below(b.len() as u64 + 1) as usize;
                let j = (i + rng.below(5) as usize).min(b.len());
                let (pre, suf) = (&b[..i], &b[j..]);
                let p = Partial::new().text(pre).hole().text(suf);
                let v = self.c.completable(&p).unwrap();
                let show = || {
                    format!(
                        "{}: {}□{}",
                        self.schema,
                        String::from_utf8_lossy(pre),
                        String::from_utf8_lossy(suf)
                    )
                };
                if let Some(w) = v.completion() {
                    assert!(
                        self.valid(&w.text),
                        "{}: witness {} invalid",
                        show(),
                        String::from_utf8_lossy(&w.text)
                    );
                    n.0 += 1;
                } else {
                    let fill = valid.iter().find(|u| {
                        let u = u.as_bytes();
                        u.len() >= pre.len() + suf.len() && u.starts_with(pre) && u.ends_with(suf)
                    });
                    assert!(fill.is_none(), "{}: not completable, yet {fill:?}", show());
                    n.1 += 1;
                }
            }
        }
        n
    }

    /// [`Case::complete`] and [`Case::holes`], asserting both verdicts occur.
    fn check(&self, texts: &[String], per_text: usize) {
        let (ok, bad) = self.complete(texts);
        assert!(
            ok > 0 && bad > 0,
            "{}: {ok} valid, {bad} invalid",
            self.schema
        );
        let (yes, no) = self.holes(texts, per_text, 7);
        assert!(
            yes > 0 && no > 0,
            "{}: {yes} completable, {no} not",
            self.schema
        );
    }
}

/// Number texts: integers, decimals with a few fractions, negatives, and
/// some non-numbers. No exponents: `integer` and numbers under `multipleOf`
/// or bounds are accepted without exponent only (documented in
/// `cdiff::grammar::schema`).
fn number_texts() -> Vec<String> {
    let mut v = Vec::new();
    for i in -40i64..=130 {
        v.push(i.to_string());
        if i.abs() < 12 {
            for f in ["0", "5", "25", "125", "75", "01", "50", "1"] {
                v.push(format!("{}{}.{f}", if i < 0 { "-" } else { "" }, i.abs()));
            }
        }
    }
    for x in [
        "-0", "-0.5", "-0.25", "300", "1000", "1005", "-105", r#""6""#, "null", "[6]", "06", "1.",
        "true",
    ] {
        v.push(x.to_string());
    }
    v
}

#[test]
fn multiple_of_against_jsonschema() {
    // Steps and bounds whose values are exact in binary floating point
    // (jsonschema divides f64 values); decimal steps like 0.01 are pinned
    // by `multiple_of_decimal_steps_are_exact_decimals`.
    let schemas = [
        json!({"type": "integer", "multipleOf": 3}),
        json!({"type": "integer", "multipleOf": 10, "minimum": 15}),
        json!({"type": "integer", "multipleOf": 4, "exclusiveMinimum": -20, "maximum": 100}),
        json!({"type": "number", "multipleOf": 0.5, "minimum": -2, "exclusiveMaximum": 7.5}),
        json!({"type": "number", "multipleOf": 0.25}),
        json!({"multipleOf": 1.5, "maximum": 9}),
        json!({"type": "number", "multipleOf": 100}),
        json!({"type": ["integer", "string"], "multipleOf": 2}),
        json!({"type": "integer", "multipleOf": 0.5, "maximum": 3}),
        json!({"type": "number", "multipleOf": 0.125, "minimum": 0.3}),
        // allOf merges two steps into their least common multiple.
        json!({"allOf": [{"type": "integer", "multipleOf": 2}, {"multipleOf": 3}]}),
        json!({"allOf": [{"multipleOf": 0.5}, {"multipleOf": 0.75}], "maximum": 20}),
    ];
    let texts = number_texts();
    for s in schemas {
        Case::new(s, &["multipleOf"]).check(&texts, 4);
    }
}

#[test]
fn multiple_of_decimal_steps_are_exact_decimals() {
    // The instance's decimal value, not its nearest double: 0.07 is 7 × 0.01.
    let c = Case::new(
        json!({"type": "number", "multipleOf": 0.01, "minimum": 0.05}),
        &["multipleOf"],
    );
    for (t, want) in [
        ("0.07", true),
        ("0.070", true),
        ("0.05", true),
        ("0.04", false),
        ("0.075", false),
        ("19.99", true),
        ("19.991", false),
        ("1", true),
        ("-0.07", false),
    ] {
        assert_eq!(c.accepts(t), want, "{t}");
    }
    // A partial number: "1" + hole + "7" may become "1.07".
    let p = Partial::new().text("1").hole().text("7");
    assert!(c.c.check(&p).unwrap());
    let p = Partial::new().text("0.0").hole().text("1");
    assert!(!c.c.check(&p).unwrap(), "0.0…1 has a third fraction digit");
}

#[test]
fn multiple_of_beyond_the_pattern_bound_is_reported() {
    for step in [7, 11, 9] {
        let (_, notes) = json_schema_to_grammar(
            &json!({"type": "integer", "multipleOf": step}),
            &SchemaOptions::default(),
        )
        .unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.keyword == "multipleOf" && !n.approximate),
            "{step}: {notes:?}"
        );
    }
}

/// Objects over the keys `keys` (distinct, any order, up to `max` members)
/// with values `1` or `"s"`, plus a few non-objects and non-JSON texts.
fn object_texts(keys: &[&str], max: usize) -> Vec<String> {
    let mut seqs: Vec<Vec<&str>> = vec![Vec::new()];
    let mut frontier = seqs.clone();
    for _ in 0..max {
        let mut next = Vec::new();
        for s in &frontier {
            for k in keys {
                if !s.contains(k) {
                    let mut t = s.clone();
                    t.push(k);
                    next.push(t);
                }
            }
        }
        seqs.extend(next.iter().cloned());
        frontier = next;
    }
    let mut v = Vec::new();
    for s in &seqs {
        for mask in 0..1u32 << s.len() {
            let members: Vec<String> = s
                .iter()
                .enumerate()
                .map(|(i, k)| {
                    let val = if mask >> i & 1 == 1 { "\"s\"" } else { "1" };
                    format!("\"{k}\":{val}")
                })
                .collect();
            v.push(format!("{{{}}}", members.join(",")));
        }
    }
    for x in ["1", "null", r#""a""#, "[]", r#"{"a":1,}"#, r#"{"a"}"#] {
        v.push(x.to_string());
    }
    v
}

#[test]
fn property_names_against_jsonschema() {
    let texts = object_texts(&["a", "bb", "ccc", "x", "B"], 3);
    let schemas = [
        json!({"type": "object", "propertyNames": {"maxLength": 2}}),
        json!({"propertyNames": {"pattern": "^[a-z]+$"}, "properties": {"B": {"type": "integer"}}}),
        json!({"propertyNames": {"pattern": "^[a-z]+$", "minLength": 2}, "additionalProperties": {"type": "integer"}}),
        json!({"type": "object", "propertyNames": {"enum": ["a", "bb", "x"]}, "properties": {"a": {"type": "integer"}}, "required": ["a"]}),
        json!({"type": "object", "propertyNames": {"const": "x"}}),
        json!({"propertyNames": false}),
        json!({"properties": {"a": {}, "bb": {}, "ccc": {}}, "additionalProperties": false, "propertyNames": {"minLength": 2}, "required": ["bb"]}),
        json!({"properties": {"ccc": {}}, "required": ["ccc"], "propertyNames": {"maxLength": 2}}),
        json!({"propertyNames": {"type": "integer"}}),
        json!({"type": "object", "propertyNames": {"$ref": "#/$defs/short"}, "$defs": {"short": {"maxLength": 1}}}),
    ];
    for s in schemas {
        Case::new(s, &["propertyNames"]).check(&texts, 3);
    }
}

#[test]
fn property_names_overlapping_declared_names_is_reported() {
    // A declared name matches the pattern: undeclared keys are not
    // restricted (reported), declared ones still are exact.
    let schema = json!({
        "properties": {"a": {"type": "integer"}, "B": {}},
        "propertyNames": {"pattern": "^[a-z]"}
    });
    let (_, notes) = json_schema_to_grammar(&schema, &SchemaOptions::default()).unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.keyword == "propertyNames" && n.approximate),
        "{notes:?}"
    );
    let c = Case::new(schema, &[]);
    assert!(c.accepts(r#"{"a": 1}"#) && !c.accepts(r#"{"a": "s"}"#) && !c.accepts(r#"{"B": 1}"#));
    // A keyword the name test does not evaluate: reported, not enforced.
    let (_, notes) = json_schema_to_grammar(
        &json!({"propertyNames": {"format": "email"}}),
        &SchemaOptions::default(),
    )
    .unwrap();
    assert!(notes
        .iter()
        .any(|n| n.keyword == "propertyNames" && !n.approximate));
}

#[test]
fn dependent_required_against_jsonschema() {
    let texts = object_texts(&["a", "bb", "ccc", "x"], 4);
    let schemas = [
        json!({"dependentRequired": {"a": ["bb"]}}),
        json!({"type": "object", "properties": {"a": {"type": "integer"}, "bb": {}}, "dependentRequired": {"a": ["bb", "ccc"], "bb": ["x"]}, "additionalProperties": false}),
        json!({"properties": {"a": {}, "bb": {}, "ccc": {}}, "additionalProperties": false, "dependentRequired": {"a": ["bb"], "bb": ["a"]}, "required": ["ccc"]}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "dependencies": {"x": ["a"]}, "additionalProperties": {"type": "integer"}}),
        json!({"type": "object", "required": ["a"], "dependentRequired": {"a": ["ccc"]}, "properties": {"ccc": {"type": "string"}}}),
        json!({"type": "object", "properties": {"a": {}, "bb": {}, "ccc": {}}, "additionalProperties": false, "propertyNames": {"maxLength": 2}, "dependentRequired": {"a": ["ccc"]}}),
        json!({"type": "object", "properties": {"a": {}, "bb": {}, "x": {}}, "additionalProperties": false, "maxProperties": 2, "dependentRequired": {"x": ["a", "bb"]}}),
    ];
    for s in schemas {
        Case::new(s, &["dependentRequired", "dependencies"]).check(&texts, 3);
    }
}

#[test]
fn min_max_properties_with_extra_members_against_jsonschema() {
    // Extra members count (issue 13): before, the bounds were reported on
    // any object that allowed them.
    // maxProperties is exact (a repeated key counts twice: stricter than a
    // validator, which keeps one, on texts that repeat a key).
    let texts = object_texts(&["a", "bb", "ccc", "x"], 4);
    let schemas = [
        json!({"type": "object", "maxProperties": 2}),
        json!({"properties": {"a": {}, "bb": {"type": "string"}}, "maxProperties": 1}),
        json!({"additionalProperties": {"type": "integer"}, "maxProperties": 1, "required": ["x"]}),
    ];
    for s in schemas {
        Case::new(s, &["maxProperties"]).check(&texts, 2);
    }
    // minProperties with extra members is reported as approximate (a
    // repeated extra key counts once per occurrence, so a witness may
    // repeat one: `{"":0,"":0}`): complete texts without repeated keys are
    // decided exactly.
    let schemas = [
        json!({"minProperties": 2}),
        json!({"properties": {"a": {"type": "integer"}}, "required": ["a"], "minProperties": 2, "maxProperties": 3}),
        json!({"additionalProperties": {"type": "integer"}, "minProperties": 1, "maxProperties": 1}),
        json!({"properties": {"a": {}}, "dependentRequired": {"a": ["bb"]}, "minProperties": 3}),
    ];
    for s in schemas {
        let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
        assert!(
            notes
                .iter()
                .all(|n| n.keyword != "minProperties" || n.approximate),
            "{s}: {notes:?}"
        );
        let (ok, bad) = Case::new(s, &["maxProperties"]).complete(&texts);
        assert!(ok > 0 && bad > 0);
    }
}

#[test]
fn dependent_required_in_schema_order_is_reported() {
    let schema =
        json!({"properties": {"a": {}, "b": {}, "c": {}}, "dependentRequired": {"a": ["b"]}});
    let notes = |limit: usize| {
        let opts = SchemaOptions {
            max_any_order_properties: limit,
            ..SchemaOptions::default()
        };
        json_schema_to_grammar(&schema, &opts).unwrap().1
    };
    let dep_reported = |notes: &[cdiff::grammar::Unenforced]| {
        notes
            .iter()
            .any(|n| n.keyword == "dependentRequired" && !n.approximate)
    };
    // Past max_any_order_properties the names dependentRequired mentions
    // stay tracked (the others may repeat, reported): still enforced.
    let n = notes(2);
    assert!(!dep_reported(&n), "{n:?}");
    assert!(n.iter().any(|n| n.keyword == "properties"), "{n:?}");
    // With fewer tracked than it mentions, the object falls back to schema
    // order, where the set of written properties is not tracked.
    let n = notes(1);
    assert!(dep_reported(&n), "{n:?}");
}

/// Arrays of up to `max` items from `items`, plus a few non-arrays.
fn array_texts(items: &[&str], max: usize) -> Vec<String> {
    let mut seqs: Vec<Vec<&str>> = vec![Vec::new()];
    let mut frontier = seqs.clone();
    for _ in 0..max {
        let mut next = Vec::new();
        for s in &frontier {
            for x in items {
                let mut t = s.clone();
                t.push(x);
                next.push(t);
            }
        }
        seqs.extend(next.iter().cloned());
        frontier = next;
    }
    let mut v: Vec<String> = seqs.iter().map(|s| format!("[{}]", s.join(","))).collect();
    for x in ["1", "null", r#"{"a":1}"#, "[1,]", "[,1]"] {
        v.push(x.to_string());
    }
    v
}

#[test]
fn contains_against_jsonschema() {
    let texts = array_texts(&["1", "2.5", "\"s\"", "null", "true", "[1]"], 4);
    let schemas = [
        json!({"contains": {"type": "string"}}),
        json!({"type": "array", "contains": {"type": "integer"}, "items": {"type": ["integer", "null"]}}),
        json!({"contains": {"type": ["null", "boolean"]}, "minContains": 2, "maxContains": 3}),
        json!({"contains": {"type": "number"}, "maxContains": 1, "items": {"type": ["number", "string"]}, "minItems": 2}),
        json!({"contains": true, "minContains": 2, "maxItems": 3}),
        json!({"type": "array", "contains": false, "minContains": 0, "maxItems": 2}),
        json!({"contains": {"type": "array"}, "minContains": 0, "maxContains": 0}),
        json!({"contains": {"$ref": "#/$defs/s"}, "items": {"enum": ["s", 1, null]}, "$defs": {"s": {"type": "string"}}}),
        json!({"contains": {"type": "null"}, "minContains": 2, "minItems": 3, "maxItems": 4}),
        // Contains schemas with a complement (issue 13): bounds, number
        // constants, string and array lengths.
        json!({"contains": {"minimum": 2}}),
        json!({"contains": {"type": "number", "exclusiveMaximum": 2}, "minContains": 2}),
        json!({"contains": {"const": 1}, "maxContains": 1}),
        json!({"contains": {"enum": [1, null, true]}, "minContains": 2, "maxContains": 2}),
        json!({"contains": {"maxLength": 0}, "items": {"type": ["string", "number"]}}),
        json!({"contains": {"minItems": 1}, "maxContains": 1}),
        json!({"contains": {"if": false, "else": {"type": "null"}}, "minContains": 2}),
        json!({"contains": {"type": "integer"}, "maxContains": 1}),
        // The numbers that are not multiples (issue 13, suite contains.json).
        json!({"contains": {"multipleOf": 3}}),
        json!({"items": {"multipleOf": 2}, "contains": {"multipleOf": 3}}),
        json!({"contains": {"type": "integer", "multipleOf": 2}, "maxContains": 1}),
    ];
    for s in schemas {
        Case::new(s, &["contains", "minContains", "maxContains"]).check(&texts, 2);
    }
}

#[test]
fn contains_beyond_type_tests_is_reported() {
    for s in [
        json!({"contains": {"multipleOf": 3, "minimum": 1}}),
        json!({"contains": {"minimum": 2.5}}),
        json!({"contains": {"type": "string"}, "prefixItems": [{"type": "null"}]}),
    ] {
        let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
        assert!(
            notes
                .iter()
                .any(|n| n.keyword == "contains" && !n.approximate),
            "{s}: {notes:?}"
        );
    }
}

/// Scalars and small objects with a `kind` member, for `oneOf`, `not` and
/// `if`.
fn mixed_texts() -> Vec<String> {
    let mut v: Vec<String> = [
        "1",
        "2",
        "3.0",
        "2.5",
        "-1",
        "6",
        "-4.5",
        r#""a""#,
        r#""b""#,
        r#""ab""#,
        "null",
        "true",
        "false",
        "[]",
        "[1]",
        "{}",
        "1.",
        r#"{"kind"}"#,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let kinds = [None, Some(r#""a""#), Some(r#""b""#), Some("1")];
    let vals = [None, Some("1"), Some(r#""s""#)];
    for k in kinds {
        for x in vals {
            let mut members = Vec::new();
            if let Some(k) = k {
                members.push(format!(r#""kind":{k}"#));
            }
            if let Some(x) = x {
                members.push(format!(r#""v":{x}"#));
            }
            v.push(format!("{{{}}}", members.join(",")));
            members.reverse();
            v.push(format!("{{{}}}", members.join(",")));
        }
    }
    v.sort();
    v.dedup();
    v
}

#[test]
fn one_of_disjoint_against_jsonschema() {
    let texts = mixed_texts();
    let schemas = [
        json!({"oneOf": [{"type": "string"}, {"type": "integer"}]}),
        json!({"oneOf": [{"const": "a"}, {"enum": ["b", 1]}, {"type": "null"}]}),
        json!({"type": "object", "oneOf": [
            {"properties": {"kind": {"const": "a"}, "v": {"type": "integer"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "b"}}, "required": ["kind", "v"]}
        ]}),
        json!({"oneOf": [{"type": "integer", "minimum": 2}, {"type": "string"}], "maxLength": 1}),
        json!({"oneOf": [{"type": "number", "exclusiveMaximum": 2}, {"type": "boolean"}, {"$ref": "#/$defs/o"}],
               "$defs": {"o": {"type": "object", "required": ["kind"]}}}),
        json!({"oneOf": [{"enum": [1, "a"]}, {"enum": [2, "b", true]}]}),
        // Overlapping branches with complements (issue 13): B_i ∧ ¬B_j.
        json!({"oneOf": [{"minimum": 2}, {"type": "number", "maximum": 2}]}),
        json!({"type": "string", "oneOf": [{"minLength": 2}, {"maxLength": 1}, {"maxLength": 0}]}),
        json!({"oneOf": [{"type": ["string", "null"]}, {"required": ["kind"]}, true]}),
        json!({"oneOf": [{"enum": [1, null]}, {"type": "null"}, {"type": "boolean"}]}),
        json!({"oneOf": [{"type": "integer"}, {"minimum": 2}]}),
        json!({"oneOf": [{"type": "number"}, {"type": "integer"}, {"type": "string"}]}),
        json!({"oneOf": [{"multipleOf": 2}, {"multipleOf": 3}]}),
        // Properties that allow anything beside `required` (suite oneOf.json).
        json!({"oneOf": [{"properties": {"kind": true, "w": {}}, "required": ["kind"]},
                         {"properties": {"v": true}, "required": ["v"]}]}),
    ];
    for s in schemas {
        Case::new(s, &["oneOf"]).check(&texts, 3);
    }
}

#[test]
fn one_of_overlapping_is_reported() {
    for s in [
        json!({"oneOf": [{"type": "number"}, {"type": "integer"}, {"multipleOf": 3, "maximum": 9}]}),
        json!({"oneOf": [{"enum": [1, "a"]}, {"enum": [1.0]}]}),
        json!({"type": "object", "oneOf": [
            {"properties": {"kind": {"const": "a"}}, "required": ["kind"]},
            {"properties": {"kind": {"const": "a"}}}
        ]}),
    ] {
        let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
        assert!(
            notes.iter().any(|n| n.keyword == "oneOf" && n.approximate),
            "{s}: {notes:?}"
        );
    }
}

#[test]
fn not_against_jsonschema() {
    let texts = mixed_texts();
    let schemas = [
        json!({"not": {"type": "string"}}),
        json!({"type": ["integer", "string", "null"], "not": {"type": ["null", "integer"]}}),
        json!({"not": {"const": null}}),
        json!({"not": {"enum": [true, null]}}),
        json!({"type": "object", "not": {"required": ["kind"]}}),
        json!({"not": {"required": ["kind", "v"]}}),
        json!({"not": {"minimum": 2}}),
        // "Number but not integer" (FRACTION_ONLY).
        json!({"not": {"type": "integer"}}),
        json!({"not": {"type": "integer", "maximum": 3}}),
        json!({"type": "number", "not": {"type": "integer", "minimum": 0}}),
        json!({"not": {"type": "number", "exclusiveMinimum": -1, "maximum": 2}}),
        json!({"not": {"enum": [1, 2, null]}}),
        json!({"not": {"type": "string", "minLength": 1, "maxLength": 1}}),
        // Two `not`s in allOf: neither (regression: merged as not-both).
        json!({"allOf": [{"not": {"type": "string"}}, {"not": {"type": "null"}}]}),
        json!({"not": {"properties": {"kind": {"type": "string"}}, "required": ["kind"]}}),
        json!({"not": {"type": "object", "properties": {"v": {"$ref": "#/$defs/n"}}}, "$defs": {"n": {"type": "number"}}}),
        json!({"anyOf": [{"not": {}}, {"type": "null"}]}),
        json!({"type": "object", "properties": {"kind": {"not": {"type": ["number", "null"]}}}}),
        // Numbers that are not multiples, alone and within another step
        // and bounds (NOT_MULTIPLE_OF).
        json!({"not": {"multipleOf": 3}}),
        json!({"not": {"type": "integer", "multipleOf": 2}}),
        json!({"multipleOf": 0.5, "maximum": 10, "not": {"multipleOf": 1.5}}),
    ];
    for s in schemas {
        Case::new(s, &["not"]).check(&texts, 3);
    }
}

#[test]
fn if_then_else_against_jsonschema() {
    let texts = mixed_texts();
    let schemas = [
        json!({"if": {"type": "string"}, "then": {"maxLength": 1}, "else": {"type": "integer"}}),
        json!({"if": {"properties": {"kind": {"type": "string"}}, "required": ["kind"]},
               "then": {"required": ["v"]}, "else": {"properties": {"v": {"type": "string"}}}}),
        json!({"if": {"required": ["v"]}, "then": {"properties": {"v": {"type": "integer"}}}}),
        json!({"type": "object", "if": {"properties": {"kind": {"type": "number"}}}, "then": {"required": ["v"]}}),
        json!({"if": {"const": true}, "then": false, "else": {"type": ["boolean", "string"]}}),
        json!({"type": "object", "properties": {"kind": {}}, "additionalProperties": false,
               "if": {"type": "object"}, "else": false}),
        json!({"if": {"type": "null"}}),
        // Conditions with a complement (issue 13): bounds, number
        // constants, lengths.
        json!({"if": {"exclusiveMaximum": 2}, "then": {"minimum": 0}, "else": {"type": "integer"}}),
        json!({"if": {"const": 1}, "then": false}),
        json!({"if": {"enum": [1, 2, false]}, "else": {"type": "object"}}),
        json!({"if": {"maxLength": 1}, "then": {"type": "string"}, "else": {"type": ["null", "object"]}}),
        json!({"if": {"type": "array", "minItems": 1}, "then": false, "else": {"type": ["array", "boolean"]}}),
        // A conditional spread over allOf applies nowhere (regression: the
        // branches were merged into one conditional).
        json!({"allOf": [{"if": {"exclusiveMaximum": 0}}, {"then": {"minimum": -10}}, {"else": {"type": "string"}}], "type": ["number", "string"]}),
        json!({"allOf": [{"if": {"type": "string"}, "then": {"maxLength": 1}}, {"if": {"type": "number"}, "then": {"type": "integer"}}]}),
    ];
    for s in schemas {
        Case::new(s, &["if", "then", "else"]).check(&texts, 3);
    }
}

#[test]
fn not_and_if_without_expressible_complement_are_reported() {
    for (s, k) in [
        (json!({"not": {"const": "a"}}), "not"),
        (json!({"not": {"multipleOf": 3, "minimum": 1}}), "not"),
        (json!({"not": {"minimum": 2.5}}), "not"),
        (
            json!({"if": {"properties": {"kind": {"const": "a"}}}, "then": {"required": ["v"]}}),
            "if",
        ),
        // A remote $ref inside leaves the keyword reported, the schema compiles.
        (json!({"not": {"$ref": "http://example.com/s.json"}}), "not"),
        (
            json!({"if": {"type": "string"}, "then": {"$ref": "other.json"}}),
            "if",
        ),
    ] {
        let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
        assert!(
            notes.iter().any(|n| n.keyword == k && !n.approximate),
            "{s}: {notes:?}"
        );
    }
}

#[test]
fn draft4_integers_have_no_fraction() {
    // Draft 4 (`$schema`): `1.0` is not an integer (it is from draft 6 on);
    // regression: a fully enforced maskbench schema accepted `12345.0`.
    let d4 = "http://json-schema.org/draft-04/schema#";
    // Not `-0`: serde_json reads it as the float -0.0, which jsonschema's
    // draft 4 integer check rejects, although it has no fraction.
    let texts: Vec<String> = number_texts().into_iter().filter(|t| t != "-0").collect();
    for s in [
        json!({"$schema": d4, "type": "integer"}),
        json!({"$schema": d4, "type": "integer", "minimum": -3, "maximum": 40}),
        json!({"$schema": d4, "type": "integer", "multipleOf": 5}),
        json!({"$schema": d4, "type": ["integer", "null"], "multipleOf": 0.5}),
    ] {
        let c = Case::new(s, &["multipleOf"]);
        // Complete texts only: a witness may be `-0` (see above).
        let (ok, bad) = c.complete(&texts);
        assert!(ok > 0 && bad > 0);
        assert!(!c.accepts("3.0") && !c.accepts("10.00") && c.accepts("10"));
    }
    let c = Case::new(json!({"type": "integer"}), &[]);
    assert!(c.accepts("3.0"), "draft 2020-12: 3.0 is an integer");
}

/// An object of three 30-item arrays, `a`, `b`, `c`, where `a` and `b` may
/// not both be present (`not` of `required`): rewritten, the object (and
/// its arrays) is built once per branch.
fn two_arrays(not: bool) -> Value {
    let arr =
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 30, "maxItems": 30});
    let mut o = json!({"type": "object", "properties": {"a": arr, "b": arr, "c": arr}});
    if not {
        o["not"] = json!({"required": ["a", "b"]});
    }
    o
}

fn rules(schema: &Value, max_rules: usize) -> Result<usize, String> {
    let opts = SchemaOptions {
        max_rules,
        ..SchemaOptions::default()
    };
    json_schema_to_grammar(schema, &opts)
        .map(|(g, _)| g.rules.len())
        .map_err(|e| e.to_string())
}

#[test]
fn not_rewrite_past_the_rule_limit_falls_back_to_reporting() {
    let plain = rules(&two_arrays(false), usize::MAX).unwrap();
    let rewritten = rules(&two_arrays(true), usize::MAX).unwrap();
    assert!(rewritten > plain + 20, "{plain} {rewritten}");
    let notes = |schema: &Value, max_rules: usize| {
        let opts = SchemaOptions {
            max_rules,
            ..SchemaOptions::default()
        };
        json_schema_to_grammar(schema, &opts).unwrap().1
    };
    let reported = |n: &[cdiff::grammar::Unenforced]| {
        n.iter()
            .any(|n| n.keyword == "not" && !n.approximate && n.reason.contains("size limit"))
    };
    // The rewrite alone passes the limit: undone, reported.
    let n = notes(&two_arrays(true), plain + 5);
    assert!(reported(&n), "{n:?}");
    // Each rewrite fits, the schema does not: built again without them.
    // (`y` differs from `x`: equal merged schemas share their rules.)
    let y = |not: bool| {
        let mut y = two_arrays(not);
        y["properties"]["c"]["maxItems"] = json!(31);
        y
    };
    let both = json!({"type": "object", "properties": {"x": two_arrays(true), "y": y(true), "z": two_arrays(false)}});
    let without = rules(&json!({"type": "object", "properties": {"x": two_arrays(false), "y": y(false), "z": two_arrays(false)}}), usize::MAX).unwrap();
    let limit = without + 5;
    assert!(rules(&both, usize::MAX).unwrap() > limit);
    let n = notes(&both, limit);
    assert!(reported(&n), "{n:?}");
    // Within the limits it is enforced.
    let c = Case::new(two_arrays(true), &["not"]);
    let thirty = format!("[{}]", vec!["1"; 30].join(","));
    assert!(c.accepts(&format!(r#"{{"a": {thirty}}}"#)));
    assert!(!c.accepts(&format!(r#"{{"a": {thirty}, "b": {thirty}}}"#)));
}

/// Five strings whose terminals run in parallel inside the lexer: a
/// `maxLength` counts characters while four search patterns follow their
/// own progress, so the terminal automaton has about `max` × 4⁴ × (escape
/// and UTF-8 states) states (66,773 for 250, 4,213 for 20).
fn string_product(max: u64) -> Value {
    json!({
        "type": "object",
        "properties": {
            "n": {"type": "string", "maxLength": max},
            "a": {"type": "string", "pattern": "abc"},
            "d": {"type": "string", "pattern": "def"},
            "g": {"type": "string", "pattern": "ghi"},
            "j": {"type": "string", "pattern": "jkl"}
        },
        "additionalProperties": false
    })
}

/// Objects of one or two members of [`string_product`], and non-JSON.
fn string_product_texts() -> Vec<String> {
    let values = [
        r#""""#.to_string(),
        r#""abc""#.to_string(),
        r#""xdefx""#.to_string(),
        r#""ghi""#.to_string(),
        r#""abcdefghi""#.to_string(),
        r#""ab""#.to_string(),
        r#""jkl""#.to_string(),
        format!("\"{}\"", "a".repeat(21)),
        format!("\"{}\"", "x".repeat(251)),
    ];
    let keys = ["n", "a", "d", "g", "j"];
    let mut texts = Vec::new();
    for k in keys {
        for v in &values {
            texts.push(format!(r#"{{"{k}":{v}}}"#));
        }
    }
    for k in keys {
        for l in keys.iter().filter(|&&l| l != k) {
            for v in &values[1..4] {
                texts.push(format!(r#"{{"{k}":{v},"{l}":"ghi"}}"#));
            }
        }
    }
    texts.extend(["{".to_string(), r#"{"n":1}"#.to_string(), "[]".to_string()]);
    texts
}

#[test]
fn string_terminals_past_the_dfa_limit_are_relaxed_and_listed() {
    let schema = string_product(250);
    // As written, the string terminals need more states than the limit
    // (strict mode relaxes nothing).
    let strict = cdiff::Grammar::from_json_schema(&schema).unwrap();
    let patterns: Vec<&str> = strict
        .terminals
        .iter()
        .map(|t| t.pattern.as_str())
        .collect();
    let e = ByteDfa::from_patterns_limit(&patterns, STRING_DFA_LIMIT).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SizeLimit);
    // The largest one (the 250-character count) is relaxed, and listed.
    let (g, notes) = json_schema_to_grammar(&schema, &SchemaOptions::default()).unwrap();
    let listed: Vec<(&str, &str, bool)> = notes
        .iter()
        .map(|u| (u.keyword.as_str(), u.pointer.as_str(), u.approximate))
        .collect();
    assert_eq!(listed, [("maxLength", "#/properties/n", false)]);
    assert!(notes[0].reason.contains("DFA states"), "{}", notes[0]);
    let patterns: Vec<&str> = g.terminals.iter().map(|t| t.pattern.as_str()).collect();
    assert!(ByteDfa::from_patterns_limit(&patterns, STRING_DFA_LIMIT).is_ok());
}

#[test]
fn relaxed_string_schema_accepts_every_valid_instance() {
    // The grammar is exactly the schema without the relaxed `maxLength`:
    // a superset of the schema's instances, the patterns still enforced.
    let schema = string_product(250);
    let mut relaxed = schema.clone();
    relaxed["properties"]["n"]
        .as_object_mut()
        .unwrap()
        .remove("maxLength");
    let c = Case::against(schema.clone(), &relaxed, &["pattern"]);
    let texts = string_product_texts();
    c.check(&texts, 2);
    let strict = jsonschema::validator_for(&schema).unwrap();
    let long = format!(r#"{{"n":"{}"}}"#, "x".repeat(251));
    for t in &texts {
        let v: Option<Value> = serde_json::from_str(t).ok();
        if v.is_some_and(|v| strict.is_valid(&v)) {
            assert!(c.accepts(t), "{t}");
        }
    }
    assert!(c.accepts(&long), "relaxed: any string");
    assert!(!c.accepts(r#"{"a":"ab"}"#));
}

#[test]
fn string_terminals_under_the_dfa_limit_stay_exact() {
    let c = Case::new(string_product(20), &["maxLength", "pattern"]);
    c.check(&string_product_texts(), 2);
}

#[test]
fn many_conditionals_in_all_of_are_reported_past_the_branch_limit() {
    // Eight discriminated conditionals: combining them all would take 2^8
    // anyOf branches; those past the limit are dropped and reported, and
    // no valid instance is refused.
    let conds: Vec<Value> = (1..=8)
        .map(|k| {
            json!({"if": {"properties": {"kind": {"const": k}}, "required": ["kind"]},
                        "then": {"required": ["v"]}})
        })
        .collect();
    let schema = json!({"type": "object", "allOf": conds});
    let (g, notes) = json_schema_to_grammar(&schema, &SchemaOptions::default()).unwrap();
    assert!(
        notes.iter().any(|n| n.keyword == "if" && !n.approximate),
        "{notes:?}"
    );
    let c = Constraint::compile(&g).unwrap();
    let v = jsonschema::validator_for(&schema).unwrap();
    for t in mixed_texts() {
        let valid = serde_json::from_str::<Value>(&t).is_ok_and(|x| v.is_valid(&x));
        if valid {
            assert!(c.check(&Partial::complete(&t)).unwrap(), "{t} refused");
        }
    }
}

#[test]
fn unevaluated_properties_against_jsonschema() {
    let texts = object_texts(&["a", "bb", "ccc", "x"], 3);
    let schemas = [
        json!({"unevaluatedProperties": false}),
        json!({"properties": {"a": {"type": "integer"}}, "unevaluatedProperties": false}),
        json!({"properties": {"a": {}}, "allOf": [{"properties": {"bb": {"type": "string"}}}], "unevaluatedProperties": false}),
        json!({"$ref": "#/$defs/base", "properties": {"x": {}}, "unevaluatedProperties": {"type": "string"},
               "$defs": {"base": {"properties": {"a": {}}}}}),
        // The inner one sees only its own members.
        json!({"allOf": [{"properties": {"a": {}}, "unevaluatedProperties": false}], "properties": {"bb": {}}}),
        // An inner `true` evaluates every member.
        json!({"allOf": [{"properties": {"a": {}}, "unevaluatedProperties": true}], "unevaluatedProperties": false}),
        json!({"properties": {"a": {}}, "additionalProperties": {"type": "integer"}, "unevaluatedProperties": false}),
        // Disjoint branches (by the value of x): each sees its own members.
        json!({"anyOf": [{"type": "object", "properties": {"x": {"const": 1}, "a": {}}, "required": ["x"]},
                         {"type": "object", "properties": {"x": {"const": "s"}, "bb": {}}, "required": ["x"]}],
               "unevaluatedProperties": false}),
        // One branch always matches and names every member the others do.
        json!({"anyOf": [true, {"properties": {"a": true}}], "unevaluatedProperties": false}),
        json!({"oneOf": [{"properties": {"a": {"type": "integer"}}, "required": ["a"]},
                         {"properties": {"a": {"type": "string"}}, "required": ["a"]}],
               "unevaluatedProperties": false}),
        // additionalProperties does not look into allOf either.
        json!({"allOf": [{"properties": {"a": {}}}], "additionalProperties": {"type": "string"}}),
        json!({"allOf": [{"properties": {"a": {}}, "additionalProperties": false}], "properties": {"bb": {}}}),
        // The complement: an object with an undeclared member (EXTRA_MEMBER).
        json!({"not": {"anyOf": [true, {"properties": {"a": true}}], "unevaluatedProperties": false}}),
        json!({"type": "object", "not": {"properties": {"a": true, "bb": {}}, "additionalProperties": false}}),
    ];
    for s in schemas {
        Case::new(
            s,
            &[
                "unevaluatedProperties",
                "additionalProperties",
                "allOf",
                "not",
            ],
        )
        .check(&texts, 3);
    }
}

#[test]
fn unevaluated_items_against_jsonschema() {
    let texts = array_texts(&["1", r#""s""#, "null"], 3);
    let schemas = [
        json!({"unevaluatedItems": false}),
        json!({"prefixItems": [{"type": "integer"}], "unevaluatedItems": {"type": "string"}}),
        json!({"allOf": [{"prefixItems": [{}, {"type": "null"}]}], "unevaluatedItems": false}),
        json!({"allOf": [{"prefixItems": [{}], "unevaluatedItems": false}], "prefixItems": [{}, {}]}),
        json!({"allOf": [{"prefixItems": [{}], "unevaluatedItems": true}], "unevaluatedItems": false}),
        // Items matching `contains` are evaluated by it.
        json!({"contains": {"type": "integer"}, "unevaluatedItems": {"type": "null"}}),
        json!({"prefixItems": [{}], "items": {"type": "integer"}, "unevaluatedItems": false}),
        // items does not look into allOf either.
        json!({"prefixItems": [{"type": "string"}], "allOf": [{"items": {"type": ["string", "null"]}}]}),
    ];
    for s in schemas {
        Case::new(s, &["unevaluatedItems", "items", "allOf"]).check(&texts, 3);
    }
}

#[test]
fn unevaluated_beside_overlapping_branches_or_conditionals_is_reported() {
    for (s, k) in [
        (
            json!({"anyOf": [{"properties": {"a": {}}}, {"properties": {"b": {}}}], "unevaluatedProperties": false}),
            "unevaluatedProperties",
        ),
        (
            json!({"if": {"properties": {"a": {"const": 1}}}, "then": {"properties": {"b": {}}}, "unevaluatedProperties": false}),
            "unevaluatedProperties",
        ),
        (
            json!({"anyOf": [{"prefixItems": [{}]}, {"prefixItems": [{}, {}]}], "unevaluatedItems": false}),
            "unevaluatedItems",
        ),
    ] {
        let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
        assert!(notes.iter().any(|n| n.keyword == k), "{s}: {notes:?}");
    }
    // Beside an applicator this does not follow: not enforced, and said so.
    let s = json!({"dependentSchemas": {"a": {"properties": {"b": {}}}}, "unevaluatedProperties": false});
    let (_, notes) = json_schema_to_grammar(&s, &SchemaOptions::default()).unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.keyword == "unevaluatedProperties" && !n.approximate),
        "{notes:?}"
    );
}

use serde_json::json;

use super::*;
use crate::recognize::Recognizer;
use crate::{Constraint, Partial};

struct Both {
    c: Constraint,
    r: Recognizer,
}

impl Both {
    fn new(schema: Value) -> Both {
        let (g, _) =
            json_schema_to_grammar(&schema, &SchemaOptions::default()).expect("schema compiles");
        Both {
            c: Constraint::compile(&g).expect("grammar compiles"),
            r: Recognizer::new(&g).expect("recognizer"),
        }
    }

    /// Accepts `text`, checking that engine and recognizer agree.
    fn ok(&self, text: &str) -> bool {
        let a = self.c.check(&Partial::complete(text)).unwrap();
        let b = self.r.accepts(text.as_bytes()).unwrap();
        assert_eq!(a, b, "engine and recognizer disagree on {text}");
        a
    }
}

#[test]
fn lengths() {
    let b = Both::new(json!({"type": "string", "minLength": 2, "maxLength": 4}));
    for (s, want) in [
        (r#""""#, false),
        (r#""a""#, false),
        (r#""ab""#, true),
        (r#""abcd""#, true),
        (r#""abcde""#, false),
        (r#""a\nb""#, true),
        (r#""\u00e9\"""#, true),
        (r#""ééé""#, true),
        (r#"  "ab"  "#, true),
        ("12", false),
    ] {
        assert_eq!(b.ok(s), want, "{s}");
    }
    let b = Both::new(json!({"type": "string", "pattern": "^[a-z]+$", "maxLength": 3}));
    assert!(b.ok(r#""abc""#) && !b.ok(r#""abcd""#) && !b.ok(r#""""#) && !b.ok(r#""aB""#));
}

#[test]
fn enum_and_const() {
    let b = Both::new(json!({"enum": ["red", 1, null, [1, {"a": true}], {"x": "y"}]}));
    for (s, want) in [
        (r#""red""#, true),
        ("1", true),
        ("1.0", true),
        ("2", false),
        ("null", true),
        (r#"[ 1 , { "a" : true } ]"#, true),
        (r#"[1,{"a":false}]"#, false),
        (r#"{"x":"y"}"#, true),
        (r#""blue""#, false),
    ] {
        assert_eq!(b.ok(s), want, "{s}");
    }
    let b = Both::new(json!({"const": "a\"b"}));
    assert!(b.ok(r#""a\"b""#) && !b.ok(r#""ab""#));
    let b = Both::new(json!({"type": "string", "enum": ["a", 1]}));
    assert!(b.ok(r#""a""#) && !b.ok("1"));
}

#[test]
fn optional_property_commas() {
    // Every subset of four properties, in order, with correct commas; with
    // additionalProperties false, then with extras allowed.
    let names = ["a", "b", "c", "d"];
    for addl in [false, true] {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}, "d": {"type": "integer"}},
            "required": ["b"],
            "additionalProperties": addl
        });
        let b = Both::new(schema);
        for mask in 0u32..16 {
            let members: Vec<String> = (0..4)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| format!("\"{}\": {}", names[i], i))
                .collect();
            let text = format!("{{{}}}", members.join(", "));
            assert_eq!(b.ok(&text), mask & 2 != 0, "{text}");
            if !members.is_empty() {
                let bad = format!("{{{},}}", members.join(","));
                assert!(!b.ok(&bad), "{bad}");
                let bad = format!("{{,{}}}", members.join(","));
                assert!(!b.ok(&bad), "{bad}");
            }
            let with_extra = format!("{{{}, \"zz\": [1]}}", members.join(", "));
            let with_extra = with_extra.replace("{, ", "{");
            assert_eq!(b.ok(&with_extra), addl && mask & 2 != 0, "{with_extra}");
        }
        // Declared names may not come back as extras; order is schema order.
        assert!(!b.ok(r#"{"b": 1, "b": 2}"#));
        assert!(!b.ok(r#"{"b": 1, "a": 2}"#));
    }
}

#[test]
fn recursion_via_ref() {
    let b = Both::new(json!({
        "$ref": "#/$defs/node",
        "$defs": {"node": {
            "type": "object",
            "properties": {"v": {"type": "integer"}, "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
            "required": ["v"],
            "additionalProperties": false
        }}
    }));
    assert!(b.ok(r#"{"v": 1, "kids": [{"v": 2}, {"v": 3, "kids": [{"v": 4, "kids": []}]}]}"#));
    assert!(!b.ok(r#"{"v": 1, "kids": [{"v": "x"}]}"#));
    let p = Partial::new()
        .text(r#"{"v": 1, "kids": [{"v": 2, "kids": [{"#)
        .hole();
    let done = b.c.completable(&p).unwrap();
    let text = &done.completion().expect("completable").text;
    assert!(b.r.accepts(text).unwrap());
}

#[test]
fn pointer_escapes_and_anchor() {
    let b = Both::new(json!({
        "$defs": {"a/b": {"type": "integer"}, "c~d": {"$anchor": "cd", "type": "string"}, "p%q": {"type": "null"}},
        "type": "array",
        "prefixItems": [{"$ref": "#/$defs/a~1b"}, {"$ref": "#cd"}, {"$ref": "#/$defs/p%25q"}],
        "items": false
    }));
    assert!(
        b.ok(r#"[1, "x", null]"#)
            && b.ok("[1]")
            && !b.ok(r#"[1, 2]"#)
            && !b.ok(r#"[1, "x", null, 4]"#)
    );
}

#[test]
fn arrays() {
    let b = Both::new(
        json!({"type": "array", "items": {"type": "boolean"}, "minItems": 2, "maxItems": 3}),
    );
    assert!(!b.ok("[]") && !b.ok("[true]") && b.ok("[true,false]") && b.ok("[true,false,true]"));
    assert!(!b.ok("[true,false,true,true]") && !b.ok("[1,2]"));
    let b = Both::new(json!({"type": "array", "minItems": 1}));
    assert!(!b.ok("[]") && b.ok("[1, \"a\", {}]"));
}

#[test]
fn numbers() {
    let b = Both::new(json!({"type": "integer", "exclusiveMinimum": -3, "maximum": 10}));
    assert!(!b.ok("-3") && b.ok("-2") && b.ok("10") && !b.ok("11") && b.ok("0") && !b.ok("1.5"));
    let b = Both::new(json!({"type": "number", "minimum": 0, "exclusiveMaximum": 1}));
    assert!(
        b.ok("0") && b.ok("0.999") && !b.ok("1") && !b.ok("1.0") && !b.ok("-0.5") && b.ok("0.0")
    );
}

#[test]
fn any_of_all_of_types() {
    let b = Both::new(json!({"anyOf": [{"type": "string", "maxLength": 1}, {"type": "integer"}]}));
    assert!(b.ok(r#""a""#) && b.ok("5") && !b.ok(r#""ab""#) && !b.ok("null"));
    let b = Both::new(json!({"allOf": [
        {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
        {"properties": {"b": {"type": "integer"}}, "required": ["b"]}
    ]}));
    assert!(b.ok(r#"{"a": "x", "b": 1}"#) && !b.ok(r#"{"a": "x"}"#));
    let b = Both::new(json!({"type": ["null", "integer"]}));
    assert!(b.ok("null") && b.ok("3") && !b.ok("true"));
    let b = Both::new(json!(true));
    assert!(b.ok(r#"{"a": [1, null, "x"]}"#));
    let b = Both::new(json!({"type": "object", "properties": {"a": false}}));
    assert!(b.ok("{}") && !b.ok(r#"{"a": 1}"#));
}

#[test]
fn strict_mode_names_keyword_and_pointer() {
    let e =
        Grammar::from_json_schema(&json!({"properties": {"x": {"multipleOf": 3}}})).unwrap_err();
    assert!(
        e.to_string().contains("multipleOf") && e.to_string().contains("#/properties/x"),
        "{e}"
    );
    let (_, u) = json_schema_to_grammar(
        &json!({"properties": {"x": {"multipleOf": 3}}}),
        &SchemaOptions::default(),
    )
    .unwrap();
    assert_eq!(u.len(), 1);
    assert_eq!(
        (u[0].keyword.as_str(), u[0].pointer.as_str()),
        ("multipleOf", "#/properties/x")
    );
    // Annotations are silent.
    let (_, u) = json_schema_to_grammar(
        &json!({"title": "t", "description": "d", "default": 1, "type": "integer"}),
        &SchemaOptions::default(),
    )
    .unwrap();
    assert!(u.is_empty());
}

#[test]
fn deep_schemas_are_errors_not_overflows() {
    let mut s = json!({"type": "integer"});
    for _ in 0..1000 {
        s = json!({"type": "array", "items": s});
    }
    assert!(json_schema_to_grammar(&s, &SchemaOptions::default()).is_err());
    let mut s = json!({"type": "integer"});
    for _ in 0..1000 {
        s = json!({"allOf": [s]});
    }
    assert!(json_schema_to_grammar(&s, &SchemaOptions::default()).is_err());
    let s = json!({"$ref": "#", "type": "object"});
    let _ = json_schema_to_grammar(&s, &SchemaOptions::default());
    let s = json!({"allOf": [{"$ref": "#"}]});
    assert!(json_schema_to_grammar(&s, &SchemaOptions::default()).is_err());
}

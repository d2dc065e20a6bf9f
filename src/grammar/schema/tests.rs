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
        // Declared names may not come back as extras; any order.
        assert!(!b.ok(r#"{"b": 1, "b": 2}"#));
        assert!(b.ok(r#"{"b": 1, "a": 2}"#));
    }
}

impl Both {
    fn with(schema: Value, opts: &SchemaOptions) -> (Both, Vec<Unenforced>) {
        let (g, u) = json_schema_to_grammar(&schema, opts).expect("schema compiles");
        let b = Both {
            c: Constraint::compile(&g).expect("grammar compiles"),
            r: Recognizer::new(&g).expect("recognizer"),
        };
        (b, u)
    }

    /// Whether `prefix □ suffix` is completable; a witness is checked by the
    /// recognizer.
    fn fill(&self, prefix: &str, suffix: &str) -> bool {
        let p = Partial::new().text(prefix).hole().text(suffix);
        let fast = self.c.check(&p).unwrap();
        let v = self.c.completable(&p).unwrap();
        assert_eq!(fast, v.is_completable(), "check and completable disagree");
        if let Some(done) = v.completion() {
            assert!(self.r.accepts(&done.text).unwrap(), "witness rejected");
        }
        fast
    }
}

fn ticket() -> Value {
    json!({
        "type": "object",
        "properties": {
            "status": {"enum": ["open", "closed"]},
            "warranty": {"type": "boolean"},
            "note": {"type": "string"}
        },
        "required": ["status", "warranty"],
        "additionalProperties": false
    })
}

#[test]
fn any_property_order() {
    let b = Both::new(ticket());
    assert!(b.ok(r#"{"warranty": true, "status": "open"}"#));
    assert!(b.ok(r#"{"note": "x", "warranty": true, "status": "open"}"#));
    assert!(b.ok(r#"{"warranty": true, "note": "", "status": "closed"}"#));
    // Duplicates, a missing required key, an undeclared key.
    assert!(!b.ok(r#"{"warranty": true, "status": "open", "warranty": false}"#));
    assert!(!b.ok(r#"{"note": "x", "status": "open", "note": "y", "warranty": true}"#));
    assert!(!b.ok(r#"{"note": "x", "status": "open"}"#));
    assert!(!b.ok(r#"{"warranty": true, "status": "open", "zz": 1}"#));
    // Holes between properties.
    assert!(b.fill(r#"{"warranty": true, "#, r#" "note": "x"}"#));
    assert!(b.fill(r#"{"note": "x", "#, r#" "warranty": true}"#));
    assert!(b.fill(r#"{"warranty": true"#, "}"));
    // The hole must add "status", which is already there: no fill.
    assert!(!b.fill(
        r#"{"status": "open", "warranty": true, "#,
        r#" "status": "closed"}"#
    ));
    // Missing the required "warranty": a hole between properties may add
    // it, a hole inside a value may not.
    assert!(b.fill(r#"{"note": "x", "#, r#" "status": "open"}"#));
    assert!(!b.fill(r#"{"status": ""#, r#"", "note": "x"}"#));
    assert!(!b.fill(r#"{"status": "#, r#" "open", "note": "x"}"#));
    // A hole after every declared property: nothing may be added.
    assert!(!b.fill(
        r#"{"note": "x", "status": "open", "warranty": true, "#,
        " }"
    ));
    assert!(b.fill(r#"{"note": "x", "status": "open", "warranty": true"#, " }"));
    // A required name that is not declared takes the additionalProperties
    // schema, in any order, once.
    let b = Both::new(json!({
        "properties": {"a": {"type": "string"}},
        "required": ["b"],
        "additionalProperties": {"type": "integer"}
    }));
    assert!(b.ok(r#"{"b": 1, "a": "x"}"#) && b.ok(r#"{"c": 2, "a": "x", "b": 1}"#));
    assert!(!b.ok(r#"{"a": "x"}"#) && !b.ok(r#"{"b": 1, "a": "x", "b": 2}"#));
    // Pattern properties between declared ones.
    let b = Both::new(json!({
        "properties": {"a": {"type": "string"}, "b": {"type": "null"}},
        "patternProperties": {"^x": {"type": "integer"}},
        "additionalProperties": false
    }));
    assert!(b.ok(r#"{"x1": 1, "b": null, "x2": 2, "a": "y"}"#));
    assert!(!b.ok(r#"{"x1": 1, "b": null, "y": 2}"#));
}

#[test]
fn schema_property_order_is_the_old_behaviour() {
    let opts = SchemaOptions {
        property_order: PropertyOrder::Schema,
        ..SchemaOptions::default()
    };
    let (b, u) = Both::with(ticket(), &opts);
    assert!(u.is_empty(), "{u:?}");
    assert!(b.ok(r#"{"status": "open", "warranty": true, "note": "x"}"#));
    assert!(!b.ok(r#"{"warranty": true, "status": "open"}"#));
    assert!(b.fill(r#"{"status": "open", "#, r#" "note": "x"}"#));
    assert!(!b.fill(r#"{"note": "x", "#, r#" "warranty": true}"#));
}

#[test]
fn any_order_fallback_is_reported() {
    let props: Map<String, Value> = (0..5)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect();
    let schema = json!({
        "type": "object",
        "properties": {"inner": {"type": "object", "properties": props, "required": ["p4"]}}
    });
    let opts = SchemaOptions {
        max_any_order_properties: 4,
        ..SchemaOptions::default()
    };
    let (b, u) = Both::with(schema.clone(), &opts);
    assert_eq!(u.len(), 1, "{u:?}");
    assert_eq!(
        (
            u[0].keyword.as_str(),
            u[0].pointer.as_str(),
            u[0].approximate
        ),
        ("properties", "#/properties/inner", true)
    );
    assert!(u[0].reason.contains("\"p3\""), "{}", u[0]);
    // The required p4 and p0..p2 are tracked (at most once each, any
    // order); p3 is free: any order, repeatable.
    assert!(b.ok(r#"{"inner": {"p4": 4, "p0": 0}}"#));
    assert!(b.ok(r#"{"inner": {"p3": 3, "p0": 0, "p4": 4}}"#));
    assert!(b.ok(r#"{"inner": {"p3": 3, "p4": 4, "p3": 3}}"#));
    assert!(!b.ok(r#"{"inner": {"p0": 0, "p4": 4, "p0": 0}}"#));
    assert!(!b.ok(r#"{"inner": {"p3": 3, "p0": 0}}"#));
    // Within the limit: exact, nothing reported; strict mode accepts it.
    let (b, u) = Both::with(schema.clone(), &SchemaOptions::default());
    assert!(u.is_empty(), "{u:?}");
    assert!(b.ok(r#"{"inner": {"p3": 3, "p0": 0, "p4": 4}}"#));
    assert!(!b.ok(r#"{"inner": {"p3": 3, "p4": 4, "p3": 3}}"#));
    assert!(Grammar::from_json_schema(&schema).is_ok());
    // More required properties than tracked: schema order.
    let required: Vec<String> = (0..5).map(|i| format!("p{i}")).collect();
    let schema = json!({"type": "object", "properties": props_of(5), "required": required});
    let (b, u) = Both::with(schema, &opts);
    assert_eq!(u.len(), 1, "{u:?}");
    assert!(u[0].reason.contains("schema order"), "{}", u[0]);
    assert!(b.ok(r#"{"p0": 0, "p1": 1, "p2": 2, "p3": 3, "p4": 4}"#));
    assert!(!b.ok(r#"{"p1": 1, "p0": 0, "p2": 2, "p3": 3, "p4": 4}"#));
    // Large objects: as many tracked as the rule limit allows, instead of
    // failing.
    let schema = json!({"type": "object", "properties": props_of(40), "required": ["p39"]});
    let opts = SchemaOptions {
        max_any_order_properties: usize::MAX,
        max_rules: 200,
        ..SchemaOptions::default()
    };
    let (b, u) = Both::with(schema, &opts);
    assert_eq!(u.len(), 1, "{u:?}");
    assert!(u[0].reason.contains("the 6 tracked"), "{}", u[0]);
    assert!(b.ok(r#"{"p39": 39, "p0": 0}"#) && b.ok(r#"{"p20": 0, "p39": 39, "p20": 1}"#));
    assert!(!b.ok(r#"{"p1": 1, "p39": 39, "p1": 1}"#) && !b.ok(r#"{"p0": 0}"#));
}

/// `n` integer properties `p0`, `p1`, ….
fn props_of(n: usize) -> Map<String, Value> {
    (0..n)
        .map(|i| (format!("p{i}"), json!({"type": "integer"})))
        .collect()
}

/// The members `keys` (with small values) as object text: `(prefix,
/// suffix)` split before member `cut`, with spaces around the split so that
/// a fill cannot join a token of either side.
fn object_text(keys: &[&str], cut: usize) -> (String, String) {
    let member = |k: &str| {
        if k == "s" {
            format!("\"{k}\": \"v\"")
        } else {
            format!("\"{k}\": {}", k.len())
        }
    };
    let p: Vec<String> = keys[..cut].iter().map(|k| member(k)).collect();
    let q: Vec<String> = keys[cut..].iter().map(|k| member(k)).collect();
    let mut prefix = format!("{{{}", p.join(", "));
    if !p.is_empty() {
        prefix.push_str(", ");
    }
    (prefix, format!(" {}}}", q.join(", ")))
}

/// The independent check: `keys` is a valid member sequence of an object
/// with `declared` properties (in schema order), `required` ones and extra
/// ones when `extras`; `in_order`: declared properties in schema order and
/// extras after them.
fn valid_keys(
    keys: &[&str],
    declared: &[&str],
    required: &[&str],
    extras: bool,
    in_order: bool,
) -> bool {
    // Declared keys at most once; a repeated extra key is not detected (the
    // grammar cannot, and JSON parsers keep one of the values).
    let distinct = keys
        .iter()
        .enumerate()
        .all(|(i, k)| !declared.contains(k) || !keys[..i].contains(k));
    let allowed = keys.iter().all(|k| extras || declared.contains(k));
    let complete = required.iter().all(|r| keys.contains(r));
    // Declared keys first, in schema order, then the extras.
    let rank = |k: &&str| {
        declared
            .iter()
            .position(|d| d == k)
            .unwrap_or(declared.len())
    };
    let ordered = !in_order
        || keys.windows(2).all(|w| {
            rank(&w[0]) < rank(&w[1])
                || rank(&w[0]) == declared.len() && rank(&w[1]) == declared.len()
        });
    distinct && allowed && complete && ordered
}

/// The independent check of `prefix □ suffix` from [`object_text`]: some
/// members `h` (fewest first) make `keys[..cut] h keys[cut..]` valid; with
/// no member after the hole but some before, `h` is not empty.
fn completable_keys(
    keys: &[&str],
    cut: usize,
    declared: &[&str],
    required: &[&str],
    extras: bool,
    in_order: bool,
) -> bool {
    let try_fill = |h: &[&str]| {
        let mut all: Vec<&str> = keys[..cut].to_vec();
        all.extend_from_slice(h);
        all.extend_from_slice(&keys[cut..]);
        valid_keys(&all, declared, required, extras, in_order)
    };
    // Valid sequences stay valid without an optional member, so the missing
    // required members (in schema order) are the fill to try, or one member
    // when that is empty and a member is needed.
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|r| !keys.contains(r))
        .collect();
    let need_one = cut == keys.len() && cut > 0;
    if !missing.is_empty() || !need_one {
        return try_fill(&missing);
    }
    // "zz" may be written already; "yyy" never is.
    declared
        .iter()
        .chain(["zz", "yyy"].iter())
        .any(|c| try_fill(&[c]))
}

/// Every sequence of distinct names from `names` (each permutation of each
/// subset), and each with its first name repeated at the end.
fn sequences<'a>(names: &[&'a str]) -> Vec<Vec<&'a str>> {
    let mut out: Vec<Vec<&'a str>> = vec![Vec::new()];
    let mut frontier = out.clone();
    while !frontier.is_empty() {
        let mut next = Vec::new();
        for s in &frontier {
            for n in names {
                if !s.contains(n) {
                    let mut t = s.clone();
                    t.push(n);
                    next.push(t);
                }
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    let dups: Vec<Vec<&str>> = out
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| {
            let mut t = s.clone();
            t.push(s[0]);
            t
        })
        .collect();
    out.extend(dups);
    out
}

#[test]
fn brute_force_property_orders() {
    // Name lengths are the integer values; "s" is a string property.
    let cases: &[(&[&str], &[&str])] = &[
        (&["a", "bb"], &[]),
        (&["a", "bb"], &["bb"]),
        (&["s", "a", "bb"], &["a"]),
        (&["a", "bb", "s"], &["a", "s"]),
        (&["a", "bb", "ccc", "s"], &["bb"]),
        (&["a", "bb", "ccc", "s"], &["a", "ccc", "s"]),
    ];
    let mut checked = [0usize; 2];
    for order in [PropertyOrder::Any, PropertyOrder::Schema] {
        let in_order = order == PropertyOrder::Schema;
        for &(declared, required) in cases {
            for extras in [false, true] {
                let props: Map<String, Value> = declared
                    .iter()
                    .map(|k| {
                        let t = if *k == "s" { "string" } else { "integer" };
                        (k.to_string(), json!({ "type": t }))
                    })
                    .collect();
                let schema = json!({
                    "type": "object",
                    "properties": props,
                    "required": required,
                    "additionalProperties": extras
                });
                let opts = SchemaOptions {
                    property_order: order,
                    ..SchemaOptions::default()
                };
                let (b, u) = Both::with(schema, &opts);
                assert!(u.is_empty(), "{u:?}");
                let mut names = declared.to_vec();
                names.push("zz");
                for keys in sequences(&names) {
                    let (text, _) = object_text(&keys, keys.len());
                    let text = format!("{}}}", text.trim_end_matches(", "));
                    let want = valid_keys(&keys, declared, required, extras, in_order);
                    assert_eq!(
                        b.ok(&text),
                        want,
                        "{order:?} {declared:?} required {required:?} extras {extras}: {text}"
                    );
                    for cut in 0..=keys.len() {
                        let (prefix, suffix) = object_text(&keys, cut);
                        let want =
                            completable_keys(&keys, cut, declared, required, extras, in_order);
                        assert_eq!(
                            b.fill(&prefix, &suffix),
                            want,
                            "{order:?} {declared:?} required {required:?} extras {extras}: {prefix}□{suffix}"
                        );
                        checked[want as usize] += 1;
                    }
                }
            }
        }
    }
    // Both verdicts occur often.
    assert!(checked[0] > 1000 && checked[1] > 1000, "{checked:?}");
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
    // multipleOf 7 stays unenforced (its regex passes the size bound).
    let e =
        Grammar::from_json_schema(&json!({"properties": {"x": {"multipleOf": 7}}})).unwrap_err();
    assert!(
        e.to_string().contains("multipleOf") && e.to_string().contains("#/properties/x"),
        "{e}"
    );
    let (_, u) = json_schema_to_grammar(
        &json!({"properties": {"x": {"multipleOf": 7}}}),
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

#[test]
fn min_and_max_properties_without_extra_members() {
    let schema = json!({
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}, "c": {"type": "integer"}},
        "additionalProperties": false,
        "minProperties": 2,
        "maxProperties": 2
    });
    let b = Both::new(schema.clone());
    for (text, want) in [
        (r#"{}"#, false),
        (r#"{"a":1}"#, false),
        (r#"{"a":1,"b":2}"#, true),
        (r#"{"c":3,"a":1}"#, true),
        (r#"{"a":1,"b":2,"c":3}"#, false),
    ] {
        assert_eq!(b.ok(text), want, "{text}");
    }
    // Holes: one more member is needed, and at most one fits.
    let p = Partial::new().text(r#"{"b":2"#).hole().text("}");
    assert!(b.c.check(&p).unwrap());
    let p = Partial::new().text(r#"{"a":1,"b":2,"#).hole().text("}");
    assert!(!b.c.check(&p).unwrap(), "a third member is too many");
    let (_, unenforced) = json_schema_to_grammar(&schema, &SchemaOptions::default()).unwrap();
    assert!(
        !unenforced
            .iter()
            .any(|u| u.keyword.ends_with("Properties") && u.keyword != "properties"),
        "{unenforced:?}"
    );
    // One declared property: minProperties 1 makes it required in effect.
    let one = Both::new(json!({
        "type": "object", "properties": {"a": {}}, "additionalProperties": false, "minProperties": 1
    }));
    assert!(!one.ok("{}"));
    assert!(one.ok(r#"{"a":null}"#));
    // With undeclared members allowed, they are counted too (up to
    // MAX_COUNTED_MEMBERS); past it the count is reported.
    let open = json!({"type": "object", "properties": {"a": {}}, "maxProperties": 1});
    let (_, unenforced) = json_schema_to_grammar(&open, &SchemaOptions::default()).unwrap();
    assert!(unenforced.is_empty(), "{unenforced:?}");
    let b = Both::new(open);
    assert!(b.ok(r#"{"x":1}"#) && b.ok(r#"{"a":1}"#) && b.ok("{}"));
    assert!(!b.ok(r#"{"a":1,"x":2}"#) && !b.ok(r#"{"x":1,"y":2}"#));
    let big = json!({"type": "object", "minProperties": 65});
    let (_, unenforced) = json_schema_to_grammar(&big, &SchemaOptions::default()).unwrap();
    assert!(
        unenforced.iter().any(|u| u.keyword == "minProperties"),
        "{unenforced:?}"
    );
}

#[test]
fn extra_keys_exclude_declared_names_with_escapes() {
    // Declared names whose canonical spelling has escapes (`\n`, `\"`,
    // `\u0001`) are not extra keys in that spelling: their value schema
    // holds (this was accepted as an extra member before).
    let b = Both::new(json!({
        "properties": {"a\nb": {"type": "integer"}, "q\"": {"type": "integer"}, "c\u{1}": {"type": "integer"}},
        "additionalProperties": true
    }));
    for (text, want) in [
        (r#"{"a\nb": 1}"#, true),
        (r#"{"a\nb": "x"}"#, false),
        (r#"{"a\tb": "x"}"#, true),
        (r#"{"a\nbc": "x"}"#, true),
        (r#"{"q\"": 2}"#, true),
        (r#"{"q\"": "s"}"#, false),
        (r#"{"q\\": "s"}"#, true),
        (r#"{"c\u0001": "s"}"#, false),
        (r#"{"c\u0001": 3}"#, true),
        (r#"{"c\u0002": "s"}"#, true),
        (r#"{"c\u0001x": "s"}"#, true),
    ] {
        assert_eq!(b.ok(text), want, "{text}");
    }
}

#[test]
fn extra_keys_are_every_other_spelling() {
    // Every key of up to three units (plain ASCII, non-ASCII, escapes,
    // escaped spellings of the names' characters) against declared names
    // with plain, non-ASCII and escaped characters: an extra member (a
    // string) is accepted iff the key is not a declared name in its
    // canonical spelling; a declared one takes an integer.
    let names = ["a", "ab", "é", "aé", "a\n", "b\"c"];
    let props: Map<String, Value> = names
        .iter()
        .map(|n| (n.to_string(), json!({"type": "integer"})))
        .collect();
    let b = Both::new(json!({
        "properties": props,
        "additionalProperties": {"type": "string"}
    }));
    let canonical: Vec<String> = names
        .iter()
        .map(|n| serde_json::to_string(n).unwrap())
        .collect();
    let units = ["a", "b", "c", "é", "\\u00e9", "\\n", "\\u0061", "\\\"", "ü"];
    let mut keys = vec![String::new()];
    for len in 1..=3 {
        let mut next = Vec::new();
        for k in keys.iter().filter(|k| k.chars().count() + 1 >= len) {
            for u in units {
                next.push(format!("{k}{u}"));
            }
        }
        keys.extend(next);
        keys.sort();
        keys.dedup();
    }
    let mut declared = 0;
    for k in &keys {
        let key = format!("\"{k}\"");
        let is_declared = canonical.contains(&key);
        declared += usize::from(is_declared);
        assert_eq!(b.ok(&format!("{{{key}: \"s\"}}")), !is_declared, "{key}");
        assert_eq!(b.ok(&format!("{{{key}: 1}}")), is_declared, "{key}");
    }
    assert_eq!(declared, names.len());
}

#[test]
fn ref_cycle_through_a_merge_is_a_recursive_rule() {
    // `child` refers to `Foo` with a sibling keyword: the merged schema
    // recurs inside itself. It used to be unfolded until the depth limit
    // ("nested deeper than 200 levels"); instances are as deep as they like.
    let b = Both::new(json!({
        "$ref": "#/definitions/Foo",
        "definitions": {"Foo": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "child": {"allOf": [{"$ref": "#/definitions/Foo"}], "type": "object"}
            },
            "additionalProperties": false
        }}
    }));
    let deep = |n: usize, leaf: &str| {
        let mut t = leaf.to_string();
        for _ in 0..n {
            t = format!(r#"{{"name": "x", "child": {t}}}"#);
        }
        t
    };
    assert!(b.ok(&deep(300, r#"{"name": "leaf"}"#)));
    assert!(!b.ok(&deep(300, r#"{"nme": "leaf"}"#)));
    assert!(!b.ok(&deep(3, r#"{"name": 1}"#)));
    // The same through `$ref` with a sibling, and through a branch.
    for child in [
        json!({"$ref": "#/definitions/Foo", "minProperties": 0}),
        json!({"anyOf": [{"$ref": "#/definitions/Foo"}, {"type": "null"}], "type": "object"}),
    ] {
        let b = Both::new(json!({
            "$ref": "#/definitions/Foo",
            "definitions": {"Foo": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "child": child},
                "additionalProperties": false
            }}
        }));
        assert!(b.ok(&deep(250, r#"{"name": "leaf"}"#)), "{child}");
        assert!(!b.ok(&deep(250, r#"{"name": 2}"#)), "{child}");
    }
}

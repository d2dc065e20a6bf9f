//! The JSON task (`json`): extraction under a JSON Schema, as the JSON
//! benchmark of Mündler et al. (their §5, data set
//! `eth-sri/json-mode-eval-extended`).
//!
//! * **Instances** ([`JsonInstance`]) have the fields of that data set:
//!   `instance_id, input, schema, output`. They are read from a JSON-lines
//!   file ([`read_instances`]; `schema` may be a JSON value or a string
//!   holding one, `output` a string or a JSON value), or made from the
//!   shipped NousResearch json-mode-eval files ([`jme_instances`]): the id
//!   is the file's stem (`JME_12`), `input` is empty (those files hold a
//!   label, `NousResearch/json-mode-eval 12`, not the prompt), `output` is
//!   the gold completion (the file's valid test) written compactly with
//!   keys in schema order ([`schema_order_text`]): cdiff's schema grammars
//!   take properties in any order up to 12 per object and fall back to
//!   schema order beyond, where this order is the one they accept.
//! * **Metrics** ([`judge`]): `syntax_ok` — cdiff's independent recognizer
//!   for the schema's grammar accepts the text *and* serde_json parses it;
//!   `schema_ok` — the parsed value is valid under the schema by the
//!   `jsonschema` crate, an independent validator (its defaults: the draft
//!   named by `$schema`, else 2020-12; `format` is an annotation, not
//!   checked; remote `$ref`s are not fetched and make the schema an error);
//!   `functional_ok` — `schema_ok` and the value equals the gold value
//!   ([`json_equal`]: object key order ignored, numbers compared by value,
//!   so `1.0` equals `1`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::record::natural_cmp;
use crate::error::{Error, ErrorKind, Result};
use crate::recognize::Recognizer;

/// One instance of the JSON task.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JsonInstance {
    /// Its id (`JME_12` for the shipped files).
    pub instance_id: String,
    /// The user prompt (the model's chat prompt when it has a chat
    /// template; empty for the shipped files).
    pub input: String,
    /// The JSON Schema the output must satisfy.
    pub schema: Value,
    /// The gold output, as JSON text.
    pub output: String,
}

impl JsonInstance {
    /// The gold output as a value.
    ///
    /// # Errors
    /// [`ErrorKind::Io`]: `output` is not JSON.
    pub fn gold(&self) -> Result<Value> {
        serde_json::from_str(&self.output).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!(
                    "instance {}: the gold output is not JSON: {e}",
                    self.instance_id
                ),
            )
        })
    }
}

/// An instance as found in a data file: `schema` and `output` may be JSON
/// text or JSON values.
#[derive(Deserialize)]
struct RawInstance {
    instance_id: Value,
    #[serde(default)]
    input: Option<String>,
    schema: Value,
    output: Value,
}

fn bad(what: String) -> Error {
    Error::new(ErrorKind::Io, what)
}

impl RawInstance {
    fn into_instance(self, place: &str) -> Result<JsonInstance> {
        let instance_id = match self.instance_id {
            Value::String(s) => s,
            Value::Number(n) => n.to_string(),
            other => return Err(bad(format!("{place}: instance_id {other} is not a string"))),
        };
        let schema = match self.schema {
            Value::String(s) => serde_json::from_str(&s)
                .map_err(|e| bad(format!("{place}: schema is a string but not JSON: {e}")))?,
            v => v,
        };
        if !schema.is_object() && !schema.is_boolean() {
            return Err(bad(format!(
                "{place}: schema is not an object or a boolean"
            )));
        }
        let output = match self.output {
            Value::String(s) => s,
            v => serde_json::to_string(&v).map_err(|e| bad(format!("{place}: output: {e}")))?,
        };
        Ok(JsonInstance {
            instance_id,
            input: self.input.unwrap_or_default(),
            schema,
            output,
        })
    }
}

/// Reads instances from a JSON-lines file (blank lines skipped).
///
/// # Errors
/// [`ErrorKind::Io`]: the file cannot be read, or a line is not an instance
/// (named by its number).
pub fn read_instances(path: &Path) -> Result<Vec<JsonInstance>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let place = format!("{}: line {}", path.display(), i + 1);
        let r: RawInstance =
            serde_json::from_str(line).map_err(|e| bad(format!("{place}: {e}")))?;
        out.push(r.into_instance(&place)?);
    }
    Ok(out)
}

/// Makes the instances of the shipped json-mode-eval files (`JME_*.json`
/// in `dir`, each `{description, meta, schema, tests}`), in natural order
/// of their names.
///
/// # Errors
/// [`ErrorKind::Io`]: the folder or a file cannot be read, a file is not
/// such an object, or it has no valid test.
pub fn jme_instances(dir: &Path) -> Result<Vec<JsonInstance>> {
    let rd = std::fs::read_dir(dir).map_err(|e| bad(format!("{}: {e}", dir.display())))?;
    let mut files: Vec<(String, std::path::PathBuf)> = Vec::new();
    for e in rd {
        let p = e
            .map_err(|e| bad(format!("{}: {e}", dir.display())))?
            .path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if let Some(name) = name.filter(|n| n.starts_with("JME_") && n.ends_with(".json")) {
            files.push((name.trim_end_matches(".json").to_string(), p));
        }
    }
    if files.is_empty() {
        return Err(bad(format!("{}: no JME_*.json files", dir.display())));
    }
    files.sort_by(|a, b| natural_cmp(&a.0, &b.0));
    let mut out = Vec::with_capacity(files.len());
    for (id, p) in files {
        let text = std::fs::read_to_string(&p).map_err(|e| bad(format!("{}: {e}", p.display())))?;
        let d: Value = serde_json::from_str(&text)
            .map_err(|e| bad(format!("{}: not JSON: {e}", p.display())))?;
        let schema = d
            .get("schema")
            .cloned()
            .ok_or_else(|| bad(format!("{}: no schema", p.display())))?;
        let gold = d
            .get("tests")
            .and_then(Value::as_array)
            .and_then(|ts| {
                ts.iter()
                    .find(|t| t.get("valid") == Some(&Value::Bool(true)))
            })
            .and_then(|t| t.get("data"))
            .ok_or_else(|| bad(format!("{}: no valid test (gold completion)", p.display())))?;
        out.push(JsonInstance {
            output: schema_order_text(gold, &schema),
            instance_id: id,
            input: String::new(),
            schema,
        });
    }
    Ok(out)
}

/// Follows a local `$ref` (`#/...`) of `s` within `root`, a few levels deep.
fn deref<'a>(mut s: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..8 {
        let Some(r) = s.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(ptr) = r.strip_prefix('#') else {
            break;
        };
        match root.pointer(ptr) {
            Some(t) => s = t,
            None => break,
        }
    }
    s
}

fn reorder(v: &Value, schema: &Value, root: &Value) -> Value {
    let s = deref(schema, root);
    match v {
        Value::Object(o) => {
            let props = s.get("properties").and_then(Value::as_object);
            let mut out = Map::new();
            if let Some(props) = props {
                for (k, ps) in props {
                    if let Some(x) = o.get(k) {
                        out.insert(k.clone(), reorder(x, ps, root));
                    }
                }
            }
            for (k, x) in o {
                if !out.contains_key(k) {
                    let sub = s
                        .get("additionalProperties")
                        .filter(|a| a.is_object())
                        .unwrap_or(&Value::Bool(true));
                    out.insert(k.clone(), reorder(x, sub, root));
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => {
            let items = s.get("items").filter(|i| i.is_object());
            Value::Array(
                a.iter()
                    .map(|x| items.map_or_else(|| x.clone(), |i| reorder(x, i, root)))
                    .collect(),
            )
        }
        x => x.clone(),
    }
}

/// `v` as compact JSON text with the properties each (sub)schema declares
/// first, in the schema's order (local `$ref`s followed), then the others in
/// their order.
pub fn schema_order_text(v: &Value, schema: &Value) -> String {
    serde_json::to_string(&reorder(v, schema, schema)).unwrap_or_default()
}

/// Whether two JSON values are equal: object key order ignored, numbers
/// compared by value (exactly for two integers, else as `f64`).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_u64(), y.as_u64()) {
                (Some(i), Some(j)) => i == j,
                _ => match (x.as_f64(), y.as_f64()) {
                    (Some(f), Some(g)) => f == g,
                    _ => x.to_string() == y.to_string(),
                },
            },
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| json_equal(p, q)))
        }
        _ => a == b,
    }
}

/// The independent schema validator of one instance (the `jsonschema`
/// crate).
pub struct SchemaOracle {
    validator: jsonschema::Validator,
}

impl SchemaOracle {
    /// Compiles `schema`.
    ///
    /// # Errors
    /// [`ErrorKind::Grammar`]: `jsonschema` refuses the schema (invalid, or
    /// a `$ref` it cannot resolve without fetching).
    pub fn new(schema: &Value) -> Result<SchemaOracle> {
        let validator = jsonschema::validator_for(schema).map_err(|e| {
            Error::new(
                ErrorKind::Grammar,
                format!("the jsonschema validator refuses the schema: {e}"),
            )
        })?;
        Ok(SchemaOracle { validator })
    }

    /// Whether `v` is valid under the schema.
    pub fn is_valid(&self, v: &Value) -> bool {
        self.validator.is_valid(v)
    }
}

/// The metrics of one JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JsonVerdict {
    /// In the schema's grammar (cdiff's recognizer) and parsed by serde_json.
    pub syntax_ok: bool,
    /// Parsed, and valid under the schema (the `jsonschema` crate).
    pub schema_ok: bool,
    /// Schema-valid and equal to the gold value ([`json_equal`]).
    pub functional_ok: bool,
}

/// Judges `text` against an instance's grammar (`recognizer`), schema
/// (`oracle`) and gold value.
pub fn judge(
    recognizer: &Recognizer,
    oracle: &SchemaOracle,
    gold: &Value,
    text: &str,
) -> JsonVerdict {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let in_grammar = recognizer.accepts(text.as_bytes()).unwrap_or(false);
    let schema_ok = parsed.as_ref().is_some_and(|v| oracle.is_valid(v));
    JsonVerdict {
        syntax_ok: in_grammar && parsed.is_some(),
        schema_ok,
        functional_ok: schema_ok && parsed.as_ref().is_some_and(|v| json_equal(v, gold)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_ignores_key_order_and_number_spelling() {
        assert!(json_equal(
            &json!({"a": 1, "b": [1.0, "x"]}),
            &json!({"b": [1, "x"], "a": 1.0})
        ));
        assert!(!json_equal(&json!({"a": 1}), &json!({"a": 1, "b": null})));
        assert!(!json_equal(&json!([1, 2]), &json!([2, 1])));
        assert!(!json_equal(&json!("1"), &json!(1)));
        assert!(!json_equal(&json!(1.5), &json!(1)));
        assert!(json_equal(&json!(u64::MAX), &json!(u64::MAX)));
        assert!(!json_equal(&json!(u64::MAX), &json!(u64::MAX - 1)));
    }

    #[test]
    fn schema_order_follows_properties_and_refs() {
        let schema = json!({
            "type": "object",
            "properties": {"z": {"$ref": "#/$defs/p"}, "a": {"type": "integer"}},
            "$defs": {"p": {"type": "object", "properties": {"y": {}, "b": {}}}}
        });
        let v = json!({"a": 1, "extra": true, "z": {"b": 2, "y": 3}});
        assert_eq!(
            schema_order_text(&v, &schema),
            r#"{"z":{"y":3,"b":2},"a":1,"extra":true}"#
        );
    }

    #[test]
    fn raw_instances_take_text_or_values() {
        let r: RawInstance = serde_json::from_value(json!({
            "instance_id": 3, "schema": "{\"type\":\"integer\"}", "output": 5
        }))
        .unwrap();
        let i = r.into_instance("here").unwrap();
        assert_eq!(
            (i.instance_id.as_str(), i.output.as_str(), i.input.as_str()),
            ("3", "5", "")
        );
        assert_eq!(i.schema, json!({"type": "integer"}));
        let r: RawInstance = serde_json::from_value(json!({
            "instance_id": "x", "schema": "{oops", "output": "1"
        }))
        .unwrap();
        assert!(r.into_instance("here").is_err());
    }
}

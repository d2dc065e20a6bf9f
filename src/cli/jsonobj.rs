//! Order-preserving editing of one JSON object.
//!
//! `serde_json::Map` sorts its keys (the `preserve_order` feature is off), so
//! the JSON-lines mode of `cdiff check` does not re-serialise the input object.
//! Instead the validated input text is split into its top-level members, each
//! kept as the raw text of its value, and the output is written member by
//! member: input fields unchanged and in order, result fields overwritten in
//! place or appended.

use serde_json::Value;

/// The top-level members of a JSON object text, in order: each decoded key
/// with the raw (trimmed) text of its value.
///
/// Returns `None` if `text` is not a single JSON object. The input is meant
/// to be validated by `serde_json` first; this scanner only tracks strings and
/// nesting.
pub fn members(text: &str) -> Option<Vec<(String, &str)>> {
    let b = text.as_bytes();
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut out = Vec::new();
    if b.get(i) == Some(&b'}') {
        return (skip_ws(b, i + 1) == b.len()).then_some(out);
    }
    loop {
        if b.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(b, i)?;
        let key: String = serde_json::from_str(text.get(i..key_end)?).ok()?;
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(b, i + 1);
        let end = value_end(b, start)?;
        out.push((key, text.get(start..end)?.trim_end()));
        i = skip_ws(b, end);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b'}') => {
                return (skip_ws(b, i + 1) == b.len()).then_some(out);
            }
            _ => return None,
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// `b[i]` is an opening quote; the index just after the closing quote.
fn string_end(b: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        match b.get(j)? {
            b'"' => return Some(j + 1),
            b'\\' => j += 2,
            _ => j += 1,
        }
    }
}

/// The index just after the value starting at `i` (before trailing spaces,
/// which the caller trims): the first `,` or `}` outside strings and nesting.
fn value_end(b: &[u8], i: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut j = i;
    loop {
        match *b.get(j)? {
            b'"' => {
                j = string_end(b, j)?;
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => depth -= 1,
            b',' | b'}' if depth == 0 => return (j > i).then_some(j),
            b']' => return None,
            _ => {}
        }
        j += 1;
    }
}

/// Writes the object `members` with `results` overwritten in place (first
/// occurrence; later duplicates dropped) or appended at the end, in order.
pub fn rewrite(members: &[(String, &str)], results: &[(&str, Value)]) -> String {
    let mut out = String::from("{");
    let mut done = vec![false; results.len()];
    let mut first = true;
    let mut field = |out: &mut String, key: &str, value: &str| {
        if !first {
            out.push(',');
        }
        first = false;
        out.push_str(&Value::from(key).to_string());
        out.push(':');
        out.push_str(value);
    };
    for (key, raw) in members {
        match results.iter().position(|(k, _)| k == key) {
            Some(r) if done[r] => {}
            Some(r) => {
                done[r] = true;
                field(&mut out, key, &results[r].1.to_string());
            }
            None => field(&mut out, key, raw),
        }
    }
    for (r, (key, value)) in results.iter().enumerate() {
        if !done[r] {
            field(&mut out, key, &value.to_string());
        }
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_members_in_order() {
        let t = r#" { "z": 1 , "a" : {"x": [1, "},]"]}, "q\"k": "v,}", "e": [] } "#;
        let m = members(t).unwrap();
        let keys: Vec<&str> = m.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["z", "a", "q\"k", "e"]);
        assert_eq!(m[1].1, r#"{"x": [1, "},]"]}"#);
        assert_eq!(m[2].1, r#""v,}""#);
        assert_eq!(m[3].1, "[]");
        assert_eq!(members("{}").unwrap(), vec![]);
        assert!(members("[1]").is_none());
        assert!(members("{\"a\":1} x").is_none());
    }

    #[test]
    fn rewrites_in_place_and_appends() {
        let m = members(r#"{"id": 7, "completable": "old", "partial": [null], "completable": 0}"#)
            .unwrap();
        let out = rewrite(
            &m,
            &[
                ("completable", Value::Bool(true)),
                ("micros", Value::from(1.5)),
            ],
        );
        assert_eq!(
            out,
            r#"{"id":7,"completable":true,"partial":[null],"micros":1.5}"#
        );
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["completable"], true);
    }
}

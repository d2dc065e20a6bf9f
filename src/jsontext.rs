//! JSON text from users (partial outputs, templates, schemas, batch lines),
//! read with cdiff's own nesting limit.
//!
//! serde_json stops at 128 levels of nesting with "recursion limit exceeded",
//! a message that names neither the limit nor the remedy. [`parse`] first
//! scans the text once (O(n), no allocation) for the first point nested
//! deeper than [`MAX_JSON_DEPTH`] and reports it with its line and column,
//! then parses with serde_json.

use serde_json::Value;

/// The deepest nesting of arrays and objects cdiff reads (serde_json's own
/// recursion limit, which protects the stack).
pub const MAX_JSON_DEPTH: usize = 128;

/// Where `text` first nests deeper than `max` levels: `(line, column)`,
/// both 1-based, of the opening bracket. Brackets inside strings do not
/// count.
pub fn too_deep(text: &str, max: usize) -> Option<(usize, usize)> {
    let (mut depth, mut line, mut col) = (0usize, 1usize, 0usize);
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        col += 1;
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else {
            match c {
                '"' => in_string = true,
                '[' | '{' => {
                    depth += 1;
                    if depth > max {
                        return Some((line, col));
                    }
                }
                ']' | '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        if c == '\n' {
            line += 1;
            col = 0;
        }
    }
    None
}

/// Parses JSON text, reporting nesting past [`MAX_JSON_DEPTH`] as cdiff's
/// own limit. The message is for the caller to wrap in its error kind.
///
/// # Errors
/// A one-line message: the nesting limit with its position, or
/// serde_json's description of the syntax error (with line and column).
pub fn parse(text: &str) -> std::result::Result<Value, String> {
    if let Some((line, col)) = too_deep(text, MAX_JSON_DEPTH) {
        return Err(format!(
            "nested deeper than {MAX_JSON_DEPTH} levels at line {line} column {col} (cdiff reads \
             JSON nested at most {MAX_JSON_DEPTH} deep)"
        ));
    }
    serde_json::from_str(text).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_is_found_outside_strings_only() {
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(too_deep(&deep, 128), Some((1, 129)));
        assert_eq!(too_deep(&deep, 129), None);
        let in_string = format!("[\"{}\\\"{}\"]", "[".repeat(500), "{".repeat(500));
        assert_eq!(too_deep(&in_string, 2), None);
        assert!(parse(&in_string).is_ok());
        let lines = "{\n \"a\": [\n  [1]\n ]\n}";
        assert_eq!(too_deep(lines, 2), Some((3, 3)));
        let e = parse(&deep).unwrap_err();
        assert!(
            e.contains("nested deeper than 128 levels at line 1 column 129"),
            "{e}"
        );
        // Exactly at the limit, serde_json reads it.
        let at = format!("{}{}", "[".repeat(127), "]".repeat(127));
        assert!(parse(&at).is_ok());
    }
}

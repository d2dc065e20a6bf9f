//! ECMA-262 `pattern`s to `regex-syntax` terminals over JSON string text.
//!
//! Three steps:
//! 1. [`parse_ecma`]: rewrite the ECMA-only escapes (`\d`, `\w` are ASCII in
//!    ECMA, `\uXXXX`, `\/`, `\cX`) and parse with `regex-syntax`. Look-arounds
//!    and back-references are rejected by the parser (an error).
//! 2. [`search_language`]: JSON Schema patterns are *not* anchored: `p`
//!    matches a string that contains a match of `p`. Anchors `^`/`$` at the
//!    ends of the top-level branches are removed, the other ends get `.*`;
//!    an anchor elsewhere is an error.
//! 3. [`json_encode`]: the content language becomes the language of its JSON
//!    encodings: `"` and `\` must be written `\"`, `\\`; control characters
//!    as `\b \f \n \r \t` or `\u00XX`; `/` may be written `\/`. Other
//!    characters must be written unescaped (a `\uXXXX` escape of an ordinary
//!    character is not accepted — a documented under-approximation).

use regex_syntax::hir::{
    Capture, Class, ClassUnicode, ClassUnicodeRange, Dot, Hir, HirKind, Look, Repetition,
};

/// One character of a JSON string, as written.
const ANY_JSON_CHAR: &str = r#"(?:[^"\\\x00-\x1F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))"#;

/// Most bytes of a pattern accepted.
const MAX_PATTERN: usize = 10_000;

/// Rewrites ECMA escapes into `regex-syntax` syntax and parses the result.
pub fn parse_ecma(pattern: &str) -> Result<Hir, String> {
    if pattern.len() > MAX_PATTERN {
        return Err(format!("pattern longer than {MAX_PATTERN} bytes"));
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut it = pattern.chars().peekable();
    while let Some(c) = it.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = it.next() else {
            return Err("pattern ends with a lone backslash".into());
        };
        match e {
            'd' => out.push_str("[0-9]"),
            'D' => out.push_str("[^0-9]"),
            'w' => out.push_str("[0-9A-Za-z_]"),
            'W' => out.push_str("[^0-9A-Za-z_]"),
            '/' => out.push('/'),
            'u' => {
                let hex: String = it.clone().take(4).collect();
                if hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()) {
                    for _ in 0..4 {
                        it.next();
                    }
                    out.push_str(&format!("\\x{{{hex}}}"));
                } else if it.peek() == Some(&'{') {
                    out.push_str("\\x");
                } else {
                    return Err("bad \\u escape".into());
                }
            }
            'c' => match it.next() {
                Some(l) if l.is_ascii_alphabetic() => {
                    out.push_str(&format!("\\x{:02X}", (l as u8) % 32));
                }
                _ => return Err("bad \\c escape".into()),
            },
            '0' => out.push_str("\\x00"),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    regex_syntax::ParserBuilder::new()
        .build()
        .parse(&out)
        .map_err(|e| {
            format!(
                "unsupported pattern {pattern:?}: {}",
                first_line(&e.to_string())
            )
        })
}

fn first_line(s: &str) -> String {
    s.lines().last().unwrap_or("").trim().to_string()
}

fn dot_star() -> Hir {
    Hir::repetition(Repetition {
        min: 0,
        max: None,
        greedy: true,
        sub: Box::new(Hir::dot(Dot::AnyChar)),
    })
}

fn is_start(h: &Hir) -> bool {
    matches!(
        h.kind(),
        HirKind::Look(Look::Start | Look::StartLF | Look::StartCRLF)
    )
}

fn is_end(h: &Hir) -> bool {
    matches!(
        h.kind(),
        HirKind::Look(Look::End | Look::EndLF | Look::EndCRLF)
    )
}

fn has_look(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Look(_) => true,
        HirKind::Repetition(r) => has_look(&r.sub),
        HirKind::Capture(c) => has_look(&c.sub),
        HirKind::Concat(v) | HirKind::Alternation(v) => v.iter().any(has_look),
        _ => false,
    }
}

/// The strings that *contain* a match of `h` (anchors honoured at the ends).
pub fn search_language(h: Hir) -> Result<Hir, String> {
    let parts = split(h)?;
    Ok(Hir::alternation(
        parts
            .into_iter()
            .map(|(sa, ea, body)| {
                let mut v = Vec::new();
                if !sa {
                    v.push(dot_star());
                }
                v.push(body);
                if !ea {
                    v.push(dot_star());
                }
                Hir::concat(v)
            })
            .collect(),
    ))
}

/// Most branches the anchor analysis distributes a pattern into.
const MAX_BRANCHES: usize = 256;

/// `h` as a union of `(anchored at start, anchored at end, anchor-free body)`.
fn split(h: Hir) -> Result<Vec<(bool, bool, Hir)>, String> {
    let unsupported =
        || "anchors or word boundaries inside a pattern are not supported".to_string();
    Ok(match h.into_kind() {
        HirKind::Look(l) if is_start(&Hir::look(l)) => vec![(true, false, Hir::empty())],
        HirKind::Look(l) if is_end(&Hir::look(l)) => vec![(false, true, Hir::empty())],
        HirKind::Look(_) => return Err(unsupported()),
        HirKind::Capture(c) => split(*c.sub)?,
        HirKind::Alternation(v) => {
            let mut out = Vec::new();
            for x in v {
                out.extend(split(x)?);
                if out.len() > MAX_BRANCHES {
                    return Err("pattern too complex".into());
                }
            }
            out
        }
        HirKind::Concat(v) => {
            let mut acc: Vec<(bool, bool, Hir)> = vec![(false, false, Hir::empty())];
            let mut first = true;
            for x in v {
                let parts = split(x)?;
                let mut next = Vec::new();
                for (sa1, ea1, b1) in &acc {
                    for (sa2, ea2, b2) in &parts {
                        let e1 = matches!(b1.kind(), HirKind::Empty);
                        let e2 = matches!(b2.kind(), HirKind::Empty);
                        let combined = if first {
                            Some((*sa2, *ea2, b2.clone()))
                        } else if *ea1 {
                            // After the end anchor only empty words remain.
                            (e2 && !*sa2).then(|| (*sa1, true, b1.clone()))
                        } else if *sa2 {
                            // Before a start anchor only empty words remain.
                            e1.then(|| (true, *ea2, b2.clone()))
                        } else {
                            Some((*sa1, *ea2, Hir::concat(vec![b1.clone(), b2.clone()])))
                        };
                        match combined {
                            Some(c) => next.push(c),
                            None => return Err(unsupported()),
                        }
                    }
                }
                if next.len() > MAX_BRANCHES {
                    return Err("pattern too complex".into());
                }
                acc = next;
                first = false;
            }
            acc
        }
        kind => {
            let h = rebuild(kind);
            if has_look(&h) {
                return Err(unsupported());
            }
            vec![(false, false, h)]
        }
    })
}

fn rebuild(kind: HirKind) -> Hir {
    match kind {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => Hir::literal(l.0),
        HirKind::Class(c) => Hir::class(c),
        HirKind::Look(l) => Hir::look(l),
        HirKind::Repetition(r) => Hir::repetition(r),
        HirKind::Capture(c) => Hir::capture(c),
        HirKind::Concat(v) => Hir::concat(v),
        HirKind::Alternation(v) => Hir::alternation(v),
    }
}

fn lit(s: &str) -> Hir {
    Hir::literal(s.as_bytes())
}

fn hex_class(nibble: u32) -> Hir {
    let d = char::from_digit(nibble, 16).unwrap_or('0');
    let up = d.to_ascii_uppercase();
    Hir::class(Class::Unicode(ClassUnicode::new([
        ClassUnicodeRange::new(d, d),
        ClassUnicodeRange::new(up, up),
    ])))
}

/// The JSON encodings of a character that must (or may) be escaped.
fn escapes_of(c: char) -> Vec<Hir> {
    let mut v = Vec::new();
    match c {
        '"' => v.push(lit("\\\"")),
        '\\' => v.push(lit("\\\\")),
        '/' => v.push(lit("\\/")),
        '\u{8}' => v.push(lit("\\b")),
        '\u{c}' => v.push(lit("\\f")),
        '\n' => v.push(lit("\\n")),
        '\r' => v.push(lit("\\r")),
        '\t' => v.push(lit("\\t")),
        _ => {}
    }
    let n = c as u32;
    if n < 0x20 || c == '"' || c == '\\' || c == '/' {
        v.push(Hir::concat(vec![
            lit("\\u00"),
            hex_class(n >> 4),
            hex_class(n & 15),
        ]));
    }
    v
}

/// Characters that JSON cannot write unescaped.
fn must_escape() -> ClassUnicode {
    ClassUnicode::new([
        ClassUnicodeRange::new('\0', '\u{1f}'),
        ClassUnicodeRange::new('"', '"'),
        ClassUnicodeRange::new('\\', '\\'),
    ])
}

fn encode_class(c: &ClassUnicode) -> Hir {
    let mut plain = c.clone();
    plain.difference(&must_escape());
    let mut alts = Vec::new();
    if !plain.ranges().is_empty() {
        alts.push(Hir::class(Class::Unicode(plain)));
    }
    let mut special = c.clone();
    special.intersect(&ClassUnicode::new([
        ClassUnicodeRange::new('\0', '\u{1f}'),
        ClassUnicodeRange::new('"', '"'),
        ClassUnicodeRange::new('/', '/'),
        ClassUnicodeRange::new('\\', '\\'),
    ]));
    for r in special.ranges() {
        for c in r.start()..=r.end() {
            alts.extend(escapes_of(c));
        }
    }
    Hir::alternation(alts)
}

/// Maps a language of string contents to the language of their JSON
/// encodings (without the quotes).
pub fn json_encode(h: Hir) -> Result<Hir, String> {
    Ok(match h.into_kind() {
        HirKind::Empty => Hir::empty(),
        HirKind::Literal(l) => {
            let s = std::str::from_utf8(&l.0)
                .map_err(|_| "pattern matches non-UTF-8 bytes".to_string())?;
            Hir::concat(
                s.chars()
                    .map(|c| encode_class(&ClassUnicode::new([ClassUnicodeRange::new(c, c)])))
                    .collect(),
            )
        }
        HirKind::Class(Class::Unicode(c)) => {
            let mut rest = c.clone();
            rest.negate();
            if rest.ranges().is_empty() {
                // Any character: any JSON string character (escapes of
                // ordinary characters included), a much smaller automaton.
                regex_syntax::Parser::new()
                    .parse(ANY_JSON_CHAR)
                    .map_err(|e| e.to_string())?
            } else {
                encode_class(&c)
            }
        }
        HirKind::Class(Class::Bytes(_)) => {
            return Err("byte classes are not supported in patterns".into())
        }
        HirKind::Look(_) => return Err("anchors inside a pattern are not supported".into()),
        HirKind::Repetition(r) => {
            let sub = json_encode(*r.sub)?;
            // regex-syntax prints a repetition of a repetition without a
            // group: `(x+)?` would come out as `x+?`, a lazy `x+`. Keep a
            // group around it.
            let sub = match sub.kind() {
                HirKind::Repetition(_) => Hir::capture(Capture {
                    index: 1,
                    name: None,
                    sub: Box::new(sub),
                }),
                _ => sub,
            };
            Hir::repetition(Repetition {
                sub: Box::new(sub),
                ..r
            })
        }
        HirKind::Capture(c) => json_encode(*c.sub)?,
        HirKind::Concat(v) => {
            Hir::concat(v.into_iter().map(json_encode).collect::<Result<_, _>>()?)
        }
        HirKind::Alternation(v) => {
            Hir::alternation(v.into_iter().map(json_encode).collect::<Result<_, _>>()?)
        }
    })
}

/// If `h` (a search language) is exactly `C{m,n}` for a class `C` — the shape of
/// `^[a-z]{2,5}$` — returns the class and bounds, so a length constraint can
/// be merged into it.
pub fn as_class_repetition(h: &Hir) -> Option<(ClassUnicode, u32, Option<u32>)> {
    match h.kind() {
        HirKind::Repetition(r) => match r.sub.kind() {
            HirKind::Class(Class::Unicode(c)) => Some((c.clone(), r.min, r.max)),
            _ => None,
        },
        HirKind::Concat(v) if v.is_empty() => None,
        _ => None,
    }
}

/// The full terminal pattern (quotes included) for strings whose content
/// matches the ECMA `pattern` (search semantics).
pub fn pattern_terminal(pattern: &str) -> Result<String, String> {
    let h = search_language(parse_ecma(pattern)?)?;
    Ok(format!("\"{}\"", json_encode(h)?))
}

/// The terminal pattern for strings whose content is `C{min,max}`.
pub fn class_repetition_terminal(
    c: ClassUnicode,
    min: u32,
    max: Option<u32>,
) -> Result<String, String> {
    let h = Hir::repetition(Repetition {
        min,
        max,
        greedy: true,
        sub: Box::new(Hir::class(Class::Unicode(c))),
    });
    Ok(format!("\"{}\"", json_encode(h)?))
}

/// The terminal pattern for strings whose content matches the `regex-syntax`
/// pattern `content` (anchored).
pub fn content_terminal(content: &str) -> Result<String, String> {
    let h = regex_syntax::Parser::new()
        .parse(content)
        .map_err(|e| first_line(&e.to_string()))?;
    Ok(format!("\"{}\"", json_encode(h)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepts(pattern: &str, json_text: &str) -> bool {
        let t = pattern_terminal(pattern).unwrap();
        regex::Regex::new(&format!("^(?:{t})$"))
            .unwrap()
            .is_match(json_text)
    }

    #[test]
    fn anchoring() {
        assert!(accepts("^a+$", "\"aaa\""));
        assert!(!accepts("^a+$", "\"aab\""));
        assert!(accepts("a+", "\"xaay\""));
        assert!(accepts("^ab", "\"abz\"") && !accepts("^ab", "\"zab\""));
        assert!(accepts("ab$", "\"zab\"") && !accepts("ab$", "\"abz\""));
        assert!(accepts("^a$|^b$", "\"b\"") && !accepts("^a$|^b$", "\"ab\""));
        assert!(accepts("^(a|b)$", "\"b\""));
        assert!(accepts("^\\d{3}-\\d{4}$", "\"555-1234\""));
        assert!(!accepts("^\\d{3}$", "\"١٢٣\""));
    }

    #[test]
    fn escapes() {
        assert!(accepts("^\"$", "\"\\\"\""));
        assert!(accepts("^\\\\$", "\"\\\\\""));
        assert!(accepts("^\\n$", "\"\\n\"") && accepts("^\\n$", "\"\\u000A\""));
        assert!(accepts("^/$", "\"/\"") && accepts("^/$", "\"\\/\""));
        assert!(accepts("^[^a]$", "\"\\\"\""));
        assert!(!accepts("^[^a]$", "\"\"\""));
        assert!(accepts("^\\u0041$", "\"A\""));
    }

    /// maskbench Github_medium---o82570: `([a-z0-9-]+)?` was printed as the
    /// lazy `[a-z0-9-]+?`, so an empty group was rejected.
    #[test]
    fn optional_repetition_is_not_a_lazy_repetition() {
        assert!(accepts("^a:(x+)?:b$", "\"a::b\""));
        assert!(accepts("^a:(x+)?:b$", "\"a:xx:b\""));
        assert!(!accepts("^a:(x+)?:b$", "\"a:y:b\""));
        assert!(accepts("^(x{2})*$", "\"xxxx\"") && !accepts("^(x{2})*$", "\"xxx\""));
        let p =
            "^pbj:([a-z0-9-]+):([a-z0-9\\.-]+):([a-z0-9-]+)?:([a-z0-9-]+):([0-9]+-[0-9]+-[0-9]+)$";
        assert!(accepts(p, "\"pbj:gdbots:pbjx::envelope:1-0-1\""));
    }

    #[test]
    fn unsupported() {
        assert!(pattern_terminal("(?=a)b").is_err());
        assert!(pattern_terminal("(a)\\1").is_err());
        assert!(pattern_terminal("a\\bb").is_err());
    }
}

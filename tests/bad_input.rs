//! Bad input gives a typed error with a clear message — never a panic or a hang.

use cdiff::{Config, Constraint, ErrorKind, Grammar, Partial};

/// A grammar, the expected error kind, `line:column` if any, and words the
/// message must contain.
type BadGrammar = (
    &'static str,
    ErrorKind,
    Option<(usize, usize)>,
    &'static str,
);

const BAD_GRAMMARS: &[BadGrammar] = &[
    ("start: (\"a\"", ErrorKind::Grammar, Some((1, 8)), "("),
    (
        "start: \"a\"\nnext: foo",
        ErrorKind::Grammar,
        Some((2, 7)),
        "foo",
    ),
    (
        "start: A\nA: /[a-/",
        ErrorKind::Regex,
        Some((2, 1)),
        "terminal A",
    ),
    (
        "start: A\nA: A \"x\"",
        ErrorKind::Grammar,
        Some((2, 1)),
        "recursive",
    ),
    ("start: start \"a\"", ErrorKind::Grammar, None, "empty"),
    (
        "start: A\nA: /a*/",
        ErrorKind::Grammar,
        Some((2, 1)),
        "empty string",
    ),
    (
        "start: A\nA: /(?=a)a/",
        ErrorKind::Regex,
        Some((2, 4)),
        "lookaround",
    ),
    ("start \"a\"", ErrorKind::Grammar, Some((1, 7)), "':'"),
    ("other: \"a\"", ErrorKind::Grammar, None, "start"),
];

#[test]
fn malformed_grammars_are_typed_errors_with_positions() {
    for &(src, kind, pos, needle) in BAD_GRAMMARS {
        let err = Grammar::from_lark(src, None)
            .and_then(|g| Constraint::compile(&g).map(|_| g))
            .unwrap_err();
        assert_eq!(err.kind(), kind, "{src:?}: {err}");
        if let Some((line, _col)) = pos {
            let (l, _c) = err
                .position()
                .unwrap_or_else(|| panic!("{src:?}: no position in {err}"));
            assert_eq!(l, line, "{src:?}: {err}");
        }
        assert!(
            err.to_string().contains(needle),
            "{src:?}: message {err} lacks {needle:?}"
        );
    }
}

#[test]
fn invalid_partial_json_is_a_typed_error() {
    for bad in [
        "[1]",
        "{",
        "\"x\"",
        "[null, 3]",
        "",
        "[\"a\", [null]]",
        "{\"partial\": []}",
    ] {
        let err = Partial::from_json(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Partial, "{bad:?}: {err}");
    }
}

#[test]
fn budget_exhaustion_is_an_error_not_a_verdict() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::with_config(
        &g,
        Config {
            budget: 50,
            ..Config::default()
        },
    )
    .unwrap();
    let p = Partial::new().text("{\"a\": [1, 2, ").hole().text("]}");
    assert_eq!(c.completable(&p).unwrap_err().kind(), ErrorKind::Budget);
    assert_eq!(c.check(&p).unwrap_err().kind(), ErrorKind::Budget);
}

#[test]
fn a_megabyte_of_noise_is_decided_quickly() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut rng = cdiff::rng::SplitMix64::new(9);
    let noise: Vec<u8> = (0..1 << 20).map(|_| rng.next_u64() as u8).collect();
    let start = std::time::Instant::now();
    let p = Partial::new()
        .text(&noise[..1 << 19])
        .hole()
        .text(&noise[1 << 19..]);
    assert!(!c.check(&p).unwrap());
    let p = Partial::new().text("[").hole().text(&noise);
    assert!(!c.check(&p).unwrap());
    assert!(start.elapsed().as_secs() < 60);
}

#[test]
fn invalid_utf8_and_control_bytes_in_partials_do_not_panic() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    for bytes in [
        &b"\xff\xfe"[..],
        b"\"\xc3",
        b"\"\xc3\xa9\"",
        b"\x00",
        b"[\"\x1f\"]",
    ] {
        let _ = c.completable(&Partial::complete(bytes)).unwrap();
        let _ = c.completable(&Partial::new().text(bytes).hole()).unwrap();
        let _ = c
            .completable(&Partial::new().hole().text(bytes).hole())
            .unwrap();
    }
    // A multi-byte character split by a hole can be completed.
    let p = Partial::new().text(b"\"\xc3").hole().text(b"\"");
    assert!(c.check(&p).unwrap());
}

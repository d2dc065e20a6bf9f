//! Regression tests, each named after the bug it pins.

use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar, Partial};

fn json() -> (Constraint, Recognizer) {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    (
        Constraint::compile(&g).unwrap(),
        Recognizer::new(&g).unwrap(),
    )
}

fn assert_completable(c: &Constraint, r: &Recognizer, p: &Partial) {
    let v = c.completable(p).unwrap();
    let done = v
        .completion()
        .unwrap_or_else(|| panic!("{p:?} reported not completable"));
    assert!(
        r.accepts(&done.text).unwrap(),
        "{p:?}: witness {:?}",
        String::from_utf8_lossy(&done.text)
    );
}

/// Hole sets are trimmed to the lexer states that matter given the byte after
/// the hole; two holes with equal trimmed sets but different following bytes
/// once shared cached transitions, trimmed for the wrong byte, which lost the
/// string lexeme spanning `□"□sd□]` (e.g. `["sd"]`).
#[test]
fn hole_set_trim_depends_on_the_following_byte() {
    let (c, r) = json();
    assert_completable(
        &c,
        &r,
        &Partial::new()
            .hole()
            .text("\"")
            .hole()
            .text("sd")
            .hole()
            .text("]"),
    );
    assert_completable(
        &c,
        &r,
        &Partial::new()
            .hole()
            .text("\"")
            .hole()
            .text("s")
            .hole()
            .text("]"),
    );
}

/// A 1 MB document must be decided (or give a budget error), never hang:
/// the purely bottom-up search was quadratic on long lists.
#[test]
fn long_lists_are_linear_not_quadratic() {
    let (c, _) = json();
    let mut doc = String::from("[");
    let mut i = 0;
    while doc.len() < 300_000 {
        doc.push_str(&format!("{{\"k{i}\": [1.5, \"s\\n\", true]}}, "));
        i += 1;
    }
    doc.push_str("null]");
    let b = doc.as_bytes();
    let n = b.len();
    let start = std::time::Instant::now();
    assert!(c.check(&Partial::complete(b)).unwrap());
    assert!(c
        .check(
            &Partial::new()
                .text(&b[..n / 2])
                .hole()
                .text(&b[n / 2 + 10..])
        )
        .unwrap());
    // Generous bound: quadratic behaviour takes minutes here.
    assert!(start.elapsed().as_secs() < 60);
}

/// Issue 16: `start: b ~ 1000`, `b: c ~ 1000`, `c: "x" ~ 1000` with one hole
/// used to abort on a 6.4 GB allocation (a witness bucket per yield length).
/// Emptiness is decided at once; only the 10⁹-terminal witness is refused.
#[test]
fn huge_shortest_yield_is_a_size_limit_not_an_abort() {
    let g =
        cdiff::Grammar::from_lark("start: b ~ 1000\nb: c ~ 1000\nc: \"x\" ~ 1000\n", None).unwrap();
    let c = cdiff::Constraint::compile(&g).unwrap();
    let p = cdiff::Partial::new().hole();
    assert!(c.check(&p).unwrap());
    let e = c.completable(&p).unwrap_err();
    assert_eq!(e.kind(), cdiff::ErrorKind::SizeLimit, "{e}");
    assert!(e.to_string().contains("1000000000 terminals"), "{e}");
}

/// Issue 16: the doubling grammar `r0: r1 r1`, …, `r40: "a"` (shortest word
/// 2⁴⁰ bytes) used to abort with 3.2 GB; yield lengths now saturate.
#[test]
fn doubling_grammar_witness_is_refused_not_aborted() {
    let mut src = String::from("start: r0\n");
    for i in 0..40 {
        src.push_str(&format!("r{i}: r{} r{}\n", i + 1, i + 1));
    }
    src.push_str("r40: \"a\"\n");
    let g = cdiff::Grammar::from_lark(&src, None).unwrap();
    let c = cdiff::Constraint::compile(&g).unwrap();
    let p = cdiff::Partial::new().hole();
    assert!(c.check(&p).unwrap());
    let e = c.completable(&p).unwrap_err();
    assert_eq!(e.kind(), cdiff::ErrorKind::SizeLimit, "{e}");
    // A short witness of the same grammar family is still produced.
    let g = cdiff::Grammar::from_lark("start: r0\nr0: r1 r1\nr1: \"a\"\n", None).unwrap();
    let c = cdiff::Constraint::compile(&g).unwrap();
    let v = c.completable(&p).unwrap();
    assert_eq!(v.completion().unwrap().text, b"aa");
}

/// Issue 16: `start: "a" "b"` with `%ignore "a"`: the engine said "not
/// completable" for `ab` and the recognizer accepted it. As in Lark, an
/// ignored terminal is always dropped, in both; the grammar says so.
#[test]
fn ignored_terminal_named_by_a_rule_is_dropped_by_engine_and_recognizer() {
    let g = Grammar::from_lark("start: \"a\" \"b\"\n%ignore \"a\"\n", None).unwrap();
    assert_eq!(g.ignored_but_used(), vec!["\"a\""]);
    let c = Constraint::compile(&g).unwrap();
    let r = Recognizer::new(&g).unwrap();
    for text in [&b"ab"[..], b"b", b"aab"] {
        assert_eq!(
            c.check(&Partial::complete(text)).unwrap(),
            r.accepts(text).unwrap(),
            "{:?}",
            String::from_utf8_lossy(text)
        );
    }
    assert!(!r.accepts(b"ab").unwrap());
}

/// Issue 16: `\p{L}` in a Lark regex was escaped into `\p\{L\}` and refused.
#[test]
fn unicode_class_in_a_lark_regex_is_kept() {
    let g = Grammar::from_lark("start: W\nW: /[\\p{Lu}0-9]\\p{L}*/\n", None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    assert!(c.check(&Partial::complete("Éte")).unwrap());
    assert!(c.check(&Partial::complete("9é")).unwrap());
    assert!(!c.check(&Partial::complete("é9")).unwrap());
    let e = Grammar::from_lark("start: W\nW: /(a)\\1/\n", None).unwrap_err();
    assert!(e.to_string().contains("not regular"), "{e}");
}

/// Issue 16: a schema with `{"type": "integr"}` said "the grammar's language
/// is empty"; it names the type and where it is.
#[test]
fn unknown_schema_type_is_named_with_its_pointer() {
    let e =
        Grammar::from_json_schema_str(r#"{"properties": {"n": {"type": "integr"}}}"#).unwrap_err();
    let m = e.to_string();
    assert!(
        m.contains("\"integr\"") && m.contains("#/properties/n/type"),
        "{m}"
    );
}

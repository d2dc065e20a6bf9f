//! Data-driven tests of the recognizer, on grammars built by hand.

use super::{Lexeme, Recognizer};
use crate::error::ErrorKind;
use crate::grammar::ast::{Expr, Grammar, Rule, RuleId, TermId, Terminal};

fn t(i: u32) -> Expr {
    Expr::Term(TermId(i))
}
fn r(i: u32) -> Expr {
    Expr::Rule(RuleId(i))
}
fn seq(v: Vec<Expr>) -> Expr {
    Expr::Seq(v)
}
fn alt(v: Vec<Expr>) -> Expr {
    Expr::Alt(v)
}
fn opt(e: Expr) -> Expr {
    Expr::Opt(Box::new(e))
}
fn star(e: Expr) -> Expr {
    Expr::Star(Box::new(e))
}
fn plus(e: Expr) -> Expr {
    Expr::Plus(Box::new(e))
}

/// A grammar whose start is the first rule.
fn grammar(terms: &[&str], rules: Vec<Expr>, ignore: &[u32]) -> Grammar {
    Grammar {
        terminals: terms
            .iter()
            .enumerate()
            .map(|(i, p)| Terminal {
                name: format!("T{i}"),
                pattern: p.to_string(),
            })
            .collect(),
        rules: rules
            .into_iter()
            .enumerate()
            .map(|(i, expr)| Rule {
                name: format!("r{i}"),
                expr,
            })
            .collect(),
        ignore: ignore.iter().map(|&i| TermId(i)).collect(),
        start: RuleId(0),
    }
}

/// Checks every `(text, accepted)` pair against `g`.
fn check(what: &str, g: &Grammar, cases: &[(&[u8], bool)]) {
    let rec = Recognizer::new(g).unwrap_or_else(|e| panic!("{what}: {e}"));
    for (text, want) in cases {
        let got = rec.accepts(text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            got,
            *want,
            "{what}: text {:?}",
            String::from_utf8_lossy(text)
        );
    }
}

fn lx(start: usize, end: usize, terms: &[u32], ignorable: bool) -> Lexeme {
    Lexeme {
        start,
        end,
        terminals: terms.iter().map(|&i| TermId(i)).collect(),
        ignorable,
    }
}

/// A lexing case: description, grammar, text, expected lexemes.
type LexCase = (&'static str, Grammar, &'static [u8], Option<Vec<Lexeme>>);

#[test]
fn lexing_table() {
    let ws = " +";
    let cases: Vec<LexCase> = vec![
        (
            "longest over alternation",
            grammar(&["a|ab", "b"], vec![t(0)], &[]),
            b"ab",
            Some(vec![lx(0, 2, &[0], false)]),
        ),
        (
            "longest then rest",
            grammar(&["a|ab", "b"], vec![t(0)], &[]),
            b"abb",
            Some(vec![lx(0, 2, &[0], false), lx(2, 3, &[1], false)]),
        ),
        (
            "nested alternation longest",
            grammar(&["(a|ab)(c|bcd)"], vec![t(0)], &[]),
            b"abcd",
            Some(vec![lx(0, 4, &[0], false)]),
        ),
        (
            "lazy quantifier still longest",
            grammar(&["a+?"], vec![t(0)], &[]),
            b"aaa",
            Some(vec![lx(0, 3, &[0], false)]),
        ),
        (
            "keyword and identifier",
            grammar(&["while", "[a-z]+", ws], vec![t(0)], &[2]),
            b"while whilex",
            Some(vec![
                lx(0, 5, &[0, 1], false),
                lx(5, 6, &[2], true),
                lx(6, 12, &[1], false),
            ]),
        ),
        (
            "== vs =",
            grammar(&["=", "==", "[a-z]+", ws], vec![t(0)], &[3]),
            b"a = = b",
            Some(vec![
                lx(0, 1, &[2], false),
                lx(1, 2, &[3], true),
                lx(2, 3, &[0], false),
                lx(3, 4, &[3], true),
                lx(4, 5, &[0], false),
                lx(5, 6, &[3], true),
                lx(6, 7, &[2], false),
            ]),
        ),
        (
            "=== is == then =",
            grammar(&["=", "==", "[a-z]+"], vec![t(0)], &[]),
            b"===",
            Some(vec![lx(0, 2, &[1], false), lx(2, 3, &[0], false)]),
        ),
        (
            "ignored and used",
            grammar(&["\n", "[ \n]+", "x"], vec![t(0)], &[1]),
            b"x\n\n \n",
            Some(vec![lx(0, 1, &[2], false), lx(1, 5, &[1], true)]),
        ),
        (
            "ignored and used, single",
            grammar(&["\n", "[ \n]+", "x"], vec![t(0)], &[1]),
            b"\n",
            Some(vec![lx(0, 1, &[0, 1], true)]),
        ),
        (
            "unicode dot is one char",
            grammar(&["."], vec![t(0)], &[]),
            "é€😀".as_bytes(),
            Some(vec![
                lx(0, 2, &[0], false),
                lx(2, 5, &[0], false),
                lx(5, 9, &[0], false),
            ]),
        ),
        (
            "unicode class",
            grammar(&["[α-ω]+", " "], vec![t(0)], &[]),
            "αβγ ω".as_bytes(),
            Some(vec![
                lx(0, 6, &[0], false),
                lx(6, 7, &[1], false),
                lx(7, 9, &[0], false),
            ]),
        ),
        (
            "case-insensitive unicode",
            grammar(&["(?i)straße"], vec![t(0)], &[]),
            "STRAẞE".as_bytes(),
            Some(vec![lx(0, 8, &[0], false)]),
        ),
        (
            "invalid utf-8",
            grammar(&["."], vec![t(0)], &[]),
            b"a\xffb",
            None,
        ),
        (
            "truncated utf-8",
            grammar(&["[a-z]+|."], vec![t(0)], &[]),
            b"ab\xc3",
            None,
        ),
        (
            "explicit byte pattern",
            grammar(&[r"(?-u:\xff)", "a"], vec![t(0)], &[]),
            b"a\xff",
            Some(vec![lx(0, 1, &[1], false), lx(1, 2, &[0], false)]),
        ),
        (
            "no terminal matches",
            grammar(&["a"], vec![t(0)], &[]),
            b"ab",
            None,
        ),
        (
            "nullable terminal never empty lexeme",
            grammar(&["a*", "b"], vec![t(0)], &[]),
            b"baab",
            Some(vec![
                lx(0, 1, &[1], false),
                lx(1, 3, &[0], false),
                lx(3, 4, &[1], false),
            ]),
        ),
        (
            "anchors",
            grammar(&["^a$", "^b", "c$"], vec![t(0)], &[]),
            b"abc",
            Some(vec![
                lx(0, 1, &[0], false),
                lx(1, 2, &[1], false),
                lx(2, 3, &[2], false),
            ]),
        ),
        (
            "end anchor inside",
            grammar(&["a$|ab", "b"], vec![t(0)], &[]),
            b"ab",
            Some(vec![lx(0, 2, &[0], false)]),
        ),
        (
            "bounded repetition",
            grammar(&["a{2,3}", "a"], vec![t(0)], &[]),
            b"aaaaaa",
            Some(vec![lx(0, 3, &[0], false), lx(3, 6, &[0], false)]),
        ),
        (
            "bounded repetition rest",
            grammar(&["a{2,3}", "a"], vec![t(0)], &[]),
            b"aaaa",
            Some(vec![lx(0, 3, &[0], false), lx(3, 4, &[1], false)]),
        ),
        (
            "empty text",
            grammar(&["a"], vec![t(0)], &[]),
            b"",
            Some(vec![]),
        ),
    ];
    for (what, g, text, want) in cases {
        let rec = Recognizer::new(&g).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(rec.lex(text), want, "{what}");
    }
}

#[test]
fn longest_match_parsing() {
    // start: A B? with A = a|ab, B = b.
    let g = grammar(&["a|ab", "b"], vec![seq(vec![t(0), opt(t(1))])], &[]);
    check(
        "a|ab",
        &g,
        &[
            (b"ab", true),
            (b"a", true),
            (b"abb", true),
            (b"abbb", false),
            (b"b", false),
        ],
    );
    // start: A B cannot be met on "ab", since "ab" is one lexeme.
    let g = grammar(&["a|ab", "b"], vec![seq(vec![t(0), t(1)])], &[]);
    check("a|ab strict", &g, &[(b"ab", false), (b"abb", true)]);
}

#[test]
fn keywords_operators_and_ignored() {
    // start: WHILE ID ; ID also matches "while".
    let g = grammar(
        &["while", "[a-z]+", "[ \t]+"],
        vec![seq(vec![t(0), t(1)])],
        &[2],
    );
    check(
        "keyword",
        &g,
        &[
            (b"while x", true),
            (b"while while", true),
            (b"  while\tx  ", true),
            (b"whilex", false),
            (b"whilex y", false),
            (b"x while", false),
            (b"while", false),
        ],
    );
    // start: ID "=" "=" ID   vs   ID "==" ID
    let terms = ["=", "==", "[a-z]+", " +"];
    let g = grammar(&terms, vec![seq(vec![t(2), t(0), t(0), t(2)])], &[3]);
    check(
        "= =",
        &g,
        &[
            (b"a = = b", true),
            (b"a == b", false),
            (b"a===b", false),
            (b"a= =b", true),
        ],
    );
    let g = grammar(&terms, vec![seq(vec![t(2), t(1), t(2)])], &[3]);
    check(
        "==",
        &g,
        &[(b"a == b", true), (b"a = = b", false), (b"a==b", true)],
    );
    // A lexeme matching both an ignored and a used terminal may be used or skipped.
    let g = grammar(
        &["\n", "[ \n]+", "x"],
        vec![seq(vec![t(2), opt(t(0)), t(2)])],
        &[1],
    );
    check(
        "ignored and used",
        &g,
        &[
            (b"x\nx", true),
            (b"xx", true),
            (b"x \nx", true),
            (b"x\n\nx", true),
            (b"x\n", false),
        ],
    );
    let g = grammar(&["\n", "[ \n]+", "x"], vec![seq(vec![t(2), t(0)])], &[1]);
    check(
        "ignored and required",
        &g,
        &[
            (b"x\n", true),
            (b"x\n\n", false),
            (b"x \n", false),
            (b"x", false),
        ],
    );
    // Only whitespace, or nothing, with a nullable start.
    let g = grammar(&["a", " +"], vec![star(t(0))], &[1]);
    check(
        "only ignored",
        &g,
        &[
            (b"", true),
            (b"   ", true),
            (b" a a ", true),
            (b" b ", false),
        ],
    );
}

#[test]
fn nullable_rules() {
    // r0: r1 r2 "x" r1 ; r1: ε | "a" ; r2: r1 r1 ; r3 (unused): ε
    let g = grammar(
        &["x", "a"],
        vec![
            seq(vec![r(1), r(2), t(0), r(1)]),
            alt(vec![Expr::Empty, t(1)]),
            seq(vec![r(1), r(1)]),
            Expr::Empty,
        ],
        &[],
    );
    check(
        "nullable chain",
        &g,
        &[
            (b"x", true),
            (b"ax", true),
            (b"aaax", true),
            (b"aaaax", false),
            (b"xa", true),
            (b"axa", true),
            (b"xaa", false),
            (b"", false),
        ],
    );
    // Deeply nested nullables: r0: (r1 r1)* "b" ; r1: r2? ; r2: r3* ; r3: "a"
    let g = grammar(
        &["a", "b"],
        vec![
            seq(vec![star(seq(vec![r(1), r(1)])), t(1)]),
            opt(r(2)),
            star(r(3)),
            t(0),
        ],
        &[],
    );
    check(
        "nested nullables",
        &g,
        &[(b"b", true), (b"aaab", true), (b"ba", false)],
    );
    // Empty text.
    let g = grammar(&["a"], vec![opt(t(0))], &[]);
    check(
        "nullable start",
        &g,
        &[(b"", true), (b"a", true), (b"aa", false)],
    );
    let g = grammar(&["a"], vec![plus(t(0))], &[]);
    check(
        "non-nullable start",
        &g,
        &[(b"", false), (b"a", true), (b"aaa", true)],
    );
    // A start rule with an empty language.
    let g = grammar(&["a"], vec![alt(vec![])], &[]);
    check("empty language", &g, &[(b"", false), (b"a", false)]);
}

#[test]
fn recursion_and_precedence() {
    // r0: r0 "," X | X   (left) and r0: X "," r0 | X (right)
    let left = grammar(
        &[",", "x"],
        vec![alt(vec![seq(vec![r(0), t(0), t(1)]), t(1)])],
        &[],
    );
    let right = grammar(
        &[",", "x"],
        vec![alt(vec![seq(vec![t(1), t(0), r(0)]), t(1)])],
        &[],
    );
    // Right recursion costs quadratic work in Earley parsing (no Leo
    // optimisation), so its long text is shorter.
    for (what, g, n) in [("left", &left, 50_000), ("right", &right, 1_000)] {
        let mut long = b"x".to_vec();
        for _ in 0..n {
            long.extend_from_slice(b",x");
        }
        let long_bad = [long.as_slice(), b","].concat();
        let short: &[(&[u8], bool)] = &[
            (b"x", true),
            (b"x,x,x", true),
            (b"x,", false),
            (b",x", false),
            (b"xx", false),
        ];
        check(what, g, short);
        check(
            what,
            g,
            &[(long.as_slice(), true), (long_bad.as_slice(), false)],
        );
    }
    // e: e "+" t | e "-" t | t ; t: t "*" f | f ; f: NUM | "(" e ")"
    let g = grammar(
        &[r"\+", "-", r"\*", "[0-9]+", r"\(", r"\)", " "],
        vec![
            alt(vec![
                seq(vec![r(0), t(0), r(1)]),
                seq(vec![r(0), t(1), r(1)]),
                r(1),
            ]),
            alt(vec![seq(vec![r(1), t(2), r(2)]), r(2)]),
            alt(vec![t(3), seq(vec![t(4), r(0), t(5)])]),
        ],
        &[6],
    );
    check(
        "arithmetic",
        &g,
        &[
            (b"1", true),
            (b"1 + 2 * 3", true),
            (b"(1+2)*3-4", true),
            (b"((((7))))", true),
            (b"1 + * 2", false),
            (b"(1+2", false),
            (b"1+2)", false),
            (b"12 34", false),
            (b"", false),
            (b"-1", false),
        ],
    );
}

#[test]
fn unicode_and_invalid_input() {
    let g = grammar(
        &["[\\p{L}]+", " +", "€"],
        vec![plus(alt(vec![t(0), t(2)]))],
        &[1],
    );
    check(
        "unicode",
        &g,
        &[
            ("héllo wörld".as_bytes(), true),
            ("日本語 € abc".as_bytes(), true),
            (b"abc 123", false),
            (b"abc \xff", false),
            (b"\xe2\x82", false),
            (b"\xc3\xa9", true),
            (b"\xc3", false),
        ],
    );
    // Every single byte and some random-ish byte strings: no panic.
    let rec = Recognizer::new(&g).unwrap();
    for b in 0..=255u8 {
        let _ = rec.accepts(&[b]).unwrap();
        let _ = rec.lex(&[b'a', b, b'b']);
    }
}

#[test]
fn errors() {
    let bad = grammar(&["("], vec![t(0)], &[]);
    assert_eq!(Recognizer::new(&bad).unwrap_err().kind(), ErrorKind::Regex);
    let word = grammar(&[r"\bx"], vec![t(0)], &[]);
    assert_eq!(Recognizer::new(&word).unwrap_err().kind(), ErrorKind::Regex);
    let no_rule = grammar(&["a"], vec![r(5)], &[]);
    assert_eq!(
        Recognizer::new(&no_rule).unwrap_err().kind(),
        ErrorKind::Grammar
    );
    let no_term = grammar(&["a"], vec![t(3)], &[]);
    assert_eq!(
        Recognizer::new(&no_term).unwrap_err().kind(),
        ErrorKind::Grammar
    );
    let no_ignore = grammar(&["a"], vec![t(0)], &[2]);
    assert_eq!(
        Recognizer::new(&no_ignore).unwrap_err().kind(),
        ErrorKind::Grammar
    );
    let mut no_start = grammar(&["a"], vec![t(0)], &[]);
    no_start.start = RuleId(1);
    assert_eq!(
        Recognizer::new(&no_start).unwrap_err().kind(),
        ErrorKind::Grammar
    );
}

#[test]
fn budget() {
    // s: s s | "a" is highly ambiguous; a small budget must run out.
    let g = grammar(&["a"], vec![alt(vec![seq(vec![r(0), r(0)]), t(0)])], &[]);
    let text = vec![b'a'; 300];
    let small = Recognizer::new(&g).unwrap().with_budget(10_000);
    assert_eq!(small.accepts(&text).unwrap_err().kind(), ErrorKind::Budget);
    let big = Recognizer::new(&g).unwrap();
    assert!(big.accepts(&text[..60]).unwrap());
    assert!(big.accepts(b"").is_ok_and(|a| !a));
    // Lexing "a" and "a*b" on a long run of `a`s looks ahead to the end of
    // the text at every position.
    let g = grammar(&["a", "a*b"], vec![star(t(0))], &[]);
    let text = vec![b'a'; 20_000];
    let small = Recognizer::new(&g).unwrap().with_budget(100_000);
    assert_eq!(small.accepts(&text).unwrap_err().kind(), ErrorKind::Budget);
    assert_eq!(small.lex(&text), None);
    assert!(small.accepts(&text[..200]).unwrap());
}

#[test]
fn large_text() {
    // About 1 MB: words separated by spaces and newlines.
    let g = grammar(&["[a-z]+", "[ \n]+"], vec![star(t(0))], &[1]);
    let mut text = Vec::new();
    while text.len() < 1 << 20 {
        text.extend_from_slice(b"lorem ipsum dolor\nsit amet ");
    }
    let rec = Recognizer::new(&g).unwrap();
    assert!(rec.accepts(&text).unwrap());
    text.push(b'!');
    assert!(!rec.accepts(&text).unwrap());
    // One huge lexeme.
    let one = vec![b'z'; 1 << 20];
    assert_eq!(rec.lex(&one).map(|l| l.len()), Some(1));
    assert!(rec.accepts(&one).unwrap());
    // About 1 MB of one-byte tokens, none ignored: r0: r0 "," "x" | "x".
    let list = grammar(
        &[",", "x"],
        vec![alt(vec![seq(vec![r(0), t(0), t(1)]), t(1)])],
        &[],
    );
    let mut text = b"x".to_vec();
    while text.len() < 1 << 20 {
        text.extend_from_slice(b",x");
    }
    let rec = Recognizer::new(&list).unwrap();
    assert!(rec.accepts(&text).unwrap());
}

/// A naive second oracle for the parser: least fixpoint of "rule `r` derives
/// tokens `i..j`", evaluated directly on the surface expressions.
mod naive {
    use super::*;

    struct Dp<'a> {
        g: &'a Grammar,
        toks: &'a [Vec<u32>],
        table: Vec<Vec<Vec<bool>>>,
    }

    impl Dp<'_> {
        fn eval(&self, e: &Expr, i: usize, j: usize) -> bool {
            match e {
                Expr::Empty => i == j,
                Expr::Term(t) => j == i + 1 && self.toks[i].contains(&t.0),
                Expr::Rule(r) => self.table[r.0 as usize][i][j],
                Expr::Seq(es) => self.seq(es, i, j),
                Expr::Alt(es) => es.iter().any(|x| self.eval(x, i, j)),
                Expr::Opt(x) => i == j || self.eval(x, i, j),
                Expr::Star(x) => {
                    i == j || (i + 1..=j).any(|k| self.eval(x, i, k) && self.eval(e, k, j))
                }
                Expr::Plus(x) => {
                    let star = Expr::Star(x.clone());
                    (i..=j).any(|k| self.eval(x, i, k) && self.eval(&star, k, j))
                }
            }
        }

        fn seq(&self, es: &[Expr], i: usize, j: usize) -> bool {
            match es.split_first() {
                None => i == j,
                Some((first, rest)) => {
                    (i..=j).any(|k| self.eval(first, i, k) && self.seq(rest, k, j))
                }
            }
        }
    }

    /// Whether `toks` (no skipping) is derived from the start rule.
    pub(super) fn derives(g: &Grammar, toks: &[Vec<u32>]) -> bool {
        let n = toks.len();
        let mut dp = Dp {
            g,
            toks,
            table: vec![vec![vec![false; n + 1]; n + 1]; g.rules.len()],
        };
        loop {
            let mut changed = false;
            for r in 0..g.rules.len() {
                for i in 0..=n {
                    for j in i..=n {
                        if !dp.table[r][i][j] && dp.eval(&dp.g.rules[r].expr, i, j) {
                            dp.table[r][i][j] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                return dp.table[g.start.0 as usize][0][n];
            }
        }
    }
}

mod property {
    use super::*;
    use crate::recognize::earley::Bnf;
    use proptest::prelude::*;

    fn expr() -> impl Strategy<Value = Expr> {
        let leaf = prop_oneof![
            Just(Expr::Empty),
            (0u32..3).prop_map(t),
            (0u32..3).prop_map(r),
        ];
        leaf.prop_recursive(3, 12, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(seq),
                prop::collection::vec(inner.clone(), 0..3).prop_map(alt),
                inner.clone().prop_map(opt),
                inner.clone().prop_map(star),
                inner.prop_map(plus),
            ]
        })
    }

    fn token() -> impl Strategy<Value = (Vec<u32>, bool)> {
        (1u32..8, any::<bool>())
            .prop_map(|(mask, skip)| ((0..3).filter(|b| mask & (1 << b) != 0).collect(), skip))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        /// Earley with skippable tokens agrees with the naive fixpoint over
        /// every choice of skipped tokens.
        #[test]
        fn earley_matches_naive(
            rules in prop::collection::vec(expr(), 3),
            toks in prop::collection::vec(token(), 0..6),
        ) {
            let g = grammar(&["a", "b", "c"], rules, &[]);
            let bnf = Bnf::new(&g).unwrap();
            let input: Vec<(&[u32], bool)> = toks.iter().map(|(t, s)| (t.as_slice(), *s)).collect();
            let got = bnf.recognize(&input, super::super::DEFAULT_BUDGET).unwrap();
            let skippable: Vec<usize> = (0..toks.len()).filter(|&i| toks[i].1).collect();
            let mut want = false;
            for mask in 0u32..(1 << skippable.len()) {
                let kept: Vec<Vec<u32>> = (0..toks.len())
                    .filter(|i| match skippable.iter().position(|s| s == i) {
                        Some(b) => mask & (1 << b) == 0,
                        None => true,
                    })
                    .map(|i| toks[i].0.clone())
                    .collect();
                if naive::derives(&g, &kept) {
                    want = true;
                    break;
                }
            }
            prop_assert_eq!(got, want);
        }
    }
}

mod lexing_property {
    use super::*;
    use proptest::prelude::*;

    const POOL: &[&str] = &[
        "a|ab",
        "(a|b)*c",
        "a+?b?",
        "[ab]{1,3}",
        "b$|ba",
        "^a",
        "c*",
        ".",
        "(?i)A",
        "é|e",
        "[^a]",
        "(ab|a)(bc|c)?",
        r"(?-u:\xff)+",
    ];

    /// Maximal munch by brute force with the `regex` crate alone.
    fn brute(g: &Grammar, text: &[u8]) -> Option<Vec<Lexeme>> {
        let whole: Vec<regex::bytes::Regex> = g
            .terminals
            .iter()
            .map(|t| regex::bytes::Regex::new(&format!("^(?:{})$", t.pattern)).unwrap())
            .collect();
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < text.len() {
            let end = (pos + 1..=text.len())
                .rev()
                .find(|&e| whole.iter().any(|re| re.is_match(&text[pos..e])))?;
            let terminals: Vec<TermId> = (0..whole.len())
                .filter(|&i| whole[i].is_match(&text[pos..end]))
                .map(|i| TermId(i as u32))
                .collect();
            let ignorable = terminals.iter().any(|t| g.ignore.contains(t));
            out.push(Lexeme {
                start: pos,
                end,
                terminals,
                ignorable,
            });
            pos = end;
        }
        Some(out)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

        #[test]
        fn nfa_lexing_matches_brute_force(
            picks in prop::collection::vec(0..POOL.len(), 1..4),
            ignore in prop::collection::vec(0u32..4, 0..2),
            parts in prop::collection::vec(
                prop_oneof![Just("a"), Just("b"), Just("c"), Just("é"), Just("A"), Just("\u{ff}")],
                0..10,
            ),
            raw_ff in any::<bool>(),
        ) {
            let pats: Vec<&str> = picks.iter().map(|&i| POOL[i]).collect();
            let ignore: Vec<u32> = ignore.into_iter().filter(|&i| (i as usize) < pats.len()).collect();
            let g = grammar(&pats, vec![t(0)], &ignore);
            let mut text: Vec<u8> = parts.concat().into_bytes();
            if raw_ff {
                text.push(0xff);
            }
            let rec = Recognizer::new(&g).unwrap();
            prop_assert_eq!(rec.lex(&text), brute(&g, &text));
        }
    }
}

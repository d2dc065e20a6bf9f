//! Small grammars and exhaustive partial outputs for brute-force oracles.
#![allow(dead_code)]

use cdiff::Partial;

/// A grammar with an alphabet and enumeration sizes.
pub struct Case {
    pub name: &'static str,
    pub grammar: &'static str,
    pub alphabet: &'static [u8],
    /// Maximal length of enumerated texts.
    pub n: usize,
    /// Maximal length of enumerated partial outputs (bytes + holes).
    pub m: usize,
}

pub const CASES: &[Case] = &[
    Case {
        name: "balanced brackets",
        grammar: r#"start: ("(" start ")" | "[" start "]")*"#,
        alphabet: b"()[]",
        n: 8,
        m: 6,
    },
    Case {
        name: "arithmetic with + and ++",
        grammar: r#"
            start: expr
            expr: atom | expr "+" atom
            atom: "a" | atom "++" | "(" expr ")"
            %ignore " "
        "#,
        alphabet: b"a+( ",
        n: 8,
        m: 5,
    },
    Case {
        name: "keywords vs identifiers",
        grammar: r#"
            start: stmt*
            stmt: "if" ID | ID "=" ID
            ID: /[a-z]+/
            %ignore " "
        "#,
        alphabet: b"if= ",
        n: 8,
        m: 5,
    },
    Case {
        name: "integers spanning holes",
        grammar: r#"
            start: INT ("," INT)*
            INT: /0|[1-9][0-9]*/
        "#,
        alphabet: b"01,5",
        n: 8,
        m: 6,
    },
    Case {
        name: "== versus =",
        grammar: r#"
            start: (ID ("==" | "=") ID ";")*
            ID: "a" | "b"
            %ignore " "
        "#,
        alphabet: b"a=; ",
        n: 9,
        m: 5,
    },
    Case {
        name: "comments against operators",
        grammar: r#"
            start: (ID | "/" | "*" | "/=")*
            ID: "a"
            COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
            %ignore COMMENT
            %ignore " "
        "#,
        alphabet: b"a/*=",
        n: 8,
        m: 5,
    },
    Case {
        name: "munch across several lexemes",
        grammar: r#"
            start: ("a" | "b" | "c" | "abc" | "bcd")* "d"?
        "#,
        alphabet: b"abcd",
        n: 8,
        m: 5,
    },
    Case {
        name: "strings with escapes",
        grammar: r#"
            start: "[" [STR ("," STR)*] "]"
            STR: /"([^"\\]|\\.)*"/
        "#,
        alphabet: b"\"\\[,]",
        n: 7,
        m: 5,
    },
];

/// Every partial output of at most `max` positions (bytes of `alphabet`
/// and holes, no two holes side by side).
pub fn partials(alphabet: &[u8], max: usize) -> Vec<Partial> {
    // Words over alphabet ∪ {hole}, hole = None; canonical (no adjacent holes).
    let mut out = Vec::new();
    let mut frontier: Vec<Vec<Option<u8>>> = vec![Vec::new()];
    out.push(Vec::new());
    for _ in 0..max {
        let mut next = Vec::new();
        for w in &frontier {
            for a in alphabet
                .iter()
                .map(|&a| Some(a))
                .chain(std::iter::once(None))
            {
                if a.is_none() && w.last() == Some(&None) {
                    continue;
                }
                let mut x = w.clone();
                x.push(a);
                next.push(x);
            }
        }
        out.extend(next.iter().cloned());
        frontier = next;
    }
    out.into_iter()
        .map(|w| {
            let mut p = Partial::new();
            for a in w {
                match a {
                    Some(b) => p.push_text([b]),
                    None => p.push_hole(),
                }
            }
            p
        })
        .collect()
}

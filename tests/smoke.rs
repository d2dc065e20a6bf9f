use cdiff::grammar::{Expr, Grammar, Rule, RuleId, TermId, Terminal};
use cdiff::{Constraint, Partial};

fn t(name: &str, pat: &str) -> Terminal {
    Terminal {
        name: name.into(),
        pattern: pat.into(),
    }
}

#[test]
fn smoke_brackets_and_ints() {
    // start: "[" [INT ("," INT)*] "]" ; INT: [0-9]+ ; %ignore " "
    let g = Grammar {
        terminals: vec![
            t("[", r"\["),
            t("]", r"\]"),
            t(",", ","),
            t("INT", "[0-9]+"),
            t("WS", " +"),
        ],
        rules: vec![Rule {
            name: "start".into(),
            expr: Expr::Seq(vec![
                Expr::Term(TermId(0)),
                Expr::Opt(Box::new(Expr::Seq(vec![
                    Expr::Term(TermId(3)),
                    Expr::Star(Box::new(Expr::Seq(vec![
                        Expr::Term(TermId(2)),
                        Expr::Term(TermId(3)),
                    ]))),
                ]))),
                Expr::Term(TermId(1)),
            ]),
        }],
        ignore: vec![TermId(4)],
        start: RuleId(0),
    };
    let c = Constraint::compile(&g).unwrap();
    println!("lexer states {}", c.lexer().len());
    let cases: &[(Partial, bool)] = &[
        (Partial::complete("[1, 2]"), true),
        (Partial::complete("[1 2]"), false),
        (Partial::complete("[12]"), true),
        (Partial::new().text("[1").hole().text("2]"), true),
        (Partial::new().text("[1 ").hole().text(",]"), false),
        (Partial::new().text("[").hole(), true),
        (Partial::new().hole().text("]"), true),
        (Partial::new().text("]").hole(), false),
        (
            Partial::new().text("[1,").hole().text(",").hole().text("]"),
            true,
        ),
    ];
    for (p, want) in cases {
        let v = c.completable(p).unwrap();
        println!(
            "{:?} -> {:?}",
            p,
            v.completion()
                .map(|x| String::from_utf8_lossy(&x.text).to_string())
        );
        assert_eq!(v.is_completable(), *want, "{p:?}");
    }
}

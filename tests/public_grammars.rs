//! Other people's grammars (`grammars-public/` of `$CDIFF_SHARED` or
//! `../shared`, not shipped): every
//! file either loads and accepts a few hand-written valid samples (checked by
//! the engine and by the independent recognizer), or fails with an error that
//! names the unsupported construct. Skipped, with a message, when the folder
//! is absent. Each accepted sample is also cut with 1–3 random holes: it
//! must stay completable, with a witness the recognizer accepts. The results are tabulated in `docs/public-grammars.md`.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar, Partial, Verdict};

enum Expect {
    /// Loads; every sample is accepted.
    Loads(&'static [&'static str]),
    /// Fails; the error message contains this text.
    Fails(&'static str),
}
use Expect::*;

const CASES: &[(&str, Expect)] = &[
    // llama.cpp GBNF
    (
        "gbnf-llama.cpp/arithmetic.gbnf",
        Loads(&["1+2=3\n", "x = (a*b)\n", "a*b-1=(c)\ny=z\n"]),
    ),
    (
        "gbnf-llama.cpp/c.gbnf",
        Loads(&[
            "int main(){return 0;}",
            "int f(int x){while(x<10){x = x+1;}return x;}",
            "float g(){y = 2*3;if(y>=1){return y;}else{return 0;}}",
        ]),
    ),
    (
        "gbnf-llama.cpp/chess.gbnf",
        Loads(&["1. e4 e5\n2. Nf3 Nc6\n", "1. d4 d5\n2. c4 dxc4\n3. O-O Qxd1+\n"]),
    ),
    (
        "gbnf-llama.cpp/english.gbnf",
        Loads(&["Hello, world!", "a b\tc\nd", "x"]),
    ),
    (
        "gbnf-llama.cpp/japanese.gbnf",
        Loads(&["こんにちは", "カタカナ 日本語", "今日は、晴れ。"]),
    ),
    (
        "gbnf-llama.cpp/json.gbnf",
        Loads(&[
            "{}",
            "{\"a\": 1}",
            "{\"a\": [1, 2.5, -3e4, true, null], \"b\": {\"c\": \"\\u00e9\\n\"}}",
        ]),
    ),
    (
        "gbnf-llama.cpp/json_arr.gbnf",
        Loads(&["[\n]", "[\n{\"a\": 1},\n{\"b\": [true]}]"]),
    ),
    (
        "gbnf-llama.cpp/list.gbnf",
        Loads(&["- one\n", "- one\n- two items\n"]),
    ),
    (
        "gbnf-llama.cpp/vllm-sql.gbnf",
        Loads(&[
            "SELECTcol_1fromtable_1wherecol_1=1",
            "SELECTcol_2fromtable_2wherecol_2=2",
        ]),
    ),
    // SynCode's Lark grammars
    (
        "lark-syncode/c_grammar.lark",
        Loads(&[
            "int main() { return 0; }",
            "int add(int a, int b) { int c = a + b; return c; }",
            "void f() { for (int i = 0; i < 10; i = i + 1) { x = x * 2; } }",
        ]),
    ),
    (
        "lark-syncode/calc_grammar.lark",
        Loads(&["1", "1 + 2 * (3 - 4) / 5", "((2.5))"]),
    ),
    (
        "lark-syncode/common.lark",
        Fails("lookaround is not supported"),
    ),
    (
        "lark-syncode/go_grammar.lark",
        Loads(&[
            "package main\n",
            "package main\nimport \"fmt\"\nfunc main() {\nfmt.Println(\"hi\")\n}\n",
            "package p\nvar x int = 1\n",
        ]),
    ),
    (
        "lark-syncode/invariants.lark",
        Loads(&[
            "loop invariant x == 1;\n",
            "loop invariant 0 <= i;\nloop invariant i <= n;\n",
        ]),
    ),
    (
        "lark-syncode/java_grammar.lark",
        Loads(&[
            "class A { }",
            "public class Main { public static void main(String[] args) { int x = 1; } }",
        ]),
    ),
    (
        "lark-syncode/json_grammar.lark",
        Loads(&["{}", "{\"a\": [1, -2.5e3, \"\", true, null]}", "[{\"k\": {}}]"]),
    ),
    (
        "lark-syncode/prover9_grammar.lark",
        Loads(&[
            "Predicates:\nDog(x) ::: x is a dog.\nPremises:\nDog(rex) ::: Rex is a dog.\nConclusion:\nDog(rex) ::: Rex is a dog.\n",
            "Predicates:\nP(x) ::: p\nQ(x) ::: q\nPremises:\n∀x (P(x) → Q(x)) ::: all\nConclusion:\n¬Q(a) ∨ P(a) ::: c\n",
        ]),
    ),
    (
        "lark-syncode/python_grammar.lark",
        Fails("'%declare' is not supported"),
    ),
    (
        "lark-syncode/sql_grammar.lark",
        Loads(&[
            "SELECT a FROM t",
            "select a, b from t where a = 1;",
            "SELECT COUNT(*) FROM t GROUP BY a ORDER BY a LIMIT 10",
        ]),
    ),
    ("lark-syncode/tiny_grammar.lark", Loads(&["dd", "cdcd", "ccdd"])),
    // llguidance
    (
        "lark-llguidance/lark.lark",
        Loads(&[
            "start: a\n",
            "start: \"x\" b+\nb: /[0-9]/ | B\nB: \"b\"\n",
            "%import common.WS\n%ignore WS\n",
        ]),
    ),
    (
        "lark-llguidance/rfc.lark",
        Fails("matches the empty string"),
    ),
];

#[test]
fn public_grammars_load_or_fail_clearly() {
    let Some(root) = common::shared::dir("grammars-public", "public_grammars_load_or_fail_clearly")
    else {
        return;
    };
    let mut problems = Vec::new();
    let mut rng = SplitMix64::new(0x9b0f);
    println!("| grammar | loads? | samples accepted | unsupported construct |");
    println!("|---|---|---|---|");
    for (file, expect) in CASES {
        let path = root.join(file);
        let Ok(src) = std::fs::read_to_string(&path) else {
            problems.push(format!("{file}: missing"));
            continue;
        };
        let loaded = Grammar::from_file_text(file, &src, None);
        match (expect, loaded) {
            (Loads(samples), Ok(g)) => {
                let c = Constraint::compile(&g);
                let r = Recognizer::new(&g);
                let (Ok(c), Ok(r)) = (c, r) else {
                    problems.push(format!("{file}: does not compile"));
                    continue;
                };
                let mut ok = 0;
                for s in *samples {
                    let e = c.check(&Partial::complete(s.as_bytes())).unwrap_or(false);
                    let rec = r.accepts(s.as_bytes()).unwrap_or(false);
                    if e && rec {
                        ok += 1;
                        // With 1-3 spans cut out the sample stays completable,
                        // and the witness is accepted by the recognizer.
                        for holes in 1..=3 {
                            let (p, _) = cut_spans(s.as_bytes(), holes, &mut rng);
                            match c.completable(&p) {
                                Ok(Verdict::Completable(done)) => {
                                    if !r.accepts(&done.text).unwrap_or(false) {
                                        problems.push(format!("{file}: {p:?}: witness rejected"));
                                    }
                                }
                                other => problems.push(format!("{file}: {p:?}: {other:?}")),
                            }
                        }
                    } else {
                        problems.push(format!("{file}: {s:?}: engine {e}, recognizer {rec}"));
                    }
                }
                println!("| `{file}` | yes | {ok}/{} | |", samples.len());
            }
            (Fails(what), Err(e)) => {
                println!("| `{file}` | no | | {e} |");
                if !e.to_string().contains(what) {
                    problems.push(format!("{file}: expected an error about {what:?}, got {e}"));
                }
            }
            (Loads(_), Err(e)) => problems.push(format!("{file}: expected to load, got {e}")),
            (Fails(what), Ok(_)) => {
                problems.push(format!("{file}: loads, expected an error about {what:?}"))
            }
        }
    }
    // Files not in the table must load or fail with an error, never panic.
    for dir in ["gbnf-llama.cpp", "lark-syncode", "lark-llguidance"] {
        let Ok(rd) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for e in rd.flatten() {
            let name = format!("{dir}/{}", e.file_name().to_string_lossy());
            let grammar_file = name.ends_with(".gbnf") || name.ends_with(".lark");
            if grammar_file && !CASES.iter().any(|(f, _)| *f == name) {
                let src = std::fs::read_to_string(e.path()).unwrap_or_default();
                match Grammar::from_file_text(&name, &src, None) {
                    Ok(_) => println!("| `{name}` | yes | (no samples) | |"),
                    Err(e) => println!("| `{name}` | no | | {e} |"),
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

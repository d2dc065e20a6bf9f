//! Soundness of `grammars/cpp.ebnf` against a real C++ parser.
//!
//! Random token-level mutations (delete a token, duplicate one, swap two
//! adjacent ones, insert an operator or keyword) of the HumanEval-X C++
//! programs; of the mutants the grammar accepts, at least 99% must be
//! syntactically valid C++ according to tree-sitter-cpp (a tree without ERROR
//! or MISSING nodes). The converse rate (valid for tree-sitter, rejected by
//! the grammar) is printed as information.

mod common;

use cdiff::rng::SplitMix64;
use cdiff::Partial;
use common::cpp::{compiled, programs};
use tree_sitter::{Node, Parser};

const INSERTS: &[&str] = &[
    "+",
    "-",
    "*",
    "/",
    "%",
    "=",
    "==",
    "!=",
    "<",
    ">",
    "<=",
    ">=",
    "<<",
    ">>",
    "&&",
    "||",
    "!",
    "~",
    "&",
    "|",
    "^",
    "++",
    "--",
    "->",
    ".",
    "::",
    ",",
    ";",
    "?",
    ":",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "+=",
    "-=",
    "if",
    "else",
    "for",
    "while",
    "do",
    "return",
    "break",
    "continue",
    "int",
    "auto",
    "const",
    "static",
    "struct",
    "switch",
    "case",
    "default",
    "sizeof",
    "unsigned",
    "long",
    "void",
    "bool",
    "char",
    "double",
    "true",
    "false",
    "using",
    "namespace",
    "typedef",
    "and",
    "or",
    "not",
    "this",
    "nullptr",
    "x",
    "0",
];

fn ts_parser() -> Parser {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_cpp::LANGUAGE.into())
        .unwrap();
    parser
}

/// The first ERROR or MISSING node, if any.
fn first_error(node: Node) -> Option<Node> {
    if node.is_error() || node.is_missing() {
        return Some(node);
    }
    if !node.has_error() {
        return None;
    }
    let mut cursor = node.walk();
    let children: Vec<Node> = node.children(&mut cursor).collect();
    children.into_iter().find_map(first_error)
}

/// `None` when tree-sitter-cpp parses `text` without ERROR or MISSING nodes,
/// otherwise where the first one is.
fn ts_error(parser: &mut Parser, text: &str) -> Option<String> {
    let tree = parser.parse(text, None).unwrap();
    let root = tree.root_node();
    if !root.has_error() {
        return None;
    }
    let n = first_error(root).unwrap_or(root);
    let p = n.start_position();
    Some(format!(
        "{} at {}:{} {:?}",
        if n.is_missing() { "MISSING" } else { "ERROR" },
        p.row + 1,
        p.column + 1,
        &text[n.start_byte()..n.end_byte().min(n.start_byte() + 40)]
    ))
}

fn mutate(tokens: &[String], rng: &mut SplitMix64) -> (Vec<String>, String) {
    let mut t = tokens.to_vec();
    let n = t.len() as u64;
    let i = rng.below(n) as usize;
    let what = mutate_at(&mut t, i, rng);
    let context = t[i.saturating_sub(6)..(i + 6).min(t.len())].join(" ");
    (t, format!("{what}: `{context}`"))
}

fn mutate_at(t: &mut Vec<String>, i: usize, rng: &mut SplitMix64) -> String {
    match rng.below(4) {
        0 => {
            let old = t.remove(i);
            format!("delete {old:?} (token {i})")
        }
        1 => {
            t.insert(i, t[i].clone());
            format!("duplicate {:?} (token {i})", t[i])
        }
        2 if i + 1 < t.len() => {
            t.swap(i, i + 1);
            format!("swap {:?} {:?} (token {i})", t[i + 1], t[i])
        }
        _ => {
            let s = INSERTS[rng.below(INSERTS.len() as u64) as usize];
            t.insert(i, s.to_string());
            format!("insert {s:?} at token {i}")
        }
    }
}

#[test]
fn accepted_mutants_are_valid_cpp() {
    let (c, rec) = compiled();
    let mut parser = ts_parser();
    let progs = programs(&rec);
    // Programs as token lists, joined by newlines (comments dropped; every
    // preprocessor line keeps its own line).
    let mut bases = Vec::new();
    for p in &progs {
        let lexemes = rec.lex(p.text.as_bytes()).expect("the program lexes");
        let tokens: Vec<String> = lexemes
            .iter()
            .filter(|l| !l.ignorable)
            .map(|l| p.text[l.start..l.end].to_string())
            .collect();
        let joined = tokens.join("\n");
        assert!(rec.accepts(joined.as_bytes()).unwrap(), "{}", p.task_id);
        match ts_error(&mut parser, &joined) {
            None => bases.push((p.task_id.clone(), tokens)),
            Some(e) => println!("{}: tree-sitter rejects the original: {e}", p.task_id),
        }
    }
    println!(
        "{} of {} programs valid for tree-sitter",
        bases.len(),
        progs.len()
    );

    let mut rng = SplitMix64::new(2508_2000);
    let (mut mutants, mut accepted, mut sound) = (0usize, 0usize, 0usize);
    let (mut ts_valid, mut ts_valid_rejected) = (0usize, 0usize);
    let mut disagreements = Vec::new();
    let mut converse = Vec::new();
    let start = std::time::Instant::now();
    while mutants < 2400 {
        let (id, tokens) = &bases[mutants % bases.len()];
        let (t, what) = mutate(tokens, &mut rng);
        if t == *tokens {
            continue;
        }
        mutants += 1;
        let text = t.join("\n");
        let g = rec.accepts(text.as_bytes()).unwrap_or(false);
        let e = c.check(&Partial::complete(&text)).unwrap();
        assert_eq!(g, e, "{id} {what}: recognizer and engine disagree");
        let ts = ts_error(&mut parser, &text);
        if ts.is_none() {
            ts_valid += 1;
            if !g {
                ts_valid_rejected += 1;
                converse.push(format!("{id}: {what}"));
            }
        }
        if g {
            accepted += 1;
            match ts {
                None => sound += 1,
                Some(err) => disagreements.push(format!("{id}: {what}: tree-sitter {err}")),
            }
        }
    }
    let rate = sound as f64 / accepted as f64;
    println!(
        "{mutants} mutants in {:?}: grammar accepts {accepted}, of which tree-sitter-cpp finds {sound} valid ({:.2}%)",
        start.elapsed(),
        100.0 * rate
    );
    println!(
        "converse: tree-sitter-cpp finds {ts_valid} valid, of which the grammar rejects {ts_valid_rejected} ({:.2}%)",
        100.0 * ts_valid_rejected as f64 / ts_valid.max(1) as f64
    );
    for d in disagreements.iter().take(20) {
        println!("accepted but invalid: {d}");
    }
    for d in converse.iter().take(20) {
        println!("valid but rejected: {d}");
    }
    assert!(
        accepted >= 200,
        "too few accepted mutants to measure: {accepted}"
    );
    assert!(
        rate >= 0.99,
        "only {:.2}% of accepted mutants are valid C++",
        100.0 * rate
    );
}

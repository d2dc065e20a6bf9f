//! Shared by the C++ corpus tests: HumanEval-X C++ (shipped in
//! `datasets/humaneval-x-cpp`, Apache-2.0) and `grammars/cpp.ebnf`.
#![allow(dead_code)]

use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar};

/// One row of the data set.
pub struct Row {
    pub task_id: String,
    pub prompt: String,
    pub declaration: String,
    pub canonical_solution: String,
    pub test: String,
}

pub fn rows() -> Vec<Row> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
    );
    let text = std::fs::read_to_string(path).expect("the data set is shipped");
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| v[k].as_str().unwrap().to_string();
            Row {
                task_id: f("task_id"),
                prompt: f("prompt"),
                declaration: f("declaration"),
                canonical_solution: f("canonical_solution"),
                test: f("test"),
            }
        })
        .collect()
}

pub fn grammar() -> Grammar {
    Grammar::from_lark(include_str!("../../grammars/cpp.ebnf"), None).unwrap()
}

pub fn compiled() -> (Constraint, Recognizer) {
    let g = grammar();
    (
        Constraint::compile(&g).unwrap(),
        Recognizer::new(&g).unwrap(),
    )
}

/// A solved program: `declaration + canonical_solution`, or, where the
/// recognizer rejects that (a malformed declaration field),
/// `prompt + canonical_solution`.
pub struct Program {
    pub task_id: String,
    pub text: String,
    pub test: String,
    pub fallback: bool,
}

pub fn programs(rec: &Recognizer) -> Vec<Program> {
    rows()
        .into_iter()
        .map(|r| {
            let decl = format!("{}{}", r.declaration, r.canonical_solution);
            let fallback = !rec.accepts(decl.as_bytes()).unwrap_or(false);
            let text = if fallback {
                format!("{}{}", r.prompt, r.canonical_solution)
            } else {
                decl
            };
            Program {
                task_id: r.task_id,
                text,
                test: r.test,
                fallback,
            }
        })
        .collect()
}

//! Real text: JSONTestSuite (shipped in `datasets/jsontestsuite`, MIT).
//!
//! - every `y_` file is accepted, and stays completable with 1–3 random spans
//!   cut out; every witness keeps the chunks in place and is accepted by the
//!   independent recognizer;
//! - every `n_` file, without holes, is rejected by the engine and the recognizer;
//! - on `i_` files the engine and the recognizer agree.

use cdiff::recognize::Recognizer;
use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar, Partial, Verdict};
use std::path::PathBuf;

fn files(prefix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/jsontestsuite");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .expect("datasets/jsontestsuite is shipped with the repository")
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with(prefix))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn json() -> (Constraint, Recognizer) {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    (
        Constraint::compile(&g).unwrap(),
        Recognizer::new(&g).unwrap(),
    )
}

#[test]
fn y_files_with_holes_stay_completable() {
    let (c, rec) = json();
    let ys = files("y_");
    assert_eq!(ys.len(), 95);
    let mut rng = SplitMix64::new(2508_10111);
    let mut checks = 0;
    for (name, text) in &ys {
        assert!(
            rec.accepts(text).unwrap(),
            "{name}: recognizer rejects a y_ file"
        );
        assert!(
            c.check(&Partial::complete(text)).unwrap(),
            "{name}: engine rejects a y_ file"
        );
        for holes in 1..=3 {
            for _ in 0..4 {
                let (p, cut) = cut_spans(text, holes, &mut rng);
                assert_eq!(p.fill(&cut).unwrap(), *text);
                match c.completable(&p).unwrap() {
                    Verdict::Completable(done) => {
                        assert_eq!(p.fill(&done.fills).unwrap(), done.text);
                        assert!(
                            rec.accepts(&done.text).unwrap(),
                            "{name}: witness {:?} for {:?} rejected",
                            String::from_utf8_lossy(&done.text),
                            p
                        );
                    }
                    Verdict::NotCompletable => panic!("{name}: {p:?} reported not completable"),
                }
                checks += 1;
            }
        }
    }
    assert_eq!(checks, 95 * 12);
}

#[test]
fn n_files_are_rejected() {
    let (c, rec) = json();
    let ns = files("n_");
    assert_eq!(ns.len(), 188);
    for (name, text) in &ns {
        assert!(
            !rec.accepts(text).unwrap_or(false),
            "{name}: recognizer accepts an n_ file"
        );
        assert!(
            !c.check(&Partial::complete(text)).unwrap(),
            "{name}: engine accepts an n_ file"
        );
    }
}

#[test]
fn i_files_engine_agrees_with_recognizer() {
    let (c, rec) = json();
    for (name, text) in &files("i_") {
        let r = rec.accepts(text).unwrap();
        assert_eq!(c.check(&Partial::complete(text)).unwrap(), r, "{name}");
    }
}

//! Canvases as diffusion decoders make them: real documents with 10–80 % of
//! their bytes masked in many short spans (tens of holes). On every canvas:
//! `check` says completable (the masked bytes are a valid fill), the witness
//! keeps every chunk in place and the independent recognizer accepts it, and
//! the quick witness (`Config::shortest_witness` off) agrees and is never
//! shorter. Then the same canvases with a stray byte inserted into the first chunk,
//! where the three answers must still agree with each other.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::rng::{mask_spans, SplitMix64};
use cdiff::{Config, Constraint, Grammar, Partial, Segment};

struct Engines {
    shortest: Constraint,
    quick: Constraint,
    recognizer: Recognizer,
}

fn engines(g: &Grammar) -> Engines {
    let quick = Config {
        shortest_witness: false,
        ..Config::default()
    };
    Engines {
        shortest: Constraint::compile(g).unwrap(),
        quick: Constraint::with_config(g, quick).unwrap(),
        recognizer: Recognizer::new(g).unwrap(),
    }
}

/// Checks one canvas; returns whether it was completable.
fn agree(e: &Engines, p: &Partial, what: &str) -> bool {
    let check = e.shortest.check(p).unwrap();
    let shortest = e.shortest.completable(p).unwrap();
    let quick = e.quick.completable(p).unwrap();
    assert_eq!(
        check,
        shortest.is_completable(),
        "{what}: check and completable disagree"
    );
    assert_eq!(
        check,
        quick.is_completable(),
        "{what}: check and the quick witness disagree"
    );
    for done in [shortest.completion(), quick.completion()]
        .into_iter()
        .flatten()
    {
        assert_eq!(p.fill(&done.fills).unwrap(), done.text, "{what}");
        assert!(
            e.recognizer.accepts(&done.text).unwrap(),
            "{what}: witness {:?} rejected by the recognizer",
            String::from_utf8_lossy(&done.text)
        );
    }
    if let (Some(s), Some(q)) = (shortest.completion(), quick.completion()) {
        assert!(s.terminals.len() <= q.terminals.len(), "{what}");
    }
    check
}

/// The canvas with `byte` inserted into its first chunk (a stray byte
/// between holes is too often absorbed by a string or comment the holes can
/// open and close).
fn corrupt(p: &Partial, byte: u8) -> Partial {
    let mut out = Partial::new();
    let mut seen = 0;
    for s in p.segments() {
        match s {
            Segment::Hole => out.push_hole(),
            Segment::Text(t) => {
                if seen == 0 {
                    let mut t = t.clone();
                    t.insert(t.len() / 2, byte);
                    out.push_text(&t);
                } else {
                    out.push_text(t);
                }
                seen += 1;
            }
        }
    }
    out
}

fn run(e: &Engines, docs: &[Vec<u8>], cases: usize, stray: &[u8]) {
    let mut rng = SplitMix64::new(11);
    let (mut holes, mut rejected) = (0, 0);
    for case in 0..cases {
        let doc = &docs[rng.below(docs.len() as u64) as usize];
        let fraction = [0.1, 0.3, 0.5, 0.8][case % 4];
        let spans = mask_spans(doc.len(), fraction, 8, &mut rng);
        let p = Partial::cut(doc, &spans);
        holes += p.n_holes();
        let what = format!("case {case} ({} bytes, {} holes)", doc.len(), p.n_holes());
        assert!(agree(e, &p, &what), "{what}: the cut-out bytes fill it");
        let byte = stray[rng.below(stray.len() as u64) as usize];
        let bad = corrupt(&p, byte);
        rejected += usize::from(!agree(
            e,
            &bad,
            &format!("{what}, {:?} inserted", byte as char),
        ));
    }
    eprintln!("{cases} canvases, {holes} holes; {rejected} of the corrupted not completable");
}

#[test]
fn json_canvases() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let e = engines(&g);
    let docs: Vec<Vec<u8>> = std::fs::read_dir(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/jsontestsuite"
    ))
    .unwrap()
    .map(|f| f.unwrap().path())
    .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("y_"))
    .map(|p| std::fs::read(p).unwrap())
    .filter(|d| d.len() >= 8 && e.recognizer.accepts(d).unwrap())
    .collect();
    // Pretty-printed arrays of the suite's documents, about 0.5–2 KB.
    let mut rng = SplitMix64::new(5);
    let big: Vec<Vec<u8>> = (0..8)
        .map(|_| {
            let mut d = b"[\n  ".to_vec();
            while d.len() < 500 + 200 * rng.below(8) as usize {
                if d.len() > 4 {
                    d.extend_from_slice(b",\n  ");
                }
                d.extend_from_slice(&docs[rng.below(docs.len() as u64) as usize]);
            }
            d.extend_from_slice(b"\n]");
            d
        })
        .collect();
    run(&e, &big, 40, b"]}:,\"x");
}

#[test]
fn cpp_canvases() {
    let g = common::cpp::grammar();
    let e = engines(&g);
    let docs: Vec<Vec<u8>> = common::cpp::rows()
        .iter()
        .map(|r| format!("{}{}", r.prompt, r.canonical_solution).into_bytes())
        .filter(|d| d.len() < 1100 && e.recognizer.accepts(d).unwrap())
        .collect();
    run(&e, &docs, 24, b"});{\"'");
}

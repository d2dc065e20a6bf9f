//! Canvases as diffusion decoders make them: real documents with 10–80 % of
//! their bytes masked in many short spans (tens of holes). On every canvas:
//! `check` says completable (the masked bytes are a valid fill), the witness
//! keeps every chunk in place and the independent recognizer accepts it, and
//! the quick witness (`Config::shortest_witness` off) agrees and is never
//! shorter. Then the same canvases with a stray byte inserted into the first chunk,
//! and with one appended to the last, where the answers must still agree with
//! each other; and every answer again from an engine that tries the end of a
//! canvas on its own before any search (`Config::long_search_per_state` 0)
//! and from one that never does.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::rng::{mask_spans, SplitMix64};
use cdiff::{Config, Constraint, Grammar, Partial, Segment};

struct Engines {
    shortest: Constraint,
    quick: Constraint,
    /// Tries the end of a canvas before any search, and never.
    eager: Constraint,
    never: Constraint,
    recognizer: Recognizer,
}

fn engines(g: &Grammar) -> Engines {
    let quick = Config {
        shortest_witness: false,
        ..Config::default()
    };
    let end = |per| Config {
        long_search_per_state: per,
        ..Config::default()
    };
    Engines {
        shortest: Constraint::compile(g).unwrap(),
        quick: Constraint::with_config(g, quick).unwrap(),
        eager: Constraint::with_config(g, end(0)).unwrap(),
        never: Constraint::with_config(g, end(u64::MAX)).unwrap(),
        recognizer: Recognizer::new(g).unwrap(),
    }
}

/// Checks one canvas; returns whether it was completable.
fn agree(e: &Engines, p: &Partial, what: &str) -> bool {
    let check = e.shortest.check(p).unwrap();
    let shortest = e.shortest.completable(p).unwrap();
    let quick = e.quick.completable(p).unwrap();
    for (c, name) in [(&e.eager, "eager"), (&e.never, "never")] {
        assert_eq!(check, c.check(p).unwrap(), "{what}: check, end {name}");
        let v = c.completable(p).unwrap();
        assert_eq!(check, v.is_completable(), "{what}: witness, end {name}");
    }
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
    // Both witnesses minimise terminals plus swallowed bytes, the shortest
    // over at least the derivations the quick one saw.
    if let (Some(s), Some(q)) = (shortest.completion(), quick.completion()) {
        let cost = |d: &cdiff::Completion| {
            d.terminals.len() + common::swallow::swallowed(&e.recognizer, p, &d.fills).unwrap()
        };
        assert!(cost(s) <= cost(q), "{what}: {} > {}", cost(s), cost(q));
    }
    check
}

/// The canvas with `byte` inserted into its first chunk (a stray byte
/// between holes is too often absorbed by a string or comment the holes can
/// open and close), or appended to its last (a hole then the end: what a
/// decoder proposes once it has put a token at the end of its answer).
fn corrupt(p: &Partial, byte: u8, last: bool) -> Partial {
    let n = p.segments().len();
    let mut out = Partial::new();
    let mut seen = 0;
    for (i, s) in p.segments().iter().enumerate() {
        match s {
            Segment::Hole => out.push_hole(),
            Segment::Text(t) => {
                let mut t = t.clone();
                if last && i + 1 == n {
                    t.push(byte);
                } else if !last && seen == 0 {
                    t.insert(t.len() / 2, byte);
                }
                out.push_text(&t);
                seen += 1;
            }
        }
    }
    if last && matches!(p.segments().last(), Some(Segment::Hole)) {
        out.push_text([byte]);
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
        for last in [false, true] {
            let byte = stray[rng.below(stray.len() as u64) as usize];
            let bad = corrupt(&p, byte, last);
            rejected += usize::from(!agree(
                e,
                &bad,
                &format!("{what}, {:?} inserted (at the end: {last})", byte as char),
            ));
        }
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

/// Phase 2 keeps its tables per thread between witnesses (emptied) and
/// the intersection tables come from a per-thread pool: a witness must not
/// depend on what ran before it on the thread. Each canvas's witness on a
/// thread of its own equals its witness in a run of all of them, in either
/// order, on one thread.
#[test]
fn witnesses_do_not_depend_on_earlier_witnesses_on_the_thread() {
    for (grammar, docs, join, wrap) in [
        (
            include_str!("../grammars/smiles.ebnf"),
            include_str!("../datasets/smiles/sample.smi"),
            ".",
            ("", ""),
        ),
        (
            include_str!("../grammars/json.ebnf"),
            "[1, {\"a\": [true, null, \"x\"]}, -2.5e3]\n{\"k\": {\"l\": [[], {}, \"\\u0041\"]}}",
            ", ",
            ("[", "]"),
        ),
    ] {
        let g = Grammar::from_lark(grammar, None).unwrap();
        let c = std::sync::Arc::new(Constraint::compile(&g).unwrap());
        let mut rng = SplitMix64::new(3);
        // Canvases of different sizes, so that kept tables are both larger
        // and smaller than the next witness needs.
        let lines: Vec<&str> = docs.lines().filter(|l| !l.is_empty()).collect();
        let canvases: Vec<Partial> = (0..12)
            .map(|i| {
                let n = 1 + (i * 7) % 9;
                let body: Vec<&str> = (0..n)
                    .map(|_| lines[rng.below(lines.len() as u64) as usize])
                    .collect();
                let doc = format!("{}{}{}", wrap.0, body.join(join), wrap.1).into_bytes();
                let spans = mask_spans(doc.len(), [0.1, 0.3, 0.5][i % 3], 8, &mut rng);
                Partial::cut(&doc, &spans)
            })
            .collect();
        let fills = |p: &Partial, c: &Constraint| {
            c.completable(p)
                .unwrap()
                .completion()
                .map(|d| d.fills.clone())
                .expect("the cut-out bytes fill it")
        };
        let alone: Vec<_> = canvases
            .iter()
            .map(|p| {
                let (p, c) = (p.clone(), c.clone());
                std::thread::spawn(move || fills(&p, &c)).join().unwrap()
            })
            .collect();
        let forward: Vec<_> = canvases.iter().map(|p| fills(p, &c)).collect();
        let mut backward: Vec<_> = canvases.iter().rev().map(|p| fills(p, &c)).collect();
        backward.reverse();
        assert_eq!(alone, forward);
        assert_eq!(alone, backward);
    }
}

/// A decoder's canvases, each a byte away from the one before: `doc` with
/// 60 % of it masked in spans, then `steps` times one byte of a random
/// span written back (the span splits around it).
fn decoding(doc: &[u8], steps: usize, rng: &mut SplitMix64) -> Vec<Partial> {
    let mut spans = mask_spans(doc.len(), 0.6, 8, rng);
    let mut out = vec![Partial::cut(doc, &spans)];
    for _ in 0..steps {
        if spans.is_empty() {
            break;
        }
        let k = rng.below(spans.len() as u64) as usize;
        let (s, e) = spans[k];
        let m = s + rng.below((e - s) as u64) as usize;
        let parts: Vec<(usize, usize)> = [(s, m), (m + 1, e)]
            .into_iter()
            .filter(|(a, b)| a < b)
            .collect();
        spans.splice(k..=k, parts);
        out.push(Partial::cut(doc, &spans));
    }
    out
}

#[test]
fn token_automata_do_not_depend_on_earlier_builds_on_the_thread() {
    // Closures that leave holes are kept per thread and replayed in later
    // builds while a `replaying` guard lives (a decoder's canvases repeat
    // nearly all of them): each
    // canvas's automaton, check answer and budget error must be those of
    // a thread that built nothing before, whatever came before on this one.
    let (_, rec) = common::cpp::compiled();
    let cpp: Vec<u8> = common::cpp::programs(&rec)
        .into_iter()
        .take(3)
        .flat_map(|p| p.text.into_bytes())
        .collect();
    let json =
        b"[1, {\"a\": [true, null, \"x\\n\"]}, -2.5e3, {\"k\": {\"l\": [[], {}, \"\\u0041\"]}}]";
    let (mut errors, mut answers) = (0, 0);
    for (grammar, doc) in [
        (common::cpp::grammar(), cpp),
        (
            Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap(),
            json.to_vec(),
        ),
    ] {
        let mut rng = SplitMix64::new(11);
        let canvases = decoding(&doc, 40, &mut rng);
        for budget in [u64::MAX, 8_000, 30_000, 100_000] {
            let c = std::sync::Arc::new(
                Constraint::with_config(
                    &grammar,
                    Config {
                        budget,
                        ..Config::default()
                    },
                )
                .unwrap(),
            );
            let build = |p: &Partial, c: &Constraint| {
                let nfa = c.token_nfa(p).map_err(|e| e.to_string());
                let ok = c.check(p).map_err(|e| e.to_string());
                (nfa, ok)
            };
            let kept = c.replaying();
            let in_order: Vec<_> = canvases.iter().map(|p| build(p, &c)).collect();
            drop(kept);
            for (p, got) in canvases.iter().zip(&in_order) {
                let (p2, c2) = (p.clone(), c.clone());
                let alone = std::thread::spawn(move || build(&p2, &c2)).join().unwrap();
                assert_eq!(&alone, got, "budget {budget}, canvas {p:?}");
                match &got.1 {
                    Ok(_) => answers += 1,
                    Err(_) => errors += 1,
                }
            }
        }
    }
    // Some budgets run out on some canvases and not on others.
    eprintln!("{errors} errors, {answers} answers");
    assert!(
        errors > 0 && answers > 0,
        "{errors} errors, {answers} answers"
    );
}

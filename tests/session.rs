//! Sessions (`Constraint::session`) against fresh checks: along random
//! update sequences — placements at every kind of place, several tries at
//! one place as a decoder makes after refusals, several placements at once
//! — every answer must be what `Constraint::check` says of the resulting
//! partial output, kept placements must give exactly that partial output,
//! and refused ones must leave it unchanged. On the shipped JSON, C++ and
//! SMILES grammars (canvases cut from real documents, tokens taken from
//! the same documents) and on the differential tests' small grammars.

mod common;

use cdiff::rng::{mask_spans, pick_spans, SplitMix64};
use cdiff::{Constraint, Edit, ErrorKind, Grammar, Partial, Place, Segment, SessionStats};
use common::brute::CASES;
use proptest::prelude::*;

/// A place: the hole's edges and closing it (stricter) more often than
/// inside it.
fn place(rng: &mut SplitMix64) -> Place {
    [
        Place::Fill,
        Place::Fill,
        Place::Start,
        Place::Start,
        Place::End,
        Place::End,
        Place::Inside,
    ][rng.below(7) as usize]
}

/// `partial` with `bytes` put into hole `hole` at `place`, written out
/// segment by segment (not through the session's own cut).
fn placed(partial: &Partial, hole: usize, place: Place, bytes: &[u8]) -> Partial {
    let mut out = Partial::new();
    let mut h = 0;
    for s in partial.segments() {
        match s {
            Segment::Text(t) => out.push_text(t),
            Segment::Hole if h == hole => {
                h += 1;
                if matches!(place, Place::End | Place::Inside) {
                    out.push_hole();
                }
                out.push_text(bytes);
                if matches!(place, Place::Start | Place::Inside) {
                    out.push_hole();
                }
            }
            Segment::Hole => {
                h += 1;
                out.push_hole();
            }
        }
    }
    out
}

/// Bytes that close, open or quote: often refused where a hole does not
/// surround them.
const HOSTILE: &[u8] = b")}]\"'*/#\\;,";

/// A token: 0–4 bytes of `pool` (empty one time in twelve; with `hostile`,
/// one of [`HOSTILE`] one time in three).
fn token(pool: &[u8], hostile: bool, rng: &mut SplitMix64) -> Vec<u8> {
    if rng.below(12) == 0 || pool.is_empty() {
        return Vec::new();
    }
    if hostile && rng.below(3) == 0 {
        return vec![HOSTILE[rng.below(HOSTILE.len() as u64) as usize]];
    }
    let k = (1 + rng.below(4) as usize).min(pool.len());
    let s = rng.below((pool.len() - k + 1) as u64) as usize;
    pool[s..s + k].to_vec()
}

/// Follows `start` through `steps` random updates, comparing every answer
/// of the session with a fresh check.
fn follow(
    c: &Constraint,
    start: Partial,
    (pool, hostile): (&[u8], bool),
    seed: u64,
    steps: usize,
) -> SessionStats {
    let mut rng = SplitMix64::new(seed);
    let mut s = c.session(start.clone());
    let mut now = start;
    for _ in 0..steps {
        let n = now.n_holes();
        if n == 0 {
            break;
        }
        if rng.below(5) == 0 {
            // Several placements at once, each numbered in the partial
            // output the ones before it made.
            let mut tokens = Vec::new();
            let mut places = Vec::new();
            let mut want = now.clone();
            for _ in 0..2 {
                if want.n_holes() == 0 {
                    break;
                }
                let h = rng.below(want.n_holes() as u64) as usize;
                let p = place(&mut rng);
                let t = token(pool, hostile, &mut rng);
                want = placed(&want, h, p, &t);
                places.push((h, p));
                tokens.push(t);
            }
            let edits: Vec<Edit> = places
                .iter()
                .zip(&tokens)
                .map(|(&(hole, place), t)| Edit {
                    hole,
                    place,
                    bytes: t,
                })
                .collect();
            let ok = c.check(&want).unwrap();
            assert_eq!(s.try_place_all(&edits).unwrap(), ok, "{now:?} {edits:?}");
            if ok {
                now = want;
            }
            assert_eq!(s.partial(), &now);
            continue;
        }
        // Tries at one place until one is kept, as after refusals.
        let hole = rng.below(n as u64) as usize;
        let place = place(&mut rng);
        for _ in 0..1 + rng.below(10) {
            let t = token(pool, hostile, &mut rng);
            let want = placed(&now, hole, place, &t);
            let ok = c.check(&want).unwrap();
            let got = s.try_place(hole, place, &t).unwrap();
            assert_eq!(
                got,
                ok,
                "{now:?}: {:?} at hole {hole} {place:?}",
                String::from_utf8_lossy(&t)
            );
            if ok {
                now = want;
            }
            assert_eq!(s.partial(), &now);
            if ok {
                break;
            }
        }
    }
    s.stats()
}

/// A partial output cut from `doc`: 1–3 spans (as in infilling), or a
/// canvas with 10 or 40 % of its bytes masked in 1–8-byte runs.
fn cut(doc: &[u8], rng: &mut SplitMix64) -> Partial {
    let spans = match rng.below(3) {
        0 => pick_spans(doc.len(), 1 + rng.below(3) as usize, rng),
        1 => mask_spans(doc.len(), 0.1, 8, rng),
        _ => mask_spans(doc.len(), 0.4, 8, rng),
    };
    Partial::cut(doc, &spans)
}

fn shipped(file: &str) -> Constraint {
    let path = format!("{}/grammars/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    Constraint::compile(&Grammar::from_file_text(&path, &text, None).unwrap()).unwrap()
}

fn json_docs() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/jsontestsuite");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("y_"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .filter(|d| d.len() >= 4)
        .collect()
}

fn cpp_docs() -> Vec<Vec<u8>> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .take(40)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let f = |k: &str| v[k].as_str().unwrap().to_string();
            format!("{}{}", f("declaration"), f("canonical_solution")).into_bytes()
        })
        .collect()
}

fn smiles_docs() -> Vec<Vec<u8>> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/smiles/sample.smi");
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.as_bytes().to_vec())
        .collect()
}

/// Random update sequences on canvases cut from `docs`, tokens from the
/// same document.
fn on_documents(c: &Constraint, docs: &[Vec<u8>], seed: u64, steps: usize) -> SessionStats {
    let mut rng = SplitMix64::new(seed);
    let doc = &docs[rng.below(docs.len() as u64) as usize];
    let start = cut(doc, &mut rng);
    follow(c, start, (doc, true), rng.next_u64(), steps)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn json_sessions_answer_as_fresh_checks(seed in any::<u64>()) {
        thread_local!(static C: (Constraint, Vec<Vec<u8>>) = (shipped("json.ebnf"), json_docs()));
        C.with(|(c, docs)| on_documents(c, docs, seed, 30));
    }

    #[test]
    fn cpp_sessions_answer_as_fresh_checks(seed in any::<u64>()) {
        thread_local!(static C: (Constraint, Vec<Vec<u8>>) = (shipped("cpp.ebnf"), cpp_docs()));
        C.with(|(c, docs)| on_documents(c, docs, seed, 20));
    }

    #[test]
    fn smiles_sessions_answer_as_fresh_checks(seed in any::<u64>()) {
        thread_local!(static C: (Constraint, Vec<Vec<u8>>) = (shipped("smiles.ebnf"), smiles_docs()));
        C.with(|(c, docs)| on_documents(c, docs, seed, 30));
    }

    #[test]
    fn small_grammar_sessions_answer_as_fresh_checks(case in 0..CASES.len(), seed in any::<u64>()) {
        let case = &CASES[case];
        let c = Constraint::compile(&Grammar::from_lark(case.grammar, None).unwrap()).unwrap();
        // A start of holes and alphabet bytes.
        let mut rng = SplitMix64::new(seed);
        let mut start = Partial::new();
        for _ in 0..1 + rng.below(5) {
            match rng.below(2) {
                0 => start.push_hole(),
                _ => start.push_text(token(case.alphabet, false, &mut rng)),
            }
        }
        start.push_hole();
        follow(&c, start, (case.alphabet, false), rng.next_u64(), 25);
    }
}

#[test]
fn repeated_tries_go_through_an_insertion_point() {
    // The same comparisons, and the point path must answer some of them.
    let c = shipped("cpp.ebnf");
    let docs = cpp_docs();
    let mut total = SessionStats::default();
    for seed in 0..12 {
        let s = on_documents(&c, &docs, seed, 25);
        total.by_point += s.by_point;
        total.points += s.points;
        total.checks += s.checks;
        total.tries += s.tries;
        total.kept += s.kept;
    }
    assert!(total.points > 0 && total.by_point > 0, "{total:?}");
    assert!(total.kept > 0, "{total:?}");
    assert!(total.checks < total.tries, "{total:?}");
}

#[test]
fn a_hole_that_is_not_there_is_an_error_and_changes_nothing() {
    let c = shipped("json.ebnf");
    let start = Partial::new().text("[").hole().text("]");
    let mut s = c.session(start.clone());
    let e = s.try_place(1, Place::Fill, b"1").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Partial);
    let edits = [
        Edit {
            hole: 0,
            place: Place::Fill,
            bytes: b"1",
        },
        Edit {
            hole: 0,
            place: Place::Fill,
            bytes: b"2",
        },
    ];
    assert_eq!(
        s.try_place_all(&edits).unwrap_err().kind(),
        ErrorKind::Partial
    );
    assert_eq!(s.partial(), &start);
    assert!(s.try_place(0, Place::Fill, b"1,2").unwrap());
    assert_eq!(s.partial(), &Partial::new().text("[1,2]"));
}

//! Brute-force differential test of `completable` against an independent oracle.
//!
//! For each small grammar and alphabet, every text of length ≤ N over the
//! alphabet is run through the independent recognizer (`cdiff::recognize`,
//! regex-crate lexing + Earley, no code shared with the engine); the accepted
//! ones form the set S. Then every partial output of length ≤ M over the
//! alphabet plus holes is checked by the engine:
//! - "completable" must come with a witness that keeps every chunk in place
//!   and that the recognizer accepts; if that witness has length ≤ N it must
//!   be in S (so S is consistent with the engine);
//! - "not completable" must have no text in S matching the partial.
//!
//! The witness is the cheapest: its terminal count is the number of
//! lexemes of its own text, and no accepted text in S that matches the
//! partial, read with any fills, has fewer terminals plus swallowed bytes
//! (fixed bytes read by a lexeme that began in a fill, measured by the
//! recognizer's lexer: `common::swallow`). With `Config::shortest_witness`
//! off the witness is still a valid completion, never cheaper; the test
//! counts how often it costs more.
//!
//! The only fills the oracle does not see are those making the text longer
//! than N; every grammar here has short completions whenever it has any, and
//! the test counts how often the engine needed a witness longer than N.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar, Partial, Segment, Verdict};
use common::brute::{partials, Case, CASES};
use common::swallow::{alignments, swallowed};
use std::collections::HashSet;

/// Whether `text` matches `partial` (holes = any byte string).
fn matches(partial: &Partial, text: &[u8]) -> bool {
    let segs = partial.segments();
    let mut pos = 0usize;
    let mut after_hole = false;
    for (i, s) in segs.iter().enumerate() {
        match s {
            Segment::Hole => after_hole = true,
            Segment::Text(t) => {
                let last = i + 1 == segs.len();
                if last {
                    // Must be a suffix, at or after pos.
                    if text.len() < pos + t.len() || !text.ends_with(t) {
                        return false;
                    }
                    if !after_hole && text.len() != pos + t.len() {
                        return false;
                    }
                    return true;
                }
                if after_hole {
                    match text[pos..].windows(t.len()).position(|w| w == t.as_slice()) {
                        Some(off) => pos += off + t.len(),
                        None => return false,
                    }
                } else {
                    if !text[pos..].starts_with(t) {
                        return false;
                    }
                    pos += t.len();
                }
                after_hole = false;
            }
        }
    }
    after_hole || pos == text.len()
}

fn run_case(case: &Case) {
    let g = Grammar::from_lark(case.grammar, None).unwrap_or_else(|e| panic!("{}: {e}", case.name));
    let rec = Recognizer::new(&g).unwrap();
    let exact = cdiff::Config {
        witness_effort: u64::MAX,
        canvas_witness_effort: u64::MAX,
        ..cdiff::Config::default()
    };
    let c = Constraint::with_config(&g, exact).unwrap();
    let bounded = Constraint::compile(&g).unwrap();
    let first = Constraint::with_config(
        &g,
        cdiff::Config {
            shortest_witness: false,
            ..cdiff::Config::default()
        },
    )
    .unwrap();
    let mut longer = 0;
    let accepted: Vec<Vec<u8>> = common::words::all_words(case.alphabet, case.n)
        .into_iter()
        .filter(|w| rec.accepts(w).unwrap())
        .collect();
    let accepted_set: HashSet<&[u8]> = accepted.iter().map(|w| w.as_slice()).collect();
    // Terminals of a complete text: its (maximal-munch) lexemes.
    let terminals = |w: &[u8]| -> usize {
        let v = c.completable(&Partial::complete(w)).unwrap();
        v.completion().expect("an accepted text").terminals.len()
    };
    let accepted_terms: Vec<usize> = accepted.iter().map(|w| terminals(w)).collect();
    let (mut yes, mut no, mut long) = (0, 0, 0);
    for p in partials(case.alphabet, case.m) {
        let show = |p: &Partial| format!("{}: {:?}", case.name, p);
        match c.completable(&p).unwrap() {
            Verdict::Completable(done) => {
                yes += 1;
                assert_eq!(done.fills.len(), p.n_holes(), "{}", show(&p));
                assert_eq!(p.fill(&done.fills).unwrap(), done.text, "{}", show(&p));
                assert!(matches(&p, &done.text), "{}", show(&p));
                assert!(
                    rec.accepts(&done.text).unwrap(),
                    "{}: witness {:?} rejected by the recognizer",
                    show(&p),
                    String::from_utf8_lossy(&done.text)
                );
                if done.text.len() > case.n {
                    long += 1;
                } else if done.text.iter().all(|b| case.alphabet.contains(b)) {
                    assert!(accepted_set.contains(done.text.as_slice()), "{}", show(&p));
                }
                assert!(c.check(&p).unwrap(), "{}", show(&p));
                // Cheapest in terminals plus swallowed bytes (fixed bytes
                // read by a lexeme that began in a fill), against every
                // enumerated fill.
                assert_eq!(done.terminals.len(), terminals(&done.text), "{}", show(&p));
                let cost = |n: usize, fills: &[Vec<u8>]| n + swallowed(&rec, &p, fills).unwrap();
                let mine = cost(done.terminals.len(), &done.fills);
                let best = accepted
                    .iter()
                    .zip(&accepted_terms)
                    .filter(|(w, _)| matches(&p, w))
                    .flat_map(|(w, &n)| alignments(&p, w).into_iter().map(move |f| (n, f)))
                    .map(|(n, f)| cost(n, &f))
                    .min();
                if let Some(best) = best {
                    assert!(
                        mine <= best,
                        "{}: the witness {:?} costs {mine}, an enumerated fill {best}",
                        show(&p),
                        String::from_utf8_lossy(&done.text),
                    );
                }
                assert!(done.shortest, "{}", show(&p));
                // The default effort reaches the fixpoint on inputs this small.
                let by_default = bounded.completable(&p).unwrap();
                assert_eq!(by_default.completion(), Some(&done), "{}", show(&p));
                let quick = first.completable(&p).unwrap();
                let quick = quick.completion().expect("same verdict");
                assert!(rec.accepts(&quick.text).unwrap(), "{}", show(&p));
                let theirs = cost(quick.terminals.len(), &quick.fills);
                assert!(theirs >= mine, "{}", show(&p));
                longer += usize::from(theirs > mine);
            }
            Verdict::NotCompletable => {
                no += 1;
                if let Some(w) = accepted.iter().find(|w| matches(&p, w)) {
                    panic!(
                        "{}: engine says not completable, but {:?} completes it",
                        show(&p),
                        String::from_utf8_lossy(w)
                    );
                }
                assert!(!c.check(&p).unwrap(), "{}", show(&p));
            }
        }
    }
    eprintln!(
        "{}: {} completable ({} with witness longer than {} bytes; the first-found witness \
         had more terminals in {}), {} not",
        case.name, yes, long, case.n, longer, no
    );
    assert!(
        yes > 0 && no > 0,
        "{}: the table must exercise both answers",
        case.name
    );
}

#[test]
fn matches_glob_semantics() {
    let p = Partial::new().text("ab").hole().text("b").hole().text("c");
    assert!(matches(&p, b"abbc"));
    assert!(matches(&p, b"abxbyc"));
    assert!(!matches(&p, b"abc"));
    assert!(!matches(&p, b"abbcd"));
    assert!(matches(&Partial::new().text("a").hole(), b"a"));
    assert!(!matches(&Partial::complete("a"), b"ab"));
    assert!(matches(&Partial::new(), b""));
    assert!(!matches(&Partial::new(), b"a"));
    assert!(matches(&Partial::new().hole(), b"xyz"));
}

macro_rules! case_tests {
    ($($name:ident => $idx:expr),* $(,)?) => {
        $(#[test] fn $name() { run_case(&CASES[$idx]); })*
    };
}

case_tests! {
    brute_balanced_brackets => 0,
    brute_arithmetic_plus_plusplus => 1,
    brute_keywords_vs_identifiers => 2,
    brute_integers_spanning_holes => 3,
    brute_eq_eq_versus_eq => 4,
    brute_comments_against_operators => 5,
    brute_munch_across_lexemes => 6,
    brute_strings_with_escapes => 7,
}

//! Property tests (proptest).
//!
//! - automata: for random regular expressions, the minimal DFA, the
//!   unminimised DFA, the NFA and the `regex` crate agree on random strings;
//! - witnesses: for random JSON documents with random spans cut out, the
//!   partial is completable, and the witness keeps every chunk in place and is
//!   accepted by the independent recognizer; for random partial outputs over
//!   JSON's alphabet, every witness is accepted and `check` agrees;
//! - insertion points (`cdiff::mask`): on random partial outputs over JSON's
//!   alphabet, split at a random position and advanced by random tokens,
//!   `allows` equals `check` of the whole after every update, and
//!   `split_at` then `append` gives the partial output back.

use cdiff::automata::nfa::DEFAULT_NFA_LIMIT;
use cdiff::automata::{ByteDfa, Nfa};
use cdiff::mask::Insertion;
use cdiff::recognize::Recognizer;
use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar, Partial};
use proptest::prelude::*;
use std::sync::OnceLock;

fn regex_strategy() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        Just("a".to_string()),
        Just("b".to_string()),
        Just("c".to_string()),
        Just("[ab]".to_string()),
        Just("[^a]".to_string()),
        Just("é".to_string()),
    ];
    leaf.prop_recursive(4, 24, 3, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("(?:{x}{y})")),
            (inner.clone(), inner.clone()).prop_map(|(x, y)| format!("(?:{x}|{y})")),
            inner.clone().prop_map(|x| format!("(?:{x})*")),
            inner.clone().prop_map(|x| format!("(?:{x})+")),
            inner.clone().prop_map(|x| format!("(?:{x})?")),
            inner.prop_map(|x| format!("(?:{x}){{1,2}}")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn dfa_minimisation_preserves_the_language(
        pats in proptest::collection::vec(regex_strategy(), 1..4),
        words in proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'c'), Just(0xc3u8), Just(0xa9u8)], 0..8), 20),
    ) {
        let refs: Vec<&str> = pats.iter().map(String::as_str).collect();
        let nfa = Nfa::union(&refs, DEFAULT_NFA_LIMIT).unwrap();
        let dfa = ByteDfa::from_nfa(&nfa, 1 << 20).unwrap();
        let min = dfa.minimize();
        prop_assert!(min.len() <= dfa.len());
        let res: Vec<regex::bytes::Regex> = pats.iter().map(|p| regex::bytes::Regex::new(&format!("^(?:{p})$")).unwrap()).collect();
        for w in &words {
            let expect: Vec<u32> = (0..pats.len() as u32).filter(|&i| res[i as usize].is_match(w)).collect();
            prop_assert_eq!(nfa.matches(w), expect.clone(), "nfa {:?} on {:?}", pats, w);
            prop_assert_eq!(dfa.matches(w).to_vec(), expect.clone(), "dfa {:?} on {:?}", pats, w);
            prop_assert_eq!(min.matches(w).to_vec(), expect, "minimal dfa {:?} on {:?}", pats, w);
        }
    }
}

struct Json {
    c: Constraint,
    r: Recognizer,
}

fn json() -> &'static Json {
    static J: OnceLock<Json> = OnceLock::new();
    J.get_or_init(|| {
        let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
        Json {
            c: Constraint::compile(&g).unwrap(),
            r: Recognizer::new(&g).unwrap(),
        }
    })
}

/// A random JSON document (a small generator independent of the grammar).
fn json_doc(rng: &mut SplitMix64, depth: u32, out: &mut String) {
    let ws = |rng: &mut SplitMix64, out: &mut String| {
        if rng.below(3) == 0 {
            out.push_str([" ", "\n", "\t ", "  "][rng.below(4) as usize]);
        }
    };
    let pick = if depth > 3 {
        rng.below(4)
    } else {
        rng.below(6)
    };
    match pick {
        0 => out.push_str(["0", "-12", "3.25", "1e5", "-0.5E-3", "42"][rng.below(6) as usize]),
        1 => out.push_str(
            [
                "\"\"",
                "\"a b\"",
                "\"\\n\\\"x\"",
                "\"\\u00e9t\u{e9}\"",
                "\"k\"",
            ][rng.below(5) as usize],
        ),
        2 => out.push_str(["true", "false", "null"][rng.below(3) as usize]),
        3 => out.push_str("[]"),
        4 => {
            out.push('[');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                json_doc(rng, depth + 1, out);
                ws(rng, out);
            }
            out.push(']');
        }
        _ => {
            out.push('{');
            for i in 0..rng.below(4) {
                if i > 0 {
                    out.push(',');
                }
                ws(rng, out);
                out.push_str(&format!("\"k{i}\""));
                ws(rng, out);
                out.push(':');
                json_doc(rng, depth + 1, out);
            }
            out.push('}');
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn cut_documents_stay_completable(seed in any::<u64>(), holes in 1usize..4) {
        let j = json();
        let mut rng = SplitMix64::new(seed);
        let mut doc = String::new();
        json_doc(&mut rng, 0, &mut doc);
        prop_assert!(j.r.accepts(doc.as_bytes()).unwrap(), "generator produced invalid JSON {:?}", doc);
        let (p, _) = cut_spans(doc.as_bytes(), holes, &mut rng);
        let v = j.c.completable(&p).unwrap();
        let done = v.completion();
        prop_assert!(done.is_some(), "{:?} from {:?} not completable", p, doc);
        let done = done.unwrap();
        prop_assert_eq!(p.fill(&done.fills).unwrap(), done.text.clone());
        prop_assert!(j.r.accepts(&done.text).unwrap(), "witness {:?}", String::from_utf8_lossy(&done.text));
        prop_assert!(j.c.check(&p).unwrap());
    }

    #[test]
    fn random_partials_witnesses_are_accepted(
        items in proptest::collection::vec(piece(), 0..10),
    ) {
        let j = json();
        let p = partial_of(&items);
        let v = j.c.completable(&p).unwrap();
        prop_assert_eq!(j.c.check(&p).unwrap(), v.is_completable());
        if let Some(done) = v.completion() {
            prop_assert_eq!(p.fill(&done.fills).unwrap(), done.text.clone());
            prop_assert!(j.r.accepts(&done.text).unwrap(), "{:?}: witness {:?}", p, String::from_utf8_lossy(&done.text));
        } else if p.n_holes() == 0 {
            let text = p.fill(&[]).unwrap();
            prop_assert!(!j.r.accepts(&text).unwrap(), "{:?}: recognizer accepts", p);
        }
    }
}

/// The partial output of `items` (`None`: a hole).
fn partial_of(items: &[Option<&str>]) -> Partial {
    let mut p = Partial::new();
    for it in items {
        match it {
            None => p.push_hole(),
            Some(s) => p.push_text(s),
        }
    }
    p
}

/// A piece of a random partial output over JSON's alphabet (`None`: a hole).
fn piece() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        Just(Some("[")),
        Just(Some("]")),
        Just(Some("{")),
        Just(Some("}")),
        Just(Some(",")),
        Just(Some(":")),
        Just(Some("\"")),
        Just(Some("1")),
        Just(Some("-")),
        Just(Some(".")),
        Just(Some("e")),
        Just(Some("tr")),
        Just(Some("ue")),
        Just(Some(" ")),
        Just(Some("\\")),
        Just(Some("\"a\":")),
        Just(Some("0, ")),
        Just(Some("null")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn insertion_point_equals_fresh_checks(
        items in proptest::collection::vec(piece(), 0..10),
        at in 0usize..40,
        updates in proptest::collection::vec(proptest::collection::vec(piece(), 1..3), 1..6),
        limit in proptest::option::of(0usize..6),
    ) {
        let j = json();
        let p = partial_of(&items);
        let (left, right) = p.split_at(at);
        let mut back = left.clone();
        back.append(&right);
        prop_assert_eq!(&back, &p);
        // Every hole limited alike, or none.
        let limits = match limit {
            Some(k) => vec![Some(k); p.n_holes()],
            None => Vec::new(),
        };
        let mut point = Insertion::new(&j.c, &left, &right).unwrap().with_limits(limits.clone());
        let mut left = left;
        for u in &updates {
            // A token is the update's text pieces (holes dropped).
            let token: String = u.iter().flatten().copied().collect();
            let mut whole = left.clone();
            whole.push_text(&token);
            whole.append(&right);
            let fresh = if limits.is_empty() {
                j.c.check(&whole).unwrap()
            } else {
                j.c.check_within(&whole, &limits).unwrap()
            };
            prop_assert_eq!(point.allows(token.as_bytes()).unwrap(), fresh, "{:?} + {:?}", whole, token);
            // Accept it as a decoder would only when allowed; otherwise the
            // next proposal goes to the same point.
            if fresh {
                point.advance(token.as_bytes());
                left.push_text(&token);
                prop_assert_eq!(point.left(), &left);
            }
        }
    }
}

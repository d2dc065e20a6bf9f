//! Hole-size limits (`Constraint::check_within`) against brute force.
//!
//! For the differential test's small grammars, every partial output with one
//! or two holes is checked under every vector of per-hole limits (0–3 bytes)
//! small enough that each limited fill keeps the text within the enumerated
//! length. The oracle: an accepted text (independent recognizer) matches the
//! partial with each fill within its limit. The limited check must say
//! "completable" whenever the oracle finds such a fill (soundness), never
//! where the unlimited check does not, and, for grammars whose terminals are
//! all one byte long and none ignored, exactly what the oracle says.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar, Partial, Segment};
use common::brute::{partials, Case, CASES};

/// Appends to `out` every vector of fill lengths with which `text` matches
/// `segs[i..]` from `pos` (`cur`: the lengths chosen so far).
fn fill_lengths(
    segs: &[Segment],
    i: usize,
    text: &[u8],
    pos: usize,
    cur: &mut Vec<usize>,
    out: &mut Vec<Vec<usize>>,
) {
    match segs.get(i) {
        None if pos == text.len() => out.push(cur.clone()),
        None => {}
        Some(Segment::Text(t)) if text[pos..].starts_with(t) => {
            fill_lengths(segs, i + 1, text, pos + t.len(), cur, out);
        }
        Some(Segment::Text(_)) => {}
        Some(Segment::Hole) => {
            for k in 0..=text.len() - pos {
                cur.push(k);
                fill_lengths(segs, i + 1, text, pos + k, cur, out);
                cur.pop();
            }
        }
    }
}

/// Every vector of `h` limits in `0..=max` with sum at most `total`.
fn limit_vectors(h: usize, max: usize, total: usize) -> Vec<Vec<usize>> {
    let mut out = vec![Vec::new()];
    for _ in 0..h {
        out = out
            .into_iter()
            .flat_map(|v: Vec<usize>| {
                (0..=max).filter_map(move |k| {
                    let mut w = v.clone();
                    w.push(k);
                    (w.iter().sum::<usize>() <= total).then_some(w)
                })
            })
            .collect();
    }
    out
}

/// Runs the comparison; returns how many (partial, limits) pairs the limit
/// refused although the unlimited check accepts.
fn run(case: &Case, exact: bool) -> usize {
    let g = Grammar::from_lark(case.grammar, None).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let accepted: Vec<Vec<u8>> = common::words::all_words(case.alphabet, case.n)
        .into_iter()
        .filter(|w| rec.accepts(w).unwrap())
        .collect();
    let mut refused = 0;
    for p in partials(case.alphabet, case.m.min(5)) {
        let h = p.n_holes();
        let show = || format!("{}: {:?}", case.name, p);
        let free = c.check(&p).unwrap();
        assert_eq!(
            c.check_within(&p, &vec![None; h]).unwrap(),
            free,
            "{}",
            show()
        );
        if h == 0 || h > 2 || p.text_len() > case.n {
            continue;
        }
        let mut lens = Vec::new();
        for w in &accepted {
            fill_lengths(p.segments(), 0, w, 0, &mut Vec::new(), &mut lens);
        }
        for limits in limit_vectors(h, 3, case.n - p.text_len()) {
            let fits = lens
                .iter()
                .any(|v| v.iter().zip(&limits).all(|(a, b)| a <= b));
            let asked: Vec<Option<usize>> = limits.iter().map(|&k| Some(k)).collect();
            let got = c.check_within(&p, &asked).unwrap();
            assert!(
                got || !fits,
                "{} with limits {limits:?}: a fill fits, refused",
                show()
            );
            assert!(!got || free, "{} with limits {limits:?}", show());
            if exact {
                assert_eq!(got, fits, "{} with limits {limits:?}", show());
            }
            refused += usize::from(free && !got);
        }
    }
    refused
}

#[test]
fn limited_holes_never_refuse_a_fill_that_fits() {
    let mut total = 0;
    for case in CASES {
        let refused = run(case, false);
        eprintln!("{}: {refused} refused by the limits alone", case.name);
        total += refused;
    }
    assert!(total > 1000, "the limits must matter");
}

#[test]
fn limits_are_exact_for_one_byte_terminals() {
    let cases = [
        &CASES[0],
        &Case {
            name: "nested sums, one-byte terminals",
            grammar: r#"
                start: e
                e: "x" | "(" e "+" e ")" | "-" e
            "#,
            alphabet: b"x(+)-",
            n: 9,
            m: 5,
        },
    ];
    for case in cases {
        assert!(run(case, true) > 0, "{}", case.name);
    }
}

#[test]
fn a_ring_left_open_in_one_mask_is_refused() {
    // The paper's Fig. 8b: `C6CCCC□))` cannot be closed in one mask token.
    let g = Grammar::from_lark(include_str!("../grammars/smiles.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let p = Partial::new().text("C6CCCC").hole().text("))");
    assert!(c.check(&p).unwrap());
    assert!(!c.check_within(&p, &[Some(1)]).unwrap());
    let fill = c.completable(&p).unwrap();
    let fill = &fill.completion().unwrap().fills[0];
    assert!(c.check_within(&p, &[Some(fill.len())]).unwrap());
}

#[test]
fn limits_past_the_unrolled_maximum_are_no_limit() {
    let g = Grammar::from_lark(r#"start: "(" start ")" | "x""#, None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let p = Partial::new().text("(".repeat(7)).hole();
    assert!(!c.check_within(&p, &[Some(7)]).unwrap());
    assert!(c.check_within(&p, &[Some(8)]).unwrap());
    // 9 bytes are more than are unrolled: treated as no limit.
    let deep = Partial::new().text("(".repeat(9)).hole();
    assert!(c.check_within(&deep, &[Some(9)]).unwrap());
    assert!(!c.check_within(&deep, &[Some(8)]).unwrap());
    assert!(c.check_within(&p, &[Some(3), None]).is_err());
}

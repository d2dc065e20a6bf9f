//! `cdiff::mask` against its oracle, [`Constraint::check`] asked token by
//! token: on the shipped grammars with insertion points cut from real
//! documents (an open region after the point, the rest of the text closed
//! after it, holes before it, corrupted prefixes), and on small grammars
//! built to stress maximal munch (keywords inside identifiers, a lexeme that
//! is a prefix of a longer one, ignored whitespace and comments) over every
//! short partial output. Vocabularies are byte-level BPE-like: every single
//! byte plus substrings of the documents, so tokens span lexeme boundaries.

mod common;

use cdiff::mask::{Insertion, Vocabulary};
use cdiff::rng::SplitMix64;
use cdiff::{Constraint, Grammar, Partial};
use common::brute::partials;
use common::words::all_words;

/// Every byte, then up to `extra` distinct substrings (2–8 bytes) of `docs`.
fn vocabulary(docs: &[Vec<u8>], extra: usize, rng: &mut SplitMix64) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    let mut seen: std::collections::HashSet<Vec<u8>> = out.iter().cloned().collect();
    let mut tries = 0;
    while out.len() < 256 + extra && tries < extra * 20 {
        tries += 1;
        let d = &docs[rng.below(docs.len() as u64) as usize];
        if d.len() < 2 {
            continue;
        }
        let n = 2 + rng.below(7) as usize;
        let n = n.min(d.len());
        let at = rng.below((d.len() - n + 1) as u64) as usize;
        let t = d[at..at + n].to_vec();
        if seen.insert(t.clone()) {
            out.push(t);
        }
    }
    out
}

/// `text` with ten holes of 0–3 bytes spread through it, ending in its
/// last bytes (an insertion point after many holes).
fn with_ten_holes(text: &[u8], rng: &mut SplitMix64) -> Partial {
    let (c, mut from) = (text.len(), 0);
    let mut left = Partial::new();
    for k in 0..10 {
        let a = from + 1 + rng.below(((c - from) / (10 - k)).max(1) as u64) as usize;
        let a = a.min(c);
        left.push_text(&text[from..a]);
        left.push_hole();
        from = (a + 1 + rng.below(3) as usize).min(c);
    }
    left.push_text(&text[from..c]);
    left
}

/// A random insertion point in `doc`: `(left, right)`.
fn cut(doc: &[u8], rng: &mut SplitMix64) -> (Partial, Partial) {
    let c = rng.below(doc.len() as u64 + 1) as usize;
    let mut left = Partial::new();
    if c > 60 && rng.below(6) == 0 {
        // Many holes before the point (more than the chart of `left` is
        // built for: every relation takes a full check).
        left = with_ten_holes(&doc[..c], rng);
    } else if c > 4 && rng.below(3) == 0 {
        // A hole somewhere before the point.
        let a = rng.below(c as u64 - 2) as usize;
        let b = a + 1 + rng.below(((c - a) as u64).min(6)) as usize;
        left.push_text(&doc[..a]);
        left.push_hole();
        left.push_text(&doc[b.min(c)..c]);
    } else {
        left.push_text(&doc[..c]);
    }
    if rng.below(8) == 0 && c > 0 {
        // A stray byte: usually nothing is allowed any more.
        left.push_text([b"}])\"'#"[rng.below(6) as usize]]);
    }
    let mut right = Partial::new();
    match rng.below(4) {
        // The region goes on; the text after it is fixed.
        0 | 1 => {
            let skip = c + rng.below((doc.len() - c) as u64 / 2 + 1) as usize;
            right.push_hole();
            right.push_text(&doc[skip..]);
        }
        // The region is closed: the fixed rest follows directly.
        2 => right.push_text(&doc[c..]),
        // An open end.
        _ => right.push_hole(),
    }
    (left, right)
}

/// `check` (no limits) or `check_within` of `left · t · right`.
fn oracle(
    c: &Constraint,
    left: &Partial,
    t: &[u8],
    right: &Partial,
    limits: &[Option<usize>],
) -> bool {
    let mut p = left.clone();
    p.push_text(t);
    p.append(right);
    if limits.is_empty() {
        c.check(&p).unwrap()
    } else {
        c.check_within(&p, limits).unwrap()
    }
}

/// Mask and `allows` at `cuts` random points of `docs` equal the oracle on
/// every token of the vocabulary, with fewer checks than tokens. Returns
/// the full checks answered by the end of the text alone.
fn against_checks(g: &Grammar, docs: &[Vec<u8>], extra: usize, cuts: usize, seed: u64) -> usize {
    let c = Constraint::compile(g).unwrap();
    let mut rng = SplitMix64::new(seed);
    let tokens = vocabulary(docs, extra, &mut rng);
    let vocab = Vocabulary::new(&tokens);
    let (mut allowed, mut checks, mut asked, mut by_prefix, mut walked) = (0, 0, 0, 0, 0);
    let (mut implied, mut holed_by_prefix, mut by_end, mut remembered) = (0, 0, 0, 0);
    for k in 0..cuts {
        let doc = &docs[rng.below(docs.len() as u64) as usize];
        let (left, right) = cut(doc, &mut rng);
        let mut at = Insertion::new(&c, &left, &right).unwrap();
        let mask = at.mask(&vocab).unwrap();
        checks += at.stats().checks;
        by_prefix += at.stats().by_prefix;
        if left.n_holes() > 0 {
            holed_by_prefix += at.stats().by_prefix;
        }
        walked += at.stats().walked;
        implied += at.stats().implied;
        by_end += at.stats().by_end;
        remembered += at.stats().remembered;
        let mut again = Insertion::new(&c, &left, &right).unwrap();
        for (id, t) in tokens.iter().enumerate() {
            let want = oracle(&c, &left, t, &right, &[]);
            assert_eq!(
                mask[id],
                want,
                "cut {k}: mask says {} for token {:?} at {left:?} | {right:?}",
                mask[id],
                String::from_utf8_lossy(t)
            );
            assert_eq!(
                again.allows(t).unwrap(),
                want,
                "cut {k}: allows, token {t:?}"
            );
            allowed += want as usize;
            asked += 1;
        }
    }
    eprintln!(
        "{asked} tokens asked, {allowed} allowed, {checks} checks for the masks, \
         {by_prefix} of them from the chart of the text before the point; \
         {walked} of {cuts} masks walked by kept relations; {implied} rows implied by \
         earlier rows; {remembered} searches ended at a remembered completion"
    );
    // Searches that reach the goal at a completion remembered from an
    // earlier search at the point are exercised (and agreed with checks).
    assert!(remembered > 0, "no search ended at a remembered completion");
    // Rows implied by earlier rows (hole closures that hold or lie inside
    // theirs) are exercised, and every answer above agreed with a check.
    assert!(implied > 0, "no row was implied");
    // Both ways of walking the trie are exercised (kept relations from the
    // second time a point's lexer states are seen).
    assert!(walked > 0 && walked < cuts, "{walked} of {cuts}");
    // Both ways of answering a relation are exercised.
    assert!(
        by_prefix > 0 && by_prefix < checks,
        "{by_prefix} of {checks}"
    );
    // The chart of a `left` with holes (ending in text) answers too.
    assert!(holed_by_prefix > 0, "no relation after a hole by the chart");
    assert!(
        allowed > 0 && allowed < asked,
        "the cuts must allow some tokens and refuse others"
    );
    assert!(
        checks * 2 < asked,
        "the mask reuses checks ({checks} for {asked} tokens)"
    );
    by_end
}

fn json_docs() -> Vec<Vec<u8>> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/jsontestsuite");
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_str().unwrap().starts_with("y_"))
        .collect();
    names.sort();
    names
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .filter(|d| d.len() < 400)
        .collect()
}

#[test]
fn json_mask_equals_checks_token_by_token() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let _ = against_checks(&g, &json_docs(), 1500, 40, 1);
}

#[test]
fn smiles_mask_equals_checks_token_by_token() {
    let g = Grammar::from_lark(include_str!("../grammars/smiles.ebnf"), None).unwrap();
    let text = include_str!("../datasets/smiles/sample.smi");
    let docs: Vec<Vec<u8>> = text
        .lines()
        .map(|l| l.trim().as_bytes().to_vec())
        .filter(|l| !l.is_empty())
        .take(200)
        .collect();
    let _ = against_checks(&g, &docs, 1500, 40, 2);
}

#[test]
fn cpp_mask_equals_checks_token_by_token() {
    let (c, rec) = common::cpp::compiled();
    drop(c);
    let docs: Vec<Vec<u8>> = common::cpp::programs(&rec)
        .into_iter()
        .take(40)
        .map(|p| p.text.into_bytes())
        .collect();
    let _ = against_checks(&common::cpp::grammar(), &docs, 600, 12, 3);
}

/// The first `n` shipped C++ programs longer than 200 bytes.
fn long_cpp_programs(rec: &cdiff::recognize::Recognizer, n: usize) -> Vec<Vec<u8>> {
    common::cpp::programs(rec)
        .into_iter()
        .map(|p| p.text.into_bytes())
        .filter(|d| d.len() > 200)
        .take(n)
        .collect()
}

/// Asserts that the mask of `left · □ · right` over `tokens` is the oracle's
/// answer token by token; returns the point (for its stats) and how many
/// tokens it allows.
fn assert_mask_is_checks<'c>(
    c: &'c Constraint,
    left: &Partial,
    right: &Partial,
    tokens: &[Vec<u8>],
    vocab: &Vocabulary,
) -> (Insertion<'c>, usize) {
    let mut at = Insertion::new(c, left, right).unwrap();
    let mask = at.mask(vocab).unwrap();
    let mut allowed = 0;
    for (id, t) in tokens.iter().enumerate() {
        let want = oracle(c, left, t, right, &[]);
        assert_eq!(
            mask[id],
            want,
            "token {:?} at {left:?} | {right:?}",
            String::from_utf8_lossy(t)
        );
        allowed += want as usize;
    }
    (at, allowed)
}

#[test]
fn cpp_mask_after_many_holes_equals_checks() {
    // The last masks of a diffusion canvas: ten holes before the point,
    // the fixed end of the program after it. Most tokens are refused by
    // that end alone, which is asked before each full check.
    let (c, rec) = common::cpp::compiled();
    let docs = long_cpp_programs(&rec, 4);
    let mut rng = SplitMix64::new(7);
    let tokens = vocabulary(&docs, 300, &mut rng);
    let vocab = Vocabulary::new(&tokens);
    let (mut by_end, mut allowed) = (0, 0);
    for doc in &docs {
        let c0 = doc.len() - 20 - rng.below(20) as usize;
        let left = with_ten_holes(&doc[..c0], &mut rng);
        let right = Partial::new().text(&doc[c0..]);
        let (at, yes) = assert_mask_is_checks(&c, &left, &right, &tokens, &vocab);
        by_end += at.stats().by_end;
        allowed += yes;
    }
    eprintln!("{by_end} checks answered by the end; {allowed} tokens allowed");
    assert!(by_end > 0, "no check answered by the end");
    assert!(allowed > 0);
}

#[test]
fn cpp_mask_before_fixed_text_equals_checks() {
    // A diffusion canvas's position just before committed text: `right`
    // begins with fixed bytes. Half of the points are inside an identifier
    // or keyword (the lexeme a token ends in may go on into `right`), half
    // before punctuation or a space (it cannot: the rows share the start
    // state's automaton of `right`, `InsertionStats::ended`).
    let (c, rec) = common::cpp::compiled();
    let docs = long_cpp_programs(&rec, 6);
    let mut rng = SplitMix64::new(11);
    let tokens = vocabulary(&docs, 400, &mut rng);
    let vocab = Vocabulary::new(&tokens);
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let (mut ended, mut allowed, mut inside) = (0, 0, 0);
    for (k, doc) in docs.iter().enumerate() {
        let mid_word = k % 2 == 0;
        let cuts: Vec<usize> = (1..doc.len())
            .filter(|&i| match mid_word {
                true => word(doc[i - 1]) && word(doc[i]),
                false => !word(doc[i]),
            })
            .collect();
        for _ in 0..2 {
            let at = cuts[rng.below(cuts.len() as u64) as usize];
            inside += usize::from(mid_word);
            let left = Partial::new().text(&doc[..at]);
            let right = Partial::new().text(&doc[at..]);
            let (point, yes) = assert_mask_is_checks(&c, &left, &right, &tokens, &vocab);
            ended += point.stats().ended;
            allowed += yes;
        }
    }
    eprintln!("{ended} rows ended before `right`; {allowed} tokens allowed");
    assert!(inside > 0 && ended > 0 && allowed > 0);
}

/// An autoregressive loop over `docs` (at most `n_docs`): the point
/// advances over each document's bytes in token-sized steps, with
/// `right` after it; at each step `allows` equals the oracle on `cands`
/// random candidates, including the document's own next bytes. Returns the
/// summed stats (grown, by the chart, checks, rows kept from an earlier
/// point).
fn advancing_against_checks(
    c: &Constraint,
    docs: &[Vec<u8>],
    right_of: impl Fn(&[u8]) -> Partial,
    n_docs: usize,
    cands: usize,
    seed: u64,
) -> (usize, usize, usize, usize) {
    let mut rng = SplitMix64::new(seed);
    let tokens = vocabulary(docs, 300, &mut rng);
    let (mut grown, mut by_prefix, mut checks, mut kept) = (0, 0, 0, 0);
    for doc in docs.iter().take(n_docs) {
        let right = right_of(doc);
        let mut at = Insertion::new(c, &Partial::new(), &right).unwrap();
        let mut pos = 0;
        while pos < doc.len() {
            let n = (1 + rng.below(4) as usize).min(doc.len() - pos);
            let own = &doc[pos..pos + n];
            let left = at.left().clone();
            assert_eq!(left, Partial::new().text(&doc[..pos]));
            assert_eq!(
                at.allows(own).unwrap(),
                oracle(c, &left, own, &right, &[]),
                "the document's own bytes {own:?} after {left:?}"
            );
            for _ in 0..cands {
                let t = &tokens[rng.below(tokens.len() as u64) as usize];
                assert_eq!(
                    at.allows(t).unwrap(),
                    oracle(c, &left, t, &right, &[]),
                    "{t:?} after {left:?}"
                );
            }
            at.advance(own);
            pos += n;
        }
        let st = at.stats();
        (grown, by_prefix, checks, kept) = (
            grown + st.grown,
            by_prefix + st.by_prefix,
            checks + st.checks,
            kept + st.rows_kept,
        );
    }
    (grown, by_prefix, checks, kept)
}

/// JSON documents, the region open after the point: the chart of the text
/// before it grows token by token and answers the checks.
#[test]
fn advancing_point_equals_checks() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let docs = json_docs();
    let (grown, by_prefix, checks, _) =
        advancing_against_checks(&c, &docs, |_| Partial::new().hole(), 30, 20, 4);
    assert!(grown > 100, "the chart grew {grown} times");
    assert!(
        by_prefix * 10 > checks * 9,
        "{by_prefix} of {checks} checks by the chart"
    );
}

/// C++ functions filled from the start with the text after the region
/// fixed (the closing brace of the function), as autoregressive infilling
/// does: the point moves over comments, strings, identifiers and keywords
/// whose lexemes span several steps (rows answered at an earlier point
/// with the same frontier states are reused there).
#[test]
fn advancing_point_equals_checks_cpp() {
    let (c, rec) = common::cpp::compiled();
    let docs: Vec<Vec<u8>> = common::cpp::programs(&rec)
        .into_iter()
        .take(6)
        .map(|p| p.text.into_bytes())
        .collect();
    let right = |_: &[u8]| Partial::new().hole().text("\n");
    let (grown, by_prefix, _, kept) = advancing_against_checks(&c, &docs, right, 6, 3, 5);
    assert!(
        grown > 100 && by_prefix > 100 && kept > 10,
        "grown {grown}, by the chart {by_prefix}, rows kept {kept}"
    );
}

/// `1..=max` random bytes of `alphabet`.
fn random_text(rng: &mut SplitMix64, alphabet: &[u8], max: u64) -> Vec<u8> {
    let len = 1 + rng.below(max) as usize;
    (0..len)
        .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
        .collect()
}

/// The mask at `at` equals the oracle on every word (grammar `k`).
fn assert_mask_is_oracle(
    c: &Constraint,
    at: &mut Insertion<'_>,
    vocab: &Vocabulary,
    words: &[Vec<u8>],
    right: &Partial,
    k: usize,
) {
    let left = at.left().clone();
    let mask = at.mask(vocab).unwrap();
    for (id, w) in words.iter().enumerate() {
        assert_eq!(
            mask[id],
            oracle(c, &left, w, right, &[]),
            "grammar {k}: {left:?} · {:?} · {right:?}",
            String::from_utf8_lossy(w)
        );
    }
}

/// Small grammars where lexing is the hard part: random texts over a small
/// alphabet, the point advancing over them a byte or two at a time, every
/// word of up to 2 bytes asked at each step (the mask), before a hole or a
/// fixed byte.
#[test]
fn small_grammars_advancing_point() {
    for (k, (src, alphabet)) in small_cases().iter().enumerate() {
        let g = Grammar::from_lark(src, None).unwrap();
        let c = Constraint::compile(&g).unwrap();
        let words = all_words(alphabet, 2);
        let vocab = Vocabulary::new(&words);
        let mut rng = SplitMix64::new(k as u64);
        let mut grown = 0;
        for _ in 0..60 {
            let text = random_text(&mut rng, alphabet, 7);
            let right = match rng.below(3) {
                0 => Partial::new().hole(),
                1 => Partial::new().text([alphabet[rng.below(alphabet.len() as u64) as usize]]),
                _ => Partial::new(),
            };
            let mut at = Insertion::new(&c, &Partial::new(), &right).unwrap();
            let mut pos = 0;
            while pos < text.len() {
                assert_mask_is_oracle(&c, &mut at, &vocab, &words, &right, k);
                let n = (1 + rng.below(2) as usize).min(text.len() - pos);
                at.advance(&text[pos..pos + n]);
                pos += n;
            }
            grown += at.stats().grown;
        }
        assert!(grown > 0, "grammar {k}: the chart never grew");
    }
}

/// Regression for rows kept across moves of the point by the names of the
/// frontier states: after `(a` and after a later `a` the item `x → a · b`
/// waits the same, only its origin differs (inside parentheses, brackets,
/// or a bare item before `;`). Every byte here is a terminal, so the point
/// stands at a new frontier state at every step and every row kept comes
/// from a state of the same name; every mask equals the checks.
#[test]
fn kept_rows_tell_apart_items_from_other_origins() {
    let g = Grammar::from_lark(
        r#"
        start: item+
        item: "(" x ")" | x ";" | "[" x "]"
        x: "a" "b" | "(" x ")"
        "#,
        None,
    )
    .unwrap();
    let c = Constraint::compile(&g).unwrap();
    let words = all_words(b"()[];ab", 2);
    let vocab = Vocabulary::new(&words);
    let texts = ["(ab)ab;[ab]ab;(ab)", "ab;ab;(ab)ab;", "((ab))ab;[(ab)]ab;"];
    let rights = [
        Partial::new().hole(),
        Partial::new().hole().text(")"),
        Partial::new().hole().text(";"),
        Partial::new().hole().text("]"),
    ];
    let mut kept = 0;
    for text in texts {
        for right in &rights {
            let mut at = Insertion::new(&c, &Partial::new(), right).unwrap();
            for b in text.bytes() {
                assert_mask_is_oracle(&c, &mut at, &vocab, &words, right, 0);
                at.advance(&[b]);
            }
            assert_mask_is_oracle(&c, &mut at, &vocab, &words, right, 0);
            kept += at.stats().rows_kept;
        }
    }
    assert!(kept > 0, "no row kept across the point's moves");
}

/// The text before the point starts with a hole, then the point advances
/// over random bytes: a lexeme in progress at the point may have started
/// in the hole or after it (`x1a` one identifier, or `1` a number and `a`
/// a new identifier), so one lexer state stands at several states of the
/// chart of that text, and a row is searched from all of them. Every mask
/// equals the checks, before a hole, fixed bytes, or the end.
#[test]
fn small_grammars_advancing_after_a_hole() {
    let id_num: [(&str, &[u8]); 2] = [
        (
            r#"
            start: (ID ";" | NUM ID ";")*
            ID: /[a-z][a-z0-9]*/
            NUM: /[0-9]+/
            "#,
            b"a1;",
        ),
        (
            r#"
            start: ID ";" NUM ("," ID)*
            ID: /[a-z][a-z0-9]*/
            NUM: /[0-9]+/
            "#,
            b"a1;,",
        ),
    ];
    let mut several = 0;
    for (k, (src, alphabet)) in small_cases().into_iter().chain(id_num).enumerate() {
        let g = Grammar::from_lark(src, None).unwrap();
        let c = Constraint::compile(&g).unwrap();
        let words = all_words(alphabet, 2);
        let vocab = Vocabulary::new(&words);
        let mut rng = SplitMix64::new(100 + k as u64);
        for _ in 0..40 {
            let text = random_text(&mut rng, alphabet, 6);
            let len = text.len();
            let right = match rng.below(3) {
                0 => Partial::new().hole(),
                1 => Partial::new().text([alphabet[rng.below(alphabet.len() as u64) as usize]]),
                _ => Partial::new().text(&text[..rng.below(len as u64 + 1) as usize]),
            };
            let mut at = Insertion::new(&c, &Partial::new().hole(), &right).unwrap();
            for &b in &text {
                at.advance(&[b]);
                assert_mask_is_oracle(&c, &mut at, &vocab, &words, &right, k);
            }
            several += at.stats().several_frontiers;
        }
    }
    assert!(several > 0, "no row stood at several states of the chart");
}

/// Small grammars where lexing is the hard part, over every partial output
/// of up to 3 positions before the point and 1 after it from a small
/// alphabet, and a vocabulary of every word of up to 2 bytes; without hole
/// limits and with every hole limited to 0, 1 or 2 bytes.
#[test]
fn small_grammars_every_short_partial() {
    for (k, (src, alphabet)) in small_cases().iter().enumerate() {
        let g = Grammar::from_lark(src, None).unwrap();
        let c = Constraint::compile(&g).unwrap();
        let words = all_words(alphabet, 2);
        let vocab = Vocabulary::new(&words);
        let (mut n, mut yes, mut by_prefix) = (0, 0, 0);
        for left in partials(alphabet, 3) {
            for right in partials(alphabet, 1) {
                let holes = left.n_holes() + right.n_holes();
                let limited = (0..3).map(|b| vec![Some(b); holes]);
                for limits in std::iter::once(Vec::new()).chain(limited) {
                    let mut at = Insertion::new(&c, &left, &right)
                        .unwrap()
                        .with_limits(limits.clone());
                    let mask = at.mask(&vocab).unwrap();
                    by_prefix += at.stats().by_prefix;
                    for (id, w) in words.iter().enumerate() {
                        let mut limits = limits.clone();
                        if w.is_empty() && !limits.is_empty() {
                            let mut p = left.clone();
                            p.append(&right);
                            // Two holes side by side become one, with room for both.
                            if p.n_holes() < limits.len() {
                                let last = limits.pop().unwrap().unwrap();
                                let k = left.n_holes() - 1;
                                limits[k] = Some(limits[k].unwrap() + last);
                            }
                        }
                        let want = oracle(&c, &left, w, &right, &limits);
                        assert_eq!(
                            mask[id],
                            want,
                            "grammar {k}: {left:?} · {:?} · {right:?}, limits {limits:?}",
                            String::from_utf8_lossy(w)
                        );
                        n += 1;
                        yes += want as usize;
                    }
                }
            }
        }
        assert!(yes > 0 && yes < n, "grammar {k}: {yes} of {n} allowed");
        // Relations answered from the chart of a hole-free left are among
        // those compared with the oracle.
        assert!(
            by_prefix > 0,
            "grammar {k}: no relation answered by the prefix chart"
        );
    }
}

/// Report (ignored; needs `../shared`): the mask over the 151,665-token
/// Qwen2 vocabulary (Dream's tokenizer) at points cut from JSON documents
/// and C++ functions, timed, with a sample of tokens re-checked one by one.
/// `cargo test --release --test mask -- --ignored --nocapture`
/// A mask from a kept walk (the second point with the same lexer states
/// on) decides relations instead of walking the trie: it must give what the
/// lexed mask of the first point gave and what checks say, with the empty
/// token, several ids sharing bytes, and tokens under refused prefixes;
/// with a hole after the point (refused prefixes prune) and without.
#[test]
fn kept_walk_masks_equal_lexed_masks() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut tokens: Vec<Vec<u8>> = [
        "", "1", "12", "]", "],", "]]", "1", ", \"", "\"a", "tr", "true", "x", "",
    ]
    .iter()
    .map(|t| t.as_bytes().to_vec())
    .collect();
    tokens.extend((0..=255u8).map(|b| vec![b]));
    for (left, right) in [
        ("[1, ", Partial::new().hole().text("]")),
        ("[1, ", Partial::new().text("2]")),
        ("[1, 2", Partial::new().hole()),
        ("{\"a\": [", Partial::new().hole().text("]}")),
    ] {
        let vocab = Vocabulary::new(&tokens);
        let left = Partial::new().text(left);
        let mut first = Insertion::new(&c, &left, &right).unwrap();
        let lexed = first.mask(&vocab).unwrap();
        assert_eq!(first.stats().walked, 0);
        let mut second = Insertion::new(&c, &left, &right).unwrap();
        let kept = second.mask(&vocab).unwrap();
        assert_eq!(second.stats().walked, 1, "{left:?} | {right:?}");
        assert_eq!(kept, lexed, "{left:?} | {right:?}");
        for (id, t) in tokens.iter().enumerate() {
            assert_eq!(
                kept[id],
                oracle(&c, &left, t, &right, &[]),
                "{t:?} at {left:?} | {right:?}"
            );
        }
        assert!(kept.iter().any(|&x| x) && !kept.iter().all(|&x| x));
    }
}

#[test]
#[ignore]
fn qwen2_vocabulary_mask_cost() {
    use cdiff::model::{TextCodec, Tokenizer};
    use std::time::Instant;
    let Some(dir) = common::shared::dir("tokenizers/dream-v0-instruct-7b", "qwen2 mask cost")
    else {
        return;
    };
    let tok = Tokenizer::from_dir(&dir).unwrap();
    let tokens: Vec<Vec<u8>> = (0..tok.n_tokens() as u32)
        .map(|id| tok.token_bytes(id).to_vec())
        .collect();
    let t0 = Instant::now();
    let vocab = Vocabulary::new(&tokens);
    eprintln!("{} tokens, trie built in {:?}", tokens.len(), t0.elapsed());
    let (_, rec) = common::cpp::compiled();
    let cpp_docs: Vec<Vec<u8>> = common::cpp::programs(&rec)
        .into_iter()
        .take(60)
        .map(|p| p.text.into_bytes())
        .collect();
    let json = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    // CDIFF_MASK_ORACLE=0 skips the token-by-token comparison (for profiling
    // the masks alone).
    let oracle_rounds = match std::env::var("CDIFF_MASK_ORACLE").as_deref() {
        Ok("0") => 0,
        _ => 100,
    };
    let cases = [
        ("json", json, json_docs()),
        ("cpp", common::cpp::grammar(), cpp_docs),
    ];
    // CDIFF_MASK_ONLY=json|cpp: one grammar; CDIFF_MASK_POINTS=N: N points
    // (30); CDIFF_MASK_RIGHT=text: the point directly before the rest of
    // the document (a diffusion canvas's position before committed text)
    // instead of before a hole of 8 bytes and the rest; CDIFF_MASK_LOOP=only:
    // the autoregressive loop alone, =skip: the masks at fresh points alone
    // (for profiling either); CDIFF_MASK_REGIONS=N: N regions in the loop
    // (the points, at most 30; a long run shows the loop once the
    // vocabulary keeps walks for most lexer states); CDIFF_MASK_KEPT_TAILS=MiB:
    // the constraint's `kept_tails` (0: none kept, for comparison on one
    // binary).
    let before_text = std::env::var("CDIFF_MASK_RIGHT").is_ok_and(|v| v == "text");
    let only = std::env::var("CDIFF_MASK_ONLY").unwrap_or_default();
    let loop_only = std::env::var("CDIFF_MASK_LOOP").is_ok_and(|v| v == "only");
    let loop_skipped = std::env::var("CDIFF_MASK_LOOP").is_ok_and(|v| v == "skip");
    let points: usize = std::env::var("CDIFF_MASK_POINTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(30);
    let regions: usize = std::env::var("CDIFF_MASK_REGIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(points.min(30));
    for (name, g, docs) in cases {
        if !only.is_empty() && only != name {
            continue;
        }
        let mut config = cdiff::Config::default();
        if let Some(mib) = std::env::var("CDIFF_MASK_KEPT_TAILS")
            .ok()
            .and_then(|s| s.parse::<usize>().ok())
        {
            config.kept_tails = mib << 20;
        }
        let c = Constraint::with_config(&g, config).unwrap();
        let mut rng = SplitMix64::new(7);
        let (mut times, mut checks, mut allowed) = (Vec::new(), Vec::new(), Vec::new());
        let fresh_points = if loop_only { 0 } else { points };
        for _ in 0..fresh_points {
            let doc = &docs[rng.below(docs.len() as u64) as usize];
            let at = rng.below(doc.len() as u64 + 1) as usize;
            let left = Partial::new().text(&doc[..at]);
            let right = match before_text {
                true => Partial::new().text(&doc[at..]),
                false => Partial::new().hole().text(&doc[(at + 8).min(doc.len())..]),
            };
            let t0 = Instant::now();
            let mut ins = Insertion::new(&c, &left, &right).unwrap();
            let mask = ins.mask(&vocab).unwrap();
            times.push(t0.elapsed().as_secs_f64() * 1e3);
            checks.push(ins.stats().checks);
            allowed.push(mask.iter().filter(|&&x| x).count());
            let yes: Vec<usize> = (0..mask.len()).filter(|&i| mask[i]).collect();
            for _ in 0..oracle_rounds {
                let id = rng.below(tokens.len() as u64) as usize;
                assert_eq!(mask[id], oracle(&c, &left, &tokens[id], &right, &[]));
                if !yes.is_empty() {
                    let id = yes[rng.below(yes.len() as u64) as usize];
                    assert!(oracle(&c, &left, &tokens[id], &right, &[]));
                }
            }
        }
        let q = |v: &[f64], f: f64| v[((v.len() - 1) as f64 * f) as usize];
        times.sort_by(f64::total_cmp);
        checks.sort_unstable();
        allowed.sort_unstable();
        if !loop_only {
            eprintln!(
            "{name}: mask mean {:.2} ms, median {:.2} ms, p90 {:.2} ms, max {:.1} ms; checks median {} max {}; allowed median {} max {}",
            times.iter().sum::<f64>() / times.len() as f64,
            q(&times, 0.5),
            q(&times, 0.9),
            times[times.len() - 1],
            checks[checks.len() / 2],
            checks[checks.len() - 1],
            allowed[allowed.len() / 2],
            allowed[allowed.len() - 1]
        );
        }
        if loop_skipped {
            continue;
        }
        // As an autoregressive infilling loop uses masks: at every token of
        // a region (the next 48 bytes of a document, as the tokenizer
        // splits them), the mask, then the point moves past the token
        // (which the mask must allow). Charts and kept walks carry over
        // from token to token.
        let mut times = Vec::new();
        let (mut loop_checks, mut loop_implied, mut loop_kept) =
            (Vec::new(), Vec::new(), Vec::new());
        let mut rng = SplitMix64::new(11);
        for _ in 0..regions {
            let doc = &docs[rng.below(docs.len() as u64) as usize];
            let at = rng.below(doc.len() as u64 / 2 + 1) as usize;
            let end = (at + 48).min(doc.len());
            let left = Partial::new().text(&doc[..at]);
            let right = Partial::new().hole().text(&doc[end..]);
            // As autoregressive infilling makes its points.
            let mut ins = Insertion::new(&c, &left, &right).unwrap().expecting_many();
            let ids = tok.encode(&doc[at..end]).unwrap();
            let bytes: Vec<u8> = ids
                .iter()
                .flat_map(|&id| tokens[id as usize].clone())
                .collect();
            // Only documents of the grammar, split into tokens exactly.
            if bytes != doc[at..end] || !c.check(&Partial::new().text(doc)).unwrap() {
                continue;
            }
            for id in ids {
                let t0 = Instant::now();
                let before = ins.stats();
                let mask = ins.mask(&vocab).unwrap();
                times.push(t0.elapsed().as_secs_f64() * 1e3);
                let after = ins.stats();
                loop_checks.push(after.checks - before.checks);
                loop_implied.push(after.implied - before.implied);
                loop_kept.push(after.rows_kept - before.rows_kept);
                assert!(
                    mask[id as usize],
                    "{name}: the document's own token {id} refused"
                );
                ins.advance(&tokens[id as usize]);
            }
        }
        times.sort_by(f64::total_cmp);
        loop_checks.sort_unstable();
        loop_implied.sort_unstable();
        let kept_many = loop_kept.iter().filter(|&&k| k > 50).count();
        let kept_all: usize = loop_kept.iter().sum();
        eprintln!(
            "{name}: in a loop, {} masks: mean {:.3} ms, median {:.3} ms, p90 {:.3} ms, max {:.1} ms; checks median {} max {}; implied median {}; {kept_many} masks with over 50 rows kept from earlier points, {kept_all} rows in all",
            times.len(),
            times.iter().sum::<f64>() / times.len() as f64,
            q(&times, 0.5),
            q(&times, 0.9),
            times[times.len() - 1],
            loop_checks[loop_checks.len() / 2],
            loop_checks[loop_checks.len() - 1],
            loop_implied[loop_implied.len() / 2],
        );
    }
}

/// Small grammars built to stress maximal munch, each with a small
/// alphabet of bytes.
fn small_cases() -> [(&'static str, &'static [u8]); 4] {
    [
        // Keywords inside identifiers, ignored spaces.
        (
            r#"
            start: (KW "(" ID ")")*
            KW: "if"
            ID: /[a-z]+/
            %ignore " "
            "#,
            &b"if() "[..],
        ),
        // A lexeme that is a prefix of a longer one (maximal munch decides).
        (
            r#"
            start: (A B)*
            A: "a"
            B: "ab" | "b"
            "#,
            &b"ab"[..],
        ),
        // Comments (ignored) that a hole can open and close.
        (
            r#"
            start: "x" ("," "x")*
            COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
            %ignore COMMENT
            "#,
            &b"x,/*"[..],
        ),
        // Numbers that may go on (`1` then `.5`).
        (
            r#"
            start: "[" NUM ("," NUM)* "]"
            NUM: /[0-9]+(\.[0-9]+)?/
            "#,
            &b"[1.,]"[..],
        ),
    ]
}

/// An insertion point answers on after a search or a growth of the chart
/// of the text before it ran out of the work budget, and every answer it
/// gives is a full check's. A row's terminals grow that chart on the kept
/// layers of their first ones: before a hole the searches run out first,
/// before fixed text the growths of long runs do (after putting back the
/// layers of a shorter run).
#[test]
fn answers_after_running_out_of_budget_are_full_checks() {
    use cdiff::Config;
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let full = Constraint::compile(&g).unwrap();
    let left = Partial::new().text(r#"{"a": [1, "#);
    // A run of openings after a shorter one: the long one grows on the
    // short one's layers; then short rows again.
    let tokens: [&[u8]; 10] = [
        b"[[",
        b"[[[[[[[[[[[[[[[[[[[[[[[[",
        b"1",
        b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
        b"]",
        b"[1,",
        b"[[[[",
        b"\"x\"]",
        b"{",
        b"}",
    ];
    for right in [Partial::new().hole(), Partial::new().text("]}")] {
        let (mut errors, mut answers) = (0, 0);
        // Answers after a growth ran out (the chart of `left` was built).
        let mut after_growth = 0;
        let mut budget = 40u64;
        while budget < 40_000 {
            let config = Config {
                budget,
                ..Config::default()
            };
            let c = Constraint::with_config(&g, config).unwrap();
            let mut at = Insertion::new(&c, &left, &right).unwrap();
            let (mut built, mut grew_out) = (false, false);
            for t in tokens {
                match at.allows(t) {
                    Ok(ok) => {
                        answers += 1;
                        after_growth += usize::from(grew_out);
                        built = true;
                        let want = oracle(&full, &left, t, &right, &[]);
                        assert_eq!(ok, want, "budget {budget}, {t:?} before {right:?}");
                    }
                    Err(e) => {
                        errors += 1;
                        grew_out |= built && e.to_string().contains("the chart of the text before");
                    }
                }
            }
            budget = budget * 5 / 4;
        }
        // The budgets reach both sides of what the answers cost.
        assert!(
            errors > 0 && answers > 0,
            "{errors} errors, {answers} answers"
        );
        if right.n_holes() == 0 {
            assert!(after_growth > 0, "no answer after a growth ran out");
        }
    }
}

/// The first `n` shipped C++ programs longer than `min_len` bytes.
fn cpp_docs(min_len: usize, n: usize) -> Vec<Vec<u8>> {
    let (_, rec) = common::cpp::compiled();
    common::cpp::programs(&rec)
        .into_iter()
        .filter(|p| p.text.len() > min_len)
        .take(n)
        .map(|p| p.text.into_bytes())
        .collect()
}

/// The automaton of the text after a point is made for the lexer states
/// the constraint learned, then once per state it was not made for, then
/// for every state: whichever answers, every token is answered as a full
/// check answers it, at the point that learns the states and at the
/// points after it on the same constraint.
#[test]
fn tails_for_learned_states_answer_as_checks() {
    let docs = cpp_docs(120, 4);
    let mut rng = SplitMix64::new(17);
    let tokens = vocabulary(&docs, 400, &mut rng);
    let vocab = Vocabulary::new(&tokens);
    // Directly before the rest (where the lexer state an insertion leaves
    // decides most answers), and before a hole and the rest; a constraint
    // that has learned nothing yet for each.
    for hole in [false, true] {
        let c = Constraint::compile(&common::cpp::grammar()).unwrap();
        let mut tails = Vec::new();
        for doc in &docs {
            let at = doc.len() / 2;
            let left = Partial::new().text(&doc[..at]);
            let right = match hole {
                true => Partial::new().hole().text(&doc[at + 4..]),
                false => Partial::new().text(&doc[at..]),
            };
            let (ins, _) = assert_mask_is_checks(&c, &left, &right, &tokens, &vocab);
            tails.push(ins.stats().tails);
        }
        // The first point made its automaton for the one state learned,
        // four of one state each, then one for every state.
        assert!(tails[0] >= 6, "hole {hole}: tails made: {tails:?}");
    }
}

/// Points in one file, at random places, each moving over its region as an
/// autoregressive loop does (as an editor asks for completions, or the
/// regions of one template are filled one after another): a point takes
/// the constraint's kept chart of the longest text before an earlier point
/// (where it was built, or where that point was dropped after moving) that
/// its own starts with, and grows it by the rest; and it answers from the
/// kept automata of the texts after earlier points (see
/// `kept_tails_answer_as_checks`). Every answer equals a full check, and a
/// constraint that keeps no chart and no automaton answers the same.
#[test]
fn kept_charts_answer_as_checks() {
    let docs = cpp_docs(200, 3);
    let g = common::cpp::grammar();
    let c = Constraint::compile(&g).unwrap();
    let none = cdiff::Config {
        kept_charts: 0,
        kept_tails: 0,
        ..cdiff::Config::default()
    };
    let off = Constraint::with_config(&g, none).unwrap();
    let mut rng = SplitMix64::new(23);
    let tokens = vocabulary(&docs, 200, &mut rng);
    let (mut kept, mut bounded) = (0, 0);
    for doc in &docs {
        for _ in 0..6 {
            let p = rng.below(doc.len() as u64 - 30) as usize;
            let end = p + 8 + rng.below(12) as usize;
            let left = Partial::new().text(&doc[..p]);
            let right = Partial::new().hole().text(&doc[end..]);
            let mut at = Insertion::new(&c, &left, &right).unwrap().expecting_many();
            let mut plain = Insertion::new(&off, &left, &right)
                .unwrap()
                .expecting_many();
            let mut q = p;
            while q < end {
                let n = (1 + rng.below(3) as usize).min(end - q);
                let own = &doc[q..q + n];
                let before = at.left().clone();
                let mut asked = vec![own.to_vec()];
                for _ in 0..3 {
                    asked.push(tokens[rng.below(tokens.len() as u64) as usize].clone());
                }
                for t in &asked {
                    let want = oracle(&c, &before, t, &right, &[]);
                    assert_eq!(at.allows(t).unwrap(), want, "{t:?} after {before:?}");
                    assert_eq!(plain.allows(t).unwrap(), want, "{t:?} after {before:?}");
                }
                at.advance(own);
                plain.advance(own);
                q += n;
            }
            kept += at.stats().kept_charts;
            bounded += at.stats().bounded;
            assert_eq!(plain.stats().kept_charts, 0);
            assert_eq!(plain.stats().bounded, 0);
        }
    }
    assert!(kept >= 12, "{kept} of 18 points grew a kept chart");
    assert!(bounded >= 8, "{bounded} rows answered by bounds");
}

/// Points whose text after them begins with a hole, `□ · S`, one after
/// another in one constraint: a point answers from the constraint's kept
/// automata of `□` alone (what that refuses, the point refuses) and of a
/// longer kept text `□ · X · S` (what that allows, the point allows: the
/// hole can hold `X` too), and takes an earlier point's automata of its
/// own `S`. Every answer equals a full check on small grammars where `S`
/// decides answers (nesting the text after the hole must close) or lexing
/// does, and answers came from the bounds (C++: see
/// `kept_charts_answer_as_checks`).
#[test]
fn kept_tails_answer_as_checks() {
    let nested: [(&str, &[u8]); 2] = [
        (r#"start: "(" start ")" | "x""#, b"()x"),
        (
            r#"
            start: "[" (start ("," start)*)? "]" | NUM
            NUM: /[0-9]+/
            "#,
            b"[],1",
        ),
    ];
    let (mut bounded, mut same) = (0, 0);
    let config = cdiff::Config {
        kept_tails_from: 0,
        ..cdiff::Config::default()
    };
    for (k, (src, alphabet)) in nested.into_iter().chain(small_cases()).enumerate() {
        let g = Grammar::from_lark(src, None).unwrap();
        let c = Constraint::with_config(&g, config.clone()).unwrap();
        let words = all_words(alphabet, 2);
        let mut rng = SplitMix64::new(300 + k as u64);
        for _ in 0..80 {
            let mut left = Partial::new().text(random_text(&mut rng, alphabet, 5));
            let right = Partial::new()
                .hole()
                .text(random_text(&mut rng, alphabet, 6));
            let mut at = Insertion::new(&c, &left, &right).unwrap().expecting_many();
            for step in 0..2 {
                for w in &words {
                    let want = oracle(&c, &left, w, &right, &[]);
                    assert_eq!(at.allows(w).unwrap(), want, "{k}: {left:?} {w:?} {right:?}");
                }
                if step == 0 {
                    let w = &words[rng.below(words.len() as u64) as usize];
                    at.advance(w);
                    left.push_text(w);
                }
            }
            bounded += at.stats().bounded;
            same += at.stats().kept_tails;
        }
    }
    assert!(bounded > 100, "{bounded} rows answered by bounds");
    assert!(
        same > 10,
        "{same} points took kept automata of their text after them"
    );
}

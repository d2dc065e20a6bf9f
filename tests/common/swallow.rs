//! An independent measure of what a completion swallows, for the witness
//! tests: the fixed bytes of a partial output read by a lexeme that began
//! in a fill (lexed by the recognizer, which shares no code with the
//! engine's lexer automaton).
#![allow(dead_code)]

use cdiff::recognize::Recognizer;
use cdiff::{Partial, Segment};

/// The fixed bytes of `p` inside lexemes of the filled text that start in
/// a fill (`None`: the filled text does not lex).
pub fn swallowed(rec: &Recognizer, p: &Partial, fills: &[Vec<u8>]) -> Option<usize> {
    let text = p.fill(fills).ok()?;
    let mut from_fill = Vec::with_capacity(text.len());
    let mut holes = fills.iter();
    for s in p.segments() {
        match s {
            Segment::Text(t) => from_fill.extend(t.iter().map(|_| false)),
            Segment::Hole => from_fill.extend(holes.next()?.iter().map(|_| true)),
        }
    }
    let lexemes = rec.lex(&text)?;
    Some(
        lexemes
            .iter()
            .filter(|l| from_fill[l.start])
            .map(|l| (l.start..l.end).filter(|&i| !from_fill[i]).count())
            .sum(),
    )
}

/// Every way of reading `text` as `p` with its holes filled: the fills,
/// one list per way.
pub fn alignments(p: &Partial, text: &[u8]) -> Vec<Vec<Vec<u8>>> {
    fn go(segs: &[Segment], text: &[u8], fills: &mut Vec<Vec<u8>>, out: &mut Vec<Vec<Vec<u8>>>) {
        match segs.first() {
            None => {
                if text.is_empty() {
                    out.push(fills.clone());
                }
            }
            Some(Segment::Text(t)) => {
                if text.starts_with(t) {
                    go(&segs[1..], &text[t.len()..], fills, out);
                }
            }
            Some(Segment::Hole) => {
                for n in 0..=text.len() {
                    fills.push(text[..n].to_vec());
                    go(&segs[1..], &text[n..], fills, out);
                    fills.pop();
                }
            }
        }
    }
    let mut out = Vec::new();
    go(p.segments(), text, &mut Vec::new(), &mut out);
    out
}

//! Lexing at one point of a partial output: what bytes inserted there do.
//!
//! For a partial output split as `left · s · right`, where `s` are bytes
//! inserted at one point (a token proposed by a decoder), the token automaton
//! of the whole ([`super::TokenNfa`]) passes through that point in one of the
//! lexer configurations `(|left|, l)`. Every word it accepts is
//! `u · τ · v`, where `u` leads from the start to some `(|left|, l₀)` (it
//! depends on `left` alone), `τ` is the sequence of terminal sets emitted
//! while `s` is read from `l₀` to some `l₁`, and `v` leads from
//! `(|left| + |s|, l₁)` to the end (it depends on `right` alone). So the
//! language — and with it completability — is a function of the *relation*
//! `{(l₀, τ, l₁)}` of `s`: two insertions with the same relation are both
//! completable or both not. [`Point`] computes that relation byte by byte;
//! [`crate::mask`] memoises checks on it and walks a vocabulary trie with it.
//!
//! The relation follows the token automaton's construction exactly: at each
//! position a configuration may end its lexeme (emitting its terminal set,
//! or nothing for an ignored one) and must then read the byte; emission at
//! the position after `s` belongs to `right`'s side (it depends on `l₁`
//! only). The lexer states `l₀` at the point ([`Point::after`]) are
//! computed by running the lexer forwards over `left` (inside a hole: every
//! state reachable by bytes, skips and emissions); extra states that the
//! automaton would not reach only add rows that lead nowhere, so they never
//! make two different languages look equal.
//!
//! Cost: building the point, `O(|left| × live states)`; reading one byte,
//! `O(rows)`, and rows are one or two per lexer state at the point in
//! practice (a lexeme that may end or go on).

use super::build::{Lexer, LDEAD};
use super::tokens::ones;
use crate::budget::Budget;
use crate::error::Result;
use crate::hash::FxMap;
use crate::partial::{Partial, Segment};

/// A row of the relation: (index of `l₀` among the point's states, id of
/// the emitted sequence `τ`, current lexer state).
pub(crate) type Row = (u32, u32, u32);

/// The lexer states at an insertion point and the emitted sequences seen so
/// far (interned, so a row is three integers and equal sequences have equal
/// ids).
#[derive(Clone, Debug)]
pub(crate) struct Point {
    /// The lexer states `l₀` at the point, sorted.
    states: Vec<u32>,
    /// `(parent sequence, terminal-set id)` → sequence id; 0 is `ε`.
    seqs: FxMap<(u32, u32), u32>,
    /// Sequence id `k + 1` → `(parent sequence, terminal-set id)`.
    parents: Vec<(u32, u32)>,
}

impl Point {
    /// The point after `left`, spending one unit of `budget` per lexer
    /// state visited.
    pub(crate) fn after(lx: &Lexer, left: &Partial, budget: &mut Budget) -> Result<Point> {
        let mut cur: Vec<u32> = vec![lx.start];
        let mut next: Vec<u32> = Vec::new();
        for seg in left.segments() {
            match seg {
                Segment::Text(bytes) => {
                    for &b in bytes {
                        budget.spend(cur.len() as u64 + 1)?;
                        next.clear();
                        for &l in &cur {
                            for m in [l, lx.emit[l as usize]] {
                                if m == LDEAD {
                                    continue;
                                }
                                let n = lx.next(m, b);
                                if n != LDEAD {
                                    next.push(n);
                                }
                            }
                        }
                        next.sort_unstable();
                        next.dedup();
                        std::mem::swap(&mut cur, &mut next);
                    }
                }
                Segment::Hole => {
                    let w = lx.words;
                    let mut bits = vec![0u64; w];
                    let mut todo: Vec<u32> = cur.clone();
                    while let Some(l) = todo.pop() {
                        if bits[l as usize / 64] & (1 << (l % 64)) != 0 {
                            continue;
                        }
                        budget.spend(w as u64)?;
                        let before = bits.clone();
                        for (x, c) in bits.iter_mut().zip(lx.hole_closure(l)) {
                            *x |= c;
                        }
                        // Newly reached states may end a lexeme inside the
                        // hole and start another.
                        for m in
                            ones(&bits).filter(|&m| before[m as usize / 64] & (1 << (m % 64)) == 0)
                        {
                            let e = lx.emit[m as usize];
                            if e != LDEAD && bits[e as usize / 64] & (1 << (e % 64)) == 0 {
                                todo.push(e);
                            }
                        }
                    }
                    cur = ones(&bits).collect();
                }
            }
        }
        Ok(Point {
            states: cur,
            seqs: FxMap::default(),
            parents: Vec::new(),
        })
    }

    /// The point reached by reading `rows`' bytes: its states are the
    /// current states of `rows` (the relation's `l₁`).
    pub(crate) fn advance(&self, rows: &[Row]) -> Point {
        let mut states: Vec<u32> = rows.iter().map(|r| r.2).collect();
        states.sort_unstable();
        states.dedup();
        Point::from_states(states)
    }

    /// The point whose lexer states are `states` (sorted, no duplicates),
    /// no sequence seen yet.
    pub(crate) fn from_states(states: Vec<u32>) -> Point {
        Point {
            states,
            seqs: FxMap::default(),
            parents: Vec::new(),
        }
    }

    /// The lexer state `l₀` of index `i` at the point.
    pub(crate) fn state(&self, i: u32) -> u32 {
        self.states[i as usize]
    }

    /// The terminal-set ids of emitted sequence `seq`, in order (into
    /// `out`, cleared first).
    pub(crate) fn sequence(&self, mut seq: u32, out: &mut Vec<u32>) {
        out.clear();
        while seq != 0 {
            let (parent, set) = self.parents[seq as usize - 1];
            out.push(set);
            seq = parent;
        }
        out.reverse();
    }

    /// The emitted sequence `seq` without its last set (`seq` is not `ε`).
    pub(crate) fn prefix(&self, seq: u32) -> u32 {
        self.parents[seq as usize - 1].0
    }

    /// The lexer states `l₀` at the point, sorted.
    pub(crate) fn states(&self) -> &[u32] {
        &self.states
    }

    /// The id of the emitted sequence `sets` (terminal-set ids, in order),
    /// interned here.
    pub(crate) fn intern_sequence(&mut self, sets: &[u32]) -> u32 {
        let mut seq = 0;
        for &set in sets {
            let parent = seq;
            let fresh = self.seqs.len() as u32 + 1;
            seq = *self.seqs.entry((parent, set)).or_insert(fresh);
            if seq == fresh {
                self.parents.push((parent, set));
            }
        }
        seq
    }

    /// The number of lexer states at the point.
    pub(crate) fn width(&self) -> usize {
        self.states.len()
    }

    /// The relation of the empty insertion, written into `out`.
    pub(crate) fn start(&self, out: &mut Vec<Row>) {
        out.clear();
        out.extend(
            self.states
                .iter()
                .enumerate()
                .map(|(i, &l)| (i as u32, 0, l)),
        );
    }

    /// The relation of `bytes` read from the point into `rows` (its rows
    /// after the last byte; empty once every lexing died), `next` scratch.
    pub(crate) fn read(
        &mut self,
        lx: &Lexer,
        bytes: &[u8],
        rows: &mut Vec<Row>,
        next: &mut Vec<Row>,
    ) {
        self.start(rows);
        for &b in bytes {
            if rows.is_empty() {
                break;
            }
            self.step(lx, rows, b, next);
            std::mem::swap(rows, next);
        }
    }

    /// The relation after one more byte `b`: each row may end its lexeme
    /// (a terminal set is emitted, or an ignored lexeme skipped), then reads
    /// `b`. Written into `out`, sorted and without duplicates; empty when
    /// every lexing dies.
    pub(crate) fn step(&mut self, lx: &Lexer, rows: &[Row], b: u8, out: &mut Vec<Row>) {
        out.clear();
        for &(i, seq, l) in rows {
            let n = lx.next(l, b);
            if n != LDEAD {
                out.push((i, seq, n));
            }
            let e = lx.emit[l as usize];
            if e == LDEAD {
                continue;
            }
            let n = lx.next(e, b);
            if n == LDEAD {
                continue;
            }
            if lx.skippable[l as usize] {
                out.push((i, seq, n));
            }
            if !lx.emits(l).is_empty() {
                let set = lx.emit_terms[l as usize];
                let fresh = self.seqs.len() as u32 + 1;
                let id = *self.seqs.entry((seq, set)).or_insert(fresh);
                if id == fresh {
                    self.parents.push((seq, set));
                }
                out.push((i, id, n));
            }
        }
        if out.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
    }
}

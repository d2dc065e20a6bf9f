//! From a terminal sequence accepted by a partial output's [`TokenNfa`](super::TokenNfa)
//! back to bytes: short hole fills whose maximal-munch lexing is that sequence.
//!
//! Weighted A* search (unit moves, estimate: one move per terminal still to
//! emit, per text byte still to read and per hole still to leave, weighted
//! by [`WEIGHT`]), constrained to the witness path's spans,
//! over `(position, lexer state, terminals emitted)`:
//! chunk bytes are forced, hole bytes are free (one representative per byte
//! class, readable ASCII preferred), ignored lexemes may be skipped and each
//! emission must match the next terminal. States are marked when first
//! queued, and the estimate is weighted, so the fill found is short (at most
//! twice the fewest moves, within a few percent of them in practice) while
//! far fewer states are explored than breadth-first. Inside holes the visited set is a dense
//! array per `(hole, terminals emitted)` — the search touches most lexer
//! states there — and a hash set elsewhere. Cost: bounded by the budget.

use super::build::{Lexer, LDEAD};
use super::tokens::{Layout, Span};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::Result;
use crate::hash::{FxMap, FxSet};
use crate::partial::Partial;

const NONE: u32 = u32::MAX;

/// The weight of the estimate in the search's priority (see [`fills_for`]).
const WEIGHT: u32 = 2;

/// One node of the search: where, in which lexer state, how many terminals
/// emitted, how it was reached (parent index and the hole byte read, if any).
struct Node {
    depth: u32,
    p: u32,
    l: u32,
    i: u32,
    parent: u32,
    byte: Option<u8>,
}

/// Visited sets: dense per `(hole position, i)` block, hashed in chunks.
struct Visited {
    n_states: usize,
    blocks: FxMap<(u32, u32), Vec<bool>>,
    chunk: FxSet<(u32, u32, u32)>,
    ceiling: Ceiling,
}

impl Visited {
    /// Marks `(p, l, i)`; true if it was not visited before.
    fn insert(&mut self, hole: bool, p: u32, l: u32, i: u32) -> Fits<bool> {
        if hole {
            let seen = std::mem::replace(&mut self.block(p, i)?[l as usize], true);
            Ok(!seen)
        } else {
            self.ceiling.insert(&mut self.chunk, (p, l, i))
        }
    }

    /// The dense block of hole position `p` after `i` terminals.
    fn block(&mut self, p: u32, i: u32) -> Fits<&mut Vec<bool>> {
        let n = self.n_states;
        if !self.blocks.contains_key(&(p, i)) {
            self.ceiling.room_in_map(&self.blocks)?;
            self.ceiling.admit(n)?;
        }
        Ok(self.blocks.entry((p, i)).or_insert_with(|| vec![false; n]))
    }
}

/// Finds hole fills such that the filled text lexes to `word`; `None` if none
/// exists. `at[i]` is the span of positions where `word[i]` may be emitted
/// (the span of the [`TokenNfa`](super::TokenNfa) state it leaves on the
/// witness path): the search emits it nowhere else, so each position is
/// visited with the few terminal counts whose spans cover it instead of all
/// of them (which made the search quadratic on canvases with many holes).
pub(crate) fn fills_for(
    lexer: &Lexer,
    partial: &Partial,
    word: &[u32],
    at: &[Span],
    budget: &mut Budget,
) -> Result<Option<Vec<Vec<u8>>>> {
    debug_assert_eq!(word.len(), at.len());
    let layout = Layout::new(partial)?;
    let end = layout.end();
    let is_hole = |p: u32| p < end && layout.is_hole(p);
    let ceiling = budget.ceiling();
    let mut visited = Visited {
        n_states: lexer.len(),
        blocks: FxMap::default(),
        chunk: FxSet::default(),
        ceiling,
    };
    let mut nodes: Vec<Node> = vec![Node {
        depth: 0,
        p: 0,
        l: lexer.start,
        i: 0,
        parent: NONE,
        byte: None,
    }];
    visited.insert(is_hole(0), 0, lexer.start, 0)?;
    // Weighted A* with the admissible, consistent estimate "one move per
    // terminal still to emit, per text byte still to read and per hole still
    // to leave" (each move lowers it by at most one; only hole bytes and
    // skipped lexemes do not), times WEIGHT. Counting the text bytes matters
    // on canvases with many holes: without them every way of emitting
    // terminals early, in an earlier hole, ties with the right one and the
    // search visits (position × terminals emitted) pairs. The weight: plain
    // A* must rule out every cheaper detour before it accepts a fill with a
    // few hole bytes, which on a C++ canvas whose witness comments out
    // everything between its first and last holes meant trying a few bytes
    // in each of 130 holes (13 ms); weighted, 0.5 ms. The fills found were
    // 0.2–16 % longer on average (1–3 holes and canvases of JSON, C++,
    // SMILES), never more than WEIGHT times the fewest moves. With the
    // weight f may decrease along a move: the cursor moves back then.
    ceiling.admit((end as usize + 1) * 4)?;
    let mut text_after = vec![0u32; end as usize + 1];
    for q in (0..end).rev() {
        text_after[q as usize] = text_after[q as usize + 1] + 1;
    }
    // Past the span of the next terminal to emit, a node is dead.
    let too_late = |p: u32, i: u32| at.get(i as usize).is_some_and(|&(_, last)| p > last);
    let remaining =
        |p: u32, i: u32| word.len() as u32 - i.min(word.len() as u32) + text_after[p as usize];
    let first = (WEIGHT * remaining(0, 0)) as usize;
    ceiling.admit((first + 1).saturating_mul(std::mem::size_of::<Vec<u32>>()))?;
    let mut buckets: Vec<Vec<u32>> = vec![Vec::new(); first + 1];
    buckets[(WEIGHT * remaining(0, 0)) as usize].push(0);
    let cur = std::cell::Cell::new(0usize);
    let goal = loop {
        while cur.get() < buckets.len() && buckets[cur.get()].is_empty() {
            cur.set(cur.get() + 1);
        }
        let Some(me) = buckets.get_mut(cur.get()).and_then(Vec::pop) else {
            return Ok(None);
        };
        budget.spend(1)?;
        let (p, l, i, depth) = {
            let n = &nodes[me as usize];
            (n.p, n.l, n.i, n.depth)
        };
        if p == end && lexer.is_fresh(l) && i as usize == word.len() {
            break me;
        }
        let child_f = |p2: u32, i2: u32| {
            let f = (depth + 1 + WEIGHT * remaining(p2, i2)) as usize;
            if f < cur.get() {
                cur.set(f);
            }
            f
        };
        let mut push = |nodes: &mut Vec<Node>,
                        buckets: &mut Vec<Vec<u32>>,
                        p: u32,
                        l: u32,
                        i: u32,
                        byte: Option<u8>| {
            if !too_late(p, i) && visited.insert(is_hole(p), p, l, i)? {
                let f = child_f(p, i);
                if buckets.len() <= f {
                    buckets.resize_with(f + 1, Vec::new);
                }
                ceiling.push(&mut buckets[f], nodes.len() as u32)?;
                let node = Node {
                    depth: depth + 1,
                    p,
                    l,
                    i,
                    parent: me,
                    byte,
                };
                ceiling.push(nodes, node)?;
            }
            Fits::Ok(())
        };
        let e = lexer.emit[l as usize];
        if e != LDEAD {
            if let Some(&t) = word.get(i as usize) {
                let (first, last) = at[i as usize];
                if (first..=last).contains(&p) && lexer.emits(l).binary_search(&t).is_ok() {
                    push(&mut nodes, &mut buckets, p, e, i + 1, None)?;
                }
            }
            if lexer.skippable[l as usize] {
                push(&mut nodes, &mut buckets, p, e, i, None)?;
            }
        }
        if p < end {
            if layout.is_hole(p) {
                push(&mut nodes, &mut buckets, p + 1, l, i, None)?;
                budget.spend(lexer.n_classes() as u64)?;
                // Byte steps stay in this hole's (p, i) block: look it up once.
                let block = visited.block(p, i)?;
                for c in 0..lexer.n_classes() {
                    let n = lexer.next_class(l, c);
                    if n == LDEAD || std::mem::replace(&mut block[n as usize], true) {
                        continue;
                    }
                    // A state reached no later with fewer munch checkers can
                    // do all this one can, as soon: skip this one.
                    if lexer.dominators[n as usize]
                        .iter()
                        .any(|&d| block[d as usize])
                    {
                        continue;
                    }
                    let f = child_f(p, i);
                    if buckets.len() <= f {
                        buckets.resize_with(f + 1, Vec::new);
                    }
                    ceiling.push(&mut buckets[f], nodes.len() as u32)?;
                    let node = Node {
                        depth: depth + 1,
                        p,
                        l: n,
                        i,
                        parent: me,
                        byte: Some(lexer.class_rep[c]),
                    };
                    ceiling.push(&mut nodes, node)?;
                }
            } else {
                let n = lexer.next(l, layout.byte(p));
                if n != LDEAD {
                    push(&mut nodes, &mut buckets, p + 1, n, i, None)?;
                }
            }
        }
    };
    // Walk back, collecting hole bytes per hole position.
    let mut fills: Vec<Vec<u8>> = vec![Vec::new(); partial.n_holes()];
    let mut at = goal;
    while at != NONE {
        let n = &nodes[at as usize];
        if let Some(b) = n.byte {
            fills[layout.hole_of(n.p)].push(b);
        }
        at = n.parent;
    }
    for f in &mut fills {
        f.reverse();
    }
    Ok(Some(fills))
}

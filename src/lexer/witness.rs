//! From a terminal sequence accepted by a partial output's [`TokenNfa`](super::TokenNfa)
//! back to bytes: the shortest hole fills whose maximal-munch lexing is that sequence.
//!
//! Breadth-first search over `(position, lexer state, terminals emitted)`:
//! chunk bytes are forced, hole bytes are free (one representative per byte
//! class, readable ASCII preferred), ignored lexemes may be skipped and each
//! emission must match the next terminal. The first goal reached has the
//! fewest moves, hence short fills. Inside holes the visited set is a dense
//! array per `(hole, terminals emitted)` — the search touches most lexer
//! states there — and a hash set elsewhere. Cost: bounded by the budget.

use super::build::{Lexer, LDEAD};
use super::tokens::Layout;
use crate::budget::Budget;
use crate::error::Result;
use crate::hash::{FxMap, FxSet};
use crate::partial::Partial;

const NONE: u32 = u32::MAX;

/// One node of the search: where, in which lexer state, how many terminals
/// emitted, how it was reached (parent index and the hole byte read, if any).
struct Node {
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
}

impl Visited {
    /// Marks `(p, l, i)`; true if it was not visited before.
    fn insert(&mut self, hole: bool, p: u32, l: u32, i: u32) -> bool {
        if hole {
            let n = self.n_states;
            let block = self.blocks.entry((p, i)).or_insert_with(|| vec![false; n]);
            let seen = std::mem::replace(&mut block[l as usize], true);
            !seen
        } else {
            self.chunk.insert((p, l, i))
        }
    }
}

/// Finds hole fills such that the filled text lexes to `word`; `None` if none exists.
pub(crate) fn fills_for(
    lexer: &Lexer,
    partial: &Partial,
    word: &[u32],
    budget: &mut Budget,
) -> Result<Option<Vec<Vec<u8>>>> {
    let layout = Layout::new(partial)?;
    let end = layout.end();
    let is_hole = |p: u32| p < end && layout.is_hole(p);
    let mut visited = Visited {
        n_states: lexer.len(),
        blocks: FxMap::default(),
        chunk: FxSet::default(),
    };
    let mut nodes: Vec<Node> = vec![Node {
        p: 0,
        l: lexer.start,
        i: 0,
        parent: NONE,
        byte: None,
    }];
    visited.insert(is_hole(0), 0, lexer.start, 0);
    let mut head = 0usize;
    let goal = loop {
        if head == nodes.len() {
            return Ok(None);
        }
        budget.spend(1)?;
        let (p, l, i) = (nodes[head].p, nodes[head].l, nodes[head].i);
        let me = head as u32;
        head += 1;
        if p == end && lexer.is_fresh(l) && i as usize == word.len() {
            break me;
        }
        let mut push = |nodes: &mut Vec<Node>, p: u32, l: u32, i: u32, byte: Option<u8>| {
            if visited.insert(is_hole(p), p, l, i) {
                nodes.push(Node {
                    p,
                    l,
                    i,
                    parent: me,
                    byte,
                });
            }
        };
        let e = lexer.emit[l as usize];
        if e != LDEAD {
            if let Some(&t) = word.get(i as usize) {
                if lexer.emits(l).binary_search(&t).is_ok() {
                    push(&mut nodes, p, e, i + 1, None);
                }
            }
            if lexer.skippable[l as usize] {
                push(&mut nodes, p, e, i, None);
            }
        }
        if p < end {
            if layout.is_hole(p) {
                push(&mut nodes, p + 1, l, i, None);
                budget.spend(lexer.n_classes() as u64)?;
                // Byte steps stay in this hole's (p, i) block: look it up once.
                let n_states = visited.n_states;
                let block = visited
                    .blocks
                    .entry((p, i))
                    .or_insert_with(|| vec![false; n_states]);
                for c in 0..lexer.n_classes() {
                    let n = lexer.next_class(l, c);
                    if n != LDEAD && !std::mem::replace(&mut block[n as usize], true) {
                        nodes.push(Node {
                            p,
                            l: n,
                            i,
                            parent: me,
                            byte: Some(lexer.class_rep[c]),
                        });
                    }
                }
            } else {
                let n = lexer.next(l, layout.byte(p));
                if n != LDEAD {
                    push(&mut nodes, p + 1, n, i, None);
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

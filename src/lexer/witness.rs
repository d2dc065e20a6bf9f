//! From a terminal sequence accepted by a partial output's [`TokenNfa`](super::TokenNfa)
//! back to bytes: the shortest hole fills whose maximal-munch lexing is that sequence.
//!
//! Breadth-first search over `(configuration, terminals emitted)`: chunk bytes
//! are forced, hole bytes are free (one representative per byte class, readable
//! ASCII preferred), ignored lexemes may be skipped and each emission must match
//! the next terminal. The first goal reached has the fewest moves, hence short
//! fills. Cost: bounded by the budget.

use super::build::{Lexer, LDEAD};
use super::tokens::Layout;
use crate::budget::Budget;
use crate::error::Result;
use crate::hash::FxMap;
use crate::partial::Partial;

/// Finds hole fills such that the filled text lexes to `word`; `None` if none exists.
pub(crate) fn fills_for(
    lexer: &Lexer,
    partial: &Partial,
    word: &[u32],
    budget: &mut Budget,
) -> Result<Option<Vec<Vec<u8>>>> {
    let layout = Layout::new(partial)?;
    let end = layout.end();
    // Node: (position, lexer state, index in word). Parent links with the hole byte read (if any).
    type Node = (u32, u32, u32);
    let mut parent: FxMap<Node, (Node, Option<u8>)> = FxMap::default();
    let start: Node = (0, lexer.start, 0);
    let mut queue: std::collections::VecDeque<Node> = std::collections::VecDeque::new();
    parent.insert(start, (start, None));
    queue.push_back(start);
    let goal = loop {
        let Some(node) = queue.pop_front() else {
            return Ok(None);
        };
        budget.spend(1)?;
        let (p, l, i) = node;
        if p == end && lexer.is_fresh(l) && i as usize == word.len() {
            break node;
        }
        let mut succ: Vec<(Node, Option<u8>)> = Vec::new();
        let e = lexer.emit[l as usize];
        if e != LDEAD {
            if let Some(&t) = word.get(i as usize) {
                if lexer.emits(l).binary_search(&t).is_ok() {
                    succ.push(((p, e, i + 1), None));
                }
            }
            if lexer.skippable[l as usize] {
                succ.push(((p, e, i), None));
            }
        }
        if p < end {
            if layout.is_hole(p) {
                succ.push(((p + 1, l, i), None));
                for c in 0..lexer.n_classes() {
                    let n = lexer.next_class(l, c);
                    if n != LDEAD {
                        succ.push(((p, n, i), Some(lexer.class_rep[c])));
                    }
                }
            } else {
                let n = lexer.next(l, layout.byte(p));
                if n != LDEAD {
                    succ.push(((p + 1, n, i), None));
                }
            }
        }
        for (n, b) in succ {
            if let std::collections::hash_map::Entry::Vacant(v) = parent.entry(n) {
                v.insert((node, b));
                queue.push_back(n);
            }
        }
    };
    // Walk back, collecting hole bytes per hole position.
    let mut fills: Vec<Vec<u8>> = vec![Vec::new(); partial.n_holes()];
    let mut node = goal;
    while node != start {
        let (prev, b) = parent[&node];
        if let Some(b) = b {
            let h = layout.hole_of(node.0);
            fills[h].push(b);
        }
        node = prev;
    }
    for f in &mut fills {
        f.reverse();
    }
    Ok(Some(fills))
}

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
use super::tokens::{base, tagged, Layout, Span, TAG};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::Result;
use crate::hash::FxMap;
use crate::partial::Partial;

const NONE: u32 = u32::MAX;

/// The weight of the estimate in the search's priority (see [`fills_for`]).
const WEIGHT: u32 = 2;

/// One node of the search: where, in which lexer state (tagged while its
/// lexeme began in a hole), how many terminals emitted, how many text bytes
/// swallowed so far, how it was reached (parent index and the hole byte
/// read, if any).
struct Node {
    depth: u32,
    p: u32,
    l: u32,
    i: u32,
    swallowed: u32,
    parent: u32,
    byte: Option<u8>,
}

/// Visited sets, with the fewest swallowed bytes each state was queued
/// with (plus one; 0: not yet): dense per `(hole position, i)` block,
/// hashed in chunks. A state is queued again only with fewer.
struct Visited {
    n_states: usize,
    blocks: FxMap<(u32, u32), Vec<u32>>,
    chunk: FxMap<(u32, u32, u32), u32>,
    ceiling: Ceiling,
}

impl Visited {
    /// Marks `(p, l, i)` (`l` possibly tagged) as queued with `swallowed`
    /// bytes; true if it was not queued before with as few.
    fn insert(&mut self, hole: bool, p: u32, l: u32, i: u32, swallowed: u32) -> Fits<bool> {
        if hole {
            let at = slot(self.n_states, l);
            Ok(improve(&mut self.block(p, i)?[at], swallowed))
        } else {
            if !self.chunk.contains_key(&(p, l, i)) {
                self.ceiling.room_in_map(&self.chunk)?;
            }
            Ok(improve(self.chunk.entry((p, l, i)).or_insert(0), swallowed))
        }
    }

    /// The dense block of hole position `p` after `i` terminals (untagged
    /// lexer states, then tagged ones).
    fn block(&mut self, p: u32, i: u32) -> Fits<&mut Vec<u32>> {
        let n = 2 * self.n_states;
        if !self.blocks.contains_key(&(p, i)) {
            self.ceiling.room_in_map(&self.blocks)?;
            self.ceiling.admit(n * 4)?;
        }
        Ok(self.blocks.entry((p, i)).or_insert_with(|| vec![0; n]))
    }
}

/// Records `swallowed` in a visited mark (fewest plus one, 0: none); true
/// if it is fewer than before.
#[inline]
fn improve(mark: &mut u32, swallowed: u32) -> bool {
    if *mark != 0 && *mark - 1 <= swallowed {
        return false;
    }
    *mark = swallowed.saturating_add(1);
    true
}

/// Whether a visited mark says queued with at most `swallowed` bytes.
#[inline]
fn queued_with(mark: u32, swallowed: u32) -> bool {
    mark != 0 && mark - 1 <= swallowed
}

/// The index of a possibly tagged lexer state among `2 n` (untagged first).
#[inline]
fn slot(n: usize, l: u32) -> usize {
    base(l) as usize + tagged(l) as usize * n
}

/// The search's queue: nodes by fewest swallowed bytes first (one level
/// each, created as reached), then by priority `f` in a bucket queue per
/// level. Swallowed bytes never decrease along a move, so the level being
/// searched only goes up; within a level `f` may decrease along a move
/// (the estimate is weighted) and the level's cursor moves back then.
struct Queue {
    levels: Vec<Level>,
    /// The lowest level that may hold nodes.
    low: usize,
    ceiling: Ceiling,
}

#[derive(Default)]
struct Level {
    buckets: Vec<Vec<u32>>,
    cursor: usize,
    len: usize,
}

impl Queue {
    fn push(&mut self, swallowed: u32, f: usize, node: u32) -> Fits {
        let lv = swallowed as usize;
        if self.levels.len() <= lv {
            self.ceiling
                .admit((lv + 1 - self.levels.len()) * std::mem::size_of::<Level>())?;
            self.levels.resize_with(lv + 1, Level::default);
        }
        let level = &mut self.levels[lv];
        if level.buckets.len() <= f {
            self.ceiling.admit(
                (f + 1 - level.buckets.len()).saturating_mul(std::mem::size_of::<Vec<u32>>()),
            )?;
            level.buckets.resize_with(f + 1, Vec::new);
        }
        if level.len == 0 || f < level.cursor {
            level.cursor = f;
        }
        level.len += 1;
        self.low = self.low.min(lv);
        self.ceiling.push(&mut level.buckets[f], node)
    }

    fn pop(&mut self) -> Option<u32> {
        while let Some(level) = self.levels.get_mut(self.low) {
            if level.len == 0 {
                self.low += 1;
                continue;
            }
            while level.buckets[level.cursor].is_empty() {
                level.cursor += 1;
            }
            level.len -= 1;
            return level.buckets[level.cursor].pop();
        }
        None
    }
}

/// Finds hole fills such that the filled text lexes to `word`; `None` if none
/// exists. `at[i]` is the span of positions where `word[i]` may be emitted
/// (the span of the [`TokenNfa`](super::TokenNfa) state it leaves on the
/// witness path): the search emits it nowhere else, so each position is
/// visited with the few terminal counts whose spans cover it instead of all
/// of them (which made the search quadratic on canvases with many holes).
/// Of the fills it finds, it takes one that swallows the fewest text bytes
/// (read by a lexeme that began in a hole), then a short one.
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
    let n_states = lexer.len();
    let mut visited = Visited {
        n_states,
        blocks: FxMap::default(),
        chunk: FxMap::default(),
        ceiling,
    };
    let mut nodes: Vec<Node> = vec![Node {
        depth: 0,
        p: 0,
        l: lexer.start,
        i: 0,
        swallowed: 0,
        parent: NONE,
        byte: None,
    }];
    visited.insert(is_hole(0), 0, lexer.start, 0, 0)?;
    // Weighted A* with the admissible, consistent estimate "one move per
    // terminal still to emit, per text byte still to read and per hole still
    // to leave" (each move lowers it by at most one; only hole bytes and
    // skipped lexemes do not), times WEIGHT, on each level of swallowed
    // bytes in turn. Counting the text bytes matters
    // on canvases with many holes: without them every way of emitting
    // terminals early, in an earlier hole, ties with the right one and the
    // search visits (position × terminals emitted) pairs. The weight: plain
    // A* must rule out every cheaper detour before it accepts a fill with a
    // few hole bytes, which on a C++ canvas whose witness comments out
    // everything between its first and last holes meant trying a few bytes
    // in each of 130 holes (13 ms); weighted, 0.5 ms. The fills found were
    // 0.2–16 % longer on average (1–3 holes and canvases of JSON, C++,
    // SMILES), never more than WEIGHT times the fewest moves. The levels:
    // the word comes from a path that swallows as little as any (see
    // `TokenNfa::build_weighed`), and the fills must too; the fewest moves
    // come second.
    ceiling.admit((end as usize + 1) * 4)?;
    let mut text_after = vec![0u32; end as usize + 1];
    for q in (0..end).rev() {
        text_after[q as usize] = text_after[q as usize + 1] + 1;
    }
    // Past the span of the next terminal to emit, a node is dead.
    let too_late = |p: u32, i: u32| at.get(i as usize).is_some_and(|&(_, last)| p > last);
    let remaining =
        |p: u32, i: u32| word.len() as u32 - i.min(word.len() as u32) + text_after[p as usize];
    let mut queue = Queue {
        levels: Vec::new(),
        low: 0,
        ceiling,
    };
    queue.push(0, (WEIGHT * remaining(0, 0)) as usize, 0)?;
    let goal = loop {
        let Some(me) = queue.pop() else {
            return Ok(None);
        };
        budget.spend(1)?;
        let (p, l, i, depth, swallowed) = {
            let n = &nodes[me as usize];
            (n.p, n.l, n.i, n.depth, n.swallowed)
        };
        if p == end && !tagged(l) && lexer.is_fresh(l) && i as usize == word.len() {
            break me;
        }
        // Queued again since with fewer swallowed bytes: that one goes on.
        let mark = match is_hole(p) {
            true => visited.block(p, i)?[slot(n_states, l)],
            false => visited.chunk.get(&(p, l, i)).copied().unwrap_or(0),
        };
        if mark != swallowed + 1 {
            continue;
        }
        let f_of = |p2: u32, i2: u32| (depth + 1 + WEIGHT * remaining(p2, i2)) as usize;
        let mut push =
            |nodes: &mut Vec<Node>, queue: &mut Queue, p: u32, l: u32, i: u32, swallowed: u32| {
                if !too_late(p, i) && visited.insert(is_hole(p), p, l, i, swallowed)? {
                    queue.push(swallowed, f_of(p, i), nodes.len() as u32)?;
                    let node = Node {
                        depth: depth + 1,
                        p,
                        l,
                        i,
                        swallowed,
                        parent: me,
                        byte: None,
                    };
                    ceiling.push(nodes, node)?;
                }
                Fits::Ok(())
            };
        // `l` is tagged while its lexeme began in a hole: each text byte it
        // reads is swallowed.
        let (tag, l) = (l & TAG, base(l));
        let e = lexer.emit[l as usize];
        if e != LDEAD {
            if let Some(&t) = word.get(i as usize) {
                let (first, last) = at[i as usize];
                if (first..=last).contains(&p) && lexer.emits(l).binary_search(&t).is_ok() {
                    push(&mut nodes, &mut queue, p, e, i + 1, swallowed)?;
                }
            }
            if lexer.skippable[l as usize] {
                push(&mut nodes, &mut queue, p, e, i, swallowed)?;
            }
        }
        if p < end {
            if layout.is_hole(p) {
                push(&mut nodes, &mut queue, p + 1, l | tag, i, swallowed)?;
                budget.spend(lexer.n_classes() as u64)?;
                // A lexeme begun here is tagged.
                let tag = if lexer.is_fresh(l) { TAG } else { tag };
                let f = f_of(p, i);
                // Byte steps stay in this hole's (p, i) block: look it up once.
                let block = visited.block(p, i)?;
                for c in 0..lexer.n_classes() {
                    let n = lexer.next_class(l, c);
                    if n == LDEAD || !improve(&mut block[slot(n_states, n | tag)], swallowed) {
                        continue;
                    }
                    // A state reached no later with fewer munch checkers (and
                    // no more swallowed) can do all this one can, as soon:
                    // skip this one.
                    if lexer.dominators[n as usize]
                        .iter()
                        .any(|&d| queued_with(block[slot(n_states, d | tag)], swallowed))
                    {
                        continue;
                    }
                    queue.push(swallowed, f, nodes.len() as u32)?;
                    let node = Node {
                        depth: depth + 1,
                        p,
                        l: n | tag,
                        i,
                        swallowed,
                        parent: me,
                        byte: Some(lexer.class_rep[c]),
                    };
                    ceiling.push(&mut nodes, node)?;
                }
            } else {
                let n = lexer.next(l, layout.byte(p));
                if n != LDEAD {
                    let sw = swallowed + u32::from(tag != 0);
                    push(&mut nodes, &mut queue, p + 1, n | tag, i, sw)?;
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

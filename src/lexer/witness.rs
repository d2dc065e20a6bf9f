//! From a terminal sequence accepted by a partial output's [`TokenNfa`](super::TokenNfa)
//! back to bytes: short hole fills whose maximal-munch lexing is that sequence.
//!
//! Weighted A* search (unit moves, estimate: one move per terminal still to
//! emit, per text byte still to read and per hole still to leave, and in a
//! hole the terminals must be emitted in, the fewest bytes the lexer state
//! needs to emit them ([`ToEmit`]); weighted by [`WEIGHT`]), constrained to
//! the witness path's spans and to at most the text bytes the path
//! swallows (see [`TokenNfa::build_weighed`](super::TokenNfa::build_weighed)),
//! over `(position, lexer state, terminals emitted)`, the lexer state
//! tagged while its lexeme began in a hole:
//! chunk bytes are forced, hole bytes are free (one representative per byte
//! class, readable ASCII preferred), ignored lexemes may be skipped and each
//! emission must match the next terminal. States are marked when first
//! queued (again only with fewer swallowed bytes; each swallowed byte
//! costs [`SWALLOW`] moves in the priority), and the estimate is weighted,
//! so the fill found is short (at most twice the fewest moves, within a
//! few percent of them in practice) while far fewer states are explored
//! than breadth-first. Inside holes the visited set is a dense array per
//! `(hole, terminals emitted)` — the search touches most lexer states
//! there — and a hash map elsewhere. Cost: bounded by the budget.

use std::sync::OnceLock;

use super::build::{Lexer, LDEAD};
use super::tokens::{base, tagged, Layout, Rows, Span, TAG};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::Result;
use crate::hash::FxMap;
use crate::partial::Partial;

const NONE: u32 = u32::MAX;

/// The weight of the estimate in the search's priority (see [`fills_for`]).
const WEIGHT: u32 = 2;

/// What a swallowed text byte (read by a lexeme that began in a hole; see
/// `TokenNfa::build_weighed`) costs in the search's priority, in moves,
/// beyond the bound on them: small, so that a fill that must swallow is
/// not searched for behind every fill that swallows less.
const SWALLOW: usize = 2;

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
/// with (a [`Mark`]): dense per `(hole position, i)` block, hashed in
/// chunks. A state is queued again only with fewer.
struct Visited {
    n_states: usize,
    blocks: FxMap<(u32, u32), Vec<Mark>>,
    chunk: FxMap<(u32, u32, u32), Mark>,
    ceiling: Ceiling,
}

/// The fewest swallowed bytes a state was queued with, plus one (0: not
/// yet), saturating: from `Mark::MAX - 1` on, a state is queued once.
type Mark = u8;

impl Visited {
    /// Marks `(p, l, i)` (`l` possibly tagged) as queued with `swallowed`
    /// bytes; true if it was not queued before with as few.
    fn insert(&mut self, hole: bool, p: u32, l: u32, i: u32, swallowed: u32) -> Fits<bool> {
        if hole {
            let at = slot(self.n_states, l);
            Ok(improve(&mut self.block(p, i)?[at], swallowed))
        } else {
            self.ceiling.room_in_map(&self.chunk)?;
            Ok(improve(self.chunk.entry((p, l, i)).or_insert(0), swallowed))
        }
    }

    /// The dense block of hole position `p` after `i` terminals (untagged
    /// lexer states, then tagged ones).
    fn block(&mut self, p: u32, i: u32) -> Fits<&mut Vec<Mark>> {
        let n = 2 * self.n_states;
        if !self.blocks.contains_key(&(p, i)) {
            self.ceiling.room_in_map(&self.blocks)?;
            self.ceiling.admit(n)?;
        }
        Ok(self.blocks.entry((p, i)).or_insert_with(|| vec![0; n]))
    }
}

/// Records `swallowed` in a visited mark (fewest plus one, 0: none); true
/// if it is fewer than before.
#[inline]
fn improve(mark: &mut Mark, swallowed: u32) -> bool {
    let m = swallowed.saturating_add(1).min(Mark::MAX as u32) as Mark;
    if *mark != 0 && *mark <= m {
        return false;
    }
    *mark = m;
    true
}

/// Whether a visited mark says queued with at most `swallowed` bytes (or
/// saturated).
#[inline]
fn queued_with(mark: Mark, swallowed: u32) -> bool {
    mark != 0 && mark as u32 <= swallowed.saturating_add(1).min(Mark::MAX as u32)
}

/// The index of a possibly tagged lexer state among `2 n` (untagged first).
#[inline]
fn slot(n: usize, l: u32) -> usize {
    base(l) as usize + tagged(l) as usize * n
}

/// The search's queue, by priority `f`: a bucket queue below [`BUCKETS`]
/// (O(1) a node; `f` may decrease along a move, the estimate being
/// weighted, and the cursor moves back then), a binary heap above (a fill
/// that must swallow much of a long text). A bucket is a stack of nodes
/// linked through `next` (each node is queued once): no bucket allocates,
/// where a vector per bucket made one allocation per priority met — along
/// a text, nearly one per byte (7 % of a 2.3 KB file's witness).
struct Queue {
    /// Per priority: the node queued last with it (`NONE`: none).
    heads: Vec<u32>,
    /// Per node: the node queued before it with the same priority.
    next: Vec<u32>,
    cursor: usize,
    len: usize,
    heap: std::collections::BinaryHeap<std::cmp::Reverse<(usize, u32)>>,
    ceiling: Ceiling,
}

/// Priorities below this are kept in a bucket each.
const BUCKETS: usize = 1 << 18;

impl Queue {
    fn push(&mut self, f: usize, node: u32) -> Fits {
        if f >= BUCKETS {
            if self.heap.len() == self.heap.capacity() {
                let entry = std::mem::size_of::<(usize, u32)>();
                self.ceiling
                    .admit(self.heap.capacity().max(4).saturating_mul(2 * entry))?;
            }
            self.heap.push(std::cmp::Reverse((f, node)));
            return Ok(());
        }
        if self.heads.len() <= f {
            let add = f + 1 - self.heads.len();
            self.ceiling.reserve(&mut self.heads, add)?;
            self.heads.resize(f + 1, NONE);
        }
        let at = node as usize;
        if self.next.len() <= at {
            let add = at + 1 - self.next.len();
            self.ceiling.reserve(&mut self.next, add)?;
            self.next.resize(at + 1, NONE);
        }
        if self.len == 0 || f < self.cursor {
            self.cursor = f;
        }
        self.len += 1;
        self.next[at] = self.heads[f];
        self.heads[f] = node;
        Ok(())
    }

    fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return self.heap.pop().map(|std::cmp::Reverse((_, n))| n);
        }
        while self.heads[self.cursor] == NONE {
            self.cursor += 1;
        }
        self.len -= 1;
        let node = self.heads[self.cursor];
        self.heads[self.cursor] = self.next[node as usize];
        Some(node)
    }
}

/// Per terminal `t` and L-state `l`: the fewest bytes `l` reads (lexemes
/// of ignored terminals skipped on the way) before it can emit `t`
/// ([`FAR`]: never). A lower bound on the hole bytes a fill still needs
/// where `t` must be emitted before its hole is left (see [`fills_for`]),
/// and, where it is [`FAR`], the proof that a node is dead. A terminal's
/// table is a 0-1 breadth-first search backwards over the lexer's byte
/// steps (one byte each) and skips (none), made the first time a witness
/// search asks for it: O(L-states × byte classes) each (C++: 689 × 100).
#[derive(Clone, Debug)]
pub(crate) struct ToEmit {
    /// The lexer's moves backwards: row `l` holds the `(source, bytes)`
    /// moves into `l`.
    back: OnceLock<Rows<(u32, u16)>>,
    per_term: Box<[OnceLock<Box<[u16]>>]>,
}

/// No way to emit the terminal ([`ToEmit`]).
const FAR: u16 = u16::MAX;

impl ToEmit {
    /// Tables for `n_terms` terminals, none made yet.
    pub(crate) fn new(n_terms: usize) -> ToEmit {
        ToEmit {
            back: OnceLock::new(),
            per_term: (0..n_terms).map(|_| OnceLock::new()).collect(),
        }
    }

    /// The table of terminal `t` (by L-state), made on first use.
    fn of(&self, lexer: &Lexer, t: u32) -> &[u16] {
        let Some(cell) = self.per_term.get(t as usize) else {
            return &[];
        };
        cell.get_or_init(|| {
            let back = self.back.get_or_init(|| backward_moves(lexer));
            let n = lexer.len();
            let mut dist = vec![FAR; n];
            let mut queue = std::collections::VecDeque::new();
            for l in 1..n as u32 {
                if lexer.emit[l as usize] != LDEAD && lexer.emits(l).binary_search(&t).is_ok() {
                    dist[l as usize] = 0;
                    queue.push_back(l);
                }
            }
            while let Some(u) = queue.pop_front() {
                let du = dist[u as usize];
                for &(v, cost) in back.row(u as usize) {
                    let dv = du.saturating_add(cost).min(FAR - 1);
                    if dv < dist[v as usize] {
                        dist[v as usize] = dv;
                        match cost {
                            0 => queue.push_front(v),
                            _ => queue.push_back(v),
                        }
                    }
                }
            }
            dist.into_boxed_slice()
        })
    }
}

/// The lexer's moves (a byte step: 1 byte; a skipped lexeme: none)
/// backwards: per target, `(source, bytes)`.
fn backward_moves(lexer: &Lexer) -> Rows<(u32, u16)> {
    let n = lexer.len();
    let mut moves: Vec<(u32, (u32, u16))> = Vec::new();
    // The last source that moved into each state: one move per pair.
    let mut last = vec![u32::MAX; n];
    for l in 1..n as u32 {
        for c in 0..lexer.n_classes() {
            let to = lexer.next_class(l, c);
            if to != LDEAD && last[to as usize] != l {
                last[to as usize] = l;
                moves.push((to, (l, 1)));
            }
        }
        let e = lexer.emit[l as usize];
        if lexer.skippable[l as usize] && e != LDEAD {
            moves.push((e, (l, 0)));
        }
    }
    Rows::grouped(n, moves.iter().copied())
}

/// Finds hole fills such that the filled text lexes to `word`; `None` if none
/// exists. `at[i]` is the span of positions where `word[i]` may be emitted
/// (the span of the [`TokenNfa`](super::TokenNfa) state it leaves on the
/// witness path): the search emits it nowhere else, so each position is
/// visited with the few terminal counts whose spans cover it instead of all
/// of them (which made the search quadratic on canvases with many holes).
/// It looks only at fills that swallow at most `max_swallowed` text bytes
/// (read by a lexeme that began in a hole: what the witness path swallows,
/// the fewest its fills can), preferring fewer, then short fills.
pub(crate) fn fills_for(
    lexer: &Lexer,
    partial: &Partial,
    word: &[u32],
    at: &[Span],
    max_swallowed: u32,
    budget: &mut Budget,
) -> Result<Option<Vec<Vec<u8>>>> {
    debug_assert_eq!(word.len(), at.len());
    let layout = Layout::new(partial)?;
    let end = layout.end();
    let is_hole = |p: u32| p < end && layout.is_hole(p);
    let ceiling = budget.ceiling();
    let n_states = lexer.len();
    let track = max_swallowed != u32::MAX;
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
    // skipped lexemes do not), plus the hole bytes below (`hole_bytes`: a
    // byte lowers them by at most one, an emission or a skip does not lower
    // them), times WEIGHT, on each level of swallowed
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
    // In a hole, where the next terminal must be emitted before the hole is
    // left (its span ends there), the bytes still to read are hole bytes:
    // at least the fewest its lexer state needs to emit it, plus the
    // shortest lexemes of the terminals after it that must be emitted there
    // too (`need`, over at most 64 of them: a lower bound either way). The
    // estimate counts them, and a node whose state can never emit its next
    // terminal is dead (`None`).
    ceiling.admit(word.len().saturating_mul(4))?;
    let need: Vec<u32> = (0..word.len())
        .map(|i| {
            let last = at[i].1;
            word[i + 1..]
                .iter()
                .zip(&at[i + 1..])
                .take(64)
                .take_while(|(_, &(_, l))| l <= last)
                .fold(0u32, |sum, (&t, _)| {
                    sum.saturating_add(lexer.min_len.get(t as usize).copied().unwrap_or(0))
                })
        })
        .collect();
    let hole_bytes = |p: u32, l: u32, i: u32| -> Option<u32> {
        let Some(&t) = word.get(i as usize) else {
            return Some(0);
        };
        if !is_hole(p) {
            return Some(0);
        }
        let d = lexer
            .to_emit
            .of(lexer, t)
            .get(base(l) as usize)
            .copied()
            .unwrap_or(0);
        match (d, at[i as usize].1 == p) {
            (FAR, _) => None,
            (d, true) => Some((d as u32).saturating_add(need[i as usize])),
            (_, false) => Some(0),
        }
    };
    let first = ((WEIGHT * remaining(0, 0)) as usize).min(BUCKETS - 1);
    ceiling.admit((first + 1).saturating_mul(4))?;
    let mut queue = Queue {
        heads: vec![NONE; first + 1],
        next: Vec::new(),
        cursor: 0,
        len: 0,
        heap: Default::default(),
        ceiling,
    };
    queue.push((WEIGHT * remaining(0, 0)) as usize, 0)?;
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
        // Queued again since with fewer swallowed bytes: that one goes on
        // (never when none are).
        if swallowed > 0 {
            let mark = match is_hole(p) {
                true => visited.block(p, i)?[slot(n_states, l)],
                false => visited.chunk.get(&(p, l, i)).copied().unwrap_or(0),
            };
            if (mark as u32) < swallowed.saturating_add(1).min(Mark::MAX as u32) {
                continue;
            }
        }
        // A swallowed byte costs `SWALLOW` moves.
        let f_of = |p2: u32, i2: u32, sw: u32, hole: u32| {
            (depth as usize + 1)
                + (WEIGHT as usize) * (remaining(p2, i2) as usize + hole as usize)
                + SWALLOW * sw as usize
        };
        let mut push =
            |nodes: &mut Vec<Node>, queue: &mut Queue, p: u32, l: u32, i: u32, swallowed: u32| {
                if swallowed > max_swallowed || too_late(p, i) {
                    return Fits::Ok(());
                }
                let Some(hole) = hole_bytes(p, l, i) else {
                    return Fits::Ok(());
                };
                if visited.insert(is_hole(p), p, l, i, swallowed)? {
                    queue.push(f_of(p, i, swallowed, hole), nodes.len() as u32)?;
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
        // reads is swallowed (tracked only under a bound).
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
                let tag = if track && lexer.is_fresh(l) { TAG } else { tag };
                let f = f_of(p, i, swallowed, 0);
                // The next terminal's table, if it must be emitted in this
                // hole (see `hole_bytes`).
                let table = word.get(i as usize).map(|&t| lexer.to_emit.of(lexer, t));
                let forced = at.get(i as usize).is_some_and(|&(_, last)| last == p);
                let need = need.get(i as usize).copied().unwrap_or(0);
                // Byte steps stay in this hole's (p, i) block: look it up once.
                let block = visited.block(p, i)?;
                for c in 0..lexer.n_classes() {
                    let n = lexer.next_class(l, c);
                    if n == LDEAD {
                        continue;
                    }
                    let d = table.map_or(0, |d| d.get(n as usize).copied().unwrap_or(0));
                    if d == FAR || !improve(&mut block[slot(n_states, n | tag)], swallowed) {
                        continue;
                    }
                    let hole = match forced {
                        true => (d as u32).saturating_add(need),
                        false => 0,
                    };
                    // A state reached no later with fewer munch checkers (and
                    // no more swallowed) can do all this one can, as soon:
                    // skip this one.
                    if lexer.dominators[n as usize]
                        .iter()
                        .any(|&d| queued_with(block[slot(n_states, d | tag)], swallowed))
                    {
                        continue;
                    }
                    queue.push(f + (WEIGHT as usize) * hole as usize, nodes.len() as u32)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::Grammar;

    /// The fewest bytes from `l` to a state that emits `t`, by a forward
    /// search (Dijkstra on 0/1 costs) over byte steps and skips: the
    /// independent oracle of [`ToEmit`]'s backward one.
    fn forward(lexer: &Lexer, l: u32, t: u32) -> u16 {
        let mut dist = vec![u32::MAX; lexer.len()];
        let mut queue = std::collections::VecDeque::from([(l, 0u32)]);
        dist[l as usize] = 0;
        let mut best = u32::MAX;
        while let Some((u, du)) = queue.pop_front() {
            if du > dist[u as usize] {
                continue;
            }
            if lexer.emit[u as usize] != LDEAD && lexer.emits(u).contains(&t) {
                best = best.min(du);
            }
            let e = lexer.emit[u as usize];
            if lexer.skippable[u as usize] && e != LDEAD && du < dist[e as usize] {
                dist[e as usize] = du;
                queue.push_front((e, du));
            }
            for c in 0..lexer.n_classes() {
                let v = lexer.next_class(u, c);
                if v != LDEAD && du + 1 < dist[v as usize] {
                    dist[v as usize] = du + 1;
                    queue.push_back((v, du + 1));
                }
            }
        }
        match best {
            u32::MAX => FAR,
            b => b.min(u32::from(FAR) - 1) as u16,
        }
    }

    #[test]
    fn bytes_to_emit_equal_a_forward_search() {
        let grammars = [
            include_str!("../../grammars/json.ebnf"),
            include_str!("../../grammars/cpp.ebnf"),
            // Keywords inside identifiers, a comment to skip, and a
            // terminal no state after `b` can reach but by skipping.
            "start: (A | B | K | I)+\nA: \"a\"\nB: \"b\" \"c\"*\nK: \"if\"\nI: /[a-z]+/\nCOMMENT: /#[^\\n]*\\n/\n%ignore COMMENT\n%ignore \" \"",
        ];
        let mut far = 0;
        for src in grammars {
            let g = Grammar::from_lark(src, None).unwrap();
            let lexer = Lexer::new(&g, crate::lexer::DEFAULT_LEXER_LIMIT).unwrap();
            // Every state of the small lexers; a sample of C++'s.
            let stride = lexer.len().div_ceil(60);
            for t in 0..lexer.n_terms as u32 {
                let table = lexer.to_emit.of(&lexer, t);
                for l in (1..lexer.len() as u32).step_by(stride) {
                    let want = forward(&lexer, l, t);
                    far += usize::from(want == FAR);
                    assert_eq!(table[l as usize], want, "terminal {t} from state {l}");
                }
            }
        }
        assert!(far > 0, "some state can never emit some terminal");
    }
}

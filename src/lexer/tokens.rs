//! The DFA over terminals of a partial output (see the module docs).

use super::build::{Lexer, LDEAD};
use crate::automata::minimize::hopcroft;
use crate::budget::Budget;
use crate::error::{Error, ErrorKind, Result};
use crate::hash::{FxMap, FxSet};
use crate::partial::{Partial, Segment};

/// Marker for a hole position in the linearised partial output.
const HOLE: u16 = 256;

/// A partial output laid out as positions: a byte to read, or a hole.
/// Position `len()` is the end.
pub(crate) struct Layout {
    kind: Vec<u16>,
    /// For each hole position, its hole index.
    hole_index: FxMap<u32, u32>,
}

impl Layout {
    pub(crate) fn new(p: &Partial) -> Result<Layout> {
        let mut kind: Vec<u16> = Vec::with_capacity(p.text_len() + p.n_holes());
        let mut hole_index = FxMap::default();
        for s in p.segments() {
            match s {
                Segment::Text(t) => kind.extend(t.iter().map(|&b| b as u16)),
                Segment::Hole => {
                    hole_index.insert(kind.len() as u32, hole_index.len() as u32);
                    kind.push(HOLE);
                }
            }
        }
        if kind.len() >= (u32::MAX >> 1) as usize {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                "partial output longer than 2 GiB",
            ));
        }
        Ok(Layout { kind, hole_index })
    }

    pub(crate) fn end(&self) -> u32 {
        self.kind.len() as u32
    }

    pub(crate) fn is_hole(&self, p: u32) -> bool {
        self.kind[p as usize] == HOLE
    }

    pub(crate) fn byte(&self, p: u32) -> u8 {
        self.kind[p as usize] as u8
    }

    /// The index of the hole at position `p` (0 if `p` is not a hole).
    pub(crate) fn hole_of(&self, p: u32) -> usize {
        self.hole_index.get(&p).map_or(0, |&h| h as usize)
    }
}

/// A configuration: position in the layout and lexer state, packed.
type Conf = u64;

#[inline]
fn conf(p: u32, l: u32) -> Conf {
    ((p as u64) << 32) | l as u64
}

#[inline]
fn unpack(c: Conf) -> (u32, u32) {
    ((c >> 32) as u32, c as u32)
}

/// A trimmed, minimal DFA over terminals: exactly the terminal sequences that
/// some fill of the holes lexes to (by maximal munch).
///
/// States are numbered breadth-first from the start (edges in terminal
/// order), so the DFA is canonical. Every state is reachable and can reach a
/// final state; an empty language has no states at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenDfa {
    /// Start state (meaningless if `is_empty()`).
    pub start: u32,
    /// Per state: whether it is final.
    pub finals: Vec<bool>,
    /// Per state: outgoing `(terminal, target)` edges sorted by terminal.
    pub edges: Vec<Vec<(u32, u32)>>,
}

impl TokenDfa {
    /// Number of states.
    pub fn len(&self) -> usize {
        self.finals.len()
    }

    /// Whether the language is empty (no lexing of any fill exists).
    pub fn is_empty(&self) -> bool {
        self.finals.is_empty()
    }

    /// Whether the DFA accepts the terminal sequence `word`.
    pub fn accepts(&self, word: &[u32]) -> bool {
        if self.is_empty() {
            return false;
        }
        let mut s = self.start as usize;
        for &t in word {
            match self.edges[s].binary_search_by_key(&t, |e| e.0) {
                Ok(i) => s = self.edges[s][i].1 as usize,
                Err(_) => return false,
            }
        }
        self.finals[s]
    }

    /// Builds the DFA of `partial` under `lexer`, spending at most `budget`.
    pub(crate) fn build(
        lexer: &Lexer,
        partial: &Partial,
        budget: &mut Budget,
        max_states: usize,
    ) -> Result<TokenDfa> {
        let layout = Layout::new(partial)?;
        let mut b = Builder {
            lx: lexer,
            layout: &layout,
            seen: FxSet::default(),
            stack: Vec::new(),
        };
        let start = b.closure(vec![conf(0, lexer.start)], budget)?;
        let mut ids: FxMap<ConfSet, u32> = FxMap::default();
        // Different DFA states often emit into the same seeds (notably in
        // holes): remember the state each seed list closed into.
        let mut by_seeds: FxMap<Vec<Conf>, u32> = FxMap::default();
        let mut sets: Vec<ConfSet> = Vec::new();
        ids.insert(start.clone(), 0);
        sets.push(start);
        let mut finals: Vec<bool> = Vec::new();
        let mut edges: Vec<Vec<(u32, u32)>> = Vec::new();
        let mut buckets: Vec<Vec<Conf>> = vec![Vec::new(); lexer.n_terms];
        let mut touched: Vec<u32> = Vec::new();
        let end = layout.end();
        let mut head = 0;
        while head < sets.len() {
            let set = std::mem::take(&mut sets[head]);
            head += 1;
            let mut fin = false;
            let emit_from =
                |p: u32, l: u32, touched: &mut Vec<u32>, buckets: &mut Vec<Vec<Conf>>| {
                    let e = lexer.emit[l as usize];
                    if e == LDEAD {
                        return;
                    }
                    for &t in lexer.emits(l) {
                        let bk = &mut buckets[t as usize];
                        if bk.is_empty() {
                            touched.push(t);
                        }
                        bk.push(conf(p, e));
                    }
                };
            for &c in &set.chunk {
                let (p, l) = unpack(c);
                if p == end && lexer.is_fresh(l) {
                    fin = true;
                }
                emit_from(p, l, &mut touched, &mut buckets);
            }
            for (p, bits) in &set.holes {
                for l in ones(bits) {
                    emit_from(*p, l, &mut touched, &mut buckets);
                }
            }
            touched.sort_unstable();
            let mut out = Vec::with_capacity(touched.len());
            for &t in &touched {
                let mut seeds = std::mem::take(&mut buckets[t as usize]);
                seeds.sort_unstable();
                seeds.dedup();
                if let Some(&id) = by_seeds.get(&seeds) {
                    out.push((t, id));
                    continue;
                }
                let next = b.closure(seeds.clone(), budget)?;
                if next.is_empty() {
                    continue;
                }
                let id = match ids.get(&next) {
                    Some(&id) => id,
                    None => {
                        if ids.len() >= max_states {
                            return Err(Error::new(
                                ErrorKind::SizeLimit,
                                format!("the partial output's terminal DFA needs more than {max_states} states"),
                            ));
                        }
                        let id = ids.len() as u32;
                        ids.insert(next.clone(), id);
                        sets.push(next);
                        id
                    }
                };
                by_seeds.insert(seeds, id);
                out.push((t, id));
            }
            touched.clear();
            finals.push(fin);
            edges.push(out);
        }
        Ok(minimize(lexer.n_terms, 0, &finals, &edges))
    }
}

/// A state of the subset construction: configurations in chunks (and at the
/// end), listed; configurations inside holes, as one L-state bitset per hole.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct ConfSet {
    /// Sorted chunk configurations that can emit or are final.
    chunk: Vec<Conf>,
    /// `(hole position, bitset of L-states)`, sorted by position.
    holes: Vec<(u32, Vec<u64>)>,
}

impl ConfSet {
    fn is_empty(&self) -> bool {
        self.chunk.is_empty() && self.holes.is_empty()
    }
}

/// The indices of the set bits of `bits`, ascending.
fn ones(bits: &[u64]) -> impl Iterator<Item = u32> + '_ {
    bits.iter().enumerate().flat_map(|(i, &w)| {
        let mut w = w;
        std::iter::from_fn(move || {
            if w == 0 {
                return None;
            }
            let b = w.trailing_zeros();
            w &= w - 1;
            Some(i as u32 * 64 + b)
        })
    })
}

struct Builder<'a> {
    lx: &'a Lexer,
    layout: &'a Layout,
    seen: FxSet<Conf>,
    stack: Vec<Conf>,
}

impl Builder<'_> {
    /// ε-closure: byte steps (forced in chunks, free in holes), hole exits and
    /// skips of ignored lexemes. Inside a hole, the precomputed hole closure of
    /// each entering L-state is or-ed into the hole's bitset at once.
    fn closure(&mut self, seeds: Vec<Conf>, budget: &mut Budget) -> Result<ConfSet> {
        let lx = self.lx;
        let end = self.layout.end();
        let w = lx.words;
        self.seen.clear();
        self.stack.clear();
        let mut holes: Vec<(u32, Vec<u64>)> = Vec::new();
        let mut chunk = Vec::new();
        self.stack.extend(seeds.iter().rev());
        let mut fresh_bits: Vec<u64> = vec![0; w];
        while let Some(c) = self.stack.pop() {
            budget.spend(1)?;
            let (p, l) = unpack(c);
            if p < end && self.layout.is_hole(p) {
                let hi = match holes.iter().position(|h| h.0 == p) {
                    Some(i) => i,
                    None => {
                        holes.push((p, vec![0; w]));
                        holes.len() - 1
                    }
                };
                let bits = &mut holes[hi].1;
                if bits[l as usize / 64] & (1 << (l % 64)) != 0 {
                    continue;
                }
                let clo = lx.hole_closure(l);
                for i in 0..w {
                    fresh_bits[i] = clo[i] & !bits[i];
                    bits[i] |= clo[i];
                }
                budget.spend(w as u64)?;
                // Every newly reached state may leave the hole.
                for l2 in ones(&fresh_bits) {
                    self.stack.push(conf(p + 1, l2));
                }
                continue;
            }
            if !self.seen.insert(c) {
                continue;
            }
            chunk.push(c);
            if p < end {
                let n = lx.next(l, self.layout.byte(p));
                if n != LDEAD {
                    self.stack.push(conf(p + 1, n));
                }
            }
            if lx.skippable[l as usize] {
                self.stack.push(conf(p, lx.emit[l as usize]));
            }
        }
        // Chunk configurations that can neither emit nor end are useless.
        chunk.retain(|&c| {
            let (p, l) = unpack(c);
            lx.emit[l as usize] != LDEAD || (p == end && lx.is_fresh(l))
        });
        chunk.sort_unstable();
        holes.sort_unstable_by_key(|h| h.0);
        Ok(ConfSet { chunk, holes })
    }
}

/// Minimises (and trims) a DFA given by sparse edges; returns it canonically numbered.
fn minimize(n_terms: usize, start: u32, finals: &[bool], edges: &[Vec<(u32, u32)>]) -> TokenDfa {
    let n = finals.len() + 1; // state 0 = dead sink, others shifted by one
    let k = n_terms.max(1);
    let mut trans = vec![0u32; n * k];
    for (s, es) in edges.iter().enumerate() {
        for &(t, d) in es {
            trans[(s + 1) * k + t as usize] = d + 1;
        }
    }
    let mut class = vec![0u32; n];
    for (s, &f) in finals.iter().enumerate() {
        class[s + 1] = f as u32;
    }
    let block = hopcroft(n, k, &trans, &class);
    let dead = block[0];
    let sb = block[start as usize + 1];
    if sb == dead {
        return TokenDfa {
            start: 0,
            finals: Vec::new(),
            edges: Vec::new(),
        };
    }
    let nb = block.iter().copied().max().map_or(0, |m| m as usize + 1);
    let mut rep = vec![u32::MAX; nb];
    for s in (0..n).rev() {
        rep[block[s] as usize] = s as u32;
    }
    let mut new_id = vec![u32::MAX; nb];
    let mut order: Vec<u32> = vec![sb];
    new_id[sb as usize] = 0;
    let mut head = 0;
    let mut out_edges = Vec::new();
    let mut out_finals = Vec::new();
    while head < order.len() {
        let b = order[head] as usize;
        head += 1;
        let r = rep[b] as usize;
        let mut es = Vec::new();
        for t in 0..k {
            let tb = block[trans[r * k + t] as usize];
            if tb == dead {
                continue;
            }
            if new_id[tb as usize] == u32::MAX {
                new_id[tb as usize] = order.len() as u32;
                order.push(tb);
            }
            es.push((t as u32, new_id[tb as usize]));
        }
        out_edges.push(es);
        out_finals.push(class[r] == 1);
    }
    TokenDfa {
        start: 0,
        finals: out_finals,
        edges: out_edges,
    }
}

//! The automaton over terminals of a partial output (see the module docs).

use super::build::{Lexer, LDEAD};
use super::holes::{HoleCache, HoleView};
use crate::budget::{Budget, Ceiling, Fits};
use crate::error::{Error, ErrorKind, Limit, Result};
use crate::hash::FxMap;
use crate::partial::{Partial, Segment};
use smallvec::SmallVec;

/// A short list of configurations (chunk sets are mostly one to four long).
type Confs = SmallVec<[Conf; 4]>;

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

    /// The text from position `from` up to and including the next hole
    /// (ending in [`HOLE`]), or up to the end of the text (not ending in
    /// it); `None` when that is longer than `max` positions.
    pub(crate) fn segment(&self, from: u32, max: u32) -> Option<&[u16]> {
        let rest = self.kind.get(from as usize..)?;
        let n = rest.iter().take(max as usize + 1).position(|&k| k == HOLE);
        match n {
            Some(n) => Some(&rest[..=n]),
            None if rest.len() <= max as usize => Some(rest),
            None => None,
        }
    }

    /// The positions of the holes, ascending.
    fn hole_positions(&self) -> Vec<u32> {
        let mut at: Vec<u32> = self.hole_index.keys().copied().collect();
        at.sort_unstable();
        at
    }
}

/// How [`TokenNfa::build_in`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// The trimmed automaton.
    Whole,
    /// The trimmed automaton, its moves weighed by the bytes they swallow.
    Weighed,
    /// The untrimmed automaton of a prefix.
    Prefix,
    /// The trimmed automaton with an entry state per start (see
    /// [`TokenNfa::build_entries`]).
    Entries,
}

/// The tag on a configuration's lexer state, in a weighed build: the lexeme
/// in progress began inside a hole (lexer states stay below 2³¹).
pub(crate) const TAG: u32 = 1 << 31;

/// The lexer state of a (possibly tagged) configuration state.
#[inline]
pub(crate) fn base(x: u32) -> u32 {
    x & !TAG
}

/// Whether a configuration state is tagged.
#[inline]
pub(crate) fn tagged(x: u32) -> bool {
    x & TAG != 0
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

/// An automaton over terminals: exactly the terminal sequences that some fill
/// of the holes lexes to (by maximal munch).
///
/// The subset construction runs over configurations `(position, lexer
/// state)` with one twist: a closure that reaches both chunk configurations
/// and a hole yields *separate* states — the chunk part (a set of
/// configurations, determinised within its chunk) and, per hole, the set of
/// lexer states inside it (a hole is a small DFA of lexer-state sets). Merging
/// them, as a plain subset construction does, makes every state after a hole
/// carry all alignments of the following chunk that the hole could produce (a
/// KMP-style set per state: quadratic on repetitive text). Kept apart, each
/// chunk stays a chain and the automaton stays linear in the input; it is
/// deterministic except where a hole may end.
///
/// A closure also stops at the first hole it reaches: a lexeme still in
/// progress when a hole ends continues through the hole state's ε-move to
/// the closure after the hole (which may stop at the next hole, and so on).
/// Without ε-moves each emission into a hole needs an edge to every state
/// the lexeme after it can reach — in C++ a comment or string started in
/// one hole can run through every later hole — so a canvas with `h` holes
/// had about `h²·|terminals|` edges (240,000 on a 1 KB C++ canvas with 63
/// holes, 80 ms to build). With them every state has a few successors per
/// terminal and the size is linear in text and holes; the emptiness search
/// follows ε-moves where a terminal lands. The automaton is trimmed (every
/// state reachable and co-reachable; an empty language has no states) and
/// numbered in the order the construction discovers states (breadth-first
/// from a single start, edges in terminal order), so it is canonical for a
/// partial output and grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenNfa {
    /// Start state (meaningless if `is_empty()`).
    pub start: u32,
    /// Per state: whether it is final.
    pub finals: Vec<bool>,
    /// Per state: outgoing `(terminal, target)` edges, sorted by terminal
    /// (see [`TokenNfa::edges`]).
    edges: Rows<(u32, u32)>,
    /// Per state: the targets of its ε-moves (see [`TokenNfa::eps`]).
    eps: Rows<u32>,
    /// Per state: the first and last position of the partial output (bytes
    /// and holes, one position each) where its outgoing terminals are
    /// emitted. Used to realise a witness path as bytes without trying every
    /// alignment of terminals to positions.
    pub(crate) spans: Vec<Span>,
    /// In an automaton built to be weighed ([`TokenNfa::build_weighed`]):
    /// per edge and per ε-move, in the order of `edges` and `eps`, the
    /// fixed bytes it swallows (read by a lexeme that began in a hole);
    /// empty otherwise (every move weighs nothing).
    edge_costs: Vec<u32>,
    eps_costs: Vec<u32>,
}

/// Per-state lists in one array (compressed rows): row `i` is
/// `items[at[i]..at[i + 1]]`. A check's automaton has one list of edges
/// and one of ε-moves per state; one allocation each instead of one per
/// state (that was a fifth of the allocations of a check).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Rows<T> {
    at: Vec<u32>,
    items: Vec<T>,
}

impl<T: Copy> Rows<T> {
    /// No rows, room for `rows` rows and `items` items.
    pub(crate) fn with_capacity(rows: usize, items: usize) -> Rows<T> {
        let mut at = Vec::with_capacity(rows + 1);
        at.push(0);
        Rows {
            at,
            items: Vec::with_capacity(items),
        }
    }

    /// Bytes it holds.
    fn bytes(&self) -> usize {
        4 * self.at.capacity() + std::mem::size_of::<T>() * self.items.capacity()
    }

    /// Pairs `(row, item)`, rows below `n`, grouped by row (a counting
    /// sort; items keep their order within a row).
    pub(crate) fn grouped(n: usize, pairs: impl Iterator<Item = (u32, T)> + Clone) -> Rows<T>
    where
        T: Default,
    {
        let mut at = vec![0u32; n + 1];
        for (k, _) in pairs.clone() {
            at[k as usize + 1] += 1;
        }
        for k in 0..n {
            at[k + 1] += at[k];
        }
        let mut items = vec![T::default(); at[n] as usize];
        let mut fill = at.clone();
        for (k, x) in pairs {
            items[fill[k as usize] as usize] = x;
            fill[k as usize] += 1;
        }
        Rows { at, items }
    }

    /// The offsets (row `i` is `items[at[i]..at[i + 1]]`) and the items.
    pub(crate) fn into_parts(self) -> (Vec<u32>, Vec<T>) {
        (self.at, self.items)
    }

    /// `n` empty rows.
    pub(crate) fn empty(n: usize) -> Rows<T> {
        Rows {
            at: vec![0; n + 1],
            items: Vec::new(),
        }
    }

    /// Room for `additional` more items, admitted by `ceiling`.
    fn reserve(&mut self, ceiling: Ceiling, additional: usize) -> crate::budget::Fits {
        ceiling.reserve(&mut self.at, 1)?;
        ceiling.reserve(&mut self.items, additional)
    }

    /// Appends an item to the row being written (ended by [`Rows::end_row`]).
    pub(crate) fn push(&mut self, x: T) {
        self.items.push(x);
    }

    /// Appends items to the row being written.
    pub(crate) fn extend(&mut self, xs: impl IntoIterator<Item = T>) {
        self.items.extend(xs);
    }

    /// Ends the row being written.
    pub(crate) fn end_row(&mut self) {
        self.at.push(self.items.len() as u32);
    }

    /// Appends a whole row.
    pub(crate) fn push_row(&mut self, row: impl IntoIterator<Item = T>) {
        self.items.extend(row);
        self.end_row();
    }

    /// Row `i`.
    pub(crate) fn row(&self, i: usize) -> &[T] {
        &self.items[self.at[i] as usize..self.at[i + 1] as usize]
    }

    /// The part of `side` (one entry per item) that belongs to row `i`.
    pub(crate) fn slice<'s, U>(&self, i: usize, side: &'s [U]) -> &'s [U] {
        &side[self.at[i] as usize..self.at[i + 1] as usize]
    }

    /// Every row, in order.
    pub(crate) fn rows(&self) -> impl ExactSizeIterator<Item = &[T]> {
        self.at
            .windows(2)
            .map(|w| &self.items[w[0] as usize..w[1] as usize])
    }

    /// Number of items in all rows.
    pub(crate) fn n_items(&self) -> usize {
        self.items.len()
    }
}

/// Reusable scratch for ε-closures over one [`TokenNfa`]: the closure
/// number that last visited each state, so a closure costs its own size
/// and allocates nothing once `out` has grown.
#[derive(Clone, Debug)]
pub(crate) struct EpsClosure {
    stamp: Vec<u32>,
    epoch: u32,
}

impl EpsClosure {
    /// Bytes it holds.
    pub(crate) fn bytes(&self) -> usize {
        4 * self.stamp.capacity()
    }

    /// Scratch for the states of `nfa`.
    pub(crate) fn new(nfa: &TokenNfa) -> EpsClosure {
        EpsClosure {
            stamp: vec![0; nfa.len()],
            epoch: 0,
        }
    }

    /// Writes into `out` (cleared first) the states reachable from `from` by
    /// ε-moves, `from` included, each once, `from`'s first.
    pub(crate) fn close(
        &mut self,
        nfa: &TokenNfa,
        from: impl IntoIterator<Item = u32>,
        out: &mut Vec<u32>,
    ) {
        self.epoch += 1;
        if self.epoch == u32::MAX {
            self.stamp.iter_mut().for_each(|x| *x = 0);
            self.epoch = 1;
        }
        out.clear();
        for k in from {
            if self.stamp[k as usize] != self.epoch {
                self.stamp[k as usize] = self.epoch;
                out.push(k);
            }
        }
        let mut i = 0;
        while i < out.len() {
            for &d in nfa.eps(out[i]) {
                if self.stamp[d as usize] != self.epoch {
                    self.stamp[d as usize] = self.epoch;
                    out.push(d);
                }
            }
            i += 1;
        }
    }
}

/// Reusable scratch for ε-closures with the fewest swallowed bytes to each
/// state (over a weighed [`TokenNfa`]; over another, every distance is 0).
#[derive(Clone, Debug)]
pub(crate) struct WeighedClosure {
    stamp: Vec<u32>,
    dist: Vec<u32>,
    epoch: u32,
    stack: Vec<u32>,
}

impl WeighedClosure {
    /// Scratch for the states of `nfa`.
    pub(crate) fn new(nfa: &TokenNfa) -> WeighedClosure {
        WeighedClosure {
            stamp: vec![0; nfa.len()],
            dist: vec![0; nfa.len()],
            epoch: 0,
            stack: Vec::new(),
        }
    }

    /// Writes into `out` (cleared first) the states reachable from `from`
    /// by ε-moves, `from` first, each once with the fewest bytes the
    /// ε-moves on the way swallow. The ε-moves form no cycle, so relaxing
    /// until nothing improves ends.
    pub(crate) fn close(&mut self, nfa: &TokenNfa, from: u32, out: &mut Vec<(u32, u32)>) {
        self.epoch += 1;
        if self.epoch == u32::MAX {
            self.stamp.iter_mut().for_each(|x| *x = 0);
            self.epoch = 1;
        }
        let mut order: Vec<u32> = Vec::new();
        self.stamp[from as usize] = self.epoch;
        self.dist[from as usize] = 0;
        order.push(from);
        self.stack.clear();
        self.stack.push(from);
        while let Some(s) = self.stack.pop() {
            let costs = nfa.eps_costs(s);
            for (i, &d) in nfa.eps(s).iter().enumerate() {
                let nd = self.dist[s as usize].saturating_add(costs.map_or(0, |c| c[i]));
                if self.stamp[d as usize] != self.epoch {
                    self.stamp[d as usize] = self.epoch;
                    self.dist[d as usize] = nd;
                    order.push(d);
                    self.stack.push(d);
                } else if nd < self.dist[d as usize] {
                    self.dist[d as usize] = nd;
                    self.stack.push(d);
                }
            }
        }
        out.clear();
        out.extend(order.iter().map(|&s| (s, self.dist[s as usize])));
    }
}

/// The label of an ε-move while the automaton is built.
const EPS: u32 = u32::MAX;

/// A range of positions `(first, last)`, inclusive.
pub(crate) type Span = (u32, u32);

/// The smallest span covering both.
fn join(a: Span, b: Span) -> Span {
    (a.0.min(b.0), a.1.max(b.1))
}

/// Covers nothing: the neutral element of [`join`].
const NO_SPAN: Span = (u32::MAX, 0);

impl TokenNfa {
    /// Number of states.
    pub fn len(&self) -> usize {
        self.finals.len()
    }

    /// Bytes its tables hold, estimated.
    pub(crate) fn bytes(&self) -> usize {
        self.finals.capacity()
            + self.edges.bytes()
            + self.eps.bytes()
            + std::mem::size_of::<Span>() * self.spans.capacity()
            + 4 * (self.edge_costs.capacity() + self.eps_costs.capacity())
    }

    /// Whether the language is empty (no lexing of any fill exists).
    pub fn is_empty(&self) -> bool {
        self.finals.is_empty()
    }

    /// Number of edges.
    pub fn n_edges(&self) -> usize {
        self.edges.n_items()
    }

    /// The outgoing `(terminal, target)` edges of state `s`, sorted by
    /// terminal.
    pub fn edges(&self, s: u32) -> &[(u32, u32)] {
        self.edges.row(s as usize)
    }

    /// The targets of the ε-moves of state `s`. Only the start state and
    /// hole states have them (a lexeme in progress leaving the hole), and
    /// they always lead to a later position of the text, so they form no
    /// cycle.
    pub fn eps(&self, s: u32) -> &[u32] {
        self.eps.row(s as usize)
    }

    /// The outgoing edges of every state, in order of states.
    pub(crate) fn all_edges(&self) -> impl Iterator<Item = &[(u32, u32)]> {
        self.edges.rows()
    }

    /// Whether the moves weigh the fixed bytes they swallow (see
    /// [`TokenNfa::build_weighed`]).
    pub(crate) fn is_weighed(&self) -> bool {
        !self.edge_costs.is_empty() || !self.eps_costs.is_empty()
    }

    /// The fixed bytes swallowed by each of `edges(s)`, in order (`None`
    /// when the automaton is not weighed: all zero).
    pub(crate) fn edge_costs(&self, s: u32) -> Option<&[u32]> {
        (!self.edge_costs.is_empty()).then(|| self.edges.slice(s as usize, &self.edge_costs))
    }

    /// The same automaton without the moves that swallow more than
    /// `max` bytes (`None` when it has none): what is left of its
    /// language are the lexings where no lexeme that began in a hole reads
    /// more than `max` bytes of one chunk. States are kept (some may be
    /// dead now), so spans and numbering stay valid.
    pub(crate) fn within(&self, max: u32) -> Option<TokenNfa> {
        if !self
            .edge_costs
            .iter()
            .chain(&self.eps_costs)
            .any(|&c| c > max)
        {
            return None;
        }
        // The moves of `rows` (weighed by `costs`, or all 0) of at most `max`.
        fn keep<T: Copy>(rows: &Rows<T>, costs: &[u32], max: u32) -> (Rows<T>, Vec<u32>) {
            let n = rows.at.len() - 1;
            let mut out = Rows::with_capacity(n, rows.n_items());
            let mut kept = Vec::with_capacity(rows.n_items());
            for s in 0..n {
                let cs = if costs.is_empty() {
                    &[][..]
                } else {
                    rows.slice(s, costs)
                };
                for (i, &x) in rows.row(s).iter().enumerate() {
                    let c = cs.get(i).copied().unwrap_or(0);
                    if c <= max {
                        out.push(x);
                        kept.push(c);
                    }
                }
                out.end_row();
            }
            (out, kept)
        }
        let (edges, edge_costs) = keep(&self.edges, &self.edge_costs, max);
        let (eps, eps_costs) = keep(&self.eps, &self.eps_costs, max);
        Some(TokenNfa {
            start: self.start,
            finals: self.finals.clone(),
            edges,
            eps,
            spans: self.spans.clone(),
            edge_costs,
            eps_costs,
        })
    }

    /// The fixed bytes swallowed by each of `eps(s)`, in order (`None` when
    /// the automaton is not weighed).
    pub(crate) fn eps_costs(&self, s: u32) -> Option<&[u32]> {
        (!self.eps_costs.is_empty()).then(|| self.eps.slice(s as usize, &self.eps_costs))
    }

    /// Whether the automaton accepts the terminal sequence `word`.
    pub fn accepts(&self, word: &[u32]) -> bool {
        if self.is_empty() {
            return false;
        }
        let mut cur = self.closure(&[self.start]);
        for &t in word {
            let mut next: Vec<u32> = Vec::new();
            for &s in &cur {
                let es = self.edges(s);
                let from = es.partition_point(|e| e.0 < t);
                next.extend(es[from..].iter().take_while(|e| e.0 == t).map(|e| e.1));
            }
            if next.is_empty() {
                return false;
            }
            cur = self.closure(&next);
        }
        cur.iter().any(|&s| self.finals[s as usize])
    }

    /// The states reachable from `states` by ε-moves (`states` included),
    /// sorted.
    pub fn closure(&self, states: &[u32]) -> Vec<u32> {
        let mut out = Vec::new();
        EpsClosure::new(self).close(self, states.iter().copied(), &mut out);
        out.sort_unstable();
        out
    }

    /// Builds the automaton of `partial` under `lexer`, spending at most
    /// `budget`. `limits[h]`, when given, bounds the bytes of hole `h`'s
    /// fill (see [`Spent`]); holes past the slice are unbounded.
    pub(crate) fn build(
        lexer: &Lexer,
        cache: &HoleCache,
        partial: &Partial,
        limits: &[Option<usize>],
        budget: &mut Budget,
        max_states: usize,
    ) -> Result<TokenNfa> {
        let built = Self::build_in(
            lexer,
            cache,
            partial,
            limits,
            budget,
            max_states,
            &[lexer.start],
            Mode::Whole,
        )?;
        Ok(built.into_nfa())
    }

    /// The automaton of `partial` as [`TokenNfa::build`] makes it, with
    /// every move weighed by the fixed bytes it *swallows*: bytes of the
    /// partial output's text read by a lexeme that began inside a hole (a
    /// fill that opens a comment or a string literal and so turns the text
    /// after it into that lexeme; also, more mildly, a fill that runs into
    /// the identifier or number after it). The language is the same; the
    /// witness search minimises terminals plus swallowed bytes on it.
    ///
    /// A configuration's lexer state carries a tag while its lexeme began
    /// in a hole. Tagged configurations are never merged with untagged
    /// ones where that would lose the weight: a hole's exits are tagged
    /// unless the lexeme in progress entered the hole from before it (its
    /// byte-only reach, [`Builder::byte_reach`]); a tagged lexeme that
    /// ends in the text ends by an edge per (terminal, position) weighing
    /// the bytes it read there (an ignored one by an ε-move, as it emits
    /// nothing); one that reads a whole chunk and enters the next hole
    /// does so by an ε-move weighing the chunk, into a hole state of its
    /// own. The weight of a lexeme running through several chunks is
    /// counted chunk by chunk. Bytes inside holes weigh nothing.
    pub(crate) fn build_weighed(
        lexer: &Lexer,
        cache: &HoleCache,
        partial: &Partial,
        budget: &mut Budget,
        max_states: usize,
    ) -> Result<TokenNfa> {
        let mode = if lexer.len() < TAG as usize {
            Mode::Weighed
        } else {
            Mode::Whole
        };
        let built = Self::build_in(
            lexer,
            cache,
            partial,
            &[],
            budget,
            max_states,
            &[lexer.start],
            mode,
        )?;
        Ok(built.into_nfa())
    }

    /// The automaton of `partial` read from each lexer state of `starts`,
    /// all in one: per start its entry state (`None` where nothing is
    /// accepted from it), from which the automaton accepts what it would
    /// read from that start alone. States are sets of configurations,
    /// made once whichever start reaches them, and after a lexeme or two
    /// most starts reach the same ones. The start state leads to every
    /// entry by ε-moves; starts whose closures are one state enter there,
    /// and starts with the same closure share an entry.
    pub(crate) fn build_entries(
        lexer: &Lexer,
        cache: &HoleCache,
        partial: &Partial,
        starts: &[u32],
        budget: &mut Budget,
        max_states: usize,
    ) -> Result<(TokenNfa, Vec<Option<u32>>)> {
        match Self::build_in(
            lexer,
            cache,
            partial,
            &[],
            budget,
            max_states,
            starts,
            Mode::Entries,
        )? {
            Built::Whole(nfa, entries) => Ok((nfa, entries)),
            // Only a prefix's build makes one.
            Built::Prefix(f) => Ok((f.nfa, vec![None; starts.len()])),
        }
    }

    /// The untrimmed automaton of `left` as the prefix of a longer text
    /// (see [`Frontier`]).
    pub(crate) fn build_prefix(
        lexer: &Lexer,
        cache: &HoleCache,
        left: &Partial,
        budget: &mut Budget,
        max_states: usize,
    ) -> Result<Frontier> {
        match Self::build_in(
            lexer,
            cache,
            left,
            &[],
            budget,
            max_states,
            &[lexer.start],
            Mode::Prefix,
        )? {
            Built::Prefix(f) => Ok(f),
            Built::Whole(nfa, _) => Ok(Frontier {
                nfa,
                at: Vec::new(),
            }),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn build_in(
        lexer: &Lexer,
        cache: &HoleCache,
        partial: &Partial,
        limits: &[Option<usize>],
        budget: &mut Budget,
        max_states: usize,
        starts: &[u32],
        mode: Mode,
    ) -> Result<Built> {
        let layout = Layout::new(partial)?;
        let mut view = HoleView::new(cache, lexer);
        let end = layout.end();
        let prefix = mode == Mode::Prefix;
        let weigh = mode == Mode::Weighed;
        let mut b = Builder {
            lx: lexer,
            layout: &layout,
            limits,
            prefix,
            weigh,
            stack: Vec::new(),
            cur: Vec::new(),
            next: Vec::new(),
            mark: vec![0; lexer.states.len() * (1 + weigh as usize)],
            tick: 1,
            holes: Vec::new(),
            hole_bits: Vec::new(),
            carry_bits: Vec::new(),
            swept: 0,
            hole_at: if weigh {
                layout.hole_positions()
            } else {
                Vec::new()
            },
            reach: FxMap::default(),
            carries: FxMap::default(),
            carry_sets: Vec::new(),
            costs: FxMap::default(),
            row: Vec::new(),
            landed: Vec::new(),
            landed_set: Vec::new(),
            chunk: Vec::new(),
        };
        let ceiling = budget.ceiling();
        // Room for about as many states as positions and four edges each
        // (what canvases take), up to a bound: growing by doubling copied
        // the containers several times per check.
        let hint = (end as usize).min(PRESIZE_MAX);
        let mut nodes = Nodes {
            kinds: Vec::new(),
            confs: Vec::new(),
            chunk_ids: FxMap::default(),
            same_hash: Vec::new(),
            hole_ids: FxMap::default(),
            ceiling,
        };
        ceiling.reserve(&mut nodes.kinds, hint)?;
        ceiling.reserve(&mut nodes.same_hash, hint)?;
        ceiling.admit(hint.saturating_mul(40))?;
        nodes.chunk_ids.reserve(hint / 2);
        nodes.hole_ids.reserve(hint / 2);
        // Node 0: a virtual start with ε-moves to the start closure's
        // states; with entries, to each start's entry: the one state of its
        // closure, or a node with ε-moves to the states of its closure (one
        // per distinct closure).
        nodes.kinds.push(Node::Start);
        nodes.same_hash.push(NO_NODE);
        let mut entry_targets: Vec<Targets> = Vec::new();
        let mut entry_of: Vec<u32> = Vec::new();
        let start_targets: Targets = if mode == Mode::Entries {
            let mut by_targets: FxMap<Targets, u32> = FxMap::default();
            ceiling.reserve(&mut entry_of, starts.len())?;
            for &l in starts {
                b.closure(&[conf(0, l)], budget)?;
                let targets = nodes.intern_set(&mut view, &mut b, max_states)?;
                let entry = match targets[..] {
                    [] => NO_NODE,
                    [(n, _)] => n,
                    _ => match by_targets.get(&targets) {
                        Some(&n) => n,
                        None => {
                            let n = nodes.new_id(max_states)?;
                            ceiling
                                .push(&mut nodes.kinds, Node::Entry(entry_targets.len() as u32))?;
                            ceiling.push(&mut nodes.same_hash, NO_NODE)?;
                            ceiling.room_in_map(&by_targets)?;
                            by_targets.insert(targets.clone(), n);
                            ceiling.push(&mut entry_targets, targets)?;
                            n
                        }
                    },
                };
                entry_of.push(entry);
            }
            let mut all: Vec<u32> = entry_of.iter().copied().filter(|&n| n != NO_NODE).collect();
            all.sort_unstable();
            all.dedup();
            all.into_iter().map(|n| (n, 0)).collect()
        } else {
            let seeds: Vec<Conf> = starts.iter().map(|&l| conf(0, l)).collect();
            b.closure(&seeds, budget)?;
            nodes.intern_set(&mut view, &mut b, max_states)?
        };
        let mut em = Emitter {
            memo: FxMap::default(),
            buckets: vec![Confs::new(); lexer.n_terms],
            touched: Vec::new(),
            tagged: Vec::new(),
        };
        let mut finals: Vec<bool> = Vec::new();
        ceiling.reserve(&mut finals, hint)?;
        // Edges per node, in node order; ε-moves are edges labelled `EPS`
        // until the automaton is trimmed.
        // A hole adds about an edge per terminal (C++: 100 terminals, 100
        // edges per hole of `dlm-cpp` canvases): growing past the hint
        // copied a canvas's edges three times per check, writing cache
        // lines a decoder's forward pass had evicted (a third of a check's
        // cache misses).
        let hole_edges = partial.n_holes().min(PRESIZE_MAX) * (lexer.n_terms + 12);
        ceiling.admit(hint.saturating_mul(36) + hole_edges * 8)?;
        let mut edges: Rows<(u32, u32)> = Rows::with_capacity(hint, 4 * hint + hole_edges);
        let mut exit_seeds: Vec<Conf> = Vec::new();
        let mut head = 0;
        while head < nodes.kinds.len() {
            let id = head;
            head += 1;
            budget.spend(1)?;
            let mut fin = false;
            match &nodes.kinds[id] {
                Node::Start => {
                    ceiling.push(&mut finals, false)?;
                    edges.reserve(ceiling, start_targets.len())?;
                    edges.push_row(start_targets.iter().map(|&(n, _)| (EPS, n)));
                    continue;
                }
                &Node::Entry(k) => {
                    let targets = &entry_targets[k as usize];
                    ceiling.push(&mut finals, false)?;
                    edges.reserve(ceiling, targets.len())?;
                    edges.push_row(targets.iter().map(|&(n, _)| (EPS, n)));
                    continue;
                }
                &Node::Chunk(at, n) => {
                    for &c in nodes.chunk(at, n) {
                        let (p, l) = unpack(c);
                        if prefix && p == end {
                            // The lexeme in progress at the end of a
                            // prefix ends, or not, in what follows.
                            continue;
                        }
                        fin |= p == end && !tagged(l) && lexer.is_fresh(l);
                        // The next lexeme starts at `p`: if it cannot read
                        // the text there, the end leads nowhere (an
                        // identifier ended inside itself, which maximal
                        // munch forbids), and closing it would only find
                        // an empty closure.
                        let e = lexer.emit[base(l) as usize];
                        if e != LDEAD
                            && p < end
                            && !layout.is_hole(p)
                            && lexer.next(e, layout.byte(p)) == LDEAD
                        {
                            continue;
                        }
                        em.emit(lexer, p, l);
                    }
                }
                &Node::Hole(p, set, used, carry) => {
                    // Emissions inside the hole: the grammar's cached hole
                    // DFA (unrolled by bytes spent in a limited hole).
                    // Leaving the hole with the lexeme in progress: one
                    // ε-move to the closure after it, instead of an edge on
                    // every terminal into it (and through it into every later
                    // hole a lexeme can span), which made the automaton
                    // quadratic in the holes.
                    let trans = view.transitions(set, b.keep_after(p));
                    let limit = b.limit_at(p);
                    edges.reserve(ceiling, trans.len())?;
                    let row = edges.items.len();
                    // Nearly every terminal leads to the same state (the
                    // hole's set after a lexeme end): 37 edges per hole state
                    // and one target on C++ canvases, where looking each up
                    // was a fifth of a decoder's check.
                    if limit.is_none() {
                        // Unlimited: a run of terminals into one set is
                        // one state, its edges copied in one go.
                        for run in trans.chunk_by(|a, b| a.1 == b.1) {
                            let target = nodes.intern_hole((p, run[0].1, used, 0), max_states)?;
                            edges.extend(run.iter().map(|&(t, _)| (t, target)));
                        }
                    } else {
                        // Limited: each terminal charges its shortest
                        // length, so a run may split by the bytes spent.
                        let mut last: Option<(u32, Spent, u32)> = None;
                        for &(t, next) in trans.iter() {
                            let Some(used) = used.after(limit, lexer.min_len[t as usize]) else {
                                continue;
                            };
                            let target = match last {
                                Some((n, u, target)) if n == next && u == used => target,
                                _ => {
                                    let target =
                                        nodes.intern_hole((p, next, used, 0), max_states)?;
                                    last = Some((next, used, target));
                                    target
                                }
                            };
                            edges.push((t, target));
                        }
                    }
                    budget.spend((edges.items.len() - row) as u64)?;
                    let bits = view.bits(set);
                    let keep = b.keep_after(p);
                    exit_seeds.clear();
                    if !b.weigh && !prefix && limit.is_none() && p + 1 < end {
                        // A lexeme in progress at the hole's end that ends
                        // (or is skipped) right there is the hole's own
                        // move on its terminal (its closure), then an exit
                        // in the state after it, which is in the next set
                        // (this one) and survives the mask if it reads the
                        // byte after the hole: ending it again at the
                        // first position after the hole only repeats
                        // those paths. So the lexemes in progress read
                        // that byte at once, and the exit is the closure
                        // of where they land (far fewer states: the many
                        // keyword prefixes an identifier may be inside a
                        // hole mostly land in one). Unlimited, unweighed
                        // holes only (a limited hole charges the bytes of
                        // its own moves; a weighed build weighs the two
                        // paths apart).
                        exit_seeds.extend(ones_of_both(&bits, keep).map(|l| conf(p + 1, l)));
                        b.exit_closure(p, &exit_seeds, true, budget)?;
                    } else {
                        // Weighed: a lexeme in progress leaving the hole
                        // began in it (tagged), unless it entered the hole
                        // from before (the entering lexemes' byte-only
                        // reach).
                        let from_before = b.carry_set(carry);
                        exit_seeds.extend(ones_of_both(&bits, keep).map(|l| {
                            let began_here = b.weigh
                                && !lexer.is_fresh(l)
                                && from_before
                                    .is_none_or(|r| r[l as usize / 64] & (1 << (l % 64)) == 0);
                            conf(p + 1, if began_here { l | TAG } else { l })
                        }));
                        b.exit_closure(p, &exit_seeds, false, budget)?;
                    }
                    let after = nodes.intern_set(&mut view, &mut b, max_states)?;
                    edges.reserve(ceiling, after.len())?;
                    // Two parts of a closure can be one state (a part
                    // that began in an earlier hole and one that did not):
                    // the move weighs the cheaper.
                    let id = id as u32;
                    for &(n, cost) in &after {
                        let cheapest = after.iter().filter(|a| a.0 == n).map(|a| a.1).min();
                        if cost > 0 && cheapest == Some(cost) {
                            b.weigh_move(id, EPS, n, cost, ceiling)?;
                        }
                    }
                    edges.push_row(after.iter().map(|&(n, _)| (EPS, n)));
                    ceiling.push(&mut finals, false)?;
                    continue;
                }
            }
            let mut cx = Closing {
                b: &mut b,
                nodes: &mut nodes,
                view: &mut view,
                budget: &mut *budget,
                max_states,
            };
            em.close(id as u32, &mut cx, &mut edges)?;
            ceiling.push(&mut finals, fin)?;
        }
        // What `trim` allocates: a few words per state and per edge.
        let n_edges = edges.n_items();
        ceiling.admit(
            nodes
                .kinds
                .len()
                .saturating_mul(160)
                .saturating_add(n_edges.saturating_mul(24)),
        )?;
        let spans: Vec<Span> = nodes.kinds.iter().map(|n| nodes.span(n)).collect();
        if prefix {
            return Ok(Built::Prefix(raw_prefix(&nodes, finals, edges, spans, end)));
        }
        let (nfa, entries) = trim(&finals, edges, &spans, &b.costs, &entry_of);
        Ok(Built::Whole(nfa, entries))
    }
}

impl TokenNfa {
    /// An automaton with these edges (per state, sorted), start state 0,
    /// no ε-move and no final state: the extension a prefix's chart grows
    /// by (see [`crate::intersect::Intersector::grow`]).
    pub(crate) fn from_edges(edges: Vec<Vec<(u32, u32)>>) -> TokenNfa {
        let n = edges.len();
        let mut rows = Rows::with_capacity(n, edges.iter().map(Vec::len).sum());
        for es in edges {
            rows.push_row(es);
        }
        TokenNfa {
            start: 0,
            finals: vec![false; n],
            edges: rows,
            eps: Rows::empty(n),
            spans: vec![NO_SPAN; n],
            edge_costs: Vec::new(),
            eps_costs: Vec::new(),
        }
    }
    /// The automaton reading one terminal of each of `sets` in turn, then
    /// a word of `then`; with its state where the first of `sets` leads
    /// (an extension of a prefix whose next terminal is in `first`, see
    /// [`crate::intersect::Intersector::extend`]): `(automaton, to)`.
    pub(crate) fn chain(first_then: &[&[u32]], then: &TokenNfa) -> (TokenNfa, u32) {
        let k = first_then.len() as u32;
        let n = k as usize + then.len();
        let mut edges = Rows::with_capacity(n, then.n_edges());
        for (i, set) in first_then.iter().enumerate() {
            let target = if i + 1 == k as usize {
                then.start + k
            } else {
                i as u32 + 1
            };
            edges.push_row(set.iter().map(|&t| (t, target)));
        }
        for es in then.edges.rows() {
            edges.push_row(es.iter().map(|&(t, d)| (t, d + k)));
        }
        let mut eps = Rows::empty(k as usize);
        for es in then.eps.rows() {
            eps.push_row(es.iter().map(|&d| d + k));
        }
        let mut finals = vec![false; k as usize];
        finals.extend_from_slice(&then.finals);
        let mut spans = vec![NO_SPAN; k as usize];
        spans.extend_from_slice(&then.spans);
        let to = if k == 0 { then.start } else { 0 };
        (
            TokenNfa {
                start: 0,
                finals,
                edges,
                eps,
                spans,
                edge_costs: Vec::new(),
                eps_costs: Vec::new(),
            },
            to,
        )
    }
}

/// What [`TokenNfa::build_in`] made.
enum Built {
    /// The automaton and, built with entries, per start its entry state
    /// (`None`: nothing is accepted from it).
    Whole(TokenNfa, Vec<Option<u32>>),
    Prefix(Frontier),
}

impl Built {
    /// The automaton, trimmed or (for a prefix) not.
    fn into_nfa(self) -> TokenNfa {
        match self {
            Built::Whole(nfa, _) => nfa,
            Built::Prefix(f) => f.nfa,
        }
    }
}

/// The automaton of a prefix `left` of a longer text, untrimmed and
/// unreduced (its states are the construction's, so they can be told
/// apart by the configurations they hold): no state is final, and the
/// lexemes in progress at the end of `left` neither end nor are skipped
/// there. A state holding the configuration `(|left|, l)` is a *frontier*
/// state of lexer state `l`: a word of `left · s · right` that passes
/// through `(|left|, l)` reads its terminals up to there along a path of
/// this automaton ending at such a state (and the terminals `s` emits from
/// `l` are scanned from it).
#[derive(Clone, Debug)]
pub(crate) struct Frontier {
    pub(crate) nfa: TokenNfa,
    /// `(lexer state, automaton state)` pairs of the frontier, sorted.
    pub(crate) at: Vec<(u32, u32)>,
}

/// The raw automaton of a prefix (see [`Frontier`]).
fn raw_prefix(
    nodes: &Nodes,
    finals: Vec<bool>,
    edges: Rows<(u32, u32)>,
    spans: Vec<Span>,
    end: u32,
) -> Frontier {
    let mut at = Vec::new();
    for (id, k) in nodes.kinds.iter().enumerate() {
        if let &Node::Chunk(a, n) = k {
            for &c in nodes.chunk(a, n) {
                let (p, l) = unpack(c);
                if p == end {
                    at.push((l, id as u32));
                }
            }
        }
    }
    at.sort_unstable();
    at.dedup();
    let (out_edges, out_eps) = split_eps(edges, None, Some);
    Frontier {
        nfa: TokenNfa {
            start: 0,
            finals,
            edges: out_edges,
            eps: out_eps,
            spans,
            edge_costs: Vec::new(),
            eps_costs: Vec::new(),
        },
        at,
    }
}

/// Collects, per terminal, the configurations an emission leads to, then
/// closes them into target states (memoised by seed list when the closure
/// was long: different states may emit into the same seeds before a long
/// lexeme).
struct Emitter {
    memo: FxMap<Confs, Targets>,
    buckets: Vec<Confs>,
    touched: Vec<u32>,
    /// Weighed builds: the ends of tagged lexemes, `(terminal, position,
    /// seed)`, an ignored lexeme's labelled [`EPS`]: each (terminal,
    /// position) is its own edge, weighing the bytes read at that position.
    tagged: Vec<(u32, u32, Conf)>,
}

/// The most states (positions) a check's containers are sized for before
/// they are needed.
const PRESIZE_MAX: usize = 1 << 14;

/// Closures that visit fewer configurations than this are not memoised: on
/// canvases nineteen in twenty closures are new and short, and storing them
/// cost more than redoing the few repeated ones (4 % of a 4 KB JSON canvas
/// check).
const MEMO_FROM: usize = 32;

/// The states a closure became (its chunk part and each hole part), each
/// with the fixed bytes swallowed on the way there (see
/// [`TokenNfa::build_weighed`]; 0 otherwise).
type Targets = SmallVec<[(u32, u32); 2]>;

impl Emitter {
    /// Ends the lexeme of configuration `(p, l)`, if it can end.
    fn emit(&mut self, lexer: &Lexer, p: u32, l: u32) {
        let e = lexer.emit[base(l) as usize];
        if e == LDEAD {
            return;
        }
        if tagged(l) {
            let l = base(l);
            for &t in lexer.emits(l) {
                self.tagged.push((t, p, conf(p, e)));
            }
            if lexer.skippable[l as usize] {
                self.tagged.push((EPS, p, conf(p, e)));
            }
            return;
        }
        for &t in lexer.emits(l) {
            let bk = &mut self.buckets[t as usize];
            if bk.is_empty() {
                self.touched.push(t);
            }
            bk.push(conf(p, e));
        }
    }

    /// Closes every bucket; returns the sorted edges to the target states
    /// (of state `src`).
    fn close(
        &mut self,
        src: u32,
        cx: &mut Closing<'_, '_, '_>,
        out: &mut Rows<(u32, u32)>,
    ) -> Result<()> {
        self.touched.sort_unstable();
        let row = out.items.len();
        out.reserve(cx.nodes.ceiling, self.touched.len())?;
        for i in 0..self.touched.len() {
            let t = self.touched[i];
            let seeds = &mut self.buckets[t as usize];
            seeds.sort_unstable();
            seeds.dedup();
            if let Some(targets) = self.memo.get(&**seeds) {
                out.items.extend(targets.iter().map(|&(n, _)| (t, n)));
                seeds.clear();
                continue;
            }
            let targets = cx.targets(seeds)?;
            out.items.extend(targets.iter().map(|&(n, _)| (t, n)));
            if cx.b.swept >= MEMO_FROM {
                cx.nodes.ceiling.room_in_map(&self.memo)?;
                self.memo.insert(std::mem::take(seeds), targets);
            } else {
                seeds.clear();
            }
        }
        self.touched.clear();
        sort_dedup(&mut out.items, row);
        if !self.tagged.is_empty() {
            self.close_tagged(src, row, cx, out)?;
        }
        out.end_row();
        Ok(())
    }

    /// The edges of the tagged lexemes' ends (weighed builds), added to the
    /// row of `src` begun at `row` (sorted, deduplicated): an edge that
    /// also exists without swallowing weighs nothing.
    fn close_tagged(
        &mut self,
        src: u32,
        row: usize,
        cx: &mut Closing<'_, '_, '_>,
        out: &mut Rows<(u32, u32)>,
    ) -> Result<()> {
        self.tagged.sort_unstable();
        let mut weighed = std::mem::take(&mut cx.b.row);
        weighed.clear();
        let mut seeds = Confs::new();
        let mut i = 0;
        while i < self.tagged.len() {
            let (t, p, _) = self.tagged[i];
            seeds.clear();
            while let Some(&(t2, p2, c)) = self.tagged.get(i) {
                if (t2, p2) != (t, p) {
                    break;
                }
                seeds.push(c);
                i += 1;
            }
            seeds.dedup();
            let targets = cx.targets(&seeds)?;
            let swallowed = p - cx.b.chunk_start(p);
            cx.nodes.ceiling.reserve(&mut weighed, targets.len())?;
            weighed.extend(targets.iter().map(|&(n, c)| (t, n, swallowed + c)));
        }
        self.tagged.clear();
        weighed.sort_unstable();
        let free = row..out.items.len();
        out.reserve(cx.nodes.ceiling, weighed.len())?;
        let mut last = None;
        for &(t, n, cost) in &weighed {
            if last == Some((t, n)) {
                continue; // a cheaper one came first
            }
            last = Some((t, n));
            if out.items[free.clone()].binary_search(&(t, n)).is_ok() {
                continue;
            }
            out.items.push((t, n));
            if cost > 0 {
                cx.b.weigh_move(src, t, n, cost, cx.nodes.ceiling)?;
            }
        }
        cx.b.row = weighed;
        sort_dedup(&mut out.items, row);
        Ok(())
    }
}

/// What closing a state's lexeme ends works with: the builder, the states
/// made so far, the check's view of the hole cache and the budget.
struct Closing<'c, 'b, 'v> {
    b: &'c mut Builder<'b>,
    nodes: &'c mut Nodes,
    view: &'c mut HoleView<'v>,
    budget: &'c mut Budget,
    max_states: usize,
}

impl Closing<'_, '_, '_> {
    /// The states the lexemes begun at `seeds` lead to: their closure,
    /// interned (with the bytes a part swallowed to get there).
    fn targets(&mut self, seeds: &[Conf]) -> Result<Targets> {
        self.b.closure(seeds, self.budget)?;
        self.nodes.intern_set(self.view, self.b, self.max_states)
    }
}

/// Sorts `items[from..]` and removes its duplicates, in place.
fn sort_dedup(items: &mut Vec<(u32, u32)>, from: usize) {
    items[from..].sort_unstable();
    let mut kept = from;
    for j in from..items.len() {
        if j == from || items[j] != items[kept - 1] {
            items[kept] = items[j];
            kept += 1;
        }
    }
    items.truncate(kept);
}

/// A state of the token automaton before trimming.
#[derive(Clone, Copy, Debug)]
enum Node {
    /// The virtual start.
    Start,
    /// An entry with ε-moves to the states of a start's closure, the
    /// `k`-th such ([`TokenNfa::build_entries`]).
    Entry(u32),
    /// A set of chunk configurations (determinised within the chunk):
    /// `n` of them from offset `at` of [`Nodes`]'s arena.
    Chunk(u32, u32),
    /// A hole position, a closed set of lexer states (id in the check's
    /// [`HoleView`]), in a limited hole the bytes spent so far, and, in a
    /// weighed build, which lexemes in progress entered the hole from
    /// before it (`0`: none, all lexemes in progress at its exits began in
    /// it; `k`: [`Builder::carry_set`]).
    Hole(u32, u32, Spent, u32),
}

/// Fills of at most this many bytes are limited as asked (the hole's states
/// are unrolled by bytes spent); a larger limit is treated as no limit,
/// which is sound (it only accepts more) and keeps the automaton within
/// `MAX_LIMIT + 2` copies of a hole's states. The search's work grows with
/// those copies, and a canvas has many small holes: on json-tiny's schema
/// canvases the constraint's time per sample was 1.9 ms without limits,
/// 5.0 / 7.0 / 14 / 177 ms with a cap of 4 / 8 / 16 / 64 bytes. The limits
/// that change decisions are those of the last few masks of a hole:
/// smiles-tiny's con-minus finished as often with a cap of 2 as of 16.
pub(crate) const MAX_LIMIT: usize = 8;

/// A lower bound on the bytes a limited hole's fill has used so far, from
/// the terminals emitted inside it: a lexeme that starts in the hole has at
/// least its terminal's shortest length (`Lexer::min_len`); the first one
/// may finish a lexeme begun before the hole, which costs nothing if the
/// hole was entered inside a lexeme (`carry`). Ignored lexemes and the
/// lexeme still in progress when the hole ends cost nothing. So a fill of
/// at most `n` bytes is never refused (soundness for the limited problem),
/// and the limit is exact when every terminal is one byte long and none is
/// ignored. `Spent(0)`: unlimited hole (no counting).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Spent(u32);

impl Spent {
    /// On entering a hole; `carry`: a lexeme is in progress.
    fn enter(limit: Option<u32>, carry: bool) -> Spent {
        match limit {
            None => Spent(0),
            // bit 0: the free first emission is used up; bits 1..: bytes, plus one.
            Some(_) => Spent(2 | (!carry) as u32),
        }
    }

    /// After emitting a terminal of shortest length `min_len`; `None` past
    /// `limit`.
    fn after(self, limit: Option<u32>, min_len: u32) -> Option<Spent> {
        let Some(limit) = limit else {
            return Some(self);
        };
        let (bytes, free) = ((self.0 >> 1) - 1, self.0 & 1 == 0);
        let bytes = if free {
            bytes
        } else {
            bytes.saturating_add(min_len)
        };
        (bytes <= limit).then(|| Spent(((bytes + 1) << 1) | 1))
    }
}

/// No state (the end of a [`Nodes::same_hash`] chain).
const NO_NODE: u32 = u32::MAX;

struct Nodes {
    kinds: Vec<Node>,
    /// The configurations of every chunk state, one after another.
    confs: Vec<Conf>,
    /// Chunk states by the hash of their configurations: the last one made
    /// with that hash, the others chained by `same_hash` (a state per
    /// hash, nearly always).
    chunk_ids: FxMap<u64, u32>,
    /// Per state: the chunk state made before it with the same hash
    /// ([`NO_NODE`]: none, or not a chunk state).
    same_hash: Vec<u32>,
    /// Hole states by (position, set, bytes spent, carry set): a smaller
    /// key, and most lookups are of hole states (one per terminal a hole
    /// state emits).
    hole_ids: FxMap<(u32, u32, u32, u32), u32>,
    ceiling: Ceiling,
}

impl Nodes {
    /// The configurations of chunk state `Chunk(at, n)`.
    fn chunk(&self, at: u32, n: u32) -> &[Conf] {
        &self.confs[at as usize..(at + n) as usize]
    }

    /// A key that never decreases along an edge and is equal only for states
    /// of one hole (the only cycles): positions advance by at least one byte
    /// between emissions in chunks.
    /// The positions where this state's terminals are emitted: a chunk
    /// state emits from its configurations (kept only if they can emit or
    /// end), a hole state inside its hole.
    fn span(&self, node: &Node) -> Span {
        match *node {
            Node::Start | Node::Entry(_) => NO_SPAN,
            Node::Chunk(at, n) => self
                .chunk(at, n)
                .iter()
                .fold(NO_SPAN, |acc, &c| join(acc, (unpack(c).0, unpack(c).0))),
            Node::Hole(p, _, _, _) => (p, p),
        }
    }

    /// The chunk state of configurations `set` (sorted), made if new.
    fn intern_chunk(&mut self, set: &[Conf], max_states: usize) -> Result<u32> {
        use std::hash::{Hash, Hasher};
        let mut h = crate::hash::FxHasher::default();
        set.hash(&mut h);
        let h = h.finish();
        let mut found = self.chunk_ids.get(&h).copied().unwrap_or(NO_NODE);
        while found != NO_NODE {
            if let Node::Chunk(at, n) = self.kinds[found as usize] {
                if self.chunk(at, n) == set {
                    return Ok(found);
                }
            }
            found = self.same_hash[found as usize];
        }
        let id = self.new_id(max_states)?;
        let at = self.confs.len() as u32;
        self.ceiling.reserve(&mut self.confs, set.len())?;
        self.confs.extend_from_slice(set);
        self.ceiling.room_in_map(&self.chunk_ids)?;
        let before = self.chunk_ids.insert(h, id).unwrap_or(NO_NODE);
        self.ceiling.push(&mut self.same_hash, before)?;
        self.ceiling
            .push(&mut self.kinds, Node::Chunk(at, set.len() as u32))?;
        Ok(id)
    }

    /// The id of the next state made, within `max_states`.
    fn new_id(&self, max_states: usize) -> Result<u32> {
        if self.kinds.len() >= max_states {
            return Err(Error::limit(
                Limit::PartialStates,
                max_states as u64 + 1,
                max_states as u64,
                format!(
                    "the partial output's terminal automaton needs more than {max_states} states"
                ),
            ));
        }
        Ok(self.kinds.len() as u32)
    }

    /// The hole state `Hole(p, set, used, carry)`, made if new.
    fn intern_hole(
        &mut self,
        (p, set, used, carry): (u32, u32, Spent, u32),
        max_states: usize,
    ) -> Result<u32> {
        if let Some(&id) = self.hole_ids.get(&(p, set, used.0, carry)) {
            return Ok(id);
        }
        let id = self.new_id(max_states)?;
        self.ceiling.room_in_map(&self.hole_ids)?;
        self.hole_ids.insert((p, set, used.0, carry), id);
        self.ceiling.push(&mut self.same_hash, NO_NODE)?;
        self.ceiling
            .push(&mut self.kinds, Node::Hole(p, set, used, carry))?;
        Ok(id)
    }

    /// The states of a closure: its chunk part (if any) and each hole part
    /// (those of the builder's last closure), with the bytes swallowed on
    /// the way: a hole part entered by lexemes that began in an earlier
    /// hole (weighed builds) weighs the chunk they read to get there.
    fn intern_set(
        &mut self,
        view: &mut HoleView<'_>,
        b: &mut Builder<'_>,
        max_states: usize,
    ) -> Result<Targets> {
        let mut out = Targets::new();
        if !b.chunk.is_empty() {
            out.push((self.intern_chunk(&b.chunk, max_states)?, 0));
        }
        let w = b.lx.words;
        for i in 0..b.holes.len() {
            let (p, carry, began_before) = b.holes[i];
            let bits = &b.hole_bits[i * w..(i + 1) * w];
            let id = view.intern(bits, b.follow(p), b.keep_after(p));
            let used = Spent::enter(b.limit_at(p), carry);
            let (from_before, cost) = match (began_before, b.weigh) {
                (true, _) => (0, p - b.chunk_start(p)),
                (false, true) => (b.intern_carry(i, &view.bits(id), self.ceiling)?, 0),
                (false, false) => (0, 0),
            };
            let node = (p, id, used, from_before);
            out.push((self.intern_hole(node, max_states)?, cost));
        }
        Ok(out)
    }
}

/// Keeps the states that can reach a final state (all are reachable from
/// 0), in their order; edges labelled [`EPS`] become the ε-moves; `costs`
/// weighs the moves `(from, label, to)` that swallow bytes (empty: none).
/// Also returns the new names of the states `entries` (`None`: dropped,
/// or [`NO_NODE`]).
fn trim(
    finals: &[bool],
    edges: Rows<(u32, u32)>,
    spans: &[Span],
    costs: &FxMap<(u32, u32, u32), u32>,
    entries: &[u32],
) -> (TokenNfa, Vec<Option<u32>>) {
    let n = finals.len();
    let alive = live_states(finals, &edges);
    if n == 0 || !alive[0] {
        let nfa = TokenNfa {
            start: 0,
            finals: Vec::new(),
            edges: Rows::empty(0),
            eps: Rows::empty(0),
            spans: Vec::new(),
            edge_costs: Vec::new(),
            eps_costs: Vec::new(),
        };
        return (nfa, vec![None; entries.len()]);
    }
    // The live states keep their order. The construction numbers states
    // breadth-first from 0 (each when an edge first reaches it), so every
    // state is reachable and the order is canonical.
    let mut new_id = vec![u32::MAX; n];
    let mut order = Vec::with_capacity(n);
    for s in 0..n {
        if alive[s] {
            new_id[s] = order.len() as u32;
            order.push(s as u32);
        }
    }
    let rename = |d: u32| {
        let d = new_id[d as usize];
        (d != u32::MAX).then_some(d)
    };
    let entry_ids = entries
        .iter()
        .map(|&e| (e != NO_NODE).then(|| rename(e)).flatten())
        .collect();
    // The weights, in the same order as the moves kept (read before the
    // moves are renamed in place).
    let (mut edge_costs, mut eps_costs) = (Vec::new(), Vec::new());
    if !costs.is_empty() {
        for &s in &order {
            for &(t, d) in edges.row(s as usize) {
                if rename(d).is_some() {
                    let c = costs.get(&(s, t, d)).copied().unwrap_or(0);
                    match t {
                        EPS => eps_costs.push(c),
                        _ => edge_costs.push(c),
                    }
                }
            }
        }
    }
    // Every state live (what canvases build): the names stay.
    let (out_edges, out_eps) = match order.len() == n {
        true => split_eps(edges, None, Some),
        false => split_eps(edges, Some(&order), rename),
    };
    let nfa = TokenNfa {
        start: 0,
        finals: order.iter().map(|&s| finals[s as usize]).collect(),
        edges: out_edges,
        eps: out_eps,
        spans: order.iter().map(|&s| spans[s as usize]).collect(),
        edge_costs,
        eps_costs,
    };
    (nfa, entry_ids)
}

/// Which states can reach a final state. The construction numbers states
/// in the order edges first reach them, so most edges go to a higher
/// number: sweeping the states from the last to the first marks nearly
/// every live state in one sweep, a row stopping at its first live target
/// (a hole state's ~37 edges mostly lead to one state). A second sweep
/// that marks nothing new shows the fixpoint; where sweeps keep marking (a
/// long chain of edges to lower numbers) the reverse graph is searched
/// instead. Building that graph for every check — two passes over every
/// edge — was a sixth of a canvas automaton's construction.
fn live_states(finals: &[bool], edges: &Rows<(u32, u32)>) -> Vec<bool> {
    let n = finals.len();
    let mut alive = finals.to_vec();
    for _ in 0..LIVE_SWEEPS {
        let mut marked = false;
        for s in (0..n).rev() {
            // From a row's end: its ε-moves (last) lead on, a hole
            // state's terminal edges mostly back to itself.
            if !alive[s] && edges.row(s).iter().rev().any(|&(_, d)| alive[d as usize]) {
                alive[s] = true;
                marked = true;
            }
        }
        if !marked {
            return alive;
        }
    }
    live_by_reverse_search(finals, edges)
}

/// Sweeps [`live_states`] makes before it searches the reverse graph.
const LIVE_SWEEPS: usize = 3;

/// [`live_states`] by a search of the reverse graph from the final states.
fn live_by_reverse_search(finals: &[bool], edges: &Rows<(u32, u32)>) -> Vec<bool> {
    let n = finals.len();
    // Reverse edges in one array: the sources of `d` are
    // `rev[rev_at[d]..rev_at[d + 1]]`. Only which states lead to which
    // matters here, so a row's runs of edges into one state count once.
    fn targets(es: &[(u32, u32)]) -> impl Iterator<Item = u32> + '_ {
        let mut last = u32::MAX;
        es.iter().filter_map(move |&(_, d)| {
            let new = d != last;
            last = d;
            new.then_some(d)
        })
    }
    let mut rev_at = vec![0u32; n + 1];
    for es in edges.rows() {
        for d in targets(es) {
            rev_at[d as usize + 1] += 1;
        }
    }
    for i in 0..n {
        rev_at[i + 1] += rev_at[i];
    }
    let mut fill = rev_at.clone();
    let mut rev = vec![0u32; rev_at[n] as usize];
    for (s, es) in edges.rows().enumerate() {
        for d in targets(es) {
            rev[fill[d as usize] as usize] = s as u32;
            fill[d as usize] += 1;
        }
    }
    let mut alive = finals.to_vec();
    let mut stack: Vec<u32> = (0..n as u32).filter(|&s| finals[s as usize]).collect();
    while let Some(s) = stack.pop() {
        for &r in &rev[rev_at[s as usize] as usize..rev_at[s as usize + 1] as usize] {
            if !alive[r as usize] {
                alive[r as usize] = true;
                stack.push(r);
            }
        }
    }
    alive
}

/// The terminal edges and the ε-moves (edges labelled [`EPS`]) of the
/// rows of `edges` named by `keep` (ascending; `None`: every row), targets
/// renamed by `rename` (`None`: the edge is dropped). The terminal edges
/// stay in `edges`' own array, moved down over what is dropped: a canvas's
/// automaton has thousands of them (a hole state's dozens of terminals),
/// and copying them into a fresh array wrote as much memory again, cold
/// after a decoder's forward pass.
fn split_eps(
    mut edges: Rows<(u32, u32)>,
    keep: Option<&[u32]>,
    rename: impl Fn(u32) -> Option<u32>,
) -> (Rows<(u32, u32)>, Rows<u32>) {
    let n_rows = keep.map_or(edges.at.len() - 1, <[u32]>::len);
    let mut at = Vec::with_capacity(n_rows + 1);
    at.push(0);
    let mut eps = Rows::with_capacity(n_rows, 0);
    // Runs of edges into one state (a hole state's) rename it once.
    let mut last = (u32::MAX, None);
    let mut w = 0;
    for k in 0..n_rows {
        let s = keep.map_or(k, |keep| keep[k] as usize);
        // Rows ascend, so `w` never passes the row being read.
        for i in edges.at[s] as usize..edges.at[s + 1] as usize {
            let (t, d) = edges.items[i];
            if d != last.0 {
                last = (d, rename(d));
            }
            match (t, last.1) {
                (_, None) => {}
                (EPS, Some(d)) => eps.push(d),
                (_, Some(d)) => {
                    edges.items[w] = (t, d);
                    w += 1;
                }
            }
        }
        at.push(w as u32);
        eps.end_row();
    }
    edges.items.truncate(w);
    edges.at = at;
    (edges, eps)
}

/// The indices of the bits set in both `a` and `b`, ascending (word by
/// word: a hole's set holds hundreds of lexer states, of which the next
/// byte keeps a few dozen; testing each was a tenth of a C++ canvas check).
fn ones_of_both<'a>(a: &'a [u64], b: &'a [u64]) -> impl Iterator<Item = u32> + 'a {
    a.iter()
        .zip(b)
        .enumerate()
        .flat_map(|(i, (&x, &y))| word_ones(i, x & y))
}

/// The indices of the set bits of `bits`, ascending.
pub(crate) fn ones(bits: &[u64]) -> impl Iterator<Item = u32> + '_ {
    bits.iter().enumerate().flat_map(|(i, &w)| word_ones(i, w))
}

/// The indices of the set bits of `w`, word `i` of a bitset, ascending.
fn word_ones(i: usize, mut w: u64) -> impl Iterator<Item = u32> {
    std::iter::from_fn(move || {
        if w == 0 {
            return None;
        }
        let b = w.trailing_zeros();
        w &= w - 1;
        Some(i as u32 * 64 + b)
    })
}

struct Builder<'a> {
    lx: &'a Lexer,
    layout: &'a Layout,
    limits: &'a [Option<usize>],
    /// Building a prefix ([`Frontier`]): configurations at the end stay.
    prefix: bool,
    /// Weighing moves by the bytes they swallow
    /// ([`TokenNfa::build_weighed`]): lexer states may carry [`TAG`].
    weigh: bool,
    /// Scratch for [`Builder::closure`]: sorted seeds, the lexer states at
    /// the current and next position, and their stamps per lexer state.
    stack: Vec<Conf>,
    cur: Vec<u32>,
    next: Vec<u32>,
    mark: Vec<u32>,
    tick: u32,
    /// The hole parts of the last closure: `(hole position, whether a
    /// lexeme in progress enters it, whether those lexemes began in an
    /// earlier hole)` (weighed builds split a hole's part by the last), by
    /// position, and their lexer-state bitsets (`lx.words` words each, in
    /// the same order).
    holes: Vec<(u32, bool, bool)>,
    hole_bits: Vec<u64>,
    /// Weighed builds: per hole part, the byte-only reach of the lexemes
    /// in progress that entered it from before it (as `hole_bits`).
    carry_bits: Vec<u64>,
    /// The configurations the last closure visited.
    swept: usize,
    /// Weighed builds: the hole positions, ascending.
    hole_at: Vec<u32>,
    /// Weighed builds: [`Builder::byte_reach`] per lexer state.
    reach: FxMap<u32, Vec<u64>>,
    /// Weighed builds: the carry sets of hole states (id `k` is
    /// `carry_sets[k - 1]`; see [`Node::Hole`]).
    carries: FxMap<Vec<u64>, u32>,
    carry_sets: Vec<Vec<u64>>,
    /// Weighed builds: the moves `(from, label, to)` that swallow bytes,
    /// and how many.
    costs: FxMap<(u32, u32, u32), u32>,
    /// Scratch for [`Emitter::close_tagged`].
    row: Vec<(u32, u32, u32)>,
    /// Scratch for [`Builder::exit_sweep`]: where the lexemes leaving a
    /// hole land on the byte after it.
    landed: Vec<Conf>,
    /// The same as a bitset of lexer states (`lx.words` words).
    landed_set: Vec<u64>,
    /// The chunk part of the last closure ([`Builder::closure`]): its
    /// configurations that can emit or end, sorted (one buffer for every
    /// closure of a build; a state keeps a copy in [`Nodes`]'s arena).
    chunk: Vec<Conf>,
}

impl Builder<'_> {
    /// The position after the last hole before `p` (0 if none): where a
    /// lexeme in progress at `p` that began in a hole started reading text.
    fn chunk_start(&self, p: u32) -> u32 {
        match self.hole_at.partition_point(|&h| h < p) {
            0 => 0,
            i => self.hole_at[i - 1] + 1,
        }
    }

    /// Records that the move `(from, label, to)` swallows `cost` bytes.
    fn weigh_move(
        &mut self,
        from: u32,
        label: u32,
        to: u32,
        cost: u32,
        ceiling: Ceiling,
    ) -> crate::budget::Fits {
        ceiling.room_in_map(&self.costs)?;
        let c = self.costs.entry((from, label, to)).or_insert(cost);
        *c = (*c).min(cost);
        Ok(())
    }

    /// Computes, into `reach`, the lexer states reachable from `l` by bytes
    /// alone (its lexeme going on, no lexeme ended), as a bitset.
    fn byte_reach(&mut self, l: u32, budget: &mut Budget) -> Result<()> {
        if !self.reach.contains_key(&l) {
            let lx = self.lx;
            let mut bits = vec![0u64; lx.words];
            bits[l as usize / 64] |= 1 << (l % 64);
            let mut stack = vec![l];
            while let Some(x) = stack.pop() {
                budget.spend(lx.n_classes() as u64)?;
                for c in 0..lx.n_classes() {
                    let n = lx.next_class(x, c);
                    if n != LDEAD && bits[n as usize / 64] & (1 << (n % 64)) == 0 {
                        bits[n as usize / 64] |= 1 << (n % 64);
                        stack.push(n);
                    }
                }
            }
            budget.ceiling().room_in_map(&self.reach)?;
            budget.ceiling().admit(lx.words * 8)?;
            self.reach.insert(l, bits);
        }
        Ok(())
    }

    /// The carry id of hole part `i` of the last closure whose (masked)
    /// set is `set`: 0 if no lexeme that entered it from before it is in
    /// the set, else the id of those states.
    fn intern_carry(&mut self, i: usize, set: &[u64], ceiling: Ceiling) -> Fits<u32> {
        let w = self.lx.words;
        let mut carry: Vec<u64> = self.carry_bits[i * w..(i + 1) * w]
            .iter()
            .zip(set)
            .map(|(a, b)| a & b)
            .collect();
        if carry.iter().all(|&x| x == 0) {
            return Ok(0);
        }
        if let Some(&k) = self.carries.get(&carry) {
            return Ok(k);
        }
        carry.shrink_to_fit();
        ceiling.room_in_map(&self.carries)?;
        ceiling.admit(w * 16)?;
        self.carry_sets.push(carry.clone());
        let k = self.carry_sets.len() as u32;
        self.carries.insert(carry, k);
        Ok(k)
    }

    /// The lexer states of carry id `k` (see [`Builder::intern_carry`]).
    fn carry_set(&self, k: u32) -> Option<&[u64]> {
        (k > 0).then(|| self.carry_sets[k as usize - 1].as_slice())
    }

    /// The byte limit of the hole at `p` (`None`: unlimited, or a limit
    /// above [`MAX_LIMIT`]).
    fn limit_at(&self, p: u32) -> Option<u32> {
        if self.limits.is_empty() {
            return None;
        }
        match self.limits.get(self.layout.hole_of(p)) {
            Some(&Some(n)) if n <= MAX_LIMIT => Some(n as u32),
            _ => None,
        }
    }

    /// The lexer states worth leaving the hole at `p`: those that survive the
    /// next byte (ending a lexeme right at the hole's end happens inside the
    /// hole) or, at the end of the text, those between lexemes.
    fn follow(&self, p: u32) -> u16 {
        if p + 1 == self.layout.end() {
            256
        } else {
            self.layout.byte(p + 1) as u16
        }
    }

    fn keep_after(&self, p: u32) -> &[u64] {
        if p + 1 == self.layout.end() {
            &self.lx.fresh_set
        } else {
            self.lx.live_on(self.layout.byte(p + 1))
        }
    }

    /// [`Builder::exit_sweep`] of the states leaving the hole at `p`
    /// (seeds at `p + 1`; with `step`, reading the byte there first), from
    /// this thread's [`exits`] memo when the same states left a hole before
    /// the same text the same way in an earlier build (the budget is
    /// charged what the closure spent then, so answers and budget errors do
    /// not depend on what the thread did before).
    fn exit_closure(
        &mut self,
        p: u32,
        seeds: &[Conf],
        step: bool,
        budget: &mut Budget,
    ) -> Result<()> {
        let from = p + 1;
        if self.weigh || self.prefix || seeds.is_empty() || !exits::kept() {
            return self.exit_sweep(p, seeds, step, budget);
        }
        let Some(text) = self.layout.segment(from, exits::MAX_TEXT) else {
            return self.exit_sweep(p, seeds, step, budget);
        };
        let states: SmallVec<[u32; 32]> = seeds.iter().map(|&c| unpack(c).1).collect();
        let key = exits::Key {
            lexer: self.lx.uid,
            step,
            states: &states,
            text,
        };
        if let Some(spent) = exits::replay(&key, from, self) {
            return budget.spend(spent);
        }
        let before = budget.left();
        self.exit_sweep(p, seeds, step, budget)?;
        exits::record(&key, from, self, before - budget.left());
        Ok(())
    }

    /// The closure of the lexer states `seeds` leaving the hole at `p`;
    /// with `step`, of where they land reading the byte after the hole
    /// (see the hole states in [`TokenNfa::build_in`]).
    fn exit_sweep(
        &mut self,
        p: u32,
        seeds: &[Conf],
        step: bool,
        budget: &mut Budget,
    ) -> Result<()> {
        if !step {
            return self.closure(seeds, budget);
        }
        let byte = self.layout.byte(p + 1);
        // Where they land, as a set of lexer states (in order, once each).
        let mut set = std::mem::take(&mut self.landed_set);
        set.clear();
        set.resize(self.lx.words, 0);
        budget.spend(seeds.len() as u64)?;
        for &c in seeds {
            let n = self.lx.next(unpack(c).1, byte);
            set[n as usize / 64] |= 1 << (n % 64);
        }
        set[LDEAD as usize / 64] &= !(1 << (LDEAD % 64));
        let mut landed = std::mem::take(&mut self.landed);
        landed.clear();
        landed.extend(ones(&set).map(|n| conf(p + 2, n)));
        self.landed_set = set;
        let done = self.closure(&landed, budget);
        self.landed = landed;
        done
    }

    /// ε-closure within one segment of the text: byte steps (forced in
    /// chunks) and skips of ignored lexemes, up to the end or the first hole.
    /// A hole stops it: its part is the set of lexer states reachable inside
    /// it (the precomputed hole closure of each entering L-state, or-ed into
    /// the hole's bitset at once); leaving the hole is the hole state's
    /// ε-move, built when that state is.
    ///
    /// It sweeps positions in order (the seeds sorted by position; a byte
    /// step moves one position on), keeping the lexer states at the current
    /// and the next position deduplicated by stamps: no hashing, and each
    /// configuration is visited once.
    ///
    /// Leaves the chunk configurations that can emit or end in
    /// `self.chunk`, sorted; the
    /// hole parts are left in `self.holes` and `self.hole_bits`.
    fn closure(&mut self, seeds: &[Conf], budget: &mut Budget) -> Result<()> {
        let lx = self.lx;
        let end = self.layout.end();
        let w = lx.words;
        let n_states = lx.len();
        // A tagged state's stamp is kept past the untagged ones'.
        let slot = |x: u32| base(x) as usize + (x >> 31) as usize * n_states;
        self.holes.clear();
        self.hole_bits.clear();
        self.carry_bits.clear();
        self.swept = 0;
        let mut chunk = std::mem::take(&mut self.chunk);
        chunk.clear();
        let ceiling = budget.ceiling();
        let mut seeds_sorted = std::mem::take(&mut self.stack);
        seeds_sorted.clear();
        seeds_sorted.extend_from_slice(seeds);
        seeds_sorted.sort_unstable();
        let mut cur = std::mem::take(&mut self.cur);
        let mut next = std::mem::take(&mut self.next);
        cur.clear();
        // Stamps: `tick` marks the states at the current position,
        // `tick + 1` those at the next one.
        if self.tick > u32::MAX - 4 {
            self.mark.iter_mut().for_each(|x| *x = 0);
            self.tick = 1;
        }
        self.tick += 2;
        let mut si = 0;
        let mut p = 0u32;
        loop {
            if cur.is_empty() {
                let Some(&c) = seeds_sorted.get(si) else {
                    break;
                };
                p = unpack(c).0;
                self.tick += 2;
            }
            let (here, there) = (self.tick, self.tick + 1);
            while let Some(&c) = seeds_sorted.get(si) {
                let (q, l) = unpack(c);
                if q != p {
                    break;
                }
                si += 1;
                if self.mark[slot(l)] != here {
                    self.mark[slot(l)] = here;
                    cur.push(l);
                }
            }
            if p < end && self.layout.is_hole(p) {
                // The sweep reaches each position once, in order. A
                // weighed build gives the lexemes that began in an
                // earlier hole a part of their own.
                let mut parts = [usize::MAX; 2];
                for &x in &cur {
                    budget.spend(1)?;
                    let (l, t) = (base(x), tagged(x));
                    let hi = match parts[t as usize] {
                        usize::MAX => {
                            let hi = self.holes.len();
                            self.holes.push((p, false, t));
                            ceiling.reserve(&mut self.hole_bits, w)?;
                            self.hole_bits.resize((hi + 1) * w, 0);
                            if self.weigh {
                                ceiling.reserve(&mut self.carry_bits, w)?;
                                self.carry_bits.resize((hi + 1) * w, 0);
                            }
                            parts[t as usize] = hi;
                            hi
                        }
                        hi => hi,
                    };
                    let fresh = lx.is_fresh(l);
                    self.holes[hi].1 |= !fresh;
                    if self.weigh && !t && !fresh {
                        self.byte_reach(l, budget)?;
                        let reach = &self.reach[&l];
                        for (b, c) in self.carry_bits[hi * w..].iter_mut().zip(reach) {
                            *b |= c;
                        }
                    }
                    let bits = &mut self.hole_bits[hi * w..];
                    if bits[l as usize / 64] & (1 << (l % 64)) != 0 {
                        continue;
                    }
                    for (b, c) in bits.iter_mut().zip(lx.hole_closure(l)) {
                        *b |= c;
                    }
                    budget.spend(w as u64)?;
                }
                cur.clear();
                continue;
            }
            // Skips of ignored lexemes stay at this position (not at the
            // end of a prefix: there, what follows decides).
            let mut i = if self.prefix && p == end {
                cur.len()
            } else {
                0
            };
            while i < cur.len() {
                budget.spend(1)?;
                let l = cur[i];
                // A tagged ignored lexeme ends by a weighed ε-move instead
                // (see `Emitter::emit`).
                if !tagged(l) && lx.skippable[l as usize] {
                    let e = lx.emit[l as usize];
                    if self.mark[e as usize] != here {
                        self.mark[e as usize] = here;
                        cur.push(e);
                    }
                }
                i += 1;
            }
            next.clear();
            self.swept += cur.len();
            let batch = chunk.len();
            for &l in &cur {
                // Chunk configurations that can neither emit nor end are
                // useless.
                let b = base(l);
                if lx.emit[b as usize] != LDEAD || (p == end && (self.prefix || lx.is_fresh(b))) {
                    if chunk.len() == chunk.capacity() {
                        ceiling.admit(chunk.capacity() * 2 * std::mem::size_of::<Conf>())?;
                    }
                    chunk.push(conf(p, l));
                }
                if p < end {
                    let n = lx.next(base(l), self.layout.byte(p));
                    let n = if n == LDEAD { n } else { n | (l & TAG) };
                    if n != LDEAD && self.mark[slot(n)] != there {
                        self.mark[slot(n)] = there;
                        next.push(n);
                    }
                }
            }
            // Sorted as it is made: positions only grow, each is swept once.
            chunk[batch..].sort_unstable();
            std::mem::swap(&mut cur, &mut next);
            p += 1;
            self.tick += 1;
            // Seeds behind the sweep cannot exist: they are sorted and the
            // sweep only jumps forward to the next one.
        }
        self.stack = seeds_sorted;
        self.cur = cur;
        self.next = next;
        debug_assert!(chunk.is_sorted());
        self.chunk = chunk;
        Ok(())
    }
}

/// Keeps the closures that leave holes on this thread, for the builds of
/// token automata until the guard is dropped (then they are dropped too):
/// a decoder checks one canvas after another, each a token away from the
/// last, and replays nearly all of them (see the `exits` module below).
/// Guards nest.
pub(crate) fn keep_hole_exits() -> exits::Keep {
    exits::Keep::new()
}

/// Hole exits replayed across builds ([`Builder::exit_closure`]), while a
/// [`keep_hole_exits`] guard lives on the thread.
///
/// A decoder checks one canvas after another, each a token away from the
/// last: nearly every hole is left by the same lexer states before the same
/// text as in the build before, so the closure that sweeps that text (a
/// quarter of a `dlm-cpp` canvas check) is the same up to its position. The
/// closures are kept per thread, by lexer, states and text (up to
/// [`MAX_TEXT`] positions), with positions relative to the segment, up to
/// [`MAX_BYTES`] in all (then dropped at once). Within one build no two
/// exits share states and text (counted), so a build alone gains nothing,
/// and on unrelated canvases keeping costs: C++ canvases (0.5–2 KB, one
/// cold check each) 8–15 % slower at the median, which is why only
/// decoders turn it on.
pub(crate) mod exits {
    use super::{Builder, Conf};
    use crate::hash::FxMap;
    use std::cell::{Cell, RefCell};
    use std::hash::{Hash, Hasher};

    /// Longest segment (positions, the closing hole included) kept.
    pub(super) const MAX_TEXT: u32 = 256;
    /// Most bytes kept per thread.
    const MAX_BYTES: usize = 8 << 20;

    /// What a closure leaving a hole depends on.
    pub(super) struct Key<'a> {
        pub(super) lexer: u64,
        /// The states read the text's first byte before the closure
        /// ([`Builder::exit_sweep`]).
        pub(super) step: bool,
        pub(super) states: &'a [u32],
        pub(super) text: &'a [u16],
    }

    struct Entry {
        step: bool,
        states: Box<[u32]>,
        text: Box<[u16]>,
        /// The chunk configurations, positions relative to the segment.
        chunk: Box<[Conf]>,
        /// The hole parts (relative positions) and their bits.
        holes: Box<[(u32, bool, bool)]>,
        bits: Box<[u64]>,
        swept: usize,
        /// Budget units the closure spent.
        spent: u64,
    }

    #[derive(Default)]
    struct Memo {
        lexer: u64,
        map: FxMap<u64, Vec<Entry>>,
        bytes: usize,
    }

    thread_local! {
        static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
        static KEEPERS: Cell<u32> = const { Cell::new(0) };
    }

    /// See [`super::keep_hole_exits`]. Not `Send`: it counts on the
    /// thread that made it.
    pub(crate) struct Keep(std::marker::PhantomData<*const ()>);

    impl Keep {
        pub(super) fn new() -> Keep {
            KEEPERS.with(|k| k.set(k.get() + 1));
            Keep(std::marker::PhantomData)
        }
    }

    impl Drop for Keep {
        fn drop(&mut self) {
            let left = KEEPERS.with(|k| {
                k.set(k.get().saturating_sub(1));
                k.get()
            });
            if left == 0 {
                MEMO.with(|m| *m.borrow_mut() = Memo::default());
            }
        }
    }

    /// Whether a guard lives on this thread.
    pub(super) fn kept() -> bool {
        KEEPERS.with(|k| k.get() > 0)
    }

    fn hash(key: &Key<'_>) -> u64 {
        let mut h = crate::hash::FxHasher::default();
        key.step.hash(&mut h);
        key.states.hash(&mut h);
        key.text.hash(&mut h);
        h.finish()
    }

    /// The kept closure of `key` at position `from`, written into `b`'s
    /// hole parts as [`Builder::closure`] would, with the units it spent.
    pub(super) fn replay(key: &Key<'_>, from: u32, b: &mut Builder<'_>) -> Option<u64> {
        MEMO.with(|m| {
            let m = m.borrow();
            if m.lexer != key.lexer {
                return None;
            }
            let e =
                m.map.get(&hash(key))?.iter().find(|e| {
                    e.step == key.step && *e.states == *key.states && *e.text == *key.text
                })?;
            let base = u64::from(from) << 32;
            b.chunk.clear();
            b.chunk.extend(e.chunk.iter().map(|&c| c + base));
            b.holes.clear();
            b.holes
                .extend(e.holes.iter().map(|&(q, x, y)| (q + from, x, y)));
            b.hole_bits.clear();
            b.hole_bits.extend_from_slice(&e.bits);
            b.carry_bits.clear();
            b.swept = e.swept;
            Some(e.spent)
        })
    }

    /// Keeps the closure just computed by `b` for `key` at `from`.
    pub(super) fn record(key: &Key<'_>, from: u32, b: &Builder<'_>, spent: u64) {
        MEMO.with(|m| {
            let mut m = m.borrow_mut();
            if m.lexer != key.lexer || m.bytes > MAX_BYTES {
                m.map.clear();
                m.bytes = 0;
                m.lexer = key.lexer;
            }
            let base = u64::from(from) << 32;
            let e = Entry {
                step: key.step,
                states: key.states.into(),
                text: key.text.into(),
                chunk: b.chunk.iter().map(|&c| c - base).collect(),
                holes: b.holes.iter().map(|&(q, x, y)| (q - from, x, y)).collect(),
                bits: b.hole_bits.as_slice().into(),
                swept: b.swept,
                spent,
            };
            m.bytes += 96
                + 4 * e.states.len()
                + 2 * e.text.len()
                + 8 * e.chunk.len()
                + 12 * e.holes.len()
                + 8 * e.bits.len();
            m.map.entry(hash(key)).or_default().push(e);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// Random graphs of `n` states: mostly edges to higher numbers (as the
    /// construction makes), some to lower ones and self-loops, runs of
    /// edges into one state, a few final states.
    fn graph(rng: &mut SplitMix64, n: u32, back: u64) -> (Vec<bool>, Rows<(u32, u32)>) {
        let finals: Vec<bool> = (0..n).map(|_| rng.below(8) == 0).collect();
        let mut edges = Rows::with_capacity(n as usize, 0);
        for s in 0..n {
            for _ in 0..rng.below(4) {
                let d = match rng.below(100) < back {
                    true => rng.below(u64::from(s) + 1) as u32,
                    false => s + rng.below(u64::from(n - s)) as u32,
                };
                for t in 0..1 + rng.below(3) as u32 {
                    edges.push((t, d));
                }
            }
            edges.end_row();
        }
        (finals, edges)
    }

    #[test]
    fn live_states_by_sweeps_equal_the_reverse_search() {
        let mut rng = SplitMix64::new(7);
        let mut fell_back = 0;
        for case in 0..3000 {
            let n = 1 + rng.below(40) as u32;
            let back = [0, 10, 50, 90][case % 4];
            let (finals, edges) = graph(&mut rng, n, back);
            let exact = live_by_reverse_search(&finals, &edges);
            assert_eq!(live_states(&finals, &edges), exact, "case {case}");
            // How often the sweeps alone would not have reached it.
            let mut alive = finals.clone();
            for _ in 0..LIVE_SWEEPS {
                for s in (0..n as usize).rev() {
                    if edges.row(s).iter().any(|&(_, d)| alive[d as usize]) {
                        alive[s] = true;
                    }
                }
            }
            fell_back += usize::from(alive != exact);
        }
        // Both ways are exercised: chains of back edges need the search.
        assert!(fell_back > 0);
    }

    #[test]
    fn a_chain_of_edges_to_lower_states_is_live() {
        // 4 -> 3 -> 2 -> 1 -> 0 (final), each edge to a lower number: one
        // sweep marks one state, so the search decides.
        let n = 5;
        let finals: Vec<bool> = (0..n).map(|s| s == 0).collect();
        let mut edges = Rows::with_capacity(n, 0);
        edges.push_row(std::iter::empty());
        for s in 1..n as u32 {
            edges.push_row([(0, s - 1)]);
        }
        assert_eq!(live_states(&finals, &edges), vec![true; n]);
    }

    /// Every terminal word of at most `len` terminals that `nfa` accepts.
    fn words(nfa: &TokenNfa, n_terms: u32, len: usize) -> Vec<Vec<u32>> {
        let mut out = Vec::new();
        let mut layer: Vec<Vec<u32>> = vec![Vec::new()];
        for _ in 0..=len {
            out.extend(layer.iter().filter(|w| nfa.accepts(w)).cloned());
            layer = layer
                .iter()
                .flat_map(|w| {
                    (0..n_terms).map(move |t| {
                        let mut w = w.clone();
                        w.push(t);
                        w
                    })
                })
                .collect();
        }
        out
    }

    /// The automaton with an entry per lexer state accepts, from each
    /// entry, the words the automaton read from that state alone accepts
    /// (and has no entry exactly where that one is empty).
    #[test]
    fn entries_accept_what_each_start_alone_does() {
        use crate::grammar::Grammar;
        let grammars = [
            "start: (KW \"(\" ID \")\")*\nKW: \"if\"\nID: /[a-z]+/\n%ignore \" \"",
            "start: (A B)*\nA: \"a\"\nB: \"ab\" | \"b\"",
            "start: \"x\" (\",\" \"x\")*\nCOMMENT: /\\/\\*([^*]|\\*+[^*\\/])*\\*+\\//\n%ignore COMMENT",
            "start: \"[\" NUM (\",\" NUM)* \"]\"\nNUM: /[0-9]+(\\.[0-9]+)?/",
        ];
        let alphabets: [&[u8]; 4] = [b"if() ", b"ab", b"x,/*", b"[1.,]"];
        let mut rng = SplitMix64::new(3);
        let mut with_entries = 0;
        for (src, bytes) in grammars.iter().zip(alphabets) {
            let g = Grammar::from_lark(src, None).unwrap();
            let lx = Lexer::new(&g, crate::lexer::DEFAULT_LEXER_LIMIT).unwrap();
            let cache = HoleCache::default();
            let starts: Vec<u32> = (0..lx.len() as u32).collect();
            for _ in 0..40 {
                let mut p = Partial::new();
                for _ in 0..rng.below(4) {
                    match rng.below(3) {
                        0 => p = p.hole(),
                        _ => {
                            let n = 1 + rng.below(3) as usize;
                            let t: Vec<u8> = (0..n)
                                .map(|_| bytes[rng.below(bytes.len() as u64) as usize])
                                .collect();
                            p = p.text(&t);
                        }
                    }
                }
                let mut budget = Budget::new(1 << 24, "test");
                let (nfa, entries) =
                    TokenNfa::build_entries(&lx, &cache, &p, &starts, &mut budget, 1 << 16)
                        .unwrap();
                for (l, entry) in entries.iter().enumerate() {
                    // The automaton read from `l` alone, as a whole build
                    // (one start set, no entries).
                    let alone = TokenNfa::build_in(
                        &lx,
                        &cache,
                        &p,
                        &[],
                        &mut budget,
                        1 << 16,
                        &[l as u32],
                        Mode::Whole,
                    )
                    .unwrap()
                    .into_nfa();
                    let Some(e) = entry else {
                        assert!(alone.is_empty(), "{p:?} from {l}");
                        continue;
                    };
                    with_entries += 1;
                    let mut from = nfa.clone();
                    from.start = *e;
                    let n = lx.n_terms as u32;
                    assert_eq!(words(&from, n, 4), words(&alone, n, 4), "{p:?} from {l}");
                }
            }
        }
        assert!(with_entries > 100);
    }
}

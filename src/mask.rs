//! Which tokens keep a partial output completable at one insertion point:
//! reused checks and allowed-token masks.
//!
//! A decoder asks the same question many times at one point of its output:
//! "is `left · t · right` still completable?" for proposed tokens `t` (every
//! step of autoregressive infilling, where `right` is the rest of the
//! template after a hole; every rejection of a diffusion step). Checking
//! each from scratch costs a full [`Constraint::check`]. [`Insertion`]
//! answers them exactly with far fewer checks:
//!
//! * **Reuse by lexing relation.** Completability of `left · t · right`
//!   depends on `t` only through the relation between the lexer states
//!   before and after `t` and the terminal sets emitted in between (see the
//!   lexer's insertion-point docs). Most tokens share a relation with many
//!   others — every identifier continuing an identifier, every number,
//!   every `);` after any of them — so [`Insertion::allows`] computes the
//!   relation (a few steps per byte) and runs a check only for a relation
//!   it has not seen.
//! * **Pruning by prefixes.** When `right` starts with a hole, `left · s ·
//!   right` not completable means no token extending `s` is allowed either
//!   (the hole could have held the extension). [`Insertion::mask`] walks
//!   the vocabulary as a byte trie ([`Vocabulary`]), computing the relation
//!   once per trie node, skipping subtrees where every lexing died or the
//!   prefix is refused, and checking once per new relation: the mask over
//!   a whole vocabulary, exactly equal to asking [`Constraint::check`] token
//!   by token (which the tests verify). The relation of a trie node
//!   depends only on the lexer states at the point, so from the second
//!   point with the same states on, the vocabulary keeps the walk for
//!   them (`Walk`): the distinct relations, the token ids of each, and
//!   which relations lie directly under which (nearest ancestors with
//!   tokens). A mask then never walks the trie: it decides the relations
//!   reachable from the root through allowed ones, in the order the trie
//!   walk would meet them, and sets the tokens of the allowed ones. Inside
//!   a JSON string, where nearly every token shares one relation, walking
//!   the trie was the whole cost (Qwen2 vocabulary, JSON: p90 2.5 → 0.4
//!   ms, median 0.4 → 0.19–0.20 ms with the ids set by runs; C++ median
//!   11.9 → 9–10 ms; building a walk costs 0.3–6 ms, once per set of
//!   lexer states; walks are kept up to 96 MiB, least recently used first
//!   out).
//! * **Walks shared by lexer states that read alike.** A walk depends on
//!   its lexer states only through how they read bytes, so states that
//!   read every byte string alike share one (their twins, see `twins`:
//!   in C++ the 25 states after a finished punctuator, which differ only
//!   in the terminal they emit first, and 111 states that cannot end
//!   their lexeme); a point whose one state reads otherwise than a kept
//!   walk's only on a few byte classes (an identifier that may still
//!   become a keyword: `whi` against `ab`, on `l`) takes that walk for
//!   the tokens whose first byte is of another class and walks the
//!   subtrees of those classes itself (see `near_classes`; a relation of
//!   the walk whose bytes begin with such a class is not asked — its
//!   bytes do not have its rows there — and the walk serves only where
//!   every such relation lies wholly under those classes). Over Qwen2's
//!   vocabulary, C++ at 100 fresh points: mean 3.55–3.58 → 3.01–3.02
//!   ms, p90 7.1–7.3 → 5.9–6.0 ms, median 3.10–3.13 → 2.78–2.81 ms (a
//!   fresh point's masks from kept walks are now mostly their searches:
//!   1,000–1,400 of them, 2.4–3.1 ms); in the autoregressive loop mean
//!   1.88–1.89 → 1.72 ms, p90 4.3–4.4 → 3.5 ms.
//! * **The chart of `left`, once.** When `left` has no hole (every step of
//!   autoregressive infilling), or a few holes but ends in fixed text (a
//!   diffusion canvas where a position keeps being refused), a new
//!   relation does not need a check of the whole text: the automaton of `left` as a prefix and its phase-1 chart
//!   (every item, to the fixpoint, with every production predicted at the
//!   states where `left` ends) are built on the first check at the point,
//!   the automaton of `right` once with an entry per lexer state `l₁` an
//!   insertion can leave, and a relation is decided by moving the items
//!   waiting at the end of `left` over its terminals into `right`'s
//!   automaton and searching on from there (`Prefix` below; the intersection module's `extend`).
//!   Same answers (the mask tests compare every token with a full check and
//!   assert that both ways are used); over Qwen2's 151,667 tokens a C++
//!   mask took a median 161 ms with a full check per relation, 31 ms so.
//!   The chart of `right` is kept too (its items whose origin is in
//!   `right` do not depend on the relation, nor on the entry it came in
//!   by; the intersection module's `Tail`), so an autoregressive loop,
//!   whose `right` never changes, searches it about once per region
//!   instead of once per new relation. One automaton with an entry per
//!   `l₁`, not one per `l₁`: read from most lexer states, `right` reaches
//!   the same sets of configurations after its first lexeme or two, so
//!   they are made and searched once (about 7 automata and charts of
//!   `right` per region of a C++ file before; `insertion_cost` on the 2.3
//!   KB file, per proposal: 89–100 → 38 µs, functions 27 → 24 µs; C++
//!   masks about a fifth faster). Its entries, not the text, are most of
//!   an automaton's cost (C++ has 689 lexer states), and a point asks
//!   for few of them (a region of the autoregressive loop 2–13, a fresh
//!   mask 20–55, about 50–120 over a run), so it is made for the states
//!   the constraint has learned points ask for, a state it was not made
//!   for gets an automaton of its own (up to four), and only past those
//!   is it made for every state; a point that expects few proposals
//!   reads `right` from its first `l₁` alone until a second one comes
//!   (see `tail_for`). `insertion_cost` per proposal: C++ functions
//!   21.6–25.8 → 14.2–16.4 µs, the 2.3 KB file 36.7–43.4 → 32.1–34.9 µs.
//! * **Rows that subsume each other.** When `right` starts with a hole,
//!   a row `(l₀, τ, l₁)` allows what the hole allows from the lexer states
//!   its bytes reach from `l₁` (`l₁`'s hole closure), and that grows with
//!   the set: a row whose closure holds an allowed row's is allowed, one
//!   whose closure lies inside a refused row's is refused (same `l₀` and
//!   `τ`). In C++ a token ending inside an identifier leaves a lexer state
//!   per keyword it may still become (`f`, `fo`, `whi`, …), hundreds of
//!   relations that differ only there; each of their closures holds the
//!   plain identifier's state, so a row not yet implied searches that
//!   state's row first (the member of its closure with the smallest
//!   closure) and, when it is allowed, every such row is answered without
//!   a search. A C++ mask over Qwen2's vocabulary: median 31 → 12 ms.
//! * **Rows whose last lexeme ends at the point.** A row whose lexeme in
//!   progress cannot go on into `right` — nothing extends it, or `right`
//!   begins with a byte it cannot read (an identifier before `)`, a space
//!   before punctuation) — and after which the lexer reads `right` as from
//!   its start state is its terminals (or nothing, for a skipped lexeme)
//!   followed by `right` read from the start state: all such rows share
//!   that one automaton of `right` and its kept chart instead of one per
//!   `l₁`. A C++ mask over Qwen2's vocabulary directly before fixed text
//!   (a diffusion canvas's position before committed tokens): median
//!   13.0–13.5 → 8.3–8.6 ms.
//! * **Completions remembered across searches.** A completion that
//!   starts in the chart of `left` (not in the insertion's own terminals)
//!   and ends in `right` leads to the goal or not whatever was inserted:
//!   what it wakes are `left`'s items, which never change, and what those
//!   need next is `right`'s. A point that expects many proposals (a mask,
//!   an autoregressive loop) keeps the ones a successful search passed
//!   through on its way to the goal, and a later search that completes
//!   one has its answer (see the intersection module's `Tail::search`).
//!   In a C++ mask about 40 % of the searches succeed, and each cost about
//!   350 work units against 20 for a refused one; now every success but a
//!   point's first ends at a remembered completion. C++ masks in the
//!   autoregressive loop: median 5.2–5.3 → 4.7–4.8 ms, p90 12.1–12.8 →
//!   10.1–10.6 ms. A completion that starts in the layers grown for an
//!   insertion's own terminals (below) is remembered too, by the layer
//!   it starts in: those layers are put back only where they were grown,
//!   so a row's second search (another `l₁`, or a longer row on the same
//!   layers) stops where the first one's climb did (the tail searches of
//!   a C++ mask: −29 % instructions).
//! * **Terminals grown on the layers of their first ones.** A row's
//!   terminals grow the chart of `left` for its search, and the layers
//!   grown are kept for the next row with the same terminals. A row whose
//!   terminals are new mostly extends an earlier row's (the trie is
//!   walked in order: `)` before `);`, eight `*` before sixteen): its
//!   search puts back the kept layers of its longest first run that has
//!   them and grows only the rest, from their last state, where every
//!   production is predicted as at the end of `left`. The chart is then
//!   the one `advance` would build over those terminals, so the answers
//!   are the same (the mask tests compare every token with a full check).
//!   In C++ masks the rows grew 8.75 terminals on average (runs of
//!   operators are lexed one terminal at a time) and 97 % of them found
//!   layers for all but 1.8 of those: the work of growing fell by 63 %,
//!   a mask's by 21 % (instructions, `valgrind --tool=callgrind`); C++
//!   masks in the autoregressive loop: median 5.0 → 4.0–4.3 ms, p90
//!   10.8–11.6 → 8.5–8.9 ms (alternating runs in a slow phase).
//! * **Rows kept while the point moves.** A row's answer depends on its
//!   `l₀` only through `l₀`'s frontier states in the chart of `left`,
//!   whose items never change as the chart grows; `right` does not
//!   change in an autoregressive loop. Rows answered from the chart are
//!   kept by `(l₁, frontier states, τ)` across [`Insertion::advance`], so
//!   after a token that emits no terminal (inside an identifier, a
//!   string, a comment, spaces: about half the steps of C++ code) the
//!   next mask finds most of its rows answered. C++ masks in the
//!   autoregressive loop: median 2.2–2.5 → 1.4 ms (alternating runs in a
//!   slow phase). Frontier states are keyed by name, not by id: a state
//!   is named by the items waiting there and, bottom up, by what
//!   completions from their origins lead to, so a new frontier state in
//!   the same context as an earlier one (after each operand of a chain of
//!   `+`, each argument, each statement of a block) finds the earlier
//!   one's rows (see `KeptRows`). C++ masks in the autoregressive loop:
//!   median 1.34 → 1.10 ms (the median of ten alternating runs in a slow
//!   phase; the loop's instructions −2 %: the rows kept are those of the
//!   cheaper masks). Only a point that moves or expects many proposals
//!   ([`Insertion::advance`], [`Insertion::expecting_many`]) names its
//!   frontier states: a diffusion decoder's points, which stay where they
//!   are, paid more for the names than for their searches (a `dlm-cpp`
//!   decode's constraint time 64 → 115 ms per sample).
//! * **Charts kept across points.** A constraint keeps the charts of the
//!   fixed texts before its points (when built, and when a point that
//!   moved is dropped; `Config::kept_charts`, 64 MiB): a point whose
//!   `left` starts with a kept text grows that chart by the rest, as
//!   [`Insertion::advance`] does, instead of parsing `left` (see the
//!   charts module). The next region of a template starts from the
//!   chart the last one ended with; points at several places of one
//!   file share what lies before the nearest. `insertion_cost` on the 2.3
//!   KB file with 30-byte regions, per proposal: 32.1–33.2 → 29.1–29.2 µs
//!   over 40 regions, 26.4–26.7 → 22.4 µs over 200 (instructions −16 % and
//!   −23 %); C++ functions (each its own document) and masks alike.
//! * **Texts after other points.** When `right` is `□ · S`, what
//!   `left · t · □` refuses the point refuses, and what
//!   `left · t · □ · X · S` allows (a longer text ending with `S`) it
//!   allows: the hole can hold `S`, or `X`, too. A point that expects many
//!   proposals keeps the automata of its `right` with their charts in the
//!   constraint when dropped (`Config::kept_tails`, 64 MiB); a later point
//!   asks the automaton of `□` alone and the longest kept text ending with
//!   its `S` (from the row's `l₁`) before making its own, which was one
//!   parse of `S` per region (see the charts module). In C++ the two
//!   answer nearly every row. Kept automata (those of an `S` of 512
//!   bytes or more, `Config::kept_tails_from`) are made for every lexer
//!   state at the first state they were not made for: later points ask
//!   for other states.
//!   `insertion_cost` on the 2.3 KB file with 30-byte regions, per
//!   proposal: 22.7 → 10.7 µs over 200 regions, 27.3–27.8 → 10.9–11.3 µs
//!   over 40 taken in order, 28.8–28.9 → 19.3 µs over 40 at random
//!   places (instructions −59 %, −64 %, −45 %); C++ masks and functions
//!   alike.
//!
//! Cost: [`Insertion::new`] lexes `left` once (`O(|left|)`); a query costs
//! `O(|t|)` plus, per new relation, one search of its terminals and `right`
//! (a full check where the chart of `left` does not apply: `left` ending
//! in a hole or with more than 8 holes, hole limits); a mask costs one
//! table read per trie node visited (the lexer steps once per new pair of
//! a relation and a byte class: `Relations`) plus that per distinct
//! relation of an allowed prefix.
//! [`Insertion::advance`] moves the point past accepted bytes in
//! `O(bytes)`, so an autoregressive loop never re-lexes its prefix, and
//! grows the chart of `left` by the terminals the bytes emit (one Earley
//! step over them: the new items and the older items they complete), so
//! it never re-parses its prefix either: the chart of a whole text is
//! built once, token by token.

use crate::charts::{tail_key, KeptChart, KeptTail, Reach, Tails, Want, NO_ENTRY};
use crate::completable::{Constraint, FEW_HOLES};
use crate::error::Result;
use crate::hash::{FxMap, FxSet};
use crate::intersect::{Base, Entering, Grown, Growth, Seed, Tail};
use crate::lexer::{Point, Row, Rows, TokenNfa};
use crate::partial::{Partial, Segment};
use std::sync::{Arc, Mutex, PoisonError};

/// A vocabulary as a byte trie in preorder: token ids by their bytes, with
/// each node's subtree a contiguous range, so a walk skips a subtree by one
/// jump. Chains of nodes without tokens and with one child are merged
/// into the edge below them (a node holds the bytes of its edge): half of
/// Qwen2's 333,223 nodes are such, and a walk pays for a node (its
/// tokens, its place on the path, a branch the processor cannot predict)
/// besides the read of the successor table that each byte costs. A kept
/// walk's build visits every node: C++ masks at fresh points (the
/// report's 100), p90 8.1–8.9 → 6.8–7.9 ms.
///
/// ```
/// use cdiff::mask::Vocabulary;
/// let v = Vocabulary::new(&["a", "ab", "b", ""]);
/// assert_eq!(v.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Vocabulary {
    /// The bytes of the edge into node `k` are
    /// `labels[label_at[k]..label_at[k + 1]]` (none for the root, at
    /// least one for every other node).
    label_at: Vec<u32>,
    labels: Vec<u8>,
    /// Per node: its depth in nodes (the root is 0).
    depth: Vec<u32>,
    /// The largest depth in nodes.
    max_depth: usize,
    /// Per node: the index just past its subtree.
    end: Vec<u32>,
    /// The tokens of node `k` are `ids[at[k]..at[k + 1]]`.
    at: Vec<u32>,
    ids: Vec<u32>,
    /// Number of token ids.
    n_ids: usize,
    /// Relations of every node from start states seen more than once
    /// (see [`Walk`]).
    walks: WalkCache,
}

/// The walks a vocabulary keeps: a cache, so a clone starts without
/// them.
#[derive(Debug, Default)]
struct WalkCache(Mutex<Walks>);

impl Clone for WalkCache {
    fn clone(&self) -> WalkCache {
        WalkCache::default()
    }
}

/// No relation: the root, as the nearest ancestor with tokens.
const ROOT: u32 = u32::MAX;

/// Walks kept per vocabulary: at most this many, and at most
/// [`MAX_WALK_BYTES`] in all, the least recently used going first.
const MAX_WALKS: usize = 512;

/// The heap bytes of the walks kept per vocabulary, at most (Qwen2's
/// 151,667 tokens: a C++ walk holds 0.7–1 MB, a JSON one 0.03–0.07 MB).
/// A C++ autoregressive loop over 300 regions met 77 sets of lexer states
/// with walks; 32 walks kept (the cap before) rebuilt 171 of them.
const MAX_WALK_BYTES: usize = 96 << 20;

/// The distinct lexing relations of a vocabulary's trie nodes, read from
/// one set of lexer states (an insertion point's `l₀`s) by one lexer, with
/// the token ids of each and how they nest. A node's relation depends on
/// nothing else, so every insertion point with those states decides each
/// relation once as before without walking the trie at all: a mask is then
/// the relations to decide (those under an allowed prefix, see
/// [`Walk::kids`]) and the token ids of the allowed ones. Inside a JSON
/// string, where nearly all 151,667 Qwen2 tokens share one relation,
/// walking the trie was the whole cost of a mask.
#[derive(Debug)]
struct Walk {
    /// Relations as rows `(index of l₀, emitted terminal-set ids, l)`,
    /// sorted.
    rels: Vec<Vec<(u32, Vec<u32>, u32)>>,
    /// Per relation `r`: the token ids of its nodes (the root's excepted)
    /// as runs of consecutive ids `start..end`, ascending,
    /// `runs[runs_at[r]..runs_at[r + 1]]`: a mask sets them by ranges (in
    /// a JSON string one relation holds nearly every id, in a few thousand
    /// runs; setting them one by one in trie order was a kept-walk mask's
    /// whole time).
    runs_at: Vec<u32>,
    runs: Vec<(u32, u32)>,
    /// Per relation: the bytes of one of its nodes with tokens, for a check
    /// that needs the text (`bytes[bytes_at[r]..bytes_at[r + 1]]`).
    bytes_at: Vec<u32>,
    bytes: Vec<u8>,
    /// Per relation: how many nodes with tokens have it.
    nodes: Vec<u32>,
    /// The relations of the nodes with tokens whose nearest ancestor with
    /// tokens is the root, sorted.
    roots: Vec<u32>,
    /// Per relation `p`: the relations of the nodes with tokens whose
    /// nearest ancestor with tokens has relation `p` (`p` itself left
    /// out), sorted, `kids[kids_at[p]..kids_at[p + 1]]`.
    kids_at: Vec<u32>,
    kids: Vec<u32>,
    /// The lexer states `l₀` it was walked from. It serves every point
    /// whose states are their twins ([`twins`]): where a state's twin
    /// emits other terminals at its lexeme's end, every row of index `i`
    /// with terminals starts with `from[i]`'s set, which such a point
    /// reads as its own state's ([`Walk::sequence`]).
    from: Vec<u32>,
    /// Per relation: the classes of the first bytes of its nodes with
    /// tokens, a bit set of `class_words` words
    /// (`classes[r * class_words..][..class_words]`): a mask from a near
    /// twin ([`near_classes`]) asks a relation only with bytes that have
    /// its rows there ([`Walk::near_fits`]).
    classes: Vec<u64>,
    class_words: usize,
}

/// Key of a [`Walk`]: the lexer's id and the twins of its start states.
type WalkKey = (u64, Box<[u32]>);

/// Per lexer state, its twin: the smallest state from which every byte
/// string is read alike — the same successor on every byte class, the
/// same state after the lexeme's end, skipped alike — and that emits the
/// same terminal set at the lexeme's end, or any non-empty set where the
/// lexeme cannot go on and is not skipped. A vocabulary's walk from a
/// state then serves its twins (in C++, the 25 states after a finished
/// punctuator share one walk, and 111 states that cannot end their
/// lexeme and read alike another): the same relations of the same tokens,
/// their rows the same but, where the sets differ, for the first terminal
/// set, which the lexeme cut at the point emits before any other (nothing
/// goes on from it). Costs one pass over the lexer's table.
fn twins(lx: &crate::lexer::Lexer) -> Vec<u32> {
    let n = lx.emit.len();
    let k = lx.n_classes();
    let mut first: FxMap<(&[u32], u32, bool, u32), u32> = FxMap::default();
    (0..n)
        .map(|l| {
            let next = &lx.step[l * k..(l + 1) * k];
            let ends_here = next.iter().all(|&x| x == crate::lexer::LDEAD)
                && !lx.skippable[l]
                && !lx.emits(l as u32).is_empty();
            let set = match ends_here {
                true => u32::MAX,
                false => lx.emit_terms[l],
            };
            *first
                .entry((next, lx.emit[l], lx.skippable[l], set))
                .or_insert(l as u32)
        })
        .collect()
}

#[derive(Debug, Default)]
struct Walks {
    /// The twins of the last lexer's states ([`twins`]), by its id.
    twins: Option<(u64, Arc<[u32]>)>,
    /// Start states seen once: a walk is built the second time.
    seen: FxSet<WalkKey>,
    /// The walks kept, when each was last used (by `clock`) and its heap
    /// bytes ([`Walk::heap_bytes`]).
    walks: FxMap<WalkKey, (Arc<Walk>, u64, usize)>,
    clock: u64,
    /// The heap bytes of the walks kept ([`Walk::heap_bytes`]).
    bytes: usize,
}

/// A relation's successor not computed yet (a slot of
/// [`Relations::next`]).
const SLOT_UNSEEN: u16 = u16::MAX - 1;

/// Every lexing died (a slot of [`Relations::next`]).
const SLOT_DEAD: u16 = u16::MAX;

/// Every lexing died ([`Relations::child`]).
const DEAD: u32 = u32::MAX;

/// Entries of a walk's table of successors, at most (8 MiB), for the
/// first 65,534 relations at most: relations met past it step the lexer
/// at every node, so a lexer with very many byte classes and relations
/// costs time, not memory (C++ over Qwen2: about 4,700 relations × 100
/// classes).
const MAX_SUCCESSORS: usize = 1 << 22;

/// The relations met by one walk of a vocabulary's trie from one point,
/// each a distinct set of rows interned once (relation 0: the empty
/// insertion's), and the successor of each relation on each byte class
/// as it is first needed. A node's relation is its parent's stepped by the
/// node's byte, and the step depends only on the parent's rows and the
/// byte's class (the point interns the emitted sequences, so equal rows
/// step to equal rows), so the walk steps the lexer once per new (relation,
/// class) pair and reads a table for every other node. In C++ a token's
/// bytes mostly stay in relations already met (the letters of an
/// identifier, the spaces of an indentation): a Qwen2 walk met about
/// 190,000 nodes, each stepped the lexer and hashed its rows (9.5 ms).
struct Relations {
    /// The rows of relation `r`: `rows[at[r]..at[r + 1]]`.
    rows: Vec<Row>,
    at: Vec<u32>,
    /// The first relation whose rows hash to a value; `same[r]`: the next
    /// relation after `r` with the same hash (`DEAD`: none). The rows are
    /// stored once, in `rows`.
    by_hash: FxMap<u64, u32>,
    same: Vec<u32>,
    /// `next[r * n_classes + c]`: the relation after relation `r` reads a
    /// byte of class `c` (`SLOT_UNSEEN`, or `SLOT_DEAD` when every lexing
    /// dies), for the relations met before the table reached `max_next`
    /// entries, numbered below [`SLOT_UNSEEN`]. Two bytes a slot: a walk
    /// stalls on the table's reads more than anywhere else (C++ over
    /// Qwen2: 4,700 relations × 100 classes, 0.9 MB so).
    next: Vec<u16>,
    n_classes: usize,
    max_next: usize,
    /// Scratch for a step.
    out: Vec<Row>,
}

impl Relations {
    /// Relation 0 only: `start`'s rows.
    fn new(lx: &crate::lexer::Lexer, start: &[Row]) -> Relations {
        Relations::with_table(lx, start, MAX_SUCCESSORS)
    }

    /// [`Relations::new`] with a table of at most `max_next` successors.
    fn with_table(lx: &crate::lexer::Lexer, start: &[Row], max_next: usize) -> Relations {
        let t = spare::take();
        let mut rel = Relations {
            rows: t.rows,
            at: t.at,
            by_hash: t.by_hash,
            same: t.same,
            next: t.next,
            n_classes: lx.n_classes(),
            max_next,
            out: t.out,
        };
        rel.at.push(0);
        rel.intern(start);
        rel
    }

    /// The number of relations met.
    fn len(&self) -> usize {
        self.at.len() - 1
    }

    /// The rows of relation `r`.
    fn rows(&self, r: u32) -> &[Row] {
        &self.rows[self.at[r as usize] as usize..self.at[r as usize + 1] as usize]
    }

    /// The id of relation `rows` (new ones numbered in the order met).
    fn intern(&mut self, rows: &[Row]) -> u32 {
        use std::hash::Hasher;
        let mut h = crate::hash::FxHasher::default();
        for &(i, seq, l) in rows {
            h.write_u64(u64::from(i) << 32 | u64::from(seq));
            h.write_u32(l);
        }
        let h = h.finish();
        let first = self.by_hash.get(&h).copied().unwrap_or(DEAD);
        let mut r = first;
        while r != DEAD {
            if self.rows(r) == rows {
                return r;
            }
            r = self.same[r as usize];
        }
        let r = self.len() as u32;
        self.by_hash.insert(h, r);
        self.same.push(first);
        self.rows.extend_from_slice(rows);
        self.at.push(self.rows.len() as u32);
        // Once full, the table takes no relation after: a relation has a
        // row of it iff its id is below `next.len() / n_classes`.
        if self.next.len() + self.n_classes <= self.max_next
            && self.next.len() == r as usize * self.n_classes
            && r < u32::from(SLOT_UNSEEN)
        {
            self.next
                .resize(self.next.len() + self.n_classes, SLOT_UNSEEN);
        }
        r
    }

    /// The relation after relation `r` reads byte `b` (`DEAD` when every
    /// lexing dies), stepped by `point` the first time.
    #[inline(always)]
    fn child(&mut self, lx: &crate::lexer::Lexer, point: &mut Point, r: u32, b: u8) -> u32 {
        let at = r as usize * self.n_classes + lx.class(b);
        match self.next.get(at) {
            Some(&SLOT_DEAD) => DEAD,
            Some(&x) if x != SLOT_UNSEEN => u32::from(x),
            _ => self.stepped(lx, point, r, b, at),
        }
    }

    /// [`Relations::child`] the first time (or past the table): `point`
    /// steps relation `r`'s rows by `b`, and the table's slot `at` (if it
    /// has one) remembers the relation they become.
    #[inline(never)]
    fn stepped(
        &mut self,
        lx: &crate::lexer::Lexer,
        point: &mut Point,
        r: u32,
        b: u8,
        at: usize,
    ) -> u32 {
        let mut out = std::mem::take(&mut self.out);
        point.step(lx, self.rows(r), b, &mut out);
        let x = match out.is_empty() {
            true => DEAD,
            false => self.intern(&out),
        };
        self.out = out;
        // A relation numbered past the slots' range is stepped every time.
        let kept = match x {
            DEAD => Some(SLOT_DEAD),
            _ => u16::try_from(x).ok().filter(|&y| y < SLOT_UNSEEN),
        };
        if let (Some(slot), Some(y)) = (self.next.get_mut(at), kept) {
            *slot = y;
        }
        x
    }
}

impl Drop for Relations {
    /// The tables go back to this thread's spare, emptied (see
    /// [`spare`]).
    fn drop(&mut self) {
        spare::give(self);
    }
}

/// One [`Relations`]' tables kept per thread between walks, emptied, with
/// their room. A walk from new lexer states meets thousands of relations
/// (C++ over Qwen2: about 4,700, a successor table of 0.9 MB): grown from
/// empty, each table was copied at every doubling and its fresh pages
/// faulted in, about a third of the interning of a direct walk's
/// relations (1.1–2.4 → 0.8–0.9 ms per walk with every relation new,
/// measured with the table's room reserved).
mod spare {
    use super::{Relations, Row};
    use crate::hash::FxMap;
    use std::cell::RefCell;

    /// The most bytes of room kept (a walk of a larger table gives its
    /// room back to the allocator).
    const KEEP_BYTES: usize = 8 << 20;

    /// A [`Relations`]' tables, empty.
    #[derive(Default)]
    pub(super) struct Tables {
        pub(super) rows: Vec<Row>,
        pub(super) at: Vec<u32>,
        pub(super) by_hash: FxMap<u64, u32>,
        pub(super) same: Vec<u32>,
        pub(super) next: Vec<u16>,
        pub(super) out: Vec<Row>,
    }

    thread_local! {
        static SPARE: RefCell<Option<Tables>> = const { RefCell::new(None) };
    }

    /// This thread's spare tables (empty ones when there are none).
    pub(super) fn take() -> Tables {
        SPARE
            .try_with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.take()))
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Keeps `rel`'s tables (emptied) as this thread's spare, where they
    /// are not too large.
    pub(super) fn give(rel: &mut Relations) {
        let bytes = 2 * rel.next.capacity()
            + 4 * (rel.at.capacity() + rel.same.capacity())
            + 12 * (rel.rows.capacity() + rel.out.capacity())
            + 16 * rel.by_hash.capacity();
        if bytes > KEEP_BYTES {
            return;
        }
        let mut kept = Tables {
            rows: std::mem::take(&mut rel.rows),
            at: std::mem::take(&mut rel.at),
            by_hash: std::mem::take(&mut rel.by_hash),
            same: std::mem::take(&mut rel.same),
            next: std::mem::take(&mut rel.next),
            out: std::mem::take(&mut rel.out),
        };
        kept.rows.clear();
        kept.at.clear();
        kept.by_hash.clear();
        kept.same.clear();
        kept.next.clear();
        kept.out.clear();
        let _ = SPARE.try_with(|s| {
            if let Ok(mut s) = s.try_borrow_mut() {
                if s.is_none() {
                    *s = Some(kept);
                }
            }
        });
    }
}

/// Where a preorder walk of a vocabulary's trie stands: the relation of
/// each node on the path from the root (by depth) and the nodes.
/// Both walks (a kept walk's build, a mask's direct walk) enter nodes
/// through it.
struct TriePath {
    relations: Relations,
    rel_at: Vec<u32>,
    /// The node entered last at each depth.
    node_at: Vec<u32>,
}

impl TriePath {
    /// At the root of `vocab`, whose relation (0) is `start`.
    fn new(lx: &crate::lexer::Lexer, start: &[Row], vocab: &Vocabulary) -> TriePath {
        TriePath {
            relations: Relations::new(lx, start),
            rel_at: vec![0; vocab.max_depth + 1],
            node_at: vec![0; vocab.max_depth + 1],
        }
    }

    /// Enters node `k` of `vocab` (below the node entered last at the
    /// depth above it; the root first): its relation, `None` when every
    /// lexing dies on its edge (and in its subtree).
    #[inline(always)]
    fn enter(
        &mut self,
        lx: &crate::lexer::Lexer,
        point: &mut Point,
        vocab: &Vocabulary,
        k: usize,
    ) -> Option<u32> {
        let d = vocab.depth[k] as usize;
        if d == 0 {
            return Some(self.rel_at[0]);
        }
        let label = vocab.label(k);
        let mut x = self.rel_at[d - 1];
        for &b in label {
            x = self.relations.child(lx, point, x, b);
            if x == DEAD {
                return None;
            }
        }
        self.rel_at[d] = x;
        self.node_at[d] = k as u32;
        Some(x)
    }

    /// The bytes of node `k` of `vocab`, entered last at its depth, into
    /// `out` (the labels of the path to it).
    fn bytes<'o>(&self, vocab: &Vocabulary, k: usize, out: &'o mut Vec<u8>) -> &'o [u8] {
        out.clear();
        let d = vocab.depth[k] as usize;
        for &j in &self.node_at[1..=d] {
            out.extend_from_slice(vocab.label(j as usize));
        }
        out
    }
}

impl Walk {
    /// The walk from the states of `point`: every node's relation, once.
    fn build(lx: &crate::lexer::Lexer, point: &Point, vocab: &Vocabulary) -> Walk {
        let mut point = point.clone();
        let n = vocab.depth.len();
        let max_depth = vocab.max_depth;
        let mut start = Vec::new();
        point.start(&mut start);
        let mut path = TriePath::new(lx, &start, vocab);
        // Per depth: the relation of the nearest node with tokens on the
        // path so far (ROOT: none but the root).
        let mut near: Vec<u32> = vec![ROOT; max_depth + 1];
        // `(token id, its node's relation)` of the nodes with tokens.
        let mut owned: Vec<(u32, u32)> = Vec::with_capacity(vocab.n_ids);
        let mut edges: Vec<(u32, u32)> = Vec::new();
        let mut nodes: Vec<u32> = Vec::new();
        let mut reps: Vec<(u32, Vec<u8>)> = Vec::new();
        let class_words = lx.n_classes().div_ceil(64);
        let mut classes: Vec<u64> = Vec::new();
        let (depth, end) = (&vocab.depth[..n], &vocab.end[..n]);
        let (at, ids) = (&vocab.at[..=n], &vocab.ids[..]);
        let mut k = 0;
        while k < n {
            let d = depth[k] as usize;
            let Some(id) = path.enter(lx, &mut point, vocab, k) else {
                k = end[k] as usize;
                continue;
            };
            if d > 0 {
                let p = near[d - 1];
                near[d] = p;
                let toks = &ids[at[k] as usize..at[k + 1] as usize];
                if !toks.is_empty() {
                    // Siblings mostly repeat the last edge.
                    if p != id && edges.last() != Some(&(p, id)) {
                        edges.push((p, id));
                    }
                    if nodes.len() <= id as usize {
                        nodes.resize(path.relations.len(), 0);
                    }
                    if nodes[id as usize] == 0 {
                        let mut b = Vec::new();
                        path.bytes(vocab, k, &mut b);
                        reps.push((id, b));
                    }
                    nodes[id as usize] += 1;
                    if classes.len() < nodes.len() * class_words {
                        classes.resize(nodes.len() * class_words, 0);
                    }
                    let c = lx.class(vocab.label(path.node_at[1] as usize)[0]);
                    classes[id as usize * class_words + c / 64] |= 1 << (c % 64);
                    owned.extend(toks.iter().map(|&t| (t, id)));
                    near[d] = id;
                }
            }
            k += 1;
        }
        let relations = path.relations;
        let r = relations.len();
        nodes.resize(r, 0);
        classes.resize(r * class_words, 0);
        let mut sets = Vec::new();
        let rels: Vec<Vec<(u32, Vec<u32>, u32)>> = (0..r as u32)
            .map(|x| {
                let mut rows: Vec<(u32, Vec<u32>, u32)> = relations
                    .rows(x)
                    .iter()
                    .map(|&(i, seq, l)| {
                        point.sequence(seq, &mut sets);
                        (i, sets.clone(), l)
                    })
                    .collect();
                rows.sort_unstable();
                rows
            })
            .collect();
        // By relation, in trie order within one (a counting sort).
        let (runs_at, runs) = runs_by_relation(owned, vocab.n_ids, r);
        edges.sort_unstable();
        edges.dedup();
        reps.sort_unstable();
        let mut bytes_at = vec![0u32; r + 1];
        let mut bytes = Vec::new();
        let mut at = 0;
        for x in 0..r {
            if let Some((_, b)) = reps.get(at).filter(|(y, _)| *y as usize == x) {
                bytes.extend_from_slice(b);
                at += 1;
            }
            bytes_at[x + 1] = bytes.len() as u32;
        }
        let roots: Vec<u32> = edges
            .iter()
            .filter(|&&(p, _)| p == ROOT)
            .map(|&(_, x)| x)
            .collect();
        let (kids_at, kids) =
            Rows::grouped(r, edges.iter().filter(|&&(p, _)| p != ROOT).copied()).into_parts();
        Walk {
            rels,
            runs_at,
            runs,
            bytes_at,
            bytes,
            nodes,
            roots,
            kids_at,
            kids,
            from: point.states().to_vec(),
            classes,
            class_words,
        }
    }

    /// Whether relation `r`'s bytes ([`Walk::bytes`]) begin with a byte
    /// of a class `marked`.
    fn marked_bytes(&self, lx: &crate::lexer::Lexer, r: u32, marked: &[bool]) -> bool {
        self.bytes(r).first().is_some_and(|&b| marked[lx.class(b)])
    }

    /// Whether a mask from a near twin that reads otherwise on the classes
    /// `marked` can use this walk: every relation whose bytes begin with
    /// a marked class has all its nodes with tokens under marked classes
    /// (a mask walks those itself and leaves such relations out; any other
    /// is asked with bytes that have its rows at the twin as well).
    fn near_fits(&self, lx: &crate::lexer::Lexer, marked: &[bool]) -> bool {
        let w = self.class_words;
        let mut mask = vec![0u64; w];
        for (c, _) in marked.iter().enumerate().filter(|(_, &m)| m) {
            mask[c / 64] |= 1 << (c % 64);
        }
        (0..self.rels.len() as u32).all(|r| {
            let set = &self.classes[r as usize * w..][..w];
            !self.marked_bytes(lx, r, marked) || set.iter().zip(&mask).all(|(s, m)| s & !m == 0)
        })
    }

    /// The emitted sequence of a row of this walk, with terminal sets
    /// `sets` and `l₀` of index `i`, for a point whose states are
    /// `states` (twins of [`Walk::from`]), interned by `point` (`scratch`
    /// for a changed sequence).
    fn sequence(
        &self,
        lx: &crate::lexer::Lexer,
        point: &mut Point,
        (i, sets): (u32, &[u32]),
        scratch: &mut Vec<u32>,
    ) -> u32 {
        let was = lx.emit_terms[self.from[i as usize] as usize];
        let is = lx.emit_terms[point.state(i) as usize];
        match sets.split_first() {
            Some((&first, rest)) if was != is => {
                debug_assert_eq!(first, was);
                scratch.clear();
                scratch.push(is);
                scratch.extend_from_slice(rest);
                point.intern_sequence(scratch)
            }
            _ => point.intern_sequence(sets),
        }
    }

    /// About the heap bytes the walk holds (what the vocabulary's cache of
    /// walks counts).
    fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let rows: usize = self
            .rels
            .iter()
            .map(|rows| {
                size_of::<Vec<(u32, Vec<u32>, u32)>>()
                    + rows
                        .iter()
                        .map(|(_, sets, _)| size_of::<(u32, Vec<u32>, u32)>() + 4 * sets.len())
                        .sum::<usize>()
            })
            .sum();
        rows + 8 * self.runs.len()
            + 8 * self.classes.len()
            + self.bytes.len()
            + 4 * (self.runs_at.len()
                + self.bytes_at.len()
                + self.nodes.len()
                + self.roots.len()
                + self.kids_at.len()
                + self.kids.len())
    }

    /// The token ids of relation `r`'s nodes (the root's excepted), as
    /// ascending runs `start..end`.
    fn runs(&self, r: u32) -> &[(u32, u32)] {
        &self.runs[self.runs_at[r as usize] as usize..self.runs_at[r as usize + 1] as usize]
    }

    /// The bytes of one node with tokens of relation `r`.
    fn bytes(&self, r: u32) -> &[u8] {
        &self.bytes[self.bytes_at[r as usize] as usize..self.bytes_at[r as usize + 1] as usize]
    }

    /// The relations of the nodes with tokens whose nearest ancestor with
    /// tokens has relation `r`: those to decide once `r` is allowed (while
    /// `r` is refused, a prefix of theirs is, and so are they).
    fn kids(&self, r: u32) -> &[u32] {
        &self.kids[self.kids_at[r as usize] as usize..self.kids_at[r as usize + 1] as usize]
    }
}

/// `(token id, relation)` pairs (ids below `n_ids`, each once) as runs of
/// consecutive ids of one relation, grouped by relation (`r` of them) and
/// ascending within one: offsets and runs `start..end` as [`Rows::grouped`] gives
/// them. Few pairs are sorted; many are placed in an array by id and read
/// back in order.
fn runs_by_relation(
    mut owned: Vec<(u32, u32)>,
    n_ids: usize,
    r: usize,
) -> (Vec<u32>, Vec<(u32, u32)>) {
    let mut runs: Vec<(u32, (u32, u32))> = Vec::new();
    let mut add = |t: u32, x: u32| match runs.last_mut() {
        Some((y, (_, end))) if *y == x && *end == t => *end += 1,
        _ => runs.push((x, (t, t + 1))),
    };
    if owned.len().saturating_mul(16) < n_ids {
        owned.sort_unstable();
        owned.into_iter().for_each(|(t, x)| add(t, x));
    } else {
        let mut rel_of = vec![ROOT; n_ids];
        for &(t, x) in &owned {
            rel_of[t as usize] = x;
        }
        for (t, &x) in rel_of.iter().enumerate() {
            if x != ROOT {
                add(t as u32, x);
            }
        }
    }
    Rows::grouped(r, runs.iter().copied()).into_parts()
}

/// What a vocabulary has for a mask at a point ([`Vocabulary::walk`]).
enum Found {
    /// A walk from the point's states (or their twins).
    Walk(Arc<Walk>),
    /// A walk from a near twin of the point's one state that serves it
    /// ([`Walk::near_fits`]): the same but on the byte classes marked,
    /// whose subtrees a mask walks itself.
    Near(Arc<Walk>, Vec<bool>),
    /// Nothing: the trie is walked.
    Nothing,
}

/// Byte classes on which a near twin may read otherwise, at most (an
/// identifier's state that may still become a keyword differs from
/// another's in one or two).
const MAX_NEAR_CLASSES: usize = 4;

/// The byte classes on which `l` and `m` read otherwise, marked, if they
/// are near twins: one lexer state each, the same state after the lexeme's
/// end, skipped alike, the same terminals emitted, and the same successor
/// on all but at most [`MAX_NEAR_CLASSES`] classes. A token whose first
/// byte's class is not marked has the same relation from both (its rows
/// after that byte are the same, and so is everything after).
fn near_classes(lx: &crate::lexer::Lexer, l: u32, m: u32) -> Option<Vec<bool>> {
    let (l, m) = (l as usize, m as usize);
    if lx.emit[l] != lx.emit[m]
        || lx.skippable[l] != lx.skippable[m]
        || lx.emit_terms[l] != lx.emit_terms[m]
    {
        return None;
    }
    let k = lx.n_classes();
    let (a, b) = (&lx.step[l * k..(l + 1) * k], &lx.step[m * k..(m + 1) * k]);
    let marked: Vec<bool> = a.iter().zip(b).map(|(x, y)| x != y).collect();
    let n = marked.iter().filter(|&&x| x).count();
    (n <= MAX_NEAR_CLASSES).then_some(marked)
}

impl Vocabulary {
    /// The walk from `point`'s states under `lx`: kept (for the states or
    /// their twins); else a near twin's that serves the point
    /// ([`near_classes`], [`Walk::near_fits`]); else built if those states
    /// were seen before, nothing the first time.
    fn walk(&self, lx: &crate::lexer::Lexer, point: &Point) -> Found {
        let key = {
            let mut w = self.walks.0.lock().unwrap_or_else(PoisonError::into_inner);
            let twins = match &w.twins {
                Some((uid, t)) if *uid == lx.uid => t.clone(),
                _ => {
                    let t: Arc<[u32]> = twins(lx).into();
                    w.twins = Some((lx.uid, t.clone()));
                    t
                }
            };
            let key: WalkKey = (
                lx.uid,
                point.states().iter().map(|&l| twins[l as usize]).collect(),
            );
            w.clock += 1;
            let now = w.clock;
            if let Some((walk, used, _)) = w.walks.get_mut(&key) {
                *used = now;
                return Found::Walk(walk.clone());
            }
            if let [l] = point.states() {
                let near = w
                    .walks
                    .iter_mut()
                    .filter(|((uid, from), _)| *uid == lx.uid && from.len() == 1)
                    .filter_map(|((_, from), kept)| Some((near_classes(lx, *l, from[0])?, kept)))
                    .filter(|(marked, (walk, _, _))| walk.near_fits(lx, marked))
                    .min_by_key(|(marked, _)| marked.iter().filter(|&&x| x).count());
                if let Some((marked, (walk, used, _))) = near {
                    *used = now;
                    return Found::Near(walk.clone(), marked);
                }
            }
            if w.seen.len() > 64 * MAX_WALKS {
                w.seen.clear();
            }
            if w.seen.insert(key.clone()) {
                return Found::Nothing;
            }
            key
        };
        let walk = Arc::new(Walk::build(lx, point, self));
        let size = walk.heap_bytes();
        let mut w = self.walks.0.lock().unwrap_or_else(PoisonError::into_inner);
        while !w.walks.is_empty() && (w.walks.len() >= MAX_WALKS || w.bytes + size > MAX_WALK_BYTES)
        {
            // The least recently used goes.
            let oldest = w
                .walks
                .iter()
                .min_by_key(|(_, (_, used, _))| *used)
                .map(|(k, _)| k.clone());
            if let Some((_, _, gone)) = oldest.and_then(|k| w.walks.remove(&k)) {
                w.bytes -= gone;
            }
        }
        let now = w.clock;
        w.bytes += size;
        if let Some((_, _, old)) = w.walks.insert(key, (walk.clone(), now, size)) {
            w.bytes -= old;
        }
        Found::Walk(walk)
    }
}

impl Vocabulary {
    /// The trie of `tokens`, token id `i` having the bytes `tokens[i]`
    /// (several ids may share bytes; an empty token is the empty insertion).
    pub fn new<T: AsRef<[u8]>>(tokens: &[T]) -> Vocabulary {
        let mut order: Vec<u32> = (0..tokens.len() as u32).collect();
        order.sort_by(|&a, &b| tokens[a as usize].as_ref().cmp(tokens[b as usize].as_ref()));
        // The trie of single bytes first, in preorder.
        let (mut byte, mut end) = (vec![0u8], vec![0u32]);
        let mut node_of: Vec<(u32, u32)> = Vec::with_capacity(tokens.len());
        // The path from the root to the last node made, and its bytes.
        let mut stack: Vec<u32> = vec![0];
        let mut path: Vec<u8> = Vec::new();
        for &id in &order {
            let b = tokens[id as usize].as_ref();
            let common = path.iter().zip(b).take_while(|(x, y)| x == y).count();
            while path.len() > common {
                let done = stack.pop().unwrap_or(0);
                end[done as usize] = byte.len() as u32;
                path.pop();
            }
            for &x in &b[common..] {
                stack.push(byte.len() as u32);
                byte.push(x);
                end.push(0);
                path.push(x);
            }
            node_of.push((*stack.last().unwrap_or(&0), id));
        }
        let n = byte.len();
        for k in stack {
            end[k as usize] = n as u32;
        }
        node_of.sort_unstable();
        let mut n_tokens = vec![0u32; n];
        for &(k, _) in &node_of {
            n_tokens[k as usize] += 1;
        }
        // Then the chains of nodes without tokens and with one child (the
        // next node, its subtree ending where theirs does) merged into the
        // edge of the node below them.
        let merged = |k: usize| k > 0 && n_tokens[k] == 0 && k + 1 < n && end[k + 1] == end[k];
        // Per node of the byte trie: the merged trie's nodes before it.
        let mut before = vec![0u32; n + 1];
        for k in 0..n {
            before[k + 1] = before[k] + u32::from(!merged(k));
        }
        let m = before[n] as usize;
        let mut v = Vocabulary {
            label_at: Vec::with_capacity(m + 1),
            labels: Vec::with_capacity(n),
            depth: Vec::with_capacity(m),
            max_depth: 0,
            end: Vec::with_capacity(m),
            at: Vec::with_capacity(m + 1),
            ids: node_of.into_iter().map(|(_, id)| id).collect(),
            n_ids: tokens.len(),
            walks: WalkCache::default(),
        };
        v.label_at.push(0);
        v.at.push(0);
        // The ends (in the trie of single bytes) of the subtrees of the
        // nodes kept on the path from the root.
        let mut open: Vec<u32> = Vec::new();
        for k in 0..n {
            if k > 0 {
                v.labels.push(byte[k]);
            }
            if merged(k) {
                continue;
            }
            while open.last().is_some_and(|&e| e as usize <= k) {
                open.pop();
            }
            v.depth.push(open.len() as u32);
            v.end.push(before[end[k] as usize]);
            v.label_at.push(v.labels.len() as u32);
            v.at.push(v.at.last().copied().unwrap_or(0) + n_tokens[k]);
            open.push(end[k]);
        }
        v.max_depth = v.depth.iter().copied().max().unwrap_or(0) as usize;
        v
    }

    /// Number of token ids.
    pub fn len(&self) -> usize {
        self.n_ids
    }

    /// Whether there are no tokens.
    pub fn is_empty(&self) -> bool {
        self.n_ids == 0
    }

    fn tokens(&self, k: usize) -> &[u32] {
        &self.ids[self.at[k] as usize..self.at[k + 1] as usize]
    }

    /// The bytes of the edge into node `k`.
    #[inline(always)]
    fn label(&self, k: usize) -> &[u8] {
        &self.labels[self.label_at[k] as usize..self.label_at[k + 1] as usize]
    }
}

/// What an [`Insertion`] did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InsertionStats {
    /// Questions answered (tokens asked by [`Insertion::allows`], trie
    /// nodes with tokens in [`Insertion::mask`]).
    pub queries: usize,
    /// Checks run (full ones, or from the chart of the text before the
    /// point: see `by_prefix`).
    pub checks: usize,
    /// Of those, the ones answered from the chart of the text before the
    /// point (that text ends in fixed text and has at most 8 holes; no
    /// hole limits).
    pub by_prefix: usize,
    /// Questions answered with no check because every lexing died.
    pub dead: usize,
    /// Moves of the point ([`Insertion::advance`]) that grew the chart of
    /// the text before it by the accepted bytes instead of dropping it.
    pub grown: usize,
    /// Masks that walked the trie by the relations kept in the vocabulary
    /// for these lexer states (seen at an earlier point) instead of lexing.
    pub walked: usize,
    /// Rows of relations answered from rows answered before (whose hole
    /// closures hold or lie inside theirs) instead of a search.
    pub implied: usize,
    /// Full checks answered "no" by the fixed text after the last hole
    /// alone (many holes before the point).
    pub by_end: usize,
    /// Rows searched on the start state's automaton of the text after the
    /// point, their last lexeme ending at the point (it cannot go on into
    /// that text), instead of an automaton of their own.
    pub ended: usize,
    /// Searches of the text after the point that reached the goal at a
    /// completion remembered from an earlier search at this point (one
    /// from the text before the point into the text after it, which leads
    /// to the goal whatever was inserted).
    pub remembered: usize,
    /// Rows searched from the chart of the text before the point whose
    /// lexer state `l₀` stands at several of its states (a lexeme in
    /// progress that may have started at different places, after a hole
    /// or after an earlier point's insertion).
    pub several_frontiers: usize,
    /// Rows refused before growing the chart by their terminals: no item
    /// where the growth would start waits for the first terminal grown.
    pub dead_growths: usize,
    /// Rows answered from the chart of the text before the point by a row
    /// with frontier states of the same names (see `KeptRows`), terminals
    /// and `l₁` answered earlier
    /// (at this point or an earlier one), instead of a search.
    pub rows_kept: usize,
    /// Automata of the text after the point made (each with its chart):
    /// one for a point asked from one lexer state, more when a state they
    /// were not made for is asked for (see `tail_for`).
    pub tails: usize,
    /// Charts of the text before the point grown from a chart the
    /// constraint kept for a text this one starts with (an earlier point's,
    /// see [`crate::Config::kept_charts`]) instead of built from the start.
    pub kept_charts: usize,
    /// Automata of the text after the point taken from the constraint's
    /// kept ones for the same text (an earlier point's, see
    /// [`crate::Config::kept_tails`]) instead of made.
    pub kept_tails: usize,
    /// Rows answered from the automaton of another text after a point:
    /// refused after a hole alone, or allowed before a longer text that
    /// ends with this point's (see [`crate::Config::kept_tails`]).
    pub bounded: usize,
}

/// One insertion point of a partial output, `left · □ · right` with `□`
/// the bytes to be inserted, answering "is `left · t · right` completable?"
/// for many `t` with few checks (see the module docs).
///
/// ```
/// use cdiff::{Constraint, Grammar, Partial};
/// use cdiff::mask::{Insertion, Vocabulary};
/// let json = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None)?;
/// let c = Constraint::compile(&json)?;
/// // `{"a": ` then a token, then the rest of the object is open.
/// let mut at = Insertion::new(&c, &Partial::new().text(r#"{"a": "#), &Partial::new().hole())?;
/// assert!(at.allows(b"12")?);
/// assert!(at.allows(b"345")?); // same relation as "12": no new check
/// assert!(!at.allows(b"}")?);
/// assert_eq!(at.stats().checks, 2);
/// let vocab = Vocabulary::new(&["1", "]", " [", "true", "tru", "x"]);
/// assert_eq!(at.mask(&vocab)?, [true, false, true, true, true, false]);
/// # Ok::<(), cdiff::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Insertion<'c> {
    constraint: &'c Constraint,
    left: Partial,
    right: Partial,
    /// `right` starts with a hole: refusing `s` refuses every `s · x`.
    prefix_closed: bool,
    point: Point,
    /// Byte limits of the holes of `left` then `right` (empty: none).
    limits: Vec<Option<usize>>,
    memo: FxMap<Box<[u32]>, bool>,
    /// The same for relations of one row, by the row: most of a trie's
    /// nodes, looked up without building a key.
    memo_one: FxMap<Row, bool>,
    /// The chart of `left`, once a check needed it (see [`Prefix`]);
    /// forgotten when the point moves.
    prefix: Option<Box<Prefix>>,
    /// Rows answered from the chart of `left` while `right` starts with a
    /// hole (see [`subsumed`]).
    answered: Answered,
    rows: Vec<Row>,
    next: Vec<Row>,
    key: Vec<u32>,
    /// Scratch for the frontier states of a row's `l₀`.
    from: Vec<u32>,
    /// The relation of the last question answered and its answer: inside
    /// a string or a comment nearly every token has the same relation, and
    /// comparing a few rows costs less than hashing them.
    last: Option<(Vec<Row>, bool)>,
    seq: Vec<u32>,
    /// Many relations will be asked (a mask was, or the point moved): the
    /// text after the point is read from every lexer state at once (see
    /// [`tail_for`]).
    many: bool,
    /// The point moves, or was said to expect many proposals: rows
    /// answered from the chart of `left` are kept by the names of their
    /// frontier states for the points after it (see `KeptRows`).
    keep_rows: bool,
    /// The chart of `left` grew since it was built or taken from the
    /// constraint's kept charts: it is kept when the point is dropped (see
    /// [`crate::charts`]).
    moved: bool,
    /// Texts after other points that bound this point's answers.
    bounds: Bounds,
    stats: InsertionStats,
}

/// What a check of `left · t · right` reuses when `left` ends in fixed
/// text and has at most [`PREFIX_MAX_HOLES`] holes: the
/// automaton of `left` as a prefix with its phase-1 chart, and the
/// automaton of `right` read from the lexer states `l₁` an insertion may
/// leave (one automaton, an entry per `l₁`).
/// A new relation then costs the search of `t`'s terminals and `right`
/// from the chart's frontier, not a check of the whole text: per row
/// `(l₀, T₁…T_m, l₁)` of the relation, the items at the frontier states of
/// `l₀` waiting for a terminal of `T₁` move on, through `T₂…T_m`, into the
/// automaton of `right` from `l₁`; with `m = 0` (the lexeme in progress
/// goes on) they scan the terminals that automaton starts with. The
/// language searched is that of the full check restricted to the row, and
/// the relation's language is the union of its rows', so the answer is the
/// full check's (holes in `left` are holes of its automaton like any
/// other; its frontier states are those holding the configurations at its
/// end, which is fixed text). Hole limits, a `left` that ends in a hole
/// or has more holes, and a row whose word may end at the point take a
/// full check.
#[derive(Debug)]
struct Prefix {
    /// `(lexer state, automaton state)`: the frontier states of the chart
    /// per lexer state at the point, sorted (see
    /// [`crate::lexer::Frontier`]).
    at: Vec<(u32, u32)>,
    base: Base,
    /// The automaton of `right` read from the `l₁` of the rows so far
    /// with its kept chart (see [`tail_for`]).
    right: Option<Tails>,
    /// The chart grown by a row's terminals `T₁…T_m` (m ≥ 1) from its
    /// `l₀`'s frontier (any terminal may follow, so that it serves every
    /// `l₁`), kept for the next row with the same `l₀` and terminals: in a
    /// C++ mask over Qwen2's vocabulary 73 % of the rows searched found
    /// theirs here (growing was a third of a row's time; kept only for
    /// rows with the same first terminals of `right`, as it was grown
    /// before, 5 % did, and the mask got slower). A row whose terminals
    /// are not here grows on the layers of their longest first run that
    /// is ([`kept_attached`]): the rows of a C++ mask grew 8.75
    /// terminals on average (runs of operators are lexed one terminal at
    /// a time), and 97 % of them found layers for all but 1.8 of those.
    grown: FxMap<GrownKey, Grown>,
    /// Rows answered from this chart, kept while the point moves (see
    /// [`KeptRows`]).
    rows: KeptRows,
}

/// Rows answered from the chart of `left`, by `(l₁, the names of the
/// frontier states of l₀, T₁…T_m)`, kept while the point moves.
///
/// A row's answer depends on `l₀` only through what its search can meet in
/// the chart of `left`: the items at `l₀`'s frontier states, and what
/// completions from their origins wake there, recursively. Those never
/// change as the chart grows (a grown layer makes items at its own states
/// only), nor does `right`. So they are named, bottom up (an item's origin
/// is older than its state), and a row is kept by the names of its
/// frontier states:
///
/// * what a completion of `A` from an older state `o` leads to is named by
///   `A` and the items waiting at `o` for `A`, or for the nonterminal of an
///   item with origin `o` among those, and so on (a completion from `o`
///   wakes only those): each as its production, dot and what its own
///   completion leads to — "here" for origin `o` (that one is among them),
///   or the name of its nonterminal from its origin;
/// * a frontier state `f` by its items from other states (waiting for a
///   terminal too), each as production, dot and the name of its
///   nonterminal from its origin: the items with origin `f` follow from
///   those, since at a frontier every production they lead to is
///   predicted (no terminal filter) and completions from `f` to `f`
///   advance only what waits at `f`;
///
/// with a mark for start states (where the goal may complete). Equal names
/// mean the same items up to the renaming of states, so the searches from
/// two frontier states of one name are the same search renamed: same
/// answers (the mask tests compare every token with a full check). When an
/// accepted token emits no terminal (inside an identifier, a number, a
/// string, a comment, spaces), the frontier states are those before; when
/// it ends an operand of a chain of `+`, an argument, a statement, the new
/// frontier often has the name of an earlier one (lists are
/// left-recursive: the item of a list keeps the origin where the list
/// began). The next mask then finds most of its rows here instead of
/// searching them again. Keys are three ids (names, sequences and sets of
/// several names interned), so keeping a row costs no allocation.
#[derive(Debug, Default)]
struct KeptRows {
    /// `(l₁, frontier id, sequence id)` → the answer. A frontier id is a
    /// frontier state's name, or [`SEVERAL`] plus the index of an interned
    /// set of names.
    answers: FxMap<(u32, u32, u32), bool>,
    /// Terminal-set sequences `T₁…T_m`, interned.
    seqs: FxMap<Box<[u32]>, u32>,
    /// The point's sequence ids → ids in `seqs` (the point's own ids:
    /// forgotten when it moves).
    of_point: FxMap<u32, u32>,
    /// Sets of several names, interned.
    sets: FxMap<Box<[u32]>, u32>,
    /// Names: the lists they stand for (a header, then encoded items
    /// sorted: see [`name_entry`]), interned.
    names: FxMap<Box<[u64]>, u32>,
    /// `(older state, nonterminal)` named: what a completion leads to.
    leads: FxMap<(u32, u32), u32>,
    /// Frontier states (the point's and earlier points') → their name.
    frontier: FxMap<u32, u32>,
    /// Scratch: items at a frontier state, items a completion wakes,
    /// nonterminals, a list being named, pairs to name, the names of a
    /// row's frontier states.
    items: Vec<(u32, u32, u32, u32)>,
    woken: Vec<(u32, u32, u32, u32)>,
    symbols: Vec<u32>,
    list: Vec<u64>,
    stack: Vec<(u32, u32)>,
    ids: Vec<u32>,
}

/// Frontier ids at and above this name an interned set of names.
const SEVERAL: u32 = 1 << 31;

/// Most rows, sequences, sets, names or named states kept in
/// [`KeptRows`]: past it the answers are forgotten at once, the rest when
/// the point moves.
const MAX_ROWS_KEPT: usize = 1 << 16;

/// In a list named: the item's origin is the state named.
const HERE: u64 = (1 << 42) - 1;

/// Kinds of lists named (their first element): a frontier state's
/// (`[AS_FRONTIER, start]`), a completion's from an older state
/// (`[AS_LEADS, nonterminal, start]`), and one named by its state and
/// nonterminal alone (`[AS_ITSELF, state, nonterminal]`, no items).
const AS_FRONTIER: u64 = u64::MAX;
const AS_LEADS: u64 = u64::MAX - 1;
const AS_ITSELF: u64 = u64::MAX - 2;

/// An item `(production, dot, name)` in a list named (productions have 20
/// bits, dots 2, names fewer than [`HERE`]).
fn name_entry(prod: u32, dot: u32, name: u64) -> u64 {
    ((prod as u64) << 44) | ((dot as u64) << 42) | name
}

impl KeptRows {
    /// The key of the row from frontier states `from` of `base` over the
    /// point's sequence `seq` into `l₁` (the states named on first use).
    fn key(
        &mut self,
        (c, base): (&Constraint, &Base),
        point: &Point,
        seq: u32,
        from: &[u32],
        l1: u32,
    ) -> (u32, u32, u32) {
        let f = match from {
            [one] => self.frontier_name(c, base, *one),
            _ => {
                let mut ids = std::mem::take(&mut self.ids);
                ids.clear();
                for &s in from {
                    ids.push(self.frontier_name(c, base, s));
                }
                ids.sort_unstable();
                ids.dedup();
                let f = match &ids[..] {
                    [one] => *one,
                    ids => match self.sets.get(ids) {
                        Some(&id) => id,
                        None => {
                            let id = SEVERAL + self.sets.len() as u32;
                            self.sets.insert(ids.into(), id);
                            id
                        }
                    },
                };
                self.ids = ids;
                f
            }
        };
        let t = match self.of_point.get(&seq) {
            Some(&t) => t,
            None => {
                let mut sets = Vec::new();
                point.sequence(seq, &mut sets);
                let next = self.seqs.len() as u32;
                let t = *self.seqs.entry(sets.into()).or_insert(next);
                self.of_point.insert(seq, t);
                t
            }
        };
        (l1, f, t)
    }

    /// Keeps the answer of the row of `key`.
    fn keep(&mut self, key: (u32, u32, u32), ok: bool) {
        if self.answers.len() >= MAX_ROWS_KEPT {
            self.answers.clear();
        }
        self.answers.insert(key, ok);
    }

    /// No answers, the names kept (for a clone of the chart).
    fn names(&self) -> KeptRows {
        KeptRows {
            names: self.names.clone(),
            leads: self.leads.clone(),
            frontier: self.frontier.clone(),
            ..KeptRows::default()
        }
    }

    /// The point moved: its new frontier states are named when a row
    /// from them is first kept or looked up. Names and answers stay (the
    /// items at a state never change, nor a name's answers).
    fn moved(&mut self) {
        self.of_point.clear();
        if [
            self.seqs.len(),
            self.sets.len(),
            self.names.len(),
            self.leads.len(),
            self.frontier.len(),
        ]
        .iter()
        .any(|&n| n >= MAX_ROWS_KEPT)
        {
            *self = KeptRows::default();
        }
    }

    /// The name of frontier state `f` of `base` (see [`KeptRows`]).
    fn frontier_name(&mut self, c: &Constraint, base: &Base, f: u32) -> u32 {
        if let Some(&id) = self.frontier.get(&f) {
            return id;
        }
        let mut items = std::mem::take(&mut self.items);
        c.items_at(base, f, &mut items);
        for &(_, _, origin, a) in &items {
            self.name_leads(c, base, origin, a);
        }
        self.list.clear();
        self.list.extend([AS_FRONTIER, u64::from(base.is_start(f))]);
        for &(prod, dot, origin, a) in &items {
            let name = self.leads[&(origin, a)] as u64;
            self.list.push(name_entry(prod, dot, name));
        }
        self.items = items;
        let id = self.intern(2);
        self.frontier.insert(f, id);
        id
    }

    /// Names what a completion of nonterminal `a` from older state `o`
    /// leads to (and first what those it wakes lead to), unless named.
    fn name_leads(&mut self, c: &Constraint, base: &Base, o: u32, a: u32) {
        let mut stack = std::mem::take(&mut self.stack);
        let mut items = std::mem::take(&mut self.woken);
        let mut symbols = std::mem::take(&mut self.symbols);
        stack.clear();
        stack.push((o, a));
        while let Some(&(s, a)) = stack.last() {
            if self.leads.contains_key(&(s, a)) {
                stack.pop();
                continue;
            }
            // The items a completion of `a` from `s` wakes, and those
            // that completions from `s` of theirs wake.
            items.clear();
            symbols.clear();
            symbols.push(a);
            let mut k = 0;
            while k < symbols.len() {
                let from = items.len();
                c.waiting_at(base, s, symbols[k], &mut items);
                for &(_, _, origin, b) in &items[from..] {
                    if origin == s && !symbols.contains(&b) {
                        symbols.push(b);
                    }
                }
                k += 1;
            }
            self.list.clear();
            // Origins come before the states of their items, except
            // around a hole's loops in `left`: there a completion is named
            // by its state and nonterminal.
            if items.iter().any(|&(_, _, origin, _)| origin > s) {
                self.list.extend([AS_ITSELF, s as u64, a as u64]);
            } else {
                let before = stack.len();
                for &(_, _, origin, b) in &items {
                    if origin != s && !self.leads.contains_key(&(origin, b)) {
                        stack.push((origin, b));
                    }
                }
                if stack.len() > before {
                    continue;
                }
                self.list
                    .extend([AS_LEADS, a as u64, u64::from(base.is_start(s))]);
                for &(prod, dot, origin, b) in &items {
                    let name = match origin == s {
                        true => HERE,
                        false => self.leads[&(origin, b)] as u64,
                    };
                    self.list.push(name_entry(prod, dot, name));
                }
            }
            let id = self.intern(3);
            self.leads.insert((s, a), id);
            stack.pop();
        }
        self.stack = stack;
        self.woken = items;
        self.symbols = symbols;
    }

    /// The name of the list in `self.list`, whose first `head` elements
    /// are its header (the rest are sorted here).
    fn intern(&mut self, head: usize) -> u32 {
        self.list[head..].sort_unstable();
        let mut n = head;
        for i in head..self.list.len() {
            if i == head || self.list[i] != self.list[n - 1] {
                self.list[n] = self.list[i];
                n += 1;
            }
        }
        self.list.truncate(n);
        let next = self.names.len() as u32;
        match self.names.get(&self.list[..]) {
            Some(&id) => id,
            None => {
                self.names.insert(self.list[..].into(), next);
                next
            }
        }
    }
}

/// Key of a kept grown layer: index of `l₀`, the interned sequence
/// `T₁…T_m`.
type GrownKey = (u32, u32);

/// Most holes in `left` for which its chart is built (see [`Prefix`]): the
/// chart goes to the fixpoint, and every hole predicts nearly every
/// nonterminal, so with many holes it costs far more than the full checks
/// it saves (`dlm-cpp` masks with 22–26 holes before the point: the chart
/// 24–39 ms against 0.5 ms per full check; with up to 6 holes a mask went
/// from 3.5–35 ms to 0.1–0.2 ms).
const PREFIX_MAX_HOLES: usize = 8;

/// Most lexer states at a point where answering proposals through it
/// beats checking them ([`Insertion::is_narrow`]).
const NARROW: usize = 16;

/// Grown layers kept per insertion point: at most this many (each a few
/// states' items; a C++ mask over Qwen2's vocabulary grows a few hundred).
const MAX_GROWN: usize = 2048;

/// Rows `(l₀, τ, l₁)` answered so far, by `(l₀, τ)`: the hole closure of
/// each `l₁` (offsets into `bits`) and the answer.
#[derive(Clone, Debug, Default)]
struct Answered {
    by: FxMap<(u32, u32), Vec<(u32, bool)>>,
    bits: Vec<u64>,
    /// Per `l₁`: the offset in `bits` of its hole set (see [`hole_set`]).
    sets: FxMap<u32, u32>,
    /// Words per hole set.
    words: usize,
    /// Per `l₁`: see [`sink`].
    sinks: FxMap<u32, u32>,
}

/// Rows kept per `(l₀, τ)` for [`subsumed`]: enough for the
/// identifier states of a C++ mask, few enough that comparing stays cheap.
const ANSWERED_PER_KEY: usize = 32;

impl Prefix {
    /// The chart `base` of `left` with frontier states `at`, nothing
    /// searched from it yet.
    fn new(at: Vec<(u32, u32)>, base: Base) -> Prefix {
        Prefix {
            at,
            base,
            right: None,
            grown: FxMap::default(),
            rows: KeptRows::default(),
        }
    }
}

/// The bytes of `p` if it is fixed text (no hole).
fn fixed_text(p: &Partial) -> Option<&[u8]> {
    match p.segments() {
        [] => Some(&[]),
        [Segment::Text(bytes)] => Some(bytes),
        _ => None,
    }
}

impl Drop for Insertion<'_> {
    /// A point that moved keeps the chart of its text for later points
    /// (see [`crate::Config::kept_charts`]); one that expected many
    /// proposals keeps the automata of the text after it (see
    /// [`crate::Config::kept_tails`]).
    fn drop(&mut self) {
        let c = self.constraint;
        self.bounds.give_back(c);
        let Some(mut pre) = self.prefix.take() else {
            return;
        };
        if self.many && pre.right.is_some() {
            self.bounds.key_of(c, &self.right);
        }
        // A short text after the point is not kept (see
        // `Config::kept_tails_from`).
        let key = self
            .bounds
            .key
            .as_ref()
            .filter(|_| c.keeps_tail(&self.right));
        if let (true, Some(key), Some(tails)) = (self.many, key, pre.right.take()) {
            c.keep_tail(KeptTail {
                key: Arc::from(&key[..]),
                right: self.right.clone(),
                tails: Some(tails),
            });
        }
        self.keep_moved(pre);
    }
}

impl Clone for Prefix {
    /// The charts of `right` and the grown layers are a cache: a clone
    /// starts without them.
    fn clone(&self) -> Prefix {
        Prefix {
            at: self.at.clone(),
            base: self.base.clone(),
            right: None,
            grown: FxMap::default(),
            rows: self.rows.names(),
        }
    }
}

impl<'c> Insertion<'c> {
    /// The point between `left` and `right` under `constraint`.
    ///
    /// # Errors
    /// [`ErrorKind::Budget`](crate::ErrorKind::Budget) if lexing `left`
    /// exceeds the constraint's work budget.
    pub fn new(
        constraint: &'c Constraint,
        left: &Partial,
        right: &Partial,
    ) -> Result<Insertion<'c>> {
        let mut budget = constraint.budget("lexing up to the insertion point");
        let point = Point::after(constraint.lexer(), left, &mut budget)?;
        Ok(Insertion {
            constraint,
            left: left.clone(),
            right: right.clone(),
            prefix_closed: matches!(right.segments().first(), Some(Segment::Hole)),
            point,
            limits: Vec::new(),
            memo: FxMap::default(),
            memo_one: FxMap::default(),
            prefix: None,
            answered: Answered::new(constraint.lexer()),
            rows: Vec::new(),
            next: Vec::new(),
            key: Vec::new(),
            from: Vec::new(),
            last: None,
            seq: Vec::new(),
            many: false,
            keep_rows: false,
            moved: false,
            bounds: Bounds::default(),
            stats: InsertionStats::default(),
        })
    }

    /// The same point, answering as [`Constraint::check_within`] with
    /// `limits` (one per hole of `left`, then of `right`): the language of
    /// the limited automaton is still a function of the inserted bytes'
    /// lexing relation, so answers are reused as before. Answers given so
    /// far are forgotten.
    ///
    /// ```
    /// use cdiff::mask::Insertion;
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let g = Grammar::from_lark(r#"start: "(" start ")" | "x""#, None)?;
    /// let c = Constraint::compile(&g)?;
    /// let (left, right) = (Partial::new().text("(("), Partial::new().hole());
    /// let mut at = Insertion::new(&c, &left, &right)?.with_limits(vec![Some(2)]);
    /// assert!(at.allows(b"x")?); // "((x" + "))"
    /// assert!(!at.allows(b"(")?); // "(((" needs "x)))"
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    pub fn with_limits(mut self, limits: Vec<Option<usize>>) -> Insertion<'c> {
        // Refusing `s` refuses `s · x` only without limits: `x` may be
        // what the limited hole had no room for.
        self.prefix_closed = matches!(self.right.segments().first(), Some(Segment::Hole))
            && limits.iter().all(Option::is_none);
        self.limits = limits;
        self.memo.clear();
        self.memo_one.clear();
        self.answered = Answered::new(self.constraint.lexer());
        self.last = None;
        self
    }

    /// The same point, told that it will answer many proposals (an
    /// autoregressive loop that [`advance`](Insertion::advance)s it, or
    /// masks): the automaton of the text after the point is then made at
    /// once for the lexer states the constraint has learned tokens end in,
    /// with one kept chart, instead of for the first such state and again
    /// when a second one comes (what a point asked about a few proposals
    /// needs), and the rows it answers are kept for the points after it
    /// (by the names of their frontier states). Answers are the same
    /// either way; only the time differs (`examples/insertion_cost.rs` on a
    /// 2.3 KB C++ file: 50–51 → 39–40 µs per proposal).
    ///
    /// ```
    /// use cdiff::mask::Insertion;
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let g = Grammar::from_lark(r#"start: "(" start ")" | "x""#, None)?;
    /// let c = Constraint::compile(&g)?;
    /// let (left, right) = (Partial::new().text("(("), Partial::new().hole().text(")"));
    /// let mut at = Insertion::new(&c, &left, &right)?.expecting_many();
    /// assert!(at.allows(b"x")?);
    /// at.advance(b"(");
    /// assert!(!at.allows(b")")?);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    pub fn expecting_many(mut self) -> Insertion<'c> {
        self.many = true;
        self.keep_rows = true;
        self
    }

    /// The hole limits given to [`Insertion::with_limits`] (empty: none).
    pub fn limits(&self) -> &[Option<usize>] {
        &self.limits
    }

    /// The number of lexer states at the point: each question costs about
    /// this many steps per byte, and relations are finer the larger it is
    /// (after a hole it can be hundreds, e.g. inside every string or
    /// comment a hole may open; after fixed text it is one or two).
    pub fn width(&self) -> usize {
        self.point.width()
    }

    /// Whether proposals are best answered here rather than by checks: at
    /// most [`NARROW`] lexer states at the point (after fixed text, not
    /// after a hole where every string or comment may be open).
    pub(crate) fn is_narrow(&self) -> bool {
        self.width() <= NARROW
    }

    /// What was done so far.
    pub fn stats(&self) -> InsertionStats {
        self.stats
    }

    /// The text before the point.
    pub fn left(&self) -> &Partial {
        &self.left
    }

    /// Whether `left · bytes · right` is completable: the answer of
    /// [`Constraint::check`], from a check only when no earlier question
    /// had the same lexing relation.
    ///
    /// # Errors
    /// As [`Constraint::check`].
    pub fn allows(&mut self, bytes: &[u8]) -> Result<bool> {
        self.stats.queries += 1;
        let mut rows = std::mem::take(&mut self.rows);
        let mut next = std::mem::take(&mut self.next);
        self.point
            .read(self.constraint.lexer(), bytes, &mut rows, &mut next);
        let ok = if rows.is_empty() {
            self.stats.dead += 1;
            Ok(false)
        } else {
            self.verdict(&rows, bytes)
        };
        self.rows = rows;
        self.next = next;
        ok
    }

    /// Moves the point past `bytes` (they join `left`), as after a token
    /// was accepted; answers given so far are forgotten. The chart of
    /// `left`, once built, grows by the bytes' terminals (an Earley step
    /// over them) instead of being built again.
    pub fn advance(&mut self, bytes: &[u8]) {
        self.many = true;
        self.keep_rows = true;
        let mut rows = std::mem::take(&mut self.rows);
        let mut next = std::mem::take(&mut self.next);
        self.point
            .read(self.constraint.lexer(), bytes, &mut rows, &mut next);
        match self.grow(&rows) {
            Ok(true) => self.stats.grown += 1,
            Ok(false) => {}
            // The chart is built afresh when a check needs it, and an
            // error that persists is reported then.
            Err(_) => self.prefix = None,
        }
        self.point = self.point.advance(&rows);
        self.left.push_text(bytes);
        self.memo.clear();
        self.memo_one.clear();
        self.answered = Answered::new(self.constraint.lexer());
        self.last = None;
        self.rows = rows;
        self.next = next;
    }

    /// For every token id of `vocab`, whether inserting its bytes keeps the
    /// partial output completable: exactly [`Insertion::allows`] per token,
    /// by one walk of the trie (see the module docs).
    ///
    /// # Errors
    /// As [`Constraint::check`].
    pub fn mask(&mut self, vocab: &Vocabulary) -> Result<Vec<bool>> {
        self.many = true;
        let mut out = vec![false; vocab.len()];
        let lx = self.constraint.lexer();
        let n = vocab.depth.len();
        let mut start: Vec<Row> = Vec::new();
        self.point.start(&mut start);
        if start.is_empty() {
            self.stats.dead += 1;
            return Ok(out);
        }
        // The empty insertion first: if even it is refused, so is everything.
        self.stats.queries += 1;
        let empty_ok = self.verdict(&start, b"")?;
        if !empty_ok && self.prefix_closed {
            return Ok(out);
        }
        // The relation of each node on the path, and per relation its
        // answer (2: not asked yet).
        let mut path = TriePath::new(lx, &start, vocab);
        let mut ok_of: Vec<u8> = vec![u8::from(empty_ok)];
        let (w, marked) = match vocab.walk(lx, &self.point) {
            Found::Walk(w) => (w, None),
            Found::Near(w, marked) => (w, Some(marked)),
            Found::Nothing => {
                self.walk_nodes(vocab, &mut path, &mut ok_of, 0..n, &mut out)?;
                return Ok(out);
            }
        };
        self.stats.walked += 1;
        for &id in vocab.tokens(0) {
            out[id as usize] = empty_ok;
        }
        self.mask_by_relations(&w, marked.as_deref(), &mut out)?;
        let Some(marked) = marked else {
            return Ok(out);
        };
        // A near twin's walk: the subtrees whose first byte it reads
        // otherwise are walked here, their tokens cleared first.
        let mut k = 1;
        while k < n {
            let below = vocab.end[k] as usize;
            if marked[lx.class(vocab.label(k)[0])] {
                for j in k..below {
                    for &id in vocab.tokens(j) {
                        out[id as usize] = false;
                    }
                }
                self.walk_nodes(vocab, &mut path, &mut ok_of, k..below, &mut out)?;
            }
            k = below;
        }
        Ok(out)
    }

    /// Decides the tokens of trie nodes `nodes` of `vocab` (the whole trie,
    /// or the subtrees of some of the root's children) by walking them
    /// from `path`, relation by relation (`ok_of`: per relation of `path`,
    /// its answer, 2 if not asked yet).
    fn walk_nodes(
        &mut self,
        vocab: &Vocabulary,
        path: &mut TriePath,
        ok_of: &mut Vec<u8>,
        nodes: std::ops::Range<usize>,
        out: &mut [bool],
    ) -> Result<()> {
        let lx = self.constraint.lexer();
        let n = vocab.depth.len();
        let mut scratch = Vec::new();
        let (depth, end) = (&vocab.depth[..n], &vocab.end[..n]);
        let (at, ids) = (&vocab.at[..=n], &vocab.ids[..]);
        let mut k = nodes.start;
        while k < nodes.end {
            let d = depth[k] as usize;
            let Some(x) = path.enter(lx, &mut self.point, vocab, k) else {
                self.stats.dead += 1;
                k = end[k] as usize;
                continue;
            };
            let toks = &ids[at[k] as usize..at[k + 1] as usize];
            if !toks.is_empty() {
                let x = x as usize;
                if d > 0 {
                    self.stats.queries += 1;
                }
                if ok_of.len() <= x {
                    ok_of.resize(path.relations.len(), 2);
                }
                if ok_of[x] == 2 {
                    let rows = path.relations.rows(x as u32);
                    let bytes = path.bytes(vocab, k, &mut scratch);
                    ok_of[x] = u8::from(self.verdict(rows, bytes)?);
                }
                let ok = ok_of[x] == 1;
                for &id in toks {
                    out[id as usize] = ok;
                }
                if !ok && self.prefix_closed {
                    k = end[k] as usize;
                    continue;
                }
            }
            k += 1;
        }
        Ok(())
    }

    /// The mask from a kept walk: the relations to decide are those of the
    /// nodes whose nearest ancestor with tokens is the root (the empty
    /// insertion, allowed here or the mask is empty) or has an allowed
    /// relation — as walking the trie and skipping the subtree of a refused
    /// prefix would, since when `right` starts with a hole a refused prefix
    /// refuses every extension (otherwise every relation is decided). They
    /// are decided in the order they were found in the trie; the tokens of
    /// the allowed ones are set.
    ///
    /// From a near twin's walk, the relations whose bytes begin with a
    /// class `marked` are left out (the mask walks their nodes itself).
    fn mask_by_relations(
        &mut self,
        w: &Walk,
        marked: Option<&[bool]>,
        out: &mut [bool],
    ) -> Result<()> {
        use std::cmp::Reverse;
        // Per relation: unknown yet (2), refused (0), allowed (1).
        let mut ok_of = vec![2u8; w.rels.len()];
        let mut next: std::collections::BinaryHeap<Reverse<u32>> = match self.prefix_closed {
            true => w.roots.iter().map(|&r| Reverse(r)).collect(),
            false => (0..w.rels.len() as u32)
                .filter(|&r| w.nodes[r as usize] > 0)
                .map(Reverse)
                .collect(),
        };
        let mut kept_rows: Vec<Row> = Vec::new();
        let mut scratch = Vec::new();
        let lx = self.constraint.lexer();
        while let Some(Reverse(r)) = next.pop() {
            if ok_of[r as usize] != 2 {
                continue;
            }
            if marked.is_some_and(|m| w.marked_bytes(lx, r, m)) {
                ok_of[r as usize] = 0;
                continue;
            }
            self.stats.queries += w.nodes[r as usize] as usize;
            kept_rows.clear();
            for (i, sets, l) in &w.rels[r as usize] {
                let seq = w.sequence(lx, &mut self.point, (*i, sets), &mut scratch);
                kept_rows.push((*i, seq, *l));
            }
            kept_rows.sort_unstable();
            let ok = self.verdict(&kept_rows, w.bytes(r))?;
            ok_of[r as usize] = u8::from(ok);
            if !ok {
                continue;
            }
            for &(a, b) in w.runs(r) {
                out[a as usize..b as usize].fill(true);
            }
            if self.prefix_closed {
                next.extend(w.kids(r).iter().map(|&x| Reverse(x)));
            }
        }
        Ok(())
    }

    /// The answer of a full check for relation `rows`, from the chart of
    /// `left` (see [`Prefix`]); `None` where that does not apply.
    fn by_prefix(&mut self, rows: &[Row]) -> Result<Option<bool>> {
        let ends_in_text = matches!(self.left.segments().last(), None | Some(Segment::Text(_)));
        if !self.limits.is_empty() || !ends_in_text || self.left.n_holes() > PREFIX_MAX_HOLES {
            return Ok(None);
        }
        // A point that expects few proposals, before a canvas's many
        // holes: a full check climbs the ladder of search orders for
        // canvases (see `Constraint::check`), the search from the chart
        // does not (one `dlm-cpp` proposal took 39 ms so, a check 0.4 ms).
        if !self.many && self.right.n_holes() > FEW_HOLES {
            return Ok(None);
        }
        if self.prefix.is_none() {
            self.prefix = Some(Box::new(self.chart_of_left()?));
        }
        for &(i, seq, l1) in rows {
            let l0 = self.point.state(i);
            if self
                .prefix
                .as_ref()
                .is_none_or(|p| frontier_of(&p.at, l0).next().is_none())
            {
                continue;
            }
            let ok = match self.prefix_closed {
                true => self.row_by_subsets(i, seq, l1)?,
                false => self.row(i, seq, l1)?,
            };
            match ok {
                None => return Ok(None),
                Some(true) => return Ok(Some(true)),
                Some(false) => {}
            }
        }
        Ok(Some(false))
    }

    /// [`Insertion::row`] when `right` starts with a hole without a limit:
    /// answered from the rows answered so far if one subsumes it (see
    /// [`subsumed`]); if not, the row from the state of `l₁`'s hole
    /// closure whose own closure is smallest (the plain identifier after a
    /// keyword's prefix) is searched first — if it is allowed, so is this
    /// row and every later one whose closure holds it — then this row.
    fn row_by_subsets(&mut self, i: u32, seq: u32, l1: u32) -> Result<Option<bool>> {
        let lx = self.constraint.lexer();
        let at = hole_set(&mut self.answered, lx, &self.right, l1);
        if let Some(ok) = subsumed(&self.answered, i, seq, at) {
            self.stats.implied += 1;
            return Ok(Some(ok));
        }
        let m = sink(&mut self.answered, lx, l1);
        if m != l1 {
            let at_m = hole_set(&mut self.answered, lx, &self.right, m);
            if subsumed(&self.answered, i, seq, at_m).is_none() {
                let Some(ok) = self.row(i, seq, m)? else {
                    return Ok(None);
                };
                record(&mut self.answered, i, seq, at_m, ok);
                if ok {
                    return Ok(Some(true));
                }
            }
        }
        let ok = self.row(i, seq, l1)?;
        if let Some(ok) = ok {
            record(&mut self.answered, i, seq, at, ok);
        }
        Ok(ok)
    }

    /// The answer for row `(l₀, seq, l₁)` from the chart of `left`: kept
    /// from an earlier point whose frontier states have the same names
    /// (see [`Prefix::rows`]), or searched ([`Insertion::row_searched`]) and
    /// kept; `None` where a full check must answer.
    fn row(&mut self, i: u32, seq: u32, l1: u32) -> Result<Option<bool>> {
        let Some(pre) = self.prefix.as_deref_mut() else {
            return Ok(None);
        };
        self.from.clear();
        self.from.extend(frontier_of(&pre.at, self.point.state(i)));
        // A point that does not move (a diffusion decoder's tries and
        // masks at one position) keeps no rows for later points: naming
        // its frontier states cost it more than its searches (a `dlm-cpp`
        // decode's constraint time 64 -> 115 ms per sample).
        let key = match self.keep_rows {
            true => Some(pre.rows.key(
                (self.constraint, &pre.base),
                &self.point,
                seq,
                &self.from,
                l1,
            )),
            false => None,
        };
        if let Some(&ok) = key.and_then(|key| pre.rows.answers.get(&key)) {
            self.stats.rows_kept += 1;
            return Ok(Some(ok));
        }
        let from = std::mem::take(&mut self.from);
        let ok = self.row_searched(i, seq, l1, &from);
        self.from = from;
        let ok = ok?;
        if let (Some(ok), Some(key), Some(pre)) = (ok, key, self.prefix.as_deref_mut()) {
            pre.rows.keep(key, ok);
        }
        Ok(ok)
    }

    /// The search of row `(l₀, seq, l₁)` from the chart of `left`, `from`
    /// the frontier states of `l₀`: their items move over `seq` into the
    /// automaton of `right` read from `l₁`; `None` where a full check must
    /// answer.
    fn row_searched(&mut self, i: u32, seq: u32, l1: u32, from: &[u32]) -> Result<Option<bool>> {
        let Some(pre) = self.prefix.as_deref_mut() else {
            return Ok(None);
        };
        if from.is_empty() {
            return Ok(Some(false));
        }
        if from.len() > 1 {
            self.stats.several_frontiers += 1;
        }
        let mut cx = RowSearch {
            c: self.constraint,
            pre,
            point: &self.point,
            seq: &mut self.seq,
            stats: &mut self.stats,
            many: self.many,
        };
        let made = |t: &Option<Tails>| t.as_ref().is_some_and(|t| t.has(l1));
        if self.many && !made(&cx.pre.right) {
            if let Some(ok) = self.bounds.answer(&mut cx, &self.right, (i, seq, l1), from) {
                cx.stats.bounded += 1;
                return Ok(Some(ok));
            }
        }
        let mut own = cx.pre.right.take();
        let ok = cx.search(&mut own, &self.right, true, (i, seq, l1), from);
        cx.pre.right = own;
        ok
    }

    /// The chart of `left`: the constraint's kept chart of the longest
    /// fixed text `left` starts with, grown by the rest (see
    /// [`crate::charts`]), or built; a chart of fixed text is kept for
    /// later points.
    fn chart_of_left(&mut self) -> Result<Prefix> {
        let c = self.constraint;
        if let Some(kept) = fixed_text(&self.left).and_then(|t| c.kept_chart(t)) {
            if let Some(pre) = self.grown_from(kept)? {
                self.stats.kept_charts += 1;
                return Ok(pre);
            }
        }
        let (frontier, base) = c.prefix_chart(&self.left)?;
        let pre = Prefix::new(frontier.at, base);
        self.keep(&pre);
        Ok(pre)
    }

    /// The chart of `left` grown from `kept`, the chart of a text `left`
    /// starts with, by the bytes after that text (kept too when there
    /// are any); `None` where the lexer states it ends in are not the
    /// point's own (they always are: lexing is deterministic).
    fn grown_from(&mut self, kept: KeptChart) -> Result<Option<Prefix>> {
        let c = self.constraint;
        let Some(text) = fixed_text(&self.left) else {
            return Ok(None);
        };
        let Some(rest) = text.get(kept.text.len()..) else {
            return Ok(None);
        };
        let mut pre = Prefix::new(kept.at, kept.base);
        let mut point = Point::from_states(kept.states);
        if !rest.is_empty() {
            let (mut rows, mut next) = (Vec::new(), Vec::new());
            point.read(c.lexer(), rest, &mut rows, &mut next);
            grow_prefix(c, &mut pre, &point, &rows, &mut self.seq)?;
            point = point.advance(&rows);
        }
        if point.states() != self.point.states() {
            return Ok(None);
        }
        if !rest.is_empty() {
            self.keep(&pre);
        }
        Ok(Some(pre))
    }

    /// Keeps `pre`, the chart of `left`, in the constraint for later
    /// points if the point moved (see [`crate::Config::kept_charts`]).
    fn keep_moved(&self, pre: Box<Prefix>) {
        if self.moved {
            self.keep_chart(pre.at, pre.base);
        }
    }

    /// Keeps `pre`, the chart of `left`, in the constraint for later
    /// points, where `left` is fixed text.
    fn keep(&self, pre: &Prefix) {
        self.keep_chart(pre.at.clone(), pre.base.clone());
    }

    /// Keeps the chart `base` of `left`, frontier states `at`, in the
    /// constraint for later points, where `left` is fixed text.
    fn keep_chart(&self, at: Vec<(u32, u32)>, base: Base) {
        if let Some(text) = fixed_text(&self.left) {
            self.constraint.keep_chart(KeptChart {
                text: Arc::from(text),
                states: self.point.states().to_vec(),
                at,
                base,
            });
        }
    }

    /// Moves the chart of `left` (if built) past accepted bytes whose
    /// relation is `rows`, as the text after them will be `left`: per row
    /// `(l₀, T₁…T_m, l₁)`, the frontier states of `l₀` are the frontier
    /// states of `l₁` when `m = 0` (the lexeme goes on; no terminal is
    /// read), and otherwise lead by `T₁…T_m` to a new frontier state of
    /// `l₁` (one per `l₁`). The chart grows by that small automaton (see
    /// the intersection module's `grow`), so an autoregressive loop builds
    /// the chart of its text once, token by token, instead of once per
    /// token.
    fn grow(&mut self, rows: &[Row]) -> Result<bool> {
        let Some(pre) = self.prefix.as_deref_mut() else {
            return Ok(false);
        };
        grow_prefix(self.constraint, pre, &self.point, rows, &mut self.seq)?;
        self.moved = true;
        Ok(true)
    }

    /// The answer for an insertion of `bytes` whose relation is `rows`
    /// (not empty): remembered, or checked and remembered.
    fn verdict(&mut self, rows: &[Row], bytes: &[u8]) -> Result<bool> {
        if let Some((last, ok)) = &self.last {
            if last[..] == *rows {
                return Ok(*ok);
            }
        }
        let ok = self.remembered_or_checked(rows, bytes)?;
        let last = self.last.get_or_insert_with(|| (Vec::new(), ok));
        last.0.clear();
        last.0.extend_from_slice(rows);
        last.1 = ok;
        Ok(ok)
    }

    /// [`Insertion::verdict`] past the last relation: remembered, or
    /// checked and remembered.
    fn remembered_or_checked(&mut self, rows: &[Row], bytes: &[u8]) -> Result<bool> {
        if let Some(ok) = self.remembered(rows) {
            return Ok(ok);
        }
        let ok = self.checked(rows, bytes)?;
        match rows {
            [one] => {
                self.memo_one.insert(*one, ok);
            }
            _ => {
                self.memo.insert(self.key.clone().into_boxed_slice(), ok);
            }
        }
        Ok(ok)
    }

    /// The answer kept for relation `rows`, if any (a relation of several
    /// rows leaves its key in `self.key`).
    fn remembered(&mut self, rows: &[Row]) -> Option<bool> {
        if let [one] = rows {
            return self.memo_one.get(one).copied();
        }
        self.key.clear();
        for &(i, seq, l) in rows {
            self.key.extend([i, seq, l]);
        }
        self.memo.get(&self.key[..]).copied()
    }

    /// The answer for relation `rows`, from the chart of `left` where it
    /// applies, else by a full check.
    fn checked(&mut self, rows: &[Row], bytes: &[u8]) -> Result<bool> {
        self.stats.checks += 1;
        if let Some(ok) = self.by_prefix(rows)? {
            self.stats.by_prefix += 1;
            return Ok(ok);
        }
        let mut p = self.left.clone();
        p.push_text(bytes);
        p.append(&self.right);
        if !self.limits.is_empty() {
            let mut limits = self.limits.clone();
            if p.n_holes() < limits.len() {
                // Nothing inserted between two holes: they are one, with
                // room for both.
                let k = self.left.n_holes() - 1;
                limits[k] = limits[k]
                    .zip(limits[k + 1])
                    .map(|(a, b)| a.saturating_add(b));
                limits.remove(k + 1);
            }
            return self.constraint.check_within(&p, &limits);
        }
        if self.end_refutes(&p)? {
            self.stats.by_end += 1;
            return Ok(false);
        }
        self.constraint.check(&p)
    }

    /// Whether the fixed text after the last hole of `p` (a full check's
    /// partial output) refutes it on its own, asked before a full check of
    /// a canvas with many holes before the point, where the chart of
    /// `left` is not built: there the end is what refuses most tokens
    /// (`dlm-cpp` masks at a canvas's last masks, 22–26 holes before
    /// them: 37–59 full checks of 0.5 ms each), and the end alone is
    /// decided in a few dozen µs.
    fn end_refutes(&self, p: &Partial) -> Result<bool> {
        if self.left.n_holes() <= PREFIX_MAX_HOLES {
            return Ok(false);
        }
        let c = self.constraint;
        let mut budget = c.budget("the completability check");
        c.end_refutes(p, &mut budget)
    }
}

/// The answer for row `(l₀, τ, l₁)` implied by the rows answered so far,
/// when `right` starts with a hole without a limit. The text after the
/// point is then read from the hole entered in `l₁`, which holds every
/// lexer state the hole's bytes reach from `l₁` (its hole closure), and
/// what a hole allows from a set of states is the union of what it allows
/// from each: so a row whose closure holds an allowed row's closure (same
/// `l₀`, same `τ`) is allowed, and one whose closure is inside a refused
/// row's is refused. In C++ every identifier prefix a token can end in is
/// its own `l₁` (it remembers which keywords it may still become): in one
/// mask we looked at, 400 of 1,200 relations differed in `l₁` alone, and
/// each of those closures holds the plain identifier's.
fn subsumed(done: &Answered, i: u32, seq: u32, at: u32) -> Option<bool> {
    let rows = done.by.get(&(i, seq))?;
    let w = done.words;
    let c = &done.bits[at as usize..at as usize + w];
    for &(d, ok) in rows {
        let d = &done.bits[d as usize..d as usize + w];
        let within = match ok {
            // d ⊆ c
            true => d.iter().zip(c).all(|(&d, &c)| d & !c == 0),
            // c ⊆ d
            false => c.iter().zip(d).all(|(&c, &d)| c & !d == 0),
        };
        if within {
            return Some(ok);
        }
    }
    None
}

/// Keeps the answer `ok` of row `(l₀, τ, l₁)`, `at` the offset of `l₁`'s
/// hole set, for [`subsumed`].
fn record(done: &mut Answered, i: u32, seq: u32, at: u32, ok: bool) {
    let rows = done.by.entry((i, seq)).or_default();
    if rows.len() < ANSWERED_PER_KEY {
        rows.push((at, ok));
    }
}

/// The offset in `done.bits` of the set a hole starting `right` holds when
/// entered in `l1`: the hole closure of `l1` reduced as the token
/// automaton reduces it (to the states that can end a lexeme or read the
/// byte after the hole, without those another member dominates), which
/// allows the same words.
fn hole_set(done: &mut Answered, lx: &crate::lexer::Lexer, right: &Partial, l1: u32) -> u32 {
    if let Some(&at) = done.sets.get(&l1) {
        return at;
    }
    let at = done.bits.len() as u32;
    done.bits.extend_from_slice(lx.hole_closure(l1));
    let keep: &[u64] = match right.segments().get(1) {
        Some(Segment::Text(t)) if !t.is_empty() => lx.live_on(t[0]),
        _ => &lx.fresh_set,
    };
    crate::lexer::mask_hole_set(lx, &mut done.bits[at as usize..], keep);
    done.sets.insert(l1, at);
    at
}

/// The state of `l1`'s hole closure whose own hole closure has the fewest
/// states (the first such), kept per `l1`.
fn sink(done: &mut Answered, lx: &crate::lexer::Lexer, l1: u32) -> u32 {
    if let Some(&m) = done.sinks.get(&l1) {
        return m;
    }
    let size = |l: u32| -> u32 { lx.hole_closure(l).iter().map(|w| w.count_ones()).sum() };
    let m = crate::lexer::ones(lx.hole_closure(l1))
        .min_by_key(|&l| (size(l), l))
        .unwrap_or(l1);
    done.sinks.insert(l1, m);
    m
}

/// Grows the chart of `left` by the terminals of `rows` (the relation of
/// bytes read from `point`, the point at the end of `left`), as
/// [`Insertion::advance`] does: its new frontier states are those where
/// the rows' `l₁` stand.
fn grow_prefix(
    c: &Constraint,
    pre: &mut Prefix,
    point: &Point,
    rows: &[Row],
    buf: &mut Vec<u32>,
) -> Result<()> {
    // Kept layers grew from the frontier before the point moved.
    pre.grown.clear();
    let term_sets = &c.lexer().term_sets;
    let n = pre.base.len() as u32;
    let mut edges: Vec<Vec<(u32, u32)>> = Vec::new();
    // (l₁, its new frontier state), (l₀, steps from its frontier).
    let mut ends: Vec<(u32, u32)> = Vec::new();
    let mut steps: Vec<(u32, Vec<(u32, u32)>)> = Vec::new();
    let mut at: Vec<(u32, u32)> = Vec::new();
    for &(i, seq, l1) in rows {
        let l0 = point.state(i);
        if frontier_of(&pre.at, l0).next().is_none() {
            continue;
        }
        point.sequence(seq, buf);
        let Some((&first, rest)) = buf.split_first() else {
            at.extend(frontier_of(&pre.at, l0).map(|s| (l1, s)));
            continue;
        };
        let end = match ends.iter().find(|&&(l, _)| l == l1) {
            Some(&(_, e)) => e,
            None => {
                edges.push(Vec::new());
                let e = edges.len() as u32 - 1;
                ends.push((l1, e));
                at.push((l1, n + e));
                e
            }
        };
        let mut to = end;
        for &set in rest.iter().rev() {
            edges.push(term_sets[set as usize].iter().map(|&t| (t, to)).collect());
            to = edges.len() as u32 - 1;
        }
        let k = match steps.iter().position(|&(l, _)| l == l0) {
            Some(k) => k,
            None => {
                steps.push((l0, Vec::new()));
                steps.len() - 1
            }
        };
        steps[k]
            .1
            .extend(term_sets[first as usize].iter().map(|&t| (t, to)));
    }
    if !edges.is_empty() {
        let froms: Vec<Vec<u32>> = steps
            .iter_mut()
            .map(|(l0, s)| {
                s.sort_unstable();
                s.dedup();
                frontier_of(&pre.at, *l0).collect()
            })
            .collect();
        let seeds: Vec<Seed<'_>> = froms
            .iter()
            .zip(&steps)
            .map(|(from, (_, steps))| Seed { from, steps })
            .collect();
        let frontier: Vec<u32> = ends.iter().map(|&(_, e)| e).collect();
        let ext = TokenNfa::from_edges(edges);
        let by = Growth {
            ext: &ext,
            seeds: &seeds,
            frontier: &frontier,
        };
        c.grow(&mut pre.base, by)?;
    }
    at.sort_unstable();
    at.dedup();
    pre.rows.moved();
    pre.at = at;
    Ok(())
}

impl Answered {
    fn new(lx: &crate::lexer::Lexer) -> Answered {
        Answered {
            words: lx.words,
            ..Answered::default()
        }
    }
}

/// Texts after other points that bound this point's answers, when
/// `right` is `□ · S` (a hole, then anything) and the point expects many
/// proposals (see the module docs, "Texts after other points").
#[derive(Debug, Default)]
struct Bounds {
    /// The key of `right` (see [`tail_key`]), once `keyed`; `None` where
    /// `right` does not begin with a hole, or no texts are kept.
    key: Option<Vec<u8>>,
    /// Whether `key` was computed (only for points that expect many
    /// proposals: a diffusion decoder's points never need it).
    keyed: bool,
    /// Whether the constraint's kept texts were taken (once, at the
    /// first row that needs them).
    taken: bool,
    /// `□` alone: what it refuses, `right` refuses (`None`: the point
    /// answers with its own automata alone).
    shorter: Option<KeptTail>,
    /// A kept `□ · X · S`: what it allows, `right` allows (taken for
    /// the `l₁` of a row, see [`Want::LongerFrom`]).
    longer: Option<KeptTail>,
}

impl Clone for Bounds {
    /// The kept texts taken are the point's to give back: a clone takes
    /// its own.
    fn clone(&self) -> Bounds {
        Bounds {
            key: self.key.clone(),
            keyed: self.keyed,
            ..Bounds::default()
        }
    }
}

impl Bounds {
    /// The answer for `row`, `from` the frontier states of its `l₀`, where
    /// the texts after other points give it: refused after `□` alone, or
    /// allowed before a longer text; `None` where they do not (or the
    /// longer one has no automaton from the row's `l₁`). On first use the
    /// point takes the constraint's kept automata of its own `right`, of
    /// `□` alone and of the shortest longer text.
    fn answer(
        &mut self,
        cx: &mut RowSearch<'_>,
        right: &Partial,
        row: Row,
        from: &[u32],
    ) -> Option<bool> {
        self.key_of(cx.c, right);
        let key = self.key.as_deref()?;
        if !self.taken {
            self.taken = true;
            if cx.pre.right.is_none() {
                if let Some(kept) = cx.c.take_tail(key, Want::Same) {
                    cx.pre.right = kept.tails;
                    cx.stats.kept_tails += 1;
                }
            }
            // Without a longer text, the point makes its own automata
            // for the first row `□` alone does not refuse, and those
            // answer the rest.
            if !key.is_empty() && cx.c.keeps_longer_tail(key) {
                let hole = || KeptTail {
                    key: Arc::from(&[][..]),
                    right: Partial::new().hole(),
                    tails: None,
                };
                self.shorter = Some(cx.c.take_tail(&[], Want::Same).unwrap_or_else(hole));
            }
            if cx.pre.right.as_ref().is_some_and(|t| t.has(row.2)) {
                return None;
            }
        }
        self.shorter.as_ref()?;
        // A bound whose search fails is not asked again (its automata
        // are dropped; the point's own answer).
        if let Some(t) = self.shorter.as_mut() {
            if let Ok(Some(false)) = cx.search(&mut t.tails, &t.right, true, row, from) {
                return Some(false);
            }
        }
        let from_l1 = |t: &KeptTail| t.tails.as_ref().is_some_and(|x| x.has(row.2));
        if !self.longer.as_ref().is_some_and(from_l1) {
            let t = cx.c.take_tail(key, Want::LongerFrom(row.2))?;
            if let Some(old) = self.longer.replace(t) {
                cx.c.keep_tail(old);
            }
        }
        let t = self.longer.as_mut()?;
        match cx.search(&mut t.tails, &t.right, false, row, from) {
            Ok(Some(true)) => Some(true),
            _ => None,
        }
    }

    /// Computes the key of `right` under `c` once.
    fn key_of(&mut self, c: &Constraint, right: &Partial) {
        if !self.keyed {
            self.keyed = true;
            self.key = tail_key(right).filter(|_| c.keeps_tails());
        }
    }

    /// Gives the kept texts taken back to `c`.
    fn give_back(&mut self, c: &Constraint) {
        for t in [self.shorter.take(), self.longer.take()]
            .into_iter()
            .flatten()
        {
            c.keep_tail(t);
        }
    }
}

/// What the search of one row from the chart of `left` works with (see
/// [`Insertion::row_searched`]).
struct RowSearch<'a> {
    c: &'a Constraint,
    pre: &'a mut Prefix,
    point: &'a Point,
    seq: &'a mut Vec<u32>,
    stats: &'a mut InsertionStats,
    many: bool,
}

impl RowSearch<'_> {
    /// The search of row `(l₀, seq, l₁)` from the chart of `left`, `from`
    /// the frontier states of `l₀`: their items move over `seq` into the
    /// automata `tails` of `right` (read from `l₁`, made here on first use
    /// unless `build` is false); `None` where a full check must answer, or
    /// where `build` is false and no automaton was made for the row.
    fn search(
        &mut self,
        tails: &mut Option<Tails>,
        right: &Partial,
        build: bool,
        (i, seq, l1): Row,
        from: &[u32],
    ) -> Result<Option<bool>> {
        let c = self.c;
        let term_sets = &c.lexer().term_sets;
        // A lexeme in `l₁` that can only end where it stands, as
        // terminals `X` or skipped: `right` is read from the start state
        // after it (see [`ends_in_place`]), on the start state's tail.
        let lx = c.lexer();
        let unmade =
            |tails: &Option<Tails>, l: u32| !build && !tails.as_ref().is_some_and(|t| t.has(l));
        let (l1, before) = match ends_in_place(lx, right, l1) {
            Some(Ends::Skipped) => {
                self.stats.ended += 1;
                (lx.start, None)
            }
            Some(Ends::Emits(set)) => {
                if unmade(tails, lx.start) {
                    return Ok(None);
                }
                let (r, k) = tail_for(tails, c, right, lx.start, self.many, self.stats)?;
                match r.accepts_empty(k) {
                    false => {
                        self.stats.ended += 1;
                        (lx.start, Some(&term_sets[set as usize][..]))
                    }
                    true => (l1, None),
                }
            }
            None => (l1, None),
        };
        if unmade(tails, l1) {
            return Ok(None);
        }
        let (r, k) = tail_for(tails, c, right, l1, self.many, self.stats)?;
        if r.is_empty(k) {
            return Ok(Some(false));
        }
        self.point.sequence(seq, self.seq);
        let hits = r.remembered();
        // Where the point expects many proposals, the tail remembers the
        // triples from the chart that led to the goal: that pays over a
        // mask's hundreds of searches; a decoder's few tries at one place
        // gain nothing from it (its cost there measured within noise,
        // `dlm-cpp` side by side).
        let remember = self.many;
        let ok = match (self.seq.split_first(), r.accepts_empty(k)) {
            // The word may end at the point: the base has no final
            // state to say so; a full check does.
            (None, true) => return Ok(None),
            // The lexeme in progress goes on into `right`: the
            // frontier's items scan the terminals `right` starts with.
            (None, false) => {
                let at = Entering {
                    k,
                    from,
                    before,
                    remember,
                };
                c.search_tail(&self.pre.base, r, at)
            }
            // The word may end after the insertion's terminals: they
            // and `right` as one automaton, searched afresh.
            (Some((&first, rest)), true) => {
                let rest: Vec<&[u32]> = rest.iter().map(|&k| &term_sets[k as usize][..]).collect();
                let (ext, to) = TokenNfa::chain(&rest, &r.nfa_from(k));
                let steps: Vec<(u32, u32)> =
                    term_sets[first as usize].iter().map(|&t| (t, to)).collect();
                let seeds = [Seed {
                    from,
                    steps: &steps,
                }];
                c.extend(&self.pre.base, &ext, &seeds)
            }
            // The insertion's terminals grow the chart for this search
            // only (their last state the frontier), then `right`'s kept
            // chart goes on from there. Kept layers of the same terminals,
            // or else of the longest run of their first ones, are put back
            // instead of grown again.
            (Some(_), false) => {
                let kept_len = self.pre.base.len();
                let key: GrownKey = (i, seq);
                let done = kept_attached(
                    &mut self.pre.base,
                    &self.pre.grown,
                    self.point,
                    key,
                    self.seq.len(),
                );
                if done < self.seq.len() {
                    let (first, rest) = (self.seq[done], &self.seq[done + 1..]);
                    let m = rest.len() as u32 + 1;
                    let steps: Vec<(u32, u32)> =
                        term_sets[first as usize].iter().map(|&t| (t, 0)).collect();
                    // From the frontier of the layers put back, or the
                    // frontier of `l₀` in the chart of `left`.
                    let on = [self.pre.base.len() as u32 - 1];
                    let seeds = [Seed {
                        from: if done > 0 { &on } else { from },
                        steps: &steps,
                    }];
                    // The rest's first terminal cannot follow: the grown
                    // chart would have no item, so nothing enters `right`.
                    if !c.enters(&self.pre.base, &seeds) {
                        self.pre.base.detach_above(kept_len);
                        self.stats.dead_growths += 1;
                        return Ok(Some(false));
                    }
                    let edges: Vec<Vec<(u32, u32)>> = (0..m)
                        .map(|j| match rest.get(j as usize) {
                            Some(&set) => term_sets[set as usize]
                                .iter()
                                .map(|&t| (t, j + 1))
                                .collect(),
                            None => Vec::new(),
                        })
                        .collect();
                    let ext = TokenNfa::from_edges(edges);
                    let by = Growth {
                        ext: &ext,
                        seeds: &seeds,
                        frontier: &[m - 1],
                    };
                    if let Err(e) = c.grow(&mut self.pre.base, by) {
                        self.pre.base.detach_above(kept_len);
                        return Err(e);
                    }
                }
                let at = Entering {
                    k,
                    from: &[self.pre.base.len() as u32 - 1],
                    before,
                    remember,
                };
                let ok = c.search_tail(&self.pre.base, r, at);
                let layers = self.pre.base.detach_above(kept_len);
                if self.pre.grown.len() >= MAX_GROWN {
                    self.pre.grown.clear();
                }
                self.pre.grown.insert(key, layers);
                ok
            }
        };
        self.stats.remembered += (r.remembered() - hits) as usize;
        let ok = match ok {
            Ok(ok) => ok,
            Err(e) => {
                // The kept chart may be inconsistent now.
                *tails = None;
                return Err(e);
            }
        };
        Ok(Some(ok))
    }
}

/// Automata of `right` read from one state a point keeps besides its main
/// one before it makes the main one for every lexer state.
const MAX_EXTRA_TAILS: usize = 4;

/// The tail of `right` read from `l1` and its entry there, made on first
/// use. The main automaton is read from `l1` alone at first, unless `all`
/// says many states will be asked (a mask's walk, a point that moves);
/// when a second state is asked, or at once with `all`, from the states
/// the constraint has learned insertion points ask for (every state asked
/// so far). A state that one was not made for gets an automaton of its
/// own (its chart searched apart), up to [`MAX_EXTRA_TAILS`]; past them,
/// the main one is made again for every lexer state. The automaton's cost
/// is mostly its entries (each a hole closure and an interned set of
/// configurations, and the exits of each distinct hole set when `right`
/// begins with a hole), not the text: C++ has 689 lexer states (about 420
/// distinct entries), a region of the autoregressive loop asks for 2–13
/// of them and a fresh mask for 20–55, from about 50–120 over a run.
fn tail_for<'t>(
    tails: &'t mut Option<Tails>,
    c: &Constraint,
    right: &Partial,
    l1: u32,
    all: bool,
    stats: &mut InsertionStats,
) -> Result<(&'t mut Tail, usize)> {
    c.note_tail_start(l1);
    let n = c.lexer().len();
    let (main_k, extra_i) = match tails.as_ref() {
        Some(t) => (
            t.entry_of.get(l1 as usize).copied().unwrap_or(NO_ENTRY),
            t.extra.iter().position(|&(l, _)| l == l1),
        ),
        None => (NO_ENTRY, None),
    };
    let reach = tails.as_ref().map(|t| t.reach);
    let extras = tails.as_ref().map_or(0, |t| t.extra.len());
    let missing = || {
        crate::error::Error::new(
            crate::error::ErrorKind::Budget,
            "the automaton of the text after this insertion point is missing",
        )
    };
    let hit = main_k != NO_ENTRY || extra_i.is_some();
    if hit {
        let t = tails.as_mut().ok_or_else(missing)?;
        return Ok(match extra_i {
            Some(i) => (&mut t.extra[i].1, 0),
            None => (&mut t.main, main_k as usize),
        });
    }
    // Automata the constraint keeps for later points (of a point that
    // expects many proposals) are made for every lexer state at the first
    // state they were not made for: later points ask for other states,
    // and one automaton for all of them costs less than one per state
    // (2.3 KB file, 40 regions: 348 → 282 M instructions; C++ functions,
    // whose texts after a point are short, paid 337 against 255 M when
    // those of 256 bytes and more were kept).
    let kept = all && c.keeps_tail(right);
    if reach == Some(Reach::Learned) && extras < MAX_EXTRA_TAILS && !kept {
        let tail = c.suffix_tail(right, &[l1])?;
        stats.tails += 1;
        let t = tails.as_mut().ok_or_else(missing)?;
        t.extra.push((l1, tail));
        let i = t.extra.len() - 1;
        return Ok((&mut t.extra[i].1, 0));
    }
    let (reach, mut starts) = match (reach, all) {
        (None, false) => (Reach::One, vec![l1]),
        (None, true) | (Some(Reach::One), _) => (Reach::Learned, c.tail_starts()),
        (Some(_), _) => (Reach::Every, (0..n as u32).collect()),
    };
    if let Err(k) = starts.binary_search(&l1) {
        starts.insert(k, l1);
    }
    *tails = None;
    let main = c.suffix_tail(right, &starts)?;
    stats.tails += 1;
    let mut entry_of = vec![NO_ENTRY; n.max(l1 as usize + 1)];
    for (k, &l) in starts.iter().enumerate() {
        entry_of[l as usize] = k as u32;
    }
    let t = tails.insert(Tails {
        entry_of,
        reach,
        main,
        extra: Vec::new(),
    });
    let k = t.entry_of[l1 as usize] as usize;
    Ok((&mut t.main, k))
}

/// How the lexeme in progress in `l1` ends when it can only end where it
/// stands, read before `right` (see [`ends_in_place`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ends {
    /// As one of the terminals of set `X` (an id of `lx.term_sets`).
    Emits(u32),
    /// Skipped (an ignored lexeme: whitespace, a comment), emitting
    /// nothing.
    Skipped,
}

/// How the lexeme in progress in `l1` ends, when, read before `right`, it
/// can only end where it stands and `right` is then read as from the
/// lexer's start state: nothing read after it extends it (its hole closure
/// is `l1` alone, or `right` begins with a byte it cannot go on with); it
/// is either a terminal or skipped, not both; and the lexer is in its
/// start state after it (`;`, `(`, `)`, …), or in a state that reads
/// `right`'s first byte as the start state does (the state after an
/// identifier or a space, which only remembers what the next lexeme may
/// not begin with). Then `right` read from `l1` is `X`, or nothing,
/// followed by `right` read from the start state, so rows ending in such
/// states share the start state's automaton of `right` and its kept chart:
/// in a C++ mask over Qwen2's vocabulary about half of the lexer states
/// `l₁` rows end in are such (hole closure alone), each with its own
/// automaton and chart before; before fixed text, every identifier-like
/// state (one per keyword it may still become) and every space before
/// punctuation.
fn ends_in_place(lx: &crate::lexer::Lexer, right: &Partial, l1: u32) -> Option<Ends> {
    let l = l1 as usize;
    let first = match right.segments().first() {
        Some(Segment::Text(t)) => t.first().copied(),
        _ => None,
    };
    let alone = || {
        lx.hole_closure(l1)
            .iter()
            .map(|w| w.count_ones())
            .sum::<u32>()
            == 1
    };
    let after = lx.emit[l];
    let as_start = match first {
        _ if after == lx.start => true,
        Some(b) => lx.can_end(l1) && lx.next(after, b) == lx.next(lx.start, b),
        None => false,
    };
    let cut = match first {
        Some(b) => lx.dies_on(l1, b),
        None => alone(),
    };
    if l1 == lx.start || !as_start || !cut {
        return None;
    }
    let set = lx.emit_terms[l];
    match (lx.skippable[l], lx.term_sets[set as usize].is_empty()) {
        (false, false) => Some(Ends::Emits(set)),
        (true, true) => Some(Ends::Skipped),
        _ => None,
    }
}

/// Puts back on `base` the kept layers of the longest first run of the
/// `m` terminal sets of row key `(l₀, τ)` that has them (`τ` itself
/// first), and returns its length (0: none). The rest of `τ` is then grown
/// from their frontier: a row's terminals mostly extend an earlier row's
/// (the trie is walked in order), and runs of operators (`*`, `-`, `=`)
/// are lexed one terminal at a time.
fn kept_attached(
    base: &mut Base,
    grown: &FxMap<GrownKey, Grown>,
    point: &Point,
    (i, mut seq): GrownKey,
    m: usize,
) -> usize {
    for len in (1..=m).rev() {
        if grown.get(&(i, seq)).is_some_and(|g| base.attach(g)) {
            return len;
        }
        seq = point.prefix(seq);
    }
    0
}

/// The frontier states of lexer state `l0` in `at` (sorted pairs).
fn frontier_of(at: &[(u32, u32)], l0: u32) -> impl Iterator<Item = u32> + '_ {
    let lo = at.partition_point(|&(l, _)| l < l0);
    at[lo..]
        .iter()
        .take_while(move |&&(l, _)| l == l0)
        .map(|&(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Grammar;

    /// Chains of nodes without tokens and with one child are merged into
    /// the edge below them; every token keeps its bytes (the labels of its
    /// node's path) and the mask equals asking token by token.
    #[test]
    fn merged_chains_keep_every_token() {
        let tokens = ["", "a", "abcd", "abce", "b", "bcd", "bcd", "zzzzzz"];
        let v = Vocabulary::new(&tokens);
        // root, a, abc (two children), abcd, abce, b, bcd (two ids), zzzzzz
        assert_eq!(v.depth.len(), 8);
        let labels: Vec<&[u8]> = (0..v.depth.len()).map(|k| v.label(k)).collect();
        assert_eq!(
            labels,
            [&b""[..], b"a", b"bc", b"d", b"e", b"b", b"cd", b"zzzzzz"]
        );
        let mut path: Vec<&[u8]> = Vec::new();
        let mut seen = vec![false; tokens.len()];
        for k in 0..v.depth.len() {
            let d = v.depth[k] as usize;
            path.truncate(d.saturating_sub(1));
            if d > 0 {
                path.push(v.label(k));
            }
            for &id in v.tokens(k) {
                assert_eq!(path.concat(), tokens[id as usize].as_bytes());
                seen[id as usize] = true;
            }
        }
        assert!(seen.iter().all(|&x| x));
        let g = Grammar::from_lark(r#"start: /[abcd]+/ "e"?"#, None).unwrap();
        let c = Constraint::compile(&g).unwrap();
        // A direct walk, a kept walk's build, then the kept walk.
        let masks: Vec<Vec<bool>> = (0..3)
            .map(|_| {
                let mut at =
                    Insertion::new(&c, &Partial::new().text("b"), &Partial::new().hole()).unwrap();
                at.mask(&v).unwrap()
            })
            .collect();
        assert_eq!(masks[0], masks[1]);
        assert_eq!(masks[0], masks[2]);
        let mask = &masks[0];
        for (id, t) in tokens.iter().enumerate() {
            let mut one =
                Insertion::new(&c, &Partial::new().text("b"), &Partial::new().hole()).unwrap();
            assert_eq!(mask[id], one.allows(t.as_bytes()).unwrap(), "{t:?}");
        }
        assert_eq!(*mask, [true, true, true, true, true, true, true, false]);
    }

    /// A walk serves the points whose lexer states are its own states'
    /// twins: after `;`, `,` and `(` (one twin: each finished, each
    /// emitting its own terminal) the first point's direct walk, the
    /// second's build and the third's kept walk give the masks of asking
    /// token by token.
    #[test]
    fn twins_share_walks() {
        let tokens = [
            "", "a", "ab", "b ", " ", ";", ",", "(", ")", "()", "a;", "a,", ")a", " a", "a(",
            "a()", ",a", "a)", ";a", "(a", "ab;", " ;", "((", "a ", " (",
        ];
        let (c, v) = compiled(
            r#"
            start: item*
            item: ID ";" | ID "," ID | "(" ID ")" | ID "(" ")"
            ID: /[a-z]+/
            %ignore " "
            "#,
            &tokens,
        );
        let lx = c.lexer();
        let states: Vec<u32> = ["x;", "x,", "("]
            .iter()
            .map(|left| match states_after(&c, left)[..] {
                [s] => s,
                ref s => panic!("{left}: {s:?}"),
            })
            .collect();
        let t = twins(lx);
        assert_eq!(t[states[0] as usize], t[states[1] as usize]);
        assert_eq!(t[states[0] as usize], t[states[2] as usize]);
        assert_ne!(
            lx.emit_terms[states[0] as usize],
            lx.emit_terms[states[1] as usize]
        );
        for (round, left) in ["x;", "x,", "(", "x;", "x,", "("].iter().enumerate() {
            let (mask, walked) = mask_as_asked(&c, &v, &tokens, left);
            // The first point walks the trie, the others read the walk.
            assert_eq!(walked, usize::from(round > 0), "{left}");
            assert!(mask.iter().any(|&x| x) && !mask.iter().all(|&x| x));
        }
    }

    /// The constraint of grammar `src` (Lark) and the vocabulary of
    /// `tokens`.
    fn compiled<T: AsRef<[u8]>>(src: &str, tokens: &[T]) -> (Constraint, Vocabulary) {
        let g = Grammar::from_lark(src, None).unwrap();
        (Constraint::compile(&g).unwrap(), Vocabulary::new(tokens))
    }

    /// The lexer states at the point after `left` (before a hole).
    fn states_after(c: &Constraint, left: &str) -> Vec<u32> {
        let at = Insertion::new(c, &Partial::new().text(left), &Partial::new().hole()).unwrap();
        at.point.states().to_vec()
    }

    /// The mask of `tokens` (the vocabulary `v`) after `left` before a
    /// hole, asserted equal to asking each token alone, and how many
    /// masks read a kept walk (0 or 1).
    fn mask_as_asked<T: AsRef<[u8]> + std::fmt::Debug>(
        c: &Constraint,
        v: &Vocabulary,
        tokens: &[T],
        left: &str,
    ) -> (Vec<bool>, usize) {
        let (l, r) = (Partial::new().text(left), Partial::new().hole());
        let mut at = Insertion::new(c, &l, &r).unwrap();
        let mask = at.mask(v).unwrap();
        for (id, tok) in tokens.iter().enumerate() {
            let mut one = Insertion::new(c, &l, &r).unwrap();
            assert_eq!(
                mask[id],
                one.allows(tok.as_ref()).unwrap(),
                "{left} {tok:?}"
            );
        }
        (mask, at.stats().walked)
    }

    /// A walk from an identifier's state serves the state of an
    /// identifier that may still become a keyword (`whi`), which reads
    /// otherwise on `l` alone: the subtree of `l` is walked from the point,
    /// the rest read from the walk, and the mask is asking token by token.
    #[test]
    fn near_twins_share_walks() {
        let tokens = [
            "", "a", "l", "le", "while", "le(", "l=", "e", "e(", "e=", "x;", " ", " =", "(", "=",
            ";", "(a", "l (", "le (", "lx", "a=b;", "=a;", "ile", "(x)", " (",
        ];
        let (c, v) = compiled(
            r#"
            start: (WHILE "(" ID ")" | ID "=" ID ";")*
            WHILE: "while"
            ID: /[a-z]+/
            %ignore " "
            "#,
            &tokens,
        );
        let lx = c.lexer();
        let (plain, whi) = (states_after(&c, "ab"), states_after(&c, "whi"));
        let marked = near_classes(lx, whi[0], plain[0]).expect("near twins");
        assert_eq!(marked.iter().filter(|&&x| x).count(), 1);
        assert!(marked[lx.class(b'l')]);
        for (round, left) in ["ab", "ab", "whi", "whi", "ab"].iter().enumerate() {
            let (_, walked) = mask_as_asked(&c, &v, &tokens, left);
            assert_eq!(walked, usize::from(round > 0), "{left}");
        }
    }

    /// Regression: a mask from a near twin's walk asked its relations
    /// whose bytes begin where the twins read otherwise with those bytes,
    /// which do not have the relation's rows at the point: after `/` (the
    /// start state's near twin: both read otherwise on every byte here),
    /// the walk's relation of `/*` was asked with the bytes `/*`, refused
    /// (`//*`), and the answer kept for the rows of `*`, which is allowed.
    #[test]
    fn near_twin_mask_asks_no_relation_with_bytes_of_other_rows() {
        let mut words: Vec<Vec<u8>> = vec![Vec::new()];
        for a in *b"x,/*" {
            words.push(vec![a]);
            for b in *b"x,/*" {
                words.push(vec![a, b]);
            }
        }
        let (c, v) = compiled(
            r#"
            start: "x" ("," "x")*
            COMMENT: /\/\*([^*]|\*+[^*\/])*\*+\//
            %ignore COMMENT
            "#,
            &words,
        );
        for left in ["", "", "/"] {
            mask_as_asked(&c, &v, &words, left);
        }
    }

    /// Relations met after a walk's table of successors is full step the
    /// lexer at every node, with the answers of the table.
    #[test]
    fn relations_past_the_successor_table_step_alike() {
        let g = Grammar::from_lark(
            r#"
            start: (KW | ID | NUM)*
            KW: "if"
            ID: /[a-z]+/
            NUM: /[0-9]+/
            %ignore " "
            "#,
            None,
        )
        .unwrap();
        let c = Constraint::compile(&g).unwrap();
        let ins = Insertion::new(&c, &Partial::new().text("i"), &Partial::new().hole()).unwrap();
        let lx = c.lexer();
        let mut start = Vec::new();
        ins.point.start(&mut start);
        let (mut p_full, mut p_capped) = (ins.point.clone(), ins.point.clone());
        let mut full = Relations::new(lx, &start);
        let mut capped = Relations::with_table(lx, &start, 2 * lx.n_classes());
        // Every string of up to 5 bytes over the alphabet, twice over
        // (the second time from the tables).
        for _ in 0..2 {
            let mut stack = vec![(0u32, 0u32, 0)];
            while let Some((a, b, depth)) = stack.pop() {
                assert_eq!(a, b);
                assert_eq!(full.rows(a), capped.rows(b));
                if depth == 5 {
                    continue;
                }
                for &byte in b"if 1x" {
                    let x = full.child(lx, &mut p_full, a, byte);
                    let y = capped.child(lx, &mut p_capped, b, byte);
                    assert_eq!(x == DEAD, y == DEAD);
                    if x != DEAD {
                        stack.push((x, y, depth + 1));
                    }
                }
            }
        }
        assert!(capped.len() > 2, "the cap was not reached");
        assert_eq!(capped.next.len(), 2 * lx.n_classes());
        assert_eq!(full.next.len(), full.len() * lx.n_classes());
    }
}

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
//!   by token (which the tests verify).
//! * **The chart of `left`, once.** When `left` has no hole (every step of
//!   autoregressive infilling), a new relation does not need a check of the
//!   whole text: the automaton of `left` as a prefix and its phase-1 chart
//!   (every item, to the fixpoint, with every production predicted at the
//!   states where `left` ends) are built on the first check at the point,
//!   the automaton of `right` once per lexer state `l₁` an insertion can
//!   leave, and a relation is decided by moving the items waiting at the
//!   end of `left` over its terminals into `right`'s automaton and searching
//!   on from there (`Prefix` below; the intersection module's `extend`).
//!   Same answers (the mask tests compare every token with a full check and
//!   assert that both ways are used); over Qwen2's 151,667 tokens a C++
//!   mask took a median 161 ms with a full check per relation, 31 ms so.
//!
//! Cost: [`Insertion::new`] lexes `left` once (`O(|left|)`); a query costs
//! `O(|t|)` plus, per new relation, one search of its terminals and `right`
//! (a full check where the chart of `left` does not apply: a hole in
//! `left`, hole limits); a mask costs one relation step per trie node
//! visited plus that per distinct relation of an allowed prefix.
//! [`Insertion::advance`] moves the point past accepted bytes in
//! `O(bytes)`, so an autoregressive loop never re-lexes its prefix (the
//! chart of the longer `left` is built again on the next new relation).

use crate::completable::Constraint;
use crate::error::Result;
use crate::hash::FxMap;
use crate::intersect::Base;
use crate::lexer::{Frontier, Point, Row, TokenNfa};
use crate::partial::{Partial, Segment};

/// A vocabulary as a byte trie in preorder: token ids by their bytes, with
/// each node's subtree a contiguous range, so a walk skips a subtree by one
/// jump.
///
/// ```
/// use cdiff::mask::Vocabulary;
/// let v = Vocabulary::new(&["a", "ab", "b", ""]);
/// assert_eq!(v.len(), 4);
/// ```
#[derive(Clone, Debug)]
pub struct Vocabulary {
    /// Per node: the byte of the edge into it (0 for the root).
    byte: Vec<u8>,
    /// Per node: its depth (the root is 0).
    depth: Vec<u32>,
    /// Per node: the index just past its subtree.
    end: Vec<u32>,
    /// The tokens of node `k` are `ids[at[k]..at[k + 1]]`.
    at: Vec<u32>,
    ids: Vec<u32>,
    /// Number of token ids.
    n_ids: usize,
}

impl Vocabulary {
    /// The trie of `tokens`, token id `i` having the bytes `tokens[i]`
    /// (several ids may share bytes; an empty token is the empty insertion).
    pub fn new<T: AsRef<[u8]>>(tokens: &[T]) -> Vocabulary {
        let mut order: Vec<u32> = (0..tokens.len() as u32).collect();
        order.sort_by(|&a, &b| tokens[a as usize].as_ref().cmp(tokens[b as usize].as_ref()));
        let mut v = Vocabulary {
            byte: vec![0],
            depth: vec![0],
            end: vec![0],
            at: Vec::new(),
            ids: Vec::new(),
            n_ids: tokens.len(),
        };
        let mut node_of: Vec<(u32, u32)> = Vec::with_capacity(tokens.len());
        // The path from the root to the last node made, and its bytes.
        let mut stack: Vec<u32> = vec![0];
        let mut path: Vec<u8> = Vec::new();
        for &id in &order {
            let b = tokens[id as usize].as_ref();
            let common = path.iter().zip(b).take_while(|(x, y)| x == y).count();
            while path.len() > common {
                let done = stack.pop().unwrap_or(0);
                v.end[done as usize] = v.byte.len() as u32;
                path.pop();
            }
            for &x in &b[common..] {
                let k = v.byte.len() as u32;
                v.byte.push(x);
                v.depth.push(path.len() as u32 + 1);
                v.end.push(0);
                stack.push(k);
                path.push(x);
            }
            node_of.push((*stack.last().unwrap_or(&0), id));
        }
        let n = v.byte.len() as u32;
        for k in stack {
            v.end[k as usize] = n;
        }
        node_of.sort_unstable();
        v.at = vec![0; n as usize + 1];
        for &(k, _) in &node_of {
            v.at[k as usize + 1] += 1;
        }
        for k in 0..n as usize {
            v.at[k + 1] += v.at[k];
        }
        v.ids = node_of.into_iter().map(|(_, id)| id).collect();
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
    /// point (the text there has no hole; no hole limits).
    pub by_prefix: usize,
    /// Questions answered with no check because every lexing died.
    pub dead: usize,
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
    /// The chart of `left`, once a check needed it (see [`Prefix`]);
    /// forgotten when the point moves.
    prefix: Option<Box<Prefix>>,
    rows: Vec<Row>,
    next: Vec<Row>,
    key: Vec<u32>,
    seq: Vec<u32>,
    stats: InsertionStats,
}

/// What a check of `left · t · right` reuses when `left` has no hole: the
/// automaton of `left` as a prefix with its phase-1 chart, and the
/// automaton of `right` from each lexer state `l₁` an insertion may leave.
/// A new relation then costs the search of `t`'s terminals and `right`
/// from the chart's frontier, not a check of the whole text: per row
/// `(l₀, T₁…T_m, l₁)` of the relation, the items at the frontier states of
/// `l₀` waiting for a terminal of `T₁` move on, through `T₂…T_m`, into the
/// automaton of `right` from `l₁`; with `m = 0` (the lexeme in progress
/// goes on) they scan the terminals that automaton starts with. The
/// language searched is that of the full check restricted to the row, and
/// the relation's language is the union of its rows', so the answer is the
/// full check's. Hole limits, a hole in `left`, and a row whose word may
/// end at the point take a full check.
#[derive(Clone, Debug)]
struct Prefix {
    frontier: Frontier,
    base: Base,
    /// The automaton of `right` read from `l₁`, per `l₁`.
    right: FxMap<u32, TokenNfa>,
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
            prefix: None,
            rows: Vec::new(),
            next: Vec::new(),
            key: Vec::new(),
            seq: Vec::new(),
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
        self.point.start(&mut rows);
        for &b in bytes {
            if rows.is_empty() {
                break;
            }
            self.point
                .step(self.constraint.lexer(), &rows, b, &mut next);
            std::mem::swap(&mut rows, &mut next);
        }
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
    /// was accepted; answers given so far are forgotten.
    pub fn advance(&mut self, bytes: &[u8]) {
        let mut rows = std::mem::take(&mut self.rows);
        let mut next = std::mem::take(&mut self.next);
        self.point.start(&mut rows);
        for &b in bytes {
            self.point
                .step(self.constraint.lexer(), &rows, b, &mut next);
            std::mem::swap(&mut rows, &mut next);
        }
        self.point = self.point.advance(&rows);
        self.left.push_text(bytes);
        self.memo.clear();
        self.prefix = None;
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
        let mut out = vec![false; vocab.len()];
        let lx = self.constraint.lexer();
        let n = vocab.byte.len();
        let max_depth = vocab.depth.iter().copied().max().unwrap_or(0) as usize;
        let mut rows: Vec<Vec<Row>> = vec![Vec::new(); max_depth + 1];
        self.point.start(&mut rows[0]);
        if rows[0].is_empty() {
            self.stats.dead += 1;
            return Ok(out);
        }
        // The empty insertion first: if even it is refused, so is everything.
        self.stats.queries += 1;
        let empty_ok = self.verdict(&rows[0], b"")?;
        if !empty_ok && self.prefix_closed {
            return Ok(out);
        }
        let mut path: Vec<u8> = Vec::with_capacity(max_depth);
        let mut k = 0;
        while k < n {
            let d = vocab.depth[k] as usize;
            if d > 0 {
                path.truncate(d - 1);
                path.push(vocab.byte[k]);
                let (above, below) = rows.split_at_mut(d);
                self.point
                    .step(lx, &above[d - 1], vocab.byte[k], &mut below[0]);
                if below[0].is_empty() {
                    self.stats.dead += 1;
                    k = vocab.end[k] as usize;
                    continue;
                }
            }
            let toks = vocab.tokens(k);
            if !toks.is_empty() {
                let ok = if d == 0 {
                    empty_ok
                } else {
                    self.stats.queries += 1;
                    self.verdict(&rows[d], &path)?
                };
                for &id in toks {
                    out[id as usize] = ok;
                }
                if !ok && self.prefix_closed {
                    k = vocab.end[k] as usize;
                    continue;
                }
            }
            k += 1;
        }
        Ok(out)
    }

    /// The answer of a full check for relation `rows`, from the chart of
    /// `left` (see [`Prefix`]); `None` where that does not apply.
    fn by_prefix(&mut self, rows: &[Row]) -> Result<Option<bool>> {
        if !self.limits.is_empty() || self.left.n_holes() > 0 {
            return Ok(None);
        }
        let c = self.constraint;
        if self.prefix.is_none() {
            let (frontier, base) = c.prefix_chart(&self.left)?;
            self.prefix = Some(Box::new(Prefix {
                frontier,
                base,
                right: FxMap::default(),
            }));
        }
        let Some(pre) = self.prefix.as_deref_mut() else {
            return Ok(None);
        };
        let term_sets = &c.lexer().term_sets;
        for &(i, seq, l1) in rows {
            let l0 = self.point.state(i);
            let at = &pre.frontier.at;
            let lo = at.partition_point(|&(l, _)| l < l0);
            let from: Vec<u32> = at[lo..]
                .iter()
                .take_while(|&&(l, _)| l == l0)
                .map(|&(_, s)| s)
                .collect();
            if from.is_empty() {
                continue;
            }
            let r = match pre.right.entry(l1) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(c.suffix_automaton(&self.right, l1)?)
                }
            };
            let r = &*r;
            if r.is_empty() {
                continue;
            }
            self.point.sequence(seq, &mut self.seq);
            let ok = match self.seq.split_first() {
                None => {
                    // No terminal ends inside the insertion: the lexeme in
                    // progress goes on into `right`, so the frontier's
                    // items scan the terminals `right` starts with.
                    let start = r.closure(&[r.start]);
                    if start.iter().any(|&q| r.finals[q as usize]) {
                        // The word may end at the point: the base has no
                        // final state to say so; a full check does.
                        return Ok(None);
                    }
                    let mut steps: Vec<(u32, u32)> = start
                        .iter()
                        .flat_map(|&q| r.edges[q as usize].iter().copied())
                        .collect();
                    steps.sort_unstable();
                    steps.dedup();
                    c.extend(&pre.base, r, &from, &steps)?
                }
                Some((&first, rest)) => {
                    let rest: Vec<&[u32]> =
                        rest.iter().map(|&k| &term_sets[k as usize][..]).collect();
                    let (ext, to) = if rest.is_empty() {
                        (std::borrow::Cow::Borrowed(r), r.start)
                    } else {
                        let (ext, to) = TokenNfa::chain(&rest, r);
                        (std::borrow::Cow::Owned(ext), to)
                    };
                    let steps: Vec<(u32, u32)> =
                        term_sets[first as usize].iter().map(|&t| (t, to)).collect();
                    c.extend(&pre.base, &ext, &from, &steps)?
                }
            };
            if ok {
                return Ok(Some(true));
            }
        }
        Ok(Some(false))
    }

    /// The answer for an insertion of `bytes` whose relation is `rows`
    /// (not empty): remembered, or checked and remembered.
    fn verdict(&mut self, rows: &[Row], bytes: &[u8]) -> Result<bool> {
        self.key.clear();
        for &(i, seq, l) in rows {
            self.key.extend([i, seq, l]);
        }
        if let Some(&ok) = self.memo.get(&self.key[..]) {
            return Ok(ok);
        }
        self.stats.checks += 1;
        if let Some(ok) = self.by_prefix(rows)? {
            self.stats.by_prefix += 1;
            self.memo.insert(self.key.clone().into_boxed_slice(), ok);
            return Ok(ok);
        }
        let mut p = self.left.clone();
        p.push_text(bytes);
        p.append(&self.right);
        let ok = if self.limits.is_empty() {
            self.constraint.check(&p)?
        } else if p.n_holes() < self.limits.len() {
            // Nothing inserted between two holes: they are one, with room
            // for both.
            let mut limits = self.limits.clone();
            let k = self.left.n_holes() - 1;
            limits[k] = limits[k]
                .zip(limits[k + 1])
                .map(|(a, b)| a.saturating_add(b));
            limits.remove(k + 1);
            self.constraint.check_within(&p, &limits)?
        } else {
            self.constraint.check_within(&p, &self.limits)?
        };
        self.memo.insert(self.key.clone().into_boxed_slice(), ok);
        Ok(ok)
    }
}

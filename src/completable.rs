//! The front door: is a partial output completable, and with what?

use crate::budget::Budget;
use crate::charts::{KeptChart, KeptCharts, KeptTail, KeptTails, Want};
use crate::error::Result;
use crate::grammar::{Cfg, Grammar};
use crate::intersect::{Base, Entering, Growth, Intersector, Order, Seed, Tail};
use crate::lexer::{fills_for, Frontier, HoleCache, Lexer, TokenNfa, DEFAULT_LEXER_LIMIT};
use crate::partial::{Partial, Segment};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Work the search may spend past its first derivation, on top of the
/// multiple [`Config::witness_effort`], on a partial output with at most
/// [`FEW_HOLES`] holes, so that such inputs reach their fixpoint: with it,
/// and the default multiple of 2, all of 200 C++ functions with 1–3 holes
/// and 59 of 60 cases of a 2.3 KB C++ file did (at 20,000 units 189 and 51).
/// Canvases with tens of holes almost never do, and trying cost them about
/// 2 ms (JSON and SMILES canvases of 1 KB: `completable` 3.3 → 1.4 ms and
/// 5.5 → 3.2 ms without it), so they get neither the floor nor
/// [`Config::witness_effort`] but [`Config::canvas_witness_effort`].
const EFFORT_FLOOR: u64 = 50_000;

/// The work [`Constraint::completable_best`]'s search may go on for after
/// its first derivation (about 5 ms of phase 1 here; see there).
const BEST_FLOOR: u64 = 2_000_000;

/// The most bytes of a chunk one lexeme begun in a fill may swallow in the
/// witness search's first try (see [`Constraint::completable`]): an
/// identifier or number the fill starts and the text ends, a string's
/// tail; not a comment over the text.
const SWALLOW_PER_MOVE: u32 = 8;

/// Partial outputs with at most this many holes get [`EFFORT_FLOOR`] and
/// [`Config::witness_effort`]; others [`Config::canvas_witness_effort`].
pub const FEW_HOLES: usize = 8;

/// A search runs long after [`Config::long_search_per_state`] units per
/// state and this many more states' worth (a floor for small automata).
const LONG_SEARCH_FLOOR_STATES: u64 = 80;

/// A canvas search that ran long is tried again with the start's items
/// first for at most this many times the first run's work (see
/// [`Constraint::canvas_search`]).
const START_FIRST_TRIES: u64 = 4;

/// Limits for compiling and checking. Separate from [`Constraint`] so one
/// configuration can serve many grammars.
#[derive(Clone, Debug)]
pub struct Config {
    /// Work units one check may spend (lexing, search and witness together).
    /// A unit is about 2–3 ns of work: measured on this project's 2-core
    /// machine by bisecting the smallest budget that completes
    /// `completable` on C++ functions with 3 holes (1.9–2.5 ns/unit) and
    /// JSON documents with 4 holes (2.8–3.1 ns/unit), so the default
    /// (2·10⁸) is about half a second of work.
    pub budget: u64,
    /// Maximum states of the lexer automaton built per grammar.
    pub lexer_states: usize,
    /// Maximum states of the per-check DFA over terminals.
    pub partial_states: usize,
    /// Longest witness built, in terminals. Emptiness is decided on
    /// saturating lengths whatever this is: a partial output whose shortest
    /// completion is longer is still decided by [`Constraint::check`], and
    /// [`Constraint::completable`] returns a size-limit error instead of
    /// building it.
    pub max_witness_terminals: u32,
    /// Longest witness text built, in bytes (checked as the text is made).
    pub max_witness_bytes: usize,
    /// Whether the search tries to prove the witness shortest (fewest
    /// terminals of all completions) by running to its fixpoint before the
    /// witness is extracted, within [`Config::witness_effort`]. When false,
    /// or when the fixpoint would cost more, the search stops at its first
    /// complete derivation and the witness is the shortest among the
    /// derivations found by then: a valid completion, but in the
    /// differential tests 1–33 % of them had more terminals than the
    /// shortest. [`Completion::shortest`] says which one a witness is.
    /// [`Constraint::check`] always stops at the first derivation.
    pub shortest_witness: bool,
    /// How much more work than finding the first derivation the search may
    /// spend to reach its fixpoint for a shortest witness, as a multiple
    /// (plus 50,000 units when the partial output has at most 8 holes;
    /// `u64::MAX`: no limit). Default 2. On partial
    /// outputs with a few holes the fixpoint costs about as much as the
    /// first derivation and the witness is the shortest (all of 200 C++
    /// functions with 1–3 holes); on a canvas with tens of holes it can cost
    /// a thousand times more (every hole can complete almost every symbol
    /// started at every earlier hole), and the witness is found in a few
    /// times the time of [`Constraint::check`] instead.
    pub witness_effort: u64,
    /// [`Config::witness_effort`] for partial outputs with more than
    /// 8 holes (a diffusion canvas). Default 0: the search stops
    /// at its first derivation. With the multiple of 2, JSON and SMILES
    /// canvases of 1 and 4 KB with 30 % of their bytes masked reached the
    /// fixpoint in none of 80 cases, and `completable` took 2.7–6.3 times
    /// [`Constraint::check`]; stopping at the first derivation, 1.9–2.9
    /// times (`cdiff bench --canvas 0.3 --witness-effort 0`).
    pub canvas_witness_effort: u64,
    /// Work per state of a canvas's automaton (more than 8 holes) after
    /// which its search is said to run long and is stopped; then (see
    /// [`Constraint::check`]'s ladder) the fixed text after its last hole,
    /// if any, is checked on its own (`□ last`: if that is not completable,
    /// the canvas is not either), the search is tried again with the
    /// start's own items first (for up to 4 times as much work), and only
    /// then run in full. Why: the search goes forward and races to the end,
    /// so a canvas refused only by its end is refused at the search's
    /// fixpoint (a decoder that has put a token at the end of its answer
    /// proposes such canvases: 109 checks of 20–290 ms in 10 `dlm-cpp`
    /// decodes, each refused by its end in 50–70 µs), and a canvas that
    /// begins with a hole can make the race follow every derivation the
    /// hole predicts (a 4 KB JSON canvas: 14 s, now 6 ms). Default 250:
    /// `check` and `completable` on 880 canvases cut from the shipped
    /// corpora (C++, JSON and SMILES, 0.5–8 KB, 10–80 % masked) spent 16
    /// units per state at the median and at most 45 (two slow JSON
    /// canvases aside), the slow refusals 27,000–170,000. `u64::MAX`: no
    /// ladder. Answers do not depend on it, only the work does.
    pub long_search_per_state: u64,
    /// Whether the witness also counts the fixed bytes its fills
    /// *swallow*: text of the partial output read by a lexeme that began in
    /// a fill (a fill that opens a comment or a string literal turns the
    /// text after it into that lexeme). Default true: the witness has the
    /// fewest terminals plus swallowed bytes, so a fill does not comment
    /// out text it could complete instead. False: the fewest terminals,
    /// which on C++ canvases usually meant a comment opened in one fill and
    /// closed in a later one (a valid completion, but a decoder finishing
    /// from it gets commented-out code). It applies where the search goes
    /// on toward its fixpoint: [`Constraint::completable_best`], and
    /// [`Constraint::completable`] on partial outputs with at most 8 holes
    /// (on a canvas, `completable` stops at its first derivation, where
    /// counting changed little: see [`Constraint::completable_best`]).
    /// Answers do not depend on it, only which completion is returned.
    pub count_swallowed: bool,
    /// Bytes one check may add to the memory in use before it stops with a
    /// size-limit error (`None`: no limit; model weights and other data
    /// held before the check do not count). Enforced only in programs that
    /// install
    /// [`crate::memory::CountingAlloc`] (the `cdiff` binary does); see
    /// [`crate::memory`].
    pub max_memory: Option<usize>,
    /// Bytes of the charts of texts before insertion points
    /// ([`crate::mask::Insertion`]) a constraint keeps for later points
    /// whose text before them starts with one (the regions of one file
    /// filled one after the other, a template run again): such a point
    /// grows the kept chart by the rest of its text instead of parsing it
    /// all. Default 64 MiB; 0 keeps none. Answers do not depend on it,
    /// only the work does.
    pub kept_charts: usize,
    /// Bytes of the automata of texts after insertion points
    /// ([`crate::mask::Insertion`], when the text after the point begins
    /// with a hole) with their charts, kept for later points: a point
    /// with the same text after it takes them instead of making its own,
    /// and a point whose text after it ends another kept one's (`□ · S`
    /// against `□ · X · S`) answers from that one what it allows (see
    /// [`crate::mask`]). Default 64 MiB; 0 keeps none. Answers do not
    /// depend on it, only the work does.
    pub kept_tails: usize,
    /// The shortest text after an insertion point, in bytes of text after
    /// its leading hole, whose automata are kept for later points (see
    /// `kept_tails`; a shorter one is still answered for by the kept
    /// ones). Kept automata are made for every lexer state at the first
    /// state they were not made for (later points ask for others); for a
    /// short text, which costs little to parse again, that and the memory
    /// held cost more than they spare (C++ functions, each a document of
    /// its own: a fifth slower). Default 512.
    pub kept_tails_from: usize,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            budget: 200_000_000,
            lexer_states: DEFAULT_LEXER_LIMIT,
            partial_states: 2_000_000,
            max_witness_terminals: 10_000_000,
            max_witness_bytes: 64 << 20,
            max_memory: None,
            shortest_witness: true,
            witness_effort: 2,
            canvas_witness_effort: 0,
            long_search_per_state: 250,
            count_swallowed: true,
            kept_charts: 64 << 20,
            kept_tails: 64 << 20,
            kept_tails_from: 512,
        }
    }
}

/// A completion of a partial output: one fill per hole, and the full text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Completion {
    /// The bytes put into each hole, in order.
    pub fills: Vec<Vec<u8>>,
    /// The completed text.
    pub text: Vec<u8>,
    /// The terminal sequence the completed text lexes to.
    pub terminals: Vec<u32>,
    /// Whether no completion has fewer terminals (see
    /// [`Config::shortest_witness`]).
    pub shortest: bool,
}

/// The answer of a completability check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Some fill of the holes gives a word of the grammar; here is one.
    Completable(Completion),
    /// No fill of the holes gives a word of the grammar.
    NotCompletable,
}

impl Verdict {
    /// Whether the partial output is completable.
    pub fn is_completable(&self) -> bool {
        matches!(self, Verdict::Completable(_))
    }

    /// The completion, if any.
    pub fn completion(&self) -> Option<&Completion> {
        match self {
            Verdict::Completable(c) => Some(c),
            Verdict::NotCompletable => None,
        }
    }
}

/// A grammar compiled for repeated checks: lexer automaton and indexed normal
/// form are built once.
///
/// # Example
/// ```
/// use cdiff::{Constraint, Grammar, Partial};
/// let g = Grammar::from_lark(r#"
///     start: "[" [INT ("," INT)*] "]"
///     INT: /[0-9]+/
///     %ignore " "
/// "#, None)?;
/// let c = Constraint::compile(&g)?;
/// assert!(c.completable(&Partial::new().text("[1, ").hole().text("2]"))?.is_completable());
/// assert!(!c.completable(&Partial::new().text("[1 ").hole().text(",]"))?.is_completable());
/// # Ok::<(), cdiff::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct Constraint {
    grammar: Grammar,
    cfg: Cfg,
    lexer: Lexer,
    search: Intersector,
    config: Config,
    holes: HoleCache,
    /// The lexer states insertion points read the text after them from
    /// (see [`Constraint::tail_starts`]).
    tail_starts: LearnedStates,
    /// Charts of texts before insertion points (see [`crate::charts`]).
    charts: KeptCharts,
    /// Automata of texts after insertion points (see [`crate::charts`]).
    tails: KeptTails,
}

/// A set of lexer states that only grows, shared by the threads that use
/// one constraint (a bit per state).
#[derive(Debug)]
struct LearnedStates(Vec<AtomicU64>);

impl LearnedStates {
    /// The empty set of states below `n`.
    fn new(n: usize) -> LearnedStates {
        LearnedStates((0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect())
    }

    /// Adds `l` (states past the set's size are not kept).
    fn insert(&self, l: u32) {
        if let Some(w) = self.0.get(l as usize / 64) {
            let bit = 1u64 << (l % 64);
            if w.load(Relaxed) & bit == 0 {
                w.fetch_or(bit, Relaxed);
            }
        }
    }

    /// The states, ascending.
    fn to_vec(&self) -> Vec<u32> {
        let words: Vec<u64> = self.0.iter().map(|w| w.load(Relaxed)).collect();
        crate::lexer::ones(&words).collect()
    }
}

impl Clone for LearnedStates {
    fn clone(&self) -> LearnedStates {
        LearnedStates(
            self.0
                .iter()
                .map(|w| AtomicU64::new(w.load(Relaxed)))
                .collect(),
        )
    }
}

impl Constraint {
    /// Compiles `grammar` with the default [`Config`].
    ///
    /// # Errors
    /// A grammar error (empty language), a bad terminal pattern, or a size limit.
    pub fn compile(grammar: &Grammar) -> Result<Constraint> {
        Constraint::with_config(grammar, Config::default())
    }

    /// Compiles `grammar` with `config`.
    ///
    /// # Errors
    /// As [`Constraint::compile`].
    pub fn with_config(grammar: &Grammar, config: Config) -> Result<Constraint> {
        let cfg = Cfg::from_grammar(grammar)?;
        let lexer = Lexer::new(grammar, config.lexer_states)?;
        let search = Intersector::new(&cfg);
        let lexer_len = lexer.len();
        Ok(Constraint {
            grammar: grammar.clone(),
            cfg,
            lexer,
            search,
            config,
            holes: HoleCache::default(),
            tail_starts: LearnedStates::new(lexer_len),
            charts: KeptCharts::default(),
            tails: KeptTails::default(),
        })
    }

    /// A fresh work budget of this constraint's limits for `what`.
    pub(crate) fn budget(&self, what: &'static str) -> Budget {
        Budget::with_memory(self.config.budget, what, self.config.max_memory)
    }

    /// The source grammar.
    pub fn grammar(&self) -> &Grammar {
        &self.grammar
    }

    /// The grammar in C2F+ε normal form.
    pub fn normal_form(&self) -> &Cfg {
        &self.cfg
    }

    /// The lexer automaton.
    pub fn lexer(&self) -> &Lexer {
        &self.lexer
    }

    /// The automaton over terminals of every lexing of every fill of `partial`
    /// (see [`TokenNfa`]).
    ///
    /// # Errors
    /// [`ErrorKind::Budget`](crate::ErrorKind::Budget) or
    /// [`ErrorKind::SizeLimit`](crate::ErrorKind::SizeLimit).
    pub fn token_nfa(&self, partial: &Partial) -> Result<TokenNfa> {
        let mut budget = Budget::with_memory(
            self.config.budget,
            "lexing the partial output",
            self.config.max_memory,
        );
        self.automaton(partial, &[], &mut budget)
    }

    /// Builds the token automaton of `partial` (hole `h` limited to
    /// `limits[h]` bytes), charging `budget`.
    fn automaton(
        &self,
        partial: &Partial,
        limits: &[Option<usize>],
        budget: &mut Budget,
    ) -> Result<TokenNfa> {
        TokenNfa::build(
            &self.lexer,
            &self.holes,
            partial,
            limits,
            budget,
            self.config.partial_states,
        )
    }

    /// The automaton of `left` as a prefix and its phase-1 chart, for
    /// insertion points after `left` (see [`crate::mask`]).
    pub(crate) fn prefix_chart(&self, left: &Partial) -> Result<(Frontier, Base)> {
        let mut budget = self.budget("the chart of the text before an insertion point");
        let f = TokenNfa::build_prefix(
            &self.lexer,
            &self.holes,
            left,
            &mut budget,
            self.config.partial_states,
        )?;
        let frontier: Vec<u32> = f.at.iter().map(|&(_, s)| s).collect();
        let base = self.search.base(&f.nfa, &frontier, &mut budget)?;
        Ok((f, base))
    }

    /// The kept chart of the longest fixed text `left` starts with (see
    /// [`crate::charts`]).
    pub(crate) fn kept_chart(&self, left: &[u8]) -> Option<KeptChart> {
        match self.config.kept_charts {
            0 => None,
            _ => self.charts.longest_prefix_of(left),
        }
    }

    /// Keeps the chart of a fixed text before an insertion point for later
    /// points (see [`crate::charts`]).
    pub(crate) fn keep_chart(&self, chart: KeptChart) {
        if self.config.kept_charts > 0 {
            self.charts.keep(chart, self.config.kept_charts);
        }
    }

    /// Whether the texts after insertion points answer for each other
    /// (see [`Config::kept_tails`]).
    pub(crate) fn keeps_tails(&self) -> bool {
        self.config.kept_tails > 0
    }

    /// Whether the automata of `right`, the text after an insertion point
    /// (`□ · S`, with `S` of at least [`Config::kept_tails_from`] bytes),
    /// are kept for later points (see [`crate::charts`]).
    pub(crate) fn keeps_tail(&self, right: &Partial) -> bool {
        self.config.kept_tails > 0
            && matches!(
                right.segments().first(),
                Some(crate::partial::Segment::Hole)
            )
            && right.text_len() >= self.config.kept_tails_from
    }

    /// Takes out the kept text after a point that `want` asks for, given
    /// the key of a point's (see [`crate::charts`]).
    pub(crate) fn take_tail(&self, key: &[u8], want: Want) -> Option<KeptTail> {
        match self.config.kept_tails {
            0 => None,
            _ => self.tails.take(key, want),
        }
    }

    /// Whether a text after a point longer than the one of `key` and
    /// ending with it is kept (see [`crate::charts`]).
    pub(crate) fn keeps_longer_tail(&self, key: &[u8]) -> bool {
        self.config.kept_tails > 0 && self.tails.any_longer(key)
    }

    /// Keeps (or gives back) the automata of a text after an insertion
    /// point for later points (see [`crate::charts`]).
    pub(crate) fn keep_tail(&self, tail: KeptTail) {
        if self.config.kept_tails > 0 {
            self.tails.keep(tail, self.config.kept_tails);
        }
    }

    /// Records that an insertion point read the text after it from lexer
    /// state `l` (see [`Constraint::tail_starts`]).
    pub(crate) fn note_tail_start(&self, l: u32) {
        self.tail_starts.insert(l);
    }

    /// The lexer states insertion points of this constraint have read the
    /// text after them from so far, ascending: what an insertion point
    /// that expects many proposals makes that text's automaton for (see
    /// the mask module's `tail_for`). Which states these are changes only
    /// how much work a point does, never its answers.
    pub(crate) fn tail_starts(&self) -> Vec<u32> {
        self.tail_starts.to_vec()
    }

    /// The automaton of `right` read from each lexer state of `starts` as
    /// a [`Tail`] (its chart kept across the checks that end in it), entry
    /// `k` for `starts[k]`: one automaton and one chart for the states an
    /// insertion may leave (from most of them `right` is read the same
    /// after a lexeme or two).
    pub(crate) fn suffix_tail(&self, right: &Partial, starts: &[u32]) -> Result<Tail> {
        let mut budget = self.budget("the automaton of the text after an insertion point");
        let (nfa, entries) = TokenNfa::build_entries(
            &self.lexer,
            &self.holes,
            right,
            starts,
            &mut budget,
            self.config.partial_states,
        )?;
        self.search.tail(nfa, entries)
    }

    /// See [`Intersector::search_tail`]: the check of an insertion whose
    /// prefix chart is `base` and whose text after it is `tail`, entered
    /// as `at` says.
    pub(crate) fn search_tail(
        &self,
        base: &Base,
        tail: &mut Tail,
        at: Entering<'_>,
    ) -> Result<bool> {
        let mut budget = self.budget("the completability check");
        self.search.search_tail(base, tail, at, &mut budget)
    }

    /// See [`Intersector::extend`]: the check of an insertion whose prefix
    /// chart is `base`.
    pub(crate) fn extend(&self, base: &Base, ext: &TokenNfa, seeds: &[Seed<'_>]) -> Result<bool> {
        let mut budget = self.budget("the completability check");
        self.search.extend(base, ext, seeds, &mut budget)
    }

    /// See [`Intersector::enters`].
    pub(crate) fn enters(&self, base: &Base, seeds: &[Seed<'_>]) -> bool {
        self.search.enters(base, seeds)
    }

    /// The items at frontier state `f` of `base` (see [`Base::items_at`]).
    pub(crate) fn items_at(&self, base: &Base, f: u32, out: &mut Vec<(u32, u32, u32, u32)>) {
        base.items_at(&self.search, f, out);
    }

    /// The items at state `s` of `base` waiting for nonterminal `a` (see
    /// [`Base::waiting_at`]), appended to `out`.
    pub(crate) fn waiting_at(
        &self,
        base: &Base,
        s: u32,
        a: u32,
        out: &mut Vec<(u32, u32, u32, u32)>,
    ) {
        base.waiting_at(&self.search, s, a, out);
    }

    /// See [`Intersector::grow`]: the chart of the text before an insertion
    /// point, moved past accepted bytes.
    pub(crate) fn grow(&self, base: &mut Base, by: Growth<'_>) -> Result<()> {
        let mut budget = self.budget("the chart of the text before an insertion point");
        self.search.grow(base, by, &mut budget)
    }

    /// Keeps what a build of a partial output's automaton can reuse in the
    /// next one on this thread while the guard lives (see [`Replaying`]):
    /// dlm-cpp canvases checked in a decode's order take about a third less
    /// time warm; unrelated canvases checked once each take 8–15 % more,
    /// so it is off unless asked for. `decode` and `infill` ask.
    ///
    /// ```
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let c = Constraint::compile(&Grammar::from_lark(r#"start: "a"+ "b""#, None)?)?;
    /// let _kept = c.replaying();
    /// assert!(c.check(&Partial::new().text("a").hole().text("ab"))?);
    /// assert!(c.check(&Partial::new().text("aa").hole().text("ab"))?);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    pub fn replaying(&self) -> Replaying {
        Replaying(crate::lexer::keep_hole_exits())
    }

    /// Decides whether `partial` is completable, without building a completion.
    ///
    /// A canvas (more than 8 holes) whose search runs long climbs a ladder
    /// of cheaper exact attempts first (see
    /// [`Config::long_search_per_state`]).
    ///
    /// # Errors
    /// As [`Constraint::completable`].
    pub fn check(&self, partial: &Partial) -> Result<bool> {
        self.decide(partial, &[])
    }

    /// The emptiness search on `partial`'s automaton, holes limited by
    /// `limits` (empty: none).
    fn decide(&self, partial: &Partial, limits: &[Option<usize>]) -> Result<bool> {
        let mut budget = self.budget("the completability check");
        let nfa = self.automaton(partial, limits, &mut budget)?;
        self.canvas_search(partial, &nfa, &mut budget, false, |b, order| {
            self.search.check(&nfa, b, order)
        })
    }

    /// `search` on `nfa` (the automaton of `partial`) in the usual order
    /// (the furthest state first), with a ladder for canvases (more than
    /// [`FEW_HOLES`] holes) whose search runs long, past
    /// [`Config::long_search_per_state`] units per state:
    /// 1. if fixed text follows the last hole and that end refutes the
    ///    canvas on its own ([`Constraint::end_refutes`]): `refuted`;
    /// 2. the search again, items whose origin is the start first
    ///    ([`Order::StartFirst`]), within [`START_FIRST_TRIES`] times the
    ///    first run's work;
    /// 3. the search in the usual order, in full.
    ///
    /// Each rung is exact (a run that finishes answers; `refuted` only when
    /// no fill completes `partial`), so the answer never depends on the
    /// ladder, only the work does; the work of interrupted runs is charged.
    /// Why rung 2: a canvas that begins with a hole and ends with fixed
    /// text can make the usual order build most of the fixpoint before the
    /// goal (a 4 KB JSON canvas with 309 holes: 14 s), because the hole
    /// predicts every symbol and the race to the end follows every
    /// derivation from it; racing the goal's own derivation decides it in
    /// about a millisecond. It is not the usual order because on C++
    /// canvases that start with fixed text it can be much slower.
    fn canvas_search<T>(
        &self,
        partial: &Partial,
        nfa: &TokenNfa,
        budget: &mut Budget,
        refuted: T,
        mut search: impl FnMut(&mut Budget, Order) -> Result<T>,
    ) -> Result<T> {
        let per_state = self.config.long_search_per_state;
        if partial.n_holes() <= FEW_HOLES || per_state == u64::MAX {
            return search(budget, Order::Furthest);
        }
        let states = nfa.len() as u64 + LONG_SEARCH_FLOOR_STATES;
        let cap = per_state.saturating_mul(states);
        for (order, cap) in [
            (Order::Furthest, cap),
            (Order::StartFirst, cap.saturating_mul(START_FIRST_TRIES)),
        ] {
            if order == Order::StartFirst && self.end_refutes(partial, budget)? {
                return Ok(refuted);
            }
            let mut trial = budget.trial(cap);
            match search(&mut trial, order) {
                Err(_) if trial.capped_before(budget) => budget.charge(&trial)?,
                done => {
                    budget.charge(&trial)?;
                    return done;
                }
            }
        }
        search(budget, Order::Furthest)
    }

    /// Whether the fixed text that ends `partial` after its last hole can
    /// end no word of the grammar, whatever comes before it: then no fill
    /// completes `partial` (each of its completions is also a completion
    /// of `□ last`).
    ///
    /// Why: the search goes forward, so a partial output refused only by
    /// its end is refused at the search's fixpoint, and on a canvas with
    /// tens of holes — each of which predicts nearly every nonterminal —
    /// the fixpoint is thousands of times the work of finding a goal. A
    /// diffusion decoder meets exactly this: once the last position of an
    /// answer holds a token, the tokens proposed just before it are often
    /// refused because of it (on `dlm-cpp` with `cpp-tiny`, 109 checks of
    /// 20–290 ms each in 10 decodes; the end alone refuses each in
    /// 50–70 µs). Asked only once a search runs long, so checks that do
    /// not never pay for it.
    pub(crate) fn end_refutes(&self, partial: &Partial, budget: &mut Budget) -> Result<bool> {
        let [.., Segment::Hole, Segment::Text(last)] = partial.segments() else {
            return Ok(false);
        };
        let end = Partial::new().hole().text(last);
        let nfa = self.automaton(&end, &[], budget)?;
        Ok(!self.search.check(&nfa, budget, Order::Furthest)?)
    }

    /// [`Constraint::check`] for fills of limited size: hole `h` may hold at
    /// most `max_bytes[h]` bytes (`None`: any number). A diffusion canvas
    /// whose hole is `k` mask tokens of at most `b` bytes each can only put
    /// `k·b` bytes there, so a partial output that needs more (a ring or a
    /// bracket to close in one remaining mask, `C6CCCC□))`) is refused
    /// even though longer fills would complete it.
    ///
    /// The answer is *sound* for the limited problem: `false` only when no
    /// fill within the limits completes `partial`. It may say `true` when
    /// only longer fills exist, because the bytes a fill needs are bounded
    /// from below by the shortest lexeme of each terminal it emits (exact
    /// when every terminal is one byte long and none is ignored; separators
    /// between lexemes and ignored lexemes are not counted). Limits above
    /// 8 bytes are treated as no limit (the automaton grows with the
    /// limit). It is never `true` where
    /// [`Constraint::check`] is `false`.
    ///
    /// ```
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let g = Grammar::from_lark(r#"start: "(" start ")" | "x""#, None)?;
    /// let c = Constraint::compile(&g)?;
    /// let p = Partial::new().text("((").hole().text(")");
    /// assert!(c.check(&p)?);                      // "((x))" needs 2 bytes
    /// assert!(!c.check_within(&p, &[Some(1)])?);
    /// assert!(c.check_within(&p, &[Some(2)])?);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Constraint::check`]; [`ErrorKind::Partial`](crate::ErrorKind::Partial)
    /// when `max_bytes` does not have one entry per hole.
    pub fn check_within(&self, partial: &Partial, max_bytes: &[Option<usize>]) -> Result<bool> {
        if max_bytes.len() != partial.n_holes() {
            return Err(crate::Error::new(
                crate::ErrorKind::Partial,
                format!(
                    "{} hole limits given for {} holes",
                    max_bytes.len(),
                    partial.n_holes()
                ),
            ));
        }
        self.decide(partial, max_bytes)
    }

    /// Decides whether `partial` is completable and, if so, returns a completion.
    ///
    /// ```
    /// use cdiff::{Constraint, Grammar, Partial, Verdict};
    /// let g = Grammar::from_lark("start: \"a\"+ \"b\"", None)?;
    /// let c = Constraint::compile(&g)?;
    /// match c.completable(&Partial::new().text("aa").hole())? {
    ///     Verdict::Completable(done) => assert_eq!(done.text, b"aab"),
    ///     Verdict::NotCompletable => unreachable!(),
    /// }
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Budget`](crate::ErrorKind::Budget) when the work budget of
    /// [`Config::budget`] runs out (never a silent "not completable"), or
    /// [`ErrorKind::SizeLimit`](crate::ErrorKind::SizeLimit).
    pub fn completable(&self, partial: &Partial) -> Result<Verdict> {
        let (effort, floor) = if partial.n_holes() <= FEW_HOLES {
            (self.config.witness_effort, EFFORT_FLOOR)
        } else {
            (self.config.canvas_witness_effort, 0)
        };
        self.completable_with(partial, (effort, floor))
    }

    /// Like [`Constraint::completable`], but on a canvas too (more than 8
    /// holes, where `completable` stops at its first derivation) the
    /// witness counts swallowed bytes ([`Config::count_swallowed`]) and the
    /// search goes on past its first derivation for 2·10⁶ more work units,
    /// after a first try without lexemes begun in a fill that swallow more
    /// than 8 bytes of a chunk. On 1 KB C++ canvases (`cdiff bench
    /// --best`, 20 each at 10 / 30 / 80 % masked) its witnesses comment
    /// out 2,155 / 4,976 / 1,466 bytes where `completable`'s comment out
    /// 12,779 / 8,820 / 2,740, in 120 / 170 / 10 ms (median; at most
    /// 0.2 s) instead of 1.4 / 1.8 / 1.3 ms. For a completion that is kept
    /// — the decoders finish from it — not for answering many questions.
    /// Where that search runs out of the budget it gives `completable`'s
    /// answer. The verdict is `completable`'s.
    ///
    /// ```
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let g = Grammar::from_lark("start: \"a\"+ \"b\"", None)?;
    /// let c = Constraint::compile(&g)?;
    /// let done = c.completable_best(&Partial::new().text("aa").hole())?;
    /// assert_eq!(done.completion().unwrap().text, b"aab");
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`Constraint::completable`].
    pub fn completable_best(&self, partial: &Partial) -> Result<Verdict> {
        match self.completable_with(partial, (0, BEST_FLOOR)) {
            Err(err) if err.kind() == crate::ErrorKind::Budget => self.completable(partial),
            done => done,
        }
    }

    /// [`Constraint::completable`] with the search's effort toward its
    /// fixpoint (see [`Config::witness_effort`]).
    fn completable_with(&self, partial: &Partial, (effort, floor): (u64, u64)) -> Result<Verdict> {
        let mut budget = Budget::with_memory(
            self.config.budget,
            "the completability check",
            self.config.max_memory,
        );
        // Weighing pays where the search goes on past its first derivation
        // (on a canvas that stops there, phase 2 chooses among few
        // derivations: 1 KB C++ canvases swallowed 7 % fewer bytes for
        // 35 % more time).
        let weigh = self.config.count_swallowed
            && self.config.shortest_witness
            && (effort > 0 || floor > 0);
        let nfa = match weigh {
            true => TokenNfa::build_weighed(
                &self.lexer,
                &self.holes,
                partial,
                &mut budget,
                self.config.partial_states,
            )?,
            false => self.automaton(partial, &[], &mut budget)?,
        };
        let limit = self.config.max_witness_terminals;
        let effort = self.config.shortest_witness.then_some((effort, floor));
        // First without the moves that swallow more than a few bytes of a
        // chunk (comments and strings opened in a fill running over the
        // text), within a part of the budget: the first derivations of
        // the full automaton usually swallow, and the fixpoint, where the
        // cheapest is known, is far on a canvas.
        // (Only on canvases: with a few holes, and when the search is to
        // reach its fixpoint whatever it costs, the search finds the
        // cheapest of all.)
        let mut found = None;
        let first_try =
            weigh && partial.n_holes() > FEW_HOLES && effort.is_some_and(|(e, _)| e != u64::MAX);
        if let Some(small) = first_try.then(|| nfa.within(SWALLOW_PER_MOVE)).flatten() {
            let states = small.len() as u64 + LONG_SEARCH_FLOOR_STATES;
            let cap = self.config.long_search_per_state.saturating_mul(states);
            let mut part = budget.part(cap);
            let w = self
                .search
                .witness(&small, &mut part, limit, effort, Order::Furthest);
            budget.charge(&part)?;
            found = w.ok().flatten().map(|mut w| {
                // The cheapest of all only if no lexing it left out could
                // be cheaper: each of those costs more than SWALLOW_PER_MOVE.
                let cost = w.path.len() as u64 + u64::from(w.swallowed);
                w.shortest &= cost <= u64::from(SWALLOW_PER_MOVE) + 1;
                w
            });
        }
        let found = match found {
            Some(w) => Some(w),
            None => self.canvas_search(partial, &nfa, &mut budget, None, |b, order| {
                self.search.witness(&nfa, b, limit, effort, order)
            })?,
        };
        let Some(found) = found else {
            return Ok(Verdict::NotCompletable);
        };
        let (path, shortest, swallowed) = (found.path, found.shortest, found.swallowed);
        let word: Vec<u32> = path.iter().map(|&(t, _)| t).collect();
        let at: Vec<_> = path.iter().map(|&(_, s)| nfa.spans[s as usize]).collect();
        // The path's own bound on swallowed bytes first (exact: its fills
        // swallow that many), none if that found nothing.
        let first = if nfa.is_weighed() {
            swallowed
        } else {
            u32::MAX
        };
        let mut fills = fills_for(&self.lexer, partial, &word, &at, first, &mut budget)?;
        if fills.is_none() && first != u32::MAX {
            fills = fills_for(&self.lexer, partial, &word, &at, u32::MAX, &mut budget)?;
        }
        let fills = fills.ok_or_else(|| {
            crate::Error::new(
                crate::ErrorKind::Budget,
                "internal inconsistency: the witness terminal sequence has no byte realisation",
            )
        })?;
        let bytes: usize = fills.iter().map(Vec::len).sum();
        if bytes > self.config.max_witness_bytes {
            return Err(crate::Error::limit(
                crate::Limit::WitnessBytes,
                bytes as u64,
                self.config.max_witness_bytes as u64,
                format!(
                    "the partial output is completable, but its witness fills {bytes} bytes (more \
                     than the witness limit of {} bytes)",
                    self.config.max_witness_bytes
                ),
            ));
        }
        let text = partial.fill(&fills)?;
        Ok(Verdict::Completable(Completion {
            fills,
            text,
            terminals: word,
            shortest,
        }))
    }
}

/// While it lives, this thread keeps the closures that leave holes when it
/// builds a partial output's token automaton, and replays them in later
/// builds: made by [`Constraint::replaying`] for callers that check one
/// partial output after another, each a little changed (a decoder: nearly
/// every hole of a canvas is left by the same lexer states before the same
/// text as in the check before). Answers, witnesses and budget errors are
/// the same with or without it; only the time differs. Dropping the last
/// guard on the thread drops what was kept (at most 8 MiB). The guard
/// stays on the thread that made it (it is not `Send`).
#[must_use = "the closures are kept only while the guard lives"]
pub struct Replaying(crate::lexer::KeepExits);

/// Decides whether `partial` can be completed to a word of `grammar`.
///
/// Compiles the grammar on every call; use [`Constraint`] for repeated checks.
///
/// ```
/// use cdiff::{completable, Grammar, Partial};
/// let g = Grammar::from_lark(r#"start: "(" start ")" start | "#, None)?;
/// assert!(completable(&Partial::new().text("((").hole().text(")"), &g)?.is_completable());
/// assert!(!completable(&Partial::new().text(")").hole(), &g)?.is_completable());
/// # Ok::<(), cdiff::Error>(())
/// ```
///
/// # Errors
/// As [`Constraint::compile`] and [`Constraint::completable`].
pub fn completable(partial: &Partial, grammar: &Grammar) -> Result<Verdict> {
    Constraint::compile(grammar)?.completable(partial)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recognize::Recognizer;
    use crate::rng::{mask_spans, SplitMix64};

    /// Both worklist orders of [`Constraint::canvas_search`] give the same
    /// answers, and a witness found racing the start's items is a word of
    /// the grammar (checked by the independent recognizer): on JSON canvases
    /// (arrays of JSONTestSuite documents) and short C++ ones (HumanEval-X),
    /// masked 10–80 %, whole and with a stray control byte at the start of
    /// a chunk.
    #[test]
    fn both_orders_agree_on_canvases() {
        let root = env!("CARGO_MANIFEST_DIR");
        let json = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
        let mut docs: Vec<Vec<u8>> = std::fs::read_dir(format!("{root}/datasets/jsontestsuite"))
            .unwrap()
            .map(|f| f.unwrap().path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("y_"))
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        docs.sort();
        let mut rng = SplitMix64::new(3);
        let arrays: Vec<Vec<u8>> = (0..12)
            .map(|_| {
                let mut d = b"[".to_vec();
                while d.len() < 300 + 100 * rng.below(6) as usize {
                    if d.len() > 1 {
                        d.push(b',');
                    }
                    d.extend_from_slice(&docs[rng.below(docs.len() as u64) as usize]);
                }
                d.push(b']');
                d
            })
            .collect();
        let cpp = Grammar::from_lark(include_str!("../grammars/cpp.ebnf"), None).unwrap();
        let rows = std::fs::read_to_string(format!(
            "{root}/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
        ))
        .unwrap();
        let programs: Vec<Vec<u8>> = rows
            .lines()
            .take(40)
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                let d = v["declaration"].as_str().unwrap();
                let s = v["canonical_solution"].as_str().unwrap();
                format!("{d}{s}").into_bytes()
            })
            .filter(|p| p.len() < 500)
            .take(6)
            .collect();
        let (mut yes, mut no) = (0, 0);
        for (g, docs) in [(json, arrays), (cpp, programs)] {
            let c = Constraint::compile(&g).unwrap();
            let rec = Recognizer::new(&g).unwrap();
            for (i, doc) in docs.iter().enumerate() {
                let fraction = [0.1, 0.3, 0.5, 0.8][i % 4];
                let whole = Partial::cut(doc, &mask_spans(doc.len(), fraction, 8, &mut rng));
                let mut stray = Partial::new();
                for (k, s) in whole.segments().iter().enumerate() {
                    match s {
                        Segment::Text(t) if k == 2 => stray.push_text([&b"\x01"[..], t].concat()),
                        Segment::Text(t) => stray.push_text(t),
                        Segment::Hole => stray.push_hole(),
                    }
                }
                for p in [whole, stray] {
                    let mut budget = c.budget("test");
                    let nfa = c.automaton(&p, &[], &mut budget).unwrap();
                    let answers: Vec<bool> = [Order::Furthest, Order::StartFirst]
                        .into_iter()
                        .map(|order| {
                            let mut b = c.budget("test");
                            let w = c
                                .search
                                .witness(&nfa, &mut b, u32::MAX, None, order)
                                .unwrap();
                            let mut b = c.budget("test");
                            let ok = c.search.check(&nfa, &mut b, order).unwrap();
                            assert_eq!(ok, w.is_some(), "{p:?}");
                            if let Some(w) = w {
                                let word: Vec<u32> = w.path.iter().map(|&(t, _)| t).collect();
                                let at: Vec<_> =
                                    w.path.iter().map(|&(_, s)| nfa.spans[s as usize]).collect();
                                let fills = fills_for(&c.lexer, &p, &word, &at, u32::MAX, &mut b)
                                    .unwrap()
                                    .expect("a realisation");
                                let text = p.fill(&fills).unwrap();
                                assert!(rec.accepts(&text).unwrap(), "{order:?}: {p:?}");
                            }
                            ok
                        })
                        .collect();
                    assert_eq!(answers[0], answers[1], "{p:?}");
                    yes += usize::from(answers[0]);
                    no += usize::from(!answers[0]);
                }
            }
        }
        assert!(
            yes > 0 && no > 0,
            "both answers exercised: {yes} yes, {no} no"
        );
    }
}

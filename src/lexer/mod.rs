//! Lexing under maximal munch, for complete texts and for partial outputs with holes.
//!
//! # The lexer automaton
//!
//! All terminals are compiled into one minimal byte DFA `D` whose states know
//! which terminals accept the bytes read so far. A maximal-munch lexing
//! `l1 l2 … lk` of a text is valid iff every `li` is accepted by some terminal
//! and no `li · p`, for `p` a nonempty prefix of `li+1 … lk`, is accepted by any
//! terminal (otherwise the lexer would have taken the longer lexeme).
//!
//! That condition is checked *on the fly* by a finite automaton `L` whose
//! states are triples `(q, C, fresh)`: `q` is the state of `D` on the lexeme in
//! progress, `C` is the set of "munch checkers" — the `D`-states reached by
//! every earlier lexeme extended by the bytes read since it ended — and `fresh`
//! says no byte of the current lexeme has been read. Reading a byte advances
//! `q` and every checker; the path dies if `q` dies or a checker reaches an
//! accepting state (a longer lexeme existed). Ending a lexeme at an accepting
//! `q` *emits* each terminal that accepts it (or nothing, for a `%ignore`d
//! terminal), adds `q` to `C` and restarts. Checkers that die are dropped, so in
//! practice `C` holds zero or one state. Checkers are named canonically (two
//! DFA states that accept the same continuations are one checker), so a
//! keyword's final state and an identifier's are the same checker. `L`
//! depends only on the grammar: it is built once, breadth-first, with a size
//! limit (an error, not a panic).
//!
//! # Partial outputs
//!
//! A partial output `x1 □ x2 □ … □ xn` is run through `L` as one NFA over
//! terminals (App. C of Mündler et al., arXiv 2508.10111, with exact munch): in
//! a chunk the bytes are fixed, in a hole every byte is allowed; byte steps are
//! ε-moves and emissions are the labelled moves. This single NFA contains every
//! possible lexing — lexemes cut by a hole, lexemes spanning one or several holes
//! (`123□789` may be one integer because `L` simply keeps reading), word
//! boundaries, ignored terminals — with no enumeration of combinations. It is
//! determinised by the subset construction over configurations, within each
//! chunk and within each hole but not across a hole's end (which would be
//! quadratic on repetitive text, see [`TokenNfa`]), and trimmed. It is not
//! reduced further: a bisimulation quotient used to follow, but once hole
//! exits were limited to the lexer states that survive the next byte and
//! emissions memoised per seed list, the automaton was near its quotient
//! and the reduction cost more than it saved the search (removing it made
//! cold checks 10–30 % faster on JSON, SMILES, C++ and schema documents,
//! canvases and 1 MB texts alike). Inside a hole only the set of lexer states
//! matters, so the hole automata are cached per grammar ([`HoleCache`]), and
//! each thread keeps its view of that cache for its next check. A hole
//! state's exit reads the byte after the hole at once: a lexeme ending right
//! at the hole's end is already the hole's own move on its terminal, so the
//! lexemes in progress (on C++, every keyword prefix an identifier may be
//! inside a hole) only need where that byte takes them, usually one or two
//! states. Cost: linear in the text times the number of live configurations
//! per position (small in practice), plus the hole exits.
//!
//! # Witnesses that swallow text
//!
//! The fewest-terminals completion is often degenerate: a fill that opens a
//! comment or a string literal turns the text after it into one lexeme (one
//! terminal, or none), so on C++ most such witnesses commented code out.
//! `TokenNfa::build_weighed` builds the same automaton with every move
//! weighed by the text bytes it *swallows* — read by a lexeme that began in
//! a hole — by tagging the lexer states of such lexemes in the
//! configurations (tagged and untagged ones are kept apart where that would
//! lose the weight: each ending position of a tagged lexeme is its own
//! edge, a tagged lexeme entering the next hole has its own hole state).
//! The witness search then minimises terminals plus swallowed bytes, and
//! the realiser fills the word within the path's swallowed bytes. Only
//! witnesses use it; `check` builds the plain automaton.
//!
//! # Holes of limited size
//!
//! A hole may come with a limit on its fill's bytes (a diffusion canvas's
//! run of `k` masks holds at most `k` tokens). The hole's states are then
//! unrolled by a lower bound on the bytes spent — each terminal emitted by a
//! lexeme that starts in the hole costs its shortest lexeme — and emissions
//! past the limit are dropped. This over-approximates the limited fills
//! (sound: a fill that fits is never refused; exact for one-byte terminals
//! without ignored ones) at a cost of at most `limit + 2` copies of the
//! hole's states; limits above 8 bytes count as none.

mod build;
mod holes;
mod point;
mod tokens;
mod witness;

pub(crate) use build::LDEAD;
pub use build::{Lexer, DEFAULT_LEXER_LIMIT};
pub(crate) use holes::mask as mask_hole_set;
pub use holes::HoleCache;
pub(crate) use point::{Point, Row};
pub(crate) use tokens::Frontier;
pub use tokens::TokenNfa;
pub(crate) use tokens::{exits::Keep as KeepExits, keep_hole_exits};
pub(crate) use tokens::{ones, EpsClosure, Rows, WeighedClosure};
pub(crate) use witness::fills_for;

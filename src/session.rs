//! Following one partial output through a decoder's updates: [`Session`].
//!
//! A decoder does not check unrelated partial outputs: it checks the same
//! one again and again, each time with a token placed into one of its
//! holes, and keeps the token only if the result is still completable
//! (rejection sampling, Mündler et al. §4). A [`Session`] holds that
//! partial output and answers each proposed placement exactly as
//! [`Constraint::check`] of the resulting partial output would, reusing
//! what the earlier questions built:
//!
//! * **Hole exits replayed.** The session holds a
//!   [`Constraint::replaying`] guard: the lexer closures that leave each
//!   hole — a quarter of a canvas check, and nearly all the same as in the
//!   check before, since a placement changes one hole — are replayed
//!   instead of recomputed (keyed by their content, so they stay exact
//!   whatever changed elsewhere).
//! * **Repeated tries at one place.** After a refusal, the next proposal
//!   at the same hole and [`Place`] goes through an insertion point
//!   ([`Insertion`]) between the text before and after it: the lexing of
//!   the text before it is done once, a proposal costs a few lexer steps
//!   per byte, and proposals sharing a lexing relation share one answer.
//!   The point lives until a placement is kept (the partial output changed)
//!   or a try goes to another place. It answers only where it is narrow
//!   (at most 16 lexer states at the point: after fixed text, not inside
//!   a hole's every possible string or comment); elsewhere a check does.
//! * **Several placements, one check.** [`Session::try_place_all`] keeps
//!   several placements iff the partial output with all of them is
//!   completable: one check instead of one per placement, and a partial
//!   output with more text has fewer completions, so each of them would
//!   have been kept one by one too.
//!
//! What is not reused: the emptiness search itself, which a placement can
//! change anywhere (the first try at a place is a full check of the
//! canvas). Answers never depend on what the session did before; only the
//! time does (the tests compare every answer with a fresh check along
//! random update sequences).

use crate::completable::{Constraint, Replaying};
use crate::error::{Error, ErrorKind, Result};
use crate::mask::Insertion;
use crate::partial::{Partial, Segment};

/// Where a placement's bytes go in its hole (a hole is any string: only
/// whether some of it stays before and after the bytes matters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// The bytes replace the hole (the hole is closed; empty bytes close it
    /// empty).
    Fill,
    /// At the hole's start: the bytes, then the hole.
    Start,
    /// At the hole's end: the hole, then the bytes.
    End,
    /// Inside: part of the hole, the bytes, the rest of the hole (a mask
    /// token committed in the middle of a run of masks).
    Inside,
}

/// One placement: `bytes` put into hole `hole` at `place`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edit<'b> {
    /// The hole's index (holes numbered from 0, left to right).
    pub hole: usize,
    /// Where in the hole.
    pub place: Place,
    /// The bytes placed.
    pub bytes: &'b [u8],
}

/// What a [`Session`] did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionStats {
    /// Placements asked about (each edit of [`Session::try_place_all`]
    /// counts once).
    pub tries: usize,
    /// Placements kept.
    pub kept: usize,
    /// Full checks run.
    pub checks: usize,
    /// Tries answered by an insertion point.
    pub by_point: usize,
    /// Insertion points built.
    pub points: usize,
}

/// The insertion point of the last try, and where it is.
struct Point<'c> {
    hole: usize,
    place: Place,
    at: Insertion<'c>,
    /// Whether it answers (narrow enough: see the module docs).
    answers: bool,
}

/// The place of the last try since the partial output last changed.
enum Here<'c> {
    /// None yet.
    Nowhere,
    /// Refused there by a check (no point built yet: only a second try
    /// there builds one).
    Refused(usize, Place),
    /// Tried there at least twice: the point.
    Point(Box<Point<'c>>),
}

/// A partial output followed through the placements a decoder keeps (see
/// the module docs).
///
/// ```
/// use cdiff::{Constraint, Grammar, Partial, Place};
/// let g = Grammar::from_lark(r#"start: "[" (NUM ("," NUM)*)? "]"
/// NUM: /[0-9]+/"#, None)?;
/// let c = Constraint::compile(&g)?;
/// let mut s = c.session(Partial::new().text("[").hole().text("]"));
/// assert!(!s.try_place(0, Place::Start, b",")?); // "[," cannot go on
/// assert!(s.try_place(0, Place::Start, b"1")?);  // kept: "[1□]"
/// assert!(!s.try_place(0, Place::Fill, b",")?);  // "[1,]"
/// assert!(s.try_place(0, Place::Fill, b",2")?);  // kept: "[1,2]"
/// assert_eq!(s.partial(), &Partial::new().text("[1,2]"));
/// # Ok::<(), cdiff::Error>(())
/// ```
pub struct Session<'c> {
    constraint: &'c Constraint,
    partial: Partial,
    here: Here<'c>,
    stats: SessionStats,
    _replaying: Replaying,
}

impl Constraint {
    /// A session that follows `partial` through the placements a decoder
    /// keeps (see [`Session`]). It holds a [`Constraint::replaying`]
    /// guard, so it stays on the thread that made it.
    pub fn session(&self, partial: Partial) -> Session<'_> {
        Session {
            constraint: self,
            partial,
            here: Here::Nowhere,
            stats: SessionStats::default(),
            _replaying: self.replaying(),
        }
    }
}

impl<'c> Session<'c> {
    /// The partial output, with every placement kept so far.
    pub fn partial(&self) -> &Partial {
        &self.partial
    }

    /// What the session did so far.
    pub fn stats(&self) -> SessionStats {
        self.stats
    }

    /// Whether the partial output is completable now.
    ///
    /// # Errors
    /// As [`Constraint::check`].
    pub fn is_completable(&mut self) -> Result<bool> {
        self.stats.checks += 1;
        self.constraint.check(&self.partial)
    }

    /// Puts `bytes` into hole `hole` at `place` if the result is
    /// completable, and says whether it did: the answer of
    /// [`Constraint::check`] on the result.
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if there is no hole `hole`; otherwise as
    /// [`Constraint::check`] (the partial output is then unchanged).
    pub fn try_place(&mut self, hole: usize, place: Place, bytes: &[u8]) -> Result<bool> {
        self.stats.tries += 1;
        let here = |h: usize, p: Place| h == hole && p == place && !bytes.is_empty();
        // The partial output with the placement, once built.
        let mut built: Option<Partial> = None;
        let ok = match &mut self.here {
            Here::Point(p) if here(p.hole, p.place) && p.answers => {
                self.stats.by_point += 1;
                p.at.allows(bytes)?
            }
            Here::Point(p) if here(p.hole, p.place) => {
                self.check_at(hole, place, bytes, &mut built)?
            }
            &mut Here::Refused(h, p) if here(h, p) => {
                // The second try here: build the point.
                let (left, right) = split(&self.partial, hole, place)?;
                let at = Insertion::new(self.constraint, &left, &right)?;
                self.stats.points += 1;
                let answers = at.is_narrow();
                let mut point = Box::new(Point {
                    hole,
                    place,
                    at,
                    answers,
                });
                let ok = if answers {
                    self.stats.by_point += 1;
                    point.at.allows(bytes)?
                } else {
                    self.check_at(hole, place, bytes, &mut built)?
                };
                self.here = Here::Point(point);
                ok
            }
            _ => {
                let ok = self.check_at(hole, place, bytes, &mut built)?;
                self.here = Here::Refused(hole, place);
                ok
            }
        };
        if ok {
            let next = match built {
                Some(p) => p,
                None => placed(&self.partial, hole, place, bytes)?,
            };
            self.keep(next, 1);
        }
        Ok(ok)
    }

    /// Makes every placement of `edits` (in order; each edit's hole is
    /// numbered in the partial output the edits before it made) if the
    /// result is completable, and says whether it did: one check for all
    /// of them.
    ///
    /// ```
    /// use cdiff::{Constraint, Edit, Grammar, Partial, Place};
    /// let c = Constraint::compile(&Grammar::from_lark(r#"start: "(" start ")" | "x""#, None)?)?;
    /// let mut s = c.session(Partial::new().hole());
    /// let edits = [
    ///     Edit { hole: 0, place: Place::Start, bytes: b"(" },
    ///     Edit { hole: 0, place: Place::End, bytes: b")" },
    /// ];
    /// assert!(s.try_place_all(&edits)?);
    /// assert_eq!(s.partial(), &Partial::new().text("(").hole().text(")"));
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Partial`] if an edit names a hole that is not there;
    /// otherwise as [`Constraint::check`] (the partial output is then
    /// unchanged).
    pub fn try_place_all(&mut self, edits: &[Edit<'_>]) -> Result<bool> {
        self.stats.tries += edits.len();
        let mut next = self.partial.clone();
        for e in edits {
            next = placed(&next, e.hole, e.place, e.bytes)?;
        }
        self.stats.checks += 1;
        let ok = self.constraint.check(&next)?;
        if ok {
            self.keep(next, edits.len());
        }
        Ok(ok)
    }

    /// A check of the partial output with `bytes` put into `hole` at
    /// `place`, which it leaves in `built`.
    fn check_at(
        &mut self,
        hole: usize,
        place: Place,
        bytes: &[u8],
        built: &mut Option<Partial>,
    ) -> Result<bool> {
        let p = built.insert(placed(&self.partial, hole, place, bytes)?);
        self.stats.checks += 1;
        self.constraint.check(p)
    }

    /// `next` is the partial output now (`n` placements kept).
    fn keep(&mut self, next: Partial, n: usize) {
        self.partial = next;
        self.here = Here::Nowhere;
        self.stats.kept += n;
    }
}

/// `partial` with `bytes` put into hole `hole` at `place`.
fn placed(partial: &Partial, hole: usize, place: Place, bytes: &[u8]) -> Result<Partial> {
    let (mut out, right) = split(partial, hole, place)?;
    out.push_text(bytes);
    out.append(&right);
    Ok(out)
}

/// `partial` cut at hole `hole` for a placement at `place`: what comes
/// before the placed bytes and what comes after them.
fn split(partial: &Partial, hole: usize, place: Place) -> Result<(Partial, Partial)> {
    let (mut left, mut right) = (Partial::new(), Partial::new());
    let mut seen = 0;
    let mut found = false;
    for s in partial.segments() {
        match s {
            Segment::Hole if seen == hole && !found => {
                found = true;
                seen += 1;
                if matches!(place, Place::End | Place::Inside) {
                    left.push_hole();
                }
                if matches!(place, Place::Start | Place::Inside) {
                    right.push_hole();
                }
            }
            Segment::Hole => {
                seen += 1;
                match found {
                    true => right.push_hole(),
                    false => left.push_hole(),
                }
            }
            Segment::Text(t) if found => right.push_text(t),
            Segment::Text(t) => left.push_text(t),
        }
    }
    if !found {
        return Err(Error::new(
            ErrorKind::Partial,
            format!("no hole {hole}: the partial output has {seen}"),
        ));
    }
    Ok((left, right))
}

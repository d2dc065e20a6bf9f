//! A small byte-level Thompson NFA, used only to find the *longest* prefix of
//! the text that some terminal matches as a whole.
//!
//! The `regex` crate reports leftmost-first matches, which are not the longest
//! ones (`a|ab` on `ab` gives `a`). This module simulates every terminal's
//! NFA as a set of states, which has no priorities and therefore sees every
//! possible match end. Which terminals match the chosen lexeme is then decided
//! (and cross-checked) with the `regex` crate in the parent module.

use regex_syntax::hir::{Class, Hir, HirKind, Look};
use regex_syntax::utf8::Utf8Sequences;

use crate::error::{Error, ErrorKind, Result};

/// The most NFA states all terminals together may compile to.
const MAX_STATES: usize = 4_000_000;

type StateId = u32;

#[derive(Clone, Debug)]
enum State {
    /// Consume one byte in `lo..=hi`, then go to `next`.
    Bytes { lo: u8, hi: u8, next: StateId },
    /// Go to every target without consuming.
    Split(Vec<StateId>),
    /// Passable only at the start of the lexeme.
    AssertStart(StateId),
    /// Passable only at the end of the lexeme.
    AssertEnd(StateId),
    /// Terminal number `.0` matches here.
    Match(u32),
}

/// The NFA of all terminals of a grammar, each ending in its own `Match`.
#[derive(Debug)]
pub(crate) struct Nfa {
    states: Vec<State>,
    start: StateId,
}

struct Builder {
    states: Vec<State>,
}

impl Builder {
    fn push(&mut self, s: State) -> Result<StateId> {
        if self.states.len() >= MAX_STATES {
            return Err(Error::new(
                ErrorKind::Regex,
                "terminal patterns are too large for the recognizer",
            ));
        }
        self.states.push(s);
        Ok((self.states.len() - 1) as StateId)
    }

    /// Compiles `hir` so that it continues to `next`; returns its entry state.
    fn compile(&mut self, hir: &Hir, next: StateId) -> Result<StateId> {
        match hir.kind() {
            HirKind::Empty => Ok(next),
            HirKind::Literal(lit) => {
                let mut cur = next;
                for &b in lit.0.iter().rev() {
                    cur = self.push(State::Bytes {
                        lo: b,
                        hi: b,
                        next: cur,
                    })?;
                }
                Ok(cur)
            }
            HirKind::Class(Class::Bytes(cls)) => {
                let mut alts = Vec::new();
                for r in cls.iter() {
                    alts.push(self.push(State::Bytes {
                        lo: r.start(),
                        hi: r.end(),
                        next,
                    })?);
                }
                self.push(State::Split(alts))
            }
            HirKind::Class(Class::Unicode(cls)) => {
                let mut alts = Vec::new();
                for r in cls.iter() {
                    for seq in Utf8Sequences::new(r.start(), r.end()) {
                        let mut cur = next;
                        for br in seq.as_slice().iter().rev() {
                            cur = self.push(State::Bytes {
                                lo: br.start,
                                hi: br.end,
                                next: cur,
                            })?;
                        }
                        alts.push(cur);
                    }
                }
                self.push(State::Split(alts))
            }
            HirKind::Look(look) => match look {
                Look::Start => self.push(State::AssertStart(next)),
                Look::End => self.push(State::AssertEnd(next)),
                other => Err(Error::new(
                    ErrorKind::Regex,
                    format!("unsupported assertion {other:?} in a terminal pattern"),
                )),
            },
            HirKind::Capture(cap) => self.compile(&cap.sub, next),
            HirKind::Concat(parts) => {
                let mut cur = next;
                for p in parts.iter().rev() {
                    cur = self.compile(p, cur)?;
                }
                Ok(cur)
            }
            HirKind::Alternation(alts) => {
                let mut ids = Vec::with_capacity(alts.len());
                for a in alts {
                    ids.push(self.compile(a, next)?);
                }
                self.push(State::Split(ids))
            }
            HirKind::Repetition(rep) => {
                let mut cur = next;
                match rep.max {
                    None => {
                        // A loop: L -> sub -> L, L -> next.
                        let lp = self.push(State::Split(Vec::new()))?;
                        let body = self.compile(&rep.sub, lp)?;
                        self.states[lp as usize] = State::Split(vec![body, next]);
                        cur = lp;
                    }
                    Some(max) => {
                        for _ in rep.min..max {
                            let body = self.compile(&rep.sub, cur)?;
                            cur = self.push(State::Split(vec![body, next]))?;
                        }
                    }
                }
                for _ in 0..rep.min {
                    cur = self.compile(&rep.sub, cur)?;
                }
                Ok(cur)
            }
        }
    }
}

/// Parses `pattern` the way `regex::bytes::Regex` does (Unicode on, may match
/// invalid UTF-8 only where the pattern says so).
fn parse(pattern: &str) -> Result<Hir> {
    regex_syntax::ParserBuilder::new()
        .utf8(false)
        .build()
        .parse(pattern)
        .map_err(|e| {
            Error::new(
                ErrorKind::Regex,
                format!("invalid pattern {pattern:?}: {e}"),
            )
        })
}

impl Nfa {
    /// Compiles the patterns of all terminals, in order.
    pub(crate) fn new(patterns: &[&str]) -> Result<Nfa> {
        let mut b = Builder { states: Vec::new() };
        let mut starts = Vec::with_capacity(patterns.len());
        for (i, p) in patterns.iter().enumerate() {
            let hir = parse(p)?;
            let m = b.push(State::Match(i as u32))?;
            starts.push(b.compile(&hir, m)?);
        }
        let start = b.push(State::Split(starts))?;
        Ok(Nfa {
            states: b.states,
            start,
        })
    }

    /// The length of the longest nonempty prefix of `hay` that some terminal
    /// matches as a whole, with the terminals matching exactly that prefix
    /// (ascending). `None` when no terminal matches a nonempty prefix.
    pub(crate) fn longest(&self, hay: &[u8], scratch: &mut Scratch) -> Option<(usize, Vec<u32>)> {
        scratch.ensure(self.states.len());
        let mut best: Option<(usize, Vec<u32>)> = None;
        let mut core: Vec<StateId> = vec![self.start];
        let mut steppers: Vec<StateId> = Vec::new();
        let mut pending_end: Vec<StateId> = Vec::new();
        let mut matched: Vec<u32> = Vec::new();
        let mut offset = 0usize;
        loop {
            steppers.clear();
            pending_end.clear();
            matched.clear();
            self.closure(
                &core,
                offset == 0,
                false,
                scratch,
                &mut steppers,
                &mut pending_end,
                &mut matched,
            );
            if offset > 0 && !pending_end.is_empty() {
                let mut s2 = Vec::new();
                let mut p2 = Vec::new();
                let seeds: Vec<StateId> = std::mem::take(&mut pending_end);
                self.closure(&seeds, false, true, scratch, &mut s2, &mut p2, &mut matched);
            }
            if offset > 0 && !matched.is_empty() {
                matched.sort_unstable();
                matched.dedup();
                best = Some((offset, matched.clone()));
            }
            let Some(&byte) = hay.get(offset) else { break };
            core.clear();
            scratch.next_gen();
            for &s in &steppers {
                if let State::Bytes { lo, hi, next } = self.states[s as usize] {
                    if lo <= byte && byte <= hi && scratch.mark(next) {
                        core.push(next);
                    }
                }
            }
            if core.is_empty() {
                break;
            }
            offset += 1;
            scratch.steps += 1;
        }
        best
    }

    /// Epsilon closure of `seeds`: collects byte-consuming states into
    /// `steppers`, reached `Match` terminals into `matched`, and (when not
    /// `at_end`) the targets of end assertions into `pending_end`.
    #[allow(clippy::too_many_arguments)]
    fn closure(
        &self,
        seeds: &[StateId],
        at_start: bool,
        at_end: bool,
        scratch: &mut Scratch,
        steppers: &mut Vec<StateId>,
        pending_end: &mut Vec<StateId>,
        matched: &mut Vec<u32>,
    ) {
        scratch.next_gen();
        let mut stack: Vec<StateId> = Vec::new();
        for &s in seeds {
            if scratch.mark(s) {
                stack.push(s);
            }
        }
        while let Some(s) = stack.pop() {
            match &self.states[s as usize] {
                State::Bytes { .. } => steppers.push(s),
                State::Split(ts) => {
                    for &t in ts {
                        if scratch.mark(t) {
                            stack.push(t);
                        }
                    }
                }
                State::AssertStart(t) => {
                    if at_start && scratch.mark(*t) {
                        stack.push(*t);
                    }
                }
                State::AssertEnd(t) => {
                    if at_end {
                        if scratch.mark(*t) {
                            stack.push(*t);
                        }
                    } else {
                        pending_end.push(*t);
                    }
                }
                State::Match(i) => matched.push(*i),
            }
        }
    }
}

/// Reusable visited-marks for [`Nfa::longest`].
#[derive(Default)]
pub(crate) struct Scratch {
    marks: Vec<u32>,
    gen: u32,
    /// Bytes stepped over so far, over all calls.
    pub(crate) steps: u64,
}

impl Scratch {
    fn ensure(&mut self, n: usize) {
        if self.marks.len() < n {
            self.marks = vec![0; n];
            self.gen = 0;
        }
    }

    fn next_gen(&mut self) {
        if self.gen == u32::MAX {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.gen = 0;
        }
        self.gen += 1;
    }

    /// Marks `s` visited in this generation; true when it was not yet.
    fn mark(&mut self, s: StateId) -> bool {
        let m = &mut self.marks[s as usize];
        if *m == self.gen {
            false
        } else {
            *m = self.gen;
            true
        }
    }
}

//! Thompson NFAs over bytes, compiled from `regex-syntax`'s HIR.
//!
//! Each state has ε-edges and byte-range edges. A state may be accepting for
//! one *tag* (the terminal it belongs to). Cost: linear in the size of the
//! regex after counted repetitions are expanded, bounded by a state limit.

use crate::error::{Error, ErrorKind, Result};
use regex_syntax::hir::{Class, Hir, HirKind};
use regex_syntax::utf8::Utf8Sequences;

/// Identifier of an NFA state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StateId(pub u32);

#[derive(Clone, Debug, Default)]
pub(crate) struct NState {
    pub(crate) eps: Vec<StateId>,
    pub(crate) ranges: Vec<(u8, u8, StateId)>,
    pub(crate) tag: Option<u32>,
}

/// An NFA over bytes whose accepting states carry tags.
#[derive(Clone, Debug)]
pub struct Nfa {
    pub(crate) states: Vec<NState>,
    pub(crate) start: StateId,
}

/// Default limit on the number of NFA states.
pub const DEFAULT_NFA_LIMIT: usize = 1 << 20;

/// Parses `pattern` (regex-syntax syntax) into HIR with Unicode and UTF-8 on.
///
/// # Errors
/// [`ErrorKind::Regex`] if the pattern does not parse.
pub fn parse_pattern(pattern: &str) -> Result<Hir> {
    regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .nest_limit(200)
        .build()
        .parse(pattern)
        .map_err(|e| {
            Error::new(
                ErrorKind::Regex,
                format!("{pattern:?}: {}", one_line(&e.to_string())),
            )
        })
}

fn one_line(s: &str) -> String {
    s.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

impl Nfa {
    /// Builds one NFA recognising the union of `patterns`, where a word is
    /// accepted with tag `i` iff it matches `patterns[i]` as a whole.
    ///
    /// # Errors
    /// [`ErrorKind::Regex`] for a pattern that does not parse or uses look-around
    /// assertions; [`ErrorKind::SizeLimit`] past `limit` states.
    pub fn union(patterns: &[&str], limit: usize) -> Result<Nfa> {
        let mut b = Builder {
            states: vec![NState::default()],
            limit,
        };
        for (i, p) in patterns.iter().enumerate() {
            let hir = parse_pattern(p)?;
            let (s, e) = b.compile(&hir).map_err(|err| match err.kind() {
                ErrorKind::Regex => {
                    Error::new(ErrorKind::Regex, format!("{p:?}: {}", err.message()))
                }
                _ => err,
            })?;
            b.states[e.0 as usize].tag = Some(i as u32);
            b.states[0].eps.push(s);
        }
        Ok(Nfa {
            states: b.states,
            start: StateId(0),
        })
    }

    /// Number of states.
    pub fn len(&self) -> usize {
        self.states.len()
    }

    /// Simulates the NFA on `word`: the sorted tags of the accepting states
    /// reached (the reference semantics the DFA constructions must preserve).
    pub fn matches(&self, word: &[u8]) -> Vec<u32> {
        let n = self.states.len();
        let mut cur = vec![false; n];
        let mut stack = vec![self.start.0];
        let close = |set: &mut Vec<bool>, stack: &mut Vec<u32>| {
            while let Some(q) = stack.pop() {
                if set[q as usize] {
                    continue;
                }
                set[q as usize] = true;
                stack.extend(self.states[q as usize].eps.iter().map(|s| s.0));
            }
        };
        close(&mut cur, &mut stack);
        for &b in word {
            let mut next = vec![false; n];
            for (q, on) in cur.iter().enumerate() {
                if !on {
                    continue;
                }
                for &(lo, hi, to) in &self.states[q].ranges {
                    if lo <= b && b <= hi {
                        stack.push(to.0);
                    }
                }
            }
            close(&mut next, &mut stack);
            cur = next;
        }
        let mut tags: Vec<u32> = (0..n)
            .filter(|&q| cur[q])
            .filter_map(|q| self.states[q].tag)
            .collect();
        tags.sort_unstable();
        tags.dedup();
        tags
    }

    /// Whether the NFA has no states (never true for a built NFA).
    pub fn is_empty(&self) -> bool {
        self.states.is_empty()
    }
}

struct Builder {
    states: Vec<NState>,
    limit: usize,
}

impl Builder {
    fn add(&mut self) -> Result<StateId> {
        if self.states.len() >= self.limit {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!(
                    "regular expressions need more than {} NFA states",
                    self.limit
                ),
            ));
        }
        self.states.push(NState::default());
        Ok(StateId(self.states.len() as u32 - 1))
    }

    fn eps(&mut self, from: StateId, to: StateId) {
        self.states[from.0 as usize].eps.push(to);
    }

    fn range(&mut self, from: StateId, lo: u8, hi: u8, to: StateId) {
        self.states[from.0 as usize].ranges.push((lo, hi, to));
    }

    /// Compiles `hir` into a fragment `(start, end)`; `end` has no edges yet.
    fn compile(&mut self, hir: &Hir) -> Result<(StateId, StateId)> {
        match hir.kind() {
            HirKind::Empty => {
                let s = self.add()?;
                Ok((s, s))
            }
            HirKind::Literal(lit) => {
                let s = self.add()?;
                let mut cur = s;
                for &byte in lit.0.iter() {
                    let n = self.add()?;
                    self.range(cur, byte, byte, n);
                    cur = n;
                }
                Ok((s, cur))
            }
            HirKind::Class(Class::Bytes(cls)) => {
                let s = self.add()?;
                let e = self.add()?;
                for r in cls.iter() {
                    self.range(s, r.start(), r.end(), e);
                }
                Ok((s, e))
            }
            HirKind::Class(Class::Unicode(cls)) => {
                let s = self.add()?;
                let e = self.add()?;
                for r in cls.iter() {
                    for seq in Utf8Sequences::new(r.start(), r.end()) {
                        let ranges = seq.as_slice();
                        let mut cur = s;
                        for (i, br) in ranges.iter().enumerate() {
                            let next = if i + 1 == ranges.len() { e } else { self.add()? };
                            self.range(cur, br.start, br.end, next);
                            cur = next;
                        }
                    }
                }
                Ok((s, e))
            }
            HirKind::Look(look) => Err(Error::new(
                ErrorKind::Regex,
                format!("look-around assertion {look:?} is not supported in a terminal (terminals match whole lexemes)"),
            )),
            HirKind::Capture(c) => self.compile(&c.sub),
            HirKind::Concat(subs) => {
                let s = self.add()?;
                let mut cur = s;
                for sub in subs {
                    let (a, b) = self.compile(sub)?;
                    self.eps(cur, a);
                    cur = b;
                }
                Ok((s, cur))
            }
            HirKind::Alternation(subs) => {
                let s = self.add()?;
                let e = self.add()?;
                for sub in subs {
                    let (a, b) = self.compile(sub)?;
                    self.eps(s, a);
                    self.eps(b, e);
                }
                Ok((s, e))
            }
            HirKind::Repetition(rep) => {
                let s = self.add()?;
                let mut cur = s;
                for _ in 0..rep.min {
                    let (a, b) = self.compile(&rep.sub)?;
                    self.eps(cur, a);
                    cur = b;
                }
                match rep.max {
                    None => {
                        // Kleene star on top of the mandatory copies.
                        let (a, b) = self.compile(&rep.sub)?;
                        let e = self.add()?;
                        self.eps(cur, a);
                        self.eps(cur, e);
                        self.eps(b, a);
                        self.eps(b, e);
                        Ok((s, e))
                    }
                    Some(max) => {
                        let e = self.add()?;
                        self.eps(cur, e);
                        for _ in rep.min..max {
                            let (a, b) = self.compile(&rep.sub)?;
                            self.eps(cur, a);
                            self.eps(b, e);
                            cur = b;
                        }
                        Ok((s, e))
                    }
                }
            }
        }
    }
}

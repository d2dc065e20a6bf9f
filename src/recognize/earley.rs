//! A private BNF form of the surface grammar and an Earley recognizer over
//! sequences of terminal *sets*, with optional (skippable) positions.
//!
//! Nullable nonterminals are handled as Aycock and Horspool describe: when an
//! item predicts a nullable nonterminal, it is also advanced over it at once.

use std::collections::{HashMap, HashSet};

use crate::error::{Error, ErrorKind, Result};
use crate::grammar::ast::{Expr, Grammar};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Sym {
    T(u32),
    N(u32),
}

/// A grammar in plain BNF: nonterminal `i < rule count` is rule `i`, the
/// others are fresh helpers; the last production is `S' -> start`.
#[derive(Debug)]
pub(crate) struct Bnf {
    /// Productions as (left side, right side).
    prods: Vec<(u32, Vec<Sym>)>,
    /// For each nonterminal, its productions.
    by_lhs: Vec<Vec<u32>>,
    nullable: Vec<bool>,
    /// Whether each terminal occurs in some production.
    used: Vec<bool>,
    /// The production `S' -> start`.
    top: u32,
}

struct Expander<'g> {
    g: &'g Grammar,
    nts: u32,
    prods: Vec<(u32, Vec<Sym>)>,
}

impl Expander<'_> {
    fn fresh(&mut self) -> u32 {
        self.nts += 1;
        self.nts - 1
    }

    /// Appends the symbols standing for `e` to `out`.
    fn expand(&mut self, e: &Expr, out: &mut Vec<Sym>) -> Result<()> {
        match e {
            Expr::Empty => {}
            Expr::Term(t) => {
                if t.0 as usize >= self.g.terminals.len() {
                    return Err(Error::new(
                        ErrorKind::Grammar,
                        format!("unknown terminal {}", t.0),
                    ));
                }
                out.push(Sym::T(t.0));
            }
            Expr::Rule(r) => {
                if r.0 as usize >= self.g.rules.len() {
                    return Err(Error::new(
                        ErrorKind::Grammar,
                        format!("unknown rule {}", r.0),
                    ));
                }
                out.push(Sym::N(r.0));
            }
            Expr::Seq(es) => {
                for x in es {
                    self.expand(x, out)?;
                }
            }
            Expr::Alt(es) => {
                let n = self.fresh();
                for x in es {
                    let mut rhs = Vec::new();
                    self.expand(x, &mut rhs)?;
                    self.prods.push((n, rhs));
                }
                out.push(Sym::N(n));
            }
            Expr::Opt(x) => {
                let n = self.fresh();
                let mut rhs = Vec::new();
                self.expand(x, &mut rhs)?;
                self.prods.push((n, Vec::new()));
                self.prods.push((n, rhs));
                out.push(Sym::N(n));
            }
            Expr::Star(x) | Expr::Plus(x) => {
                // N -> N x | (ε or x)
                let n = self.fresh();
                let mut body = Vec::new();
                self.expand(x, &mut body)?;
                let mut rec = vec![Sym::N(n)];
                rec.extend_from_slice(&body);
                self.prods.push((n, rec));
                if matches!(e, Expr::Star(_)) {
                    self.prods.push((n, Vec::new()));
                } else {
                    self.prods.push((n, body));
                }
                out.push(Sym::N(n));
            }
        }
        Ok(())
    }
}

impl Bnf {
    pub(crate) fn new(g: &Grammar) -> Result<Bnf> {
        if g.start.0 as usize >= g.rules.len() {
            return Err(Error::new(
                ErrorKind::Grammar,
                "the start rule does not exist",
            ));
        }
        let mut ex = Expander {
            g,
            nts: g.rules.len() as u32,
            prods: Vec::new(),
        };
        for (i, r) in g.rules.iter().enumerate() {
            let mut rhs = Vec::new();
            ex.expand(&r.expr, &mut rhs)?;
            ex.prods.push((i as u32, rhs));
        }
        let top_nt = ex.fresh();
        ex.prods.push((top_nt, vec![Sym::N(g.start.0)]));
        let top = (ex.prods.len() - 1) as u32;
        let nts = ex.nts as usize;
        let prods = ex.prods;
        let mut by_lhs = vec![Vec::new(); nts];
        for (i, (l, _)) in prods.iter().enumerate() {
            by_lhs[*l as usize].push(i as u32);
        }
        // Nullable nonterminals by fixpoint.
        let mut nullable = vec![false; nts];
        loop {
            let mut changed = false;
            for (l, rhs) in &prods {
                if !nullable[*l as usize]
                    && rhs
                        .iter()
                        .all(|s| matches!(s, Sym::N(n) if nullable[*n as usize]))
                {
                    nullable[*l as usize] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let mut used = vec![false; g.terminals.len()];
        for (_, rhs) in &prods {
            for s in rhs {
                if let Sym::T(t) = s {
                    used[*t as usize] = true;
                }
            }
        }
        Ok(Bnf {
            prods,
            by_lhs,
            nullable,
            used,
            top,
        })
    }

    /// Whether the token sequence is derived from the start rule. Token `j`
    /// is one of `tokens[j].0` (ascending terminal numbers), or nothing at all
    /// when `tokens[j].1` is true. Fails with [`ErrorKind::Budget`] after
    /// `budget` item insertions attempts.
    pub(crate) fn recognize(&self, tokens: &[(&[u32], bool)], budget: u64) -> Result<bool> {
        // A skippable token none of whose terminals occurs in a rule can only
        // be skipped: drop it.
        let tokens: Vec<(&[u32], bool)> = tokens
            .iter()
            .copied()
            .filter(|(ts, skip)| !(*skip && ts.iter().all(|&t| !self.is_used(t))))
            .collect();
        let mut work = 0u64;
        // Finished sets keep only their items waiting on a nonterminal, as
        // (nonterminal, item) sorted: that is all completion reads.
        let mut done: Vec<Box<[(u32, Item)]>> = Vec::with_capacity(tokens.len());
        let mut cur = Set::default();
        cur.add(Item {
            prod: self.top,
            dot: 0,
            origin: 0,
        });
        for i in 0..=tokens.len() {
            self.close(&mut cur, &done, i, &mut work, budget)?;
            let Some(&(terms, skip)) = tokens.get(i) else {
                break;
            };
            let mut next = Set::default();
            if skip {
                for &it in &cur.items {
                    next.add(it);
                }
            }
            for &it in &cur.items {
                if let Some(Sym::T(t)) = self.next_sym(it) {
                    if terms.binary_search(&t).is_ok() {
                        work += 1;
                        next.add(Item {
                            dot: it.dot + 1,
                            ..it
                        });
                    }
                }
            }
            if work > budget {
                return Err(budget_error());
            }
            if next.items.is_empty() {
                return Ok(false);
            }
            let mut frozen: Vec<(u32, Item)> = std::mem::take(&mut cur.waiting)
                .into_iter()
                .flat_map(|(b, v)| v.into_iter().map(move |it| (b, it)))
                .collect();
            frozen.sort_unstable_by_key(|&(b, it)| (b, it.prod, it.dot, it.origin));
            done.push(frozen.into_boxed_slice());
            cur = next;
        }
        let accept = Item {
            prod: self.top,
            dot: 1,
            origin: 0,
        };
        Ok(cur.seen.contains(&accept))
    }

    fn is_used(&self, t: u32) -> bool {
        self.used.get(t as usize).copied().unwrap_or(false)
    }

    fn next_sym(&self, it: Item) -> Option<Sym> {
        self.prods[it.prod as usize].1.get(it.dot as usize).copied()
    }

    /// Predicts and completes `set`, the set at position `i`, until nothing
    /// changes; `done` holds the finished sets before it.
    fn close(
        &self,
        set: &mut Set,
        done: &[Box<[(u32, Item)]>],
        i: usize,
        work: &mut u64,
        budget: u64,
    ) -> Result<()> {
        let mut k = 0;
        while k < set.items.len() {
            *work += 1;
            if *work > budget {
                return Err(budget_error());
            }
            let it = set.items[k];
            k += 1;
            match self.next_sym(it) {
                Some(Sym::N(b)) => {
                    set.waiting.entry(b).or_default().push(it);
                    for &p in &self.by_lhs[b as usize] {
                        *work += 1;
                        set.add(Item {
                            prod: p,
                            dot: 0,
                            origin: i as u32,
                        });
                    }
                    // Aycock-Horspool: step over a nullable nonterminal now.
                    // Completions of `b` already made in this set advance it too.
                    if self.nullable[b as usize] || set.completed.contains(&b) {
                        set.add(Item {
                            dot: it.dot + 1,
                            ..it
                        });
                    }
                }
                Some(Sym::T(_)) => {}
                None => {
                    let a = self.prods[it.prod as usize].0;
                    let o = it.origin as usize;
                    let parents: Vec<Item> = if o == i {
                        set.completed.insert(a);
                        set.waiting.get(&a).cloned().unwrap_or_default()
                    } else {
                        let Some(f) = done.get(o) else {
                            return Err(Error::new(ErrorKind::Budget, "internal: bad origin"));
                        };
                        let lo = f.partition_point(|&(b, _)| b < a);
                        let hi = f.partition_point(|&(b, _)| b <= a);
                        f[lo..hi].iter().map(|&(_, p)| p).collect()
                    };
                    *work += parents.len() as u64;
                    if *work > budget {
                        return Err(budget_error());
                    }
                    for p in parents {
                        set.add(Item {
                            dot: p.dot + 1,
                            ..p
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

fn budget_error() -> Error {
    Error::new(
        ErrorKind::Budget,
        "the recognizer's work budget was exhausted",
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Item {
    prod: u32,
    dot: u32,
    origin: u32,
}

#[derive(Default)]
struct Set {
    items: Vec<Item>,
    seen: HashSet<Item>,
    /// Items of this set whose next symbol is the key.
    waiting: HashMap<u32, Vec<Item>>,
    /// Nonterminals completed with origin at this set.
    completed: HashSet<u32>,
}

impl Set {
    fn add(&mut self, it: Item) {
        if self.seen.insert(it) {
            self.items.push(it);
        }
    }
}

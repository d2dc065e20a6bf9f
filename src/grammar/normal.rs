//! C2F+ε normal form: every production is `A → X Y`, `A → X` or `A → ε`,
//! where `X`, `Y` are symbols (terminals or nonterminals).
//!
//! [`Cfg::from_grammar`] converts a surface [`Grammar`] in these steps:
//!
//! 1. **Expansion** of each rule's [`Expr`] tree into plain BNF. Nested
//!    alternations, `Opt`, `Star` and `Plus` get fresh nonterminals named after
//!    their rule (`value__opt3`, `array__star4`, ...); structurally identical
//!    ones are shared. Repetition is **left-recursive**: `x*` becomes
//!    `S → ε | S x` and `x+` becomes `P → x | P x`, which keeps the
//!    top-down-filtered emptiness search linear on long lists (a
//!    right-recursive list completes at every element boundary).
//! 2. Removal of **non-generating** and then **unreachable** nonterminals. A
//!    non-generating start symbol is an error ("the grammar's language is
//!    empty").
//! 3. Deduplication, **left factoring** of alternatives sharing their first
//!    symbol (`A → X α | X β` becomes `A → X A__lf`, `A__lf → α | β`), and
//!    **inlining** of nonterminals used exactly once where it does not grow the
//!    grammar (a single-production nonterminal, or the target of a unit
//!    production).
//! 4. **Binarization** of right-hand sides longer than two: repeated adjacent
//!    pairs of symbols are replaced by one shared nonterminal (named after the
//!    pair), round by round, and what is left is split right-nested.
//!
//! `A → ε` and unit productions `A → X` are kept. Terminals keep their
//! [`TermId`]s, so `n_terms` is the source grammar's number of terminals.
//! The result is deterministic: only vectors and sorted maps are iterated, and
//! each production list is sorted.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use super::ast::{Expr, Grammar, TermId};
use crate::error::{Error, ErrorKind, Result};

/// Index of a nonterminal of a [`Cfg`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NtId(pub u32);

/// A grammar symbol of a [`Cfg`]: a terminal (lexeme class) or a nonterminal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Sym {
    /// A terminal of the source grammar.
    T(TermId),
    /// A nonterminal of the normal form.
    N(NtId),
}

/// A grammar in C2F+ε normal form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cfg {
    /// Number of terminals (same numbering as the source [`Grammar`]).
    pub n_terms: usize,
    /// Names of the nonterminals (for display; generated ones are marked).
    pub nt_names: Vec<String>,
    /// The start symbol.
    pub start: NtId,
    /// Productions `A → X Y`.
    pub binary: Vec<(NtId, Sym, Sym)>,
    /// Productions `A → X`.
    pub unary: Vec<(NtId, Sym)>,
    /// Productions `A → ε`.
    pub epsilon: Vec<NtId>,
}

/// Deepest [`Expr`] nesting accepted by [`Cfg::from_grammar`].
const MAX_EXPR_DEPTH: usize = 500;
/// Rounds of shared-pair elimination.
const MAX_PAIR_ROUNDS: usize = 32;
/// Passes of single-use inlining.
const MAX_INLINE_PASSES: usize = 16;

type Alt = Vec<Sym>;

struct Work {
    names: Vec<String>,
    /// Alternatives of each nonterminal.
    rhs: Vec<Vec<Alt>>,
    start: usize,
    counter: usize,
}

fn nt(s: Sym) -> Option<usize> {
    match s {
        Sym::N(n) => Some(n.0 as usize),
        Sym::T(_) => None,
    }
}

fn nsym(i: usize) -> Sym {
    Sym::N(NtId(i as u32))
}

impl Work {
    fn fresh(&mut self, name: String) -> usize {
        self.counter += 1;
        self.names.push(format!("{name}{}", self.counter));
        self.rhs.push(Vec::new());
        self.names.len() - 1
    }

    fn sym_name(&self, s: Sym, g: &Grammar) -> String {
        match s {
            Sym::T(t) => g
                .terminals
                .get(t.0 as usize)
                .map_or_else(|| format!("t{}", t.0), |t| t.name.clone()),
            Sym::N(n) => self.names.get(n.0 as usize).cloned().unwrap_or_default(),
        }
    }
}

/// Lowering of [`Expr`] trees to BNF.
struct Lower<'g> {
    g: &'g Grammar,
    w: Work,
    /// Shared combinator nonterminals: (kind, alternatives) → nonterminal.
    memo: HashMap<(u8, Vec<Alt>), usize>,
}

impl Lower<'_> {
    fn alts(&mut self, e: &Expr, owner: &str, depth: usize) -> Result<Vec<Alt>> {
        if depth > MAX_EXPR_DEPTH {
            return Err(Error::new(
                ErrorKind::Grammar,
                format!("rule '{owner}' is nested too deeply"),
            ));
        }
        match e {
            Expr::Alt(v) => {
                let mut out = Vec::new();
                for x in v {
                    out.extend(self.alts(x, owner, depth + 1)?);
                }
                Ok(out)
            }
            _ => {
                let mut seq = Vec::new();
                self.seq(e, owner, depth + 1, &mut seq)?;
                Ok(vec![seq])
            }
        }
    }

    fn seq(&mut self, e: &Expr, owner: &str, depth: usize, out: &mut Alt) -> Result<()> {
        if depth > MAX_EXPR_DEPTH {
            return Err(Error::new(
                ErrorKind::Grammar,
                format!("rule '{owner}' is nested too deeply"),
            ));
        }
        match e {
            Expr::Empty => {}
            Expr::Term(t) => {
                if t.0 as usize >= self.g.terminals.len() {
                    return Err(Error::new(
                        ErrorKind::Grammar,
                        format!("rule '{owner}' uses unknown terminal {}", t.0),
                    ));
                }
                out.push(Sym::T(*t));
            }
            Expr::Rule(r) => {
                if r.0 as usize >= self.g.rules.len() {
                    return Err(Error::new(
                        ErrorKind::Grammar,
                        format!("rule '{owner}' uses unknown rule {}", r.0),
                    ));
                }
                out.push(nsym(r.0 as usize));
            }
            Expr::Seq(v) => {
                for x in v {
                    self.seq(x, owner, depth + 1, out)?;
                }
            }
            Expr::Alt(_) => {
                let mut a = self.alts(e, owner, depth + 1)?;
                if a.len() == 1 {
                    out.append(&mut a[0]);
                } else {
                    out.push(self.combinator(0, a, owner, "__alt"));
                }
            }
            Expr::Opt(x) => {
                let a = self.alts(x, owner, depth + 1)?;
                out.push(self.combinator(1, a, owner, "__opt"));
            }
            Expr::Star(x) => {
                let a = self.alts(x, owner, depth + 1)?;
                out.push(self.combinator(2, a, owner, "__star"));
            }
            Expr::Plus(x) => {
                let a = self.alts(x, owner, depth + 1)?;
                out.push(self.combinator(3, a, owner, "__plus"));
            }
        }
        Ok(())
    }

    fn combinator(&mut self, kind: u8, a: Vec<Alt>, owner: &str, suffix: &str) -> Sym {
        let key = (kind, a);
        if let Some(&n) = self.memo.get(&key) {
            return nsym(n);
        }
        let n = self.w.fresh(format!("{owner}{suffix}"));
        let me = nsym(n);
        let mut rhs = Vec::new();
        match kind {
            0 => rhs.extend(key.1.iter().cloned()),
            1 => {
                rhs.push(Vec::new());
                rhs.extend(key.1.iter().cloned());
            }
            2 => {
                rhs.push(Vec::new());
                for x in &key.1 {
                    let mut s = vec![me];
                    s.extend(x.iter().cloned());
                    rhs.push(s);
                }
            }
            _ => {
                for x in &key.1 {
                    rhs.push(x.clone());
                    let mut s = vec![me];
                    s.extend(x.iter().cloned());
                    rhs.push(s);
                }
            }
        }
        self.w.rhs[n] = rhs;
        self.memo.insert(key, n);
        me
    }
}

impl Work {
    /// Removes non-generating, then unreachable nonterminals' productions.
    fn clean(&mut self) -> Result<()> {
        let n = self.rhs.len();
        // Generating: worklist over productions counting non-generating occurrences.
        let mut gen = vec![false; n];
        let mut missing: Vec<Vec<usize>> =
            self.rhs.iter().map(|alts| vec![0; alts.len()]).collect();
        let mut occ: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n];
        let mut queue = Vec::new();
        for (a, alts) in self.rhs.iter().enumerate() {
            for (k, alt) in alts.iter().enumerate() {
                for s in alt {
                    if let Some(b) = nt(*s) {
                        missing[a][k] += 1;
                        occ[b].push((a, k));
                    }
                }
                if missing[a][k] == 0 && !gen[a] {
                    gen[a] = true;
                    queue.push(a);
                }
            }
        }
        while let Some(b) = queue.pop() {
            for &(a, k) in &occ[b] {
                missing[a][k] -= 1;
                if missing[a][k] == 0 && !gen[a] {
                    gen[a] = true;
                    queue.push(a);
                }
            }
        }
        if !gen[self.start] {
            return Err(Error::new(
                ErrorKind::Grammar,
                "the grammar's language is empty",
            ));
        }
        for alts in &mut self.rhs {
            alts.retain(|alt| alt.iter().all(|s| nt(*s).is_none_or(|b| gen[b])));
        }
        let reach = self.reachable();
        for (a, alts) in self.rhs.iter_mut().enumerate() {
            if !reach[a] {
                alts.clear();
            }
        }
        Ok(())
    }

    fn reachable(&self) -> Vec<bool> {
        let mut reach = vec![false; self.rhs.len()];
        reach[self.start] = true;
        let mut stack = vec![self.start];
        while let Some(a) = stack.pop() {
            for alt in &self.rhs[a] {
                for b in alt.iter().filter_map(|s| nt(*s)) {
                    if !reach[b] {
                        reach[b] = true;
                        stack.push(b);
                    }
                }
            }
        }
        reach
    }

    fn dedup(&mut self) {
        for alts in &mut self.rhs {
            alts.sort();
            alts.dedup();
        }
    }

    fn left_factor(&mut self) {
        let mut todo: Vec<usize> = (0..self.rhs.len()).rev().collect();
        while let Some(a) = todo.pop() {
            let mut groups: BTreeMap<Sym, Vec<usize>> = BTreeMap::new();
            for (k, alt) in self.rhs[a].iter().enumerate() {
                if let Some(&first) = alt.first() {
                    groups.entry(first).or_default().push(k);
                }
            }
            if groups.values().all(|g| g.len() < 2) {
                continue;
            }
            let old = std::mem::take(&mut self.rhs[a]);
            let mut taken = vec![false; old.len()];
            let mut new_alts = Vec::new();
            for (first, ks) in groups {
                if ks.len() < 2 {
                    continue;
                }
                let base = self.names[a].clone();
                let f = self.fresh(format!("{base}__lf"));
                let mut tails: Vec<Alt> = ks
                    .iter()
                    .map(|&k| old[k].get(1..).unwrap_or(&[]).to_vec())
                    .collect();
                tails.sort();
                tails.dedup();
                self.rhs[f] = tails;
                for k in ks {
                    taken[k] = true;
                }
                new_alts.push(vec![first, nsym(f)]);
                todo.push(f);
            }
            for (k, alt) in old.into_iter().enumerate() {
                if !taken[k] {
                    new_alts.push(alt);
                }
            }
            new_alts.sort();
            self.rhs[a] = new_alts;
        }
    }

    /// Inlines nonterminals used exactly once, where that does not grow the grammar.
    fn inline_single_use(&mut self) {
        for _ in 0..MAX_INLINE_PASSES {
            let n = self.rhs.len();
            let mut count = vec![0usize; n];
            let mut host: Vec<Option<(usize, usize)>> = vec![None; n];
            for (a, alts) in self.rhs.iter().enumerate() {
                for (k, alt) in alts.iter().enumerate() {
                    for b in alt.iter().filter_map(|s| nt(*s)) {
                        count[b] += 1;
                        host[b] = Some((a, k));
                    }
                }
            }
            let mut touched = vec![false; n];
            let mut changed = false;
            for b in 0..n {
                let Some((a, k)) = host[b] else { continue };
                if count[b] != 1 || b == self.start || a == b || touched[a] || touched[b] {
                    continue;
                }
                let unit = self.rhs[a][k].len() == 1;
                if self.rhs[b].len() == 1 {
                    let beta = std::mem::take(&mut self.rhs[b]).pop().unwrap_or_default();
                    let alt = &mut self.rhs[a][k];
                    if let Some(pos) = alt.iter().position(|s| *s == nsym(b)) {
                        alt.splice(pos..pos + 1, beta);
                    }
                } else if unit {
                    let mut bs = std::mem::take(&mut self.rhs[b]).into_iter();
                    if let Some(first) = bs.next() {
                        self.rhs[a][k] = first;
                    }
                    self.rhs[a].extend(bs);
                } else {
                    continue;
                }
                touched[a] = true;
                touched[b] = true;
                changed = true;
            }
            if !changed {
                break;
            }
            self.dedup();
        }
    }

    /// Splits right-hand sides longer than two symbols, sharing repeated pairs.
    fn binarize(&mut self, g: &Grammar) {
        let mut pair_nt: HashMap<(Sym, Sym), usize> = HashMap::new();
        for _ in 0..MAX_PAIR_ROUNDS {
            let mut count: HashMap<(Sym, Sym), u32> = HashMap::new();
            for alts in &self.rhs {
                for alt in alts.iter().filter(|a| a.len() > 2) {
                    for w in alt.windows(2) {
                        *count.entry((w[0], w[1])).or_default() += 1;
                    }
                }
            }
            let selected: HashSet<(Sym, Sym)> = count
                .into_iter()
                .filter(|&(_, c)| c >= 2)
                .map(|(p, _)| p)
                .collect();
            if selected.is_empty() {
                break;
            }
            let mut changed = false;
            for a in 0..self.rhs.len() {
                for k in 0..self.rhs[a].len() {
                    if self.rhs[a][k].len() <= 2 {
                        continue;
                    }
                    let alt = std::mem::take(&mut self.rhs[a][k]);
                    let mut out = Vec::with_capacity(alt.len());
                    let mut i = 0;
                    while i < alt.len() {
                        if let (Some(&x), Some(&y)) = (alt.get(i), alt.get(i + 1)) {
                            if selected.contains(&(x, y)) {
                                let p = match pair_nt.get(&(x, y)) {
                                    Some(&p) => p,
                                    None => {
                                        let mut name = format!(
                                            "{}_{}",
                                            self.sym_name(x, g),
                                            self.sym_name(y, g)
                                        );
                                        if name.chars().count() > 40 {
                                            name = name.chars().take(40).collect();
                                        }
                                        let p = self.fresh(format!("{name}__pair"));
                                        self.rhs[p] = vec![vec![x, y]];
                                        pair_nt.insert((x, y), p);
                                        p
                                    }
                                };
                                out.push(nsym(p));
                                i += 2;
                                changed = true;
                                continue;
                            }
                        }
                        out.push(alt[i]);
                        i += 1;
                    }
                    self.rhs[a][k] = out;
                }
            }
            if !changed {
                break;
            }
        }
        // Right-nested split of what is left.
        for a in 0..self.rhs.len() {
            for k in 0..self.rhs[a].len() {
                if self.rhs[a][k].len() <= 2 {
                    continue;
                }
                let alt = std::mem::take(&mut self.rhs[a][k]);
                let base = self.names[a].clone();
                let mut tail = alt.len() - 2;
                let mut last = vec![alt[tail], alt[tail + 1]];
                while tail > 1 {
                    let n = self.fresh(format!("{base}__seq"));
                    self.rhs[n] = vec![last];
                    tail -= 1;
                    last = vec![alt[tail], nsym(n)];
                }
                let n = self.fresh(format!("{base}__seq"));
                self.rhs[n] = vec![last];
                self.rhs[a][k] = vec![alt[0], nsym(n)];
            }
        }
    }

    fn finish(self, n_terms: usize) -> Cfg {
        let reach = self.reachable();
        let mut new_id = vec![u32::MAX; self.rhs.len()];
        let mut names = Vec::new();
        for (a, r) in reach.iter().enumerate() {
            if *r {
                new_id[a] = names.len() as u32;
                names.push(self.names[a].clone());
            }
        }
        let map = |s: Sym| match s {
            Sym::N(n) => Sym::N(NtId(new_id[n.0 as usize])),
            t => t,
        };
        let mut binary = Vec::new();
        let mut unary = Vec::new();
        let mut epsilon = Vec::new();
        for (a, alts) in self.rhs.iter().enumerate() {
            if !reach[a] {
                continue;
            }
            let lhs = NtId(new_id[a]);
            for alt in alts {
                match alt.as_slice() {
                    [] => epsilon.push(lhs),
                    [x] => unary.push((lhs, map(*x))),
                    [x, y] => binary.push((lhs, map(*x), map(*y))),
                    _ => unreachable!("binarized"),
                }
            }
        }
        binary.sort();
        binary.dedup();
        unary.sort();
        unary.dedup();
        epsilon.sort();
        epsilon.dedup();
        Cfg {
            n_terms,
            nt_names: names,
            start: NtId(new_id[self.start]),
            binary,
            unary,
            epsilon,
        }
    }
}

impl Cfg {
    /// Converts a surface grammar to C2F+ε normal form (see the module docs).
    ///
    /// Fails with [`ErrorKind::Grammar`] when the start rule derives no word
    /// ("the grammar's language is empty"), when a rule is nested more than
    /// 500 levels deep, or when the grammar refers to missing rules/terminals.
    pub fn from_grammar(g: &Grammar) -> Result<Cfg> {
        if g.start.0 as usize >= g.rules.len() {
            return Err(Error::new(
                ErrorKind::Grammar,
                "the start rule does not exist",
            ));
        }
        let w = Work {
            names: g.rules.iter().map(|r| r.name.clone()).collect(),
            rhs: vec![Vec::new(); g.rules.len()],
            start: g.start.0 as usize,
            counter: 0,
        };
        let mut low = Lower {
            g,
            w,
            memo: HashMap::new(),
        };
        for (i, r) in g.rules.iter().enumerate() {
            let alts = low.alts(&r.expr, &r.name, 0)?;
            low.w.rhs[i] = alts;
        }
        let mut w = low.w;
        w.clean()?;
        w.dedup();
        w.left_factor();
        w.inline_single_use();
        w.binarize(g);
        w.dedup();
        Ok(w.finish(g.terminals.len()))
    }

    /// Productions (binary, unary and ε), the grammar's size.
    pub fn n_productions(&self) -> usize {
        self.binary.len() + self.unary.len() + self.epsilon.len()
    }

    /// A one-line summary: numbers of terminals, nonterminals and productions.
    pub fn stats(&self) -> String {
        format!(
            "{} terminals, {} nonterminals, {} productions ({} binary, {} unary, {} epsilon)",
            self.n_terms,
            self.nt_names.len(),
            self.n_productions(),
            self.binary.len(),
            self.unary.len(),
            self.epsilon.len()
        )
    }

    /// A [`Display`](fmt::Display) of the productions naming terminals as in `g`
    /// (which must be the grammar this one was made from).
    pub fn display_with<'a>(&'a self, g: &'a Grammar) -> CfgDisplay<'a> {
        CfgDisplay {
            cfg: self,
            grammar: Some(g),
        }
    }
}

/// Displays a [`Cfg`] with the terminal names of its source grammar; made by
/// [`Cfg::display_with`].
pub struct CfgDisplay<'a> {
    cfg: &'a Cfg,
    grammar: Option<&'a Grammar>,
}

impl fmt::Display for CfgDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = self.cfg;
        let sym = |s: Sym| -> String {
            match s {
                Sym::T(t) => self
                    .grammar
                    .and_then(|g| g.terminals.get(t.0 as usize))
                    .map_or_else(|| format!("t{}", t.0), |t| t.name.clone()),
                Sym::N(n) => c
                    .nt_names
                    .get(n.0 as usize)
                    .cloned()
                    .unwrap_or_else(|| format!("n{}", n.0)),
            }
        };
        writeln!(f, "// {}", c.stats())?;
        writeln!(f, "// start: {}", sym(Sym::N(c.start)))?;
        let mut lines: Vec<(NtId, String)> = Vec::new();
        lines.extend(
            c.binary
                .iter()
                .map(|&(a, x, y)| (a, format!("{} {}", sym(x), sym(y)))),
        );
        lines.extend(c.unary.iter().map(|&(a, x)| (a, sym(x))));
        lines.extend(c.epsilon.iter().map(|&a| (a, "ε".to_string())));
        lines.sort_by_key(|l| l.0);
        for (a, rhs) in lines {
            writeln!(f, "{} -> {rhs}", sym(Sym::N(a)))?;
        }
        Ok(())
    }
}

impl fmt::Display for Cfg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        CfgDisplay {
            cfg: self,
            grammar: None,
        }
        .fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::ast::RuleId;

    /// Membership of `w` in the language of the surface grammar, by a
    /// fixpoint over spans of an `Expr` matcher.
    fn surface_accepts(g: &Grammar, w: &[u32]) -> bool {
        let n = w.len();
        let r = g.rules.len();
        // table[rule][i][j]
        let mut table = vec![vec![vec![false; n + 1]; n + 1]; r];
        loop {
            let mut changed = false;
            for (ri, rule) in g.rules.iter().enumerate() {
                for i in 0..=n {
                    for j in i..=n {
                        if !table[ri][i][j] && expr_match(&rule.expr, w, i, j, &table) {
                            table[ri][i][j] = true;
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
        table[g.start.0 as usize][0][n]
    }

    fn expr_match(e: &Expr, w: &[u32], i: usize, j: usize, t: &[Vec<Vec<bool>>]) -> bool {
        match e {
            Expr::Empty => i == j,
            Expr::Term(x) => j == i + 1 && w[i] == x.0,
            Expr::Rule(RuleId(r)) => t[*r as usize][i][j],
            Expr::Seq(v) => seq_match(v, w, i, j, t),
            Expr::Alt(v) => v.iter().any(|x| expr_match(x, w, i, j, t)),
            Expr::Opt(x) => i == j || expr_match(x, w, i, j, t),
            Expr::Star(x) => {
                i == j
                    || (i + 1..=j).any(|k| expr_match(x, w, i, k, t) && expr_match(e, w, k, j, t))
            }
            Expr::Plus(x) => {
                (i..=j).any(|k| expr_match(x, w, i, k, t) && (k == j || star(x, w, k, j, t)))
            }
        }
    }

    fn star(x: &Expr, w: &[u32], i: usize, j: usize, t: &[Vec<Vec<bool>>]) -> bool {
        i == j || (i + 1..=j).any(|k| expr_match(x, w, i, k, t) && star(x, w, k, j, t))
    }

    fn seq_match(v: &[Expr], w: &[u32], i: usize, j: usize, t: &[Vec<Vec<bool>>]) -> bool {
        match v.split_first() {
            None => i == j,
            Some((x, rest)) => {
                (i..=j).any(|k| expr_match(x, w, i, k, t) && seq_match(rest, w, k, j, t))
            }
        }
    }

    /// Membership of `w` in the language of the normal form (CYK with ε and
    /// unit productions closed by fixpoint within each span).
    fn cfg_accepts(c: &Cfg, w: &[u32]) -> bool {
        let n = w.len();
        let m = c.nt_names.len();
        let mut t = vec![vec![vec![false; m]; n + 1]; n + 1];
        let has = |t: &Vec<Vec<Vec<bool>>>, s: Sym, i: usize, j: usize| match s {
            Sym::T(x) => j == i + 1 && w[i] == x.0,
            Sym::N(a) => t[i][j][a.0 as usize],
        };
        for len in 0..=n {
            for i in 0..=n - len {
                let j = i + len;
                loop {
                    let mut changed = false;
                    let mut set = |t: &mut Vec<Vec<Vec<bool>>>, a: NtId| {
                        if !t[i][j][a.0 as usize] {
                            t[i][j][a.0 as usize] = true;
                            changed = true;
                        }
                    };
                    if len == 0 {
                        for &a in &c.epsilon {
                            set(&mut t, a);
                        }
                    }
                    for &(a, x) in &c.unary {
                        if has(&t, x, i, j) {
                            set(&mut t, a);
                        }
                    }
                    for &(a, x, y) in &c.binary {
                        if (i..=j).any(|k| has(&t, x, i, k) && has(&t, y, k, j)) {
                            set(&mut t, a);
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
        }
        t[0][n][c.start.0 as usize]
    }

    const GRAMMARS: &[&str] = &[
        // Balanced brackets.
        "start: \"(\" start \")\" start |\n",
        // Arithmetic with precedence.
        "start: expr\nexpr: expr \"+\" term | term\nterm: term \"*\" factor | factor\nfactor: \"(\" expr \")\" | \"n\"\n",
        // Lists with separators.
        "start: \"[\" [item (\",\" item)*] \"]\"\nitem: \"a\" | \"b\" | start\n",
        // Optional / star / plus combinations.
        "start: \"a\"? \"b\"* (\"a\" \"b\")+ [\"c\"] (\"a\" | \"c\")*\n",
        // Nullable rules.
        "start: x y x\nx: \"a\"?\ny: x x | \"b\" y |\n",
        // Useless rules.
        "start: \"a\" start | \"b\" | dead \"a\"\ndead: \"c\" dead\nunreach: \"d\" start\n",
        // Bounded repetition.
        "start: \"a\" ~ 2..4 \"b\"? (\"c\" \"a\") ~ 1\n",
        // Common prefixes (left factoring).
        "start: \"a\" \"b\" \"c\" | \"a\" \"b\" \"d\" | \"a\" | \"a\" \"b\" | \"b\" \"a\"\n",
        // Repeated pairs (2-gram sharing).
        "start: \"a\" \"b\" \"c\" \"a\" \"b\" | \"c\" \"a\" \"b\" \"a\" \"b\" \"a\" | \"a\" \"a\" \"a\" \"a\"\n",
        // Unit chains and mutual recursion.
        "start: a\na: b | \"x\"\nb: a \"y\" | c\nc: a | \"z\" c \"z\"\n",
        // Even palindromes and single-use rules.
        "start: \"a\" start \"a\" | \"b\" start \"b\" | mid\nmid: once\nonce: \"c\" \"c\" |\n",
    ];

    fn words(k: u32, max_len: usize) -> Vec<Vec<u32>> {
        let mut out = vec![vec![]];
        let mut last = vec![vec![]];
        for _ in 0..max_len {
            let mut next = Vec::new();
            for w in &last {
                for t in 0..k {
                    let mut v: Vec<u32> = w.clone();
                    v.push(t);
                    next.push(v);
                }
            }
            out.extend(next.iter().cloned());
            last = next;
        }
        out
    }

    #[test]
    fn normalization_preserves_the_language() {
        for src in GRAMMARS {
            let g = Grammar::from_lark(src, None).unwrap();
            let c = Cfg::from_grammar(&g).unwrap();
            let k = g.terminals.len() as u32;
            let max_len = if k <= 3 { 6 } else { 5 };
            let mut accepted = 0;
            for w in words(k, max_len) {
                let a = surface_accepts(&g, &w);
                assert_eq!(
                    a,
                    cfg_accepts(&c, &w),
                    "{src}\nword {w:?}\n{}",
                    c.display_with(&g)
                );
                accepted += a as usize;
            }
            assert!(accepted > 0, "{src}");
        }
    }

    #[test]
    fn deterministic() {
        for src in GRAMMARS
            .iter()
            .chain([&include_str!("../../grammars/json.ebnf")])
        {
            let g = Grammar::from_lark(src, None).unwrap();
            let a = Cfg::from_grammar(&g).unwrap();
            let b = Cfg::from_grammar(&g.clone()).unwrap();
            assert_eq!(a, b);
            assert_eq!(a.to_string(), b.to_string());
        }
    }

    #[test]
    fn empty_language() {
        for src in [
            "start: start \"a\"\n",
            "start: a\na: \"x\" a\n",
            "start: a b\na: \"x\"\nb: b\n",
        ] {
            let g = Grammar::from_lark(src, None).unwrap();
            let e = Cfg::from_grammar(&g).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::Grammar);
            assert!(e.message().contains("language is empty"), "{e}");
        }
    }

    #[test]
    fn json_is_small() {
        let g = Grammar::from_lark(include_str!("../../grammars/json.ebnf"), None).unwrap();
        let c = Cfg::from_grammar(&g).unwrap();
        let total = c.binary.len() + c.unary.len() + c.epsilon.len();
        assert!(total <= 30, "{}", c.display_with(&g));
        assert_eq!(c.n_terms, g.terminals.len());
        assert!(c.to_string().contains("start"));
    }

    #[test]
    fn shared_pairs() {
        let g = Grammar::from_lark(
            "start: \"a\" \"b\" \"c\" | \"d\" \"a\" \"b\" \"c\" | \"c\" \"a\" \"b\" \"d\"\n",
            None,
        )
        .unwrap();
        let c = Cfg::from_grammar(&g).unwrap();
        let ab: Vec<_> = c
            .binary
            .iter()
            .filter(|&&(_, x, y)| x == Sym::T(TermId(0)) && y == Sym::T(TermId(1)))
            .collect();
        assert_eq!(ab.len(), 1, "{}", c.display_with(&g));
    }

    #[test]
    fn deep_expr_is_an_error() {
        let mut e = Expr::Term(TermId(0));
        for _ in 0..100_000 {
            e = Expr::Opt(Box::new(e));
        }
        let g = Grammar {
            terminals: vec![crate::grammar::Terminal {
                name: "A".into(),
                pattern: "a".into(),
            }],
            rules: vec![crate::grammar::Rule {
                name: "start".into(),
                expr: e,
            }],
            ignore: vec![],
            start: RuleId(0),
        };
        let r = Cfg::from_grammar(&g);
        assert!(r.unwrap_err().message().contains("too deeply"));
        // Drop the deep tree without recursion blowing the stack.
        let mut g = g;
        let mut e = std::mem::replace(&mut g.rules[0].expr, Expr::Empty);
        while let Expr::Opt(x) = e {
            e = *x;
        }
    }

    #[test]
    fn large_grammar_is_fast() {
        let n = 600;
        let mut src = String::from("start: r0\n");
        for k in 0..n {
            let (a, b, c) = ((k + 1) % n, (k + 7) % n, (k * 13 + 5) % n);
            src.push_str(&format!(
                "r{k}: \"k{k}\" r{a} (\",\" r{b})* \";\" | \"(\" [r{c} \"=\"] r{a} \")\" \"k{k}\" | T{}\n",
                k % 10
            ));
        }
        for t in 0..10 {
            src.push_str(&format!("T{t}: /t{t}[a-z]*/\n"));
        }
        let g = Grammar::from_lark(&src, None).unwrap();
        let t = std::time::Instant::now();
        let c = Cfg::from_grammar(&g).unwrap();
        let el = t.elapsed();
        println!("{n} rules: {} in {el:?}", c.stats());
        assert!(el < std::time::Duration::from_millis(500), "{el:?}");
        assert_eq!(c, Cfg::from_grammar(&g).unwrap());
    }

    #[test]
    fn public_grammars_normalize_quickly() {
        let Some(dir) = crate::test_shared::dir(
            "grammars-public/lark-syncode",
            "public_grammars_normalize_quickly",
        ) else {
            return;
        };
        let rd = std::fs::read_dir(&dir).unwrap();
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "lark"))
        {
            let Ok(g) = Grammar::from_lark(&std::fs::read_to_string(p).unwrap(), None) else {
                continue;
            };
            let t = std::time::Instant::now();
            let c = Cfg::from_grammar(&g).unwrap();
            println!("{}: {} in {:?}", p.display(), c.stats(), t.elapsed());
            assert_eq!(c, Cfg::from_grammar(&g).unwrap());
        }
    }
}

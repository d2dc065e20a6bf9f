//! The surface grammar: terminals as regular expressions, rules as expression trees.

/// Index of a terminal in [`Grammar::terminals`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TermId(pub u32);

/// Index of a rule in [`Grammar::rules`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RuleId(pub u32);

/// A terminal: a named (or anonymous literal) regular language of lexemes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Terminal {
    /// Display name: the Lark name (`NUMBER`) or the quoted literal (`"{"`).
    pub name: String,
    /// The fully resolved pattern, in `regex-syntax` syntax, matched against a
    /// whole lexeme (anchored at both ends by the user of this field).
    pub pattern: String,
}

/// A rule: a nonterminal and its right-hand side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The rule's name as written.
    pub name: String,
    /// The right-hand side.
    pub expr: Expr,
}

/// A right-hand side expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// The empty word.
    Empty,
    /// One terminal.
    Term(TermId),
    /// One rule (nonterminal).
    Rule(RuleId),
    /// Concatenation.
    Seq(Vec<Expr>),
    /// Alternation.
    Alt(Vec<Expr>),
    /// Zero or one.
    Opt(Box<Expr>),
    /// Zero or more.
    Star(Box<Expr>),
    /// One or more.
    Plus(Box<Expr>),
}

/// A context-free grammar whose terminals are regular expressions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grammar {
    /// Every terminal, in a deterministic order (order of first definition/use).
    pub terminals: Vec<Terminal>,
    /// Every rule, in order of definition.
    pub rules: Vec<Rule>,
    /// Terminals skipped between lexemes (`%ignore`).
    pub ignore: Vec<TermId>,
    /// The start rule.
    pub start: RuleId,
}

/// Deepest expression nesting printed by [`Grammar`]'s `Display`; deeper
/// subtrees are shown as `...`.
const MAX_DISPLAY_DEPTH: usize = 200;

impl Grammar {
    /// Names of `%ignore`d terminals that a rule also names. As in Lark, an
    /// ignored terminal is always dropped from the token stream, so such a
    /// rule can never see it (cdiff's engine and recognizer agree on that);
    /// the CLI warns about each.
    pub fn ignored_but_used(&self) -> Vec<&str> {
        fn visit(e: &Expr, out: &mut Vec<TermId>) {
            match e {
                Expr::Term(t) => out.push(*t),
                Expr::Seq(v) | Expr::Alt(v) => v.iter().for_each(|x| visit(x, out)),
                Expr::Opt(x) | Expr::Star(x) | Expr::Plus(x) => visit(x, out),
                Expr::Empty | Expr::Rule(_) => {}
            }
        }
        let mut used = Vec::new();
        for r in &self.rules {
            visit(&r.expr, &mut used);
        }
        let mut names: Vec<&str> = self
            .ignore
            .iter()
            .filter(|t| used.contains(t))
            .filter_map(|t| self.terminals.get(t.0 as usize).map(|x| x.name.as_str()))
            .collect();
        names.dedup();
        names
    }

    fn fmt_expr(
        &self,
        e: &Expr,
        f: &mut std::fmt::Formatter<'_>,
        depth: usize,
        top: bool,
    ) -> std::fmt::Result {
        if depth > MAX_DISPLAY_DEPTH {
            return write!(f, "...");
        }
        let atom = |g: &Grammar, x: &Expr, f: &mut std::fmt::Formatter<'_>| -> std::fmt::Result {
            if matches!(x, Expr::Seq(v) | Expr::Alt(v) if v.len() > 1) {
                write!(f, "(")?;
                g.fmt_expr(x, f, depth + 1, false)?;
                write!(f, ")")
            } else {
                g.fmt_expr(x, f, depth + 1, false)
            }
        };
        match e {
            Expr::Empty => write!(f, "()"),
            Expr::Term(t) => match self.terminals.get(t.0 as usize) {
                Some(t) => write!(f, "{}", t.name),
                None => write!(f, "<terminal {}>", t.0),
            },
            Expr::Rule(r) => match self.rules.get(r.0 as usize) {
                Some(r) => write!(f, "{}", r.name),
                None => write!(f, "<rule {}>", r.0),
            },
            Expr::Seq(v) => {
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, " ")?;
                    }
                    if matches!(x, Expr::Alt(a) if a.len() > 1) {
                        atom(self, x, f)?;
                    } else {
                        self.fmt_expr(x, f, depth + 1, false)?;
                    }
                }
                Ok(())
            }
            Expr::Alt(v) => {
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, "{}", if top { "\n    | " } else { " | " })?;
                    }
                    if matches!(x, Expr::Empty) {
                        continue;
                    }
                    self.fmt_expr(x, f, depth + 1, false)?;
                }
                Ok(())
            }
            Expr::Opt(x) => {
                write!(f, "[")?;
                self.fmt_expr(x, f, depth + 1, false)?;
                write!(f, "]")
            }
            Expr::Star(x) => {
                atom(self, x, f)?;
                write!(f, "*")
            }
            Expr::Plus(x) => {
                atom(self, x, f)?;
                write!(f, "+")
            }
        }
    }
}

/// Prints the grammar in the Lark dialect: rules (the start rule marked by a
/// comment), then named terminals as `/regex/`, then `%ignore` directives.
/// Anonymous terminals appear inline by their literal text.
impl std::fmt::Display for Grammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.rules.iter().enumerate() {
            if i == self.start.0 as usize {
                writeln!(f, "// start rule")?;
            }
            write!(f, "{}: ", r.name)?;
            if r.expr != Expr::Empty {
                self.fmt_expr(&r.expr, f, 0, true)?;
            }
            writeln!(f)?;
        }
        let anonymous = |n: &str| n.starts_with('"') || n.starts_with('/');
        for t in self.terminals.iter().filter(|t| !anonymous(&t.name)) {
            writeln!(f, "{}: /{}/", t.name, t.pattern.replace('/', "\\/"))?;
        }
        for t in &self.ignore {
            if let Some(t) = self.terminals.get(t.0 as usize) {
                if anonymous(&t.name) {
                    writeln!(f, "%ignore /{}/", t.pattern.replace('/', "\\/"))?;
                } else {
                    writeln!(f, "%ignore {}", t.name)?;
                }
            }
        }
        Ok(())
    }
}

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

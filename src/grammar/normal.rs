//! C2F+ε normal form: every production is `A → X Y`, `A → X` or `A → ε`,
//! where `X`, `Y` are symbols (terminals or nonterminals).

use super::ast::TermId;

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
    /// Number of terminals (same numbering as the source [`Grammar`](super::Grammar)).
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

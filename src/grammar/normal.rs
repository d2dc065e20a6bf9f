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

// TEMPORARY naive normaliser (replaced by the full one on merge).
use super::ast::{Expr, Grammar};
impl Cfg {
    /// Naive normalisation (temporary).
    pub fn from_grammar(g: &Grammar) -> crate::Result<Cfg> {
        let mut cfg = Cfg {
            n_terms: g.terminals.len(),
            nt_names: g.rules.iter().map(|r| r.name.clone()).collect(),
            start: NtId(g.start.0),
            binary: vec![],
            unary: vec![],
            epsilon: vec![],
        };
        fn fresh(cfg: &mut Cfg) -> NtId {
            cfg.nt_names.push(format!("_{}", cfg.nt_names.len()));
            NtId(cfg.nt_names.len() as u32 - 1)
        }
        fn sym(cfg: &mut Cfg, e: &Expr) -> Sym {
            match e {
                Expr::Term(t) => Sym::T(*t),
                Expr::Rule(r) => Sym::N(NtId(r.0)),
                _ => {
                    let n = fresh(cfg);
                    def(cfg, n, e);
                    Sym::N(n)
                }
            }
        }
        fn def(cfg: &mut Cfg, a: NtId, e: &Expr) {
            match e {
                Expr::Empty => cfg.epsilon.push(a),
                Expr::Term(_) | Expr::Rule(_) => {
                    let s = sym(cfg, e);
                    cfg.unary.push((a, s))
                }
                Expr::Alt(v) => v.iter().for_each(|x| def(cfg, a, x)),
                Expr::Seq(v) => {
                    if v.is_empty() {
                        cfg.epsilon.push(a);
                    } else if v.len() == 1 {
                        def(cfg, a, &v[0]);
                    } else {
                        let x = sym(cfg, &v[0]);
                        let rest = if v.len() == 2 {
                            sym(cfg, &v[1])
                        } else {
                            sym(cfg, &Expr::Seq(v[1..].to_vec()))
                        };
                        cfg.binary.push((a, x, rest));
                    }
                }
                Expr::Opt(x) => {
                    cfg.epsilon.push(a);
                    def(cfg, a, x);
                }
                Expr::Star(x) => {
                    cfg.epsilon.push(a);
                    let s = sym(cfg, x);
                    cfg.binary.push((a, s, Sym::N(a)));
                }
                Expr::Plus(x) => {
                    let s = sym(cfg, x);
                    cfg.unary.push((a, s));
                    cfg.binary.push((a, s, Sym::N(a)));
                }
            }
        }
        for (i, r) in g.rules.iter().enumerate() {
            def(&mut cfg, NtId(i as u32), &r.expr);
        }
        Ok(cfg)
    }
}

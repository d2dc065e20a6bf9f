//! `cdiff grammar`: shows the surface grammar, its normal form, the lexer
//! automaton size and the compile time.
//!
//! The library has no `Display` for grammars yet, so the printing is done here
//! from the public fields.

use std::io::{self, Write};
use std::time::Instant;

use cdiff::grammar::{Cfg, Expr, Grammar, NtId, Sym, TermId};

use super::args::GrammarArgs;
use super::{compile, config, load_grammar, micros, CliError};

/// Runs `cdiff grammar`.
pub fn run(a: &GrammarArgs) -> Result<(), CliError> {
    let t = Instant::now();
    let g = load_grammar(&a.file, a.start.as_deref())?;
    let parse_time = t.elapsed();
    let (c, compile_time) = compile(&a.file, &g, &config(None))?;
    let mut out = io::stdout().lock();
    write_grammar(&mut out, &g)
        .and_then(|()| write_normal_form(&mut out, &g, c.normal_form()))
        .and_then(|()| {
            writeln!(out, "lexer automaton: {} states", c.lexer().len())?;
            writeln!(
                out,
                "parsed in {:.3} ms, compiled in {:.3} ms",
                micros(parse_time) / 1000.0,
                micros(compile_time) / 1000.0
            )?;
            out.flush()
        })
        .map_err(CliError::Write)
}

fn term_name(g: &Grammar, t: TermId) -> String {
    g.terminals
        .get(t.0 as usize)
        .map_or_else(|| format!("<terminal {}>", t.0), |t| t.name.clone())
}

fn write_grammar(out: &mut impl Write, g: &Grammar) -> io::Result<()> {
    writeln!(out, "terminals ({}):", g.terminals.len())?;
    let width = g.terminals.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for (i, t) in g.terminals.iter().enumerate() {
        let ignored = g.ignore.iter().any(|x| x.0 as usize == i);
        let mark = if ignored { "  (ignored)" } else { "" };
        writeln!(out, "  {:width$}  /{}/{mark}", t.name, t.pattern)?;
    }
    let ignored: Vec<String> = g.ignore.iter().map(|&t| term_name(g, t)).collect();
    let ignored = if ignored.is_empty() {
        "(none)".to_string()
    } else {
        ignored.join(" ")
    };
    writeln!(out, "ignored: {ignored}")?;
    writeln!(out, "rules ({}):", g.rules.len())?;
    for (i, r) in g.rules.iter().enumerate() {
        let mark = if g.start.0 as usize == i {
            "  (start)"
        } else {
            ""
        };
        writeln!(out, "  {}: {}{mark}", r.name, expr(g, &r.expr, 0))?;
    }
    Ok(())
}

/// Writes `e` with the fewest parentheses; `ctx` is the binding strength of
/// the context: 0 top level, 1 inside a sequence, 2 under a postfix operator.
fn expr(g: &Grammar, e: &Expr, ctx: u8) -> String {
    let (s, strength) = match e {
        Expr::Empty => ("ε".to_string(), 3),
        Expr::Term(t) => (term_name(g, *t), 3),
        Expr::Rule(r) => (
            g.rules
                .get(r.0 as usize)
                .map_or_else(|| format!("<rule {}>", r.0), |r| r.name.clone()),
            3,
        ),
        Expr::Seq(v) if v.is_empty() => ("ε".to_string(), 3),
        Expr::Seq(v) => (
            v.iter()
                .map(|x| expr(g, x, 1))
                .collect::<Vec<_>>()
                .join(" "),
            1,
        ),
        Expr::Alt(v) if v.is_empty() => ("<nothing>".to_string(), 3),
        Expr::Alt(v) => (
            v.iter()
                .map(|x| expr(g, x, 0))
                .collect::<Vec<_>>()
                .join(" | "),
            0,
        ),
        Expr::Opt(x) => (format!("[{}]", expr(g, x, 0)), 3),
        Expr::Star(x) => (format!("{}*", expr(g, x, 2)), 2),
        Expr::Plus(x) => (format!("{}+", expr(g, x, 2)), 2),
    };
    let single = matches!(e, Expr::Seq(v) | Expr::Alt(v) if v.len() == 1);
    if strength < ctx && !single {
        format!("({s})")
    } else {
        s
    }
}

fn write_normal_form(out: &mut impl Write, g: &Grammar, cfg: &Cfg) -> io::Result<()> {
    let nt = |n: NtId| {
        cfg.nt_names
            .get(n.0 as usize)
            .map_or_else(|| format!("<nt {}>", n.0), |s| s.clone())
    };
    let sym = |s: Sym| match s {
        Sym::T(t) => term_name(g, t),
        Sym::N(n) => nt(n),
    };
    writeln!(
        out,
        "normal form: {} nonterminals, {} binary, {} unary, {} ε productions; start {}",
        cfg.nt_names.len(),
        cfg.binary.len(),
        cfg.unary.len(),
        cfg.epsilon.len(),
        nt(cfg.start)
    )?;
    // Productions grouped by left-hand side, in nonterminal order.
    let mut by_lhs: Vec<Vec<String>> = vec![Vec::new(); cfg.nt_names.len()];
    let mut stray = Vec::new();
    let mut add = |a: NtId, rhs: String| match by_lhs.get_mut(a.0 as usize) {
        Some(v) => v.push(rhs),
        None => stray.push(format!("{} -> {rhs}", nt(a))),
    };
    for &(a, x, y) in &cfg.binary {
        add(a, format!("{} {}", sym(x), sym(y)));
    }
    for &(a, x) in &cfg.unary {
        add(a, sym(x));
    }
    for &a in &cfg.epsilon {
        add(a, "ε".to_string());
    }
    for (i, rhs) in by_lhs.iter().enumerate() {
        for r in rhs {
            writeln!(out, "  {} -> {r}", nt(NtId(i as u32)))?;
        }
    }
    for s in stray {
        writeln!(out, "  {s}")?;
    }
    Ok(())
}

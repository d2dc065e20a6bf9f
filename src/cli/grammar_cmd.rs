//! `cdiff grammar`: the surface grammar (terminals with their patterns, then
//! the rules in the Lark dialect), the overlaps between terminals that the
//! lexer resolves, the C2F+ε normal form, the lexer automaton's size and the
//! compile time.

use std::io::{self, Write};
use std::time::Instant;

use cdiff::Grammar;

use super::args::GrammarArgs;
use super::{compile, config, load_grammar, micros, CliError};

/// Runs `cdiff grammar`.
pub fn run(a: &GrammarArgs) -> Result<(), CliError> {
    let t = Instant::now();
    let g = load_grammar(&a.file, a.start.as_deref())?;
    let parse_time = t.elapsed();
    let (c, compile_time) = compile(&a.file, &g, &config(None))?;
    let mut out = io::stdout().lock();
    write_terminals(&mut out, &g)
        .and_then(|()| writeln!(out, "\n// surface grammar\n{g}"))
        .and_then(|()| write_overlaps(&mut out, &g, &c.lexer().overlaps()))
        .and_then(|()| {
            writeln!(
                out,
                "\n// normal form (C2F+ε)\n{}",
                c.normal_form().display_with(&g)
            )
        })
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

fn write_terminals(out: &mut impl Write, g: &Grammar) -> io::Result<()> {
    writeln!(
        out,
        "// terminals ({}), as the lexer sees them",
        g.terminals.len()
    )?;
    let width = g.terminals.iter().map(|t| t.name.len()).max().unwrap_or(0);
    for (i, t) in g.terminals.iter().enumerate() {
        let ignored = g.ignore.iter().any(|x| x.0 as usize == i);
        let mark = if ignored { "  (ignored)" } else { "" };
        writeln!(out, "//   {:width$}  /{}/{mark}", t.name, t.pattern)?;
    }
    Ok(())
}

/// Overlapping terminals: a lexeme matching both may stand for either.
fn write_overlaps(
    out: &mut impl Write,
    g: &Grammar,
    overlaps: &[(u32, u32, bool)],
) -> io::Result<()> {
    let name = |t: u32| g.terminals.get(t as usize).map_or("?", |t| t.name.as_str());
    writeln!(
        out,
        "// overlapping terminals resolved by the lexer ({}):",
        overlaps.len()
    )?;
    for &(a, b, subset) in overlaps {
        if subset {
            writeln!(
                out,
                "//   {} ⊆ {}: every {} lexeme may also be a {} ({} → {} | {})",
                name(a),
                name(b),
                name(a),
                name(b),
                name(b),
                name(b),
                name(a)
            )?;
        } else {
            writeln!(
                out,
                "//   {} ∩ {}: a lexeme in both may be either",
                name(a),
                name(b)
            )?;
        }
    }
    Ok(())
}

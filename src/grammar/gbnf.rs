//! A parser for grammars written in llama.cpp's GBNF (`.gbnf` files).
//!
//! # Supported dialect
//!
//! * Rules `name ::= alternatives`; names are made of ASCII letters, digits,
//!   `-` and `_`. A rule may span several lines: it ends where the next
//!   `name ::=` starts (newlines are plain whitespace). `#` starts a comment
//!   that runs to the end of the line.
//! * String literals `"..."` with the escapes `\n`, `\t`, `\r`, `\\`, `\"`,
//!   `\xHH`, `\uHHHH`, `\UHHHHHHHH` (and `\[`, `\]`, `\-`, `\^`, `\/`, `\'`
//!   standing for themselves); character classes `[a-z0-9_]`, negated
//!   `[^"\\]`, with the same escapes; `.` (any character).
//! * Grouping `( ... )`, alternation `|` (empty alternatives included),
//!   postfix `*`, `+`, `?`, `{m}`, `{m,}`, `{m,n}`, rule references.
//! * The start rule is `root` unless another is named.
//!
//! Not supported (clear errors): llama.cpp's token references `<[id]>` and
//! `<token>`, and negated token references `!`.
//!
//! # Mapping to cdiff's model
//!
//! GBNF has no lexer: its language is a set of character strings. cdiff's
//! terminals are matched by an exact maximal-munch lexer, so a multi-character
//! terminal would change the language (with terminals `"ab"` and `"a"`, the
//! text `ab` could no longer be read as `"a"` followed by a `b` from elsewhere).
//! The loader therefore makes **every terminal exactly one character**: string
//! literals are split into their characters, each character class (and `.`)
//! is one terminal, and identical character sets share one terminal. All
//! lexemes then have length one (a multi-byte UTF-8 character is one lexeme,
//! and UTF-8 is prefix-free), so maximal munch cuts the text into single
//! characters and the grammar's language is exactly the GBNF language. A
//! character that matches several terminals (`a` in `"a"` and `[a-z]`) is a
//! lexeme that may stand for any of them. There are no ignored terminals.
//!
//! The price is one token per character: the context-free part sees texts as
//! long as they are, which is slower than a grammar with a real lexer. Measured
//! (`cdiff bench --docs` on 30 JSON objects of mean 336 bytes, 300 cases with
//! 1–3 holes, 2 shared cores): llama.cpp's `json.gbnf` `check` median 25 ms,
//! p99 1.6 s, max 4.1 s, against 1.0 ms / 17 ms / 22 ms for
//! `grammars/json.ebnf`. Compile times of llama.cpp's examples: 0.2–1.3 ms.

use std::collections::HashMap;

use super::ast::{Expr, Grammar, Rule, RuleId, TermId, Terminal};
use super::lark::{expr_size, quote, MAX_NESTING, MAX_REPEAT, MAX_RULE_SIZE};
use crate::error::{Error, ErrorKind, Result};

/// The largest Unicode scalar value.
const MAX_CHAR: u32 = 0x10FFFF;

impl Grammar {
    /// Parses a grammar written in llama.cpp's GBNF (see [`crate::grammar::gbnf`]).
    /// The start rule is `root` unless `start` names another rule.
    ///
    /// ```
    /// use cdiff::grammar::Grammar;
    /// let g = Grammar::from_gbnf("root ::= \"ab\" [0-9]+\n", None).unwrap();
    /// // "a", "b" and [0-9]: every terminal is one character.
    /// assert_eq!(g.terminals.len(), 3);
    /// ```
    pub fn from_gbnf(src: &str, start: Option<&str>) -> Result<Grammar> {
        parse(src, start)
    }

    /// Parses a grammar file's text with the loader its name calls for:
    /// GBNF for a name ending in `.gbnf`, the Lark dialect otherwise (`.lark`,
    /// `.ebnf`, ...). `start` overrides the default start rule (`root` for
    /// GBNF, `start` for Lark).
    ///
    /// ```
    /// use cdiff::grammar::Grammar;
    /// let g = Grammar::from_file_text("x.gbnf", "root ::= \"a\"\n", None).unwrap();
    /// assert_eq!(g.rules[g.start.0 as usize].name, "root");
    /// let g = Grammar::from_file_text("x.lark", "start: \"a\"\n", None).unwrap();
    /// assert_eq!(g.rules[g.start.0 as usize].name, "start");
    /// ```
    pub fn from_file_text(file_name: &str, src: &str, start: Option<&str>) -> Result<Grammar> {
        let is_gbnf = std::path::Path::new(file_name)
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gbnf"));
        if is_gbnf {
            Grammar::from_gbnf(src, start)
        } else {
            Grammar::from_lark(src, start)
        }
    }
}

// ---------------------------------------------------------------------------
// Lexer

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pos {
    line: usize,
    col: usize,
}

impl Pos {
    fn err(self, msg: impl Into<String>) -> Error {
        Error::grammar_at(self.line, self.col, msg)
    }
}

/// A set of characters as sorted, disjoint, non-adjacent inclusive ranges.
type CharSet = Vec<(u32, u32)>;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    /// `::=`
    Def,
    Str(Vec<char>),
    /// A class (or `.`): its set and its text as written.
    Class(CharSet, String),
    Punct(char),
    /// `{m}`, `{m,}`, `{m,n}`.
    Rep(u64, Option<u64>),
    Eof,
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("name '{n}'"),
        Tok::Def => "'::='".to_string(),
        Tok::Str(s, ..) => format!("string {:?}", s.iter().collect::<String>()),
        Tok::Class(_, text) => format!("character class {text}"),
        Tok::Punct(c) => format!("'{c}'"),
        Tok::Rep(..) => "a repetition '{...}'".to_string(),
        Tok::Eof => "end of file".to_string(),
    }
}

fn normalize(mut v: CharSet) -> CharSet {
    v.sort_unstable();
    let mut out: CharSet = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn complement(v: &CharSet) -> CharSet {
    let mut out = Vec::new();
    let mut next = 0u32;
    for &(a, b) in v {
        if a > next {
            out.push((next, a - 1));
        }
        next = b.saturating_add(1);
    }
    if next <= MAX_CHAR {
        out.push((next, MAX_CHAR));
    }
    out
}

struct Lexer {
    chars: Vec<char>,
    i: usize,
    line: usize,
    col: usize,
}

impl Lexer {
    fn at(&self, k: usize) -> Option<char> {
        self.chars.get(k).copied()
    }
    fn pos(&self) -> Pos {
        Pos {
            line: self.line,
            col: self.col,
        }
    }
    fn advance(&mut self) -> Option<char> {
        let c = self.at(self.i)?;
        self.i += 1;
        if c == '\n' {
            self.line += 1;
            self.col = 1;
        } else {
            self.col += 1;
        }
        Some(c)
    }

    /// One possibly escaped character inside a string or class (the opening
    /// quote or bracket already consumed). `what` names the construct.
    fn char_in(&mut self, what: &str, open: Pos) -> Result<char> {
        let here = self.pos();
        match self.advance() {
            None | Some('\n') => Err(open.err(format!("unterminated {what}"))),
            Some('\\') => {
                let e = self
                    .advance()
                    .ok_or_else(|| open.err(format!("unterminated {what}")))?;
                let mut hex = |n: usize| -> Result<char> {
                    let mut v: u32 = 0;
                    for _ in 0..n {
                        let d = self
                            .at(self.i)
                            .and_then(|c| c.to_digit(16))
                            .ok_or_else(|| {
                                here.err(format!("bad escape: expected {n} hex digits"))
                            })?;
                        v = v * 16 + d;
                        self.advance();
                    }
                    char::from_u32(v).ok_or_else(|| {
                        here.err(format!("bad escape: U+{v:X} is not a Unicode scalar value"))
                    })
                };
                Ok(match e {
                    'n' => '\n',
                    't' => '\t',
                    'r' => '\r',
                    'f' => '\u{c}',
                    'v' => '\u{b}',
                    '0' => '\0',
                    'x' => hex(2)?,
                    'u' => hex(4)?,
                    'U' => hex(8)?,
                    c if c.is_ascii_alphanumeric() || c == '\n' => {
                        return Err(here.err(format!("unknown escape '\\{c}'")))
                    }
                    c => c,
                })
            }
            Some(c) => Ok(c),
        }
    }

    fn class(&mut self, open: Pos) -> Result<Tok> {
        let start = self.i;
        self.advance(); // '['
        let negated = self.at(self.i) == Some('^');
        if negated {
            self.advance();
        }
        let mut set = Vec::new();
        loop {
            match self.at(self.i) {
                Some(']') => {
                    self.advance();
                    break;
                }
                None | Some('\n') => return Err(open.err("unterminated character class")),
                _ => {}
            }
            let a = self.char_in("character class", open)?;
            let b = if self.at(self.i) == Some('-') && self.at(self.i + 1).is_some_and(|c| c != ']')
            {
                self.advance();
                let b = self.char_in("character class", open)?;
                if b < a {
                    return Err(open.err(format!("empty range {a:?}-{b:?} in a character class")));
                }
                b
            } else {
                a
            };
            set.push((a as u32, b as u32));
        }
        let text: String = self
            .chars
            .get(start..self.i)
            .unwrap_or(&[])
            .iter()
            .collect();
        let mut set = normalize(set);
        if negated {
            set = complement(&set);
        }
        // Surrogates are no characters.
        set = set
            .into_iter()
            .flat_map(|(a, b)| {
                let lo = (a, b.min(0xD7FF));
                let hi = (a.max(0xE000), b);
                [lo, hi].into_iter().filter(|(x, y)| x <= y)
            })
            .collect();
        if set.is_empty() {
            return Err(open.err(format!("character class {text} matches no character")));
        }
        Ok(Tok::Class(set, text))
    }

    fn repetition(&mut self, open: Pos) -> Result<Tok> {
        self.advance(); // '{'
        let num = |lx: &mut Lexer| -> Option<u64> {
            while lx.at(lx.i) == Some(' ') {
                lx.advance();
            }
            let mut v: Option<u64> = None;
            while let Some(d) = lx.at(lx.i).and_then(|c| c.to_digit(10)) {
                v = Some(v.unwrap_or(0).saturating_mul(10).saturating_add(d as u64));
                lx.advance();
            }
            while lx.at(lx.i) == Some(' ') {
                lx.advance();
            }
            v
        };
        let bad = || open.err("bad repetition: expected {m}, {m,} or {m,n}");
        let m = num(self).ok_or_else(bad)?;
        let n = if self.at(self.i) == Some(',') {
            self.advance();
            num(self)
        } else {
            Some(m)
        };
        if self.advance() != Some('}') {
            return Err(bad());
        }
        if let Some(n) = n {
            if m > n {
                return Err(open.err(format!("bad repetition {{{m},{n}}}: {m} > {n}")));
            }
        }
        if m.max(n.unwrap_or(0)) > MAX_REPEAT {
            return Err(open.err(format!("repetition count too large (at most {MAX_REPEAT})")));
        }
        Ok(Tok::Rep(m, n))
    }
}

fn lex(src: &str) -> Result<Vec<(Tok, Pos)>> {
    let mut lx = Lexer {
        chars: src.chars().collect(),
        i: 0,
        line: 1,
        col: 1,
    };
    let mut out = Vec::new();
    while let Some(c) = lx.at(lx.i) {
        let pos = lx.pos();
        match c {
            ' ' | '\t' | '\r' | '\n' | '\u{c}' => {
                lx.advance();
            }
            '#' => {
                while lx.at(lx.i).is_some_and(|c| c != '\n') {
                    lx.advance();
                }
            }
            ':' => {
                if lx.at(lx.i + 1) == Some(':') && lx.at(lx.i + 2) == Some('=') {
                    lx.advance();
                    lx.advance();
                    lx.advance();
                    out.push((Tok::Def, pos));
                } else {
                    return Err(pos.err("expected '::='"));
                }
            }
            '"' => {
                lx.advance();
                let mut s = Vec::new();
                loop {
                    if lx.at(lx.i) == Some('"') {
                        lx.advance();
                        break;
                    }
                    s.push(lx.char_in("string", pos)?);
                }
                out.push((Tok::Str(s), pos));
            }
            '[' => {
                let t = lx.class(pos)?;
                out.push((t, pos));
            }
            '.' => {
                lx.advance();
                out.push((
                    Tok::Class(vec![(0, 0xD7FF), (0xE000, MAX_CHAR)], ".".into()),
                    pos,
                ));
            }
            '{' => {
                let t = lx.repetition(pos)?;
                out.push((t, pos));
            }
            '|' | '(' | ')' | '*' | '+' | '?' => {
                lx.advance();
                out.push((Tok::Punct(c), pos));
            }
            '<' | '!' => {
                return Err(pos.err(format!("token references ('{c}...') are not supported")))
            }
            c if c.is_ascii_alphanumeric() || c == '-' || c == '_' => {
                let mut name = String::new();
                while let Some(c) = lx
                    .at(lx.i)
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                {
                    name.push(c);
                    lx.advance();
                }
                out.push((Tok::Name(name), pos));
            }
            c => return Err(pos.err(format!("unexpected character {c:?}"))),
        }
    }
    out.push((Tok::Eof, lx.pos()));
    Ok(out)
}

// ---------------------------------------------------------------------------
// Parser

/// A parsed expression: rule references are still names.
#[derive(Clone, Debug)]
enum GExpr {
    Empty,
    Name(String, Pos),
    /// One character set (a literal character is a singleton set).
    Chars(CharSet, String),
    Seq(Vec<GExpr>),
    Alt(Vec<GExpr>),
    Opt(Box<GExpr>),
    Star(Box<GExpr>),
    Plus(Box<GExpr>),
    Repeat(Box<GExpr>, u64, Option<u64>, Pos),
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::Eof, |t| &t.0)
    }
    fn peek2(&self) -> &Tok {
        self.toks.get(self.pos + 1).map_or(&Tok::Eof, |t| &t.0)
    }
    fn here(&self) -> Pos {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(Pos { line: 1, col: 1 }, |t| t.1)
    }
    fn expected(&self, what: &str) -> Error {
        self.here()
            .err(format!("expected {what}, found {}", describe(self.peek())))
    }

    fn rules(&mut self) -> Result<Vec<(String, Pos, GExpr)>> {
        let mut out = Vec::new();
        while *self.peek() != Tok::Eof {
            let pos = self.here();
            let Tok::Name(name) = self.peek().clone() else {
                return Err(self.expected("a rule name"));
            };
            self.pos += 1;
            if *self.peek() != Tok::Def {
                return Err(self.expected(&format!("'::=' after rule name '{name}'")));
            }
            self.pos += 1;
            let body = self.alternates()?;
            match self.peek() {
                Tok::Eof | Tok::Name(_) => {}
                _ => return Err(self.expected("a new rule 'name ::='")),
            }
            out.push((name, pos, body));
        }
        Ok(out)
    }

    fn alternates(&mut self) -> Result<GExpr> {
        let mut alts = vec![self.sequence()?];
        while *self.peek() == Tok::Punct('|') {
            self.pos += 1;
            alts.push(self.sequence()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(GExpr::Empty)
        } else {
            GExpr::Alt(alts)
        })
    }

    fn sequence(&mut self) -> Result<GExpr> {
        let mut items = Vec::new();
        loop {
            match self.peek() {
                // `name ::=` starts the next rule.
                Tok::Name(_) if *self.peek2() == Tok::Def => break,
                Tok::Name(_) | Tok::Str(..) | Tok::Class(..) | Tok::Punct('(') => {
                    items.push(self.postfix()?)
                }
                Tok::Punct('*') | Tok::Punct('+') | Tok::Punct('?') | Tok::Rep(..) => {
                    return Err(self.expected("an expression before the postfix operator"))
                }
                _ => break,
            }
        }
        Ok(match items.len() {
            0 => GExpr::Empty,
            1 => items.pop().unwrap_or(GExpr::Empty),
            _ => GExpr::Seq(items),
        })
    }

    fn postfix(&mut self) -> Result<GExpr> {
        let mut e = self.atom()?;
        let mut ops = 0;
        loop {
            let pos = self.here();
            e = match self.peek() {
                Tok::Punct('*') => GExpr::Star(Box::new(e)),
                Tok::Punct('+') => GExpr::Plus(Box::new(e)),
                Tok::Punct('?') => GExpr::Opt(Box::new(e)),
                Tok::Rep(m, n) => GExpr::Repeat(Box::new(e), *m, *n, pos),
                _ => return Ok(e),
            };
            self.pos += 1;
            ops += 1;
            if ops > MAX_NESTING {
                return Err(pos.err(format!(
                    "too many postfix operators (more than {MAX_NESTING})"
                )));
            }
        }
    }

    fn atom(&mut self) -> Result<GExpr> {
        let (t, pos) = self
            .toks
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::Eof, self.here()));
        self.pos += 1;
        match t {
            Tok::Name(n) => Ok(GExpr::Name(n, pos)),
            Tok::Str(s) => {
                let mut v: Vec<GExpr> = s
                    .iter()
                    .map(|&c| GExpr::Chars(vec![(c as u32, c as u32)], quote(&c.to_string())))
                    .collect();
                Ok(match v.len() {
                    0 => GExpr::Empty,
                    1 => v.pop().unwrap_or(GExpr::Empty),
                    _ => GExpr::Seq(v),
                })
            }
            Tok::Class(set, text) => Ok(GExpr::Chars(set, text)),
            Tok::Punct('(') => {
                self.depth += 1;
                if self.depth > MAX_NESTING {
                    return Err(pos.err(format!(
                        "parentheses nested too deeply (more than {MAX_NESTING})"
                    )));
                }
                let e = self.alternates()?;
                self.depth -= 1;
                if *self.peek() != Tok::Punct(')') {
                    return Err(
                        self.expected(&format!("')' to close '(' at {}:{}", pos.line, pos.col))
                    );
                }
                self.pos += 1;
                Ok(e)
            }
            _ => {
                self.pos -= 1;
                Err(self.expected("an expression"))
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Resolution

/// The pattern of a character set: a `regex-syntax` class of `\x{..}` ranges.
fn set_pattern(set: &CharSet) -> String {
    let mut p = String::from("[");
    for &(a, b) in set {
        if a == b {
            p.push_str(&format!("\\x{{{a:X}}}"));
        } else {
            p.push_str(&format!("\\x{{{a:X}}}-\\x{{{b:X}}}"));
        }
    }
    p.push(']');
    p
}

struct Resolver {
    rule_ids: HashMap<String, RuleId>,
    terminals: Vec<Terminal>,
    term_ids: HashMap<CharSet, TermId>,
}

impl Resolver {
    fn expr(&mut self, e: &GExpr) -> Result<Expr> {
        Ok(match e {
            GExpr::Empty => Expr::Empty,
            GExpr::Name(n, pos) => match self.rule_ids.get(n) {
                Some(&id) => Expr::Rule(id),
                None => return Err(pos.err(format!("unknown rule '{n}'"))),
            },
            GExpr::Chars(set, text) => {
                if let Some(&id) = self.term_ids.get(set) {
                    return Ok(Expr::Term(id));
                }
                let id = TermId(self.terminals.len() as u32);
                let name = if text.starts_with('"') {
                    text.clone()
                } else {
                    format!("/{text}/")
                };
                self.terminals.push(Terminal {
                    name,
                    pattern: set_pattern(set),
                });
                self.term_ids.insert(set.clone(), id);
                Expr::Term(id)
            }
            GExpr::Seq(v) => Expr::Seq(v.iter().map(|x| self.expr(x)).collect::<Result<_>>()?),
            GExpr::Alt(v) => Expr::Alt(v.iter().map(|x| self.expr(x)).collect::<Result<_>>()?),
            GExpr::Opt(x) => Expr::Opt(Box::new(self.expr(x)?)),
            GExpr::Star(x) => Expr::Star(Box::new(self.expr(x)?)),
            GExpr::Plus(x) => Expr::Plus(Box::new(self.expr(x)?)),
            GExpr::Repeat(x, m, n, pos) => {
                let inner = self.expr(x)?;
                let copies = n.unwrap_or(*m + 1) as usize;
                if expr_size(&inner).saturating_mul(copies) > MAX_RULE_SIZE {
                    return Err(Error::new(
                        ErrorKind::SizeLimit,
                        format!("repetition expands to more than {MAX_RULE_SIZE} nodes"),
                    )
                    .at(pos.line, pos.col));
                }
                let mut v: Vec<Expr> = (0..*m).map(|_| inner.clone()).collect();
                match n {
                    Some(n) => v.extend((*m..*n).map(|_| Expr::Opt(Box::new(inner.clone())))),
                    None => v.push(Expr::Star(Box::new(inner))),
                }
                match v.len() {
                    0 => Expr::Empty,
                    1 => v.pop().unwrap_or(Expr::Empty),
                    _ => Expr::Seq(v),
                }
            }
        })
    }
}

/// Parses a GBNF grammar (see the module docs).
pub fn parse(src: &str, start: Option<&str>) -> Result<Grammar> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let defs = p.rules()?;
    let mut r = Resolver {
        rule_ids: HashMap::new(),
        terminals: Vec::new(),
        term_ids: HashMap::new(),
    };
    for (k, (name, pos, _)) in defs.iter().enumerate() {
        if r.rule_ids.insert(name.clone(), RuleId(k as u32)).is_some() {
            return Err(pos.err(format!("rule '{name}' is defined twice")));
        }
    }
    let mut rules = Vec::with_capacity(defs.len());
    for (name, _, body) in &defs {
        let expr = r.expr(body)?;
        rules.push(Rule {
            name: name.clone(),
            expr,
        });
    }
    let start_name = start.unwrap_or("root");
    let start = *r.rule_ids.get(start_name).ok_or_else(|| {
        Error::new(
            ErrorKind::Grammar,
            format!("unknown start rule '{start_name}'"),
        )
    })?;
    Ok(Grammar {
        terminals: r.terminals,
        rules,
        ignore: Vec::new(),
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recognize::Recognizer;
    use crate::{Constraint, Partial};

    fn accepts(g: &Grammar, s: &str) -> bool {
        let c = Constraint::compile(g).unwrap();
        let e = c.check(&Partial::complete(s.as_bytes())).unwrap();
        let r = Recognizer::new(g).unwrap().accepts(s.as_bytes()).unwrap();
        assert_eq!(e, r, "engine and recognizer disagree on {s:?}");
        e
    }

    #[test]
    fn literals_split_into_characters() {
        // With a multi-character terminal "ab", maximal munch would reject
        // "ab" read as "a" then "b" from [a-z].
        let g = parse("root ::= \"ab\" | \"a\" [a-z]\n", None).unwrap();
        assert!(accepts(&g, "ab"));
        assert!(accepts(&g, "ac"));
        assert!(!accepts(&g, "a"));
        assert_eq!(g.terminals.len(), 3);
    }

    #[test]
    fn escapes_classes_repetition() {
        let src = r#"
# comment
root ::= str ws num   # trailing comment
str ::= "\"" ( [^"\\] | "\\" ["\\nt] )* "\""
num ::= [0-9]{1,3} ("." [0-9]{2,})?
ws ::= | [ \t\n]+
"#;
        let g = parse(src, None).unwrap();
        assert!(accepts(&g, "\"a\\\"b\" 12.345"));
        assert!(accepts(&g, "\"é€😀\"1"));
        assert!(!accepts(&g, "\"a\" 1234"));
        assert!(!accepts(&g, "\"a\" 1.2"));
        let g = parse("root ::= \"\\x41\\u00e9\\U0001F600\\t\" .\n", None).unwrap();
        assert!(accepts(&g, "Aé😀\t\n"));
        assert!(accepts(&g, "Aé😀\tx"));
        assert!(!accepts(&g, "Aé😀\t"));
        let g = parse("root ::= [a-c]{2} x{3,}\nx ::= \"x\"", None).unwrap();
        assert!(accepts(&g, "abxxx"));
        assert!(accepts(&g, "ccxxxxxx"));
        assert!(!accepts(&g, "abxx"));
    }

    #[test]
    fn multi_line_rules_and_names() {
        let src = "root ::=\n  item-1\n  (\",\" item-1)*\nitem-1 ::= [a-z]\n  | \"-\"\n";
        let g = parse(src, None).unwrap();
        assert!(accepts(&g, "a,-,b"));
        assert!(!accepts(&g, "a,"));
        let g = parse("a ::= \"x\"\nb ::= a a\n", Some("b")).unwrap();
        assert!(accepts(&g, "xx"));
    }

    #[test]
    fn errors() {
        let cases = [
            ("root ::= \"a\n", "1:10", "unterminated string"),
            ("root ::= [a-\n", "1:10", "unterminated character class"),
            ("root ::= [z-a]\n", "1:10", "empty range"),
            ("root ::= \"\\q\"\n", "1:11", "unknown escape"),
            ("root ::= \"\\x4\"\n", "1:11", "hex digits"),
            ("root ::= (\"a\"\n", "2:1", "')' to close '(' at 1:10"),
            ("root ::= \"a\" )\n", "1:14", "a new rule"),
            ("root ::= a{3,1}\n", "1:11", "3 > 1"),
            ("root ::= a{x}\n", "1:11", "bad repetition"),
            ("root ::= b\n", "1:10", "unknown rule 'b'"),
            ("root = \"a\"\n", "1:6", "unexpected character '='"),
            ("root \"a\"\n", "1:6", "'::=' after rule name"),
            ("root ::= \"a\"\nroot ::= \"b\"\n", "2:1", "defined twice"),
            ("root ::= <[123]>\n", "1:10", "token references"),
            ("root ::= []\n", "1:10", "matches no character"),
            ("root ::= * \"a\"\n", "1:10", "before the postfix"),
        ];
        for (src, at, msg) in cases {
            let e = parse(src, None).unwrap_err();
            let (l, c) = e.position().unwrap_or((0, 0));
            assert_eq!(format!("{l}:{c}"), at, "{src:?}: {e}");
            assert!(e.message().contains(msg), "{src:?}: {e}");
        }
        let e = parse("x ::= \"a\"\n", None).unwrap_err();
        assert!(e.message().contains("unknown start rule 'root'"));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(src in "([a-c\\-_ \n|()*+?.\\[\\]^\"\\\\{},0-9#]|::=|root){0,40}") {
            let _ = parse(&src, None);
        }
    }
}

//! A parser for grammars written in the Lark dialect (`.lark` / `.ebnf` files).
//!
//! # Supported dialect
//!
//! * Rules: `name: a b | c`, names in lowercase, optionally prefixed by `?` or
//!   `!` (tree-shaping markers, ignored). A leading `_` is part of the name.
//!   Alternatives may continue on following lines that start with `|`.
//!   Alternatives may carry an alias (`a b -> name`), which is ignored. A rule
//!   priority (`name.2:`) is parsed and ignored.
//! * Terminals: names in UPPERCASE (possibly starting with `_`), defined by
//!   string literals (`"abc"`, `"abc"i`), regular expressions (`/re/flags`),
//!   character ranges (`"a".."z"`) and references to other terminals, combined
//!   with `|`, grouping, `[..]`, `?`, `*`, `+`, `~ n` and `~ n..m`. A terminal
//!   priority (`NAME.2:`) is parsed and **ignored**: cdiff's lexer is an exact
//!   maximal-munch lexer where a lexeme matching several terminals may be any of
//!   them, so priorities have no meaning. Lazy quantifiers (`*?`) are accepted
//!   but, as lexemes are matched whole, behave like greedy ones.
//! * Rule bodies may contain anonymous literals and regexes; they become
//!   anonymous terminals named by their text (e.g. `"{"`), shared between
//!   identical patterns, and reuse a named terminal defined as exactly the same
//!   literal or regex (as Lark does).
//! * `%ignore`, `%import common.NAME [-> ALIAS]`, `%import common (A, B)`, with
//!   a built-in `common` library of regexes written for cdiff.
//! * `//` comments, and `#` comments (as in llguidance's Lark dialect).
//!
//! Not supported (clear errors): `%declare`, rule templates (`name{x}`),
//! modules other than `common`, regex lookaround and backreferences.
//!
//! # Regex translation
//!
//! Lark regexes use Python syntax; they are translated to `regex-syntax` syntax
//! with a few textual fixes: a `{` that does not start a repetition `{n}`,
//! `{n,}`, `{n,m}` is escaped, and so is an unmatched `}`; inside a character
//! class a literal `[` and the set operators `&&`, `~~`, `--` are escaped;
//! `\Z` becomes `\z`. Lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) and numbered
//! backreferences are rejected with an error.
//!
//! Only terminals used by a rule (any rule) or by `%ignore` are kept in
//! [`Grammar::terminals`], in order of first use (rules in definition order,
//! then `%ignore` directives). Terminals used only inside other terminals are
//! inlined into them.

use std::collections::{BTreeMap, HashMap};

use super::ast::{Expr, Grammar, Rule, RuleId, TermId, Terminal};
use crate::error::{Error, ErrorKind, Result};

/// Deepest nesting of parentheses/brackets accepted in a definition.
pub(super) const MAX_NESTING: usize = 100;
/// Longest chain of terminal references accepted.
const MAX_TERM_DEPTH: usize = 200;
/// Largest repetition count accepted in `~ n..m`.
pub(super) const MAX_REPEAT: u64 = 1000;
/// Largest size (in expression nodes) of one expanded rule.
pub(super) const MAX_RULE_SIZE: usize = 1_000_000;
/// Longest resolved terminal pattern accepted, in bytes.
const MAX_PATTERN_LEN: usize = 1 << 20;

/// How tightly a pattern binds: an atom takes a postfix operator as is, a
/// concatenation can be concatenated, an alternation needs a group for both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Prec {
    Atom,
    Concat,
    Alt,
}

/// Parses a Lark-dialect grammar. The start rule is `start` unless `start`
/// names another rule.
pub fn parse(src: &str, start: Option<&str>) -> Result<Grammar> {
    let toks = lex(src)?;
    let toks = fold_newlines(toks);
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let items = p.items()?;
    resolve(items, start)
}

impl Grammar {
    /// Parses a grammar written in the Lark dialect (see [`crate::grammar::lark`]).
    ///
    /// ```
    /// use cdiff::grammar::Grammar;
    /// let g = Grammar::from_lark(
    ///     "start: \"[\" [NUMBER (\",\" NUMBER)*] \"]\"\n\
    ///      %import common.NUMBER\n\
    ///      %import common.WS\n\
    ///      %ignore WS\n",
    ///     None,
    /// )
    /// .unwrap();
    /// assert_eq!(g.rules[g.start.0 as usize].name, "start");
    /// assert_eq!(g.terminals.len(), 5);
    /// ```
    pub fn from_lark(src: &str, start: Option<&str>) -> Result<Grammar> {
        parse(src, start)
    }
}

// ---------------------------------------------------------------------------
// Lexer

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Name(String),
    Str(String, bool),
    Regex(String, String),
    Num(u64),
    Directive(String),
    Punct(&'static str),
    Newline,
    Eof,
}

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

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("name '{n}'"),
        Tok::Str(s, _) => format!("string {s:?}"),
        Tok::Regex(r, _) => format!("regex /{r}/"),
        Tok::Num(n) => format!("number {n}"),
        Tok::Directive(d) => format!("'%{d}'"),
        Tok::Punct(p) => format!("'{p}'"),
        Tok::Newline => "end of line".to_string(),
        Tok::Eof => "end of file".to_string(),
    }
}

fn lex(src: &str) -> Result<Vec<(Tok, Pos)>> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    let at = |k: usize| chars.get(k).copied();
    while let Some(c) = at(i) {
        let pos = Pos { line, col };
        // Advance over `n` chars that do not contain newlines.
        let start = i;
        match c {
            '\n' => {
                out.push((Tok::Newline, pos));
                i += 1;
                line += 1;
                col = 1;
                continue;
            }
            ' ' | '\t' | '\r' | '\u{c}' => i += 1,
            // `//` comments (Lark) and `#` comments (llguidance's Lark dialect).
            '/' if at(i + 1) == Some('/') => {
                while at(i).is_some_and(|c| c != '\n') {
                    i += 1;
                }
            }
            '#' => {
                while at(i).is_some_and(|c| c != '\n') {
                    i += 1;
                }
            }
            '/' => {
                i += 1;
                let mut body = String::new();
                loop {
                    match at(i) {
                        None | Some('\n') => {
                            return Err(pos.err("unterminated regex: expected closing '/'"))
                        }
                        Some('\\') if at(i + 1) == Some('/') => {
                            body.push('/');
                            i += 2;
                        }
                        Some('\\') => {
                            body.push('\\');
                            if let Some(n) = at(i + 1).filter(|&n| n != '\n') {
                                body.push(n);
                                i += 2;
                            } else {
                                i += 1;
                            }
                        }
                        Some('/') => {
                            i += 1;
                            break;
                        }
                        Some(c) => {
                            body.push(c);
                            i += 1;
                        }
                    }
                }
                let mut flags = String::new();
                while let Some(f) = at(i).filter(|c| c.is_ascii_alphabetic()) {
                    flags.push(f);
                    i += 1;
                }
                out.push((Tok::Regex(body, flags), pos));
            }
            '"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    match at(i) {
                        None | Some('\n') => {
                            return Err(pos.err("unterminated string: expected closing '\"'"))
                        }
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            i += 1;
                            let e = at(i).ok_or_else(|| {
                                pos.err("unterminated string: expected closing '\"'")
                            })?;
                            i += 1;
                            let hex = |n: usize, i: &mut usize| -> Result<char> {
                                let digits: String =
                                    chars.get(*i..*i + n).unwrap_or(&[]).iter().collect();
                                let v = u32::from_str_radix(&digits, 16)
                                    .ok()
                                    .filter(|_| digits.len() == n)
                                    .and_then(char::from_u32)
                                    .ok_or_else(|| {
                                        pos.err(format!(
                                            "bad escape in string: expected {n} hex digits"
                                        ))
                                    })?;
                                *i += n;
                                Ok(v)
                            };
                            match e {
                                'n' => s.push('\n'),
                                't' => s.push('\t'),
                                'r' => s.push('\r'),
                                'f' => s.push('\u{c}'),
                                'v' => s.push('\u{b}'),
                                'a' => s.push('\u{7}'),
                                'b' => s.push('\u{8}'),
                                '0' => s.push('\0'),
                                '"' | '\\' | '\'' => s.push(e),
                                'x' => s.push(hex(2, &mut i)?),
                                'u' => s.push(hex(4, &mut i)?),
                                'U' => s.push(hex(8, &mut i)?),
                                '\n' => {
                                    return Err(
                                        pos.err("unterminated string: expected closing '\"'")
                                    );
                                }
                                other => {
                                    // Python keeps unknown escapes verbatim.
                                    s.push('\\');
                                    s.push(other);
                                }
                            }
                        }
                        Some(c) => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                let ci = at(i) == Some('i')
                    && !at(i + 1).is_some_and(|c| c.is_alphanumeric() || c == '_');
                if ci {
                    i += 1;
                }
                out.push((Tok::Str(s, ci), pos));
            }
            '%' => {
                i += 1;
                let mut name = String::new();
                while let Some(c) = at(i).filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    i += 1;
                }
                if name.is_empty() {
                    return Err(pos.err("expected a directive name after '%'"));
                }
                out.push((Tok::Directive(name), pos));
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let mut name = String::new();
                while let Some(c) = at(i).filter(|c| c.is_ascii_alphanumeric() || *c == '_') {
                    name.push(c);
                    i += 1;
                }
                out.push((Tok::Name(name), pos));
            }
            c if c.is_ascii_digit() => {
                let mut v: u64 = 0;
                while let Some(d) = at(i).and_then(|c| c.to_digit(10)) {
                    v = v.saturating_mul(10).saturating_add(d as u64);
                    i += 1;
                }
                out.push((Tok::Num(v), pos));
            }
            _ => {
                let two: String = chars.get(i..i + 2).unwrap_or(&[]).iter().collect();
                let p: &'static str = match two.as_str() {
                    ".." => "..",
                    "->" => "->",
                    _ => match c {
                        ':' => ":",
                        '|' => "|",
                        '(' => "(",
                        ')' => ")",
                        '[' => "[",
                        ']' => "]",
                        '?' => "?",
                        '*' => "*",
                        '+' => "+",
                        '~' => "~",
                        '.' => ".",
                        ',' => ",",
                        '{' => "{",
                        '}' => "}",
                        '!' => "!",
                        '-' => "-",
                        _ => return Err(pos.err(format!("unexpected character {c:?}"))),
                    },
                };
                i += p.chars().count();
                out.push((Tok::Punct(p), pos));
            }
        }
        col += i - start;
    }
    out.push((Tok::Eof, Pos { line, col }));
    Ok(out)
}

/// Drops newlines inside brackets and before a continuation `|`, and collapses
/// runs of newlines, so that a newline token always ends a definition.
fn fold_newlines(toks: Vec<(Tok, Pos)>) -> Vec<(Tok, Pos)> {
    let mut out: Vec<(Tok, Pos)> = Vec::with_capacity(toks.len());
    let mut depth = 0usize;
    for (k, (t, p)) in toks.iter().enumerate() {
        match t {
            Tok::Punct("(") | Tok::Punct("[") => depth += 1,
            Tok::Punct(")") | Tok::Punct("]") => depth = depth.saturating_sub(1),
            Tok::Newline => {
                if depth > 0 || matches!(out.last(), None | Some((Tok::Newline, _))) {
                    continue;
                }
                let next = toks[k..].iter().find(|(t, _)| *t != Tok::Newline);
                if matches!(next, Some((Tok::Punct("|"), _))) {
                    continue;
                }
            }
            _ => {}
        }
        out.push((t.clone(), *p));
    }
    out
}

// ---------------------------------------------------------------------------
// Parser

/// A parsed, unresolved expression.
#[derive(Clone, Debug, PartialEq)]
enum PExpr {
    Empty,
    Name(String, Pos),
    Str(String, bool, Pos),
    Regex(String, String, Pos),
    Range(char, char, Pos),
    Seq(Vec<PExpr>),
    Alt(Vec<PExpr>),
    Opt(Box<PExpr>),
    Star(Box<PExpr>),
    Plus(Box<PExpr>),
    Repeat(Box<PExpr>, u64, u64, Pos),
}

#[derive(Debug)]
enum Item {
    Rule {
        name: String,
        pos: Pos,
        body: PExpr,
    },
    Term {
        name: String,
        pos: Pos,
        body: PExpr,
    },
    Ignore(PExpr, Pos),
    Import {
        name: String,
        alias: String,
        pos: Pos,
    },
}

struct Parser {
    toks: Vec<(Tok, Pos)>,
    pos: usize,
    depth: usize,
}

fn is_term_name(n: &str) -> bool {
    n.trim_start_matches('_')
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_uppercase())
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.toks.get(self.pos).map_or(&Tok::Eof, |t| &t.0)
    }
    fn here(&self) -> Pos {
        self.toks
            .get(self.pos)
            .or(self.toks.last())
            .map_or(Pos { line: 1, col: 1 }, |t| t.1)
    }
    fn bump(&mut self) -> (Tok, Pos) {
        let t = self
            .toks
            .get(self.pos)
            .cloned()
            .unwrap_or((Tok::Eof, self.here()));
        if self.pos < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Tok::Punct(q) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expected(&self, what: &str) -> Error {
        self.here()
            .err(format!("expected {what}, found {}", describe(self.peek())))
    }
    fn end_of_item(&mut self) -> Result<()> {
        match self.peek() {
            Tok::Newline => {
                self.pos += 1;
                Ok(())
            }
            Tok::Eof => Ok(()),
            _ => Err(self.expected("end of line")),
        }
    }

    fn items(&mut self) -> Result<Vec<Item>> {
        let mut items = Vec::new();
        loop {
            match self.peek().clone() {
                Tok::Eof => return Ok(items),
                Tok::Newline => {
                    self.pos += 1;
                }
                Tok::Directive(d) => {
                    let pos = self.here();
                    self.pos += 1;
                    match d.as_str() {
                        "ignore" => {
                            let e = self.expansions()?;
                            items.push(Item::Ignore(e, pos));
                        }
                        "import" => self.import(&mut items)?,
                        "declare" => return Err(pos.err("'%declare' is not supported")),
                        "override" | "extend" => {
                            return Err(pos.err(format!("'%{d}' is not supported")))
                        }
                        _ => return Err(pos.err(format!("unknown directive '%{d}'"))),
                    }
                    self.end_of_item()?;
                }
                _ => {
                    let item = self.definition()?;
                    items.push(item);
                    self.end_of_item()?;
                }
            }
        }
    }

    fn import(&mut self, items: &mut Vec<Item>) -> Result<()> {
        let mut path = Vec::new();
        let pos = self.here();
        let lead_dot = self.eat(".");
        loop {
            match self.bump() {
                (Tok::Name(n), p) => path.push((n, p)),
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("a module name after '%import'"));
                }
            }
            if !self.eat(".") {
                break;
            }
        }
        let names: Vec<(String, String, Pos)> = if self.eat("(") {
            let module = path.clone();
            let mut names = Vec::new();
            loop {
                match self.bump() {
                    (Tok::Name(n), p) => names.push((n.clone(), n, p)),
                    _ => {
                        self.pos -= 1;
                        return Err(self.expected("a terminal name in '%import' list"));
                    }
                }
                if self.eat(")") {
                    break;
                }
                if !self.eat(",") {
                    return Err(self.expected("',' or ')'"));
                }
            }
            path = module;
            names
        } else {
            let (name, p) = path.pop().unwrap_or_default_pos(pos);
            if path.is_empty() {
                return Err(p.err(format!(
                    "expected '%import module.NAME', found only '{name}'"
                )));
            }
            let alias = if self.eat("->") {
                match self.bump() {
                    (Tok::Name(a), _) => a,
                    _ => {
                        self.pos -= 1;
                        return Err(self.expected("an alias name after '->'"));
                    }
                }
            } else {
                name.clone()
            };
            vec![(name, alias, p)]
        };
        let module: Vec<&str> = path.iter().map(|(n, _)| n.as_str()).collect();
        if lead_dot || module != ["common"] {
            let mp = path.first().map_or(pos, |x| x.1);
            return Err(mp.err(format!(
                "unknown module '{}{}': only 'common' can be imported",
                if lead_dot { "." } else { "" },
                module.join(".")
            )));
        }
        for (name, alias, p) in names {
            if common_pattern(&name).is_none() {
                return Err(p.err(format!("module 'common' has no terminal '{name}'")));
            }
            if !is_term_name(&alias) {
                return Err(p.err(format!("alias '{alias}' of a terminal must be UPPERCASE")));
            }
            items.push(Item::Import {
                name,
                alias,
                pos: p,
            });
        }
        Ok(())
    }

    fn definition(&mut self) -> Result<Item> {
        // Tree-shaping prefixes.
        while self.eat("?") || self.eat("!") {}
        let (name, pos) = match self.bump() {
            (Tok::Name(n), p) => (n, p),
            _ => {
                self.pos -= 1;
                return Err(self.expected("a rule or terminal name"));
            }
        };
        if matches!(self.peek(), Tok::Punct("{")) {
            return Err(self.here().err(format!(
                "rule templates ('{name}{{...}}') are not supported"
            )));
        }
        if self.eat(".") {
            self.eat("-");
            match self.bump() {
                (Tok::Num(_), _) => {}
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("a priority number after '.'"));
                }
            }
        }
        if !self.eat(":") {
            let what = if is_term_name(&name) {
                "terminal"
            } else {
                "rule"
            };
            return Err(self.expected(&format!("':' after {what} name")));
        }
        let body = self.expansions()?;
        if is_term_name(&name) {
            Ok(Item::Term { name, pos, body })
        } else {
            Ok(Item::Rule { name, pos, body })
        }
    }

    fn expansions(&mut self) -> Result<PExpr> {
        let mut alts = vec![self.alias()?];
        while self.eat("|") {
            alts.push(self.alias()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(PExpr::Empty)
        } else {
            PExpr::Alt(alts)
        })
    }

    fn alias(&mut self) -> Result<PExpr> {
        let e = self.sequence()?;
        if self.eat("->") {
            match self.bump() {
                (Tok::Name(_), _) => {}
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("an alias name after '->'"));
                }
            }
        }
        Ok(e)
    }

    fn sequence(&mut self) -> Result<PExpr> {
        let mut items = Vec::new();
        while matches!(
            self.peek(),
            Tok::Name(_) | Tok::Str(..) | Tok::Regex(..) | Tok::Punct("(") | Tok::Punct("[")
        ) {
            items.push(self.postfix()?);
        }
        Ok(match items.len() {
            0 => PExpr::Empty,
            1 => items.pop().unwrap_or(PExpr::Empty),
            _ => PExpr::Seq(items),
        })
    }

    fn postfix(&mut self) -> Result<PExpr> {
        let mut e = self.atom()?;
        let mut ops = 0usize;
        loop {
            ops += 1;
            if ops > MAX_NESTING {
                return Err(self.here().err(format!(
                    "too many postfix operators (more than {MAX_NESTING})"
                )));
            }
            let pos = self.here();
            if self.eat("?") {
                e = PExpr::Opt(Box::new(e));
            } else if self.eat("*") {
                e = PExpr::Star(Box::new(e));
            } else if self.eat("+") {
                e = PExpr::Plus(Box::new(e));
            } else if self.eat("~") {
                let n = self.number("a repetition count after '~'")?;
                let m = if self.eat("..") {
                    self.number("a repetition count after '..'")?
                } else {
                    n
                };
                if n > m {
                    return Err(pos.err(format!("bad repetition '~ {n}..{m}': {n} > {m}")));
                }
                if m > MAX_REPEAT {
                    return Err(pos.err(format!(
                        "repetition count {m} is too large (at most {MAX_REPEAT})"
                    )));
                }
                e = PExpr::Repeat(Box::new(e), n, m, pos);
            } else {
                return Ok(e);
            }
        }
    }

    fn number(&mut self, what: &str) -> Result<u64> {
        match self.bump() {
            (Tok::Num(n), _) => Ok(n),
            _ => {
                self.pos -= 1;
                Err(self.expected(what))
            }
        }
    }

    fn nested(&mut self, close: &str, open_pos: Pos) -> Result<PExpr> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(open_pos.err(format!(
                "brackets nested too deeply (more than {MAX_NESTING})"
            )));
        }
        let e = self.expansions()?;
        self.depth -= 1;
        if !self.eat(close) {
            let open = if close == ")" { "(" } else { "[" };
            return Err(match self.peek() {
                Tok::Newline | Tok::Eof => {
                    open_pos.err(format!("unbalanced '{open}': expected '{close}'"))
                }
                _ => self.expected(&format!(
                    "'{close}' to close '{open}' at {}:{}",
                    open_pos.line, open_pos.col
                )),
            });
        }
        Ok(e)
    }

    fn atom(&mut self) -> Result<PExpr> {
        let (t, pos) = self.bump();
        match t {
            Tok::Name(n) => {
                if matches!(self.peek(), Tok::Punct("{")) {
                    return Err(self
                        .here()
                        .err(format!("rule templates ('{n}{{...}}') are not supported")));
                }
                Ok(PExpr::Name(n, pos))
            }
            Tok::Str(s, ci) => {
                if self.eat("..") {
                    let (t2, p2) = self.bump();
                    let Tok::Str(s2, _) = t2 else {
                        self.pos -= 1;
                        return Err(self.expected("a string after '..'"));
                    };
                    let one = |s: &str, p: Pos| -> Result<char> {
                        let mut it = s.chars();
                        match (it.next(), it.next()) {
                            (Some(c), None) => Ok(c),
                            _ => Err(
                                p.err(format!("range endpoint {s:?} must be a single character"))
                            ),
                        }
                    };
                    let (a, b) = (one(&s, pos)?, one(&s2, p2)?);
                    if a > b {
                        return Err(pos.err(format!("empty range {s:?}..{s2:?}")));
                    }
                    return Ok(PExpr::Range(a, b, pos));
                }
                Ok(PExpr::Str(s, ci, pos))
            }
            Tok::Regex(r, f) => Ok(PExpr::Regex(r, f, pos)),
            Tok::Punct("(") => self.nested(")", pos),
            Tok::Punct("[") => Ok(PExpr::Opt(Box::new(self.nested("]", pos)?))),
            _ => {
                self.pos -= 1;
                Err(self.expected("an expression"))
            }
        }
    }
}

trait PopOr {
    fn unwrap_or_default_pos(self, p: Pos) -> (String, Pos);
}
impl PopOr for Option<(String, Pos)> {
    fn unwrap_or_default_pos(self, p: Pos) -> (String, Pos) {
        self.unwrap_or((String::new(), p))
    }
}

// ---------------------------------------------------------------------------
// The built-in `common` library.

/// The pattern (in `regex-syntax` syntax) of a terminal of the built-in
/// `common` module, written for cdiff after the names of Lark's library.
fn common_pattern(name: &str) -> Option<&'static str> {
    Some(match name {
        "DIGIT" => r"[0-9]",
        "HEXDIGIT" => r"[0-9a-fA-F]",
        "INT" => r"[0-9]+",
        "SIGNED_INT" => r"[+\-]?[0-9]+",
        "DECIMAL" => r"[0-9]+\.[0-9]*|\.[0-9]+",
        "_EXP" => r"[eE][+\-]?[0-9]+",
        "FLOAT" => r"[0-9]+[eE][+\-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?",
        "SIGNED_FLOAT" => {
            r"[+\-]?(?:[0-9]+[eE][+\-]?[0-9]+|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?)"
        }
        "NUMBER" => r"[0-9]+(?:[eE][+\-]?[0-9]+)?|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?",
        "SIGNED_NUMBER" => {
            r"[+\-]?(?:[0-9]+(?:[eE][+\-]?[0-9]+)?|(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][+\-]?[0-9]+)?)"
        }
        "ESCAPED_STRING" => r#""(?:[^"\\\n]|\\[^\n])*""#,
        "LETTER" => r"[A-Za-z]",
        "LCASE_LETTER" => r"[a-z]",
        "UCASE_LETTER" => r"[A-Z]",
        "WORD" => r"[A-Za-z]+",
        "CNAME" => r"[A-Za-z_][A-Za-z0-9_]*",
        "WS" => r"[ \t\x0C\r\n]+",
        "WS_INLINE" => r"[ \t]+",
        "NEWLINE" => r"(?:\r?\n)+",
        "CR" => r"\r",
        "LF" => r"\n",
        "SH_COMMENT" => r"\#[^\n]*",
        "CPP_COMMENT" => r"//[^\n]*",
        "C_COMMENT" => r"/\*(?:[^*]|\*+[^*/])*\*+/",
        "SQL_COMMENT" => r"--[^\n]*",
        _ => return None,
    })
}

// ---------------------------------------------------------------------------
// Regex translation

/// Translates a Python regex body to `regex-syntax` syntax (see module docs).
fn translate_regex(body: &str, pos: Pos, owner: &str) -> Result<String> {
    let c: Vec<char> = body.chars().collect();
    let mut out = String::with_capacity(body.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = 0usize;
    let mut open_braces = 0usize;
    let bad = |what: &str| {
        Error::new(
            ErrorKind::Regex,
            format!("terminal {owner}: {what} is not supported in /{body}/"),
        )
        .at(pos.line, pos.col)
    };
    while let Some(&ch) = c.get(i) {
        match ch {
            '\\' => {
                let n = c.get(i + 1).copied();
                match n {
                    Some('Z') => out.push_str(r"\z"),
                    Some(d) if d.is_ascii_digit() && d != '0' && !in_class => {
                        return Err(bad("a backreference (its language is not regular)"));
                    }
                    Some(p @ ('p' | 'P')) if c.get(i + 2) == Some(&'{') => {
                        // A Unicode class `\p{L}`, kept whole (as the
                        // `regex` module that Lark can use reads it).
                        let Some(len) = c[i + 2..].iter().position(|&x| x == '}') else {
                            return Err(bad("an unterminated \\p{...} class"));
                        };
                        out.push('\\');
                        out.push(p);
                        out.extend(&c[i + 2..=i + 2 + len]);
                        i += 3 + len;
                        continue;
                    }
                    Some(d) => {
                        out.push('\\');
                        out.push(d);
                    }
                    None => out.push_str(r"\\"),
                }
                i += 2;
                continue;
            }
            '[' if in_class => {
                if c.get(i + 1) == Some(&':') {
                    out.push('[');
                } else {
                    out.push_str(r"\[");
                }
            }
            '[' => {
                in_class = true;
                out.push('[');
                i += 1;
                if c.get(i) == Some(&'^') {
                    out.push('^');
                    i += 1;
                }
                class_start = i;
                continue;
            }
            ']' if in_class => {
                if i == class_start {
                    out.push_str(r"\]");
                } else {
                    in_class = false;
                    out.push(']');
                }
            }
            '&' | '~' if in_class => {
                out.push('\\');
                out.push(ch);
            }
            '-' if in_class && c.get(i + 1) == Some(&'-') => out.push_str(r"\-"),
            '(' if !in_class && c.get(i + 1) == Some(&'?') => {
                let rest: String = c
                    .get(i + 2..(i + 4).min(c.len()))
                    .unwrap_or(&[])
                    .iter()
                    .collect();
                if rest.starts_with('=') || rest.starts_with('!') || rest == "<=" || rest == "<!" {
                    return Err(bad("lookaround"));
                }
                out.push('(');
            }
            '{' if !in_class => {
                // A repetition: {n}, {n,}, {n,m}, {,m} (digits required somewhere).
                let mut j = i + 1;
                let mut digits = 0;
                let mut comma = 0;
                while let Some(&d) = c.get(j) {
                    if d.is_ascii_digit() {
                        digits += 1;
                    } else if d == ',' {
                        comma += 1;
                    } else if d == ' ' {
                    } else {
                        break;
                    }
                    j += 1;
                }
                let is_rep = c.get(j) == Some(&'}') && digits > 0 && comma <= 1 && i > 0;
                if is_rep {
                    open_braces += 1;
                    out.push('{');
                    // Python's `{,m}` means `{0,m}`.
                    if c.get(i + 1) == Some(&',') {
                        out.push('0');
                    }
                } else {
                    out.push_str(r"\{");
                }
            }
            '}' if !in_class => {
                if open_braces > 0 {
                    open_braces -= 1;
                    out.push('}');
                } else {
                    out.push_str(r"\}");
                }
            }
            _ => out.push(ch),
        }
        i += 1;
    }
    Ok(out)
}

fn regex_flags(flags: &str, pos: Pos) -> Result<String> {
    let mut out = String::new();
    for f in flags.chars() {
        match f {
            'i' | 'm' | 's' | 'x' => {
                if !out.contains(f) {
                    out.push(f)
                }
            }
            'u' | 'l' => {}
            _ => return Err(pos.err(format!("unknown regex flag '{f}'"))),
        }
    }
    Ok(out)
}

fn check_pattern(pat: &str, name: &str, pos: Pos) -> Result<()> {
    let hir = regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .build()
        .parse(pat)
        .map_err(|e| {
            let msg = e.to_string();
            let short = msg.lines().last().unwrap_or("").trim().to_string();
            Error::new(
                ErrorKind::Regex,
                format!("terminal {name}: invalid regex /{pat}/: {short}"),
            )
            .at(pos.line, pos.col)
        })?;
    match hir.properties().minimum_len() {
        Some(0) => Err(Error::new(
            ErrorKind::Grammar,
            format!("terminal {name} matches the empty string"),
        )
        .at(pos.line, pos.col)),
        None => Err(Error::new(
            ErrorKind::Grammar,
            format!("terminal {name} matches nothing"),
        )
        .at(pos.line, pos.col)),
        _ => Ok(()),
    }
}

/// Escapes a literal for a pattern: meta characters with `\`, control and
/// non-space whitespace characters as `\x{..}` (so patterns stay on one line).
fn escape_lit(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if regex_syntax::is_meta_character(c) {
            out.push('\\');
            out.push(c);
        } else if c.is_control() || (c.is_whitespace() && c != ' ') {
            out.push_str(&format!("\\x{{{:X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// Quotes a literal in Lark syntax (the display name of anonymous terminals).
pub(super) fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x10000 => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---------------------------------------------------------------------------
// Resolution

struct TermDef {
    pos: Pos,
    body: PExpr,
}

struct Resolver<'a> {
    term_defs: BTreeMap<&'a str, TermDef>,
    term_order: Vec<&'a str>,
    /// Resolved patterns of named terminals.
    term_pats: HashMap<String, (String, Prec)>,
    rule_ids: HashMap<&'a str, RuleId>,
    /// Kept terminals.
    terminals: Vec<Terminal>,
    kept_pos: Vec<Pos>,
    /// Named terminal name → kept id.
    named_ids: HashMap<String, TermId>,
    /// Pattern of an anonymous terminal → kept id.
    anon_ids: HashMap<String, TermId>,
    /// Anonymous literal/regex key → named terminal defined as exactly it.
    literal_owner: HashMap<(bool, String, String), &'a str>,
}

fn lit_key(e: &PExpr) -> Option<(bool, String, String)> {
    match e {
        PExpr::Str(s, ci, _) => Some((
            false,
            s.clone(),
            if *ci { "i".into() } else { String::new() },
        )),
        PExpr::Regex(r, f, _) => Some((true, r.clone(), f.clone())),
        _ => None,
    }
}

pub(super) fn expr_size(e: &Expr) -> usize {
    match e {
        Expr::Empty | Expr::Term(_) | Expr::Rule(_) => 1,
        Expr::Seq(v) | Expr::Alt(v) => 1 + v.iter().map(expr_size).sum::<usize>(),
        Expr::Opt(x) | Expr::Star(x) | Expr::Plus(x) => 1 + expr_size(x),
    }
}

impl<'a> Resolver<'a> {
    /// The pattern of a terminal expression, safe to concatenate.
    fn pattern(&mut self, e: &PExpr, owner: &str, stack: &mut Vec<&'a str>) -> Result<String> {
        Ok(self.pat(e, owner, stack)?.0)
    }

    /// The pattern of a terminal expression and how tightly it binds.
    fn pat(&mut self, e: &PExpr, owner: &str, stack: &mut Vec<&'a str>) -> Result<(String, Prec)> {
        let wrap = |(p, prec): (String, Prec), need: Prec| -> String {
            if prec > need {
                format!("(?:{p})")
            } else {
                p
            }
        };
        let out = match e {
            PExpr::Empty => (String::new(), Prec::Concat),
            PExpr::Str(s, ci, _) => {
                let esc = escape_lit(s);
                if *ci {
                    (format!("(?i:{esc})"), Prec::Atom)
                } else if s.chars().count() == 1 {
                    (esc, Prec::Atom)
                } else {
                    (esc, Prec::Concat)
                }
            }
            PExpr::Regex(r, f, pos) => {
                let body = translate_regex(r, *pos, owner)?;
                (format!("(?{}:{body})", regex_flags(f, *pos)?), Prec::Atom)
            }
            PExpr::Range(a, b, _) => (
                format!(
                    "[{}-{}]",
                    escape_lit(&a.to_string()),
                    escape_lit(&b.to_string())
                ),
                Prec::Atom,
            ),
            PExpr::Name(n, pos) => {
                if !is_term_name(n) {
                    return Err(pos.err(format!("terminal {owner} cannot reference rule '{n}'")));
                }
                self.term_pattern(n, *pos, stack)?
            }
            PExpr::Seq(v) => {
                let mut s = String::new();
                for x in v {
                    let p = self.pat(x, owner, stack)?;
                    s.push_str(&wrap(p, Prec::Concat));
                }
                (s, Prec::Concat)
            }
            PExpr::Alt(v) => {
                let mut parts = Vec::new();
                for x in v {
                    parts.push(self.pat(x, owner, stack)?.0);
                }
                (parts.join("|"), Prec::Alt)
            }
            PExpr::Opt(x) => (
                format!("{}?", wrap(self.pat(x, owner, stack)?, Prec::Atom)),
                Prec::Concat,
            ),
            PExpr::Star(x) => (
                format!("{}*", wrap(self.pat(x, owner, stack)?, Prec::Atom)),
                Prec::Concat,
            ),
            PExpr::Plus(x) => (
                format!("{}+", wrap(self.pat(x, owner, stack)?, Prec::Atom)),
                Prec::Concat,
            ),
            PExpr::Repeat(x, n, m, _) => {
                let p = wrap(self.pat(x, owner, stack)?, Prec::Atom);
                if n == m {
                    (format!("{p}{{{n}}}"), Prec::Concat)
                } else {
                    (format!("{p}{{{n},{m}}}"), Prec::Concat)
                }
            }
        };
        if out.0.len() > MAX_PATTERN_LEN {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!("terminal {owner}: pattern longer than {MAX_PATTERN_LEN} bytes"),
            ));
        }
        Ok(out)
    }

    fn term_pattern(
        &mut self,
        name: &str,
        use_pos: Pos,
        stack: &mut Vec<&'a str>,
    ) -> Result<(String, Prec)> {
        if let Some(p) = self.term_pats.get(name) {
            return Ok(p.clone());
        }
        let Some((&key, def)) = self.term_defs.get_key_value(name) else {
            return Err(use_pos.err(format!("unknown terminal '{name}'")));
        };
        let (def_pos, body) = (def.pos, def.body.clone());
        if let Some(k) = stack.iter().position(|s| *s == key) {
            let mut cycle: Vec<&str> = stack.get(k..).unwrap_or(&[]).to_vec();
            cycle.push(key);
            return Err(def_pos.err(format!(
                "terminal {key} is recursive: {}",
                cycle.join(" -> ")
            )));
        }
        if stack.len() >= MAX_TERM_DEPTH {
            return Err(def_pos.err(format!("terminal {key}: references nested too deeply")));
        }
        stack.push(key);
        let p = self.pat(&body, key, stack)?;
        stack.pop();
        self.term_pats.insert(key.to_string(), p.clone());
        Ok(p)
    }

    fn keep_named(&mut self, name: &str, pos: Pos) -> Result<TermId> {
        if let Some(&id) = self.named_ids.get(name) {
            return Ok(id);
        }
        let pat = self.term_pattern(name, pos, &mut Vec::new())?.0;
        let def_pos = self.term_defs.get(name).map_or(pos, |d| d.pos);
        let id = TermId(self.terminals.len() as u32);
        self.terminals.push(Terminal {
            name: name.to_string(),
            pattern: pat,
        });
        self.kept_pos.push(def_pos);
        self.named_ids.insert(name.to_string(), id);
        Ok(id)
    }

    fn keep_anon(&mut self, e: &PExpr, pos: Pos) -> Result<TermId> {
        if let Some(key) = lit_key(e) {
            if let Some(&owner) = self.literal_owner.get(&key) {
                return self.keep_named(owner, pos);
            }
        }
        let display = match e {
            PExpr::Str(s, ci, _) => format!("{}{}", quote(s), if *ci { "i" } else { "" }),
            PExpr::Regex(r, f, _) => format!("/{}/{f}", r.replace('/', "\\/")),
            PExpr::Range(a, b, _) => {
                format!("{}..{}", quote(&a.to_string()), quote(&b.to_string()))
            }
            _ => "<anonymous>".to_string(),
        };
        let pat = self.pattern(e, &display, &mut Vec::new())?;
        if let Some(&id) = self.anon_ids.get(&pat) {
            return Ok(id);
        }
        let id = TermId(self.terminals.len() as u32);
        self.terminals.push(Terminal {
            name: display,
            pattern: pat.clone(),
        });
        self.kept_pos.push(pos);
        self.anon_ids.insert(pat, id);
        Ok(id)
    }

    fn rule_expr(&mut self, e: &PExpr) -> Result<Expr> {
        Ok(match e {
            PExpr::Empty => Expr::Empty,
            PExpr::Name(n, pos) => {
                if is_term_name(n) {
                    Expr::Term(self.keep_named(n, *pos)?)
                } else {
                    match self.rule_ids.get(n.as_str()) {
                        Some(&id) => Expr::Rule(id),
                        None => return Err(pos.err(format!("unknown rule '{n}'"))),
                    }
                }
            }
            PExpr::Str(_, _, pos) | PExpr::Regex(_, _, pos) | PExpr::Range(_, _, pos) => {
                Expr::Term(self.keep_anon(e, *pos)?)
            }
            PExpr::Seq(v) => Expr::Seq(v.iter().map(|x| self.rule_expr(x)).collect::<Result<_>>()?),
            PExpr::Alt(v) => Expr::Alt(v.iter().map(|x| self.rule_expr(x)).collect::<Result<_>>()?),
            PExpr::Opt(x) => Expr::Opt(Box::new(self.rule_expr(x)?)),
            PExpr::Star(x) => Expr::Star(Box::new(self.rule_expr(x)?)),
            PExpr::Plus(x) => Expr::Plus(Box::new(self.rule_expr(x)?)),
            PExpr::Repeat(x, n, m, pos) => {
                let inner = self.rule_expr(x)?;
                let size = expr_size(&inner).saturating_mul(*m as usize);
                if size > MAX_RULE_SIZE {
                    return Err(Error::new(
                        ErrorKind::SizeLimit,
                        format!("repetition expands to more than {MAX_RULE_SIZE} nodes"),
                    )
                    .at(pos.line, pos.col));
                }
                let mut v = Vec::new();
                for _ in 0..*n {
                    v.push(inner.clone());
                }
                for _ in *n..*m {
                    v.push(Expr::Opt(Box::new(inner.clone())));
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

fn resolve(items: Vec<Item>, start: Option<&str>) -> Result<Grammar> {
    let mut r = Resolver {
        term_defs: BTreeMap::new(),
        term_order: Vec::new(),
        term_pats: HashMap::new(),
        rule_ids: HashMap::new(),
        terminals: Vec::new(),
        kept_pos: Vec::new(),
        named_ids: HashMap::new(),
        anon_ids: HashMap::new(),
        literal_owner: HashMap::new(),
    };
    let mut rules: Vec<(&str, Pos, &PExpr)> = Vec::new();
    let mut ignores: Vec<(&PExpr, Pos)> = Vec::new();
    for item in &items {
        match item {
            Item::Rule { name, pos, body } => {
                if is_term_name(name) || name.is_empty() {
                    return Err(pos.err(format!("bad rule name '{name}'")));
                }
                if r.rule_ids.contains_key(name.as_str()) {
                    return Err(pos.err(format!("rule '{name}' is defined more than once")));
                }
                r.rule_ids.insert(name, RuleId(rules.len() as u32));
                rules.push((name, *pos, body));
            }
            Item::Term { name, pos, body } => {
                if r.term_defs.contains_key(name.as_str()) {
                    return Err(pos.err(format!("terminal '{name}' is defined more than once")));
                }
                r.term_defs.insert(
                    name,
                    TermDef {
                        pos: *pos,
                        body: body.clone(),
                    },
                );
                r.term_order.push(name);
            }
            Item::Import { name, alias, pos } => {
                let pat = common_pattern(name).unwrap_or("");
                if r.term_pats.get(alias.as_str()).is_some_and(|p| p.0 == pat)
                    && r.term_defs
                        .get(alias.as_str())
                        .is_some_and(|d| d.body == PExpr::Empty)
                {
                    continue; // The same import again.
                }
                if r.term_defs.contains_key(alias.as_str()) {
                    return Err(pos.err(format!("terminal '{alias}' is defined more than once")));
                }
                // Stored as an already-translated pattern.
                r.term_defs.insert(
                    alias,
                    TermDef {
                        pos: *pos,
                        body: PExpr::Empty,
                    },
                );
                r.term_pats
                    .insert(alias.clone(), (pat.to_string(), Prec::Alt));
                r.term_order.push(alias);
            }
            Item::Ignore(e, pos) => ignores.push((e, *pos)),
        }
    }
    // Named terminals defined as a single literal / regex, first definition wins.
    for &name in &r.term_order {
        if let Some(key) = r.term_defs.get(name).and_then(|d| lit_key(&d.body)) {
            r.literal_owner.entry(key).or_insert(name);
        }
    }
    // Resolve every terminal definition (reports cycles and unknown names).
    let order = r.term_order.clone();
    for name in order {
        let pos = r
            .term_defs
            .get(name)
            .map_or(Pos { line: 1, col: 1 }, |d| d.pos);
        r.term_pattern(name, pos, &mut Vec::new())?;
    }
    let mut out_rules = Vec::with_capacity(rules.len());
    for (name, _pos, body) in &rules {
        let expr = r.rule_expr(body)?;
        out_rules.push(Rule {
            name: name.to_string(),
            expr,
        });
    }
    let mut ignore = Vec::new();
    for (e, pos) in ignores {
        let id = match e {
            PExpr::Name(n, p) if is_term_name(n) => r.keep_named(n, *p)?,
            PExpr::Name(n, p) => {
                return Err(p.err(format!("'%ignore' needs a terminal, found rule '{n}'")))
            }
            _ => r.keep_anon(e, pos)?,
        };
        if !ignore.contains(&id) {
            ignore.push(id);
        }
    }
    for (t, pos) in r.terminals.iter().zip(&r.kept_pos) {
        check_pattern(&t.pattern, &t.name, *pos)?;
    }
    let start_name = start.unwrap_or("start");
    let start = *r.rule_ids.get(start_name).ok_or_else(|| {
        Error::new(
            ErrorKind::Grammar,
            format!("unknown start rule '{start_name}'"),
        )
    })?;
    Ok(Grammar {
        terminals: r.terminals,
        rules: out_rules,
        ignore,
        start,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const JSON: &str = include_str!("../../grammars/json.ebnf");

    fn term<'g>(g: &'g Grammar, name: &str) -> &'g Terminal {
        g.terminals
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no terminal {name}"))
    }

    fn full_match(pat: &str, s: &str) -> bool {
        regex::Regex::new(&format!("^(?:{pat})$"))
            .unwrap()
            .is_match(s)
    }

    #[test]
    fn json_grammar() {
        let g = parse(JSON, None).unwrap();
        assert_eq!(g.rules[g.start.0 as usize].name, "start");
        assert_eq!(g.ignore.len(), 1);
        let s = term(&g, "STRING");
        for (text, ok) in [
            (r#""""#, true),
            (r#""a\"b""#, true),
            (r#""\u00e9\n""#, true),
            (r#""\x""#, false),
            ("\"a\nb\"", false),
            (r#""abc"#, false),
        ] {
            assert_eq!(full_match(&s.pattern, text), ok, "{text}");
        }
        let n = term(&g, "NUMBER");
        for (text, ok) in [
            ("0", true),
            ("-0", true),
            ("12.5e-3", true),
            ("01", false),
            ("1.", false),
            (".5", false),
            ("+1", false),
        ] {
            assert_eq!(full_match(&n.pattern, text), ok, "{text}");
        }
        // Literals are terminals named by their text.
        for lit in [
            "\"{\"",
            "\"}\"",
            "\"[\"",
            "\"]\"",
            "\":\"",
            "\",\"",
            "\"true\"",
            "\"false\"",
            "\"null\"",
        ] {
            term(&g, lit);
        }
    }

    #[test]
    fn literal_dedup_and_reuse() {
        let g = parse("start: \"a\" \"a\" COMMA \",\" /x+/ /x+/ b\nb: \"a\" | \";\"\nCOMMA: \",\"\nSEMI: \";\"\n", None)
            .unwrap();
        let names: Vec<&str> = g.terminals.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["\"a\"", "COMMA", "/x+/", "SEMI"]);
        let Expr::Seq(v) = &g.rules[0].expr else {
            panic!()
        };
        assert_eq!(v[0], v[1]);
        assert_eq!(v[2], v[3]);
        assert_eq!(v[4], v[5]);
    }

    #[test]
    fn unused_terminals_dropped_and_inlined() {
        let g = parse("start: A\nA: B \"x\"\nB: \"b\"+\nC: \"c\"\n", None).unwrap();
        assert_eq!(g.terminals.len(), 1);
        assert!(full_match(&g.terminals[0].pattern, "bbx"));
        assert!(!full_match(&g.terminals[0].pattern, "x"));
    }

    #[test]
    fn ranges_and_flags() {
        let g = parse(
            "start: HEX ID KW\nHEX: (\"0\"..\"9\" | \"a\"..\"f\")+\nID: /[a-z]+/i\nKW: \"if\"i\n",
            None,
        )
        .unwrap();
        let cases = [
            ("HEX", "09af", true),
            ("HEX", "g", false),
            ("ID", "AbC", true),
            ("KW", "IF", true),
            ("KW", "iff", false),
        ];
        for (t, s, ok) in cases {
            assert_eq!(full_match(&term(&g, t).pattern, s), ok, "{t} {s}");
        }
    }

    #[test]
    fn repetition() {
        let g = parse(
            "start: \"a\" ~ 2 \"b\" ~ 1..3\nT: \"x\" ~ 2..3\nstart2: T\n",
            Some("start2"),
        )
        .unwrap();
        assert_eq!(g.rules[g.start.0 as usize].name, "start2");
        let Expr::Seq(v) = &g.rules[0].expr else {
            panic!()
        };
        assert_eq!(v.len(), 2);
        let Expr::Seq(a) = &v[0] else { panic!() };
        assert_eq!(a.len(), 2);
        let Expr::Seq(b) = &v[1] else { panic!() };
        assert_eq!(b.len(), 3);
        assert!(matches!(b[2], Expr::Opt(_)));
        let t = term(&g, "T");
        assert!(
            full_match(&t.pattern, "xxx")
                && !full_match(&t.pattern, "x")
                && !full_match(&t.pattern, "xxxx")
        );
    }

    #[test]
    fn imports() {
        let src = "start: NUMBER N2 CNAME WORD ESCAPED_STRING C_COMMENT\n\
                   %import common.NUMBER\n%import common.SIGNED_NUMBER -> N2\n\
                   %import common (CNAME, WORD, ESCAPED_STRING, C_COMMENT, WS)\n%ignore WS\n";
        let g = parse(src, None).unwrap();
        let cases = [
            ("NUMBER", "1.5e3", true),
            ("NUMBER", "-1", false),
            ("N2", "-1", true),
            ("CNAME", "_a1", true),
            ("ESCAPED_STRING", r#""a\"b""#, true),
            ("ESCAPED_STRING", r#""a"b""#, false),
            ("C_COMMENT", "/* a * b **/", true),
            ("C_COMMENT", "/* a */ b */", false),
            ("WS", " \n", true),
        ];
        for (t, s, ok) in cases {
            assert_eq!(full_match(&term(&g, t).pattern, s), ok, "{t} {s}");
        }
        for name in [
            "DIGIT",
            "HEXDIGIT",
            "INT",
            "SIGNED_INT",
            "DECIMAL",
            "_EXP",
            "FLOAT",
            "SIGNED_FLOAT",
            "LETTER",
        ] {
            let g = parse(&format!("start: X\n%import common.{name} -> X\n"), None).unwrap();
            check_pattern(&g.terminals[0].pattern, name, Pos { line: 1, col: 1 }).unwrap();
        }
    }

    #[test]
    fn continuation_aliases_priorities_comments() {
        let src = "// comment\n?start: a // trailing\n     | _b -> bee\n\n     | \"c\"\n!a.2: \"a\" (\n  \"x\"\n)\n_b: B\nB.3: \"b\"\nempty:\n";
        let g = parse(src, None).unwrap();
        assert_eq!(g.rules.len(), 4);
        assert!(matches!(&g.rules[0].expr, Expr::Alt(v) if v.len() == 3));
        assert_eq!(g.rules[2].name, "_b");
        assert_eq!(g.rules[3].expr, Expr::Empty);
    }

    #[test]
    fn errors() {
        use ErrorKind::{Grammar as G, Regex as R};
        type Case<'a> = (&'a str, ErrorKind, Option<(usize, usize)>, &'a str);
        let cases: &[Case] = &[
            (
                "start \"a\"\n",
                G,
                Some((1, 7)),
                "expected ':' after rule name",
            ),
            ("start: foo\n", G, Some((1, 8)), "unknown rule 'foo'"),
            ("start: FOO\n", G, Some((1, 8)), "unknown terminal 'FOO'"),
            ("start: (\"a\"\n", G, Some((1, 8)), "unbalanced '('"),
            ("start: [\"a\" )\n", G, Some((1, 13)), "']'"),
            ("start: A\nA: B\nB: \"x\" A\n", G, Some((2, 1)), "recursive"),
            ("start: A\nA: /a(?=b)/\n", R, Some((2, 4)), "lookaround"),
            ("start: A\nA: /(a)\\1/\n", R, Some((2, 4)), "backreference"),
            ("start: A\nA: /a[/\n", R, Some((2, 1)), "invalid regex"),
            (
                "start: A\nA: \"a\"*\n",
                G,
                Some((2, 1)),
                "matches the empty string",
            ),
            ("start: \"\"\n", G, Some((1, 8)), "matches the empty string"),
            (
                "start: A\n%import common.NOPE -> A\n",
                G,
                Some((2, 16)),
                "no terminal 'NOPE'",
            ),
            (
                "start: A\n%import python.A\n",
                G,
                Some((2, 9)),
                "unknown module",
            ),
            ("start: A\n%declare A\n", G, Some((2, 1)), "not supported"),
            ("start: foo{x}\n", G, Some((1, 11)), "templates"),
            ("foo{x}: x\n", G, Some((1, 4)), "templates"),
            ("start: \"a\" ~ 5..2\n", G, Some((1, 12)), "5 > 2"),
            ("start: \"a\" ~ 100000\n", G, Some((1, 12)), "too large"),
            ("start: \"b\"..\"a\"\n", G, Some((1, 8)), "empty range"),
            (
                "start: \"ab\"..\"c\"\n",
                G,
                Some((1, 8)),
                "single character",
            ),
            ("start: \"a\nb\"\n", G, Some((1, 8)), "unterminated string"),
            ("start: /a\n", G, Some((1, 8)), "unterminated regex"),
            (
                "start: \"a\"\nstart: \"b\"\n",
                G,
                Some((2, 1)),
                "more than once",
            ),
            (
                "start: a\na: \"x\" : \"y\"\n",
                G,
                Some((2, 8)),
                "expected end of line",
            ),
            ("start: \"a\" $\n", G, Some((1, 12)), "unexpected character"),
            (
                "start: A\nA: a\na: \"x\"\n",
                G,
                Some((2, 4)),
                "cannot reference rule",
            ),
            ("start: A\nA: /x/q\n", G, Some((2, 4)), "unknown regex flag"),
            (
                "start: \"a\"\n%frobnicate\n",
                G,
                Some((2, 1)),
                "unknown directive",
            ),
            ("main: \"a\"\n", G, None, "unknown start rule 'start'"),
        ];
        for (src, kind, pos, msg) in cases {
            let e = parse(src, None).expect_err(src);
            assert_eq!(e.kind(), *kind, "{src:?}: {e}");
            assert_eq!(e.position(), *pos, "{src:?}: {e}");
            assert!(e.message().contains(msg), "{src:?}: {e}");
        }
        let e = parse("start: \"a\"\n", Some("nope")).unwrap_err();
        assert!(e.message().contains("'nope'"));
    }

    #[test]
    fn deep_nesting_is_an_error() {
        let src = format!(
            "start: {}\"a\"{}\n",
            "(".repeat(100_000),
            ")".repeat(100_000)
        );
        assert!(parse(&src, None)
            .unwrap_err()
            .message()
            .contains("nested too deeply"));
        let src = format!(
            "start: {}\"a\"{}\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert!(parse(&src, None).is_err());
        let mut src = String::from("start: T0\n");
        for k in 0..10_000 {
            src.push_str(&format!("T{k}: T{}\n", k + 1));
        }
        src.push_str("T10000: \"x\"\n");
        assert!(parse(&src, None)
            .unwrap_err()
            .message()
            .contains("too deeply"));
        let src = format!("start: \"a\"{}\n", "?".repeat(100_000));
        assert!(parse(&src, None).unwrap_err().message().contains("postfix"));
        let src = "start: ((\"a\" ~ 1000) ~ 1000) ~ 1000\n";
        assert_eq!(parse(src, None).unwrap_err().kind(), ErrorKind::SizeLimit);
    }

    #[test]
    fn exponential_terminal_is_an_error() {
        let mut src = String::from("start: T0\n");
        for k in 0..40 {
            src.push_str(&format!("T{k}: T{} T{}\n", k + 1, k + 1));
        }
        src.push_str("T40: \"x\"\n");
        assert_eq!(parse(&src, None).unwrap_err().kind(), ErrorKind::SizeLimit);
    }

    #[test]
    fn minimal_grouping() {
        let g = parse(
            "start: A\nA: (\"a\" | \"bc\")+ \"d\"? \"ef\"* B\nB: \"x\" | \"y\"\n",
            None,
        )
        .unwrap();
        assert_eq!(g.terminals[0].pattern, "(?:a|bc)+d?(?:ef)*(?:x|y)");
    }

    #[test]
    fn display_round_trips() {
        let srcs = [
            JSON,
            "start: \"\\n\" \"\\\"\" (a | b)* [a b] a+ |\na: \"x\"i /y\\/z/\nb: \"\\t\"..\"\\r\" B\nB: \"/\"\n%ignore \" \"\n",
        ];
        for src in srcs {
            let g = parse(src, None).unwrap();
            let text = g.to_string();
            let h = parse(&text, None).unwrap_or_else(|e| panic!("{e}\n{text}"));
            assert_eq!(h.rules.len(), g.rules.len(), "{text}");
            assert_eq!(h.terminals.len(), g.terminals.len(), "{text}");
            assert_eq!(h.ignore.len(), g.ignore.len(), "{text}");
            let stats = |g: &Grammar| crate::grammar::Cfg::from_grammar(g).map(|c| c.stats());
            assert_eq!(stats(&h), stats(&g));
        }
    }

    proptest::proptest! {
        #[test]
        fn never_panics(src in "([a-cA-C_?!%|:()\\[\\]*+~.\" /0-9\n-]|start|ignore|import|common|WS|->|\\.\\.){0,40}") {
            if let Ok(g) = parse(&src, None) {
                let _ = crate::grammar::Cfg::from_grammar(&g);
                let _ = g.to_string();
            }
        }
    }

    #[test]
    fn python_regex_translation() {
        let g = parse(
            "start: A B C\nA: /[[a]{2}x{/\nB: /[a&&b~~c]+/\nC: /a{2,3}}/\n",
            None,
        )
        .unwrap();
        assert!(full_match(&term(&g, "A").pattern, "[ax{"));
        assert!(full_match(&term(&g, "B").pattern, "&~"));
        assert!(full_match(&term(&g, "C").pattern, "aaa}"));
        let g = parse(
            "start: D\nD: /x{,2}y/\n%import common.WS\n%import common.WS\n",
            None,
        )
        .unwrap();
        assert!(
            full_match(&term(&g, "D").pattern, "xxy") && full_match(&term(&g, "D").pattern, "y")
        );
    }

    #[test]
    fn hash_comments() {
        let g = parse("# a comment\nstart: \"#\" /#+/ # another\n", None).unwrap();
        assert_eq!(g.terminals.len(), 2);
    }

    #[test]
    fn public_lark_files() {
        let Some(dir) =
            crate::test_shared::dir("grammars-public/lark-syncode", "public_lark_files")
        else {
            return;
        };
        let rd = std::fs::read_dir(&dir).unwrap();
        let mut paths: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "lark"))
        {
            let src = std::fs::read_to_string(p).unwrap();
            match parse(&src, None) {
                Ok(g) => println!(
                    "{}: ok, {} rules, {} terminals",
                    p.display(),
                    g.rules.len(),
                    g.terminals.len()
                ),
                Err(e) => {
                    assert!(
                        e.position().is_some() || e.message().contains("start rule"),
                        "{}: {e}",
                        p.display()
                    );
                    println!("{}: {e}", p.display());
                }
            }
        }
    }
}

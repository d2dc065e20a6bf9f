//! Grammars: the surface form parsed from a file, and the C2F+ε normal form
//! the emptiness search works on.
//!
//! Grammars are read from the Lark dialect ([`lark`]) or llama.cpp's GBNF
//! ([`gbnf`]); [`Grammar::from_file_text`] picks by file name.
//!
//! A [`Grammar`] is what a user wrote, with every terminal resolved to one
//! regular expression (a pattern string in `regex-syntax` syntax) and every rule
//! an [`Expr`] tree over terminals and rules. Literal strings used inside rules
//! become anonymous terminals (identical literals share one terminal, and reuse
//! a named terminal defined as exactly that literal, as Lark does).

pub mod ast;
pub mod gbnf;
pub mod lark;
pub mod normal;
pub mod schema;

pub use ast::{Expr, Grammar, Rule, RuleId, TermId, Terminal};
pub use normal::{Cfg, NtId, Sym};
pub use schema::{json_schema_to_grammar, PropertyOrder, SchemaOptions, Unenforced};

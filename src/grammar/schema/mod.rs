//! JSON Schema (draft 2020-12, as used in practice) to [`Grammar`].
//!
//! [`json_schema_to_grammar`] builds the grammar value directly: terminals
//! are `regex-syntax` patterns for JSON tokens (punctuation, literals, strings
//! and numbers, possibly restricted), rules are [`Expr`] trees, one rule per
//! schema location (so `$ref` recursion is simply a recursive rule), and JSON
//! whitespace is an ignored `WS` terminal. The general `STRING` and `NUMBER`
//! terminals are always present, so maximal munch splits a text into exactly
//! the JSON tokens whatever the schema restricts.
//!
//! # What is enforced, exactly or approximately
//!
//! * `type` (string or list; `integer` accepts `3` and `3.0`, not `3e0`),
//!   `null`, booleans, `true`/`false` schemas, `{}` = any JSON value.
//! * `properties`, `required`, `additionalProperties` (`false`, `true`,
//!   absent or a schema): members **in any order** (see [Property
//!   order](#property-order)), each declared property at most once, every
//!   required one present, extra properties (when allowed) anywhere between
//!   them. Extra keys are any JSON string whose unescaped text is not a
//!   declared name in its canonical spelling, escapes included (a key
//!   spelled otherwise, `"\u0061"` for `"a"`, counts as different from
//!   every declared name — an over-approximation); an extra key may repeat
//!   (no context-free grammar can exclude that for unbounded key sets). Declared keys are
//!   accepted only in their canonical JSON spelling (`serde_json`'s
//!   escaping). Names in `required` that are not declared are added to the
//!   declared ones with the `additionalProperties` schema.
//! * `items`, `prefixItems` (and the draft-7 array form of `items` with
//!   `additionalItems`), `minItems`/`maxItems` by explicit expansion; bounds
//!   above [`SchemaOptions::max_items`] are widened (reported).
//! * `contains` / `minContains` / `maxContains` when the contains schema is
//!   a type test (`{"type": T}`, `true`, `false`) or has a complement (as
//!   for `not` below: `{"minimum": 5}`, `{"const": 1}`, `{"maxLength":
//!   3}`, …) and there are no `prefixItems`: each item is a matching one
//!   (`items` ∧ `C`) or not (`items` ∧ ¬`C`), and rules counting items and
//!   matches (capped, with `minItems`/`maxItems`) enforce the bounds
//!   exactly; see `Builder::contains_array`. Other contains schemas
//!   (`multipleOf`, a string `const`, …), bounds above
//!   [`SchemaOptions::max_items`] and `prefixItems` are reported.
//! * `enum`, `const`: any JSON value, serialised with object keys in the
//!   order of the schema value; whitespace allowed between tokens. Numbers
//!   must be written as `serde_json` writes them (integers may add `.0`).
//!   Values of the wrong `type` are dropped; other sibling keywords are not
//!   checked against the listed values (reported).
//! * `anyOf`; `oneOf`: exact when its branches (with the sibling
//!   keywords merged in) are pairwise disjoint by a sufficient test
//!   (`Builder::disjoint`: disjoint types, also from `enum`/`const`
//!   values; disjoint value lists; or only objects in common and a
//!   property required by both with disjoint schemas, e.g. a
//!   discriminating `"kind": {"const": ...}`), since it is then `anyOf`;
//!   or, for up to 8 overlapping branches that all have a complement (see
//!   `not` below), as `anyOf` over `i` of `B_i ∧ ¬B_j` (`j ≠ i`,
//!   `Builder::one_of_exactly`); otherwise treated as `anyOf` (exclusivity
//!   not enforced, reported);
//!   `allOf` by merging the subschemas (types intersected, properties and
//!   `required` united, bounds tightened, `enum`s intersected, differing
//!   subschemas of one keyword combined with a nested `allOf`); sibling
//!   keywords of `anyOf`/`oneOf` are merged into each branch. A keyword that
//!   cannot be merged is reported (an error in strict mode).
//! * `not` and `if`/`then`/`else` where the negated schema has a
//!   complement the other keywords express (`Builder::negate`): `type`
//!   ("number but not integer" as numbers with a nonzero fraction, no
//!   exponent: `FRACTION_ONLY`), `enum`/`const` of
//!   integers, `null` and booleans (the open intervals between the
//!   integers), bounds with integer values (`minimum`, `exclusiveMaximum`,
//!   …, `minLength`/`maxLength`, `minItems`/`maxItems`: the values beyond
//!   each bound, and the kinds the bounds do not apply to), `multipleOf`
//!   (the numbers that are not multiples, `NOT_MULTIPLE_OF`, with the
//!   schema's own `multipleOf` and bounds when it has one:
//!   [`multiple::not_pattern`]), `required`, `anyOf` of such branches, and one property whose schema has such a
//!   complement (`{"properties": {"kind": {"type": "string"}},
//!   "required": ["kind"]}`). Numbers in these complements are written
//!   without an exponent, as bounded numbers are. `not: N` becomes
//!   `allOf: [¬N]`; `if: C, then: T, else: E` becomes `anyOf: [C ∧ T, ¬C
//!   ∧ E]` (disjoint branches); the other forms (`not` of a string
//!   `const`, of `multipleOf` beside bounds alone, a bound that is not an integer, an `if` on
//!   a property's string value, …) and those holding a remote `$ref` are
//!   reported. Within `allOf`, two `not`s become one `not` of their
//!   `anyOf`, and conditionals of different subschemas are each rewritten
//!   as their `anyOf` before merging (a `then` applies only with the `if`
//!   beside it). The rewrite multiplies with the `anyOf`/`oneOf`
//!   around it: one rewrite may add at most 20,000 rules (`REWRITE_RULES`,
//!   else undone and reported), and a schema that passes a size limit with
//!   the rewrites is built again without them (`not`/`if` reported).
//! * `$schema` draft 4 or 3: `integer` has no fraction (`1.0` is not one).
//! * `$ref` to local JSON pointers (`#`, `#/$defs/a~1b`, percent-encoding) and
//!   to `$anchor`s; recursion allowed. Remote references are errors.
//! * `pattern`: ECMA regex with search semantics (see [`regex`]); lengths
//!   combine with a pattern only when the pattern is one repeated class
//!   (`^[a-z]+$`), otherwise the lengths are reported as not enforced.
//! * `format`: see [`format::content_regex`]; an unknown format is reported.
//!   A string with both `pattern` and `format` enforces the pattern only.
//! * `minLength`/`maxLength` as a counted repetition of one JSON string
//!   character (an unescaped character or one escape; a surrogate pair
//!   written as two `\u` escapes counts as two). Bounds above
//!   [`SchemaOptions::max_length`] are widened (reported).
//! * `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum` (also the
//!   draft-4 boolean form): exact for integers; for `number`, exact on
//!   numbers without exponent when the bounds are integers (a bound with a
//!   fraction is widened to the next integer for non-integer values,
//!   reported); a bounded number may not use an exponent.
//! * `multipleOf` (integer or decimal steps: `3`, `0.5`, `0.01`), together
//!   with the bounds above: exact on numbers without exponent, by one
//!   terminal whose regex is built from the minimised DFA of "value ×
//!   10^s is a multiple of p and within the bounds" (see [`multiple`]); the
//!   instance's decimal value counts (`0.07` is a multiple of `0.01`), not
//!   its nearest double. Steps `2`, `3`, `4`, `5`, `6`, `10`, `100`, `0.5`,
//!   `0.25`, `0.01` give patterns of 0.1–1 KB; a step whose pattern passes
//!   [`multiple::MAX_PATTERN_BYTES`] (`7`, `9`, `11`, most numerators
//!   coprime to 10 above 6, or wide bounds combined with such steps) or
//!   whose numerator passes [`multiple::MAX_NUMERATOR`] is reported as not
//!   enforced (the bounds alone are then enforced).
//! * `propertyNames` made of `type`, `enum`, `const`, `pattern`,
//!   `minLength`, `maxLength` (after `$ref`/`allOf` merging; other
//!   keywords in it are reported): a declared property whose name fails it
//!   cannot be written (a required one makes the object impossible);
//!   undeclared keys are the listed names (`enum`/`const`, minus the
//!   declared ones: exact) or the string terminal of the pattern and
//!   lengths (exact when no declared name passes the test; otherwise the
//!   undeclared keys are left unrestricted by it — "passes and is not
//!   declared" would need a regex intersection — reported as an
//!   approximation). With `patternProperties` it restricts declared
//!   properties only (reported).
//! * `dependentRequired` (and the draft-7 `dependencies` whose values are
//!   all arrays) by the any-order construction below: the closing `}` of
//!   `rest[S]` is allowed only when every trigger in `S` has its required
//!   names in `S`. Names it mentions that are not declared are declared
//!   with the `additionalProperties` schema (when extras are allowed); a
//!   trigger whose required name cannot be written (not declared and no
//!   extras, or failing `propertyNames`) cannot be written either (a
//!   required one makes the object impossible). Exact; reported where the
//!   object falls back to schema order or has `patternProperties`.
//! * `minProperties` / `maxProperties`: by the any-order construction
//!   below. On objects that allow no undeclared member
//!   (`additionalProperties: false`, no `patternProperties`) the set of
//!   members written is the whole object, so its size is known: exact. On
//!   other objects the rules also count the extra members written, up to
//!   the larger bound (at most 64, else reported): `maxProperties` exact (a
//!   key written twice counts twice, stricter than a validator that keeps
//!   one), `minProperties` reported as approximate (a repeated extra key
//!   counts once per occurrence, so `{"k":0,"k":0}` has two members here).
//!
//! * `unevaluatedProperties` / `unevaluatedItems` where the members and
//!   items they apply to follow from the schema: beside `properties`,
//!   `patternProperties`, `prefixItems`, `contains` and through `$ref` /
//!   `allOf` (nested ones see only their own subschema), and beside
//!   `anyOf`/`oneOf` whose branches are disjoint, name the same members,
//!   or include one that accepts everything and names all the others do;
//!   see the source of the `unevaluated` submodule. Beside overlapping branches they are approximated
//!   (reported); beside `not`/`if` approximated, beside `dependentSchemas`
//!   not enforced (reported).
//! * `additionalProperties` and `items` of a schema merged with `allOf`
//!   subschemas apply to the members and items only those declare (a
//!   subschema's do not see the others' `properties`): exact.
//!
//! Everything else that constrains (`uniqueItems`, `patternProperties`, `dependentSchemas`,
//! …) is not enforced:
//! it is an error with [`SchemaOptions::strict`], otherwise it is listed in
//! the returned [`Unenforced`] entries (`cdiff check --explain` prints them).
//! Annotations (`title`, `description`, `default`, `examples`, `$schema`,
//! `$id`, `$comment`, …) are ignored silently; unknown keywords are listed
//! as approximations (they have no effect in draft 2020-12).
//!
//! # Property order
//!
//! JSON Schema does not order the members of an object. With
//! [`PropertyOrder::Any`] (the default) an object with `n` declared
//! properties (plus required names that are not declared) gets one
//! nonterminal per set `S` of the properties written so far:
//! `rest[S]` derives the members after those, each a declared property not
//! in `S` (then `rest[S ∪ {i}]`) or an extra one (then `rest[S]`), and may
//! end (the closing `}`) only when `S` holds every required property; see
//! `Builder::any_order_object`. The grammar is exact and unambiguous (the
//! key terminals are disjoint), but it has `2^n + n + 1` rules with about
//! `n·2^(n-1)` alternatives: the language "each of `n` keys at most once,
//! in any order" has no polynomial-size context-free grammar, so this is
//! bounded. An object with more than [`SchemaOptions::max_any_order_properties`]
//! properties (default 12) keeps the construction for its required
//! properties (and the names `dependentRequired` mentions) and the first
//! optional ones, [`FALLBACK_TRACKED`] in all; its other optional
//! properties are written like extra members: in any order between the
//! others, but not limited to one occurrence. That over-approximation is
//! reported for `properties` at the object's JSON pointer (`cdiff check
//! --explain` lists it), and no valid instance is rejected by it. Only an
//! object with more required properties than the limit, or whose `2^n`
//! rules for them would pass [`SchemaOptions::max_rules`], falls back to
//! schema order (reported too). Objects with fewer than two members that
//! could be swapped are the same in both orders.
//!
//! On maskbench-dev, 15 schemas have objects of 13–163 properties with at
//! most 6 required ones; 21 of their valid instances were rejected when
//! such objects fell back to schema order, none is now. Tracking 12 instead
//! of 8 properties there rejected no further invalid instance and raised
//! the compile time p95 from 138 to 198 ms.
//!
//! Measured (`tests/json_schema.rs`, `any_order_cost`; one object of `n`
//! integer properties, half of them required): `n = 12` gives 4,121 rules,
//! about 20 ms for [`crate::Constraint::compile`] and a median check of
//! about 0.1 ms with 1–2 holes; `n = 14` gives 16,413 rules, about 90 ms to
//! compile, and checks of up to 10 ms; `n = 8` compiles in 1–16 ms. The
//! engine's check time barely grows with `n`; the compile time and the
//! grammar size do.
//!
//! [`PropertyOrder::Schema`] keeps the declared properties in schema order
//! (optional ones omissible) with extra properties after them: `2n` rules,
//! a smaller and more deterministic grammar (e.g. for autoregressive
//! generation), which rejects instances written in another order.
//!
//! # Lexer size
//!
//! [`crate::Constraint::compile`] builds one DFA of all the grammar's
//! terminals (the lexer); every string terminal a schema makes (keys,
//! patterns, formats, lengths, enums) starts with `"` and runs in parallel
//! with the others inside a string, so the DFA is their product. On
//! `maskbench-dev` (1,121 schemas) 33 schemas passed the lexer's limit of
//! 200,000 DFA states and 106 needed more than 20,000; what blew up, and
//! what is done about it:
//!
//! * Copies of equivalent NFA states, not the languages: the subset DFA of
//!   the union of all terminals was 30–100 times its minimal size
//!   (`Github_easy---o28187`: 61,625 states for 735, from one `EXTRA_KEY`
//!   terminal — any key but the declared names — next to one
//!   `maxLength: 45` string). The `EXTRA_KEY` regex had a copy of "any
//!   further characters" (and of the UTF-8 and `\u` sequences of the
//!   character leaving the names) per trie node; it now has one
//!   (`Builder::extra_key_term`), and [`ByteDfa::from_patterns`]
//!   minimises each terminal alone and runs the minimal DFAs in parallel.
//!   Exact; with these all 33 schemas fit the lexer's limit.
//! * Real products: a `maxLength: 255` string counts 255 characters while
//!   search patterns (`"pattern": "pull|push"`, read as
//!   `.*(pull|push).*`) and formats follow their own progress
//!   (`JsonSchemaStore---ci.json`: 164,718 minimal states, 18 s to
//!   compile). A schema whose terminal automaton needs more than
//!   [`STRING_DFA_LIMIT`] states is built again with its largest
//!   restricted string terminal (by the states of its own minimal DFA)
//!   relaxed to any JSON string, until it fits: `pattern`, `format`,
//!   `minLength`, `maxLength` of every schema location using that terminal
//!   are then reported as not enforced (never silently; in strict mode
//!   nothing is relaxed). Relaxing only enlarges the language: valid
//!   instances stay accepted. On `maskbench-dev` 3 schemas are relaxed
//!   (`Github_hard---o21075`, `Github_medium---o21142`, `ci.json`; 14
//!   `pattern`, 13 `minLength`, 7 `maxLength` locations); no schema that
//!   compiled before is.
//! * A `$ref` cycle through a merge (`{"allOf": [{"$ref":
//!   "#/definitions/Foo"}], "type": "object"}` inside `Foo`) was unfolded
//!   at ever longer made-up pointers until [`SchemaOptions::max_depth`] (4
//!   schemas): merged schemas are memoised by content
//!   (`Builder::merged_rule`), so the cycle is a recursive rule. The depth
//!   limit stays for schemas that really are that deep (a typed
//!   [`ErrorKind::SizeLimit`] error, no stack overflow).
//!
//! Compile time (grammar and [`crate::Constraint::compile`], all 1,121
//! schemas, one core): p50 19 → 3.5 ms, p95 1.7 s → 132 ms, max 22 s →
//! 1.5 s.

pub mod format;
pub mod multiple;
pub mod number;
pub mod regex;
mod unevaluated;

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use crate::automata::dfa::DEFAULT_DFA_LIMIT;
use crate::automata::ByteDfa;

use crate::error::{Error, ErrorKind, Result};
use crate::grammar::{Expr, Grammar, Rule, RuleId, TermId, Terminal};

/// Options of [`json_schema_to_grammar`].
#[derive(Clone, Debug)]
pub struct SchemaOptions {
    /// Fail on a keyword that is not enforced instead of listing it.
    pub strict: bool,
    /// Largest `minItems`/`maxItems` expanded; larger bounds are widened.
    pub max_items: u64,
    /// Largest `minLength`/`maxLength` expanded; larger bounds are widened.
    pub max_length: u64,
    /// Deepest nesting of schemas (and of `enum`/`const` values) accepted.
    pub max_depth: usize,
    /// Most grammar rules generated.
    pub max_rules: usize,
    /// In which order the members of an object may be written.
    pub property_order: PropertyOrder,
    /// With [`PropertyOrder::Any`]: the most properties (declared ones plus
    /// required names that are not declared) of one object that get the
    /// exact any-order construction, which costs `2^n` rules (see
    /// [the module documentation](self#property-order)). Objects with more
    /// track their required properties and [`FALLBACK_TRACKED`] in all; the
    /// others may repeat (reported as an approximation). Values above
    /// [`MAX_ANY_ORDER_PROPERTIES`] act as that.
    pub max_any_order_properties: usize,
}

/// Hard cap of [`SchemaOptions::max_any_order_properties`]: `2^16` rules
/// for one object.
pub const MAX_ANY_ORDER_PROPERTIES: usize = 16;

/// How many properties of an object with more than
/// [`SchemaOptions::max_any_order_properties`] are tracked (at most once
/// each) when none must be: the required ones (and `dependentRequired`
/// names) always are, then optional ones up to this count; the others are
/// written like extra members. Tracking more rejects no more of
/// maskbench-dev's invalid instances but costs `2^n` rules.
pub const FALLBACK_TRACKED: usize = 8;

/// In which order the members of a JSON object may be written (JSON Schema
/// itself does not order them).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum PropertyOrder {
    /// Any order, each declared property at most once, extra properties
    /// (when allowed) anywhere between them: the JSON Schema semantics.
    /// Exact up to [`SchemaOptions::max_any_order_properties`] properties
    /// per object; in larger objects optional properties past
    /// [`FALLBACK_TRACKED`] may repeat, and only an object with more
    /// required properties than the limit falls back to
    /// [`PropertyOrder::Schema`] (both reported).
    #[default]
    Any,
    /// Declared properties in the order of the schema, extra properties
    /// after them: a smaller grammar (e.g. for autoregressive generation),
    /// which rejects valid instances written in another order.
    Schema,
}

impl Default for SchemaOptions {
    fn default() -> SchemaOptions {
        SchemaOptions {
            strict: false,
            max_items: 64,
            max_length: 256,
            max_depth: 200,
            max_rules: 100_000,
            property_order: PropertyOrder::Any,
            max_any_order_properties: 12,
        }
    }
}

/// A schema keyword that the grammar does not (or only approximately)
/// enforce.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unenforced {
    /// The keyword, e.g. `multipleOf`.
    pub keyword: String,
    /// JSON pointer of the schema holding it (`#/properties/a`).
    pub pointer: String,
    /// What happens instead.
    pub reason: String,
    /// `true` for a documented approximation (enforced in part), `false` for
    /// a keyword that is ignored altogether.
    pub approximate: bool,
}

impl std::fmt::Display for Unenforced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} at {}: {}{}",
            self.keyword,
            self.pointer,
            if self.approximate {
                "approximated: "
            } else {
                "not enforced: "
            },
            self.reason
        )
    }
}

/// Keywords that never constrain an instance.
const ANNOTATIONS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "example",
    "$schema",
    "$id",
    "id",
    "$comment",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "$defs",
    "definitions",
];

/// Keywords handled by this module.
const HANDLED: &[&str] = &[
    "type",
    FRACTION_ONLY,
    NOT_MULTIPLE_OF,
    EXTRA_MEMBER,
    "properties",
    "required",
    "additionalProperties",
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "enum",
    "const",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
    "pattern",
    "format",
    "minLength",
    "maxLength",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "propertyNames",
    "dependentRequired",
    "contains",
    "minContains",
    "maxContains",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// Known keywords that constrain and are not enforced.
const NOT_ENFORCED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "uniqueItems",
    "patternProperties",
    "minProperties",
    "maxProperties",
    "dependentSchemas",
    "dependencies",
    "$dynamicRef",
    "$recursiveRef",
    "$recursiveAnchor",
];

/// Whether `name` is a draft 2020-12 keyword that constrains an instance,
/// enforced here or not (`type`, `properties`, `not`, ...): not an
/// annotation (`title`, `$defs`, ...) and not an unknown member. An object
/// with none of them accepts every JSON value, which is how a schema wrapped
/// in another document (`{"schema": {...}, "tests": [...]}`) reads.
pub fn is_constraining_keyword(name: &str) -> bool {
    HANDLED.contains(&name) || NOT_ENFORCED.contains(&name)
}

const STRING_RE: &str = r#""(?:[^"\\\x00-\x1F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*""#;
const CHAR_RE: &str = r#"(?:[^"\\\x00-\x1F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))"#;
const NUMBER_RE: &str = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?";
/// Numbers with a nonzero fraction, no exponent: the non-integers of a
/// complement (see [`FRACTION_ONLY`]).
const FRACTION_RE: &str = r"-?(?:0|[1-9][0-9]*)\.[0-9]*[1-9][0-9]*";
/// Draft 4: every number with a fraction is a non-integer (`1.0` too).
const FRACTION_RE_DRAFT4: &str = r"-?(?:0|[1-9][0-9]*)\.[0-9]+";

/// A keyword of cdiff's own, only in schemas it makes: `true` restricts the
/// numbers to non-integers ("number but not integer", which has no type
/// name), written without an exponent like bounded numbers. Complements
/// use it (`not: {type: integer}`).
const FRACTION_ONLY: &str = "$cdiff:fractionOnly";
/// A keyword of cdiff's own, only in complements it makes: the numbers
/// (of the schema's numeric type) that are *not* multiples of its value,
/// written without an exponent (`not: {multipleOf: 3}`; see
/// [`multiple::not_pattern`]).
const NOT_MULTIPLE_OF: &str = "$cdiff:notMultipleOf";
/// A keyword of cdiff's own, only in complements it makes: the objects
/// with at least one member whose name is not in its list (`not:
/// {properties: {a: true}, additionalProperties: false}`).
const EXTRA_MEMBER: &str = "$cdiff:extraMemberNotIn";
const INTEGER_RE: &str = r"-?(?:0|[1-9][0-9]*)(?:\.0+)?";
/// Draft 4 (and 3) integers: no fraction at all (`1.0` is not an integer).
const INTEGER_RE_DRAFT4: &str = r"-?(?:0|[1-9][0-9]*)";

impl Grammar {
    /// The grammar of the JSON texts valid for `schema` (see
    /// [`crate::grammar::schema`]), in strict mode: a keyword that is not
    /// enforced is an error naming it and its JSON pointer. Documented
    /// approximations are not errors (widened bounds, optional properties
    /// of an object with more than
    /// [`SchemaOptions::max_any_order_properties`] properties that may
    /// repeat); [`json_schema_to_grammar`] lists them.
    ///
    /// ```
    /// use cdiff::{Constraint, Grammar, Partial};
    /// let schema = serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 12}},
    ///     "required": ["n"],
    ///     "additionalProperties": false
    /// });
    /// let c = Constraint::compile(&Grammar::from_json_schema(&schema)?)?;
    /// assert!(c.check(&Partial::complete(r#"{"n": 12}"#))?);
    /// assert!(!c.check(&Partial::complete(r#"{"n": 13}"#))?);
    /// assert!(c.check(&Partial::new().text(r#"{"n": 1"#).hole())?);
    /// # Ok::<(), cdiff::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`ErrorKind::Grammar`] for an invalid or unsupported schema,
    /// [`ErrorKind::SizeLimit`] for a schema too deep or too large.
    pub fn from_json_schema(schema: &Value) -> Result<Grammar> {
        let opts = SchemaOptions {
            strict: true,
            ..SchemaOptions::default()
        };
        Ok(json_schema_to_grammar(schema, &opts)?.0)
    }

    /// [`Grammar::from_json_schema`] on schema text.
    ///
    /// # Errors
    /// As [`Grammar::from_json_schema`], and for text that is not JSON.
    pub fn from_json_schema_str(schema: &str) -> Result<Grammar> {
        let v: Value = crate::jsontext::parse(schema)
            .map_err(|e| Error::new(ErrorKind::Grammar, format!("schema is not JSON: {e}")))?;
        Grammar::from_json_schema(&v)
    }
}

/// Builds the grammar of `schema` and lists the keywords it does not enforce
/// (empty in strict mode, where they are errors).
///
/// # Errors
/// As [`Grammar::from_json_schema`].
pub fn json_schema_to_grammar(
    schema: &Value,
    opts: &SchemaOptions,
) -> Result<(Grammar, Vec<Unenforced>)> {
    let mut relax = HashSet::new();
    // The minimal DFA of each terminal, kept from one try to the next.
    let mut parts: HashMap<String, ByteDfa> = HashMap::new();
    loop {
        let built = build_with_fallbacks(schema, opts, &relax)?;
        if opts.strict {
            // Nothing may be relaxed: a schema past the limit fails to compile.
            return Ok((built.grammar, built.notes));
        }
        let patterns: Vec<&str> = built
            .grammar
            .terminals
            .iter()
            .map(|t| t.pattern.as_str())
            .collect();
        match ByteDfa::from_patterns_with(&patterns, STRING_DFA_LIMIT, &mut parts) {
            Err(e) if e.kind() == ErrorKind::SizeLimit => {
                let Some(ptrs) = largest_string_terminal(&built, &relax, &mut parts) else {
                    return Ok((built.grammar, built.notes));
                };
                relax.extend(ptrs);
            }
            // Fits; other errors are the lexer's to report.
            _ => return Ok((built.grammar, built.notes)),
        }
    }
}

/// The pointers of the largest restricted string terminal of `built` (by
/// the states of its own minimal DFA) that are not relaxed yet; `None` when
/// every one is. `parts` holds the minimal DFAs by pattern.
fn largest_string_terminal(
    built: &Built,
    relax: &HashSet<String>,
    parts: &mut HashMap<String, ByteDfa>,
) -> Option<Vec<String>> {
    let mut best: Option<(usize, TermId)> = None;
    for (t, ptr) in &built.string_terms {
        if relax.contains(ptr) {
            continue;
        }
        let pattern = &built.grammar.terminals[t.0 as usize].pattern;
        // A pattern alone past the limit is the largest there is.
        let size = ByteDfa::pattern_part(pattern, STRING_DFA_LIMIT, parts)
            .map_or(usize::MAX, ByteDfa::len);
        // Ties: the first built, for a deterministic choice.
        if best.is_none_or(|(s, _)| size > s) {
            best = Some((size, *t));
        }
    }
    let (_, t) = best?;
    Some(
        built
            .string_terms
            .iter()
            .filter(|(u, _)| *u == t)
            .map(|(_, p)| p.clone())
            .collect(),
    )
}

/// Most states of the terminal automaton of a schema's grammar (before
/// minimisation) built without relaxing string terminals (see [*Lexer
/// size*](self#lexer-size)); a quarter of the lexer's own limit
/// ([`DEFAULT_DFA_LIMIT`]): the lexer built on such an automaton takes
/// seconds (`JsonSchemaStore---ci.json`, 164,718 states: 18 s), and no
/// `maskbench-dev` schema that compiled before needs more.
pub const STRING_DFA_LIMIT: usize = DEFAULT_DFA_LIMIT / 4;

/// A grammar built, with its notes and its restricted string terminals.
struct Built {
    grammar: Grammar,
    notes: Vec<Unenforced>,
    string_terms: Vec<(TermId, String)>,
}

/// [`build`] with the `not`/`if` rewrites, and without them past a size
/// limit: the rewrites multiply with the `anyOf`/`oneOf` around them, so a
/// schema that passes a size limit with them is built again without (they
/// are then reported, as before they were enforced).
fn build_with_fallbacks(
    schema: &Value,
    opts: &SchemaOptions,
    relax: &HashSet<String>,
) -> Result<Built> {
    match build(schema, opts, true, relax) {
        Err(e) if e.kind() == ErrorKind::SizeLimit => {
            let mut b = build(schema, opts, false, relax).map_err(|_| e)?;
            for n in &mut b.notes {
                if ["not", "if"].contains(&n.keyword.as_str()) && n.reason == "ignored" {
                    n.reason = "ignored: the schema with it rewritten passes a size limit".into();
                }
            }
            Ok(b)
        }
        r => r,
    }
}

/// The grammar of `schema`, with or without the `not`/`if` rewrites, with
/// the string schemas at `relax` built as any JSON string.
fn build(
    schema: &Value,
    opts: &SchemaOptions,
    rewrite: bool,
    relax: &HashSet<String>,
) -> Result<Built> {
    let mut b = Builder {
        root: schema,
        opts,
        terms: Vec::new(),
        term_ix: HashMap::new(),
        rules: Vec::new(),
        memo: HashMap::new(),
        unenforced: Vec::new(),
        depth: 0,
        any: None,
        draft4_integers: schema
            .get("$schema")
            .and_then(Value::as_str)
            .is_some_and(|u| u.contains("draft-04") || u.contains("draft-03")),
        rule_cap: usize::MAX,
        rewrite,
        relax,
        string_terms: Vec::new(),
    };
    // Fixed terminals first: their ids are stable and STRING/NUMBER make the
    // lexer split texts into JSON tokens.
    let ws = b.term("WS", "[ \\t\\n\\r]+");
    b.term("STRING", STRING_RE);
    b.term("NUMBER", NUMBER_RE);
    let start = b.schema_rule(schema, "#")?;
    let mut seen = std::collections::HashSet::new();
    b.unenforced
        .retain(|u| seen.insert((u.keyword.clone(), u.pointer.clone(), u.reason.clone())));
    let grammar = Grammar {
        terminals: b.terms,
        rules: b.rules,
        ignore: vec![ws],
        start,
    };
    Ok(Built {
        grammar,
        notes: b.unenforced,
        string_terms: b.string_terms,
    })
}

/// Escapes a JSON pointer token.
fn ptr_token(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

fn err(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Grammar, msg)
}

/// Decodes `%XX` sequences of a URI fragment.
fn percent_decode(s: &str) -> Result<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| err(format!("bad percent-encoding in $ref {s:?}")))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| err(format!("$ref {s:?} is not UTF-8")))
}

struct Builder<'a> {
    root: &'a Value,
    opts: &'a SchemaOptions,
    terms: Vec<Terminal>,
    term_ix: HashMap<String, TermId>,
    rules: Vec<Rule>,
    memo: HashMap<String, RuleId>,
    unenforced: Vec<Unenforced>,
    depth: usize,
    any: Option<RuleId>,
    /// The root declares draft 4 or 3 (`$schema`): integers have no
    /// fraction (`1.0` is a number, not an integer).
    draft4_integers: bool,
    /// A tighter rule limit while a rewritten `not`/`if` is built (see
    /// [`REWRITE_RULES`]).
    rule_cap: usize,
    /// Whether `not`/`if` are rewritten (see `Builder::rewrite_not_if`).
    rewrite: bool,
    /// Pointers of string schemas built as any JSON string (see
    /// [*Lexer size*](self#lexer-size)).
    relax: &'a HashSet<String>,
    /// The restricted string terminals built, with the pointer of the
    /// schema of each use.
    string_terms: Vec<(TermId, String)>,
}

/// Most grammar rules one rewritten `not` / `if` may add: its `anyOf`
/// multiplies with the `anyOf`/`oneOf` around it, and an object schema is
/// built once per branch. Past it the keyword is reported instead.
const REWRITE_RULES: usize = 20_000;

/// The builder's sizes, to undo a construction that passed a limit.
struct Snapshot {
    rules: usize,
    terms: usize,
    unenforced: usize,
    string_terms: usize,
    any: Option<RuleId>,
    depth: usize,
}

/// The JSON types, in the order alternatives are generated.
const TYPES: [&str; 7] = [
    "null", "boolean", "object", "array", "string", "number", "integer",
];

impl<'a> Builder<'a> {
    fn term(&mut self, name: &str, pattern: &str) -> TermId {
        if let Some(&t) = self.term_ix.get(pattern) {
            return t;
        }
        let t = TermId(self.terms.len() as u32);
        let name = if name.starts_with('"') {
            name.to_string()
        } else if self.terms.iter().any(|x| x.name == name) {
            format!("{name}_{}", self.terms.len())
        } else {
            name.to_string()
        };
        self.terms.push(Terminal {
            name,
            pattern: pattern.to_string(),
        });
        self.term_ix.insert(pattern.to_string(), t);
        t
    }

    /// A terminal for the exact text `s`.
    fn lit(&mut self, s: &str) -> Expr {
        let name = serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"));
        Expr::Term(self.term(&name, &regex_syntax::escape(s)))
    }

    /// Reports `minProperties` / `maxProperties` of `m` as not enforced (an
    /// object in schema order, or whose counting rules would be too many).
    fn report_counts(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<()> {
        for k in ["minProperties", "maxProperties"] {
            let trivial = k == "minProperties" && m.get(k).and_then(Value::as_u64) == Some(0);
            if m.contains_key(k) && !trivial {
                self.report(
                    k,
                    ptr,
                    "ignored (enforced on objects in any order, counting extra members \
                     up to 64 within the rule limit)",
                    false,
                )?;
            }
        }
        Ok(())
    }

    fn report(
        &mut self,
        keyword: &str,
        pointer: &str,
        reason: impl Into<String>,
        approximate: bool,
    ) -> Result<()> {
        let reason = reason.into();
        if self.opts.strict && !approximate {
            return Err(err(format!(
                "keyword {keyword} at {pointer} is not supported: {reason}"
            )));
        }
        self.unenforced.push(Unenforced {
            keyword: keyword.to_string(),
            pointer: pointer.to_string(),
            reason,
            approximate,
        });
        Ok(())
    }

    fn new_rule(&mut self, name: String) -> Result<RuleId> {
        if self.rules.len() >= self.opts.max_rules.min(self.rule_cap) {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!(
                    "the schema needs more than {} grammar rules",
                    self.opts.max_rules.min(self.rule_cap)
                ),
            ));
        }
        self.rules.push(Rule {
            name,
            expr: Expr::Empty,
        });
        Ok(RuleId(self.rules.len() as u32 - 1))
    }

    fn enter(&mut self, ptr: &str) -> Result<()> {
        self.depth += 1;
        if self.depth > self.opts.max_depth {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!(
                    "schema nested deeper than {} levels at {ptr}",
                    self.opts.max_depth
                ),
            ));
        }
        Ok(())
    }

    /// The rule for the schema `v` at pointer `ptr` (memoised by pointer).
    fn schema_rule(&mut self, v: &Value, ptr: &str) -> Result<RuleId> {
        if let Some(&r) = self.memo.get(ptr) {
            return Ok(r);
        }
        let r = self.new_rule(format!("s{}", self.rules.len()))?;
        self.memo.insert(ptr.to_string(), r);
        self.enter(ptr)?;
        let e = self.schema_expr(v, ptr);
        self.depth -= 1;
        self.rules[r.0 as usize].expr = e?;
        Ok(r)
    }

    /// Resolves a local `$ref`: the target and its canonical pointer.
    fn resolve(&mut self, r: &str, at: &str) -> Result<(&'a Value, String)> {
        let root = self.root;
        let Some(frag) = r.strip_prefix('#') else {
            // A reference to the document itself by its `$id`.
            let id = root.get("$id").and_then(Value::as_str);
            if let Some((base, frag)) = r.split_once('#') {
                if id == Some(base) {
                    return self.resolve(&format!("#{frag}"), at);
                }
            } else if id == Some(r) {
                return Ok((root, "#".into()));
            }
            return Err(err(format!("remote $ref {r:?} at {at} is not supported")));
        };
        let frag = percent_decode(frag)?;
        if frag.is_empty() {
            return Ok((root, "#".into()));
        }
        if let Some(path) = frag.strip_prefix('/') {
            let mut cur = root;
            let mut canon = String::from("#");
            for tok in path.split('/') {
                let key = tok.replace("~1", "/").replace("~0", "~");
                cur = match cur {
                    Value::Object(m) => m.get(&key),
                    Value::Array(a) => key.parse::<usize>().ok().and_then(|i| a.get(i)),
                    _ => None,
                }
                .ok_or_else(|| err(format!("$ref {r:?} at {at} points to nothing")))?;
                canon.push('/');
                canon.push_str(&ptr_token(&key));
            }
            return Ok((cur, canon));
        }
        // A plain-name fragment: an `$anchor`.
        find_anchor(root, &frag, "#".into(), 0)
            .ok_or_else(|| err(format!("$ref {r:?} at {at}: no $anchor {frag:?}")))
    }

    fn schema_expr(&mut self, v: &Value, ptr: &str) -> Result<Expr> {
        let m = match v {
            Value::Bool(true) => return Ok(Expr::Rule(self.any_value()?)),
            Value::Bool(false) => return Ok(Expr::Alt(Vec::new())),
            Value::Object(m) => m,
            _ => {
                return Err(err(format!(
                    "the schema at {ptr} is not an object or a boolean"
                )))
            }
        };
        let constraining = |k: &String| !ANNOTATIONS.contains(&k.as_str());
        // $ref: alone, a reference to the target's rule; with siblings, merged.
        if let Some(r) = m.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| err(format!("$ref at {ptr} is not a string")))?;
            let (target, tptr) = self.resolve(r, ptr)?;
            if m.keys().filter(|k| constraining(k)).count() == 1 {
                return Ok(Expr::Rule(self.schema_rule(target, &tptr)?));
            }
            let merged = self.flatten(v, ptr, 0)?;
            return self.merged_rule(&merged, &format!("{ptr}/$ref+"));
        }
        if m.contains_key("allOf") {
            let merged = self.flatten(v, ptr, 0)?;
            return self.merged_rule(&merged, &format!("{ptr}/allOf+"));
        }
        self.object_schema(m, ptr)
    }

    /// Inlines top-level `$ref`s and `allOf`s of `v` into one keyword map.
    fn flatten(&mut self, v: &Value, ptr: &str, depth: usize) -> Result<Map<String, Value>> {
        if depth > 32 {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!("$ref/allOf chain deeper than 32 at {ptr} (recursive allOf?)"),
            ));
        }
        let m = match v {
            Value::Bool(true) => return Ok(Map::new()),
            Value::Bool(false) => {
                let mut m = Map::new();
                m.insert("type".into(), Value::Array(Vec::new()));
                return Ok(m);
            }
            Value::Object(m) => m,
            _ => {
                return Err(err(format!(
                    "the schema at {ptr} is not an object or a boolean"
                )))
            }
        };
        let mut out = Map::new();
        for (k, x) in m {
            if k != "$ref" && k != "allOf" {
                out.insert(k.clone(), x.clone());
            }
        }
        if let Some(r) = m.get("$ref") {
            let r = r
                .as_str()
                .ok_or_else(|| err(format!("$ref at {ptr} is not a string")))?;
            let (target, tptr) = self.resolve(r, ptr)?;
            let t = self.flatten(target, &tptr, depth + 1)?;
            out = self.merge(out, t, ptr)?;
        }
        if let Some(all) = m.get("allOf") {
            let all = all
                .as_array()
                .ok_or_else(|| err(format!("allOf at {ptr} is not an array")))?;
            for (i, s) in all.iter().enumerate() {
                let t = self.flatten(s, &format!("{ptr}/allOf/{i}"), depth + 1)?;
                out = self.merge(out, t, ptr)?;
            }
        }
        Ok(out)
    }

    /// Merges two keyword maps as `allOf` would.
    fn merge(
        &mut self,
        mut a: Map<String, Value>,
        mut b: Map<String, Value>,
        ptr: &str,
    ) -> Result<Map<String, Value>> {
        // `b`'s own unevaluated* see only its members, not `a`'s.
        self.localize_unevaluated(&mut b, ptr)?;
        // Each side's additionalProperties / items apply to the members and
        // items only the other side declares.
        widen_for_merge(&mut a, &b);
        widen_for_merge(&mut b, &a);
        let conditional = |m: &Map<String, Value>| CONDITIONAL.iter().any(|k| m.contains_key(*k));
        if conditional(&a) && conditional(&b) {
            // `if`/`then`/`else` of two schemas do not combine (a `then`
            // here applies only with the `if` beside it): each becomes an
            // `anyOf` of its own first, doubling the branches; past
            // `MAX_CONDITIONAL_BRANCHES` the second is dropped (reported).
            let width = |m: &Map<String, Value>| {
                m.get("anyOf").and_then(Value::as_array).map_or(1, Vec::len)
            };
            // Without the rewrites (a size limit passed with them) neither
            // is enforced: dropped and reported like the first.
            if !self.rewrite
                || width(&a).saturating_mul(width(&b)).saturating_mul(4) > MAX_CONDITIONAL_BRANCHES
            {
                for k in CONDITIONAL {
                    b.remove(k);
                }
                self.report(
                    "if",
                    ptr,
                    format!(
                        "a conditional beside others in allOf is not combined past \
                         {MAX_CONDITIONAL_BRANCHES} branches"
                    ),
                    false,
                )?;
            } else {
                conditional_as_any_of(&mut a, ptr)?;
                conditional_as_any_of(&mut b, ptr)?;
            }
        }
        for (k, y) in b {
            let Some(x) = a.get(&k).cloned() else {
                a.insert(k, y);
                continue;
            };
            if x == y {
                continue;
            }
            let num = |v: &Value| v.as_f64();
            let merged = match k.as_str() {
                "type" => {
                    let tx = type_set(&x);
                    let ty = type_set(&y);
                    let mut out = Vec::new();
                    for t in TYPES {
                        let has = |s: &[String], t: &str| {
                            s.iter().any(|u| u == t)
                                || (t == "integer" && s.iter().any(|u| u == "number"))
                        };
                        if has(&tx, t)
                            && has(&ty, t)
                            && !(t == "integer" && out.iter().any(|u: &Value| u == "number"))
                        {
                            out.push(Value::String(t.into()));
                        }
                    }
                    Value::Array(out)
                }
                "properties" | "$defs" | "definitions" => {
                    let (Value::Object(mut px), Value::Object(py)) = (x, y) else {
                        return Err(err(format!("{k} at {ptr} is not an object")));
                    };
                    for (name, s) in py {
                        let v = match px.get(&name) {
                            Some(old) if *old != s => {
                                serde_json::json!({ "allOf": [old.clone(), s] })
                            }
                            Some(old) => old.clone(),
                            None => s,
                        };
                        px.insert(name, v);
                    }
                    Value::Object(px)
                }
                "required" => {
                    let mut r = x.as_array().cloned().unwrap_or_default();
                    for n in y.as_array().cloned().unwrap_or_default() {
                        if !r.contains(&n) {
                            r.push(n);
                        }
                    }
                    Value::Array(r)
                }
                "minimum" | "minLength" | "minItems" | "exclusiveMinimum"
                    if num(&x).is_some() && num(&y).is_some() =>
                {
                    if num(&x) >= num(&y) {
                        x
                    } else {
                        y
                    }
                }
                "maximum" | "maxLength" | "maxItems" | "exclusiveMaximum"
                    if num(&x).is_some() && num(&y).is_some() =>
                {
                    if num(&x) <= num(&y) {
                        x
                    } else {
                        y
                    }
                }
                "enum" => {
                    let ys = y.as_array().cloned().unwrap_or_default();
                    Value::Array(
                        x.as_array()
                            .cloned()
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|v| ys.contains(v))
                            .collect(),
                    )
                }
                "multipleOf" if multiple::lcm_value(&x, &y).is_some() => {
                    // Multiples of both: multiples of the least common one.
                    multiple::lcm_value(&x, &y).unwrap_or(x)
                }
                "const" => {
                    // Two different constants: nothing is valid.
                    a.remove("const");
                    a.insert("enum".into(), Value::Array(Vec::new()));
                    continue;
                }
                "anyOf" | "oneOf" => {
                    let xs = x.as_array().cloned().unwrap_or_default();
                    let ys = y.as_array().cloned().unwrap_or_default();
                    if xs.len() * ys.len() > 256 {
                        return Err(err(format!(
                            "allOf at {ptr}: combining two {k} lists gives more than 256 branches"
                        )));
                    }
                    let mut out = Vec::new();
                    for p in &xs {
                        for q in &ys {
                            out.push(serde_json::json!({ "allOf": [p, q] }));
                        }
                    }
                    Value::Array(out)
                }
                "prefixItems" if x.is_array() && y.is_array() => {
                    // Equal lengths after widening: item by item.
                    let (xs, ys) = (x.as_array().cloned(), y.as_array().cloned());
                    let (xs, ys) = (xs.unwrap_or_default(), ys.unwrap_or_default());
                    Value::Array(
                        xs.into_iter()
                            .zip(ys)
                            .map(|(p, q)| {
                                if p == q {
                                    p
                                } else {
                                    serde_json::json!({ "allOf": [p, q] })
                                }
                            })
                            .collect(),
                    )
                }
                "items" | "additionalProperties" | "additionalItems"
                    if !x.is_array() && !y.is_array() =>
                {
                    serde_json::json!({ "allOf": [x, y] })
                }
                // An undeclared member of both lists: one outside the
                // larger list, when one list holds the other.
                EXTRA_MEMBER if x.is_array() && y.is_array() => {
                    let (xs, ys) = (x.as_array().cloned(), y.as_array().cloned());
                    let (xs, ys) = (xs.unwrap_or_default(), ys.unwrap_or_default());
                    if ys.iter().all(|n| xs.contains(n)) {
                        x
                    } else if xs.iter().all(|n| ys.contains(n)) {
                        y
                    } else {
                        self.report(
                            "not",
                            ptr,
                            "two complements of additionalProperties: false over different \
                             names are not combined; the first is kept",
                            true,
                        )?;
                        x
                    }
                }
                // Neither one nor the other.
                "not" => serde_json::json!({ "anyOf": [x, y] }),
                _ if ANNOTATIONS.contains(&k.as_str()) => x,
                _ => {
                    self.report(
                        "allOf",
                        ptr,
                        format!("two different values of {k} cannot be merged; the first is kept"),
                        false,
                    )?;
                    x
                }
            };
            a.insert(k, merged);
        }
        Ok(a)
    }

    /// The rule of a schema made by merging (a `$ref` with sibling
    /// keywords, `allOf`, an `anyOf`/`oneOf` branch with the siblings
    /// merged in), memoised by its content. Its pointer is made up (`…/$ref+`)
    /// and the pointers below it grow with every merge, so memoising by
    /// pointer would not stop a `$ref` cycle through a merge — a property of
    /// the target that refers to the target with siblings again — from
    /// being unfolded until [`SchemaOptions::max_depth`] (4 maskbench-dev
    /// schemas failed so); by content, the cycle becomes a recursive rule.
    fn merged_rule(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        let key = format!(
            "merged:{}",
            serde_json::to_string(m).map_err(|e| err(format!("schema at {ptr}: {e}")))?
        );
        if let Some(&r) = self.memo.get(&key) {
            return Ok(Expr::Rule(r));
        }
        let r = self.new_rule(format!("s{}", self.rules.len()))?;
        self.memo.insert(key, r);
        let e = self.object_schema(m, ptr)?;
        self.rules[r.0 as usize].expr = e;
        Ok(Expr::Rule(r))
    }

    /// The grammar of a schema object without top-level `$ref`/`allOf`.
    fn object_schema(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        self.enter(ptr)?;
        let r = self.object_schema_inner(m, ptr);
        self.depth -= 1;
        r
    }

    fn object_schema_inner(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        if let Some(rewritten) = self.rewrite_not_if(m, ptr)? {
            self.check_unevaluated_conditionals(m, ptr)?;
            // Built within REWRITE_RULES more rules; past that (or another
            // size limit) undone, and `not`/`if` reported below instead.
            let snap = self.snapshot();
            let cap = self.rule_cap;
            self.rule_cap = cap.min(self.rules.len().saturating_add(REWRITE_RULES));
            let r = self.object_schema(&rewritten, &format!("{ptr}+"));
            self.rule_cap = cap;
            match r {
                Err(e) if e.kind() == ErrorKind::SizeLimit => {
                    self.restore(snap);
                    for k in ["not", "if"] {
                        if m.contains_key(k) {
                            self.report(
                                k,
                                ptr,
                                format!("its rewriting passes a size limit ({e})"),
                                false,
                            )?;
                        }
                    }
                }
                r => return r,
            }
        }
        // Keyword accounting.
        for k in m.keys() {
            let k = k.as_str();
            if ANNOTATIONS.contains(&k) || HANDLED.contains(&k) {
                continue;
            }
            let trivial = match (k, &m[k]) {
                ("uniqueItems", Value::Bool(false)) => true,
                // Accounted for where the members are built.
                ("minProperties" | "maxProperties", _) => true,
                ("patternProperties", Value::Object(p)) => p.is_empty(),
                ("not", Value::Bool(false)) => true,
                // Without `if`, `then` and `else` have no effect.
                ("then" | "else", _) => !m.contains_key("if"),
                // The draft-7 form of dependentRequired: handled with it.
                ("dependencies", Value::Object(d)) => d.values().all(Value::is_array),
                _ => false,
            };
            if trivial || k == "patternProperties" {
                continue;
            }
            if NOT_ENFORCED.contains(&k) {
                self.report(k, ptr, "ignored", false)?;
            } else if k != "then" && k != "else" {
                self.report(k, ptr, "unknown keyword, ignored", true)?;
            }
        }
        if m.contains_key("$ref") || m.contains_key("allOf") {
            // Left over by a merge (nested allOf inside merged pieces).
            let merged = self.flatten(&Value::Object(m.clone()), ptr, 0)?;
            if merged.contains_key("$ref") || merged.contains_key("allOf") {
                return Err(err(format!("allOf at {ptr} could not be flattened")));
            }
            return self.merged_rule(&merged, &format!("{ptr}+"));
        }
        // anyOf / oneOf, with the siblings merged into each branch.
        let any = m.get("anyOf").cloned();
        let one = m.get("oneOf").cloned();
        if any.is_some() || one.is_some() {
            let mut siblings = m.clone();
            siblings.remove("anyOf");
            siblings.remove("oneOf");
            let lists: Vec<(&str, Vec<Value>)> = [("anyOf", any), ("oneOf", one)]
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .map(|(k, v)| match v {
                    Value::Array(a) => Ok((k, a)),
                    _ => Err(err(format!("{k} at {ptr} is not an array"))),
                })
                .collect::<Result<_>>()?;
            let one_list = lists
                .iter()
                .find(|(k, _)| *k == "oneOf")
                .map(|(_, l)| l.clone());
            let mut exclusive = match &one_list {
                Some(l) => self.pairwise_disjoint(l, &siblings, ptr)?,
                None => true,
            };
            let mut lists = lists;
            if !exclusive && lists.len() == 1 {
                // Overlapping branches whose complements are expressible:
                // exactly one is `anyOf` over i of B_i ∧ ¬B_j (j ≠ i).
                if let Some(exact) = self.one_of_exactly(&lists[0].1, ptr)? {
                    lists[0].1 = exact;
                    exclusive = true;
                }
            }
            if !exclusive {
                self.report(
                    "oneOf",
                    ptr,
                    "treated as anyOf (exclusivity not enforced)",
                    true,
                )?;
            }
            if siblings.contains_key("unevaluatedProperties")
                || siblings.contains_key("unevaluatedItems")
            {
                self.unevaluated_beside_branches(&siblings, &lists, exclusive, ptr)?;
            }
            let has_siblings = siblings.keys().any(|k| !ANNOTATIONS.contains(&k.as_str()));
            let mut branches: Vec<(Value, String)> = Vec::new();
            if lists.len() == 2 {
                for (i, p) in lists[0].1.iter().enumerate() {
                    for (j, q) in lists[1].1.iter().enumerate() {
                        branches.push((
                            serde_json::json!({ "allOf": [p, q] }),
                            format!("{ptr}/anyOf/{i}+oneOf/{j}"),
                        ));
                    }
                }
            } else {
                let (k, list) = &lists[0];
                for (i, b) in list.iter().enumerate() {
                    branches.push((b.clone(), format!("{ptr}/{k}/{i}")));
                }
            }
            let mut alts = Vec::new();
            for (b, bptr) in branches {
                if has_siblings {
                    let bm = self.flatten(&b, &bptr, 0)?;
                    let merged = self.merge(siblings.clone(), bm, ptr)?;
                    alts.push(self.merged_rule(&merged, &format!("{bptr}+"))?);
                } else {
                    alts.push(Expr::Rule(self.schema_rule(&b, &bptr)?));
                }
            }
            return Ok(Expr::Alt(alts));
        }
        // unevaluated*: with the applicators resolved, the members and
        // items they apply to are those the other keywords leave.
        let localized;
        let m = if m.contains_key("unevaluatedProperties") || m.contains_key("unevaluatedItems") {
            let mut c = m.clone();
            self.localize_unevaluated(&mut c, ptr)?;
            localized = c;
            &localized
        } else {
            m
        };
        // The allowed types.
        let types: Vec<String> = match m.get("type") {
            None => TYPES.iter().map(|s| s.to_string()).collect(),
            Some(t) => {
                let s = type_set(t);
                if s.is_empty() && !matches!(t, Value::Array(_)) {
                    return Err(err(format!(
                        "type at {ptr} is not a type name or a list of them"
                    )));
                }
                if let Some(bad) = s.iter().find(|x| !TYPES.contains(&x.as_str())) {
                    return Err(err(format!(
                        "unknown type {bad:?} at {ptr}/type (the types are {})",
                        TYPES.join(", ")
                    )));
                }
                s
            }
        };
        let allows = |t: &str| types.iter().any(|u| u == t);
        // enum / const.
        if m.contains_key("enum") || m.contains_key("const") {
            let mut values: Vec<Value> = match m.get("enum") {
                Some(Value::Array(a)) => a.clone(),
                Some(_) => return Err(err(format!("enum at {ptr} is not an array"))),
                None => vec![m["const"].clone()],
            };
            if let (Some(c), true) = (m.get("const"), m.contains_key("enum")) {
                values.retain(|v| v == c);
            }
            values.retain(|v| value_has_type(v, &types));
            for k in m.keys() {
                if HANDLED.contains(&k.as_str()) && !["enum", "const", "type"].contains(&k.as_str())
                {
                    self.report(k, ptr, "not checked against the enum/const values", false)?;
                }
            }
            let mut alts = Vec::new();
            for v in &values {
                alts.push(self.literal(v, 0)?);
            }
            return Ok(Expr::Alt(alts));
        }
        let mut alts = Vec::new();
        for t in TYPES {
            if !allows(t) || (t == "integer" && allows("number")) {
                continue;
            }
            let e = match t {
                "null" => self.lit("null"),
                "boolean" => {
                    let (a, b) = (self.lit("true"), self.lit("false"));
                    Expr::Alt(vec![a, b])
                }
                "object" => self.object(m, ptr)?,
                "array" => self.array(m, ptr)?,
                "string" => self.string(m, ptr)?,
                _ => self.number(m, ptr, t == "integer")?,
            };
            alts.push(e);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Expr::Empty)
        } else {
            Expr::Alt(alts)
        })
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rules: self.rules.len(),
            terms: self.terms.len(),
            unenforced: self.unenforced.len(),
            string_terms: self.string_terms.len(),
            any: self.any,
            depth: self.depth,
        }
    }

    /// Undoes everything built since `snap` (rules, terminals, reports,
    /// memoised rules).
    fn restore(&mut self, snap: Snapshot) {
        self.rules.truncate(snap.rules);
        self.terms.truncate(snap.terms);
        self.term_ix.retain(|_, t| (t.0 as usize) < snap.terms);
        self.memo.retain(|_, r| (r.0 as usize) < snap.rules);
        self.unenforced.truncate(snap.unenforced);
        self.string_terms.truncate(snap.string_terms);
        self.any = snap.any;
        self.depth = snap.depth;
    }

    /// Rewrites `not` and `if`/`then`/`else` of `m` into keywords the
    /// grammar enforces, when the negated schema has an expressible
    /// complement ([`Builder::negate`]): `not: N` becomes `allOf: [¬N]`;
    /// `if: C, then: T, else: E` becomes `anyOf: [C ∧ T, ¬C ∧ E]` (exact:
    /// the branches are disjoint, so no exclusivity is needed), and an `if`
    /// with neither `then` nor `else` is dropped (it has no effect). `None`
    /// when nothing was rewritten; a form left in place is reported by the
    /// keyword accounting.
    fn rewrite_not_if(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<Option<Map<String, Value>>> {
        let has_not = matches!(m.get("not"), Some(v) if *v != Value::Bool(false));
        if !self.rewrite || (!has_not && !m.contains_key("if")) {
            return Ok(None);
        }
        let mut out = m.clone();
        let mut parts = Vec::new();
        let mut changed = false;
        // A schema error inside `not`/`if`/`then`/`else` (a remote `$ref`)
        // leaves the keyword in place, reported, as before these were
        // enforced.
        let soft = |r: Result<Option<Map<String, Value>>>| match r {
            Err(e) if e.kind() == ErrorKind::Grammar && !self.opts.strict => Ok(None),
            r => r,
        };
        if has_not {
            let r = self
                .flatten(&m["not"], &format!("{ptr}/not"), 0)
                .and_then(|c| self.negate(&c, kinds(m), ptr, 0));
            if let Some(n) = soft(r)? {
                out.remove("not");
                parts.push(Value::Object(n));
                changed = true;
            }
        }
        if let Some(cond) = m.get("if") {
            if !m.contains_key("then") && !m.contains_key("else") {
                out.remove("if");
                changed = true;
            } else {
                let mut c = Map::new();
                let r = self.flatten(cond, &format!("{ptr}/if"), 0).and_then(|f| {
                    for k in ["then", "else"] {
                        if let Some(x) = m.get(k) {
                            self.flatten(x, &format!("{ptr}/{k}"), 0)?;
                        }
                    }
                    c = f;
                    self.negate(&c, kinds(m), ptr, 0)
                });
                if let Some(n) = soft(r)? {
                    let then = m.get("then").cloned().unwrap_or(Value::Bool(true));
                    let els = m.get("else").cloned().unwrap_or(Value::Bool(true));
                    for k in ["if", "then", "else"] {
                        out.remove(k);
                    }
                    parts.push(serde_json::json!({"anyOf": [
                        {"allOf": [Value::Object(c), then]},
                        {"allOf": [Value::Object(n), els]}
                    ]}));
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(None);
        }
        match out.get_mut("allOf") {
            Some(Value::Array(a)) => a.extend(parts),
            _ => {
                out.insert("allOf".into(), Value::Array(parts));
            }
        }
        Ok(Some(self.flatten(&Value::Object(out), ptr, 0)?))
    }

    /// A schema for the complement of the flattened schema `c`, for the
    /// forms whose complement the other keywords express exactly:
    ///
    /// * `{}`: nothing (`type: []`);
    /// * `type`: the other types ("number but not integer" with
    ///   [`FRACTION_ONLY`]);
    /// * `enum`/`const` (with `type`) of `null`/booleans: the other
    ///   types, and the other boolean (`anyOf`);
    /// * `required: [p, …]` (with `type: object`): not an object (when the
    ///   type is given) or an object without one of them (`properties:
    ///   {p: false}`), as `anyOf`;
    /// * `properties` of one property `p` whose schema has a complement
    ///   (with `required: [p]`, `type: object`): not an object (type
    ///   given), an object without `p` (required given), or with `p` in the
    ///   complement;
    /// * bounds of one kind with integer values (`minimum`, `maximum`,
    ///   `exclusiveMinimum`, `exclusiveMaximum`; `minLength`/`maxLength`;
    ///   `minItems`/`maxItems`; with `type`): the other kinds and, per
    ///   bound, the values of its kind beyond it (see [`Bounds`]);
    /// * `enum`/`const` of integers (with `null`/booleans): the open
    ///   intervals between them (`exclusiveMinimum`/`exclusiveMaximum`);
    /// * `anyOf` whose branches all have a complement: their intersection;
    /// * a conditional whose `if` is `true`/`false`: the complement of the
    ///   branch it picks.
    ///
    /// * `multipleOf` (with `type`): the other kinds and the numbers that
    ///   are not multiples ([`NOT_MULTIPLE_OF`]).
    ///
    /// `None` otherwise (strings and fractional numbers in `enum`, `multipleOf` with bounds,
    /// `pattern`, …). The complement is taken among the kinds `within`
    /// (those the schema around allows): `not: {type: integer}` inside
    /// `type: [integer, string]` is `type: [string]`.
    fn negate(
        &mut self,
        c: &Map<String, Value>,
        within: u8,
        ptr: &str,
        depth: usize,
    ) -> Result<Option<Map<String, Value>>> {
        let all: u8 = within;
        if depth > 4 {
            return Ok(None);
        }
        let keys: Vec<&str> = c
            .keys()
            .map(String::as_str)
            .filter(|k| !ANNOTATIONS.contains(k))
            .collect();
        let only = |allowed: &[&str]| keys.iter().all(|k| allowed.contains(k));
        let ctype = match c.get("type") {
            Some(t) => type_set(t).iter().fold(0, |a, x| a | kind_of_type(x)),
            None => 0x7f,
        };
        let any_of = |branches: Vec<Value>| {
            let mut m = Map::new();
            m.insert("anyOf".into(), Value::Array(branches));
            m
        };
        if c.contains_key("unevaluatedProperties") || c.contains_key("unevaluatedItems") {
            return self.negate_unevaluated(c, within, ptr, depth);
        }
        if only(&["type"]) {
            return Ok(Some(kinds_schema(all & !ctype)));
        }
        if let Some(bounds) = Bounds::of(c, &keys) {
            return Ok(Some(bounds.complement(ctype, all)));
        }
        if let (true, Some(Value::Bool(cond))) =
            (keys.iter().all(|k| CONDITIONAL.contains(k)), c.get("if"))
        {
            // A constant condition: the branch it picks (absent: true).
            let picked = c.get(if *cond { "then" } else { "else" });
            let v = picked.cloned().unwrap_or(Value::Bool(true));
            let pm = self.flatten(&v, ptr, 0)?;
            return self.negate(&pm, all, ptr, depth + 1);
        }
        if only(&["anyOf"]) {
            // None of the branches: the complements of all of them.
            let Some(Value::Array(list)) = c.get("anyOf") else {
                return Ok(None);
            };
            let mut out: Option<Map<String, Value>> = None;
            for (i, b) in list.iter().enumerate() {
                let bptr = format!("{ptr}/anyOf/{i}");
                let bm = self.flatten(b, &bptr, 0)?;
                let Some(nb) = self.negate(&bm, all, &bptr, depth + 1)? else {
                    return Ok(None);
                };
                out = Some(match out {
                    None => nb,
                    Some(acc) => self.merge(acc, nb, ptr)?,
                });
            }
            return Ok(match out {
                Some(m) => Some(m),
                None => Some(kinds_schema(all)),
            });
        }
        if only(&["type", "multipleOf"]) && c.get("multipleOf").is_some_and(Value::is_number) {
            // Other kinds than the type's, and its numbers that are not
            // multiples (the type's non-numbers satisfy `multipleOf`).
            let numeric = all & ctype & (KIND_INTEGER | KIND_FRACTION);
            let others = all & !ctype;
            let mut not_multiple = kinds_schema(numeric);
            not_multiple.insert(NOT_MULTIPLE_OF.into(), c["multipleOf"].clone());
            return Ok(Some(match (numeric, others) {
                (0, _) => kinds_schema(others),
                (_, 0) => not_multiple,
                _ => any_of(vec![
                    Value::Object(kinds_schema(others)),
                    Value::Object(not_multiple),
                ]),
            }));
        }
        if only(&["type", "enum", "const"]) {
            let Some(vals) = listed_values(c) else {
                return Ok(None);
            };
            let vals: Vec<Value> = vals
                .into_iter()
                .filter(|v| ctype & kind_of_value(v) != 0)
                .collect();
            let numbers: Option<Vec<i64>> = vals
                .iter()
                .filter(|v| v.is_number())
                .map(integer_value)
                .collect();
            let Some(mut numbers) = numbers else {
                return Ok(None);
            };
            if !vals
                .iter()
                .all(|v| v.is_null() || v.is_boolean() || v.is_number())
            {
                return Ok(None);
            }
            let mut keep = all;
            let mut gaps = Vec::new();
            let numeric = all & (KIND_INTEGER | KIND_FRACTION);
            if !numbers.is_empty() && numeric != 0 {
                // The numbers other than the listed integers: the open
                // intervals between them, of the numeric kinds allowed.
                numbers.sort_unstable();
                numbers.dedup();
                keep &= !numeric;
                let last = numbers[numbers.len() - 1];
                let bounds = std::iter::once((None, Some(numbers[0])))
                    .chain(numbers.windows(2).map(|w| (Some(w[0]), Some(w[1]))))
                    .chain(std::iter::once((Some(last), None)));
                for (lo, hi) in bounds {
                    let mut gap = kinds_schema(numeric);
                    if let Some(lo) = lo {
                        gap.insert("exclusiveMinimum".into(), Value::from(lo));
                    }
                    if let Some(hi) = hi {
                        gap.insert("exclusiveMaximum".into(), Value::from(hi));
                    }
                    gaps.push(Value::Object(gap));
                }
            }
            if vals.contains(&Value::Null) {
                keep &= !KIND_NULL;
            }
            let (t, f) = (
                vals.contains(&Value::Bool(true)),
                vals.contains(&Value::Bool(false)),
            );
            if t || f {
                keep &= !KIND_BOOLEAN;
            }
            let rest = kinds_schema(keep);
            if t == f && gaps.is_empty() {
                return Ok(Some(rest));
            }
            let mut branches = vec![Value::Object(rest)];
            if t != f {
                branches.push(serde_json::json!({ "const": f }));
            }
            branches.extend(gaps);
            return Ok(Some(any_of(branches)));
        }
        let object_typed = c.contains_key("type");
        if object_typed && ctype != KIND_OBJECT {
            return Ok(None);
        }
        let required: Vec<String> = match c.get("required") {
            None => Vec::new(),
            Some(Value::Array(a)) => {
                let r: Vec<String> = a
                    .iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect();
                if r.len() != a.len() {
                    return Ok(None);
                }
                r
            }
            Some(_) => return Ok(None),
        };
        let mut branches = Vec::new();
        if object_typed {
            branches.push(Value::Object(kinds_schema(all & !KIND_OBJECT)));
        }
        // `properties` entries that allow anything constrain nothing here
        // (no `additionalProperties` beside them).
        let props: Map<String, Value> = match c.get("properties") {
            None => Map::new(),
            Some(Value::Object(p)) => p
                .iter()
                .filter(|(_, v)| !is_vacuous(v))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            Some(_) => return Ok(None),
        };
        if only(&["properties", "additionalProperties", "type"])
            && c.get("additionalProperties") == Some(&Value::Bool(false))
            && props.is_empty()
        {
            // Only declared members, each with any value: the complement is
            // the objects with an undeclared one.
            let names: Vec<Value> = c
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().map(|k| Value::String(k.clone())).collect())
                .unwrap_or_default();
            let mut extra = kinds_schema(KIND_OBJECT & all);
            extra.insert(EXTRA_MEMBER.into(), Value::Array(names));
            branches.push(Value::Object(extra));
            return Ok(Some(any_of(branches)));
        }
        let props_or_required = only(&["properties", "required", "type"]);
        if props_or_required && props.is_empty() && !required.is_empty() {
            if required.len() > 8 {
                return Ok(None);
            }
            for p in &required {
                branches
                    .push(serde_json::json!({"type": "object", "properties": {p.as_str(): false}}));
            }
            return Ok(Some(any_of(branches)));
        }
        if props_or_required {
            if props.len() != 1 || required.iter().any(|r| !props.contains_key(r)) {
                return Ok(None);
            }
            let Some((p, s)) = props.iter().next() else {
                return Ok(None);
            };
            let pptr = format!("{ptr}/properties/{}", ptr_token(p));
            let fs = self.flatten(s, &pptr, 0)?;
            let Some(ns) = self.negate(&fs, 0x7f, &pptr, depth + 1)? else {
                return Ok(None);
            };
            if !required.is_empty() {
                branches
                    .push(serde_json::json!({"type": "object", "properties": {p.as_str(): false}}));
            }
            branches.push(serde_json::json!({
                "type": "object", "required": [p], "properties": {p.as_str(): Value::Object(ns)}
            }));
            return Ok(Some(any_of(branches)));
        }
        Ok(None)
    }

    /// The `oneOf` branches `list` made disjoint: branch `i` becomes
    /// `allOf: [B_i, ¬B_j for j ≠ i]` with the complements of
    /// [`Builder::negate`]; `None` when a branch has none (or past 8
    /// branches: each branch gets all the other complements).
    fn one_of_exactly(&mut self, list: &[Value], ptr: &str) -> Result<Option<Vec<Value>>> {
        if list.len() > 8 {
            return Ok(None);
        }
        let mut negs = Vec::with_capacity(list.len());
        for (i, b) in list.iter().enumerate() {
            let bptr = format!("{ptr}/oneOf/{i}");
            let bm = self.flatten(b, &bptr, 0)?;
            match self.negate(&bm, 0x7f, &bptr, 0)? {
                Some(n) => negs.push(Value::Object(n)),
                None => return Ok(None),
            }
        }
        Ok(Some(
            list.iter()
                .enumerate()
                .map(|(i, b)| {
                    let mut all = vec![b.clone()];
                    all.extend(
                        negs.iter()
                            .enumerate()
                            .filter(|&(j, _)| j != i)
                            .map(|(_, n)| n.clone()),
                    );
                    serde_json::json!({ "allOf": all })
                })
                .collect(),
        ))
    }

    /// Whether the `oneOf` branches `list` (each with the `siblings`
    /// merged in) are pairwise disjoint, by [`Builder::disjoint`]: then
    /// `oneOf` is `anyOf` exactly (no instance matches two branches).
    fn pairwise_disjoint(
        &mut self,
        list: &[Value],
        siblings: &Map<String, Value>,
        ptr: &str,
    ) -> Result<bool> {
        if list.len() > 64 {
            return Ok(false);
        }
        let mut maps = Vec::with_capacity(list.len());
        for (i, b) in list.iter().enumerate() {
            let bm = self.flatten(b, &format!("{ptr}/oneOf/{i}"), 0)?;
            maps.push(self.merge(siblings.clone(), bm, ptr)?);
        }
        for i in 0..maps.len() {
            for j in i + 1..maps.len() {
                if !self.disjoint(&maps[i], &maps[j], ptr, 0)? {
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// A sufficient test that no JSON value is valid for both flattened
    /// schemas `a` and `b`: their types are disjoint (from `type`, and from
    /// the values of `enum`/`const`, `integer` inside `number`); or both
    /// list values (`enum`/`const`) and none is in both lists (numbers
    /// compared by value); or the only type they share is `object` and a
    /// property required by both has disjoint schemas (recursively, a
    /// discriminating `"kind": {"const": ...}`). `false` means "not shown".
    fn disjoint(
        &mut self,
        a: &Map<String, Value>,
        b: &Map<String, Value>,
        ptr: &str,
        depth: usize,
    ) -> Result<bool> {
        if depth > 8 {
            return Ok(false);
        }
        let (ta, va) = (kinds(a), listed_values(a));
        let (tb, vb) = (kinds(b), listed_values(b));
        if let (Some(va), Some(vb)) = (&va, &vb) {
            return Ok(!va.iter().any(|x| vb.iter().any(|y| json_eq(x, y))));
        }
        let common = ta & tb;
        if common == 0 {
            return Ok(true);
        }
        if common != KIND_OBJECT || va.is_some() || vb.is_some() {
            return Ok(false);
        }
        let req = |m: &Map<String, Value>| -> Vec<String> {
            m.get("required")
                .and_then(Value::as_array)
                .map(|r| {
                    r.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (ra, rb) = (req(a), req(b));
        for p in ra.iter().filter(|p| rb.contains(p)) {
            let prop = |m: &Map<String, Value>| m.get("properties").and_then(|x| x.get(p)).cloned();
            let (Some(pa), Some(pb)) = (prop(a), prop(b)) else {
                continue;
            };
            let pptr = format!("{ptr}/properties/{}", ptr_token(p));
            let fa = self.flatten(&pa, &pptr, 0)?;
            let fb = self.flatten(&pb, &pptr, 0)?;
            if self.disjoint(&fa, &fb, ptr, depth + 1)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A rule for a subschema at `ptr/key` (or at `ptr/key/idx`).
    fn sub(&mut self, v: &Value, ptr: &str) -> Result<Expr> {
        Ok(Expr::Rule(self.schema_rule(v, ptr)?))
    }

    fn object(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        if m.contains_key(EXTRA_MEMBER) {
            if let Some(e) = self.extra_member_object(m, ptr)? {
                return Ok(e);
            }
        }
        let empty = Map::new();
        let props = match m.get("properties") {
            None => &empty,
            Some(Value::Object(p)) => p,
            Some(_) => return Err(err(format!("properties at {ptr} is not an object"))),
        };
        let required: Vec<String> = match m.get("required") {
            None => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect(),
            Some(_) => return Err(err(format!("required at {ptr} is not an array"))),
        };
        // Extra properties: (key expression, value expression) or none.
        let pattern_props = match m.get("patternProperties") {
            Some(Value::Object(p)) if !p.is_empty() => Some(p),
            _ => None,
        };
        let addl_ptr = format!("{ptr}/additionalProperties");
        let mut extra_value: Option<Expr> = match m.get("additionalProperties") {
            None | Some(Value::Bool(true)) => Some(Expr::Rule(self.any_value()?)),
            Some(Value::Bool(false)) => None,
            Some(s) => Some(self.sub(s, &addl_ptr)?),
        };
        let mut extra_key_names: Vec<String> = props.keys().cloned().collect();
        // Required names that are not declared become declared properties
        // with the additionalProperties schema.
        let mut declared: Vec<(String, Option<Expr>, bool)> = Vec::new();
        for (name, s) in props {
            let e = self.sub(s, &format!("{ptr}/properties/{}", ptr_token(name)))?;
            declared.push((name.clone(), Some(e), required.contains(name)));
        }
        for name in &required {
            if !props.contains_key(name) {
                declared.push((name.clone(), extra_value.clone(), true));
                extra_key_names.push(name.clone());
            }
        }
        // dependentRequired: names it mentions that are not declared are
        // declared with the additionalProperties schema (when extra members
        // are allowed) so that the any-order construction tracks them.
        let dep_req = dependent_required(m, ptr)?;
        if !dep_req.is_empty() && pattern_props.is_some() {
            self.report(
                "dependentRequired",
                ptr,
                "not enforced together with patternProperties",
                false,
            )?;
        }
        let dep_req = if pattern_props.is_some() {
            Vec::new()
        } else {
            dep_req
        };
        for (k, ds) in &dep_req {
            for name in std::iter::once(k).chain(ds) {
                if extra_value.is_some() && !declared.iter().any(|(d, _, _)| d == name) {
                    declared.push((name.clone(), extra_value.clone(), false));
                    extra_key_names.push(name.clone());
                }
            }
        }
        // propertyNames: declared names that violate it cannot be written
        // (a required one makes the object impossible); extra keys are
        // restricted to it below.
        let names = self.property_names(m, ptr)?;
        if let Some(f) = &names {
            if declared
                .iter()
                .any(|(name, _, req)| *req && !f.matches(name))
            {
                return Ok(Expr::Alt(Vec::new()));
            }
            declared.retain(|(name, _, _)| f.matches(name));
        }
        // A trigger whose dependent cannot be written cannot be written
        // either (to a fixpoint); a required one makes the object impossible.
        loop {
            let present =
                |n: &String, d: &[(String, Option<Expr>, bool)]| d.iter().any(|(x, _, _)| x == n);
            let dead: Vec<String> = dep_req
                .iter()
                .filter(|(k, ds)| {
                    present(k, &declared) && ds.iter().any(|d| !present(d, &declared))
                })
                .map(|(k, _)| k.clone())
                .collect();
            if dead.is_empty() {
                break;
            }
            if declared.iter().any(|(n, _, req)| *req && dead.contains(n)) {
                return Ok(Expr::Alt(Vec::new()));
            }
            declared.retain(|(n, _, _)| !dead.contains(n));
        }
        let deps: Vec<(usize, PropSet)> = dep_req
            .iter()
            .filter_map(|(k, ds)| {
                let t = declared.iter().position(|(x, _, _)| x == k)?;
                let set = PropSet::from_iter(
                    (0..declared.len()).map(|i| ds.iter().any(|d| *d == declared[i].0)),
                );
                (!set.is_empty()).then_some((t, set))
            })
            .collect();
        let extra_key = if let Some(pp) = pattern_props {
            if names.is_some() {
                self.report(
                    "propertyNames",
                    ptr,
                    "not combined with patternProperties: enforced on declared \
                     properties only",
                    true,
                )?;
            }
            // Over-approximation: any key matching one of the patterns may
            // take any of the pattern values.
            self.report(
                "patternProperties",
                ptr,
                "keys matching a pattern may take the value of any pattern property",
                true,
            )?;
            let mut vals = Vec::new();
            for (i, (p, s)) in pp.iter().enumerate() {
                let _ = i;
                vals.push(self.sub(s, &format!("{ptr}/patternProperties/{}", ptr_token(p)))?);
            }
            if let Some(e) = extra_value.take() {
                vals.push(e);
                extra_value = Some(Expr::Alt(vals));
                Some(self.extra_key_term(&extra_key_names))
            } else {
                let mut keys = Vec::new();
                for p in pp.keys() {
                    match regex::pattern_terminal(p) {
                        Ok(t) => keys.push(Expr::Term(self.term("KEY", &t))),
                        Err(e) => {
                            self.report(
                                "patternProperties",
                                ptr,
                                format!("{e}; any key allowed"),
                                false,
                            )?;
                            keys.push(Expr::Term(self.term("STRING", STRING_RE)));
                        }
                    }
                }
                extra_value = Some(Expr::Alt(vals));
                Some(Expr::Alt(keys))
            }
        } else if extra_value.is_some() {
            match &names {
                None => Some(self.extra_key_term(&extra_key_names)),
                Some(f) => self.named_extra_key(f, &extra_key_names, ptr)?,
            }
        } else {
            None
        };
        let colon = self.lit(":");
        let comma = self.lit(",");
        let extra = match (extra_key, extra_value) {
            (Some(k), Some(v)) => Some(Expr::Seq(vec![k, colon.clone(), v])),
            _ => None,
        };
        // minProperties / maxProperties: exact in the any-order construction
        // when no undeclared member is allowed (the set of members written
        // is then the whole object); otherwise reported.
        // A non-negative integer (`2.0` is one).
        let count = |k: &str| {
            m.get(k)
                .and_then(integer_value)
                .and_then(|v| usize::try_from(v).ok())
        };
        let (min_props, max_props) = (count("minProperties"), count("maxProperties"));
        // A bound that is not a non-negative integer is reported, not used.
        let malformed = ["minProperties", "maxProperties"]
            .iter()
            .any(|k| m.contains_key(*k) && count(k).is_none());
        if malformed {
            self.report_counts(m, ptr)?;
        }
        let bounded = !malformed && (min_props.is_some_and(|v| v > 0) || max_props.is_some());
        // With extra members allowed, the bounds count them too (up to
        // `MAX_COUNTED_MEMBERS`).
        let count_cap = counted_cap(min_props.unwrap_or(0), max_props.unwrap_or(usize::MAX));
        // Not with `patternProperties` (not enforced: the members they
        // allow are not what `extra` writes).
        let counted = bounded
            && extra.is_some()
            && count_cap.is_some()
            && !m.contains_key("patternProperties");
        // Any order matters with two members that can be swapped.
        let n = declared.len();
        let any = self.opts.property_order == PropertyOrder::Any;
        if (any && (n >= 2 || (n == 1 && extra.is_some())))
            || (bounded && (extra.is_none() || counted))
            || !deps.is_empty()
        {
            let limit = self
                .opts
                .max_any_order_properties
                .min(MAX_ANY_ORDER_PROPERTIES);
            // Tracked properties get the exact any-order construction (at
            // most once each). When there are more than `limit`, the
            // required ones and those `dependentRequired` names are tracked
            // first, then optional ones in schema order; the optional ones
            // left over are written like extra members (any order, maybe
            // more than once): never a valid instance rejected.
            let must: Vec<bool> = (0..n)
                .map(|i| declared[i].2 || deps.iter().any(|&(t, d)| t == i || d.contains(i)))
                .collect();
            let n_must = must.iter().filter(|&&x| x).count();
            // The most tracked properties whose 2^k subset rules (plus one
            // rule per member and the extra member) fit the rule limit.
            let fits = |k: usize| self.rules.len() + (1usize << k) + n < self.opts.max_rules;
            let cap = (0..=limit.min(n)).rev().find(|&k| fits(k)).unwrap_or(0);
            let limit = if n > limit {
                cap.min(n_must.max(FALLBACK_TRACKED))
            } else {
                cap
            };
            let mut room = limit.saturating_sub(n_must);
            let tracked: Vec<bool> = must
                .iter()
                .map(|&x| {
                    let take = x || room > 0;
                    if !x && take {
                        room -= 1;
                    }
                    take
                })
                .collect();
            if n_must <= limit {
                let mut members = Vec::with_capacity(limit);
                let mut free = Vec::new();
                // Index of each declared property among the tracked ones.
                let mut index = vec![usize::MAX; n];
                for (i, (name, value, req)) in declared.iter().enumerate() {
                    let key = self.key_lit(name, ptr)?;
                    let value = value.clone().unwrap_or(Expr::Alt(Vec::new()));
                    let member = Expr::Seq(vec![key, colon.clone(), value]);
                    if tracked[i] {
                        index[i] = members.len();
                        members.push((member, *req));
                    } else {
                        free.push((name.as_str(), member));
                    }
                }
                let deps: Vec<(usize, PropSet)> = deps
                    .iter()
                    .map(|&(t, d)| {
                        let d = PropSet::from_iter(
                            (0..n).filter(|&i| tracked[i]).map(|i| d.contains(i)),
                        );
                        (index[t], d)
                    })
                    .collect();
                let extra = if free.is_empty() {
                    extra
                } else {
                    let names: Vec<&str> = free.iter().map(|(name, _)| *name).collect();
                    self.report(
                        "properties",
                        ptr,
                        format!(
                            "{n} properties are more than the {limit} tracked in any order \
                             (max_any_order_properties, or the rule limit); the optional properties {} are \
                             accepted in any order but not limited to one occurrence",
                            quoted_list(&names)
                        ),
                        true,
                    )?;
                    let mut alts: Vec<Expr> = free.into_iter().map(|(_, e)| e).collect();
                    alts.extend(extra);
                    Some(Expr::Alt(alts))
                };
                let bounds = (min_props.unwrap_or(0), max_props.unwrap_or(usize::MAX));
                let counts_fit = count_cap.is_some_and(|cap| {
                    let states = (1usize << members.len()).saturating_mul(cap + 1);
                    self.rules.len().saturating_add(states) < self.opts.max_rules
                });
                let bounds = if extra.is_none() || (counted && counts_fit) {
                    if counted && bounds.0 > 0 {
                        // An extra key written twice counts twice here, once
                        // for a validator (it keeps one of them).
                        self.report(
                            "minProperties",
                            ptr,
                            "extra members are counted as written: an extra key repeated \
                             counts once per occurrence",
                            true,
                        )?;
                    }
                    bounds
                } else {
                    self.report_counts(m, ptr)?;
                    (0, usize::MAX)
                };
                return self.any_order_object(&members, extra, bounds, &deps, ptr);
            }
            self.report(
                "properties",
                ptr,
                format!(
                    "{n_must} required (or dependentRequired) properties are more than the {} \
                     written in any order (max_any_order_properties, or the rule limit); \
                     declared properties are accepted in schema order only{}",
                    limit,
                    if extra.is_some() {
                        ", extra properties after them"
                    } else {
                        ""
                    }
                ),
                true,
            )?;
        }
        if bounded {
            self.report_counts(m, ptr)?;
        }
        if !deps.is_empty() {
            let k = if m.contains_key("dependentRequired") {
                "dependentRequired"
            } else {
                "dependencies"
            };
            self.report(
                k,
                ptr,
                "not enforced on objects in schema order (too many properties for the \
                 any-order construction, or --property-order schema)",
                false,
            )?;
        }
        // Schema order.
        // after[i]: members from i on, at least one already written.
        // first[i]: members from i on, none written yet.
        let mut after_next = match &extra {
            Some(e) => Expr::Star(Box::new(Expr::Seq(vec![comma.clone(), e.clone()]))),
            None => Expr::Empty,
        };
        let mut first_next = match &extra {
            Some(e) => Expr::Opt(Box::new(Expr::Seq(vec![
                e.clone(),
                Expr::Star(Box::new(Expr::Seq(vec![comma.clone(), e.clone()]))),
            ]))),
            None => Expr::Empty,
        };
        for i in (0..n).rev() {
            let (name, value, req) = &declared[i];
            let key = self.key_lit(name, ptr)?;
            let value = value.clone().unwrap_or(Expr::Alt(Vec::new()));
            let member = Expr::Seq(vec![key, colon.clone(), value]);
            let ra = self.new_rule(format!("s{}_after{i}", self.rules.len()))?;
            self.rules[ra.0 as usize].expr = after_next;
            let rf = self.new_rule(format!("s{}_first{i}", self.rules.len()))?;
            self.rules[rf.0 as usize].expr = first_next;
            let with = |lead: Option<&Expr>| {
                let mut s = Vec::new();
                if let Some(c) = lead {
                    s.push(c.clone());
                }
                s.push(member.clone());
                s.push(Expr::Rule(ra));
                Expr::Seq(s)
            };
            after_next = if *req {
                with(Some(&comma))
            } else {
                Expr::Alt(vec![with(Some(&comma)), Expr::Rule(ra)])
            };
            first_next = if *req {
                with(None)
            } else {
                Expr::Alt(vec![with(None), Expr::Rule(rf)])
            };
        }
        let open = self.lit("{");
        let close = self.lit("}");
        Ok(Expr::Seq(vec![open, first_next, close]))
    }

    /// The `propertyNames` of object schema `m`, when it constrains: which
    /// names it accepts. A form whose test is not implemented here (e.g.
    /// `format`) is reported and ignored (`None`).
    fn property_names(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Option<NameFilter>> {
        let pptr = format!("{ptr}/propertyNames");
        let pn = match m.get("propertyNames") {
            None | Some(Value::Bool(true)) => return Ok(None),
            Some(Value::Bool(false)) => return Ok(Some(NameFilter::nothing())),
            Some(Value::Object(pn)) => self.flatten(&Value::Object(pn.clone()), &pptr, 0)?,
            Some(_) => return Err(err(format!("propertyNames at {ptr} is not a schema"))),
        };
        match NameFilter::new(&pn) {
            Ok(f) if f.is_trivial() => Ok(None),
            Ok(f) => Ok(Some(f)),
            Err(why) => {
                self.report("propertyNames", &pptr, why, false)?;
                Ok(None)
            }
        }
    }

    /// The key of an undeclared member under `propertyNames` filter `f`
    /// (`None`: no undeclared member can be written):
    ///
    /// * `enum`/`const` names: the listed strings that pass the rest of
    ///   `f` and are not declared, as literal keys (exact);
    /// * `pattern`/`minLength`/`maxLength`: the string terminal of that
    ///   schema, exact when no declared name (`declared`) passes `f` (then
    ///   no key of that terminal is a declared one). Otherwise the two
    ///   languages overlap, and "passes `f` and is not declared" would need
    ///   a regex intersection: the undeclared keys are not restricted by
    ///   `f` (reported as an approximation).
    fn named_extra_key(
        &mut self,
        f: &NameFilter,
        declared: &[String],
        ptr: &str,
    ) -> Result<Option<Expr>> {
        if let Some(list) = &f.finite {
            let mut keys = Vec::new();
            for name in list {
                if f.matches(name) && !declared.contains(name) {
                    keys.push(self.key_lit(name, ptr)?);
                }
            }
            return Ok((!keys.is_empty()).then_some(Expr::Alt(keys)));
        }
        if f.nothing {
            return Ok(None);
        }
        if declared.iter().any(|d| f.matches(d)) {
            self.report(
                "propertyNames",
                &format!("{ptr}/propertyNames"),
                "enforced on declared properties only: a declared name also matches it, and \
                 undeclared keys matching it but no declared name would need a regex \
                 intersection",
                true,
            )?;
            return Ok(Some(self.extra_key_term(declared)));
        }
        let mut sm = f.string_schema.clone();
        sm.insert("type".into(), Value::String("string".into()));
        let pptr = format!("{ptr}/propertyNames");
        Ok(Some(self.string(&sm, &pptr)?))
    }

    /// The terminal of a declared key, in its canonical JSON spelling.
    fn key_lit(&mut self, name: &str, ptr: &str) -> Result<Expr> {
        let text =
            serde_json::to_string(name).map_err(|e| err(format!("property name at {ptr}: {e}")))?;
        Ok(self.lit(&text))
    }

    /// The members of an object in any order (see the module documentation,
    /// [Property order](self#property-order)): `members[i]` is the
    /// expression `"key": value` of declared property `i` and whether it is
    /// required, `extra` the expression of an undeclared member, if allowed.
    ///
    /// One rule `rest[S]` per set `S` of declared properties written so far
    /// (at least one member written):
    ///
    /// ```text
    /// rest[S] = ε                      if every required property is in S
    ///         | "," member_i rest[S+i] for each i not in S
    ///         | "," extra rest[S]      if extras are allowed
    /// first   = ε                      if no property is required
    ///         | member_i rest[{i}] | extra rest[{}]
    /// object  = "{" first "}"
    /// ```
    ///
    /// `2^n + n + 1` rules for `n` members; the caller bounds `n`.
    ///
    /// `bounds` = (minProperties, maxProperties) over the members written,
    /// exact when no extra member is allowed (the caller passes `(0, MAX)`
    /// otherwise): `rest[S]` may close only when `|S| ≥ min`, and adds a
    /// member only while `|S| < max`.
    ///
    /// `deps` = `dependentRequired` as (trigger member, members it
    /// requires): `rest[S]` may close only when every trigger in `S` has
    /// its required members in `S` (no extra rule: the condition is on the
    /// closing alternative of each of the `2^n` rules).
    fn any_order_object(
        &mut self,
        members: &[(Expr, bool)],
        extra: Option<Expr>,
        bounds: (usize, usize),
        deps: &[(usize, PropSet)],
        ptr: &str,
    ) -> Result<Expr> {
        let (min, max) = bounds;
        let n = members.len();
        if n > MAX_ANY_ORDER_PROPERTIES {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                format!(
                    "object at {ptr}: {n} properties in any order (at most {MAX_ANY_ORDER_PROPERTIES})"
                ),
            ));
        }
        let comma = self.lit(",");
        let base = self.rules.len();
        let mut member_rules = Vec::with_capacity(n);
        for (i, (e, _)) in members.iter().enumerate() {
            let r = self.new_rule(format!("s{base}_member{i}"))?;
            self.rules[r.0 as usize].expr = e.clone();
            member_rules.push(Expr::Rule(r));
        }
        let extra_rule = match extra {
            Some(e) => {
                let r = self.new_rule(format!("s{base}_extra"))?;
                self.rules[r.0 as usize].expr = e;
                Some(Expr::Rule(r))
            }
            None => None,
        };
        let required = PropSet::from_iter(members.iter().map(|(_, req)| *req));
        // With extra members and bounds, rest[S, c] also counts the members
        // written, c = min(|S| + extras, cap); otherwise c = |S|.
        let bounded = min > 0 || max < usize::MAX;
        let (counted, cap) = match (&extra_rule, counted_cap(min, max)) {
            (Some(_), Some(cap)) if bounded => (true, cap),
            _ => (false, 0),
        };
        let width = if counted { cap + 1 } else { 1 };
        // rest[S, c] is rest[S.0 · width + c], S as a bit set.
        let mut rest = Vec::with_capacity((1 << n) * width);
        for s in PropSet::subsets(n) {
            for c in 0..width {
                let name = if !counted {
                    format!("s{base}_seen{:0n$b}", s.0)
                } else {
                    format!("s{base}_seen{:0n$b}_count{c}", s.0)
                };
                rest.push(self.new_rule(name)?);
            }
        }
        let rest_of = |s: PropSet, c: usize| Expr::Rule(rest[s.0 as usize * width + c.min(cap)]);
        for s in PropSet::subsets(n) {
            let seen = s.0.count_ones() as usize;
            for c in 0..width {
                // Members written: exact below the cap (at or past it, the
                // cap is at least both bounds).
                let size = if counted { c } else { seen };
                if counted && c < seen.min(cap) {
                    // Unreachable: at least |S| members are written.
                    self.rules[rest[s.0 as usize * width + c].0 as usize].expr =
                        Expr::Alt(Vec::new());
                    continue;
                }
                let mut alts = Vec::new();
                let deps_met = deps
                    .iter()
                    .all(|&(t, d)| !s.contains(t) || s.contains_all(d));
                if s.contains_all(required) && size >= min && deps_met {
                    alts.push(Expr::Empty);
                }
                for (i, m) in member_rules.iter().enumerate() {
                    if !s.contains(i) && size < max {
                        alts.push(Expr::Seq(vec![
                            comma.clone(),
                            m.clone(),
                            rest_of(s.with(i), c + 1),
                        ]));
                    }
                }
                if let Some(x) = &extra_rule {
                    if !counted || size < max {
                        alts.push(Expr::Seq(vec![comma.clone(), x.clone(), rest_of(s, c + 1)]));
                    }
                }
                self.rules[rest[s.0 as usize * width + c].0 as usize].expr = Expr::Alt(alts);
            }
        }
        let mut first = Vec::new();
        if required.is_empty() && min == 0 {
            first.push(Expr::Empty);
        }
        for (i, m) in member_rules.iter().enumerate() {
            if max >= 1 {
                first.push(Expr::Seq(vec![
                    m.clone(),
                    rest_of(PropSet::EMPTY.with(i), 1),
                ]));
            }
        }
        if let Some(x) = &extra_rule {
            if !counted || max >= 1 {
                first.push(Expr::Seq(vec![x.clone(), rest_of(PropSet::EMPTY, 1)]));
            }
        }
        let open = self.lit("{");
        let close = self.lit("}");
        Ok(Expr::Seq(vec![open, Expr::Alt(first), close]))
    }

    /// A JSON string whose unescaped text is none of `names` (a key written
    /// with an escape is always accepted).
    fn extra_key_term(&mut self, names: &[String]) -> Expr {
        if names.is_empty() {
            return Expr::Term(self.term("STRING", STRING_RE));
        }
        // A trie of the names.
        #[derive(Default)]
        struct Node {
            end: bool,
            kids: Vec<(char, Node)>,
        }
        let mut root = Node::default();
        for n in names {
            let mut cur = &mut root;
            for c in n.chars() {
                let i = match cur.kids.iter().position(|(k, _)| *k == c) {
                    Some(i) => i,
                    None => {
                        cur.kids.push((c, Node::default()));
                        cur.kids.len() - 1
                    }
                };
                cur = &mut cur.kids[i].1;
            }
            cur.end = true;
        }
        // The canonical JSON spelling of a character that must be escaped
        // (serde_json's: short escapes, else `\u00xx` in lowercase).
        fn canonical_escape(c: char) -> Option<String> {
            let plain = (c as u32) >= 0x20 && c != '"' && c != '\\';
            if plain {
                return None;
            }
            serde_json::to_string(&c.to_string())
                .ok()
                .map(|q| q[1..q.len() - 1].to_string())
        }
        // Four hex digits other than the (lowercase) strings `set`, from
        // position `depth`; `None`: no such digits.
        fn hex_not_in(set: &[&[u8]], depth: usize) -> Option<String> {
            const HEX: &str = "0123456789abcdefABCDEF";
            if depth == 4 {
                return set.is_empty().then(String::new);
            }
            if set.is_empty() {
                return Some(format!("[0-9a-fA-F]{{{}}}", 4 - depth));
            }
            let mut firsts: Vec<u8> = set.iter().map(|h| h[depth]).collect();
            firsts.sort_unstable();
            firsts.dedup();
            let mut alts = Vec::new();
            let others: String = HEX
                .chars()
                .filter(|c| !firsts.contains(&(*c as u8)))
                .collect();
            if !others.is_empty() {
                alts.push(format!("[{others}][0-9a-fA-F]{{{}}}", 3 - depth));
            }
            for f in firsts {
                let sub: Vec<&[u8]> = set.iter().copied().filter(|h| h[depth] == f).collect();
                if let Some(rest) = hex_not_in(&sub, depth + 1) {
                    alts.push(format!("{}{rest}", f as char));
                }
            }
            (!alts.is_empty()).then(|| format!("(?:{})", alts.join("|")))
        }
        // Whether every next character of the names at `n` is plain ASCII
        // written as itself: then every other character, every non-ASCII
        // one and every escape leaves the names.
        fn plain(n: &Node) -> bool {
            n.kids
                .iter()
                .all(|(c, _)| c.is_ascii() && canonical_escape(*c).is_none())
        }
        // The characters that leave every name at `n`: an unescaped
        // character or an escape other than the canonical spellings of the
        // next characters of the names (those continue in the trie). At a
        // `plain` node only the ASCII ones: the others are in `SHARED`.
        fn leave(n: &Node) -> String {
            let mut class = String::from("[^\"\\\\\\x00-\\x1F");
            if plain(n) {
                class.push_str("\\x{80}-\\x{10FFFF}");
            }
            for (c, _) in &n.kids {
                class.push_str(&regex_syntax::escape(&c.to_string()));
            }
            class.push(']');
            if plain(n) {
                return class;
            }
            let mut diverge = vec![class];
            let escaped: Vec<(String, &Node)> = n
                .kids
                .iter()
                .filter_map(|(c, k)| canonical_escape(*c).map(|e| (e, k)))
                .collect();
            let short: String = "\"\\/bfnrt"
                .chars()
                .filter(|c| !escaped.iter().any(|(e, _)| *e == format!("\\{c}")))
                .map(|c| regex_syntax::escape(&c.to_string()))
                .collect();
            if !short.is_empty() {
                diverge.push(format!("\\\\[{short}]"));
            }
            let hexes: Vec<&[u8]> = escaped
                .iter()
                .filter_map(|(e, _)| e.strip_prefix("\\u").map(str::as_bytes))
                .collect();
            if let Some(h) = hex_not_in(&hexes, 0) {
                diverge.push(format!("\\\\u{h}"));
            }
            format!("(?:{})", diverge.join("|"))
        }
        // The non-ASCII characters and escapes, which leave the names at
        // every `plain` node.
        const SHARED: &str = r#"(?:[^\x00-\x7F]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))"#;
        // The kids of `n` followed (in the trie) by `below`, which returns
        // `None` for an empty language.
        fn kids<F: Fn(&Node, usize) -> Option<String>>(
            n: &Node,
            depth: usize,
            below: F,
        ) -> Vec<String> {
            let mut alts = Vec::new();
            for (c, k) in &n.kids {
                if depth >= 200 {
                    break;
                }
                let unit = canonical_escape(*c).unwrap_or_else(|| c.to_string());
                if let Some(r) = below(k, depth + 1) {
                    alts.push(format!("{}{r}", regex_syntax::escape(&unit)));
                }
            }
            alts
        }
        // The texts of the trie nodes below `n` where `keep` holds
        // (`None`: there are none).
        fn nodes(n: &Node, depth: usize, keep: fn(&Node) -> bool) -> Option<String> {
            let mut alts = kids(n, depth, |k, d| nodes(k, d, keep));
            if keep(n) {
                alts.insert(0, String::new());
            }
            (!alts.is_empty()).then(|| format!("(?:{})", alts.join("|")))
        }
        // The texts that follow the names up to `n` and then leave them
        // with their last character (`SHARED` ones apart).
        fn leaving(n: &Node, depth: usize) -> Option<String> {
            let mut alts = vec![leave(n)];
            alts.extend(kids(n, depth, leaving));
            Some(format!("(?:{})", alts.join("|")))
        }
        // The key: a proper prefix of a name that is no name, or the names
        // up to some node, a character leaving them there, and any further
        // characters. The three tries run in step on the same prefix, and
        // the characters after leaving are one shared copy: a copy per trie
        // node (of "any further characters", or of the UTF-8 and `\u`
        // sequences of the leaving character) would be as many distinct NFA
        // states, which the determinisation multiplies with every other
        // string terminal (see *Lexer size* in the module documentation).
        let mut alts: Vec<String> = nodes(&root, 0, |n| !n.end).into_iter().collect();
        let mut leaves: Vec<String> = leaving(&root, 0).into_iter().collect();
        leaves.extend(nodes(&root, 0, plain).map(|p| format!("{p}{SHARED}")));
        alts.push(format!("(?:{}){CHAR_RE}*", leaves.join("|")));
        let p = format!("\"(?:{})\"", alts.join("|"));
        Expr::Term(self.term("EXTRA_KEY", &p))
    }

    fn array(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        if m.contains_key("contains") {
            if let Some(e) = self.contains_array(m, ptr)? {
                return Ok(e);
            }
        }
        let mut prefix: Vec<Expr> = Vec::new();
        let mut rest_key = "items";
        if let Some(p) = m.get("prefixItems") {
            let a = p
                .as_array()
                .ok_or_else(|| err(format!("prefixItems at {ptr} is not an array")))?;
            for (i, s) in a.iter().enumerate() {
                prefix.push(self.sub(s, &format!("{ptr}/prefixItems/{i}"))?);
            }
        } else if let Some(Value::Array(a)) = m.get("items") {
            // Draft 4-2019: the tuple form of items, then additionalItems.
            for (i, s) in a.iter().enumerate() {
                prefix.push(self.sub(s, &format!("{ptr}/items/{i}"))?);
            }
            rest_key = "additionalItems";
        }
        let rest: Option<Expr> = match m.get(rest_key) {
            None | Some(Value::Bool(true)) => Some(Expr::Rule(self.any_value()?)),
            Some(Value::Bool(false)) => None,
            Some(s) => Some(self.sub(s, &format!("{ptr}/{rest_key}"))?),
        };
        let get = |k: &str| count_keyword(m, k, ptr);
        let mut min = get("minItems")?.unwrap_or(0);
        let mut max = get("maxItems")?;
        let cap = self.opts.max_items;
        if rest.is_none() {
            let p = prefix.len() as u64;
            max = Some(max.map_or(p, |x| x.min(p)));
        }
        if max.is_some_and(|x| x > cap.max(prefix.len() as u64)) {
            self.report(
                "maxItems",
                ptr,
                format!("bounds above {cap} are not expanded; no upper bound"),
                true,
            )?;
            max = None;
        }
        if min > cap.max(prefix.len() as u64) {
            self.report(
                "minItems",
                ptr,
                format!("bounds above {cap} are not expanded; lowered to {cap}"),
                true,
            )?;
            min = cap;
        }
        let open = self.lit("[");
        let close = self.lit("]");
        if max.is_some_and(|x| x < min) {
            return Ok(Expr::Alt(Vec::new()));
        }
        if max == Some(0) {
            return Ok(Expr::Seq(vec![open, close]));
        }
        let comma = self.lit(",");
        let never = Expr::Alt(Vec::new());
        let item = |j: u64| -> Expr {
            match prefix.get(j as usize) {
                Some(e) => e.clone(),
                None => rest.clone().unwrap_or_else(|| never.clone()),
            }
        };
        // tail[j]: items j.. after j items were written.
        let explicit = max.unwrap_or_else(|| min.max(prefix.len() as u64));
        let mut next = match (&max, &rest) {
            (None, Some(r)) => Expr::Star(Box::new(Expr::Seq(vec![comma.clone(), r.clone()]))),
            _ => Expr::Empty,
        };
        for j in (1..explicit).rev() {
            let r = self.new_rule(format!("s{}_items{j}", self.rules.len()))?;
            self.rules[r.0 as usize].expr = next;
            let body = Expr::Seq(vec![comma.clone(), item(j), Expr::Rule(r)]);
            next = if j < min {
                body
            } else {
                Expr::Opt(Box::new(body))
            };
        }
        let first = if explicit == 0 {
            // Unbounded with nothing explicit: [] or [x, x, ...].
            match &rest {
                Some(r) => Expr::Opt(Box::new(Expr::Seq(vec![r.clone(), next]))),
                None => Expr::Empty,
            }
        } else {
            let s = Expr::Seq(vec![item(0), next]);
            if min == 0 {
                Expr::Opt(Box::new(s))
            } else {
                s
            }
        };
        Ok(Expr::Seq(vec![open, first, close]))
    }

    /// An array under `contains` / `minContains` / `maxContains`, exact when
    /// the contains schema `C` has a complement ([`Builder::negate`]: a type
    /// test, `true`, `false`, bounds, …) and there are no `prefixItems`:
    /// each item is either a matching item `M = items ∧ C` or a
    /// non-matching one `N = items ∧ ¬C` (disjoint, and together the
    /// items), so the grammar counts them. One rule `R(i, j)` per number of items `i`
    /// (capped past `minItems`/`maxItems`) and of matches `j` (capped past
    /// `minContains`/`maxContains`):
    ///
    /// ```text
    /// R(i, j) = ε                    if i, j satisfy the bounds
    ///         | "," M R(i+1, j+1)    while i < maxItems, j < maxContains
    ///         | "," N R(i+1, j)      while i < maxItems
    /// array   = "[" (ε | M R(1, 1) | N R(1, 0)) "]"
    /// ```
    ///
    /// `(I + 1)·(J + 1)` rules for caps `I`, `J` ≤ [`SchemaOptions::max_items`].
    /// `None` (after reporting `contains`) when `C` has no complement.
    fn contains_array(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Option<Expr>> {
        let cptr = format!("{ptr}/contains");
        let get = |k: &str| count_keyword(m, k, ptr);
        let min_c = get("minContains")?.unwrap_or(1);
        let max_c = get("maxContains")?;
        let give_up = |b: &mut Self, why: &str| -> Result<Option<Expr>> {
            for k in ["contains", "minContains", "maxContains"] {
                if m.contains_key(k) {
                    b.report(k, ptr, why.to_string(), false)?;
                }
            }
            Ok(None)
        };
        if m.contains_key("prefixItems") || m.get("items").is_some_and(Value::is_array) {
            return give_up(self, "not enforced together with prefixItems");
        }
        // Each item matches the contains schema or its complement.
        let c = self.flatten(&m["contains"], &cptr, 0)?;
        let Some(not_c) = self.negate(&c, 0x7f, &cptr, 0)? else {
            return give_up(
                self,
                "enforced only when the contains schema has a complement (see `not`)",
            );
        };
        let (yes, no) = (c, not_c);
        let items = match m.get("items") {
            None => Map::new(),
            Some(v) => self.flatten(v, &format!("{ptr}/items"), 0)?,
        };
        let cap = self.opts.max_items;
        let mut min_items = get("minItems")?.unwrap_or(0);
        let mut max_items = get("maxItems")?;
        if m.get("items") == Some(&Value::Bool(false)) {
            max_items = Some(0);
        }
        if min_c > cap || max_c.is_some_and(|x| x > cap) {
            return give_up(
                self,
                &format!("minContains/maxContains above {cap} are not expanded"),
            );
        }
        if min_items > cap || max_items.is_some_and(|x| x > cap) {
            return give_up(
                self,
                &format!("minItems/maxItems above {cap} are not expanded"),
            );
        }
        if max_items.is_some_and(|x| x < min_items) || max_c.is_some_and(|x| x < min_c) {
            return Ok(Some(Expr::Alt(Vec::new())));
        }
        min_items = min_items.min(cap);
        let icap = match max_items {
            Some(x) => x + 1,
            None => min_items,
        } as usize;
        let jcap = match max_c {
            Some(x) => x + 1,
            None => min_c,
        } as usize;
        let needed = (icap + 1) * (jcap + 1) + 2;
        if self.rules.len() + needed > self.opts.max_rules {
            return give_up(self, "the counting rules would pass max_rules");
        }
        let side = |b: &mut Self, t: Map<String, Value>, tag: &str| -> Result<Expr> {
            let merged = b.merge(items.clone(), t, ptr)?;
            let r = b.new_rule(format!("s{}_{tag}", b.rules.len()))?;
            let e = b.object_schema(&merged, &format!("{ptr}/items+{tag}"))?;
            b.rules[r.0 as usize].expr = e;
            Ok(Expr::Rule(r))
        };
        let yes_e = side(self, yes, "contains")?;
        let no_e = side(self, no, "not_contains")?;
        let base = self.rules.len();
        let mut rule_ids = Vec::with_capacity((icap + 1) * (jcap + 1));
        for i in 0..=icap {
            for j in 0..=jcap {
                rule_ids.push(self.new_rule(format!("s{base}_count{i}_{j}"))?);
            }
        }
        let at = |i: usize, j: usize| Expr::Rule(rule_ids[i.min(icap) * (jcap + 1) + j.min(jcap)]);
        let ok = |i: usize, j: usize| {
            i as u64 >= min_items
                && max_items.is_none_or(|x| i as u64 <= x)
                && j as u64 >= min_c
                && max_c.is_none_or(|x| j as u64 <= x)
        };
        let can_add = |i: usize| max_items.is_none_or(|x| (i as u64) < x);
        let can_match = |j: usize| max_c.is_none_or(|x| (j as u64) < x);
        let comma = self.lit(",");
        for i in 0..=icap {
            for j in 0..=jcap {
                let mut alts = Vec::new();
                if ok(i, j) {
                    alts.push(Expr::Empty);
                }
                if can_add(i) {
                    if can_match(j) {
                        alts.push(Expr::Seq(vec![
                            comma.clone(),
                            yes_e.clone(),
                            at(i + 1, j + 1),
                        ]));
                    }
                    alts.push(Expr::Seq(vec![comma.clone(), no_e.clone(), at(i + 1, j)]));
                }
                self.rules[rule_ids[i * (jcap + 1) + j].0 as usize].expr = Expr::Alt(alts);
            }
        }
        let mut first = Vec::new();
        if ok(0, 0) {
            first.push(Expr::Empty);
        }
        if can_add(0) {
            if can_match(0) {
                first.push(Expr::Seq(vec![yes_e, at(1, 1)]));
            }
            first.push(Expr::Seq(vec![no_e, at(1, 0)]));
        }
        let (open, close) = (self.lit("["), self.lit("]"));
        Ok(Some(Expr::Seq(vec![open, Expr::Alt(first), close])))
    }

    /// A string of schema `m`: [`Builder::string_inner`], or the generic
    /// `STRING` where `ptr` is relaxed (see [*Lexer size*](self#lexer-size));
    /// records the restricted string terminals and their pointers.
    fn string(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        if self.relax.contains(ptr) {
            for k in ["pattern", "format", "minLength", "maxLength"] {
                let trivial = k == "minLength" && m.get(k).and_then(Value::as_u64) == Some(0);
                if m.contains_key(k) && !trivial {
                    self.report(
                        k,
                        ptr,
                        format!(
                            "ignored: the schema's string terminals with it need more than \
                             {STRING_DFA_LIMIT} DFA states (any JSON string accepted here)"
                        ),
                        false,
                    )?;
                }
            }
            return Ok(Expr::Term(self.term("STRING", STRING_RE)));
        }
        let e = self.string_inner(m, ptr)?;
        if let Expr::Term(t) = e {
            if self.terms[t.0 as usize].pattern != STRING_RE {
                self.string_terms.push((t, ptr.to_string()));
            }
        }
        Ok(e)
    }

    fn string_inner(&mut self, m: &Map<String, Value>, ptr: &str) -> Result<Expr> {
        let get = |k: &str| count_keyword(m, k, ptr);
        let mut min = get("minLength")?.unwrap_or(0);
        let mut max = get("maxLength")?;
        let cap = self.opts.max_length;
        if max.is_some_and(|x| x > cap) {
            self.report(
                "maxLength",
                ptr,
                format!("bounds above {cap} are not expanded; no upper bound"),
                true,
            )?;
            max = None;
        }
        if min > cap {
            self.report(
                "minLength",
                ptr,
                format!("bounds above {cap} are not expanded; lowered to {cap}"),
                true,
            )?;
            min = cap;
        }
        if max.is_some_and(|x| x < min) {
            return Ok(Expr::Alt(Vec::new()));
        }
        let has_len = min > 0 || max.is_some();
        let len_names = || {
            let mut v = Vec::new();
            if m.contains_key("minLength") {
                v.push("minLength");
            }
            if m.contains_key("maxLength") {
                v.push("maxLength");
            }
            v
        };
        if let Some(p) = m.get("pattern") {
            let p = p
                .as_str()
                .ok_or_else(|| err(format!("pattern at {ptr} is not a string")))?;
            let h = regex::parse_ecma(p).and_then(regex::search_language);
            match h {
                Ok(h) => {
                    if m.contains_key("format") {
                        self.report("format", ptr, "pattern enforced instead", false)?;
                    }
                    let combined = if has_len {
                        regex::as_class_repetition(&h).map(|(c, lo, hi)| {
                            let lo = (lo as u64).max(min).min(u32::MAX as u64) as u32;
                            let hi = match (hi, max) {
                                (Some(a), Some(b)) => Some((a as u64).min(b) as u32),
                                (Some(a), None) => Some(a),
                                (None, b) => b.map(|b| b as u32),
                            };
                            (c, lo, hi)
                        })
                    } else {
                        None
                    };
                    let pat = match combined {
                        Some((c, lo, hi)) => {
                            if hi.is_some_and(|h| h < lo) {
                                return Ok(Expr::Alt(Vec::new()));
                            }
                            regex::class_repetition_terminal(c, lo, hi)
                        }
                        None => {
                            if has_len {
                                for k in len_names() {
                                    self.report(k, ptr, "not combined with pattern", false)?;
                                }
                            }
                            regex::json_encode(h).map(|e| format!("\"{e}\""))
                        }
                    }
                    .map_err(|e| err(format!("pattern at {ptr}: {e}")))?;
                    return Ok(Expr::Term(self.term("PATTERN", &pat)));
                }
                Err(e) => {
                    self.report("pattern", ptr, e, false)?;
                }
            }
        }
        if let Some(f) = m.get("format").and_then(Value::as_str) {
            match format::content_regex(f) {
                Some(c) => {
                    if has_len {
                        for k in len_names() {
                            self.report(k, ptr, "not combined with format", false)?;
                        }
                    }
                    let pat = regex::content_terminal(&c)
                        .map_err(|e| err(format!("format at {ptr}: {e}")))?;
                    return Ok(Expr::Term(self.term(
                        &format!("FORMAT_{}", f.replace('-', "_").to_uppercase()),
                        &pat,
                    )));
                }
                None => self.report("format", ptr, format!("unknown format {f:?}"), false)?,
            }
        }
        if has_len {
            let pat = match max {
                Some(x) => format!("\"{CHAR_RE}{{{min},{x}}}\""),
                None => format!("\"{CHAR_RE}{{{min},}}\""),
            };
            return Ok(Expr::Term(self.term("STRING_LEN", &pat)));
        }
        Ok(Expr::Term(self.term("STRING", STRING_RE)))
    }

    fn number(&mut self, m: &Map<String, Value>, ptr: &str, integer: bool) -> Result<Expr> {
        // Numbers that are not integers (a complement's form, see
        // `FRACTION_ONLY`).
        let fraction_only = m.get(FRACTION_ONLY) == Some(&Value::Bool(true));
        if fraction_only && integer {
            return Ok(Expr::Alt(Vec::new()));
        }
        if m.contains_key(NOT_MULTIPLE_OF) {
            let reason = if fraction_only {
                "the complement of multipleOf is not combined with non-integers".to_string()
            } else {
                match not_multiple_of(m, integer, self.draft4_integers) {
                    Ok(Some(p)) => return Ok(Expr::Term(self.term("NOT_MULTIPLE", &p))),
                    Ok(None) => return Ok(Expr::Alt(Vec::new())),
                    Err(reason) => reason,
                }
            };
            self.report("not", ptr, format!("{reason}; any number kept"), false)?;
        }
        if fraction_only && m.contains_key("multipleOf") {
            self.report(
                "multipleOf",
                ptr,
                "not enforced on the non-integer numbers of a complement",
                false,
            )?;
        } else if m.contains_key("multipleOf") {
            match multiple_of(m, integer, self.draft4_integers) {
                Ok(Some(p)) => return Ok(Expr::Term(self.term("MULTIPLE", &p))),
                Ok(None) => return Ok(Expr::Alt(Vec::new())),
                Err(reason) => self.report("multipleOf", ptr, reason, false)?,
            }
        }
        // Bounds as (value, exclusive).
        let mut lo: Option<(f64, bool)> = None;
        let mut hi: Option<(f64, bool)> = None;
        let tighten_lo = |b: &mut Option<(f64, bool)>, v: f64, ex: bool| {
            if b.is_none_or(|(x, xe)| v > x || (v == x && ex && !xe)) {
                *b = Some((v, ex));
            }
        };
        let tighten_hi = |b: &mut Option<(f64, bool)>, v: f64, ex: bool| {
            if b.is_none_or(|(x, xe)| v < x || (v == x && ex && !xe)) {
                *b = Some((v, ex));
            }
        };
        let num = |k: &str| -> Result<Option<f64>> {
            match m.get(k) {
                None | Some(Value::Bool(_)) => Ok(None),
                Some(v) => v
                    .as_f64()
                    .map(Some)
                    .ok_or_else(|| err(format!("{k} at {ptr} is not a number"))),
            }
        };
        let old_ex = |k: &str| matches!(m.get(k), Some(Value::Bool(true)));
        if let Some(v) = num("minimum")? {
            tighten_lo(&mut lo, v, old_ex("exclusiveMinimum"));
        }
        if let Some(v) = num("maximum")? {
            tighten_hi(&mut hi, v, old_ex("exclusiveMaximum"));
        }
        if let Some(v) = num("exclusiveMinimum")? {
            tighten_lo(&mut lo, v, true);
        }
        if let Some(v) = num("exclusiveMaximum")? {
            tighten_hi(&mut hi, v, true);
        }
        if lo.is_none() && hi.is_none() {
            let (name, re) = if integer {
                if self.draft4_integers {
                    ("INTEGER", INTEGER_RE_DRAFT4)
                } else {
                    ("INTEGER", INTEGER_RE)
                }
            } else if fraction_only {
                if self.draft4_integers {
                    ("FRACTION", FRACTION_RE_DRAFT4)
                } else {
                    ("FRACTION", FRACTION_RE)
                }
            } else {
                ("NUMBER", NUMBER_RE)
            };
            return Ok(Expr::Term(self.term(name, re)));
        }
        const LIMIT: f64 = 1e30;
        // Integer bounds for integer values.
        let int_lo = lo.and_then(|(v, ex)| {
            (v.abs() < LIMIT).then(|| {
                let c = v.ceil();
                (if ex && c == v { c + 1.0 } else { c }) as i128
            })
        });
        let int_hi = hi.and_then(|(v, ex)| {
            (v.abs() < LIMIT).then(|| {
                let f = v.floor();
                (if ex && f == v { f - 1.0 } else { f }) as i128
            })
        });
        if lo.is_some_and(|(v, _)| v.abs() >= LIMIT) {
            self.report("minimum", ptr, "bounds beyond 1e30 are not enforced", true)?;
        }
        if hi.is_some_and(|(v, _)| v.abs() >= LIMIT) {
            self.report("maximum", ptr, "bounds beyond 1e30 are not enforced", true)?;
        }
        let pat = if integer {
            let zero_fraction = if self.draft4_integers {
                ""
            } else {
                "(?:\\.0+)?"
            };
            number::int_range(int_lo, int_hi).map(|r| format!("{r}{zero_fraction}"))
        } else {
            // Non-integer values: integer-part bounds; exact when the bounds
            // are integers, widened otherwise.
            let frac_lo = lo.and_then(|(v, _)| (v.abs() < LIMIT).then(|| v.floor() as i128));
            let frac_hi = hi.and_then(|(v, _)| (v.abs() < LIMIT).then(|| v.ceil() as i128));
            for (keyword, bound) in [("minimum", lo), ("maximum", hi)] {
                if bound.is_some_and(|(v, _)| v.fract() != 0.0) {
                    self.report(
                        keyword,
                        ptr,
                        "a non-integer bound is widened to the next integer for numbers with a fraction",
                        true,
                    )?;
                }
            }
            // A zero fraction (`3.0`) is an integer's, except in draft 4
            // (where `3.0` is not an integer: then a complement has it).
            let ints = match (fraction_only, self.draft4_integers) {
                (false, _) => number::int_range(int_lo, int_hi).map(|r| format!("{r}(?:\\.0+)?")),
                (true, true) => number::int_range(int_lo, int_hi).map(|r| format!("{r}\\.0+")),
                (true, false) => None,
            };
            let fracs = number::fraction_range(frac_lo, frac_hi);
            match (ints, fracs) {
                (Some(a), Some(b)) => Some(format!("(?:{a}|{b})")),
                (a, b) => a.or(b),
            }
        };
        match pat {
            Some(p) => Ok(Expr::Term(self.term("NUMBER_RANGE", &p))),
            None => Ok(Expr::Alt(Vec::new())),
        }
    }

    /// A JSON value written canonically, whitespace allowed between tokens.
    fn literal(&mut self, v: &Value, depth: usize) -> Result<Expr> {
        if depth > self.opts.max_depth {
            return Err(Error::new(
                ErrorKind::SizeLimit,
                "enum/const value nested too deeply",
            ));
        }
        Ok(match v {
            Value::Null => self.lit("null"),
            Value::Bool(b) => self.lit(if *b { "true" } else { "false" }),
            Value::Number(n) => {
                let as_int = n
                    .as_i64()
                    .map(|i| i as i128)
                    .or_else(|| n.as_u64().map(|u| u as i128))
                    .or_else(|| {
                        n.as_f64()
                            .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                            .map(|f| f as i128)
                    });
                let pat = match as_int {
                    Some(i) => format!(
                        "{}(?:\\.0+)?",
                        if i == 0 {
                            "-?0".to_string()
                        } else {
                            regex_syntax::escape(&i.to_string())
                        }
                    ),
                    None => regex_syntax::escape(&n.to_string()),
                };
                Expr::Term(self.term(&format!("NUM_{n}"), &pat))
            }
            Value::String(_) => {
                let text = serde_json::to_string(v).map_err(|e| err(e.to_string()))?;
                self.lit(&text)
            }
            Value::Array(a) => {
                let mut s = vec![self.lit("[")];
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        s.push(self.lit(","));
                    }
                    s.push(self.literal(x, depth + 1)?);
                }
                s.push(self.lit("]"));
                Expr::Seq(s)
            }
            Value::Object(o) => {
                let mut s = vec![self.lit("{")];
                for (i, (k, x)) in o.iter().enumerate() {
                    if i > 0 {
                        s.push(self.lit(","));
                    }
                    let key = serde_json::to_string(k).map_err(|e| err(e.to_string()))?;
                    s.push(self.lit(&key));
                    s.push(self.lit(":"));
                    s.push(self.literal(x, depth + 1)?);
                }
                s.push(self.lit("}"));
                Expr::Seq(s)
            }
        })
    }

    /// The rule of any JSON value (created once).
    fn any_value(&mut self) -> Result<RuleId> {
        if let Some(r) = self.any {
            return Ok(r);
        }
        let value = self.new_rule("value".into())?;
        self.any = Some(value);
        let string = Expr::Term(self.term("STRING", STRING_RE));
        let number = Expr::Term(self.term("NUMBER", NUMBER_RE));
        let (lb, rb, lk, rk, comma, colon) = (
            self.lit("{"),
            self.lit("}"),
            self.lit("["),
            self.lit("]"),
            self.lit(","),
            self.lit(":"),
        );
        let v = Expr::Rule(value);
        let member = Expr::Seq(vec![string.clone(), colon, v.clone()]);
        let list = |x: Expr| {
            Expr::Opt(Box::new(Expr::Seq(vec![
                x.clone(),
                Expr::Star(Box::new(Expr::Seq(vec![comma.clone(), x]))),
            ])))
        };
        let object = Expr::Seq(vec![lb, list(member), rb]);
        let array = Expr::Seq(vec![lk, list(v), rk]);
        let lits = [self.lit("true"), self.lit("false"), self.lit("null")];
        let mut alts = vec![object, array, string, number];
        alts.extend(lits);
        self.rules[value.0 as usize].expr = Expr::Alt(alts);
        Ok(value)
    }
}

/// The names a `propertyNames` schema accepts, as a test on one name (for
/// declared properties) and its string keywords (for undeclared keys).
struct NameFilter {
    /// `propertyNames: false`, or a type without `string`: no name.
    nothing: bool,
    /// `enum`/`const`: the listed strings (intersected).
    finite: Option<Vec<String>>,
    /// The compiled `pattern` (search semantics).
    pattern: Option<::regex::Regex>,
    min_len: Option<u64>,
    max_len: Option<u64>,
    /// `pattern`, `minLength`, `maxLength` of the schema.
    string_schema: Map<String, Value>,
}

impl NameFilter {
    fn nothing() -> NameFilter {
        NameFilter {
            nothing: true,
            finite: None,
            pattern: None,
            min_len: None,
            max_len: None,
            string_schema: Map::new(),
        }
    }

    /// The filter of a flattened `propertyNames` schema; `Err`: a keyword
    /// this test does not evaluate.
    fn new(pn: &Map<String, Value>) -> std::result::Result<NameFilter, String> {
        let mut f = NameFilter {
            nothing: false,
            ..NameFilter::nothing()
        };
        for (k, v) in pn {
            match k.as_str() {
                "type" => {
                    if !type_set(v).iter().any(|t| t == "string") {
                        f.nothing = true;
                    }
                }
                "enum" | "const" => {
                    let vals: Vec<Value> = if k == "enum" {
                        v.as_array().cloned().ok_or("enum is not an array")?
                    } else {
                        vec![v.clone()]
                    };
                    let strs: Vec<String> = vals
                        .iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect();
                    f.finite = Some(match f.finite.take() {
                        None => strs,
                        Some(old) => old.into_iter().filter(|x| strs.contains(x)).collect(),
                    });
                }
                "pattern" => {
                    let p = v.as_str().ok_or("pattern is not a string")?;
                    let h = regex::parse_ecma(p)?;
                    f.pattern = Some(
                        ::regex::Regex::new(&h.to_string())
                            .map_err(|e| format!("pattern {p:?}: {e}"))?,
                    );
                    f.string_schema.insert(k.clone(), v.clone());
                }
                "minLength" | "maxLength" => {
                    let n = v
                        .as_u64()
                        .or_else(|| {
                            v.as_f64()
                                .filter(|x| *x >= 0.0 && x.fract() == 0.0)
                                .map(|x| x as u64)
                        })
                        .ok_or_else(|| format!("{k} is not a nonnegative integer"))?;
                    if k == "minLength" {
                        f.min_len = Some(n);
                    } else {
                        f.max_len = Some(n);
                    }
                    f.string_schema.insert(k.clone(), v.clone());
                }
                _ if ANNOTATIONS.contains(&k.as_str()) => {}
                // Keywords of other types do not apply to names.
                "minimum"
                | "maximum"
                | "exclusiveMinimum"
                | "exclusiveMaximum"
                | "multipleOf"
                | "items"
                | "prefixItems"
                | "minItems"
                | "maxItems"
                | "properties"
                | "required"
                | "additionalProperties"
                | "minProperties"
                | "maxProperties" => {}
                _ => {
                    return Err(format!(
                        "{k} in propertyNames is not evaluated (only type, enum, const, \
                         pattern, minLength, maxLength)"
                    ))
                }
            }
        }
        Ok(f)
    }

    /// No name is excluded.
    fn is_trivial(&self) -> bool {
        !self.nothing
            && self.finite.is_none()
            && self.pattern.is_none()
            && self.min_len.unwrap_or(0) == 0
            && self.max_len.is_none()
    }

    /// Whether `name` is accepted.
    fn matches(&self, name: &str) -> bool {
        let len = name.chars().count() as u64;
        !self.nothing
            && self
                .finite
                .as_ref()
                .is_none_or(|l| l.iter().any(|x| x == name))
            && self.pattern.as_ref().is_none_or(|p| p.is_match(name))
            && self.min_len.is_none_or(|n| len >= n)
            && self.max_len.is_none_or(|n| len <= n)
    }
}

/// `names` quoted for a message: the first five, then how many more.
fn quoted_list(names: &[&str]) -> String {
    let shown: Vec<String> = names
        .iter()
        .take(5)
        .map(|n| serde_json::to_string(n).unwrap_or_default())
        .collect();
    match names.len().saturating_sub(shown.len()) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

/// A set of the declared properties of one object (bit `i`: property `i`),
/// at most [`MAX_ANY_ORDER_PROPERTIES`] of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct PropSet(u32);

impl PropSet {
    const EMPTY: PropSet = PropSet(0);

    /// The properties `i` with `flags[i]`.
    fn from_iter(flags: impl Iterator<Item = bool>) -> PropSet {
        PropSet(
            flags
                .enumerate()
                .filter(|(_, f)| *f)
                .fold(0, |acc, (i, _)| acc | 1 << i),
        )
    }

    /// Every subset of the first `n` properties, in the order of their bits.
    fn subsets(n: usize) -> impl Iterator<Item = PropSet> {
        (0..1u32 << n).map(PropSet)
    }

    fn contains(self, i: usize) -> bool {
        self.0 >> i & 1 == 1
    }

    fn contains_all(self, other: PropSet) -> bool {
        self.0 & other.0 == other.0
    }

    fn with(self, i: usize) -> PropSet {
        PropSet(self.0 | 1 << i)
    }

    fn is_empty(self) -> bool {
        self.0 == 0
    }
}

const KIND_NULL: u8 = 1;
const KIND_BOOLEAN: u8 = 2;
const KIND_OBJECT: u8 = 4;
const KIND_ARRAY: u8 = 8;
const KIND_STRING: u8 = 16;
const KIND_INTEGER: u8 = 32;
/// Numbers that are not integers.
const KIND_FRACTION: u8 = 64;

/// The kinds of JSON values (bit set) a type name allows.
fn kind_of_type(t: &str) -> u8 {
    match t {
        "null" => KIND_NULL,
        "boolean" => KIND_BOOLEAN,
        "object" => KIND_OBJECT,
        "array" => KIND_ARRAY,
        "string" => KIND_STRING,
        "integer" => KIND_INTEGER,
        "number" => KIND_INTEGER | KIND_FRACTION,
        _ => 0,
    }
}

/// The kind of a JSON value.
fn kind_of_value(v: &Value) -> u8 {
    match v {
        Value::Null => KIND_NULL,
        Value::Bool(_) => KIND_BOOLEAN,
        Value::Object(_) => KIND_OBJECT,
        Value::Array(_) => KIND_ARRAY,
        Value::String(_) => KIND_STRING,
        Value::Number(n) => {
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) {
                KIND_INTEGER
            } else {
                KIND_FRACTION
            }
        }
    }
}

/// A schema accepting the values of the kinds `k` (`type`; non-integer
/// numbers without the integers, "number but not integer", as `number`
/// with [`FRACTION_ONLY`]).
fn kinds_schema(k: u8) -> Map<String, Value> {
    let fraction_only = k & KIND_FRACTION != 0 && k & KIND_INTEGER == 0;
    let mut types = Vec::new();
    for (bit, name) in [
        (KIND_NULL, "null"),
        (KIND_BOOLEAN, "boolean"),
        (KIND_OBJECT, "object"),
        (KIND_ARRAY, "array"),
        (KIND_STRING, "string"),
    ] {
        if k & bit != 0 {
            types.push(Value::String(name.into()));
        }
    }
    if k & KIND_FRACTION != 0 {
        types.push(Value::String("number".into()));
    } else if k & KIND_INTEGER != 0 {
        types.push(Value::String("integer".into()));
    }
    let mut m = Map::new();
    m.insert("type".into(), Value::Array(types));
    if fraction_only {
        m.insert(FRACTION_ONLY.into(), Value::Bool(true));
    }
    m
}

/// The most members `minProperties`/`maxProperties` are counted up to on
/// objects that allow extra members (one rule per count and tracked set).
const MAX_COUNTED_MEMBERS: usize = 64;

/// The count at which the bounds `min` / `max` on the members of an object
/// stop telling counts apart (the larger of them, `max` when given): `None`
/// past [`MAX_COUNTED_MEMBERS`].
fn counted_cap(min: usize, max: usize) -> Option<usize> {
    let cap = if max < usize::MAX { max.max(min) } else { min };
    (cap <= MAX_COUNTED_MEMBERS).then_some(cap)
}

/// The keywords of a conditional.
const CONDITIONAL: [&str; 3] = ["if", "then", "else"];

/// The most `anyOf` branches two conditionals of one `allOf` are combined
/// into (each conditional doubles them); past it a conditional is dropped
/// and reported.
const MAX_CONDITIONAL_BRANCHES: usize = 64;

/// Rewrites the conditional of `m` (`if`, `then`, `else`) as the `anyOf`
/// it means: `anyOf: [allOf: [if, then], allOf: [not: if, else]]` (a
/// missing `then`/`else` is `true`); a `then`/`else` without `if`, or an
/// `if` alone, means nothing and is dropped. An `anyOf` already in `m` is
/// combined with it (each pair of branches, `allOf`).
fn conditional_as_any_of(m: &mut Map<String, Value>, ptr: &str) -> Result<()> {
    let (i, t, e) = (m.remove("if"), m.remove("then"), m.remove("else"));
    let Some(i) = i else { return Ok(()) };
    if t.is_none() && e.is_none() {
        return Ok(());
    }
    let t = t.unwrap_or(Value::Bool(true));
    let e = e.unwrap_or(Value::Bool(true));
    let branches = vec![
        serde_json::json!({ "allOf": [i.clone(), t] }),
        serde_json::json!({ "allOf": [{ "not": i }, e] }),
    ];
    let combined = match m.remove("anyOf") {
        None => branches,
        Some(Value::Array(xs)) => xs
            .iter()
            .flat_map(|x| {
                branches
                    .iter()
                    .map(move |b| serde_json::json!({ "allOf": [x, b] }))
            })
            .collect(),
        Some(_) => return Err(err(format!("anyOf at {ptr} is not an array"))),
    };
    m.insert("anyOf".into(), Value::Array(combined));
    Ok(())
}

/// The value of an integer-valued JSON number within the range whose
/// literals and bounds are written exactly (below 1e15 in magnitude).
fn integer_value(v: &Value) -> Option<i64> {
    let n = v.as_number()?;
    n.as_i64()
        .or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 1e15)
                .map(|f| f as i64)
        })
        .filter(|i| i.unsigned_abs() < 1_000_000_000_000_000)
}

/// A bound keyword, the keyword of its complement, and what its value
/// shifts by there (`minLength: n` → `maxLength: n - 1`).
type BoundRow = (&'static str, &'static str, i64);

/// A schema made only of bounds on one kind of value (with an optional
/// `type`): numeric bounds with integer values, string length, or array
/// length. Values of other kinds pass it; its complement is the values of
/// its kind outside the bounds (one branch per bound) and the kinds its
/// `type` leaves out.
struct Bounds {
    /// The kinds the bounds apply to.
    kind: u8,
    /// `(keyword of the complement, value)`, one per bound.
    outside: Vec<(&'static str, i64)>,
}

impl Bounds {
    /// The bounds of `c` (with its constraining `keys`), if it is such a
    /// schema with at least one bound.
    fn of(c: &Map<String, Value>, keys: &[&str]) -> Option<Bounds> {
        let families: [(u8, &[BoundRow]); 3] = [
            (
                KIND_INTEGER | KIND_FRACTION,
                &[
                    ("minimum", "exclusiveMaximum", 0),
                    ("exclusiveMinimum", "maximum", 0),
                    ("maximum", "exclusiveMinimum", 0),
                    ("exclusiveMaximum", "minimum", 0),
                ],
            ),
            (
                KIND_STRING,
                &[
                    ("minLength", "maxLength", -1),
                    ("maxLength", "minLength", 1),
                ],
            ),
            (
                KIND_ARRAY,
                &[("minItems", "maxItems", -1), ("maxItems", "minItems", 1)],
            ),
        ];
        for (kind, table) in families {
            let bound = |k: &str| table.iter().find(|e| e.0 == k);
            if !keys.iter().all(|k| *k == "type" || bound(k).is_some())
                || !keys.iter().any(|k| bound(k).is_some())
            {
                continue;
            }
            let mut outside = Vec::new();
            for k in keys.iter().filter(|k| **k != "type") {
                let &(_, other, shift) = bound(k)?;
                let v = integer_value(&c[*k])?;
                let v = v.checked_add(shift)?;
                // A length bound below zero excludes nothing.
                if kind != KIND_INTEGER | KIND_FRACTION && v < 0 {
                    continue;
                }
                outside.push((other, v));
            }
            return Some(Bounds { kind, outside });
        }
        None
    }

    /// The complement among the kinds `all` of a schema with these bounds
    /// whose `type` allows the kinds `ctype`.
    fn complement(&self, ctype: u8, all: u8) -> Map<String, Value> {
        let mut branches = Vec::new();
        let whole = all & !ctype;
        if whole != 0 {
            branches.push(Value::Object(kinds_schema(whole)));
        }
        let inside = all & ctype & self.kind;
        if inside != 0 {
            for &(k, v) in &self.outside {
                let mut m = kinds_schema(inside);
                m.insert(k.into(), Value::from(v));
                branches.push(Value::Object(m));
            }
        }
        if branches.is_empty() {
            return kinds_schema(0);
        }
        let mut m = Map::new();
        m.insert("anyOf".into(), Value::Array(branches));
        m
    }
}

/// The kinds a flattened schema allows, from `type` and `enum`/`const`.
fn kinds(m: &Map<String, Value>) -> u8 {
    let mut k = match m.get("type") {
        Some(t) => type_set(t).iter().fold(0, |acc, x| acc | kind_of_type(x)),
        None => 0x7f,
    };
    if let Some(vals) = listed_values(m) {
        k &= vals.iter().fold(0, |acc, v| acc | kind_of_value(v));
    }
    if m.get(FRACTION_ONLY) == Some(&Value::Bool(true)) {
        k &= !KIND_INTEGER;
    }
    k
}

/// The values of `enum` and `const` (intersected), if any.
fn listed_values(m: &Map<String, Value>) -> Option<Vec<Value>> {
    let mut out: Option<Vec<Value>> = m.get("enum").and_then(Value::as_array).cloned();
    if let Some(c) = m.get("const") {
        out = Some(match out {
            None => vec![c.clone()],
            Some(l) => l.into_iter().filter(|x| json_eq(x, c)).collect(),
        });
    }
    out
}

/// JSON Schema equality: numbers by value, objects regardless of order.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || matches!((x.as_f64(), y.as_f64()), (Some(p), Some(q)) if p == q)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

fn type_set(t: &Value) -> Vec<String> {
    match t {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => Vec::new(),
    }
}

fn value_has_type(v: &Value, types: &[String]) -> bool {
    let has = |t: &str| types.iter().any(|u| u == t);
    match v {
        Value::Null => has("null"),
        Value::Bool(_) => has("boolean"),
        Value::Number(n) => {
            has("number")
                || (has("integer")
                    && (n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)))
        }
        Value::String(_) => has("string"),
        Value::Array(_) => has("array"),
        Value::Object(_) => has("object"),
    }
}

/// The pattern of the numbers (`integer`: integers) of schema object `m`
/// that are multiples of its `multipleOf` and within its bounds (see
/// [`multiple`]); `Ok(None)` for none. `Err`: why it is not enforced.
fn multiple_of(
    m: &Map<String, Value>,
    integer: bool,
    draft4: bool,
) -> std::result::Result<Option<String>, String> {
    let (p, s, lo, hi) = multiple_spec(m)?;
    multiple::pattern(p, s, integer, integer && draft4, &lo, &hi)
}

/// The step `p / 10^s` of `m`'s `multipleOf` and its bounds.
#[allow(clippy::type_complexity)]
fn multiple_spec(
    m: &Map<String, Value>,
) -> std::result::Result<(u128, u32, Vec<multiple::Bound>, Vec<multiple::Bound>), String> {
    let dec = |k: &str| -> std::result::Result<Option<multiple::Decimal>, String> {
        match m.get(k) {
            None | Some(Value::Bool(_)) => Ok(None),
            Some(Value::Number(n)) => multiple::Decimal::of(n)
                .map(Some)
                .ok_or_else(|| format!("{k} has too many digits")),
            Some(_) => Err(format!("{k} is not a number")),
        }
    };
    let step = dec("multipleOf")?.ok_or("multipleOf is not a number")?;
    let (p, s) = multiple::step(step)?;
    let old_ex = |k: &str| matches!(m.get(k), Some(Value::Bool(true)));
    let mut lo = Vec::new();
    let mut hi = Vec::new();
    if let Some(v) = dec("minimum")? {
        lo.push((v, old_ex("exclusiveMinimum")));
    }
    if let Some(v) = dec("exclusiveMinimum")? {
        lo.push((v, true));
    }
    if let Some(v) = dec("maximum")? {
        hi.push((v, old_ex("exclusiveMaximum")));
    }
    if let Some(v) = dec("exclusiveMaximum")? {
        hi.push((v, true));
    }
    Ok((p, s, lo, hi))
}

/// The numbers (`integer`: integers) that are not multiples of `m`'s
/// [`NOT_MULTIPLE_OF`] and, when `m` has a `multipleOf`, are in
/// [`multiple_of`] ([`multiple::not_pattern`]); `Ok(None)` for none.
/// `Err`: why it is not enforced.
fn not_multiple_of(
    m: &Map<String, Value>,
    integer: bool,
    draft4: bool,
) -> std::result::Result<Option<String>, String> {
    let Some(Value::Number(n)) = m.get(NOT_MULTIPLE_OF) else {
        return Err("multipleOf is not a number".into());
    };
    let d = multiple::Decimal::of(n).ok_or("multipleOf has too many digits")?;
    let (p, s) = multiple::step(d)?;
    let spec = if m.contains_key("multipleOf") {
        Some(multiple_spec(m)?)
    } else if BOUND_KEYWORDS.iter().any(|k| m.contains_key(*k)) {
        return Err("the complement of multipleOf is not combined with bounds alone".into());
    } else {
        None
    };
    let within = spec
        .as_ref()
        .map(|(p, s, lo, hi)| (*p, *s, lo.as_slice(), hi.as_slice()));
    multiple::not_pattern(p, s, integer, integer && draft4, within)
}

/// The numeric bounds.
const BOUND_KEYWORDS: [&str; 4] = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"];

/// Prepares `x` to be merged (as `allOf`) with `other`: a property that
/// only `other` declares is, for `x`, an additional member, so it gets
/// `x`'s `additionalProperties` as its schema in `x` (when `x` has one that
/// constrains and no `patternProperties`, which would decide first); and
/// `x`'s `prefixItems` (none: the empty list) is extended to the length of
/// `other`'s with `x`'s `items` (absent: `true`). The union of the two
/// maps' `properties` / `prefixItems` then carries both sides' schemas.
fn widen_for_merge(x: &mut Map<String, Value>, other: &Map<String, Value>) {
    if let (Some(addl), Some(Value::Object(theirs))) = (
        x.get("additionalProperties").cloned(),
        other.get("properties"),
    ) {
        let patterns =
            matches!(x.get("patternProperties"), Some(Value::Object(p)) if !p.is_empty());
        if !is_vacuous(&addl) && !patterns {
            let mine = x
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(mine) = mine {
                for name in theirs.keys() {
                    if !mine.contains_key(name) {
                        mine.insert(name.clone(), addl.clone());
                    }
                }
            }
        }
    }
    let tuple = |m: &Map<String, Value>| matches!(m.get("items"), Some(Value::Array(_)));
    if let Some(Value::Array(theirs)) = other.get("prefixItems") {
        if tuple(x) {
            return;
        }
        let rest = x.get("items").cloned().unwrap_or(Value::Bool(true));
        let mine = x
            .entry("prefixItems")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(mine) = mine {
            while mine.len() < theirs.len() {
                mine.push(rest.clone());
            }
        }
    }
}

/// Whether schema `v` allows every value (`true`, `{}`, or only
/// annotations).
fn is_vacuous(v: &Value) -> bool {
    match v {
        Value::Bool(b) => *b,
        Value::Object(m) => m.keys().all(|k| ANNOTATIONS.contains(&k.as_str())),
        _ => false,
    }
}

/// The `dependentRequired` of schema object `m` (and the draft-7
/// `dependencies` whose values are all arrays): (trigger, required names).
fn dependent_required(m: &Map<String, Value>, ptr: &str) -> Result<Vec<(String, Vec<String>)>> {
    let mut out = Vec::new();
    for k in ["dependentRequired", "dependencies"] {
        let Some(v) = m.get(k) else { continue };
        let Value::Object(d) = v else {
            return Err(err(format!("{k} at {ptr} is not an object")));
        };
        if k == "dependencies" && !d.values().all(Value::is_array) {
            continue;
        }
        for (name, list) in d {
            let Value::Array(list) = list else {
                return Err(err(format!("{k}/{name} at {ptr} is not an array")));
            };
            let names: Vec<String> = list
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(String::from)
                        .ok_or_else(|| err(format!("{k}/{name} at {ptr} lists a non-string")))
                })
                .collect::<Result<_>>()?;
            out.push((name.clone(), names));
        }
    }
    Ok(out)
}

/// Finds the schema holding `"$anchor": name`.
fn find_anchor<'v>(
    v: &'v Value,
    name: &str,
    ptr: String,
    depth: usize,
) -> Option<(&'v Value, String)> {
    if depth > 64 {
        return None;
    }
    match v {
        Value::Object(m) => {
            if m.get("$anchor").and_then(Value::as_str) == Some(name) {
                return Some((v, ptr));
            }
            for (k, x) in m {
                if ["enum", "const", "default", "examples"].contains(&k.as_str()) {
                    continue;
                }
                if let Some(r) = find_anchor(x, name, format!("{ptr}/{}", ptr_token(k)), depth + 1)
                {
                    return Some(r);
                }
            }
            None
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| find_anchor(x, name, format!("{ptr}/{i}"), depth + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests;

/// The value of a count keyword (`minItems`, `maxLength`, ...) of schema
/// object `m` at `ptr`: absent, or a nonnegative integer (`3.0` accepted).
fn count_keyword(m: &Map<String, Value>, k: &str, ptr: &str) -> Result<Option<u64>> {
    match m.get(k) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| {
                v.as_f64()
                    .filter(|f| *f >= 0.0 && f.fract() == 0.0)
                    .map(|f| f as u64)
            })
            .map(Some)
            .ok_or_else(|| err(format!("{k} at {ptr} is not a nonnegative integer"))),
    }
}

//! `unevaluatedProperties` and `unevaluatedItems` (draft 2020-12), where
//! the members and items they apply to follow from the schema's text.
//!
//! A schema's `unevaluatedProperties: U` applies `U` to the members that no
//! keyword of the schema (nor of the subschemas it applies successfully)
//! evaluated: those not named by `properties`, not matching
//! `patternProperties`, not taken by `additionalProperties`, and likewise
//! for its `$ref` and `allOf` subschemas (which always apply), its `anyOf` /
//! `oneOf` branches that match, an `if` that passes with its `then`, an
//! `else`, and `dependentSchemas` whose trigger is present.
//!
//! The builder flattens `$ref` and `allOf` into one keyword map whose
//! `properties` are the union of theirs ([`Builder::merge`]), so within
//! that map `unevaluatedProperties` is the `additionalProperties` of the
//! union: [`Builder::localize_unevaluated`] rewrites it so, on each
//! subschema before it is merged into another (its `U` sees only its own
//! members) and on the schema itself once its applicators are resolved.
//! `unevaluatedItems: U` likewise becomes the schema for the items past
//! `prefixItems` when `items` is absent, or `anyOf: [contains, U]` with
//! `contains` (an item that matches `contains` is evaluated by it), which
//! [`Builder::contains_array`] then counts exactly.
//!
//! Beside `anyOf` / `oneOf` the siblings are merged into each branch, so a
//! member counts as evaluated when the branch that accepts the object
//! names it. That is exact when at most one branch can match (disjoint
//! branches), when every branch names the same members, or when one branch
//! accepts every instance and names every member the others name (it always
//! matches, so the union of the matching branches is its own);
//! [`Builder::check_unevaluated_branches`] reports the other cases (stricter
//! than a validator: a member named only by a second matching branch is
//! rejected). Beside `not` and `if` (rewritten into branches whose
//! complements may name members a failing subschema never evaluates) the
//! rewrite is reported as approximate; beside `dependentSchemas` and
//! `$dynamicRef` (not enforced) it is reported as not enforced.
//!
//! Cost: one map rewrite per schema object; the grammar is that of the
//! `additionalProperties` / `items` it becomes.

use serde_json::{Map, Value};

use super::{is_vacuous, Builder, ANNOTATIONS, EXTRA_MEMBER, STRING_RE};
use crate::error::Result;
use crate::grammar::Expr;

/// Keywords beside which the members a schema evaluates depend on the
/// instance in ways the rewrite does not follow (`anyOf`/`oneOf` are
/// resolved before the rewrite on the schema itself, and counted here for
/// subschemas merged into another).
const DYNAMIC: [&str; 7] = [
    "anyOf",
    "oneOf",
    "dependentSchemas",
    "$dynamicRef",
    "$recursiveRef",
    "if",
    "not",
];

impl Builder<'_> {
    /// Rewrites `unevaluatedProperties` / `unevaluatedItems` of the
    /// flattened schema `t` (no `$ref`/`allOf` left) into the
    /// `additionalProperties` / `items` they amount to (see the module
    /// docs); beside an applicator that evaluates members depending on the
    /// instance, they are dropped and reported as not enforced.
    ///
    /// # Errors
    ///
    /// In strict mode, a form that is not enforced.
    pub(super) fn localize_unevaluated(
        &mut self,
        t: &mut Map<String, Value>,
        ptr: &str,
    ) -> Result<()> {
        let dynamic = DYNAMIC
            .iter()
            .find(|k| t.get(**k).is_some_and(|v| !is_vacuous_applicator(k, v)))
            .copied();
        if let Some(u) = t.remove("unevaluatedProperties") {
            if t.contains_key("additionalProperties") {
                // Every member is evaluated already.
            } else if is_vacuous(&u) {
                // Anything goes, and every member counts as evaluated (for
                // an `unevaluatedProperties` of a schema this is merged into).
                t.insert("additionalProperties".into(), Value::Bool(true));
            } else if let Some(k) = dynamic {
                self.report(
                    "unevaluatedProperties",
                    ptr,
                    format!(
                        "beside {k}: which members that evaluates depends on the instance; ignored"
                    ),
                    false,
                )?;
            } else {
                t.insert("additionalProperties".into(), u);
            }
        }
        if let Some(u) = t.remove("unevaluatedItems") {
            let tuple = matches!(t.get("items"), Some(Value::Array(_)));
            let rest = if tuple { "additionalItems" } else { "items" };
            if t.contains_key(rest) {
                // Every item is evaluated already.
            } else if is_vacuous(&u) {
                t.insert(rest.into(), Value::Bool(true));
            } else if let Some(k) = dynamic {
                self.report(
                    "unevaluatedItems",
                    ptr,
                    format!(
                        "beside {k}: which items that evaluates depends on the instance; ignored"
                    ),
                    false,
                )?;
            } else {
                let u = match t.get("contains") {
                    Some(c) => serde_json::json!({ "anyOf": [c.clone(), u] }),
                    None => u,
                };
                t.insert(rest.into(), u);
            }
        }
        Ok(())
    }

    /// Reports `unevaluated*` among the `siblings` of the `anyOf`/`oneOf`
    /// `lists` (one or both; `exclusive`: a single `oneOf` list whose
    /// branches can match only one at a time) when merging them into each
    /// branch is not exact.
    ///
    /// # Errors
    ///
    /// A malformed branch; in strict mode, a form that is not exact.
    pub(super) fn unevaluated_beside_branches(
        &mut self,
        siblings: &Map<String, Value>,
        lists: &[(&str, Vec<Value>)],
        exclusive: bool,
        ptr: &str,
    ) -> Result<()> {
        let branches: Vec<Value> = match lists {
            [(_, l)] => l.clone(),
            [(_, a), (_, b)] => a
                .iter()
                .flat_map(|p| {
                    b.iter()
                        .map(move |q| serde_json::json!({ "allOf": [p, q] }))
                })
                .collect(),
            _ => return Ok(()),
        };
        let one_of_alone = lists.len() == 1 && lists[0].0 == "oneOf";
        let disjoint =
            (one_of_alone && exclusive) || self.pairwise_disjoint(&branches, siblings, ptr)?;
        let mut flat = Vec::with_capacity(branches.len());
        for (i, b) in branches.iter().enumerate() {
            flat.push(self.flatten(b, &format!("{ptr}/anyOf/{i}"), 0)?);
        }
        self.check_unevaluated_branches(siblings, &flat, disjoint, ptr)
    }

    /// Reports `unevaluated*` beside the `anyOf`/`oneOf` `branches` (already
    /// flattened, without the siblings) when merging the siblings into each
    /// branch is not exact (see the module docs); `disjoint` says that at
    /// most one branch can match.
    ///
    /// # Errors
    ///
    /// In strict mode, a form that is not exact.
    pub(super) fn check_unevaluated_branches(
        &mut self,
        siblings: &Map<String, Value>,
        branches: &[Map<String, Value>],
        disjoint: bool,
        ptr: &str,
    ) -> Result<()> {
        for (k, what) in [
            ("unevaluatedProperties", "members"),
            ("unevaluatedItems", "items"),
        ] {
            if siblings.get(k).is_none_or(is_vacuous) || disjoint {
                continue;
            }
            let sig: Vec<Signature> = branches.iter().map(Signature::of).collect();
            let same = sig.windows(2).all(|w| w[0] == w[1]);
            let covering = branches
                .iter()
                .zip(&sig)
                .any(|(b, s)| accepts_everything(b) && sig.iter().all(|o| o.within(s)));
            if !(same || covering) {
                self.report(
                    k,
                    ptr,
                    format!(
                        "beside overlapping anyOf/oneOf branches that evaluate different {what}: \
                         only those of the branch that accepts the instance count (stricter than \
                         a validator when two branches match)"
                    ),
                    true,
                )?;
            }
        }
        Ok(())
    }

    /// Reports `unevaluated*` of `m` beside `not` / `if`, whose rewriting
    /// may name members a failing subschema never evaluates.
    ///
    /// # Errors
    ///
    /// Never in lenient mode (approximations are not errors).
    pub(super) fn check_unevaluated_conditionals(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<()> {
        let cond = ["not", "if"]
            .iter()
            .find(|k| m.get(**k).is_some_and(|v| !is_vacuous_applicator(k, v)));
        let Some(cond) = cond else {
            return Ok(());
        };
        for k in ["unevaluatedProperties", "unevaluatedItems"] {
            if m.get(k).is_some_and(|u| !is_vacuous(u)) {
                self.report(
                    k,
                    ptr,
                    format!(
                        "beside {cond}: the members or items its subschemas evaluate are \
                         not followed exactly (those its rewriting names count as evaluated, \
                         those of an `if` without `then`/`else` do not)"
                    ),
                    true,
                )?;
            }
        }
        Ok(())
    }
}

impl Builder<'_> {
    /// The complement of the flattened schema `c` holding `unevaluated*`
    /// (see [`Builder::negate`]): without `anyOf`/`oneOf`, that of its
    /// rewrite; beside `anyOf` alone, that of the `anyOf` of the branches
    /// with the siblings merged in, when that is exact. `None` otherwise.
    ///
    /// # Errors
    ///
    /// A malformed subschema.
    pub(super) fn negate_unevaluated(
        &mut self,
        c: &Map<String, Value>,
        within: u8,
        ptr: &str,
        depth: usize,
    ) -> Result<Option<Map<String, Value>>> {
        let before = self.unenforced.len();
        // Whether probing reported anything (then the form is not exact and
        // the caller reports the `not` instead).
        let clean = |b: &mut Self| {
            let ok = b.unenforced.len() == before;
            b.unenforced.truncate(before);
            ok
        };
        if !c.contains_key("anyOf") && !c.contains_key("oneOf") {
            let mut l = c.clone();
            self.localize_unevaluated(&mut l, ptr)?;
            if !clean(self) {
                return Ok(None);
            }
            return self.negate(&l, within, ptr, depth + 1);
        }
        let only_any_of = c.keys().all(|k| {
            ANNOTATIONS.contains(&k.as_str())
                || ["anyOf", "unevaluatedProperties", "unevaluatedItems"].contains(&k.as_str())
        });
        let (true, Some(Value::Array(list))) = (only_any_of, c.get("anyOf")) else {
            return Ok(None);
        };
        let mut siblings = c.clone();
        siblings.remove("anyOf");
        self.unevaluated_beside_branches(&siblings, &[("anyOf", list.clone())], false, ptr)?;
        let mut branches = Vec::with_capacity(list.len());
        for (i, b) in list.iter().enumerate() {
            let bm = self.flatten(b, &format!("{ptr}/anyOf/{i}"), 0)?;
            branches.push(Value::Object(self.merge(siblings.clone(), bm, ptr)?));
        }
        if !clean(self) {
            return Ok(None);
        }
        let mut d = Map::new();
        d.insert("anyOf".into(), Value::Array(branches));
        self.negate(&d, within, ptr, depth + 1)
    }

    /// The objects with at least one member whose name is not in `names`
    /// ([`EXTRA_MEMBER`], made by complements), when `m` has no other
    /// keyword about members: `{ (M ",")* X ("," M)* }` with `M` any member
    /// and `X` one with another name. `None` (reported) beside other member
    /// keywords: the object is then built without this requirement.
    ///
    /// # Errors
    ///
    /// A grammar size limit; in strict mode, the form not enforced.
    pub(super) fn extra_member_object(
        &mut self,
        m: &Map<String, Value>,
        ptr: &str,
    ) -> Result<Option<Expr>> {
        let Some(Value::Array(list)) = m.get(EXTRA_MEMBER) else {
            return Ok(None);
        };
        let names: Vec<String> = list
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let other = m.iter().find(|(k, v)| {
            let k = k.as_str();
            let member_keyword = [
                "required",
                "patternProperties",
                "minProperties",
                "maxProperties",
                "propertyNames",
                "dependentRequired",
                "dependencies",
                "dependentSchemas",
            ]
            .contains(&k);
            member_keyword
                || (k == "additionalProperties" && !is_vacuous(v))
                || (k == "properties" && !v.as_object().is_some_and(|p| p.values().all(is_vacuous)))
        });
        if let Some((k, _)) = other {
            self.report(
                "not",
                ptr,
                format!(
                    "\"an undeclared member\" (the complement of additionalProperties: false) \
                     is not combined with {k}; not required"
                ),
                false,
            )?;
            return Ok(None);
        }
        let value = Expr::Rule(self.any_value()?);
        let string = Expr::Term(self.term("STRING", STRING_RE));
        let (open, close, comma, colon) =
            (self.lit("{"), self.lit("}"), self.lit(","), self.lit(":"));
        let member = Expr::Seq(vec![string, colon.clone(), value.clone()]);
        let key = self.extra_key_term(&names);
        let extra = Expr::Seq(vec![key, colon, value]);
        Ok(Some(Expr::Seq(vec![
            open,
            Expr::Star(Box::new(Expr::Seq(vec![member.clone(), comma.clone()]))),
            extra,
            Expr::Star(Box::new(Expr::Seq(vec![comma, member]))),
            close,
        ])))
    }
}

/// Whether applicator `k` with value `v` has no effect on what is
/// evaluated: only `not: false` (every instance passes it, and a `not`
/// keeps no annotations). Every other applicator in [`DYNAMIC`] counts.
fn is_vacuous_applicator(k: &str, v: &Value) -> bool {
    k == "not" && *v == Value::Bool(false)
}

/// What a branch evaluates by itself, as far as the rewrite compares them.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Signature {
    /// Declared member names, sorted.
    names: Vec<String>,
    /// `patternProperties`, `additionalProperties`, `items`, `contains`,
    /// `unevaluated*`, prefix length, …: compared as JSON text.
    rest: Vec<String>,
    /// `prefixItems` (or tuple `items`) length.
    prefix: usize,
}

impl Signature {
    fn of(b: &Map<String, Value>) -> Signature {
        let mut names: Vec<String> = b
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        let rest = [
            "patternProperties",
            "additionalProperties",
            "unevaluatedProperties",
            "items",
            "additionalItems",
            "unevaluatedItems",
            "contains",
        ]
        .iter()
        .filter_map(|k| b.get(*k).map(|v| format!("{k}={v}")))
        .collect();
        let prefix = match (b.get("prefixItems"), b.get("items")) {
            (Some(Value::Array(a)), _) | (None, Some(Value::Array(a))) => a.len(),
            _ => 0,
        };
        Signature {
            names,
            rest,
            prefix,
        }
    }

    /// Whether everything `self` evaluates, `other` evaluates too.
    fn within(&self, other: &Signature) -> bool {
        self.rest == other.rest
            && self.prefix <= other.prefix
            && self
                .names
                .iter()
                .all(|n| other.names.binary_search(n).is_ok())
    }
}

/// Whether the flattened branch `b` accepts every instance (only
/// annotations and `properties` whose schemas accept anything).
fn accepts_everything(b: &Map<String, Value>) -> bool {
    b.iter().all(|(k, v)| {
        ANNOTATIONS.contains(&k.as_str())
            || (k == "properties" && v.as_object().is_some_and(|p| p.values().all(is_vacuous)))
    })
}

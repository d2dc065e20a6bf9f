//! JSON Schema → grammar on real schemas.
//!
//! * `json_mode_eval`: the 100 schemas of NousResearch/json-mode-eval (shipped
//!   under `datasets/json-schema/json-mode-eval`) compile in strict-free mode
//!   and accept their gold completion, re-serialised with keys in schema order,
//!   compact and pretty, by the engine and by the independent recognizer; with
//!   1–2 spans cut out the text stays completable and the witness is accepted
//!   by the recognizer. Prints the check latency.
//! * `maskbench` (ignored by default, ~11 min): a report over
//!   `../shared/datasets/json/maskbench-dev` (not shipped: no licence);
//!   returns early when absent.
//! * `suite`: JSON-Schema-Test-Suite draft 2020-12 pass rate per keyword.
//!   `CDIFF_WRITE_SUITE_TABLE=1 cargo test --release --test json_schema suite -- --nocapture`
//!   rewrites `docs/json-schema-suite.md`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cdiff::grammar::{json_schema_to_grammar, SchemaOptions};
use cdiff::recognize::Recognizer;
use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Partial};
use serde_json::Value;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    v.sort();
    v
}

// ---------------------------------------------------------------------------
// Serialising instances with keys in schema order.

/// Resolves a local `$ref` (JSON pointer or the document).
fn resolve<'a>(root: &'a Value, r: &str) -> Option<&'a Value> {
    let frag = r.strip_prefix('#')?;
    if frag.is_empty() {
        return Some(root);
    }
    let mut s = String::new();
    let b = frag.as_bytes();
    let mut i = 0;
    let mut bytes = Vec::new();
    while i < b.len() {
        if b[i] == b'%' && i + 3 <= b.len() {
            if let Ok(x) = u8::from_str_radix(&frag[i + 1..i + 3], 16) {
                bytes.push(x);
                i += 3;
                continue;
            }
        }
        bytes.push(b[i]);
        i += 1;
    }
    s.push_str(&String::from_utf8(bytes).ok()?);
    root.pointer(&s)
}

/// The property order and subschemas an object instance of `schema` sees:
/// `properties` of the schema, its `$ref`, `allOf`, `anyOf`, `oneOf`, in order.
fn collect_props(schema: &Value, root: &Value, depth: usize, out: &mut Vec<(String, Value)>) {
    if depth > 20 {
        return;
    }
    let Some(m) = schema.as_object() else { return };
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        if let Some(t) = resolve(root, r) {
            collect_props(t, root, depth + 1, out);
        }
    }
    if let Some(Value::Object(p)) = m.get("properties") {
        for (k, s) in p {
            if !out.iter().any(|(n, _)| n == k) {
                out.push((k.clone(), s.clone()));
            }
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = m.get(key) {
            for s in a {
                collect_props(s, root, depth + 1, out);
            }
        }
    }
}

/// The schema of item `i` of an array instance of `schema`.
fn item_schema(schema: &Value, root: &Value, i: usize, depth: usize) -> Option<Value> {
    if depth > 20 {
        return None;
    }
    let m = schema.as_object()?;
    if let Some(r) = m.get("$ref").and_then(Value::as_str) {
        if let Some(s) = resolve(root, r).and_then(|t| item_schema(t, root, i, depth + 1)) {
            return Some(s);
        }
    }
    if let Some(Value::Array(p)) = m.get("prefixItems") {
        if let Some(s) = p.get(i) {
            return Some(s.clone());
        }
    }
    match m.get("items") {
        Some(Value::Array(p)) => {
            if let Some(s) = p.get(i) {
                return Some(s.clone());
            }
        }
        Some(s @ Value::Object(_)) => return Some(s.clone()),
        _ => {}
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(a)) = m.get(key) {
            for s in a {
                if let Some(x) = item_schema(s, root, i, depth + 1) {
                    return Some(x);
                }
            }
        }
    }
    None
}

fn additional_schema(schema: &Value, root: &Value, depth: usize) -> Option<Value> {
    if depth > 20 {
        return None;
    }
    let m = schema.as_object()?;
    if let Some(s @ Value::Object(_)) = m.get("additionalProperties") {
        return Some(s.clone());
    }
    let r = m.get("$ref").and_then(Value::as_str)?;
    additional_schema(resolve(root, r)?, root, depth + 1)
}

/// Writes `v` with object keys in the order of `schema` (declared keys in
/// schema order, then the rest in instance order), compact or pretty.
fn write(v: &Value, schema: &Value, root: &Value, pretty: bool, indent: usize, out: &mut String) {
    let nl = |out: &mut String, n: usize| {
        if pretty {
            out.push('\n');
            out.push_str(&"  ".repeat(n));
        }
    };
    match v {
        Value::Object(o) => {
            let mut props = Vec::new();
            collect_props(schema, root, 0, &mut props);
            let extra = additional_schema(schema, root, 0).unwrap_or(Value::Bool(true));
            let mut keys: Vec<(&String, Value)> = Vec::new();
            for (k, s) in &props {
                if let Some((k, _)) = o.get_key_value(k) {
                    keys.push((k, s.clone()));
                }
            }
            for k in o.keys() {
                if !props.iter().any(|(n, _)| n == k) {
                    keys.push((k, extra.clone()));
                }
            }
            out.push('{');
            for (i, (k, s)) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                nl(out, indent + 1);
                out.push_str(&serde_json::to_string(k).unwrap());
                out.push_str(if pretty { ": " } else { ":" });
                write(&o[k.as_str()], s, root, pretty, indent + 1, out);
            }
            if !keys.is_empty() {
                nl(out, indent);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                nl(out, indent + 1);
                let s = item_schema(schema, root, i, 0).unwrap_or(Value::Bool(true));
                write(x, &s, root, pretty, indent + 1, out);
            }
            if !a.is_empty() {
                nl(out, indent);
            }
            out.push(']');
        }
        _ => out.push_str(&serde_json::to_string(v).unwrap()),
    }
}

fn serialize(v: &Value, schema: &Value, pretty: bool) -> String {
    let mut s = String::new();
    write(v, schema, schema, pretty, 0, &mut s);
    s
}

fn compile(schema: &Value) -> Result<(Constraint, Recognizer), String> {
    let (g, _) =
        json_schema_to_grammar(schema, &SchemaOptions::default()).map_err(|e| e.to_string())?;
    let c = Constraint::compile(&g).map_err(|e| e.to_string())?;
    let r = Recognizer::new(&g).map_err(|e| e.to_string())?;
    Ok((c, r))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v.get(((v.len() as f64 * p) as usize).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or(0.0)
}

#[test]
fn json_mode_eval() {
    let files = json_files(&root().join("datasets/json-schema/json-mode-eval"));
    assert_eq!(files.len(), 100);
    let mut rng = SplitMix64::new(2024);
    let mut complete_us = Vec::new();
    let mut holes_us = Vec::new();
    let mut compile_ms = Vec::new();
    for f in &files {
        let d: Value = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        let schema = &d["schema"];
        let t = Instant::now();
        let (c, r) = compile(schema).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        compile_ms.push(t.elapsed().as_secs_f64() * 1e3);
        for test in d["tests"].as_array().unwrap() {
            assert_eq!(test["valid"], true);
            for pretty in [false, true] {
                let text = serialize(&test["data"], schema, pretty);
                let t = Instant::now();
                let ok = c.check(&Partial::complete(&text)).unwrap();
                complete_us.push(t.elapsed().as_secs_f64() * 1e6);
                assert!(ok, "{}: engine rejects {text}", f.display());
                assert!(
                    r.accepts(text.as_bytes()).unwrap(),
                    "{}: recognizer rejects {text}",
                    f.display()
                );
                for holes in 1..=2 {
                    let (p, _) = cut_spans(text.as_bytes(), holes, &mut rng);
                    let t = Instant::now();
                    assert!(
                        c.check(&p).unwrap(),
                        "{}: {p:?} not completable",
                        f.display()
                    );
                    holes_us.push(t.elapsed().as_secs_f64() * 1e6);
                    let v = c.completable(&p).unwrap();
                    let w = &v.completion().expect("completable").text;
                    assert!(
                        r.accepts(w).unwrap(),
                        "{}: witness {} rejected",
                        f.display(),
                        String::from_utf8_lossy(w)
                    );
                }
            }
        }
    }
    println!(
        "json-mode-eval: 100/100 compiled (median {:.1} ms, max {:.1} ms); complete texts: median {:.1} µs, p90 {:.1} µs; 1-2 holes: median {:.1} µs, p90 {:.1} µs, p99 {:.1} µs",
        median(&mut compile_ms),
        pct(&mut compile_ms, 1.0),
        median(&mut complete_us),
        pct(&mut complete_us, 0.9),
        median(&mut holes_us),
        pct(&mut holes_us, 0.9),
        pct(&mut holes_us, 0.99),
    );
}

/// Takes about 11 minutes on one core (38 schemas spend seconds in the lexer
/// build), hence ignored by default:
/// `cargo test --release --test json_schema maskbench -- --ignored --nocapture`.
/// Measured (commit of this line): 1079/1121 compiled (96.3%), valid accepted
/// 1320/1340 (98.5%), invalid rejected 2128/2200 (96.7%). The rejected valid
/// instances are mostly key-order cases the schema-guided re-serialiser gets
/// wrong (keys declared in several `anyOf` branches) — not yet analysed one by one.
#[test]
#[ignore]
fn maskbench() {
    let dir = root().join("../shared/datasets/json/maskbench-dev");
    let dir = if dir.exists() {
        dir
    } else {
        PathBuf::from("/work/shared/datasets/json/maskbench-dev")
    };
    if !dir.exists() {
        println!("maskbench: {} absent, skipped", dir.display());
        return;
    }
    let limit: usize = std::env::var("CDIFF_MASKBENCH_LIMIT")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(usize::MAX);
    let files = json_files(&dir);
    let (mut total, mut compiled) = (0, 0);
    let (mut valid, mut valid_ok, mut invalid, mut invalid_rejected) = (0, 0, 0, 0);
    let mut errors: std::collections::BTreeMap<String, usize> = Default::default();
    let mut failures = Vec::new();
    let t0 = Instant::now();
    for f in files.iter().take(limit) {
        let Ok(d) = serde_json::from_str::<Value>(&std::fs::read_to_string(f).unwrap()) else {
            continue;
        };
        total += 1;
        let schema = &d["schema"];
        let t_file = Instant::now();
        if std::env::var("CDIFF_VERBOSE").is_ok() {
            println!("  {}", f.display());
        }
        let c = match json_schema_to_grammar(schema, &SchemaOptions::default())
            .and_then(|(g, _)| Constraint::compile(&g))
        {
            Ok(c) => c,
            Err(e) => {
                let msg = e.to_string();
                let key: String = msg
                    .split(" at ")
                    .next()
                    .unwrap_or(&msg)
                    .chars()
                    .take(60)
                    .collect();
                *errors.entry(key).or_default() += 1;
                continue;
            }
        };
        compiled += 1;
        for test in d["tests"].as_array().into_iter().flatten() {
            let text = serialize(&test["data"], schema, false);
            let ok = c.check(&Partial::complete(&text)).unwrap_or(false);
            if test["valid"] == true {
                valid += 1;
                if ok {
                    valid_ok += 1;
                } else if failures.len() < 30 {
                    failures.push(format!(
                        "{}: {}",
                        f.file_name().unwrap().to_string_lossy(),
                        &text[..text.len().min(150)]
                    ));
                }
            } else {
                invalid += 1;
                if !ok {
                    invalid_rejected += 1;
                }
            }
        }
        if t_file.elapsed().as_secs_f64() > 2.0 {
            println!(
                "  slow: {} {:.1} s",
                f.display(),
                t_file.elapsed().as_secs_f64()
            );
        }
    }
    let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    println!(
        "maskbench-dev: {compiled}/{total} schemas compiled ({:.1}%); valid instances accepted {valid_ok}/{valid} ({:.1}%); invalid rejected {invalid_rejected}/{invalid} ({:.1}%); {:.1} s",
        share(compiled, total),
        share(valid_ok, valid),
        share(invalid_rejected, invalid),
        t0.elapsed().as_secs_f64()
    );
    for (e, n) in &errors {
        println!("  compile error x{n}: {e}");
    }
    for f in &failures {
        println!("  valid rejected: {f}");
    }
    assert!(share(compiled, total) >= 90.0, "compiled share below 90%");
    assert!(share(valid_ok, valid) >= 98.0, "valid acceptance below 98%");
}

#[test]
fn suite() {
    let dir = root().join("datasets/json-schema/json-schema-test-suite/draft2020-12");
    let mut rows = Vec::new();
    let (mut all_tests, mut all_pass) = (0, 0);
    for f in json_files(&dir) {
        let keyword = f.file_stem().unwrap().to_string_lossy().to_string();
        let groups: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let (mut g_total, mut g_compiled, mut tests, mut passed) = (0, 0, 0, 0);
        for g in &groups {
            g_total += 1;
            let schema = &g["schema"];
            let c = json_schema_to_grammar(schema, &SchemaOptions::default())
                .and_then(|(g, _)| Constraint::compile(&g))
                .ok();
            if c.is_some() {
                g_compiled += 1;
            }
            for t in g["tests"].as_array().into_iter().flatten() {
                tests += 1;
                let Some(c) = &c else { continue };
                let text = serialize(&t["data"], schema, false);
                let ok = c.check(&Partial::complete(&text)).unwrap_or(false);
                if ok == (t["valid"] == true) {
                    passed += 1;
                }
            }
        }
        all_tests += tests;
        all_pass += passed;
        rows.push(format!(
            "| {keyword} | {g_compiled}/{g_total} | {passed}/{tests} | {:.0}% |",
            100.0 * passed as f64 / tests.max(1) as f64
        ));
    }
    let mut table = String::from(
        "# JSON-Schema-Test-Suite, draft 2020-12\n\n\
         Generated by `CDIFF_WRITE_SUITE_TABLE=1 cargo test --release --test json_schema suite -- --nocapture`.\n\
         Per keyword file: schemas compiled (lenient mode: unenforced keywords listed, not errors), and tests\n\
         whose verdict (complete text accepted or not) equals the suite's `valid`. Instances are serialised\n\
         compactly with object keys in schema order (declared properties first). A schema that does not\n\
         compile fails all its tests.\n\n\
         | keyword | schemas compiled | tests passed | rate |\n|---|---|---|---|\n",
    );
    for r in &rows {
        table.push_str(r);
        table.push('\n');
    }
    table.push_str(&format!(
        "| **all** | | {all_pass}/{all_tests} | {:.0}% |\n",
        100.0 * all_pass as f64 / all_tests.max(1) as f64
    ));
    println!("{table}");
    if std::env::var("CDIFF_WRITE_SUITE_TABLE").is_ok() {
        std::fs::write(root().join("docs/json-schema-suite.md"), &table).unwrap();
    }
    assert!(all_pass * 2 > all_tests, "suite pass rate below 50%");
}

//! `cdiff eval` DLM tasks (issue 11): the JSON and SMILES metrics on known
//! cases, the SMILES graph comparison against RDKit's verdicts
//! (`tests/data/smiles-pairs.jsonl`, made by `eval/make_smiles_pairs.py`),
//! the `dlm-cpp` instances (instruction and prefill), the oracle `gold` at
//! 100 %, and three-instance runs of the shipped `json-tiny`, `smiles-tiny`
//! and `cpp-tiny` in con mode, stopped halfway, resumed and reported.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use cdiff::eval::json::{self, SchemaOracle};
use cdiff::eval::metrics::{self, Gxx};
use cdiff::eval::record::Record;
use cdiff::eval::smiles;
use cdiff::eval::tasks;
use cdiff::grammar::{json_schema_to_grammar, SchemaOptions};
use cdiff::recognize::Recognizer;
use common::eval::{essence, ok, records};
use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn cdiff(args: &[&str]) -> Output {
    common::eval::cdiff_env(args, &[])
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cdiff-test-evaldlm-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ------------------------------------------------------------------ metrics

#[test]
fn json_metrics_on_known_cases() {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer", "minimum": 0}
        },
        "required": ["name", "age"],
        "additionalProperties": false
    });
    let (g, _) = json_schema_to_grammar(&schema, &SchemaOptions::default()).unwrap();
    let rec = Recognizer::new(&g).unwrap();
    let oracle = SchemaOracle::new(&schema).unwrap();
    let gold = json!({"name": "Ada", "age": 36});
    let v = |t: &str| {
        let v = json::judge(&rec, &oracle, &gold, t);
        (v.syntax_ok, v.schema_ok, v.functional_ok)
    };
    assert_eq!(v(r#"{"name":"Ada","age":36}"#), (true, true, true));
    assert!(v(r#"{"name": "Ada", "age": 36.0}"#).2, "36.0 is 36");
    // Valid but another value.
    assert_eq!(v(r#"{"name":"Bob","age":36}"#), (true, true, false));
    // Not JSON.
    assert_eq!(v(r#"{"name":"Ada","age":36"#), (false, false, false));
    // JSON, but not valid under the schema (and not in its grammar).
    assert_eq!(v(r#"{"name":"Ada","age":-1}"#), (false, false, false));
    assert_eq!(v(r#"{"name":"Ada"}"#), (false, false, false));
    // Keys out of schema order: the grammar takes properties in any order
    // (issue 13), and the value is the gold one.
    assert_eq!(v(r#"{"age":36,"name":"Ada"}"#), (true, true, true));
    // A schema the oracle refuses is an error, not a panic.
    assert!(SchemaOracle::new(&json!({"type": 12})).is_err());
    assert!(SchemaOracle::new(&json!({"$ref": "https://example.com/s.json"})).is_err());
}

#[test]
fn smiles_metric_on_known_cases() {
    assert!(smiles::same_molecule("OCC", "CCO"));
    assert!(smiles::same_molecule("c1ccccc1C(=O)O", "OC(=O)c1ccccc1"));
    assert!(smiles::same_molecule("C1CC2CCC1CC2", "C2CC1CCC2CC1"));
    assert!(!smiles::same_molecule("CCO", "COC"));
    assert!(
        !smiles::same_molecule("c1ccccc1", "C1=CC=CC=C1"),
        "documented: no kekulé↔aromatic"
    );
    assert!(
        !smiles::same_molecule("C1CC", "C1CC"),
        "unclosed ring: no molecule"
    );
}

#[test]
fn smiles_graphs_agree_with_rdkit() {
    let text = std::fs::read_to_string(root().join("tests/data/smiles-pairs.jsonl"))
        .expect("tests/data/smiles-pairs.jsonl (eval/make_smiles_pairs.py)");
    let (mut n, mut agree) = (0usize, 0usize);
    let mut disagreements = Vec::new();
    let mut kinds = std::collections::BTreeMap::<String, (usize, usize)>::new();
    for line in text.lines() {
        let p: Value = serde_json::from_str(line).unwrap();
        let (a, b) = (p["a"].as_str().unwrap(), p["b"].as_str().unwrap());
        let same = p["same"].as_bool().unwrap();
        let ours = smiles::same_molecule(a, b);
        n += 1;
        let k = kinds
            .entry(p["kind"].as_str().unwrap().to_string())
            .or_default();
        k.0 += 1;
        if ours == same {
            agree += 1;
            k.1 += 1;
        } else {
            disagreements.push(format!(
                "{a} vs {b}: rdkit {same}, cdiff {ours} ({})",
                match (smiles::parse(a), smiles::parse(b)) {
                    (Err(e), _) | (_, Err(e)) => e.to_string(),
                    _ => "parsed".into(),
                }
            ));
        }
    }
    eprintln!("{agree}/{n} pairs agree with RDKit; by kind (pairs, agree): {kinds:?}");
    for d in &disagreements {
        eprintln!("disagreement: {d}");
    }
    assert!(n >= 500, "{n} pairs");
    assert!(
        agree as f64 >= 0.99 * n as f64,
        "{agree}/{n} agree:\n{}",
        disagreements.join("\n")
    );
}

#[test]
fn shipped_instances() {
    let jme = json::jme_instances(&root().join("datasets/json-schema/json-mode-eval")).unwrap();
    assert_eq!(jme.len(), 100);
    assert_eq!(jme[0].instance_id, "JME_0");
    assert_eq!(jme[10].instance_id, "JME_10");
    for i in &jme {
        let gold = i.gold().unwrap();
        assert!(
            SchemaOracle::new(&i.schema).unwrap().is_valid(&gold),
            "{}",
            i.instance_id
        );
        assert!(i.input.is_empty());
    }
    let p = root().join("datasets/smiles/sample.smi");
    let a = smiles::sample_instances(&p, 0).unwrap();
    assert_eq!(a.len(), 500);
    assert_eq!(a, smiles::sample_instances(&p, 0).unwrap());
    let b = smiles::sample_instances(&p, 1).unwrap();
    assert_ne!(a[..10], b[..10], "another data seed, another sample");
    let mut ids: Vec<&str> = a.iter().map(|i| i.instance_id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 500);
}

#[test]
fn dlm_cpp_instances_split_instruction_and_signature() {
    let rows = tasks::read_humaneval(&root().join("datasets/humaneval-x-cpp/humaneval_cpp.jsonl"))
        .unwrap();
    let src = std::fs::read_to_string(root().join("grammars/cpp.ebnf")).unwrap();
    let rec = Recognizer::new(&cdiff::Grammar::from_lark(&src, None).unwrap()).unwrap();
    let insts = tasks::make_dlm_cpp(&rows, |t| metrics::syntax_ok(&rec, t));
    assert_eq!(insts.len(), 164, "every gold program is in the grammar");
    for (i, r) in insts.iter().zip(&rows) {
        assert_eq!(i.instance_id, r.task_id);
        assert!(!i.input.is_empty(), "{}: no instruction", i.instance_id);
        assert!(
            !i.input.contains("/*") && !i.input.contains("*/"),
            "{}",
            i.instance_id
        );
        // The instruction's text is gone from the prefill, the rest is kept.
        assert!(!i.prefill.contains(&i.input), "{}", i.instance_id);
        assert!(
            r.prompt.len() > i.prefill.len() + i.input.len(),
            "{}",
            i.instance_id
        );
        assert!(
            i.prefill.trim_end().ends_with('{'),
            "{}: {:?}",
            i.instance_id,
            i.prefill
        );
    }
    let (instr, rest) =
        tasks::split_instruction("/*\nAdd two numbers.\n*/\nint add(int a, int b){\n");
    assert_eq!(
        (instr.as_str(), rest.as_str()),
        ("Add two numbers.", "int add(int a, int b){\n")
    );
    let (instr, rest) =
        tasks::split_instruction("int f(){\n    // first line\n    // second\n    return 1;}\n");
    assert_eq!(instr, "first line\nsecond");
    assert_eq!(rest, "int f(){\n    return 1;}\n");
    assert_eq!(
        tasks::split_instruction("int f();"),
        (String::new(), "int f();".into())
    );
}

// --------------------------------------------------------------- end to end

fn run(task: &str, model: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "eval",
        "run",
        "--task",
        task,
        "--model",
        model,
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = cdiff(&args);
    ok(&o, &format!("{task} {model} {extra:?}"));
    o
}

#[test]
fn gold_is_always_right() {
    let d = tmp("gold");
    for (task, limit) in [("json", "100"), ("smiles", "40")] {
        let out = d.join(format!("{task}.jsonl"));
        run(
            task,
            "gold",
            &out,
            &["--modes", "con", "--seeds", "0", "--limit", limit],
        );
        let rs = records(&out);
        assert_eq!(rs.len().to_string(), limit);
        for r in &rs {
            assert!(r.error.is_none(), "{}: {:?}", r.instance_id, r.error);
            assert!(r.syntax_ok, "{} {}: {}", task, r.instance_id, r.text);
            assert_eq!(r.functional_ok, Some(true), "{}: {}", r.instance_id, r.text);
            assert_eq!(r.schema_ok, (task == "json").then_some(true));
        }
        let o = cdiff(&["eval", "report", out.to_str().unwrap()]);
        ok(&o, "report");
        let table = String::from_utf8_lossy(&o.stdout);
        let want = if task == "json" {
            format!("| gold | {limit} | 1 | 100.0 | 100.0 | 100.0 |")
        } else {
            format!("| gold | {limit} | 1 | 100.0 | 100.0 |")
        };
        assert!(table.contains(&want), "{table}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn gold_dlm_cpp_compiles_and_passes() {
    let d = tmp("goldcpp");
    let out = d.join("cpp.jsonl");
    run(
        "dlm-cpp",
        "gold",
        &out,
        &["--modes", "con", "--seeds", "0", "--limit", "3"],
    );
    let rs = records(&out);
    assert_eq!(rs.len(), 3);
    let have_gxx = Gxx::find().is_some();
    for r in &rs {
        assert!(r.error.is_none(), "{:?}", r.error);
        assert!(r.syntax_ok, "{}", r.instance_id);
        if have_gxx {
            assert_eq!(r.gxx_syntax_ok, Some(true), "{}", r.instance_id);
            assert_eq!(r.functional_ok, Some(true), "{:?}", r.functional_status);
        } else {
            eprintln!("no g++ found: functional not checked");
            assert_eq!(r.functional_ok, None);
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_data_is_an_error_not_a_panic() {
    let d = tmp("bad");
    let data = d.join("data.jsonl");
    std::fs::write(
        &data,
        "{\"instance_id\": \"x\", \"schema\": \"{oops\", \"output\": \"1\"}\n",
    )
    .unwrap();
    let out = d.join("r.jsonl");
    let o = cdiff(&[
        "eval",
        "run",
        "--task",
        "json",
        "--model",
        "gold",
        "--data",
        data.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("line 1"));
    let g = root().join("grammars/json.ebnf");
    let o = cdiff(&[
        "eval",
        "run",
        "--task",
        "json",
        "--model",
        "gold",
        "--grammar",
        g.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("schema is its grammar"));

    // A schema the grammar builder takes but the validator refuses: the
    // records say why and count as wrong.
    std::fs::write(
        &data,
        "{\"instance_id\": \"r\", \"schema\": {\"$ref\": \"https://example.com/s.json\"}, \"output\": \"1\"}\n",
    )
    .unwrap();
    let o = cdiff(&[
        "eval",
        "run",
        "--task",
        "json",
        "--model",
        "gold",
        "--data",
        data.to_str().unwrap(),
        "--modes",
        "con",
        "--seeds",
        "0",
        "--out",
        out.to_str().unwrap(),
    ]);
    ok(&o, "unusable schema");
    let rs = records(&out);
    assert_eq!(rs.len(), 1);
    assert!(rs[0].error.is_some());
    assert!(!rs[0].syntax_ok);
    let _ = std::fs::remove_dir_all(&d);
}

/// Three instances × vanilla, con × 2 seeds on a shipped model: con always
/// in the grammar; stopped halfway and resumed to the same records.
fn tiny_run(task: &str, model: &str, extra: &[&str]) {
    let d = tmp(task);
    let mut args = vec![
        "--modes",
        "vanilla,con",
        "--seeds",
        "0..1",
        "--limit",
        "3",
        "-q",
    ];
    args.extend_from_slice(extra);
    let full = d.join("full.jsonl");
    run(task, model, &full, &args);
    let all = records(&full);
    assert_eq!(all.len(), 12);
    for r in &all {
        assert!(r.error.is_none(), "{:?}", r.error);
        assert!(r.tokens > 0);
        if r.mode == "con" {
            assert!(
                r.syntax_ok,
                "{task} con output not in the grammar: {:?}",
                r.text
            );
        }
    }
    // Two workers: the same records, in the order they finished.
    let par = d.join("par.jsonl");
    let mut two = args.clone();
    two.extend(["--jobs", "2"]);
    run(task, model, &par, &two);
    let sorted = |rs: &[Record]| {
        let mut e = essence(rs);
        e.sort();
        e
    };
    assert_eq!(sorted(&records(&par)), sorted(&all), "--jobs 2");
    let half = d.join("half.jsonl");
    let text = std::fs::read_to_string(&full).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut cut = lines[..6].join("\n");
    cut.push('\n');
    cut.push_str(&lines[6][..lines[6].len() / 2]);
    std::fs::write(&half, cut).unwrap();
    let mut resume = args.clone();
    resume.retain(|a| *a != "-q");
    resume.push("--resume");
    let o = run(task, model, &half, &resume);
    assert!(String::from_utf8_lossy(&o.stderr).contains("6 already in"));
    assert_eq!(essence(&records(&half)), essence(&all));

    let o = cdiff(&["eval", "report", half.to_str().unwrap()]);
    ok(&o, "report");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains(&format!("### {task}")), "{table}");
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| {model} | 3 | 2 |")))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | model | instances | seeds | syntax Van. | syntax Con. | ...
    assert_eq!(cells[5], "100.0 ± 0.0", "con syntax: {row}");
    assert!(table.contains("model ms/sample"), "{table}");
    assert!(table.contains(&format!("| {model} | con | 6 |")), "{table}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn json_tiny_con_resume_report() {
    tiny_run(
        "json",
        "json-tiny",
        &["--steps", "16", "--max-tokens", "64"],
    );
}

#[test]
fn cpp_tiny_con_resume_report() {
    tiny_run(
        "dlm-cpp",
        "cpp-tiny",
        &["--steps", "8", "--max-tokens", "32", "--functional", "off"],
    );
}

#[test]
fn smiles_tiny_con_resume_report() {
    tiny_run(
        "smiles",
        "smiles-tiny",
        &["--steps", "8", "--max-tokens", "32"],
    );
}

/// Grammar prompting puts the grammar in the instruction; cdiff's shipped
/// models take none, so on them `gp` decodes exactly as `vanilla` (and the
/// report gives it its own column).
#[test]
fn gp_on_an_unconditional_model_decodes_as_vanilla() {
    let d = tmp("gp");
    let out = d.join("gp.jsonl");
    let args = [
        "--modes",
        "vanilla,gp",
        "--seeds",
        "0",
        "--limit",
        "3",
        "--steps",
        "8",
        "--max-tokens",
        "32",
        "-q",
    ];
    run("smiles", "smiles-tiny", &out, &args);
    let rs = records(&out);
    assert_eq!(rs.len(), 6);
    for id in rs.iter().map(|r| &r.instance_id) {
        let text = |mode: &str| {
            rs.iter()
                .find(|r| &r.instance_id == id && r.mode == mode)
                .map(|r| r.text.clone())
                .unwrap()
        };
        assert_eq!(text("gp"), text("vanilla"), "{id}");
    }
    let o = cdiff(&["eval", "report", out.to_str().unwrap()]);
    ok(&o, "report");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("syntax GP"), "{table}");
    let _ = std::fs::remove_dir_all(&d);
}

/// `eval/slurm-eval.sh` runs one shard per array task; merged, the shards
/// are the records of one run.
#[test]
fn slurm_script_runs_one_shard_per_array_task() {
    let d = tmp("slurm");
    let script = root().join("eval/slurm-eval.sh");
    for i in 0..2 {
        let o = std::process::Command::new("bash")
            .arg(&script)
            .args(["smiles", "gold", d.to_str().unwrap(), "--limit", "5", "-q"])
            .env("SLURM_ARRAY_TASK_ID", i.to_string())
            .env("SLURM_ARRAY_TASK_COUNT", "2")
            .env("CDIFF", env!("CARGO_BIN_EXE_cdiff"))
            .env("MODES", "con,gp")
            .env("SEEDS", "0")
            .output()
            .unwrap();
        ok(&o, &format!("array task {i}"));
    }
    let merged = d.join("all.jsonl");
    let shards = [d.join("shard-0.jsonl"), d.join("shard-1.jsonl")];
    let o = cdiff(&[
        "eval",
        "merge",
        shards[0].to_str().unwrap(),
        shards[1].to_str().unwrap(),
        "--out",
        merged.to_str().unwrap(),
    ]);
    ok(&o, "merge");
    let all = d.join("one.jsonl");
    run(
        "smiles",
        "gold",
        &all,
        &["--limit", "5", "--modes", "con,gp", "--seeds", "0", "-q"],
    );
    let sorted = |p: &Path| {
        let mut e = essence(&records(p));
        e.sort();
        e
    };
    assert_eq!(records(&shards[0]).len(), 6);
    assert_eq!(sorted(&merged), sorted(&all));
    let _ = std::fs::remove_dir_all(&d);
}

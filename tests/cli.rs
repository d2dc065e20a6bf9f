//! End-to-end tests of the `cdiff` binary.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

const JSON_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/json.ebnf");

fn cdiff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn cdiff_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A fresh directory for one test under cargo's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("cli-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Asserts a failed run: exit code 2 and one `cdiff: ...` line on stderr.
fn assert_fails(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.starts_with("cdiff: "), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "stderr: {err}");
    assert!(o.stdout.is_empty());
    err
}

#[test]
fn check_completable_json() {
    let d = temp_dir("completable");
    let p = write(&d, "p.json", r#"["{\"a\": [1, ", null, "}"]"#);
    let o = cdiff(&["check", "--grammar", JSON_GRAMMAR, "--json", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["completable"], true);
    let fills = v["completion"].as_array().unwrap();
    assert_eq!(fills.len(), 1);
    let text = v["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!("{{\"a\": [1, {}}}", fills[0].as_str().unwrap())
    );
    let parsed: Value = serde_json::from_str(text).expect("the completion is JSON");
    assert!(parsed["a"].is_array());
    assert!(v["micros"].as_f64().unwrap() >= 0.0);
    assert!(v.get("recognizer").is_none());
}

#[test]
fn check_not_completable_json() {
    let d = temp_dir("not-completable");
    // After `{"a"` only `:` may come: the number cannot be part of the key.
    let p = write(&d, "p.json", r#"["{\"a\" 1", null, "}"]"#);
    let o = cdiff(&["check", "--grammar", JSON_GRAMMAR, "--json", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["completable"], false);
    assert_eq!(v["completion"], Value::Null);
    assert_eq!(v["text"], Value::Null);
}

#[test]
fn check_without_holes_runs_the_recognizer() {
    for (text, expected) in [(r#"["[1, 2]"]"#, true), (r#"["[1, 2"]"#, false)] {
        let o = cdiff_stdin(&["check", "-g", JSON_GRAMMAR, "--json", "-"], text);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["completable"], expected);
        assert_eq!(v["recognizer"], expected);
        assert_eq!(stderr(&o), "", "no disagreement warning");
    }
}

#[test]
fn check_human_output_with_example() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/partial.json");
    let o = cdiff(&["check", "--grammar", JSON_GRAMMAR, example]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert_eq!(out.lines().next(), Some("completable"));
    assert!(
        out.contains("text: \"{\\\"name\\\": \\\"cdiff\\\""),
        "{out}"
    );
    assert!(
        out.contains("hole 1: ") && out.contains("hole 2: "),
        "{out}"
    );
    assert!(!out.contains("hole 3"));
}

#[test]
fn check_jsonl_copies_fields_in_order() {
    let d = temp_dir("jsonl");
    let cases = write(
        &d,
        "cases.jsonl",
        concat!(
            r#"{"id": "b", "partial": ["[1, ", null, "]"], "meta": {"z": 1, "a": [2]}}"#,
            "\n\n",
            r#"{"zzz": 3.50, "partial": ["]", null], "completable": "stale", "aaa": null}"#,
            "\n",
            r#"{"partial": ["true"]}"#,
            "\n",
        ),
    );
    let o = cdiff(&["check", "-g", JSON_GRAMMAR, "--jsonl", &cases]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    // Input fields first and in input order, raw text kept; results after.
    assert!(
        lines[0].starts_with(
            r#"{"id":"b","partial":["[1, ", null, "]"],"meta":{"z": 1, "a": [2]},"completable":true,"#
        ),
        "{}",
        lines[0]
    );
    assert!(
        lines[1]
            .starts_with(r#"{"zzz":3.50,"partial":["]", null],"completable":false,"aaa":null,"#),
        "{}",
        lines[1]
    );
    let v: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v[0]["id"], "b");
    assert_eq!(v[0]["completion"].as_array().unwrap().len(), 1);
    assert_eq!(v[1]["completion"], Value::Null);
    assert_eq!(v[1]["text"], Value::Null);
    assert_eq!(v[2]["completable"], true);
    assert_eq!(v[2]["recognizer"], true);
    assert_eq!(v[2]["text"], "true");
    for x in &v {
        assert!(x["micros"].is_number());
    }
}

#[test]
fn check_jsonl_malformed_line() {
    let d = temp_dir("jsonl-bad");
    for (body, what) in [
        (
            "{\"partial\": [\"1\"]}\n{\"partial\": [1, 2]}\n",
            "line 2: ",
        ),
        (
            "{\"partial\": [\"1\"]}\n\nnot json\n",
            "line 3: invalid JSON",
        ),
        ("[\"1\"]\n", "line 1: "),
        ("{\"id\": 1}\n", "line 1: no \"partial\""),
    ] {
        let cases = write(&d, "cases.jsonl", body);
        let o = cdiff(&["check", "-g", JSON_GRAMMAR, "--jsonl", &cases]);
        assert_eq!(o.status.code(), Some(2));
        let err = stderr(&o);
        assert!(err.starts_with("cdiff: ") && err.contains(what), "{err}");
    }
}

#[test]
fn bad_grammar_reports_line_and_column() {
    let d = temp_dir("bad-grammar");
    let g = write(&d, "bad.ebnf", "start: value\n\nvalue: \"a\" (\n");
    let p = write(&d, "p.json", r#"["a"]"#);
    let err = assert_fails(&cdiff(&["check", "--grammar", &g, &p]));
    assert!(err.contains("grammar error at "), "{err}");
    let at = err.split("grammar error at ").nth(1).unwrap();
    let (line, rest) = at.split_once(':').unwrap();
    let col: String = rest.chars().take_while(char::is_ascii_digit).collect();
    assert!(line.parse::<usize>().is_ok() && !col.is_empty(), "{err}");
    // The same through the `grammar` command.
    let err = assert_fails(&cdiff(&["grammar", &g]));
    assert!(err.contains("grammar error at "), "{err}");
}

#[test]
fn missing_files() {
    let d = temp_dir("missing");
    let p = write(&d, "p.json", r#"["a"]"#);
    let missing = d.join("nope.json");
    let missing = missing.to_str().unwrap();
    let err = assert_fails(&cdiff(&["check", "--grammar", missing, &p]));
    assert!(err.contains("nope.json"), "{err}");
    let err = assert_fails(&cdiff(&["check", "--grammar", JSON_GRAMMAR, missing]));
    assert!(err.contains("nope.json"), "{err}");
    assert_fails(&cdiff(&["check", "-g", JSON_GRAMMAR, "--jsonl", missing]));
    assert_fails(&cdiff(&["grammar", missing]));
}

#[test]
fn malformed_partial() {
    let d = temp_dir("malformed");
    for body in ["[\"a\", ", "{\"a\": 1}", "[\"a\", 3]", "", "\u{feff}[]"] {
        let p = write(&d, "p.json", body);
        let err = assert_fails(&cdiff(&["check", "--grammar", JSON_GRAMMAR, &p]));
        assert!(err.contains("bad partial output"), "{err}");
    }
}

#[test]
fn usage_errors_exit_2() {
    let o = cdiff(&["check", "--grammar", JSON_GRAMMAR]);
    assert_eq!(o.status.code(), Some(2));
    let o = cdiff(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cdiff(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn grammar_command() {
    let o = cdiff(&["grammar", JSON_GRAMMAR]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "// terminals (",
        "(ignored)",
        "%ignore WS",
        "// overlapping terminals resolved by the lexer (0)",
        "// normal form (C2F+ε)",
        "lexer automaton: ",
        "compiled in ",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
    assert!(out.contains("start: value"), "{out}");
    let o = cdiff(&["grammar", JSON_GRAMMAR, "--start", "array"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("array: "));
    assert_fails(&cdiff(&[
        "grammar",
        JSON_GRAMMAR,
        "--start",
        "no_such_rule",
    ]));
}

#[test]
fn bench_runs() {
    let d = temp_dir("bench");
    let docs = d.join("docs");
    std::fs::create_dir_all(&docs).unwrap();
    write(
        &docs,
        "a.json",
        r#"{"name": "cdiff", "tags": ["a", "b"], "n": -1.5e3}"#,
    );
    write(&docs, "b.json", "[1, 2, [3, {\"x\": null}], true, false]\n");
    write(&docs, "c.json", "\"just a string\"");
    write(&docs, "bad.json", "{not json");
    let docs = docs.to_str().unwrap();
    let args = [
        "bench",
        "-g",
        JSON_GRAMMAR,
        "--docs",
        docs,
        "--samples",
        "5",
        "--seed",
        "3",
    ];
    let o = cdiff(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("3 of 4 accepted"), "{out}");
    assert!(out.contains("completable  5 of 5"), "{out}");

    let mut json_args = args.to_vec();
    json_args.extend([
        "--json",
        "--holes",
        "2..3",
        "--compiles",
        "2",
        "--repeat",
        "3",
    ]);
    let o = cdiff(&json_args);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["samples"], 5);
    assert_eq!(v["repeat"], 3);
    assert_eq!(v["completable"], 5);
    assert_eq!(v["accepted_documents"], 3);
    assert!(v["check_micros"]["p99"].is_number());
    assert!(v["compile_micros"].as_f64().unwrap() > 0.0);

    // No accepted document, bad ranges.
    let none = temp_dir("bench-none");
    write(&none, "x.json", "{");
    assert_fails(&cdiff(&[
        "bench",
        "-g",
        JSON_GRAMMAR,
        "--docs",
        none.to_str().unwrap(),
    ]));
    let o = cdiff(&[
        "bench",
        "-g",
        JSON_GRAMMAR,
        "--docs",
        docs,
        "--holes",
        "0..2",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let o = cdiff(&["bench", "-g", JSON_GRAMMAR, "--docs", docs, "--repeat", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn gbnf_grammar_picked_by_extension() {
    let d = temp_dir("gbnf");
    let g = write(&d, "ab.gbnf", "root ::= \"ab\"+ [0-9]\n");
    let ok = write(&d, "ok.json", r#"["ab", null, "7"]"#);
    let o = cdiff(&["check", "--grammar", &g, "--json", &ok]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["completable"], Value::Bool(true));
    // The same text as a Lark grammar is an error: `::=` is not Lark.
    let lark = write(&d, "ab.lark", "root ::= \"ab\"+ [0-9]\n");
    assert_fails(&cdiff(&["check", "--grammar", &lark, &ok]));
    // GBNF errors carry line:column.
    let bad = write(&d, "bad.gbnf", "root ::= \"a\"\n  | [z-a]\n");
    let err = assert_fails(&cdiff(&["grammar", &bad]));
    assert!(err.contains("grammar error at 2:5"), "{err}");
}

#[test]
fn init_random_then_decode_end_to_end() {
    let dir = std::env::temp_dir().join(format!("cdiff-cli-tiny-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let d = dir.to_string_lossy().to_string();
    let o = cdiff(&[
        "init-random",
        "--arch",
        "dream",
        "--size",
        "tiny",
        "--out",
        &d,
        "--seed",
        "1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for mode in ["con", "vanilla"] {
        let o = cdiff(&[
            "decode",
            "--model",
            &d,
            "--grammar",
            JSON_GRAMMAR,
            "--prompt",
            "a JSON value",
            "--max-tokens",
            "16",
            "--steps",
            "8",
            "--seed",
            "2",
            "--mode",
            mode,
            "--json",
            "-q",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        if mode == "con" {
            assert_eq!(v["valid"], true, "{v}");
        }
        assert!(v["micros_model"].as_f64().unwrap() > 0.0);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn decode_bad_model_inputs_exit_2() {
    // Missing directory.
    assert_fails(&cdiff(&[
        "decode",
        "--model",
        "/no/such/model/dir",
        "--grammar",
        JSON_GRAMMAR,
        "-q",
    ]));
    // Unknown architecture in config.json.
    let dir = std::env::temp_dir().join(format!("cdiff-cli-badarch-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"architectures": ["GPT2LMHeadModel"], "model_type": "gpt2"}"#,
    )
    .unwrap();
    let o = cdiff(&[
        "decode",
        "--model",
        &dir.to_string_lossy(),
        "--grammar",
        JSON_GRAMMAR,
        "-q",
    ]);
    assert_fails(&o);
    assert!(stderr(&o).contains("model error"), "{}", stderr(&o));
    let _ = std::fs::remove_dir_all(&dir);
    // A constrained mode without a grammar.
    assert_fails(&cdiff(&["decode", "--model", "/no/such/model/dir", "-q"]));
}

/// `cdiff infill` with a tiny random StarCoder2 (FIM) model: JSON output
/// with the filled template, one fill per region, valid in `con` mode.
#[test]
fn infill_with_an_autoregressive_model_end_to_end() {
    let d = temp_dir("infill-ar");
    let model = d.join("sc2");
    let o = cdiff(&[
        "init-random",
        "--arch",
        "starcoder2",
        "--out",
        model.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = write(&d, "t.txt", "[1, <F>, {\"a\": <F>}]");
    let run = |more: &[&str]| {
        let mut args = vec![
            "infill",
            "--model",
            model.to_str().unwrap(),
            "-g",
            JSON_GRAMMAR,
            "--hole-marker",
            "<F>",
            &t,
            "--json",
            "--max-tokens",
            "12",
        ];
        args.extend_from_slice(more);
        cdiff(&args)
    };
    let infill = |more: &[&str]| {
        let o = run(more);
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()
    };
    let v = infill(&["--temperature", "1"]);
    assert_eq!(v["valid"], true);
    let fills: Vec<&str> = v["fills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(fills.len(), 2);
    let text = format!("[1, {}, {{\"a\": {}}}]", fills[0], fills[1]);
    assert_eq!(v["text"], text.as_str());
    for key in [
        "tokens",
        "rejections",
        "used_witness",
        "ms_model",
        "ms_constraint",
        "ms_constraint_overlapped",
        "ms_witness",
    ] {
        assert!(v.get(key).is_some(), "{key}");
    }
    // The infilling's time holds its model time and the constraint's time
    // outside the forward passes, and the weights' reading is reported
    // apart (it was inside `ms_total`, which read as a per-token cost of a
    // 7B model).
    let times_add_up = |v: &Value| {
        let ms = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}"));
        assert!(ms("ms_constraint_overlapped") <= ms("ms_constraint"));
        // The witness is part of the constraint's time, and only there when
        // con finished from it.
        assert!(ms("ms_witness") <= ms("ms_constraint"));
        assert_eq!(ms("ms_witness") > 0.0, v["used_witness"] == true);
        assert!(
            ms("ms_total") >= ms("ms_model") + ms("ms_constraint") - ms("ms_constraint_overlapped")
        );
        assert!(ms("ms_load") > 0.0);
    };
    times_add_up(&v);
    // Masks ahead (the default for autoregressive models, `--mask-after
    // 0`): a mask at every position, computed while the forward pass runs,
    // nothing refused, and greedy, the infill unlimited rejection sampling
    // makes.
    let ahead = infill(&[]);
    let plain = infill(&["--mask-after", "off", "--max-rejections", "1000000"]);
    assert!(ahead["masks"].as_u64().unwrap() > 0, "{ahead}");
    assert_eq!(ahead["rejections"], 0);
    assert_eq!(ahead["valid"], true);
    assert_eq!(ahead["text"], plain["text"]);
    assert_eq!(plain["masks"], 0);
    times_add_up(&ahead);
    times_add_up(&plain);
    // `--fresh-checks` answers proposals: without `--mask-after` it masks
    // after 8 rejections, not ahead; with `--mask-after 0` it is an error.
    let fresh = infill(&["--fresh-checks"]);
    assert_eq!(fresh["text"], plain["text"]);
    let o = run(&["--fresh-checks", "--mask-after", "0"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("masks ahead"), "{}", stderr(&o));
}

#[test]
fn infill_bad_templates_and_models_exit_2() {
    let d = temp_dir("infill-bad");
    let no_region = write(&d, "none.json", r#"["[1]"]"#);
    let err = assert_fails(&cdiff(&["infill", "-g", JSON_GRAMMAR, &no_region]));
    assert!(err.contains("no region"), "{err}");
    let text = write(&d, "t.txt", "[1, 2]");
    let err = assert_fails(&cdiff(&[
        "infill",
        "-g",
        JSON_GRAMMAR,
        "--hole-marker",
        "<F>",
        &text,
    ]));
    assert!(err.contains("does not occur"), "{err}");
    let dead = write(&d, "dead.json", r#"["}", null]"#);
    let err = assert_fails(&cdiff(&["infill", "-g", JSON_GRAMMAR, &dead]));
    assert!(err.contains("not completable"), "{err}");
    // A grammar no shipped model writes, and no --model.
    let g = write(&d, "g.lark", "start: \"a\"+\n");
    let tmpl = write(&d, "a.json", r#"["a", null]"#);
    let err = assert_fails(&cdiff(&["infill", "-g", &g, &tmpl]));
    assert!(err.contains("shipped models"), "{err}");
    // An unknown model_type names the supported ones.
    let m = d.join("bert");
    std::fs::create_dir_all(&m).unwrap();
    write(&m, "config.json", r#"{"model_type": "bert"}"#);
    let err = assert_fails(&cdiff(&[
        "infill",
        "--model",
        m.to_str().unwrap(),
        "-g",
        &g,
        &tmpl,
    ]));
    assert!(err.contains("bert"), "{err}");
    // A FIM family without FIM tokens in its tokenizer.
    let sc = d.join("nofim");
    let o = cdiff(&[
        "init-random",
        "--arch",
        "qwen2",
        "--out",
        sc.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let tj = std::fs::read_to_string(sc.join("tokenizer.json")).unwrap();
    std::fs::write(sc.join("tokenizer.json"), tj.replace("fim_", "xim_")).unwrap();
    let err = assert_fails(&cdiff(&[
        "infill",
        "--model",
        sc.to_str().unwrap(),
        "-g",
        &g,
        &tmpl,
    ]));
    assert!(err.contains("fill-in-the-middle"), "{err}");
}

/// Issue 16: `--temperature NaN`, `--top-p 2`, `--steps 0` were accepted
/// and `--max-tokens 20000` aborted on a 9.6 GB attention allocation.
#[test]
fn decode_settings_out_of_range_exit_2() {
    for (flag, value, says) in [
        ("--temperature", "NaN", "temperature"),
        ("--top-p", "2", "top-p"),
        ("--steps", "0", "steps"),
        ("--max-tokens", "20000", "canvas of 20000 tokens"),
    ] {
        let err = assert_fails(&cdiff(&[
            "decode",
            "--model",
            "smiles-tiny",
            "-q",
            flag,
            value,
        ]));
        assert!(
            err.contains("invalid setting") && err.contains(says),
            "{flag}: {err}"
        );
    }
}

/// Issue 16: `["[", null, null, "]"]` printed one fill for two nulls.
#[test]
fn check_prints_one_fill_per_null() {
    let o = cdiff_stdin(
        &["check", "--json", "-g", JSON_GRAMMAR, "-"],
        r#"["[", null, null, "]"]"#,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["completion"].as_array().unwrap().len(), 2, "{v}");
    let fills: String = v["completion"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert_eq!(format!("[{fills}]"), v["text"].as_str().unwrap());
}

#[test]
fn json_schema_property_order() {
    let d = temp_dir("property-order");
    let props: Vec<String> = (0..13).map(|i| format!(r#""p{i}": {{}}"#)).collect();
    let s = write(
        &d,
        "s.json",
        &format!(
            r#"{{"type": "object", "properties": {{"status": {{"type": "string"}},
                "warranty": {{"type": "boolean"}}, "big": {{"properties": {{{}}}}}}},
                "required": ["status"], "additionalProperties": false}}"#,
            props.join(", ")
        ),
    );
    let p = write(
        &d,
        "p.json",
        r#"["{\"warranty\": true, \"status\": \"open\"}"]"#,
    );
    let verdict = |extra: &[&str]| {
        let mut args = vec!["check", "--json-schema", &s, "--json"];
        args.extend_from_slice(extra);
        args.push(&p);
        let o = cdiff(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        let v: Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        (v["completable"].clone(), stderr(&o))
    };
    let (any, warning) = verdict(&[]);
    assert_eq!(any, true);
    // The 13-property object's optional properties may repeat, reported.
    assert!(
        warning.contains("properties at #/properties/big"),
        "{warning}"
    );
    assert_eq!(verdict(&["--property-order", "any"]).0, true);
    assert_eq!(verdict(&["--property-order", "schema"]).0, false);
    let o = cdiff(&["check", "--json-schema", &s, "--explain", &p]);
    let out = stdout(&o);
    assert!(
        out.contains("property order: any")
            && out.contains("properties at #/properties/big: approximated"),
        "{out}"
    );
    let o = cdiff(&[
        "check",
        "--json-schema",
        &s,
        "--property-order",
        "sorted",
        &p,
    ]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn infill_mask_after_takes_a_count_or_off() {
    for bad in ["x", "1.5", "eight"] {
        let o = cdiff(&["infill", "--mask-after", bad, "examples/infill.cpp"]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{bad}: {err}");
        assert!(err.contains("expected a count or `off`"), "{bad}: {err}");
    }
    let o = cdiff(&[
        "infill",
        "--hole-marker",
        "<FILL>",
        "--mask-after",
        "off",
        "--max-tokens",
        "4",
        "--json",
        "examples/infill.cpp",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["masks"], 0);
    assert_eq!(v["valid"], true);
}

#[test]
fn check_hole_bytes_refuses_a_ring_closed_in_one_byte() {
    // The paper's Fig. 8b: two branches to open before `))` need more than
    // the one byte a single mask of a byte-level model holds.
    let p = r#"["C6CCCC", null, "))"]"#;
    let json = |n: &str| -> serde_json::Value {
        let o = cdiff_stdin(
            &[
                "check",
                "-g",
                "grammars/smiles.ebnf",
                "--json",
                "--hole-bytes",
                n,
                "-",
            ],
            p,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        serde_json::from_str(stdout(&o).trim()).unwrap()
    };
    let one = json("1");
    assert_eq!(one["completable"], true);
    assert_eq!(one["within_hole_bytes"], false);
    assert_eq!(json("8")["within_hole_bytes"], true);
    let o = cdiff_stdin(
        &[
            "check",
            "-g",
            "grammars/smiles.ebnf",
            "--hole-bytes",
            "1",
            "-",
        ],
        p,
    );
    assert!(stdout(&o).contains("holes of at most 1 bytes: not completable"));
}

/// `--reference-compat` refuses what the authors' loops refuse: LLaDA splits
/// their asserts reject, infilling regions (exit 2, one line).
#[test]
fn reference_compat_refusals() {
    let e = assert_fails(&cdiff(&[
        "decode",
        "--model",
        "json-tiny",
        "--grammar",
        "grammars/json.ebnf",
        "--mode",
        "vanilla",
        "--max-tokens",
        "48",
        "--block-length",
        "20",
        "--reference-compat",
        "--quiet",
    ]));
    assert!(e.contains("multiple of the block length"), "{e}");
    let out = temp_dir("compat-mri").join("r.jsonl");
    let e = assert_fails(&cdiff(&[
        "eval",
        "run",
        "--task",
        "mri-cpp",
        "--model",
        "cpp-tiny",
        "--limit",
        "1",
        "--reference-compat",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(e.contains("DLM tasks"), "{e}");
}

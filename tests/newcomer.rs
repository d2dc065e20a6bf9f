//! Regression tests for issue 17, "a newcomer's first hour": what a new user
//! following the README and `--help` ran into.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
const JSON_GRAMMAR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grammars/json.ebnf");
/// A json-mode-eval case: `{description, meta, schema, tests}`.
const WRAPPED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/datasets/json-schema/json-mode-eval/JME_0.json"
);

fn cdiff(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// A fresh directory for one test under cargo's temporary directory.
fn temp_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("newcomer-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_string()
}

/// Asserts a failed run: exit code 2, one `cdiff: ...` line on stderr and
/// nothing on stdout; returns the line.
fn assert_fails(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(err.starts_with("cdiff: "), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "stderr: {err}");
    assert!(o.stdout.is_empty(), "stdout: {}", stdout(o));
    err
}

// Item 6: no machine paths.

/// The files under `dir` (recursively) that a reader or a script may open,
/// leaving out build outputs and git's own folder.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && name != ".git" {
                text_files(&p, out);
            }
        } else if ["rs", "md", "py", "sh", "toml", "yml", "yaml"]
            .iter()
            .any(|x| p.extension().is_some_and(|e| e == *x))
            || p.parent()
                .and_then(Path::file_name)
                .is_some_and(|n| n == ".ci")
        {
            out.push(p);
        }
    }
}

#[test]
fn no_machine_paths_in_the_repository() {
    // Built from parts so that this file does not match itself.
    let needles: Vec<String> = ["work", "root", "home", "Users"]
        .iter()
        .map(|d| format!("/{d}/"))
        .collect();
    let mut files = Vec::new();
    text_files(Path::new(ROOT), &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                let rel = f.strip_prefix(ROOT).unwrap_or(f);
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "absolute machine paths (use CDIFF_SHARED / ../shared, or public sources):\n{}",
        found.join("\n")
    );
}

#[test]
fn shared_data_comes_from_cdiff_shared_or_beside_the_crate() {
    use common::shared::{dir, root_from, skip_message};
    assert_eq!(root_from(Some("/data/x".into())), PathBuf::from("/data/x"));
    let default = PathBuf::from(ROOT).join("../shared");
    assert_eq!(root_from(None), default);
    assert_eq!(root_from(Some("".into())), default);
    // An absent folder is a skip that says which test, which folder and how
    // to provide it.
    assert_eq!(dir("no-such-folder-for-this-test", "t"), None);
    let m = skip_message("t", Path::new("/x/y"));
    assert!(
        m.starts_with("skipped: t: /x/y is absent") && m.contains("CDIFF_SHARED"),
        "{m}"
    );
}

// Item 7: wrapped schemas.

#[test]
fn wrapped_schema_is_an_error_that_names_the_member() {
    let o = cdiff(&[
        "check",
        "--json-schema",
        WRAPPED,
        "--json",
        &write(&temp_dir("wrapped"), "p.json", r#"["[1]"]"#),
    ]);
    let err = assert_fails(&o);
    assert!(
        err.contains("no schema keywords but a \"schema\" member")
            && err.contains("--json-schema")
            && err.contains("JME_0.json#/schema"),
        "{err}"
    );
    // Also when the wrapper is what a pointer selects.
    let d = temp_dir("wrapped-nested");
    let nested = write(
        &d,
        "nested.json",
        &format!(
            r#"{{"cases": [{}]}}"#,
            std::fs::read_to_string(WRAPPED).unwrap()
        ),
    );
    let p = write(&d, "p.json", r#"["{}"]"#);
    let o = cdiff(&["check", "--json-schema", &format!("{nested}#/cases/0"), &p]);
    let err = assert_fails(&o);
    assert!(err.contains("#/cases/0/schema"), "{err}");
    // A schema with keywords and a property called `schema` is a schema.
    let s = write(
        &d,
        "s.json",
        r#"{"type": "object", "properties": {"schema": {"type": "integer"}}}"#,
    );
    let p = write(&d, "p.json", r#"["{\"schema\": 1}"]"#);
    let o = cdiff(&["check", "--json-schema", &s, "--json", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    // And so is a schema with no keywords at all (it accepts any JSON).
    let s = write(&d, "empty.json", "{}");
    let o = cdiff(&["check", "--json-schema", &s, "--json", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn json_schema_pointer_selects_a_wrapped_schema() {
    let d = temp_dir("pointer");
    let schema = format!("{WRAPPED}#/schema");
    let check = |partial: &str| {
        let p = write(&d, "p.json", partial);
        let o = cdiff(&["check", "--json-schema", &schema, "--json", &p]);
        assert!(o.status.success(), "{}", stderr(&o));
        // The wrapper's members are not mistaken for unknown keywords.
        assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
        serde_json::from_str::<Value>(&stdout(&o)).unwrap()
    };
    let gold = r#"["{\"ssid\": \"OfficeNetSecure\", \"securityProtocol\": \"WPA2-Enterprise\", \"bandwidth\": \"1300 Mbps\"}"]"#;
    assert_eq!(check(gold)["completable"], true);
    assert_eq!(check(r#"["{\"ssid\": ", null]"#)["completable"], true);
    // Any JSON was accepted with the wrapper taken as the schema.
    assert_eq!(check(r#"["[1]"]"#)["completable"], false);
    assert_eq!(check(r#"["{\"ssid\": 1", null]"#)["completable"], false);
    // `--explain` lists what the wrapped schema leaves unenforced: nothing.
    let p = write(&d, "p.json", r#"["{}"]"#);
    let o = cdiff(&["check", "--json-schema", &schema, "--explain", &p]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("every constraining keyword is enforced"),
        "{}",
        stdout(&o)
    );
    // A pointer that selects nothing, and a missing file, are errors that
    // name them.
    let o = cdiff(&["check", "--json-schema", &format!("{WRAPPED}#/nope"), &p]);
    let err = assert_fails(&o);
    assert!(err.contains("no value at JSON pointer \"/nope\""), "{err}");
    let missing = d.join("missing.json");
    let o = cdiff(&[
        "check",
        "--json-schema",
        &format!("{}#/schema", missing.display()),
        &p,
    ]);
    let err = assert_fails(&o);
    assert!(
        err.contains(&format!("cannot read {}:", missing.display())),
        "{err}"
    );
}

// Item 8: batch files.

const CASES: &str = concat!(
    r#"{"id": 1, "partial": ["[1, ", null, "]"]}"#,
    "\n",
    "not json\n",
    r#"{"id": 3, "partial": ["true"]}"#,
    "\n\n",
    r#"{"id": 4, "completable": "stale", "partial": [1, 2]}"#,
    "\n",
    r#"{"id": 5, "partial": ["]", null]}"#,
    "\n",
);

#[test]
fn check_jsonl_bad_line_gets_an_error_record_and_the_run_goes_on() {
    let cases = write(&temp_dir("jsonl-go-on"), "cases.jsonl", CASES);
    let o = cdiff(&["check", "-g", JSON_GRAMMAR, "--jsonl", &cases]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let out = stdout(&o);
    let v: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(v.len(), 5, "{out}");
    assert_eq!(v[0]["completable"], true);
    assert!(v[0].get("error").is_none());
    // A line that is not JSON: only the error.
    assert_eq!(v[1]["completable"], Value::Null);
    assert!(
        v[1]["error"]
            .as_str()
            .unwrap()
            .starts_with("line 2: invalid JSON"),
        "{}",
        v[1]
    );
    assert_eq!(v[2]["id"], 3);
    assert_eq!(v[2]["completable"], true);
    // An object: its fields copied in order, a stale result overwritten.
    assert!(
        out.lines()
            .nth(3)
            .unwrap()
            .starts_with(r#"{"id":4,"completable":null,"partial":[1, 2],"error":"line 5: "#),
        "{out}"
    );
    assert_eq!(v[4]["id"], 5);
    assert_eq!(v[4]["completable"], false);
    // One warning per bad line, then the summary as the error.
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert!(
        lines[0].starts_with("cdiff: warning: ") && lines[0].contains("line 2: invalid JSON"),
        "{err}"
    );
    assert!(lines[1].contains("line 5: "), "{err}");
    assert!(
        lines[2].starts_with("cdiff: ")
            && lines[2].contains("2 of 5 case(s) failed, the first at line 2: invalid JSON"),
        "{err}"
    );
}

#[test]
fn check_jsonl_fail_fast_stops_at_the_first_bad_line() {
    let cases = write(&temp_dir("jsonl-fail-fast"), "cases.jsonl", CASES);
    let o = cdiff(&[
        "check",
        "-g",
        JSON_GRAMMAR,
        "--jsonl",
        &cases,
        "--fail-fast",
    ]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert_eq!(out.lines().count(), 1, "{out}");
    let err = stderr(&o);
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("cdiff: ") && err.contains("line 2: invalid JSON"),
        "{err}"
    );
    // Without a bad line both succeed alike.
    let good = write(
        &temp_dir("jsonl-good"),
        "cases.jsonl",
        "{\"partial\": [\"1\"]}\n",
    );
    for extra in [&[][..], &["--fail-fast"][..]] {
        let mut args = vec!["check", "-g", JSON_GRAMMAR, "--jsonl", &good];
        args.extend_from_slice(extra);
        let o = cdiff(&args);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(o.stderr.is_empty(), "{}", stderr(&o));
    }
}

// Item 9: commands that destroy work.

#[test]
fn train_refuses_to_overwrite_a_model() {
    let d = temp_dir("train-overwrite");
    let data = write(&d, "data.smi", "CCO\nc1ccccc1\nCC(=O)O\nN#CC\n");
    let out = d.join("model");
    let out_s = out.to_str().unwrap();
    let train = |steps: &str, extra: &[&str]| {
        let mut args = vec![
            "train", "--data", &data, "--out", out_s, "--steps", steps, "--batch", "2", "--ctx",
            "16", "--layers", "1", "--hidden", "32", "--heads", "2", "--mlp", "64", "--warmup",
            "1",
        ];
        args.extend_from_slice(extra);
        cdiff(&args)
    };
    // An empty directory is fine.
    std::fs::create_dir_all(&out).unwrap();
    let o = train("2", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let weights = std::fs::read(out.join("model.safetensors")).unwrap();
    // A directory holding a model is refused, and left as it was.
    let o = train("2", &["--seed", "1"]);
    let err = assert_fails(&o);
    assert!(
        err.contains("already holds a model")
            && err.contains("--resume")
            && err.contains("--force"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(out.join("model.safetensors")).unwrap(),
        weights
    );
    // Either file alone makes it a model directory.
    for f in ["config.json", "model.safetensors"] {
        let only = d.join(format!("only-{f}"));
        std::fs::create_dir_all(&only).unwrap();
        std::fs::write(only.join(f), "{}").unwrap();
        let o = cdiff(&["train", "--data", &data, "--out", only.to_str().unwrap()]);
        let err = assert_fails(&o);
        assert!(err.contains(f), "{err}");
        assert_eq!(std::fs::read_to_string(only.join(f)).unwrap(), "{}");
    }
    // --force trains from scratch over it; --resume continues it.
    let o = train("2", &["--seed", "1", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(
        std::fs::read(out.join("model.safetensors")).unwrap(),
        weights
    );
    let o = train("3", &["--resume"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resumed from step 2"), "{}", stderr(&o));
    // Both at once make no sense.
    assert_eq!(train("2", &["--resume", "--force"]).status.code(), Some(2));
}

// Item 3: shipped models usable by name alone.

#[test]
fn decode_with_a_shipped_model_name_uses_its_grammar() {
    for (name, grammar) in [
        ("json-tiny", "json.ebnf"),
        ("smiles-tiny", "smiles.ebnf"),
        ("cpp-tiny", "cpp.ebnf"),
    ] {
        let o = cdiff(&[
            "decode",
            "--model",
            name,
            "--max-tokens",
            "16",
            "--steps",
            "4",
            "--seed",
            "1",
            "--json",
        ]);
        let err = stderr(&o);
        assert!(o.status.success(), "{name}: {err}");
        assert!(err.contains("grammar ") && err.contains(grammar), "{err}");
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(v["valid"], true, "{name}: {v}");
        let text = v["text"].as_str().unwrap();
        if name == "json-tiny" {
            assert!(serde_json::from_str::<Value>(text).is_ok(), "{text:?}");
        }
    }
}

#[test]
fn decode_with_a_grammar_no_shipped_model_writes_is_an_error() {
    // It used to decode silently with the SMILES model.
    let lark = Path::new(ROOT).join("tests/data/no-shipped-model.lark");
    let lark = lark.to_str().unwrap();
    for cmd in ["decode", "infill"] {
        let mut args = vec![cmd, "--grammar", lark];
        let template = temp_dir(&format!("unshipped-{cmd}")).join("t.json");
        std::fs::write(&template, r#"["a", null]"#).unwrap();
        let t = template.to_str().unwrap().to_string();
        if cmd == "infill" {
            args.push(&t);
        }
        let o = cdiff(&args);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {err}");
        for shipped in ["smiles-tiny", "json-tiny", "cpp-tiny", "grammars/cpp.ebnf"] {
            assert!(err.contains(shipped), "{cmd}: {err}");
        }
        assert!(err.contains("--model"), "{err}");
    }
    // Each shipped grammar finds its model without --model.
    for grammar in ["grammars/cpp.ebnf", "grammars/json.ebnf"] {
        let g = Path::new(ROOT).join(grammar);
        let o = cdiff(&[
            "decode",
            "--grammar",
            g.to_str().unwrap(),
            "--max-tokens",
            "16",
            "--steps",
            "4",
            "--json",
        ]);
        assert!(o.status.success(), "{grammar}: {}", stderr(&o));
    }
}

/// The two commands of the README's first block: (main job, tests).
fn readme_commands() -> (String, String) {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("the README opens with a sh block");
    let cmds: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    assert_eq!(cmds.len(), 2, "two commands: {cmds:?}");
    (cmds[0].to_string(), cmds[1].to_string())
}

#[test]
fn ci_runs_the_readme_test_command() {
    let (main_job, tests) = readme_commands();
    let ci = std::fs::read_to_string(Path::new(ROOT).join(".ci/run")).unwrap();
    let last = ci
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .unwrap();
    assert_eq!(
        last, tests,
        ".ci/run must end with the README's test command"
    );
    // CI also builds and unit-tests the engine without the models feature.
    assert!(
        ci.contains("cargo build --release --no-default-features"),
        "{ci}"
    );
    assert!(
        ci.contains("cargo test --release --no-default-features --lib"),
        "{ci}"
    );
    // One build serves both: the main job and the tests use the same
    // profile (release), so the test command reuses the first one's build.
    assert!(main_job.starts_with("cargo run --release"), "{main_job}");
    assert!(tests.starts_with("cargo test --release"), "{tests}");
}

#[test]
fn infill_example_works_with_the_shipped_cpp_model() {
    // The README's command, exactly: no --model, no --grammar.
    let example = Path::new(ROOT).join("examples/infill.cpp");
    let o = Command::new(env!("CARGO_BIN_EXE_cdiff"))
        .current_dir(ROOT)
        .args(["infill", "--hole-marker", "<FILL>", "examples/infill.cpp"])
        .output()
        .unwrap();
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("cpp-tiny") && err.contains("cpp.ebnf"),
        "{err}"
    );
    let text = stdout(&o);
    let template = std::fs::read_to_string(example).unwrap();
    // Every chunk in place, in order.
    let mut rest = text.as_str();
    for chunk in template.split("<FILL>") {
        let at = rest
            .find(chunk)
            .unwrap_or_else(|| panic!("{chunk:?} in {text:?}"));
        rest = &rest[at + chunk.len()..];
    }
    let g = cdiff::Grammar::from_file_text(
        "cpp.ebnf",
        &std::fs::read_to_string(Path::new(ROOT).join("grammars/cpp.ebnf")).unwrap(),
        None,
    )
    .unwrap();
    let rec = cdiff::recognize::Recognizer::new(&g).unwrap();
    let program = text.strip_suffix('\n').unwrap_or(&text);
    assert!(
        rec.accepts(program.as_bytes()).unwrap() || rec.accepts(text.as_bytes()).unwrap(),
        "{text:?}"
    );
}

#[test]
fn device_flag_on_model_commands() {
    // The first progress line names the device; auto is the CPU here
    // unless this build has CUDA.
    let o = cdiff(&[
        "decode",
        "--max-tokens",
        "8",
        "--steps",
        "2",
        "--device",
        "cpu",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(" on cpu"), "{}", stderr(&o));
    let cuda_build = cfg!(feature = "cuda");
    for cmd in [
        &["decode"][..],
        &["infill", "--hole-marker", "<FILL>", "examples/infill.cpp"],
    ] {
        let run = |device: &str| {
            Command::new(env!("CARGO_BIN_EXE_cdiff"))
                .current_dir(ROOT)
                .args(cmd)
                .args(["--max-tokens", "8", "--steps", "2", "--device", device])
                .output()
                .unwrap()
        };
        let o = run("gpu");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("unknown device"), "{}", stderr(&o));
        if !cuda_build {
            let o = run("cuda:0");
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(stderr(&o).contains("--features cuda"), "{}", stderr(&o));
            let o = run("auto");
            assert!(o.status.success(), "{}", stderr(&o));
            assert!(stderr(&o).contains(" on cpu"), "{}", stderr(&o));
        }
    }
    // train and eval take it too.
    let d = temp_dir("device-train");
    let data = d.join("texts.txt");
    std::fs::write(&data, "C\nCC\nCCO\n").unwrap();
    let out = d.join("model");
    let train = |device: &str| {
        cdiff(&[
            "train",
            "--data",
            data.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--steps",
            "2",
            "--batch",
            "2",
            "--ctx",
            "8",
            "--layers",
            "1",
            "--hidden",
            "32",
            "--heads",
            "2",
            "--warmup",
            "1",
            "--device",
            device,
        ])
    };
    let o = train("cpu");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains(" on cpu"), "{}", stderr(&o));
    if !cuda_build {
        std::fs::remove_dir_all(&out).unwrap();
        let o = train("cuda");
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(!out.join("model.safetensors").exists(), "nothing written");
        let o = cdiff(&[
            "eval",
            "run",
            "--task",
            "smiles",
            "--model",
            "gold",
            "--limit",
            "1",
            "--seeds",
            "0",
            "--out",
            d.join("r.jsonl").to_str().unwrap(),
            "--device",
            "cuda",
        ]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains("--features cuda"), "{}", stderr(&o));
    }
}

//! `cdiff eval` (issue 11): the metric functions on known programs, the
//! MRI instances (deterministic, App. D.3 rules), and end-to-end runs of
//! the binary with the oracle `gold` and a tiny random StarCoder2: records,
//! `--resume` after a run stopped halfway, `--shard` + `merge`, `report`.
//!
//! Tests that compile C++ print that they are skipped when no `g++` is found.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use cdiff::eval::metrics::{self, Gxx, Limits, Outcome};
use cdiff::eval::record::{self, Record};
use cdiff::eval::report;
use cdiff::eval::tasks::{self, MriKind, MAX_SPAN, MIN_SPAN};
use cdiff::recognize::Recognizer;
use cdiff::Grammar;
use common::eval::{essence, ok, records};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recognizer() -> Recognizer {
    let src = std::fs::read_to_string(root().join("grammars/cpp.ebnf")).unwrap();
    Recognizer::new(&Grammar::from_lark(&src, None).unwrap()).unwrap()
}

fn rows() -> Vec<tasks::HumanEvalRow> {
    tasks::read_humaneval(&root().join("datasets/humaneval-x-cpp/humaneval_cpp.jsonl")).unwrap()
}

fn cdiff(args: &[&str], env: &[(&str, &str)]) -> Output {
    common::eval::cdiff_env(args, env)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cdiff-test-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

// ------------------------------------------------------------------ metrics

#[test]
fn cpp_metrics_on_known_programs() {
    let Some(gxx) = Gxx::find() else {
        eprintln!("skipped: no g++ found");
        return;
    };
    let limits = Limits {
        compile: Duration::from_secs(20),
        run: Duration::from_secs(1),
        memory_mib: Some(1024),
    };
    let pass = "#include<cassert>\nint add(int a, int b){ return a + b; }\nint main(){ assert(add(2, 3) == 5); }\n";
    assert_eq!(gxx.compile_and_run(pass, &limits).unwrap(), Outcome::Pass);
    assert!(gxx.syntax_only(pass, limits.compile).unwrap());

    let fail = "#undef NDEBUG\n#include<assert.h>\nint add(int a, int b){ return a - b; }\nint main(){ assert(add(2, 3) == 5); }\n";
    match gxx.compile_and_run(fail, &limits).unwrap() {
        Outcome::Fail { code, stderr } => {
            assert_eq!(code, None, "a failed assert aborts");
            assert!(stderr.contains("Assertion"), "{stderr}");
        }
        other => panic!("a failing assert gave {other:?}"),
    }
    let exit3 = "int main(){ return 3; }\n";
    assert!(matches!(
        gxx.compile_and_run(exit3, &limits).unwrap(),
        Outcome::Fail { code: Some(3), .. }
    ));

    let broken = "int main(){ return undeclared_name; }\n";
    match gxx.compile_and_run(broken, &limits).unwrap() {
        Outcome::CompileError(m) => assert!(m.contains("error"), "{m}"),
        other => panic!("a compile error gave {other:?}"),
    }
    assert!(!gxx.syntax_only(broken, limits.compile).unwrap());
    assert!(!gxx.syntax_only("int main( {", limits.compile).unwrap());

    let spin = "int main(){ volatile unsigned x = 0; while (true) { x = x + 1; } }\n";
    let t0 = Instant::now();
    let o = gxx.compile_and_run(spin, &limits).unwrap();
    assert_eq!(o, Outcome::RunTimeout);
    assert!(!o.passed());
    assert!(t0.elapsed() < Duration::from_secs(20), "{:?}", t0.elapsed());

    assert_eq!(o.status(), "run timeout");
    assert_eq!(
        metrics::link_flags("#include<openssl/md5.h>\n"),
        ["-lcrypto"]
    );

    // Every temporary directory of this process is gone.
    let prefix = format!("cdiff-eval-{}-", std::process::id());
    let left: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
}

#[test]
fn syntax_metric_is_the_recognizer() {
    let rec = recognizer();
    assert!(metrics::syntax_ok(
        &rec,
        "#include<vector>\nusing namespace std;\nint f(vector<int> v){ return v.size(); }\n"
    ));
    assert!(!metrics::syntax_ok(&rec, "int f( { return 1; }\n"));
}

// ---------------------------------------------------------------- instances

#[test]
fn mri_instances_are_deterministic_and_follow_app_d3() {
    let rec = recognizer();
    let rows = rows();
    assert_eq!(rows.len(), 164);
    let accepts = |t: &str| metrics::syntax_ok(&rec, t);
    for kind in [MriKind::Spans, MriKind::Lines] {
        for n in 1..=3 {
            let a = tasks::make_mri(&rows, kind, n, 0, accepts);
            let b = tasks::make_mri(&rows, kind, n, 0, accepts);
            assert_eq!(a, b, "{kind:?} {n}: same seed, same instances");
            let c = tasks::make_mri(&rows, kind, n, 1, accepts);
            assert_ne!(a, c, "{kind:?} {n}: another seed, other cuts");
            if n == 1 {
                assert_eq!(a.len(), 164, "{kind:?}: every solution takes one cut");
            }
            eprintln!("{kind:?} {n}: {} instances", a.len());
            for inst in &a {
                let what = &inst.instance_id;
                assert_eq!(
                    inst.instance_id,
                    format!("{}_{}_{n}", inst.task_id(), kind.slug())
                );
                assert_eq!(inst.number_spans, n);
                assert!(inst.is_consistent(), "{what}: splits + removed = solution");
                assert_eq!(inst.splits.len(), inst.removed_spans.len() + 1);
                let t = inst.template().unwrap();
                assert_eq!(t.n_regions(), inst.removed_spans.len());
                let gold: Vec<Vec<u8>> = inst
                    .removed_spans
                    .iter()
                    .map(|s| s.as_bytes().to_vec())
                    .collect();
                assert_eq!(
                    t.fill(&gold),
                    format!("{}{}", inst.prompt, inst.canonical_solution).into_bytes()
                );
                match kind {
                    MriKind::Spans => {
                        assert_eq!(inst.removed_spans.len(), n, "{what}");
                        for s in &inst.removed_spans {
                            let l = s.chars().count();
                            assert!((MIN_SPAN..=MAX_SPAN).contains(&l), "{what}: span of {l}");
                        }
                        // Regions neither overlap nor touch.
                        for s in &inst.splits[1..inst.splits.len() - 1] {
                            assert!(!s.is_empty(), "{what}: touching regions");
                        }
                    }
                    MriKind::Lines => {
                        assert!(!inst.removed_spans.is_empty() && inst.removed_spans.len() <= n);
                        let lines: usize = inst
                            .removed_spans
                            .iter()
                            .map(|s| s.matches('\n').count() + 1)
                            .sum();
                        assert_eq!(lines, n, "{what}: n lines removed");
                        for s in &inst.removed_spans {
                            assert!(
                                s.lines().all(|l| !l.trim().is_empty()),
                                "{what}: blank line"
                            );
                        }
                        let last = inst.splits.len() - 1;
                        for (i, s) in inst.splits.iter().enumerate() {
                            // Whole lines: a region starts a line and ends one.
                            if i < last {
                                assert!(s.is_empty() && i == 0 || s.ends_with('\n'), "{what}");
                            }
                            if i > 0 {
                                assert!(s.is_empty() && i == last || s.starts_with('\n'), "{what}");
                            }
                            // Adjacent lines are merged: a split between two
                            // regions holds more than one line break.
                            if i > 0 && i < last {
                                assert!(s.len() > 1, "{what}: adjacent lines not merged");
                            }
                        }
                    }
                }
            }
        }
    }
    // An instance depends only on its own row.
    let all = tasks::make_mri(&rows, MriKind::Spans, 2, 7, accepts);
    let one = tasks::make_mri(&rows[40..41], MriKind::Spans, 2, 7, accepts);
    if let Some(i) = one.first() {
        assert!(all.contains(i));
    }
}

#[test]
fn cpp38_is_judged_after_its_prompt() {
    let rec = recognizer();
    let rows = rows();
    let insts = tasks::make_mri(&rows, MriKind::Lines, 1, 0, |t| metrics::syntax_ok(&rec, t));
    for inst in &insts {
        let head = tasks::judged_head(inst, |t| metrics::syntax_ok(&rec, t));
        if inst.task_id() == "CPP/38" {
            assert_eq!(head, inst.prompt);
        } else {
            assert_eq!(head, inst.declaration, "{}", inst.instance_id);
        }
    }
}

// ------------------------------------------------------------ report, merge

fn rec(id: &str, mode: &str, seed: u64, syntax: bool, functional: Option<bool>) -> Record {
    serde_json::from_value(serde_json::json!({
        "instance_id": id, "task": "mri-cpp", "model": "m", "mode": mode, "seed": seed,
        "number_spans": 1, "text": "", "syntax_ok": syntax, "functional_ok": functional,
        "tokens": 10, "ms_model": 20.0, "ms_constraint": 5.0, "rejections": 2,
        "used_witness": false, "gave_up": false, "note": "kept"
    }))
    .unwrap()
}

#[test]
fn report_means_and_intervals_over_seeds() {
    assert_eq!(report::mean_ci(&[]), None);
    assert_eq!(report::mean_ci(&[0.5]), Some((0.5, None)));
    let (m, h) = report::mean_ci(&[0.5, 0.7]).unwrap();
    assert!((m - 0.6).abs() < 1e-12);
    // t(0.975, 1) * sd / sqrt(2) = 12.706 * 0.1414 / 1.414
    assert!((h.unwrap() - 1.2706).abs() < 1e-3, "{h:?}");

    let rs = vec![
        rec("CPP/1_spans_1", "con", 0, true, Some(true)),
        rec("CPP/2_spans_1", "con", 0, true, Some(false)),
        rec("CPP/1_spans_1", "con", 1, true, Some(true)),
        rec("CPP/2_spans_1", "con", 1, true, Some(true)),
        rec("CPP/1_spans_1", "vanilla", 0, false, Some(false)),
        rec("CPP/2_spans_1", "vanilla", 0, true, None),
    ];
    assert_eq!(
        rs[0].extra.get("note").and_then(|v| v.as_str()),
        Some("kept")
    );
    let text = report::report(&rs, true);
    assert!(text.contains("### mri-cpp, 1 region"), "{text}");
    // con: syntax 100, 100; functional 50, 100 → 75 ± 12.706 · 0.3536 / 1.414.
    assert!(
        text.contains("| m | 2 | 2 | 50.0 | 100.0 ± 0.0 | 0.0 | 75.0 ± 317.6 |"),
        "{text}"
    );
    assert!(
        text.contains("| m | con | 40 | 2.000 | 0.500 | 25.0 % |"),
        "{text}"
    );
    assert!(text.contains("- CPP/2_spans_1 (seed 0): failed"), "{text}");
}

#[test]
fn a_mode_whose_every_record_errored_has_no_rate() {
    let mut gp = rec("CPP/1_spans_1", "gp", 0, false, None);
    gp.error = Some("invalid setting: a canvas of 23301 tokens".into());
    let mut half = rec("CPP/2_spans_1", "con", 0, true, Some(true));
    half.error = Some("budget".into());
    let rs = vec![gp, half, rec("CPP/1_spans_1", "con", 0, true, Some(true))];
    let text = report::report(&rs, false);
    // gp: never ran; con: one of two records errored, counted as failed.
    assert!(
        text.contains("| m | 2 | 1 | 50.0 | error | 50.0 | error |"),
        "{text}"
    );
}

#[test]
fn merge_keeps_the_first_of_a_key_in_natural_order() {
    let a = vec![
        rec("CPP/10_spans_1", "con", 0, true, None),
        rec("CPP/9_spans_1", "con", 0, true, None),
    ];
    let mut dup = rec("CPP/9_spans_1", "con", 0, false, None);
    dup.text = "other".into();
    let b = vec![dup, rec("CPP/9_spans_1", "vanilla", 0, true, None)];
    let (m, dups) = record::merge(vec![a, b]);
    assert_eq!(dups, 1);
    let keys: Vec<(String, String)> = m
        .iter()
        .map(|r| (r.instance_id.clone(), r.mode.clone()))
        .collect();
    assert_eq!(
        keys,
        [
            ("CPP/9_spans_1".to_string(), "vanilla".to_string()),
            ("CPP/9_spans_1".into(), "con".into()),
            ("CPP/10_spans_1".into(), "con".into()),
        ]
    );
    assert!(m[1].syntax_ok, "the first file wins");
}

// --------------------------------------------------------------- end to end

#[test]
fn gold_runs_end_to_end() {
    let d = tmp("gold");
    let out = d.join("gold.jsonl");
    let o = cdiff(
        &[
            "eval",
            "run",
            "--task",
            "mri-cpp",
            "--spans",
            "2",
            "--model",
            "gold",
            "--modes",
            "vanilla,con",
            "--seeds",
            "0..1",
            "--limit",
            "3",
            "--out",
        ]
        .iter()
        .copied()
        .chain([out.to_str().unwrap()])
        .collect::<Vec<_>>(),
        &[],
    );
    ok(&o, "gold run");
    let rs = records(&out);
    assert_eq!(rs.len(), 3 * 2 * 2);
    let have_gxx = Gxx::find().is_some();
    for r in &rs {
        assert!(r.syntax_ok, "{}", r.instance_id);
        assert!(r.error.is_none());
        assert_eq!(r.number_spans, Some(2));
        assert_eq!(r.fills.len(), 2);
        if have_gxx {
            assert_eq!(r.gxx_syntax_ok, Some(true), "{}", r.instance_id);
            assert_eq!(r.functional_ok, Some(true), "{:?}", r.functional_status);
        }
    }
    let o = cdiff(&["eval", "report", out.to_str().unwrap()], &[]);
    ok(&o, "report");
    let table = String::from_utf8_lossy(&o.stdout);
    assert!(table.contains("### mri-cpp, 2 regions"), "{table}");
    let want = if have_gxx {
        "| gold | 3 | 2 | 100.0 ± 0.0 | 100.0 ± 0.0 | 100.0 ± 0.0 | 100.0 ± 0.0 |"
    } else {
        "| gold | 3 | 2 | 100.0 ± 0.0 | 100.0 ± 0.0 | — | — |"
    };
    assert!(table.contains(want), "{table}");

    // Running again into the same file without --resume is refused.
    let again = cdiff(
        &[
            "eval",
            "run",
            "--task",
            "mri-cpp",
            "--model",
            "gold",
            "--limit",
            "1",
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--resume"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_missing_compiler_is_reported() {
    let d = tmp("nogxx");
    let out = d.join("r.jsonl");
    let args = |extra: &[&'static str]| -> Vec<String> {
        [
            "eval",
            "run",
            "--task",
            "mri-cpp-lines",
            "--model",
            "gold",
            "--modes",
            "con",
            "--seeds",
            "0",
            "--limit",
            "1",
            "--out",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([out.to_string_lossy().into_owned()])
        .chain(extra.iter().map(|s| s.to_string()))
        .collect()
    };
    let env = [(metrics::GXX_VAR, "/nonexistent/g++")];
    let a = args(&[]);
    let o = cdiff(&a.iter().map(String::as_str).collect::<Vec<_>>(), &env);
    ok(&o, "auto without a compiler");
    assert!(String::from_utf8_lossy(&o.stderr).contains("no C++ compiler found"));
    let rs = records(&out);
    assert_eq!(rs.len(), 1);
    assert!(rs[0].syntax_ok);
    assert_eq!(rs[0].functional_ok, None);
    assert_eq!(rs[0].gxx_syntax_ok, None);

    std::fs::remove_file(&out).unwrap();
    let a = args(&["--functional", "on"]);
    let o = cdiff(&a.iter().map(String::as_str).collect::<Vec<_>>(), &env);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--functional on"));

    // The same for the DLM C++ task.
    let o = cdiff(
        &[
            "eval",
            "run",
            "--task",
            "dlm-cpp",
            "--model",
            "gold",
            "--functional",
            "on",
            "--out",
            out.to_str().unwrap(),
        ],
        &env,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--functional on"));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn tiny_starcoder2_con_resume_shards_merge_report() {
    let d = tmp("sc2");
    let model = d.join("sc2");
    let m = model.to_str().unwrap();
    ok(
        &cdiff(&["init-random", "--arch", "starcoder2", "--out", m], &[]),
        "init-random",
    );
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "eval",
            "run",
            "--task",
            "mri-cpp",
            "--spans",
            "2",
            "--model",
            m,
            "--modes",
            "vanilla,con",
            "--seeds",
            "0..1",
            "--limit",
            "3",
            "--max-tokens",
            "8",
            "--max-rejections",
            "20",
            "--functional",
            "off",
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = cdiff(&args, &[]);
        ok(&o, &format!("run {extra:?}"));
        o
    };
    let full = d.join("full.jsonl");
    let o = run(&full, &[]);
    let progress = String::from_utf8_lossy(&o.stderr);
    assert!(progress.contains("[12/12]"), "{progress}");
    let all = records(&full);
    assert_eq!(all.len(), 12);
    for r in &all {
        assert!(r.error.is_none(), "{:?}", r.error);
        assert_eq!(r.functional_ok, None);
        if r.mode == "con" {
            assert!(r.syntax_ok, "con output not in the grammar: {:?}", r.text);
        }
    }
    assert!(
        all.iter().any(|r| r.mode == "vanilla" && !r.syntax_ok),
        "random weights rarely write C++ unconstrained"
    );

    // Two workers, each with its own model: the same records.
    let par = d.join("par.jsonl");
    run(&par, &["--jobs", "2", "-q"]);
    let sorted = |rs: &[Record]| {
        let mut e = essence(rs);
        e.sort();
        e
    };
    assert_eq!(sorted(&records(&par)), sorted(&all), "--jobs 2");

    // Stopped halfway (the last line cut in the middle), then resumed.
    let half = d.join("half.jsonl");
    let text = std::fs::read_to_string(&full).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut cut = lines[..6].join("\n");
    cut.push('\n');
    cut.push_str(&lines[6][..lines[6].len() / 2]);
    std::fs::write(&half, cut).unwrap();
    let o = run(&half, &["--resume"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("6 already in"));
    assert_eq!(essence(&records(&half)), essence(&all));

    // Two shards, merged.
    let s0 = d.join("s0.jsonl");
    let s1 = d.join("s1.jsonl");
    run(&s0, &["--shard", "0/2"]);
    run(&s1, &["--shard", "1/2"]);
    assert_eq!(records(&s0).len(), 8);
    assert_eq!(records(&s1).len(), 4);
    let merged = d.join("merged.jsonl");
    ok(
        &cdiff(
            &[
                "eval",
                "merge",
                s1.to_str().unwrap(),
                s0.to_str().unwrap(),
                "--out",
                merged.to_str().unwrap(),
            ],
            &[],
        ),
        "merge",
    );
    assert_eq!(essence(&records(&merged)), essence(&all));

    let o = cdiff(&["eval", "report", merged.to_str().unwrap()], &[]);
    ok(&o, "report");
    let table = String::from_utf8_lossy(&o.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with(&format!("| {m} | 3 | 2 |")))
        .unwrap_or_else(|| panic!("{table}"));
    let cells: Vec<&str> = row.split('|').map(str::trim).collect();
    // | model | instances | seeds | syntax Van. | syntax Con. | functional Van. | functional Con. |
    assert_eq!(cells[5], "100.0 ± 0.0", "con syntax: {row}");
    assert_eq!(cells[6], "—");
    assert!(table.contains(&format!("| {m} | con |")), "{table}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn plots_show_rates_and_overhead_by_regions() {
    let mut rs = vec![
        rec("CPP/1_spans_1", "con", 0, true, Some(true)),
        rec("CPP/2_spans_1", "con", 0, true, Some(false)),
        rec("CPP/1_spans_1", "vanilla", 0, false, Some(false)),
    ];
    let mut two = rec("CPP/1_spans_2", "con", 0, true, Some(true));
    two.number_spans = Some(2);
    two.ms_constraint = 10.0; // 50 % of the model's 20 ms
    rs.push(two);
    let dir = tmp("plots");
    let files = cdiff::eval::plots::write_plots(&rs, &dir).unwrap();
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["mri-cpp-1-rates.svg", "mri-cpp-2-rates.svg", "overhead.svg"]
    );
    let rates = std::fs::read_to_string(&files[0]).unwrap();
    assert!(rates.starts_with("<svg") && rates.trim_end().ends_with("</svg>"));
    // con: syntax 100 %, functional 50 %; vanilla: 0 and 0 (no bar height).
    assert!(
        rates.contains("m con") && rates.contains("m vanilla"),
        "{rates}"
    );
    assert!(rates.contains("<title>syntax %: 100</title>"), "{rates}");
    assert!(rates.contains("<title>functional %: 50</title>"), "{rates}");
    let overhead = std::fs::read_to_string(&files[2]).unwrap();
    // 5 / 20 = 25 % with one region, 10 / 20 = 50 % with two.
    assert!(overhead.contains("<title>m con: 25</title>"), "{overhead}");
    assert!(overhead.contains("<title>m con: 50</title>"), "{overhead}");
    assert!(
        !overhead.contains("vanilla"),
        "only constrained modes: {overhead}"
    );
    // The CLI writes them too.
    let results = dir.join("r.jsonl");
    let lines: Vec<String> = rs
        .iter()
        .map(|r| serde_json::to_string(r).unwrap())
        .collect();
    std::fs::write(&results, lines.join("\n") + "\n").unwrap();
    let out = dir.join("svg");
    let o = cdiff(
        &[
            "eval",
            "report",
            results.to_str().unwrap(),
            "--plots",
            out.to_str().unwrap(),
        ],
        &[],
    );
    ok(&o, "report --plots");
    assert!(out.join("overhead.svg").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// The paper's Fig. 7: constraint time per token against the size of each
/// instance's grammar (JSON: one grammar per schema; other tasks one each);
/// unconstrained modes and records without a size draw nothing.
#[test]
fn grammar_size_plot_has_a_point_per_grammar() {
    let mut rs = Vec::new();
    for (id, size, ms) in [("JME_1", 120, 4.0), ("JME_2", 480, 16.0)] {
        for seed in 0..2 {
            let mut r = rec(id, "con", seed, true, Some(true));
            r.task = "json".into();
            r.number_spans = None;
            r.grammar_productions = Some(size);
            r.ms_constraint = ms; // over 10 tokens
            rs.push(r.clone());
            r.mode = "vanilla".into();
            rs.push(r);
        }
    }
    let mut s = rec("SMILES_1", "con", 0, true, Some(true));
    s.task = "smiles".into();
    s.number_spans = None;
    s.grammar_productions = Some(300);
    rs.push(s);
    let dir = tmp("fig7");
    let files = cdiff::eval::plots::write_plots(&rs, &dir).unwrap();
    let fig = files
        .iter()
        .find(|f| f.ends_with("grammar-size.svg"))
        .unwrap_or_else(|| panic!("{files:?}"));
    let svg = std::fs::read_to_string(fig).unwrap();
    assert!(
        svg.contains("<title>m con: JME_1 (120, 0.40)</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>m con: JME_2 (480, 1.60)</title>"),
        "{svg}"
    );
    assert!(
        svg.contains("<title>m con: smiles (300, 0.50)</title>"),
        "{svg}"
    );
    assert_eq!(svg.matches("<circle").count(), 3, "{svg}");
    assert!(!svg.contains("vanilla"), "{svg}");
    let _ = std::fs::remove_dir_all(&dir);
}

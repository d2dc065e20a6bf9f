//! `Config::max_memory` bounds the peak a check reaches, not only the growth
//! seen between two looks at the counter: hard inputs under small limits must
//! end with an answer or a size-limit error, and the most memory in use while
//! they ran may exceed what was in use before by the limit and a little slack.
//!
//! This file installs [`CountingAlloc`] and holds one test, so that no other
//! thread allocates while a peak is measured.

use cdiff::memory::CountingAlloc;
use cdiff::{Config, Constraint, ErrorKind, Grammar, Partial};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// What a check may allocate past its limit: the allocation that crosses it
/// is allowed to finish only if it is small.
const SLACK: usize = 1 << 20;

struct Case {
    name: &'static str,
    grammar: &'static str,
    partial: Partial,
}

fn cases() -> Vec<Case> {
    let json = include_str!("../grammars/json.ebnf");
    let cpp = include_str!("../grammars/cpp.ebnf");
    let nums = serde_json::to_string(&(0..150_000).collect::<Vec<u32>>()).unwrap();
    let n = nums.len();
    let small = serde_json::to_string(&(0..4_000).collect::<Vec<u32>>()).unwrap();
    let mut commas = Partial::new().text("[");
    for _ in 0..300 {
        commas.push_hole();
        commas.push_text(",");
    }
    commas.push_hole();
    commas.push_text("]");
    // HumanEval-X solutions the grammar accepts (a few are outside it).
    let rows = include_str!("../datasets/humaneval-x-cpp/humaneval_cpp.jsonl");
    let cpp_check = Constraint::compile(&Grammar::from_lark(cpp, None).unwrap()).unwrap();
    let mut src = String::new();
    for line in rows.lines().take(60) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let one = format!(
            "{}{}",
            v["declaration"].as_str().unwrap(),
            v["canonical_solution"].as_str().unwrap()
        );
        if cpp_check.check(&Partial::complete(&one)).unwrap() {
            src.push_str(&one);
        }
    }
    let doubling: String = (0..40)
        .map(|i| format!("r{i}: r{} r{}\n", i + 1, i + 1))
        .chain(["r40: \"a\"\n".to_string()])
        .collect();
    let doubling: &'static str = Box::leak(format!("start: r0\n{doubling}").into_boxed_str());
    let m = src.len();
    let mut canvas = Vec::new();
    let mut i = 0;
    // Every seventh run of three bytes masked.
    while i + 3 < m.min(4096) {
        canvas.push((i + 4, i + 7));
        i += 21;
    }
    vec![
        Case {
            name: "JSON 1 MB, hole at the start",
            grammar: json,
            partial: Partial::cut(nums.as_bytes(), &[(1, 2)]),
        },
        Case {
            name: "JSON 1 MB, hole in the middle",
            grammar: json,
            partial: Partial::cut(nums.as_bytes(), &[(n / 2, n / 2 + 1)]),
        },
        Case {
            name: "JSON 23 KB, one byte cut",
            grammar: json,
            partial: Partial::cut(small.as_bytes(), &[(small.len() / 2, small.len() / 2 + 1)]),
        },
        Case {
            name: "JSON `[` + 301 holes",
            grammar: json,
            partial: commas,
        },
        Case {
            name: "C++ 4 KB canvas",
            grammar: cpp,
            partial: Partial::cut(&src.as_bytes()[..m.min(4096)], &canvas),
        },
        Case {
            name: "doubling grammar, one hole",
            grammar: doubling,
            partial: Partial::new().hole(),
        },
        Case {
            name: "C++ whole file, hole at the start",
            grammar: cpp,
            partial: Partial::cut(src.as_bytes(), &[(0, 1)]),
        },
    ]
}

#[test]
fn memory_limit_bounds_the_peak_not_only_growth_between_checks() {
    let mut failures = Vec::new();
    for case in cases() {
        let g = Grammar::from_lark(case.grammar, None).unwrap();
        // The verdict without a memory limit: what every run that answers
        // must say.
        let truth = Constraint::compile(&g)
            .unwrap()
            .check(&case.partial)
            .unwrap();
        for limit in [4usize << 20, 16 << 20, 64 << 20] {
            let config = Config {
                max_memory: Some(limit),
                witness_effort: u64::MAX,
                canvas_witness_effort: u64::MAX,
                ..Config::default()
            };
            let c = Constraint::with_config(&g, config).unwrap();
            let before = cdiff::memory::allocated().expect("allocator installed");
            cdiff::memory::reset_peak();
            let verdict = c.completable(&case.partial);
            let peak = cdiff::memory::peak().unwrap().saturating_sub(before);
            let outcome = match &verdict {
                Ok(v) => {
                    assert_eq!(v.is_completable(), truth, "{}", case.name);
                    format!("completable: {}", v.is_completable())
                }
                Err(e) => {
                    assert!(
                        matches!(e.kind(), ErrorKind::SizeLimit | ErrorKind::Budget),
                        "{}: {e}",
                        case.name
                    );
                    let x = e.exceeded().expect("a limit error names its limit");
                    if x.which == cdiff::Limit::Memory {
                        assert_eq!(x.limit, limit as u64);
                        assert!(x.used > x.limit);
                    }
                    format!("{:?}", e.kind())
                }
            };
            println!(
                "{:<36} limit {:>4} MiB: peak {:>7.1} MiB, {outcome}",
                case.name,
                limit >> 20,
                peak as f64 / (1 << 20) as f64
            );
            if peak > limit + SLACK {
                failures.push(format!(
                    "{} under {} MiB: peak {} bytes",
                    case.name,
                    limit >> 20,
                    peak
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

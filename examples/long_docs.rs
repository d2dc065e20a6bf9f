//! The long-document cases of the canvas benchmark: megabyte JSON texts with
//! one hole at the start, middle or end, with 1,000 and 10,000 holes, runs of
//! holes, nesting 10,000 deep, and a 120 KB C++ file with 3 holes. Each is
//! completable (the cut-out bytes fill it). Prints, per case, the median of
//! `check` and of `completable` over `ROUNDS` runs and the most memory one
//! run added.
//!
//! ```text
//! cargo run --release --example long_docs [ROUNDS]
//! ```

use std::time::{Duration, Instant};

use cdiff::memory::CountingAlloc;
use cdiff::{Constraint, Grammar, Partial};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// `text` with the bytes at `cuts` (sorted, disjoint `[start, end)`) as holes.
fn cut(text: &str, cuts: &[(usize, usize)]) -> Partial {
    Partial::cut(text.as_bytes(), cuts)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort_unstable();
    v[v.len() / 2]
}

fn run(name: &str, c: &Constraint, p: &Partial, rounds: usize) {
    let mut check = Vec::new();
    let mut full = Vec::new();
    let mut peak = 0usize;
    for _ in 0..rounds {
        let before = cdiff::memory::allocated().unwrap_or(0);
        cdiff::memory::reset_peak();
        let t = Instant::now();
        let ok = c.check(p);
        check.push(t.elapsed());
        let t = Instant::now();
        let v = c.completable(p);
        full.push(t.elapsed());
        peak = peak.max(cdiff::memory::peak().unwrap_or(0).saturating_sub(before));
        match (ok, v) {
            (Ok(true), Ok(v)) if v.is_completable() => {}
            (a, b) => {
                println!(
                    "{name}: WRONG or failed: check {a:?}, completable {:?}",
                    b.map(|v| v.is_completable())
                );
                return;
            }
        }
    }
    println!(
        "| {name} | {} | {} | {:.1} ms | {:.1} ms | {:.0} MB |",
        p.text_len(),
        p.n_holes(),
        median(check).as_secs_f64() * 1e3,
        median(full).as_secs_f64() * 1e3,
        peak as f64 / 1e6
    );
}

fn main() {
    let rounds: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(3);
    let json = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let j = Constraint::compile(&json).unwrap();
    println!("| case | bytes | holes | check | completable | memory |");
    println!("|---|---|---|---|---|---|");
    // A flat array of integers, about 1 MB.
    let nums: Vec<u32> = (0..150_000).collect();
    let doc = serde_json::to_string(&nums).unwrap();
    let n = doc.len();
    run(
        "JSON 1 MB, hole at the start",
        &j,
        &cut(&doc, &[(1, 2)]),
        rounds,
    );
    run(
        "JSON 1 MB, hole in the middle",
        &j,
        &cut(&doc, &[(n / 2, n / 2 + 1)]),
        rounds,
    );
    run(
        "JSON 1 MB, hole at the end",
        &j,
        &cut(&doc, &[(n - 2, n - 1)]),
        rounds,
    );
    for k in [1_000, 10_000] {
        let step = n / (k + 1);
        let cuts: Vec<(usize, usize)> = (1..=k).map(|i| (i * step, i * step + 1)).collect();
        run(
            &format!("JSON 1 MB, {k} holes"),
            &j,
            &cut(&doc, &cuts),
            rounds,
        );
    }
    for k in [1_000, 10_000] {
        let mut p = Partial::new().text("[");
        for i in 0..k {
            p.push_hole();
            p.push_text(if i + 1 == k { "]" } else { "," });
        }
        run(&format!("`[` + {k} holes + `]`"), &j, &p, rounds);
    }
    let d = 10_000;
    let deep = format!("{}1{}", "[".repeat(d), "]".repeat(d));
    run(
        "nesting 10,000 deep, hole at the start",
        &j,
        &cut(&deep, &[(0, 1)]),
        rounds,
    );
    run(
        "nesting 10,000 deep, hole in the middle",
        &j,
        &cut(&deep, &[(d, d + 1)]),
        rounds,
    );
    run(
        "nesting 10,000 deep, hole at the end",
        &j,
        &cut(&deep, &[(2 * d, 2 * d + 1)]),
        rounds,
    );
    run(
        "a hole, then 10,000 `]`",
        &j,
        &Partial::new().hole().text("]".repeat(10_000)),
        rounds,
    );
    // C++: HumanEval-X programs the grammar accepts, joined to about 120 KB, 3 holes.
    let cpp = Grammar::from_lark(include_str!("../grammars/cpp.ebnf"), None).unwrap();
    let c = Constraint::compile(&cpp).unwrap();
    let rows = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/datasets/humaneval-x-cpp/humaneval_cpp.jsonl"
    ))
    .unwrap();
    let mut src = String::new();
    for line in rows.lines().cycle() {
        if src.len() >= 120_000 {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let one = format!(
            "{}{}",
            v["declaration"].as_str().unwrap(),
            v["canonical_solution"].as_str().unwrap()
        );
        // A few solutions are outside the grammar (as in the MRI task).
        if c.check(&Partial::complete(&one)).unwrap() {
            src.push_str(&one);
        }
    }
    let m = src.len();
    // Cut inside identifiers/whitespace-free spots: a byte at a quarter, half, three quarters.
    let cuts: Vec<(usize, usize)> = [m / 4, m / 2, 3 * m / 4]
        .iter()
        .map(|&x| {
            let x = (x..m)
                .find(|&i| src.as_bytes()[i].is_ascii_alphanumeric())
                .unwrap();
            (x, x + 1)
        })
        .collect();
    run("C++ 120 KB, 3 holes", &c, &cut(&src, &cuts), rounds);
}

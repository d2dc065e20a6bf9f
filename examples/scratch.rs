use cdiff::{Config, Constraint, Grammar, Partial};
use std::time::Instant;
fn main() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::with_config(
        &g,
        Config {
            budget: u64::MAX,
            ..Config::default()
        },
    )
    .unwrap();
    let size: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let mut doc = String::from("[");
    let mut i = 0;
    while doc.len() < size {
        doc.push_str(&format!("{{\"k{i}\": [1.5, \"s\\n\", true]}}, "));
        i += 1;
    }
    doc.push_str("null]");
    let b = doc.as_bytes();
    let n = b.len();
    for p in [
        Partial::complete(b),
        Partial::new()
            .text(&b[..n / 2])
            .hole()
            .text(&b[n / 2 + 10..]),
    ] {
        let t0 = Instant::now();
        let d = c.token_nfa(&p).unwrap();
        println!("dfa {:?} states {}", t0.elapsed(), d.len());
        let t0 = Instant::now();
        let r = c.check(&p);
        println!("check {:?} {:?}", t0.elapsed(), r);
    }
}

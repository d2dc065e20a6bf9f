use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let g = Grammar::from_lark(&std::fs::read_to_string(&args[1]).unwrap(), None).unwrap();
    let t0 = Instant::now();
    let c = Constraint::compile(&g).unwrap();
    eprintln!(
        "compile {:?}, lexer {} states",
        t0.elapsed(),
        c.lexer().len()
    );
    let mut files: Vec<_> = std::fs::read_dir(&args[2])
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mode = args.get(3).map(|s| s.as_str()).unwrap_or("check");
    let mut rng = SplitMix64::new(1);
    let mut times = vec![];
    let mut sizes = vec![];
    for f in files.iter().take(60) {
        let text = std::fs::read(f).unwrap();
        let (p, _) = cut_spans(&text, 1 + (rng.below(3) as usize), &mut rng);
        let t0 = Instant::now();
        let nfa = c.token_nfa(&p).unwrap();
        let t1 = t0.elapsed();
        let ok = if mode == "check" {
            c.check(&p).unwrap()
        } else {
            c.completable(&p).unwrap().is_completable()
        };
        assert!(ok);
        times.push((t0.elapsed().as_micros(), t1.as_micros()));
        sizes.push((nfa.len(), nfa.n_edges()));
    }
    times.sort();
    eprintln!(
        "median total(incl nfa twice) {:?}; sizes sample {:?}",
        times[times.len() / 2],
        &sizes[..5]
    );
}

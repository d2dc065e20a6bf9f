use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar};
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let g = Grammar::from_lark(&std::fs::read_to_string(&args[1]).unwrap(), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let mut files: Vec<_> = std::fs::read_dir(&args[2])
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let reps: usize = args.get(3).map(|s| s.parse().unwrap()).unwrap_or(1);
    let mut rng = SplitMix64::new(1);
    let mut times = vec![];
    let mut sizes = vec![];
    for _ in 0..reps {
        for f in files.iter().take(200) {
            let text = std::fs::read(f).unwrap();
            let (p, _) = cut_spans(&text, 1 + (rng.below(3) as usize), &mut rng);
            let t0 = Instant::now();
            assert!(c.check(&p).unwrap());
            times.push(t0.elapsed().as_micros());
            if sizes.len() < 5 {
                let n = c.token_nfa(&p).unwrap();
                sizes.push((n.len(), n.n_edges()));
            }
        }
    }
    times.sort();
    eprintln!(
        "lexer {} median check {}us p90 {}us; sizes {:?}",
        c.lexer().len(),
        times[times.len() / 2],
        times[times.len() * 9 / 10],
        sizes
    );
}

use cdiff::{Constraint, Grammar, Partial};
use std::time::Instant;
fn main() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    let c = Constraint::compile(&g).unwrap();
    let t = std::fs::read(std::env::args().nth(1).unwrap()).unwrap();
    let p = Partial::complete(&t);
    let t0 = Instant::now();
    let d = c.token_dfa(&p).unwrap();
    println!("dfa {:?} states {}", t0.elapsed(), d.len());
    let t0 = Instant::now();
    let r = c.check(&p);
    println!("check {:?} {:?}", t0.elapsed(), r);
}

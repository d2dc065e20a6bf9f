use cdiff::{Constraint, Grammar, Partial};
fn main() {
    let g = Grammar::from_lark(include_str!("../grammars/json.ebnf"), None).unwrap();
    for (i, t) in g.terminals.iter().enumerate() {
        print!("{i}={} ", t.name);
    }
    println!();
    let c = Constraint::compile(&g).unwrap();
    let cases = [
        Partial::new()
            .hole()
            .text("\"")
            .hole()
            .text("sd")
            .hole()
            .text("]"),
        Partial::new()
            .hole()
            .text("\"")
            .hole()
            .text("s")
            .hole()
            .text("]"),
        Partial::new().hole().text("\"").hole().text("s").hole(),
        Partial::new().text("[\"").hole().text("s").hole().text("]"),
        Partial::new().text("[").hole().text("s").hole().text("]"),
    ];
    for p in cases {
        let nfa = c.token_nfa(&p).unwrap();
        let w: Vec<u32> = vec![0, 9, 1]; // guess: [ STRING ]
        println!(
            "{:?} -> {:?} accepts {:?}: {}",
            p,
            c.completable(&p)
                .unwrap()
                .completion()
                .map(|c| String::from_utf8_lossy(&c.text).to_string()),
            w,
            nfa.accepts(&w)
        );
        println!("  nfa {:?}", nfa);
    }
}

use cdiff::{Constraint, Grammar};
fn main() {
    for src in [
        "start: (\"a\"",
        "start: \"a\"\nnext: foo",
        "start: A\nA: /[a-/",
        "start: A\nA: A \"x\"",
        "start: start \"a\"",
        "start: A\nA: /a*/",
        "start: A\nA: /(?=a)a/",
        "start \"a\"",
        "other: \"a\"",
    ] {
        let err = Grammar::from_lark(src, None)
            .and_then(|g| Constraint::compile(&g).map(|_| g))
            .unwrap_err();
        println!("{src:?} => {:?} {:?} {}", err.kind(), err.position(), err);
    }
}

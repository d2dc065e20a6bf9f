use cdiff::{Constraint, Grammar, Partial};
fn main() {
    let g = Grammar::from_lark("start: \"a\"+ \"b\"", None).unwrap();
    println!("{:?}", g);
    let c = Constraint::compile(&g).unwrap();
    let v = c.completable(&Partial::new().text("aa").hole()).unwrap();
    println!(
        "{:?}",
        v.completion()
            .map(|c| String::from_utf8_lossy(&c.text).to_string())
    );
}

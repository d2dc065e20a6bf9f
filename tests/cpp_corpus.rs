//! Real text: the C++ of HumanEval-X (164 solved programs and their tests,
//! shipped in `datasets/humaneval-x-cpp`, Apache-2.0) against
//! `grammars/cpp.ebnf`.
//!
//! - every program (`declaration + canonical_solution`, or `prompt +
//!   canonical_solution` for the known malformed declaration fields) and the
//!   program followed by its test `main` is accepted by the independent
//!   recognizer and by the engine;
//! - with 1–3 random spans cut out every program stays completable, and every
//!   witness keeps the chunks in place and is accepted by the recognizer;
//! - a table of targeted cases.

mod common;

use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Partial, Verdict};
use common::cpp::{compiled, programs};

#[test]
fn programs_and_tests_are_accepted() {
    let (c, rec) = compiled();
    let progs = programs(&rec);
    assert_eq!(progs.len(), 164);
    let fallbacks: Vec<&str> = progs
        .iter()
        .filter(|p| p.fallback)
        .map(|p| p.task_id.as_str())
        .collect();
    assert_eq!(
        fallbacks,
        ["CPP/38"],
        "programs whose declaration field is rejected"
    );
    let mut failures = Vec::new();
    for p in &progs {
        let with_test = format!("{}{}", p.text, p.test);
        for (what, text) in [("program", &p.text), ("program + test", &with_test)] {
            let r = rec.accepts(text.as_bytes()).unwrap();
            let e = c.check(&Partial::complete(text)).unwrap();
            if !(r && e) {
                failures.push(format!("{} {what}: recognizer {r}, engine {e}", p.task_id));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn programs_with_holes_stay_completable() {
    let (c, rec) = compiled();
    let progs = programs(&rec);
    let mut rng = SplitMix64::new(2508_0164);
    let mut checks = 0;
    let start = std::time::Instant::now();
    for p in &progs {
        let text = p.text.as_bytes();
        for k in 0..2 {
            let holes = 1 + (checks + k) % 3;
            let (partial, cut) = cut_spans(text, holes, &mut rng);
            assert_eq!(partial.fill(&cut).unwrap(), text);
            match c.completable(&partial).unwrap() {
                Verdict::Completable(done) => {
                    assert_eq!(partial.fill(&done.fills).unwrap(), done.text);
                    assert!(
                        rec.accepts(&done.text).unwrap(),
                        "{}: witness {:?} for {:?} rejected",
                        p.task_id,
                        String::from_utf8_lossy(&done.text),
                        partial
                    );
                }
                Verdict::NotCompletable => {
                    panic!("{}: {partial:?} reported not completable", p.task_id)
                }
            }
        }
        checks += 2;
    }
    assert_eq!(checks, 164 * 2);
    eprintln!("{checks} checks in {:?}", start.elapsed());
}

/// `(text, accepted)`: whole programs (a `main` is added around statements).
const CASES: &[(&str, bool)] = &[
    ("a == b;", true),
    ("a = = b;", false),
    ("x = a >> 2;", true),
    ("x = a > > b;", false),
    ("x >>= 1; x <<= 2; x |= 1; x ^= 3; x &= 1; x %= 2;", true),
    ("x = a <= b && c >= d || !e;", true),
    ("x = a and b or not c;", true),
    ("vector<vector<int>> v;", true),
    ("vector<vector<vector<int>>> v;", true),
    ("map<string, vector<int>> m;", true),
    ("vector<vector<int> > v;", true),
    ("vector<int>> v;", false),
    ("vector<int>>> v;", false),
    ("vector<vector<int> v;", false),
    ("std::map<char,int>::iterator it;", true),
    ("int a=0,b[10],*p;", true),
    ("vector<int> v={1,2}; int w[]{3,4};", true),
    ("long long x = 1LL; unsigned long long y = 0x1Fu; double d = 1e-5; float f = 2.5f;", true),
    ("x = 1e-5 + .5 + 3. + 0b101;", true),
    ("char c = '\\n'; c = '\\''; c = '\\0'; string s = \"a\\\"b\\\\\";", true),
    ("string s = \"a\\qb\";", false),
    ("char c = '';", false),
    ("x = a /* comment */ + b; // comment", true),
    ("x = a /* unterminated + b;", false),
    ("for (auto x: v) s += x;", true),
    ("for (const auto &x : v) { continue; }", true),
    ("for (int i=0;i<n;i++) for (;;) break;", true),
    ("for (int i=0,j=n-1;i<j;i++,j--) swap(a[i],a[j]);", true),
    ("while (x--) ; do { x++; } while (x < 10);", true),
    ("do x++ while (x < 10);", false),
    ("if (a) b(); else if (c) d(); else { e(); }", true),
    ("if a b();", false),
    ("else b();", false),
    ("switch (x) { case 1: y = 2; break; case 'a': default: y = 0; }", true),
    ("return;", true),
    ("x = a ? b : c ? d : e;", true),
    ("x = a ? b;", false),
    ("x = (int)y + static_cast<double>(z) + sizeof(int) + sizeof x;", true),
    ("x = -~!y + *p + &q - +r;", true),
    ("p->next->val = s.size() + v[i][j] + f(a, b)(c);", true),
    ("x = std::max(a, b) + ::tolower(c) + string::npos;", true),
    ("x = boost::any_cast<int>(y);", true),
    ("auto f = [&](int a) { return a + 1; }; sort(v.begin(), v.end(), [](int a, int b) { return a > b; });", true),
    ("a + b = c;", false),
    ("1 = x;", false),
    ("int while = 3;", false),
    ("int int x;", false),
    ("x = a b;", false),
    ("x = (a;", false),
    ("x = a);", false),
    ("{ { } }", true),
    ("{ { }", false),
    ("++i; --i; i++; i--;", true),
    ("i+++;", false),
    ("x = 1 +;", false),
    ("return {1, 2};", true),
    (";;", true),
];

/// Whole programs, as they are.
const PROGRAMS: &[(&str, bool)] = &[
    ("#include<stdio.h>\nusing namespace std;\nint f(int);\nint g=1;\nint f(int a){return a;}\n", true),
    ("#include <vector>\n#include \"x.h\"\nint main(){}\n", true),
    ("#include<stdio.h> int main(){}\n", false),
    ("int main(){ #include<stdio.h>\n }", false),
    ("struct P { int a, b; P(int x): a(x), b(0) {} int sum() const { return a + b; } };\nint main(){ P p(1); }", true),
    ("typedef long long ll;\nll f(ll a, const vector<int>& v, int *p, int n = 3);\n", true),
    ("int f(){}} ", false),
    ("int f()", false),
    ("return 1;", false),
    ("using namespace std\nint main(){}", false),
    ("/* a */ int /* b */ main // c\n(){}", true),
];

#[test]
fn targeted_cases() {
    let (c, rec) = compiled();
    let mut bad = Vec::new();
    let all = CASES
        .iter()
        .map(|&(s, ok)| (format!("int main(){{\n{s}\n}}\n"), ok))
        .chain(PROGRAMS.iter().map(|&(s, ok)| (s.to_string(), ok)));
    for (text, ok) in all {
        let e = c.check(&Partial::complete(&text)).unwrap();
        let r = rec.accepts(text.as_bytes()).unwrap_or(false);
        if e != ok || r != ok {
            bad.push(format!(
                "{text:?}: expected {ok}, engine {e}, recognizer {r}"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The `body` start rule: a function body after its `{`, so that infilling a
/// body cannot add functions. Most canonical solutions are exactly that.
#[test]
fn function_body_start_rule() {
    let g = cdiff::Grammar::from_lark(include_str!("../grammars/cpp.ebnf"), Some("body")).unwrap();
    let rec = cdiff::recognize::Recognizer::new(&g).unwrap();
    let c = cdiff::Constraint::compile(&g).unwrap();
    for (text, ok) in [
        ("int x = 1;\n return x;\n}\n", true),
        ("}", true),
        ("return 1;\n}\nint g(){ return 2; }\n", false),
        ("return 1;\n", false),
    ] {
        assert_eq!(rec.accepts(text.as_bytes()).unwrap(), ok, "{text:?}");
        assert_eq!(c.check(&Partial::complete(text)).unwrap(), ok, "{text:?}");
    }
    let bodies = common::cpp::rows()
        .iter()
        .filter(|r| rec.accepts(r.canonical_solution.as_bytes()).unwrap())
        .count();
    eprintln!("{bodies} of 164 canonical solutions are a single function body");
    assert!(bodies >= 160, "{bodies}");
}

//! SMILES (`grammars/smiles.ebnf`) on real molecules.
//!
//! - every molecule of `datasets/smiles/sample.smi` (500, shipped) is accepted
//!   by the engine and the independent recognizer, and stays completable with
//!   1–3 random spans cut out; every witness keeps the chunks in place and is
//!   accepted by the recognizer;
//! - hand-written valid and invalid SMILES (chirality, charges, classes, ...);
//! - every molecule of `datasets/smiles/` in `$CDIFF_SHARED` or `../shared`
//!   when that folder is present.

mod common;

use cdiff::recognize::Recognizer;
use cdiff::rng::{cut_spans, SplitMix64};
use cdiff::{Constraint, Grammar, Partial, Verdict};
use std::path::{Path, PathBuf};

fn smiles() -> (Constraint, Recognizer) {
    let g = Grammar::from_lark(include_str!("../grammars/smiles.ebnf"), None).unwrap();
    (
        Constraint::compile(&g).unwrap(),
        Recognizer::new(&g).unwrap(),
    )
}

fn sample() -> Vec<String> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("datasets/smiles/sample.smi");
    std::fs::read_to_string(p)
        .expect("datasets/smiles/sample.smi is shipped with the repository")
        .lines()
        .map(str::to_string)
        .collect()
}

fn accepted(c: &Constraint, rec: &Recognizer, s: &str) -> (bool, bool) {
    (
        c.check(&Partial::complete(s.as_bytes())).unwrap(),
        rec.accepts(s.as_bytes()).unwrap_or(false),
    )
}

#[test]
fn sample_molecules_with_holes_stay_completable() {
    let (c, rec) = smiles();
    let mols = sample();
    assert_eq!(mols.len(), 500);
    let mut rng = SplitMix64::new(0x5d1e5);
    let mut checks = 0;
    for m in &mols {
        assert_eq!(accepted(&c, &rec, m), (true, true), "{m}");
        let text = m.as_bytes();
        for holes in 1..=3 {
            let (p, cut) = cut_spans(text, holes, &mut rng);
            assert_eq!(p.fill(&cut).unwrap(), text);
            match c.completable(&p).unwrap() {
                Verdict::Completable(done) => {
                    assert_eq!(p.fill(&done.fills).unwrap(), done.text);
                    assert!(
                        rec.accepts(&done.text).unwrap(),
                        "{m}: witness {:?} for {p:?} rejected",
                        String::from_utf8_lossy(&done.text)
                    );
                }
                Verdict::NotCompletable => panic!("{m}: {p:?} reported not completable"),
            }
            checks += 1;
        }
    }
    assert_eq!(checks, 1500);
}

#[test]
fn hand_written_valid() {
    let (c, rec) = smiles();
    let valid = [
        "C",
        "*",
        "[*]",
        "CC(=O)Oc1ccccc1C(=O)O",
        "C1CCCCC1",
        "C%12CC%12",
        "C1CC%10CC1%10",
        "C=1CC1",
        "c1ccccc1-c2ccccc2",
        "[Na+].[Cl-]",
        "C(.O)C",
        "N[C@@H](C)C(=O)O",
        "N[C@H](C)C(=O)O",
        "F/C=C/F",
        "F\\C=C/F",
        "C#N",
        "C$C",
        "c1:c:c:c:c:c1",
        "[13CH4]",
        "[2H]O[2H]",
        "[Fe+2]",
        "[Fe++]",
        "[Cu+15]",
        "[O--]",
        "[O-2]",
        "[NH4+]",
        "[CH3:1]C",
        "[C:12345]",
        "[se]1cccc1",
        "[as]1cccc1",
        "[te]1cccc1",
        "[Sc]",
        "Sc1ccccc1",
        // Syntactically S + aromatic c and C + aromatic s (not scandium, caesium).
        "Sc",
        "Cs",
        "[Sn](Cl)(Cl)(Cl)Cl",
        "[C@TH1](F)(Cl)Br",
        "[C@TH2](F)(Cl)Br",
        "[C@AL1]",
        "[C@SP3]",
        "[C@TB1]",
        "[C@TB20]",
        "[C@OH1]",
        "[C@OH30]",
        "[U]",
        "[Og]",
        "ClBr",
        "BrCCl",
        "c1(Cl)ccccc1",
        "c1ccccc(Cl)1",
    ];
    for s in valid {
        assert_eq!(
            accepted(&c, &rec, s),
            (true, true),
            "{s} should be accepted"
        );
    }
}

#[test]
fn table_of_rejections() {
    let (c, rec) = smiles();
    // (text, why it is not SMILES)
    let invalid = [
        ("", "empty"),
        ("C(C", "unbalanced branch"),
        ("C)C", "unbalanced branch"),
        ("(C)C", "branch before any atom"),
        ("C()C", "empty branch"),
        ("C((C))", "branch starting with a branch"),
        ("[C", "unterminated bracket atom"),
        ("C]", "stray ']'"),
        ("[]", "empty bracket atom"),
        ("[+]", "charge without a symbol"),
        ("[C+-]", "bad charge"),
        ("[C+16]", "charge above 15"),
        ("[C+123]", "three charge digits"),
        ("[C+++]", "three pluses"),
        ("[CH+H]", "hcount after charge"),
        ("[C+H]", "hcount after charge"),
        ("[C@TH3]", "no TH3"),
        ("[C@SP4]", "no SP4"),
        ("[C@TB21]", "no TB21"),
        ("[C@OH31]", "no OH31"),
        ("[C@@@]", "three @"),
        ("[1234C]", "four isotope digits"),
        ("[C:]", "class without a number"),
        ("[Xx]", "unknown element"),
        ("[ch]", "h is no aromatic symbol"),
        ("CC=", "bond at the end"),
        ("=CC", "bond at the start"),
        ("C==C", "two bonds"),
        ("C=.C", "bond before a dot"),
        ("C..C", "two dots"),
        (".C", "dot at the start"),
        ("C.", "dot at the end"),
        ("C(=)C", "bond without an atom"),
        ("C%1C", "%-label with one digit"),
        ("C%C", "% without digits"),
        ("Zn", "Zn outside brackets"),
        ("Fe", "Fe outside brackets"),
        ("Na", "Na outside brackets"),
        ("cl", "lowercase Cl"),
        ("H", "H outside brackets"),
        ("1CC1", "ring label before any atom"),
        ("C C", "whitespace"),
        ("CC\n", "trailing newline"),
        ("C-1-", "bond at the end after a ring label"),
    ];
    for (s, why) in invalid {
        assert_eq!(
            accepted(&c, &rec, s),
            (false, false),
            "{s:?} ({why}) should be rejected"
        );
    }
    // Ring-closure pairing is not enforced (see grammars/smiles.ebnf).
    assert_eq!(accepted(&c, &rec, "C1CC"), (true, true));
}

#[test]
fn partials_that_cannot_be_completed() {
    let (c, _) = smiles();
    let not = [
        vec![Some("C("), None, Some(")()")],
        vec![Some("[C+-"), None],
        vec![None, Some("[]"), None],
        vec![Some("CC"), None, Some("=")],
    ];
    for parts in not {
        let mut segs = Vec::new();
        for p in &parts {
            segs.push(match p {
                Some(s) => serde_like(s),
                None => "null".to_string(),
            });
        }
        let json = format!("[{}]", segs.join(","));
        let p = Partial::from_json(&json).unwrap();
        assert!(!c.completable(&p).unwrap().is_completable(), "{json}");
    }
}

fn serde_like(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The SMILES of every row of the shared data sets: `(file, row, smiles)`.
/// `.smi`: first tab/space-separated field; `zim.100.txt`: first field after
/// the header; CSV files: the `smiles` column (no commas occur after it).
/// Trailing whitespace (ESOL rows end in a space) is not part of a SMILES.
fn shared_rows(dir: &Path) -> Vec<(String, usize, String)> {
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    for name in names {
        let Ok(text) = std::fs::read_to_string(dir.join(&name)) else {
            continue;
        };
        let mut lines = text.lines().enumerate();
        if name.ends_with(".csv") {
            let Some((_, header)) = lines.next() else {
                continue;
            };
            let Some(col) = header.split(',').position(|h| h == "smiles") else {
                continue;
            };
            // Counted from the end: names in earlier columns contain quoted commas.
            let from_end = header.split(',').count() - 1 - col;
            for (i, l) in lines {
                let s = l.rsplit(',').nth(from_end).unwrap_or("").trim_end();
                out.push((name.clone(), i + 1, s.to_string()));
            }
        } else if name.ends_with(".smi") || name.ends_with(".txt") {
            for (i, l) in lines {
                if name.ends_with(".txt") && i == 0 {
                    continue; // header
                }
                let s = l.split(['\t', ' ']).next().unwrap_or("");
                out.push((name.clone(), i + 1, s.to_string()));
            }
        }
    }
    out
}

#[test]
fn shared_datasets_all_accepted() {
    let Some(dir) = common::shared::dir("datasets/smiles", "shared_datasets_all_accepted") else {
        return;
    };
    let (c, rec) = smiles();
    let rows = shared_rows(&dir);
    let (mut blank, mut ok, mut rejected) = (0usize, 0usize, Vec::new());
    for (file, row, s) in &rows {
        if s.is_empty() {
            blank += 1;
            continue;
        }
        match accepted(&c, &rec, s) {
            (true, true) => ok += 1,
            other => rejected.push(format!("{file}:{row}: {s} {other:?}")),
        }
    }
    println!(
        "shared SMILES: {} rows, {blank} blank, {ok} accepted by engine and recognizer, {} rejected",
        rows.len(),
        rejected.len()
    );
    for r in &rejected {
        println!("  rejected {r}");
    }
    assert!(
        rows.len() > 10_000,
        "expected ~10,400 rows, read {}",
        rows.len()
    );
    assert!(rejected.is_empty(), "{} rows rejected", rejected.len());
}

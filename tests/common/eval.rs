//! Shared by the `cdiff eval` tests: running the binary, reading records.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output};

use cdiff::eval::record::{self, Record};

/// Runs `cdiff` with `args` and extra environment variables.
pub fn cdiff_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cdiff"));
    c.args(args);
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("the binary runs")
}

/// Asserts a successful run, showing its stderr otherwise.
pub fn ok(o: &Output, what: &str) {
    assert!(
        o.status.success(),
        "{what}: exit {:?}\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The records of a results file (no bad line allowed).
pub fn records(path: &Path) -> Vec<Record> {
    let r = record::read_records(path).unwrap();
    assert!(r.bad_lines.is_empty(), "{:?}", r.bad_lines);
    r.records
}

/// What must not change between runs: everything but the timings.
pub fn essence(rs: &[Record]) -> Vec<String> {
    rs.iter()
        .map(|r| {
            format!(
                "{:?} {:?} {} {:?} {:?} {:?} {} {} {} {}",
                r.key(),
                r.text,
                r.syntax_ok,
                r.schema_ok,
                r.gxx_syntax_ok,
                r.functional_ok,
                r.tokens,
                r.rejections,
                r.used_witness,
                r.gave_up
            )
        })
        .collect()
}

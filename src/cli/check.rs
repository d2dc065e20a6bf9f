//! `cdiff check`: one partial output, or a JSON-lines file of cases.

use std::io::{self, BufRead, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::Value;

use cdiff::recognize::Recognizer;
use cdiff::{Constraint, Grammar, Partial, Verdict};

use super::args::{CheckArgs, PropertyOrderArg, SchemaArgs};
use super::{compile, config, jsonobj, load_grammar, micros, read_text, CliError};
use cdiff::grammar::schema::is_constraining_keyword;
use cdiff::grammar::{json_schema_to_grammar, PropertyOrder, SchemaOptions};

/// Runs `cdiff check`.
pub fn run(a: &CheckArgs) -> Result<(), CliError> {
    let (g, path) = match (&a.json_schema, &a.grammar) {
        (Some(schema), _) => (load_schema(schema, &a.schema, a.explain)?, schema),
        (None, Some(grammar)) => (load_grammar(grammar, a.start.as_deref())?, grammar),
        (None, None) => return Err(CliError::Input("give --grammar or --json-schema".into())),
    };
    let (c, _) = compile(path, &g, &config(Some(&a.limits)))?;
    let mut checker = Checker {
        c: &c,
        g: &g,
        recognizer: None,
        hole_bytes: a.hole_bytes,
    };
    match (&a.jsonl, &a.partial) {
        (Some(cases), _) => run_jsonl(&mut checker, cases, a.fail_fast),
        (None, Some(path)) => {
            let text = if path == Path::new("-") {
                let mut s = String::new();
                io::stdin()
                    .read_to_string(&mut s)
                    .map_err(|error| CliError::Read {
                        path: path.clone(),
                        error,
                    })?;
                s
            } else {
                read_text(path)?
            };
            let v: Value = cdiff::jsontext::parse(&text).map_err(|e| {
                CliError::lib(
                    path,
                    cdiff::Error::new(cdiff::ErrorKind::Partial, format!("invalid JSON: {e}")),
                )
            })?;
            let (p, nulls) = Partial::from_json_nulls(&v).map_err(|e| CliError::lib(path, e))?;
            let mut o = checker.check(&p)?;
            o.nulls = nulls;
            if let Some(r) = o.recognizer {
                if r != o.is_completable() {
                    warn_disagreement(None, o.is_completable(), r);
                }
            }
            let mut out = io::stdout().lock();
            if a.json {
                let line = jsonobj::rewrite(&[], &o.fields());
                writeln!(out, "{line}").map_err(CliError::Write)?;
            } else {
                write_human(&mut out, &o).map_err(CliError::Write)?;
            }
            out.flush().map_err(CliError::Write)
        }
        (None, None) => Err(CliError::Input(
            "give a partial output file or --jsonl CASES.jsonl".into(),
        )),
    }
}

/// Builds the grammar of a JSON Schema file. The keywords it does not
/// enforce are summarised on stderr, or listed with the grammar on stdout
/// with `explain`.
///
/// `FILE#POINTER` (e.g. `cases.json#/schema`) takes the schema at that JSON
/// pointer of the file. A schema object with no constraining keyword but a
/// `schema` member (a wrapped schema, which would accept any JSON) is an
/// error that names the member and the pointer to pass.
pub(super) fn load_schema(
    path: &Path,
    args: &SchemaArgs,
    explain: bool,
) -> Result<Grammar, CliError> {
    let schema_err =
        |m: String| CliError::lib(path, cdiff::Error::new(cdiff::ErrorKind::Grammar, m));
    let (file, pointer) = split_pointer(path);
    let text = read_text(&file)?;
    let doc: Value = cdiff::jsontext::parse(&text)
        .map_err(|e| schema_err(format!("schema is not JSON: {e}")))?;
    let pointer = pointer.unwrap_or_default();
    let v = doc
        .pointer(&pointer)
        .ok_or_else(|| schema_err(format!("no value at JSON pointer \"{pointer}\"")))?;
    if let Some(obj) = v.as_object() {
        if obj.contains_key("schema") && !obj.keys().any(|k| is_constraining_keyword(k)) {
            return Err(schema_err(format!(
                "{} has no schema keywords but a \"schema\" member: a wrapped schema? \
                 select it with --json-schema {}#{pointer}/schema",
                if pointer.is_empty() {
                    "the root".to_string()
                } else {
                    format!("the value at \"{pointer}\"")
                },
                file.display()
            )));
        }
    }
    let opts = SchemaOptions {
        property_order: match args.property_order {
            PropertyOrderArg::Any => PropertyOrder::Any,
            PropertyOrderArg::Schema => PropertyOrder::Schema,
        },
        ..SchemaOptions::default()
    };
    let (g, unenforced) = json_schema_to_grammar(v, &opts).map_err(|e| CliError::lib(path, e))?;
    if explain {
        let mut out = io::stdout().lock();
        let w =
            |out: &mut io::StdoutLock<'_>, s: String| writeln!(out, "{s}").map_err(CliError::Write);
        if unenforced.is_empty() {
            w(&mut out, "every constraining keyword is enforced".into())?;
        } else {
            w(
                &mut out,
                format!(
                    "{} keyword(s) not or only approximately enforced:",
                    unenforced.len()
                ),
            )?;
        }
        for u in &unenforced {
            w(&mut out, format!("  {u}"))?;
        }
        w(
            &mut out,
            match opts.property_order {
                PropertyOrder::Any => format!(
                    "property order: any (exact for objects of up to {} properties; in larger \
                     ones optional properties may repeat, listed above as properties)",
                    opts.max_any_order_properties
                ),
                PropertyOrder::Schema => {
                    "property order: schema (declared properties in schema order, extra ones \
                     after them)"
                        .into()
                }
            },
        )?;
        w(&mut out, format!("grammar:\n{g}"))?;
    } else if !unenforced.is_empty() {
        let names: Vec<String> = unenforced
            .iter()
            .map(|u| format!("{} at {}", u.keyword, u.pointer))
            .collect();
        eprintln!(
            "warning: {} schema keyword(s) not or only approximately enforced (see --explain): {}",
            unenforced.len(),
            names.join(", ")
        );
    }
    Ok(g)
}

/// Splits `FILE#POINTER` into the file and the JSON pointer (empty or
/// starting with `/`). A path naming an existing file is taken whole, and so
/// is one without such a `#`. Of several `#`, the first whose file part
/// exists is the split (else the first, so that the error names the file).
fn split_pointer(path: &Path) -> (PathBuf, Option<String>) {
    let whole = (path.to_path_buf(), None);
    let Some(s) = path.to_str() else {
        return whole;
    };
    if path.is_file() {
        return whole;
    }
    let splits: Vec<(&str, &str)> = s
        .match_indices('#')
        .map(|(i, _)| (&s[..i], &s[i + 1..]))
        .filter(|(_, p)| p.is_empty() || p.starts_with('/'))
        .collect();
    splits
        .iter()
        .find(|(f, _)| Path::new(f).is_file())
        .or(splits.first())
        .map_or(whole, |(f, p)| (PathBuf::from(f), Some(p.to_string())))
}

/// A compiled grammar plus the independent recognizer, built on first need.
struct Checker<'a> {
    c: &'a Constraint,
    g: &'a Grammar,
    /// `None`: not built yet; `Some(None)`: building failed (warned once).
    recognizer: Option<Option<Recognizer>>,
    /// `--hole-bytes`: the byte limit of every hole.
    hole_bytes: Option<usize>,
}

/// The result of one check.
struct Outcome {
    verdict: Verdict,
    /// Completable, but the witness was refused by a size limit (its
    /// error); `verdict` is then `NotCompletable` and not used.
    witness_refused: Option<cdiff::Error>,
    /// The hole of each `null` of the input (one fill is printed per null).
    nulls: Vec<usize>,
    micros: f64,
    /// The independent recognizer's answer, for partial outputs without holes.
    recognizer: Option<bool>,
    /// With `--hole-bytes`: whether a fill within the limit may exist.
    within: Option<(usize, bool)>,
}

impl Checker<'_> {
    fn check(&mut self, p: &Partial) -> Result<Outcome, cdiff::Error> {
        let t = Instant::now();
        // Emptiness is decided on saturating yield lengths, so a partial
        // output whose shortest completion is astronomically long is still
        // decided: only building its witness hits the size limit.
        let (verdict, witness_refused) = match self.c.completable(p) {
            Ok(v) => (v, None),
            Err(e) if e.kind() == cdiff::ErrorKind::SizeLimit && self.c.check(p)? => {
                (Verdict::NotCompletable, Some(e))
            }
            Err(e) => return Err(e),
        };
        let micros = micros(t.elapsed());
        let within = match self.hole_bytes {
            Some(n) => Some((n, self.c.check_within(p, &vec![Some(n); p.n_holes()])?)),
            None => None,
        };
        let recognizer = if p.n_holes() == 0 {
            let text = p.fill(&[])?;
            self.recognize(&text)
        } else {
            None
        };
        Ok(Outcome {
            nulls: (0..p.n_holes()).collect(),
            verdict,
            witness_refused,
            micros,
            recognizer,
            within,
        })
    }

    /// The recognizer's answer, or `None` (with a warning) if it has none.
    fn recognize(&mut self, text: &[u8]) -> Option<bool> {
        let g = self.g;
        let r = self
            .recognizer
            .get_or_insert_with(|| match Recognizer::new(g) {
                Ok(r) => Some(r),
                Err(e) => {
                    eprintln!("cdiff: warning: no independent recognizer for this grammar: {e}");
                    None
                }
            })
            .as_ref()?;
        match r.accepts(text) {
            Ok(b) => Some(b),
            Err(e) => {
                eprintln!("cdiff: warning: the independent recognizer gave no answer: {e}");
                None
            }
        }
    }
}

impl Outcome {
    /// Whether the partial output is completable (with or without a witness).
    fn is_completable(&self) -> bool {
        self.verdict.is_completable() || self.witness_refused.is_some()
    }

    /// The result fields of the JSON output, in order.
    fn fields(&self) -> Vec<(&'static str, Value)> {
        let lossy = |b: &[u8]| Value::from(String::from_utf8_lossy(b).into_owned());
        let done = self.verdict.completion();
        let mut f = vec![
            ("completable", Value::Bool(self.is_completable())),
            (
                "completion",
                done.map_or(Value::Null, |d| {
                    let per_null = Partial::fills_per_null(&self.nulls, &d.fills);
                    Value::Array(per_null.iter().map(|x| lossy(x)).collect())
                }),
            ),
            ("text", done.map_or(Value::Null, |d| lossy(&d.text))),
            ("micros", Value::from(round3(self.micros))),
        ];
        if let Some(d) = done {
            f.push(("shortest", Value::Bool(d.shortest)));
        }
        if let Some(r) = self.recognizer {
            f.push(("recognizer", Value::Bool(r)));
        }
        if let Some(e) = &self.witness_refused {
            f.push(("witness_error", Value::from(e.message())));
            if let Some(x) = e.exceeded() {
                let limit = serde_json::json!({
                    "which": format!("{:?}", x.which),
                    "used": x.used,
                    "limit": x.limit,
                });
                f.push(("witness_limit", limit));
            }
        }
        if let Some((_, ok)) = self.within {
            f.push(("within_hole_bytes", Value::Bool(ok)));
        }
        f
    }
}

/// Rounds to three decimals (nanoseconds, in µs).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn write_human(out: &mut impl Write, o: &Outcome) -> io::Result<()> {
    match o.verdict.completion() {
        Some(d) => {
            writeln!(out, "completable")?;
            writeln!(out, "text: {:?}", String::from_utf8_lossy(&d.text))?;
            for (i, fill) in Partial::fills_per_null(&o.nulls, &d.fills)
                .iter()
                .enumerate()
            {
                writeln!(out, "hole {}: {:?}", i + 1, String::from_utf8_lossy(fill))?;
            }
            if !d.shortest {
                writeln!(
                    out,
                    "witness: the first found, not proven shortest (--witness-effort max to try \
                     harder)"
                )?;
            }
        }
        None => match &o.witness_refused {
            Some(e) => {
                writeln!(out, "completable")?;
                writeln!(out, "witness: not built: {}", e.message())?;
            }
            None => writeln!(out, "not completable")?,
        },
    }
    if let Some(r) = o.recognizer {
        let says = if r { "accepts" } else { "rejects" };
        writeln!(out, "recognizer: {says}")?;
    }
    match o.within {
        Some((n, true)) => writeln!(out, "holes of at most {n} bytes: maybe")?,
        Some((n, false)) => writeln!(out, "holes of at most {n} bytes: not completable")?,
        None => {}
    }
    writeln!(out, "checked in {:.1} µs", o.micros)
}

fn warn_disagreement(line: Option<usize>, engine: bool, recognizer: bool) {
    let at = line.map_or(String::new(), |n| format!("line {n}: "));
    let says = |b: bool| if b { "accepts" } else { "rejects" };
    eprintln!(
        "cdiff: warning: {at}the engine {} the text but the independent recognizer {} it",
        says(engine),
        says(recognizer)
    );
}

/// The longest line `check --jsonl` reads: a longer one ends the run (exit
/// 2) instead of growing a buffer without bound.
const MAX_LINE_BYTES: usize = 64 << 20;

/// Checks every line of a JSON-lines file (or `-`, standard input).
///
/// A line that cannot be checked gets an output record with
/// `"completable": null` and an `"error"` (its fields copied first when it is
/// a JSON object), a warning on stderr, and the run goes on; the run then
/// fails at the end (exit 2). With `fail_fast` the first such line ends the
/// run, with nothing written for it.
fn run_jsonl(checker: &mut Checker<'_>, path: &Path, fail_fast: bool) -> Result<(), CliError> {
    let read_err = |error| CliError::Read {
        path: path.to_path_buf(),
        error,
    };
    let mut input: Box<dyn BufRead> = if path == Path::new("-") {
        Box::new(io::stdin().lock())
    } else {
        Box::new(io::BufReader::new(
            std::fs::File::open(path).map_err(read_err)?,
        ))
    };
    let mut out = io::stdout().lock();
    let mut buf = Vec::new();
    let (mut n, mut cases, mut failed) = (0, 0, 0);
    let mut first_failure: Option<(usize, String)> = None;
    loop {
        buf.clear();
        let read = (&mut input)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(read_err)?;
        if read == 0 {
            break;
        }
        n += 1;
        if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
            // The rest of the line cannot be skipped without reading it (it
            // may never end: /dev/zero), so the run stops here.
            return Err(CliError::Line {
                path: path.to_path_buf(),
                line: n,
                message: format!(
                    "the line is longer than {} MiB, cdiff's limit for one case (the run stops \
                     here, after {cases} case(s))",
                    MAX_LINE_BYTES >> 20
                ),
            });
        }
        let record = match check_line(checker, &buf, n) {
            Ok(None) => continue,
            Ok(Some(record)) => record,
            Err(message) => {
                let error = CliError::Line {
                    path: path.to_path_buf(),
                    line: n,
                    message: message.clone(),
                };
                if fail_fast {
                    return Err(error);
                }
                eprintln!("cdiff: warning: {error} (written as an \"error\" record)");
                failed += 1;
                first_failure.get_or_insert((n, message.clone()));
                error_record(&buf, n, &message)
            }
        };
        cases += 1;
        writeln!(out, "{record}").map_err(CliError::Write)?;
        out.flush().map_err(CliError::Write)?;
    }
    match first_failure {
        None => Ok(()),
        Some((line, message)) => Err(CliError::Input(format!(
            "{}: {failed} of {cases} case(s) failed, the first at line {line}: {message}",
            path.display()
        ))),
    }
}

/// The output record of one input line, `None` for a blank line, or what is
/// wrong with the line.
fn check_line(checker: &mut Checker<'_>, buf: &[u8], n: usize) -> Result<Option<String>, String> {
    let line = std::str::from_utf8(buf).map_err(|_| "not valid UTF-8".to_string())?;
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: Value = cdiff::jsontext::parse(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let obj = v
        .as_object()
        .ok_or("expected a JSON object with a \"partial\" array")?;
    let partial = obj.get("partial").ok_or("no \"partial\" field")?;
    let (p, nulls) = Partial::from_json_nulls(partial).map_err(|e| e.to_string())?;
    let mut o = checker.check(&p).map_err(|e| e.to_string())?;
    o.nulls = nulls;
    if let Some(r) = o.recognizer {
        if r != o.is_completable() {
            warn_disagreement(Some(n), o.is_completable(), r);
        }
    }
    let members = jsonobj::members(line).ok_or("could not split the object into its fields")?;
    Ok(Some(jsonobj::rewrite(&members, &o.fields())))
}

/// The record written for a line that could not be checked: its fields
/// when it is a JSON object, then `"completable": null` and the `"error"`.
fn error_record(buf: &[u8], n: usize, message: &str) -> String {
    let line = std::str::from_utf8(buf).unwrap_or("").trim();
    let is_object = serde_json::from_str::<Value>(line).is_ok_and(|v| v.is_object());
    let members = if is_object {
        jsonobj::members(line).unwrap_or_default()
    } else {
        Vec::new()
    };
    jsonobj::rewrite(
        &members,
        &[
            ("completable", Value::Null),
            ("error", Value::from(format!("line {n}: {message}"))),
        ],
    )
}

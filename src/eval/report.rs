//! Markdown tables of results in the layout of Mündler et al.: syntactic
//! and functional correctness per model × mode (their Tables 1, 2, 7; the
//! JSON task adds schema validity) and the constraint's overhead per
//! generated token (Tables 3, 4), for the DLM tasks also per sample.
//!
//! Rates are computed per seed and reported as the mean over seeds ± the
//! half-width of a 95 % confidence interval (Student's t with `seeds − 1`
//! degrees of freedom; one seed: no interval). A functional rate counts
//! only records whose program was run (`functional_ok` not null).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::record::{mode_rank, natural_cmp, Record};

/// Two-sided 97.5 % quantiles of Student's t for 1–30 degrees of freedom.
const T975: [f64; 30] = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
    2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
    2.052, 2.048, 2.045, 2.042,
];

/// Mean and 95 % confidence half-width of `xs` (`None` half-width for
/// fewer than two values).
pub fn mean_ci(xs: &[f64]) -> Option<(f64, Option<f64>)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return Some((mean, None));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let t = T975.get(xs.len() - 2).copied().unwrap_or(1.96);
    Some((mean, Some(t * (var / n).sqrt())))
}

/// A percentage cell: `97.6 ± 1.2`, `97.6` (one seed) or `—`.
fn pct_cell(xs: &[f64]) -> String {
    match mean_ci(xs) {
        None => "—".into(),
        Some((m, None)) => format!("{:.1}", 100.0 * m),
        Some((m, Some(h))) => format!("{:.1} ± {:.1}", 100.0 * m, 100.0 * h),
    }
}

/// The records of one (task, regions) group, model and mode.
#[derive(Default)]
struct Cell<'a> {
    by_seed: BTreeMap<u64, Vec<&'a Record>>,
}

impl<'a> Cell<'a> {
    fn all(&self) -> impl Iterator<Item = &&'a Record> {
        self.by_seed.values().flatten()
    }

    /// Per seed, the share of records where `f` is true among those where
    /// it is defined.
    fn rate(&self, f: impl Fn(&Record) -> Option<bool>) -> Vec<f64> {
        self.by_seed
            .values()
            .filter_map(|rs| {
                let vals: Vec<bool> = rs.iter().filter_map(|r| f(r)).collect();
                (!vals.is_empty())
                    .then(|| vals.iter().filter(|&&v| v).count() as f64 / vals.len() as f64)
            })
            .collect()
    }

    fn instances(&self) -> usize {
        let mut ids: Vec<&str> = self.all().map(|r| r.instance_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    fn count(&self, f: impl Fn(&Record) -> bool) -> usize {
        self.all().filter(|r| f(r)).count()
    }
}

/// Group label: `mri-cpp, 2 regions`.
fn group_label(task: &str, n: Option<usize>) -> String {
    match n {
        Some(n) => {
            let what = if task.ends_with("-lines") {
                "line"
            } else {
                "region"
            };
            format!("{task}, {n} {what}{}", if n == 1 { "" } else { "s" })
        }
        None => task.to_string(),
    }
}

/// Short column names of the modes, as in the paper.
fn mode_label(mode: &str) -> &str {
    match mode {
        "vanilla" => "Van.",
        "con-minus" => "Con.⁻",
        "con" => "Con.",
        "gp" => "GP",
        m => m,
    }
}

type Groups<'a> = Vec<(
    (String, Option<usize>),
    Vec<(String, Vec<(String, Cell<'a>)>)>,
)>;

/// Groups records by (task, regions), then model (first appearance), then
/// mode (paper order).
fn group(records: &[Record]) -> Groups<'_> {
    let mut groups: Groups<'_> = Vec::new();
    for r in records {
        let gk = (r.task.clone(), r.number_spans);
        let gi = match groups.iter().position(|(k, _)| *k == gk) {
            Some(i) => i,
            None => {
                groups.push((gk, Vec::new()));
                groups.len() - 1
            }
        };
        let models = &mut groups[gi].1;
        let mi = match models.iter().position(|(m, _)| *m == r.model) {
            Some(i) => i,
            None => {
                models.push((r.model.clone(), Vec::new()));
                models.len() - 1
            }
        };
        let modes = &mut models[mi].1;
        let ci = match modes.iter().position(|(m, _)| *m == r.mode) {
            Some(i) => i,
            None => {
                modes.push((r.mode.clone(), Cell::default()));
                modes.len() - 1
            }
        };
        modes[ci].1.by_seed.entry(r.seed).or_default().push(r);
    }
    groups.sort_by(|a, b| a.0 .0.cmp(&b.0 .0).then(a.0 .1.cmp(&b.0 .1)));
    for (_, models) in &mut groups {
        for (_, modes) in models.iter_mut() {
            modes.sort_by(|a, b| mode_rank(&a.0).cmp(&mode_rank(&b.0)).then(a.0.cmp(&b.0)));
        }
    }
    groups
}

/// The markdown report of `records`; with `failures`, also the instances
/// whose program failed (or errored) under each model and mode.
pub fn report(records: &[Record], failures: bool) -> String {
    let mut s = String::new();
    if records.is_empty() {
        s.push_str("no records\n");
        return s;
    }
    for ((task, n), models) in group(records) {
        let _ = writeln!(s, "### {}\n", group_label(&task, n));
        let mut modes: Vec<&str> = models
            .iter()
            .flat_map(|(_, ms)| ms.iter().map(|(m, _)| m.as_str()))
            .collect();
        modes.sort_by(|a, b| mode_rank(a).cmp(&mode_rank(b)).then(a.cmp(b)));
        modes.dedup();

        // Correctness (Tables 1, 2, 7); JSON adds schema validity.
        let has_schema = models.iter().any(|(_, cells)| {
            cells
                .iter()
                .any(|(_, c)| c.all().any(|r| r.schema_ok.is_some()))
        });
        let dlm = !task.starts_with("mri-");
        let _ = write!(s, "| model | instances | seeds |");
        let metrics: &[&str] = if has_schema {
            &["syntax", "schema", "functional"]
        } else {
            &["syntax", "functional"]
        };
        for what in metrics {
            for m in &modes {
                let _ = write!(s, " {what} {} |", mode_label(m));
            }
        }
        let _ = writeln!(s);
        let _ = writeln!(
            s,
            "|---|---|---|{}",
            "---|".repeat(metrics.len() * modes.len())
        );
        for (model, cells) in &models {
            let get = |m: &str| cells.iter().find(|(k, _)| k == m).map(|(_, c)| c);
            let inst = cells.iter().map(|(_, c)| c.instances()).max().unwrap_or(0);
            let seeds = cells
                .iter()
                .map(|(_, c)| c.by_seed.len())
                .max()
                .unwrap_or(0);
            let _ = write!(s, "| {model} | {inst} | {seeds} |");
            for what in metrics {
                for m in &modes {
                    let cell = get(m).map_or("—".into(), |c| {
                        // A mode that never ran (every record an error,
                        // e.g. a prompt longer than the model's context)
                        // has no rate, not a rate of 0.
                        if c.all().all(|r| r.error.is_some()) {
                            return "error".into();
                        }
                        pct_cell(&c.rate(|r| match *what {
                            "syntax" => Some(r.syntax_ok && r.error.is_none()),
                            _ if r.error.is_some() => Some(false),
                            "schema" => r.schema_ok,
                            _ => r.functional_ok,
                        }))
                    });
                    let _ = write!(s, " {cell} |");
                }
            }
            let _ = writeln!(s);
        }
        let _ = writeln!(s);

        // Overhead and constraint statistics (Tables 3, 4); the DLM tasks
        // also per sample.
        let has_gxx = models.iter().any(|(_, cells)| {
            cells
                .iter()
                .any(|(_, c)| c.all().any(|r| r.gxx_syntax_ok.is_some()))
        });
        let judge_col = if has_schema {
            "schema"
        } else if has_gxx || !dlm {
            "g++ syntax"
        } else {
            ""
        };
        let _ = write!(s, "| model | mode |");
        if dlm {
            let _ = write!(
                s,
                " samples | model ms/sample | constraint ms/sample | total ms/sample |"
            );
        }
        let _ = write!(
            s,
            " tokens | model ms/token | constraint ms/token | overhead | rejections/run | from witness | gave up |"
        );
        if !judge_col.is_empty() {
            let _ = write!(s, " {judge_col} |");
        }
        let _ = writeln!(s, " functional | errors |");
        let ncols = 11 + if dlm { 4 } else { 0 } + usize::from(!judge_col.is_empty());
        let _ = writeln!(s, "|{}", "---|".repeat(ncols));
        for (model, cells) in &models {
            for (mode, c) in cells {
                let runs = c.count(|_| true);
                let tokens: usize = c.all().map(|r| r.tokens).sum();
                let ms_model: f64 = c.all().map(|r| r.ms_model).sum();
                let ms_con: f64 = c.all().map(|r| r.ms_constraint).sum();
                let ms_total: f64 = c.all().map(|r| r.ms_total).sum();
                let rej: usize = c.all().map(|r| r.rejections).sum();
                let per = |ms: f64| {
                    if tokens == 0 {
                        "—".to_string()
                    } else {
                        format!("{:.3}", ms / tokens as f64)
                    }
                };
                let overhead = if ms_model > 0.0 {
                    format!("{:.1} %", 100.0 * ms_con / ms_model)
                } else {
                    "—".into()
                };
                let count_of = |f: &dyn Fn(&Record) -> Option<bool>| {
                    let run = c.count(|r| f(r).is_some());
                    if run == 0 {
                        "—".to_string()
                    } else {
                        format!("{}/{run}", c.count(|r| f(r) == Some(true)))
                    }
                };
                let _ = write!(s, "| {model} | {mode} |");
                if dlm {
                    let n = runs.max(1) as f64;
                    let _ = write!(
                        s,
                        " {runs} | {:.1} | {:.1} | {:.1} |",
                        ms_model / n,
                        ms_con / n,
                        ms_total / n
                    );
                }
                let _ = write!(
                    s,
                    " {tokens} | {} | {} | {overhead} | {:.2} | {}/{runs} | {}/{runs} |",
                    per(ms_model),
                    per(ms_con),
                    rej as f64 / runs.max(1) as f64,
                    c.count(|r| r.used_witness),
                    c.count(|r| r.gave_up),
                );
                match judge_col {
                    "schema" => {
                        let _ = write!(s, " {} |", count_of(&|r| r.schema_ok));
                    }
                    "g++ syntax" => {
                        let _ = write!(s, " {} |", count_of(&|r| r.gxx_syntax_ok));
                    }
                    _ => {}
                }
                let _ = writeln!(
                    s,
                    " {} | {} |",
                    count_of(&|r| r.functional_ok),
                    c.count(|r| r.error.is_some()),
                );
            }
        }
        let _ = writeln!(s);

        if failures {
            for (model, cells) in &models {
                for (mode, c) in cells {
                    // instance → (seeds, first status)
                    let mut failed: Vec<(&str, Vec<u64>, String)> = Vec::new();
                    for r in c.all() {
                        let status = match (&r.error, r.functional_ok) {
                            (Some(e), _) => format!("error: {e}"),
                            (None, Some(false)) => r
                                .functional_status
                                .clone()
                                .unwrap_or_else(|| "failed".into()),
                            _ => continue,
                        };
                        match failed.iter_mut().find(|(id, _, _)| *id == r.instance_id) {
                            Some(f) => f.1.push(r.seed),
                            None => failed.push((&r.instance_id, vec![r.seed], status)),
                        }
                    }
                    if failed.is_empty() {
                        continue;
                    }
                    failed.sort_by(|a, b| natural_cmp(a.0, b.0));
                    let _ = writeln!(
                        s,
                        "Failed programs, {model}, {mode} ({} instances):\n",
                        failed.len()
                    );
                    for (id, mut seeds, status) in failed {
                        seeds.sort_unstable();
                        let seeds: Vec<String> = seeds.iter().map(u64::to_string).collect();
                        let _ = writeln!(
                            s,
                            "- {id} (seed {}): {}",
                            seeds.join(","),
                            status.replace('|', "\\|")
                        );
                    }
                    let _ = writeln!(s);
                }
            }
        }
    }
    s
}

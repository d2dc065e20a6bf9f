//! SVG plots of evaluation records (`cdiff eval report --plots DIR`).
//!
//! Two kinds, written as plain SVG (a grouped bar chart is a few rectangles
//! and labels; no plotting crate is needed for it):
//!
//! * `<task>[-<n>]-rates.svg`, one per (task, regions) group: for each
//!   model × mode, the syntax and functional rates in % (means over all
//!   records of the cell; the report's tables give the intervals);
//! * `overhead.svg`, for the multi-region tasks: the constraint's time as a
//!   share of the model's (`ms_constraint / ms_model`, %), per number of
//!   regions, one bar per model × constrained mode (the paper's Fig. 6);
//! * `grammar-size.svg`, for records that carry their grammar's size: the
//!   constraint's milliseconds per generated token against the number of
//!   productions of the normalized grammar, one point per grammar (each
//!   JSON schema is one; the SMILES and C++ tasks have one each), one
//!   series per model × constrained mode (the paper's Fig. 7).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::record::Record;
use crate::error::{Error, ErrorKind, Result};

/// The records of one (model, mode) in a group.
type Cell<'a> = ((String, String), Vec<&'a Record>);

/// One bar series of a grouped bar chart.
struct Series {
    name: String,
    color: &'static str,
    values: Vec<Option<f64>>,
}

const COLORS: &[&str] = &[
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Margins of the plot area: left, right, top, bottom.
const MARGINS: (f64, f64, f64, f64) = (60.0, 20.0, 40.0, 110.0);

/// The SVG header, white background and title of a `w` × `h` chart.
fn frame(s: &mut String, w: f64, h: f64, title: &str) {
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{}" y="22" text-anchor="middle" font-size="14">{}</text>"#,
        w / 2.0,
        esc(title)
    );
}

/// The y axis from 0 to `y_top` (grid lines and labels) of a plot area of
/// `pw` × `ph`, its label, and the x axis line.
fn y_axis(s: &mut String, pw: f64, ph: f64, y_top: f64, y_label: &str) {
    let (left, _, top, _) = MARGINS;
    for i in 0..=4 {
        let v = y_top * i as f64 / 4.0;
        let y = top + ph - ph * i as f64 / 4.0;
        let _ = writeln!(
            s,
            r##"<line x1="{left}" y1="{y}" x2="{}" y2="{y}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            left + pw,
            left - 6.0,
            y + 4.0,
            fmt_num(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="14" y="{}" transform="rotate(-90 14 {})" text-anchor="middle">{}</text>"#,
        top + ph / 2.0,
        top + ph / 2.0,
        esc(y_label)
    );
    let _ = writeln!(
        s,
        r##"<line x1="{left}" y1="{}" x2="{}" y2="{}" stroke="#333"/>"##,
        top + ph,
        left + pw,
        top + ph
    );
}

/// The legend (one swatch per series) along the bottom of a chart `h` high,
/// and the end of the SVG.
fn legend_and_end(s: &mut String, h: f64, series: &[(&str, &str)]) {
    for (k, (name, color)) in series.iter().enumerate() {
        let x = MARGINS.0 + 140.0 * k as f64;
        let y = h - 14.0;
        let _ = writeln!(
            s,
            r#"<rect x="{x}" y="{}" width="10" height="10" fill="{color}"/><text x="{}" y="{y}">{}</text>"#,
            y - 9.0,
            x + 14.0,
            esc(name)
        );
    }
    s.push_str("</svg>\n");
}

/// A grouped bar chart: one group per label, one bar per series; `None`
/// values draw no bar.
fn bar_chart(title: &str, y_label: &str, labels: &[String], series: &[Series]) -> String {
    // Wide enough for the groups, the legend and the title.
    let w = (120.0 + 90.0 * labels.len().max(1) as f64)
        .max(80.0 + 140.0 * series.len() as f64)
        .max(60.0 + 8.0 * title.chars().count() as f64);
    let h = 420.0;
    let (left, right, top, bottom) = MARGINS;
    let (pw, ph) = (w - left - right, h - top - bottom);
    let y_max = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .fold(0.0f64, f64::max)
        .max(1e-9);
    let y_top = nice_ceiling(y_max);
    let mut s = String::new();
    frame(&mut s, w, h, title);
    y_axis(&mut s, pw, ph, y_top, y_label);
    let group_w = pw / labels.len().max(1) as f64;
    let bar_w = (group_w * 0.8) / series.len().max(1) as f64;
    for (g, label) in labels.iter().enumerate() {
        let gx = left + group_w * g as f64 + group_w * 0.1;
        for (k, ser) in series.iter().enumerate() {
            let Some(v) = ser.values.get(g).copied().flatten() else {
                continue;
            };
            let bh = ph * (v / y_top).clamp(0.0, 1.0);
            let x = gx + bar_w * k as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{bh:.1}" fill="{}"><title>{}: {}</title></rect>"#,
                top + ph - bh,
                bar_w * 0.95,
                ser.color,
                esc(&ser.name),
                fmt_num(v)
            );
        }
        let lx = gx + group_w * 0.4;
        let ly = top + ph + 14.0;
        let _ = writeln!(
            s,
            r#"<text x="{lx:.1}" y="{ly:.1}" transform="rotate(30 {lx:.1} {ly:.1})">{}</text>"#,
            esc(label)
        );
    }
    let names: Vec<(&str, &str)> = series.iter().map(|x| (x.name.as_str(), x.color)).collect();
    legend_and_end(&mut s, h, &names);
    s
}

/// Per grammar: its productions, the constraint's milliseconds and the
/// tokens, summed over records.
type Sums = (usize, f64, usize);

/// One point series of a scatter chart.
struct Points {
    name: String,
    color: &'static str,
    /// `(x, y, what the point is)`.
    points: Vec<(f64, f64, String)>,
}

/// A scatter chart with linear axes from 0.
fn scatter_chart(title: &str, x_label: &str, y_label: &str, series: &[Points]) -> String {
    let w = 640.0f64.max(80.0 + 140.0 * series.len() as f64);
    let h = 420.0;
    let (left, right, top, bottom) = MARGINS;
    let (pw, ph) = (w - left - right, h - top - bottom);
    let all = || series.iter().flat_map(|s| s.points.iter());
    let x_top = nice_ceiling(all().map(|p| p.0).fold(0.0f64, f64::max).max(1e-9));
    let y_top = nice_ceiling(all().map(|p| p.1).fold(0.0f64, f64::max).max(1e-9));
    let mut s = String::new();
    frame(&mut s, w, h, title);
    y_axis(&mut s, pw, ph, y_top, y_label);
    for i in 0..=4 {
        let v = x_top * i as f64 / 4.0;
        let x = left + pw * i as f64 / 4.0;
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"#,
            top + ph + 16.0,
            fmt_num(v)
        );
    }
    let _ = writeln!(
        s,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        left + pw / 2.0,
        top + ph + 36.0,
        esc(x_label)
    );
    for ser in series {
        for (x, y, what) in &ser.points {
            let _ = writeln!(
                s,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{}" fill-opacity="0.7"><title>{}: {} ({}, {})</title></circle>"#,
                left + pw * (x / x_top).clamp(0.0, 1.0),
                top + ph - ph * (y / y_top).clamp(0.0, 1.0),
                ser.color,
                esc(&ser.name),
                esc(what),
                fmt_num(*x),
                fmt_num(*y)
            );
        }
    }
    let names: Vec<(&str, &str)> = series.iter().map(|x| (x.name.as_str(), x.color)).collect();
    legend_and_end(&mut s, h, &names);
    s
}

/// The smallest of 1, 2, 2.5, 5 × 10^k at or above `x`.
fn nice_ceiling(x: f64) -> f64 {
    let p = 10f64.powf(x.log10().floor());
    for m in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if m * p >= x {
            return m * p;
        }
    }
    10.0 * p
}

fn fmt_num(v: f64) -> String {
    if v >= 10.0 || v == 0.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The mean of `f` over the records where it is defined, in %.
fn rate(rs: &[&Record], f: impl Fn(&Record) -> Option<bool>) -> Option<f64> {
    let vals: Vec<bool> = rs.iter().filter_map(|r| f(r)).collect();
    (!vals.is_empty())
        .then(|| 100.0 * vals.iter().filter(|&&v| v).count() as f64 / vals.len() as f64)
}

/// Writes the plots of `records` into `dir` (created if needed) and returns
/// the files written.
///
/// # Errors
/// [`ErrorKind::Io`] when the folder or a file cannot be written.
pub fn write_plots(records: &[Record], dir: &Path) -> Result<Vec<PathBuf>> {
    let io = |p: &Path, e: std::io::Error| {
        Error::new(ErrorKind::Io, format!("cannot write {}: {e}", p.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut written = Vec::new();
    // (task, regions) -> (model, mode) -> records, in first-seen order of
    // models and the paper's order of modes.
    let mut groups: BTreeMap<(String, Option<usize>), Vec<Cell<'_>>> = BTreeMap::new();
    for r in records {
        let cells = groups.entry((r.task.clone(), r.number_spans)).or_default();
        let key = (r.model.clone(), r.mode.clone());
        match cells.iter_mut().find(|(k, _)| *k == key) {
            Some((_, rs)) => rs.push(r),
            None => cells.push((key, vec![r])),
        }
    }
    let mode_rank = |m: &str| {
        ["vanilla", "gp", "con-minus", "con"]
            .iter()
            .position(|x| *x == m)
    };
    for ((task, n), cells) in &mut groups {
        // A mode that never ran (every record an error) has no rate to
        // draw; the report says `error` for it.
        cells.retain(|(_, rs)| rs.iter().any(|r| r.error.is_none()));
        if cells.is_empty() {
            continue;
        }
        cells.sort_by_key(|((model, mode), _)| (model.clone(), mode_rank(mode)));
        let labels: Vec<String> = cells
            .iter()
            .map(|((m, mode), _)| format!("{m} {mode}"))
            .collect();
        let series = vec![
            Series {
                name: "syntax %".into(),
                color: COLORS[0],
                values: cells
                    .iter()
                    .map(|(_, rs)| rate(rs, |r| Some(r.syntax_ok)))
                    .collect(),
            },
            Series {
                name: "functional %".into(),
                color: COLORS[1],
                values: cells
                    .iter()
                    .map(|(_, rs)| rate(rs, |r| r.functional_ok))
                    .collect(),
            },
        ];
        let title = match n {
            Some(n) => format!("{task}, {n} region(s)"),
            None => task.clone(),
        };
        let file = dir.join(match n {
            Some(n) => format!("{task}-{n}-rates.svg"),
            None => format!("{task}-rates.svg"),
        });
        std::fs::write(&file, bar_chart(&title, "%", &labels, &series))
            .map_err(|e| io(&file, e))?;
        written.push(file);
    }
    // Overhead by number of regions, for the constrained modes of MRI.
    let mut by_cell: BTreeMap<(String, String), BTreeMap<usize, (f64, f64)>> = BTreeMap::new();
    for r in records {
        let Some(n) = r.number_spans else { continue };
        if r.mode == "vanilla" || r.mode == "gp" || r.model == "gold" {
            continue;
        }
        let e = by_cell
            .entry((r.model.clone(), r.mode.clone()))
            .or_default()
            .entry(n)
            .or_default();
        e.0 += r.ms_constraint;
        e.1 += r.ms_model;
    }
    if !by_cell.is_empty() {
        let mut ns: Vec<usize> = by_cell.values().flat_map(|m| m.keys().copied()).collect();
        ns.sort_unstable();
        ns.dedup();
        let labels: Vec<String> = ns.iter().map(|n| format!("{n} region(s)")).collect();
        let series: Vec<Series> = by_cell
            .iter()
            .enumerate()
            .map(|(i, ((model, mode), m))| Series {
                name: format!("{model} {mode}"),
                color: COLORS[i % COLORS.len()],
                values: ns
                    .iter()
                    .map(|n| {
                        m.get(n)
                            .filter(|(_, model_ms)| *model_ms > 0.0)
                            .map(|(c, model_ms)| 100.0 * c / model_ms)
                    })
                    .collect(),
            })
            .collect();
        let file = dir.join("overhead.svg");
        let chart = bar_chart(
            "constraint time / model time, by regions",
            "overhead %",
            &labels,
            &series,
        );
        std::fs::write(&file, chart).map_err(|e| io(&file, e))?;
        written.push(file);
    }
    // Overhead by grammar size (the paper's Fig. 7): per instance grammar
    // (each JSON schema is one), the constraint's milliseconds per token,
    // one series per model × constrained mode.
    let mut by_grammar: BTreeMap<(String, String), BTreeMap<(String, String), Sums>> =
        BTreeMap::new();
    for r in records {
        let Some(size) = r.grammar_productions else {
            continue;
        };
        if r.mode == "vanilla" || r.mode == "gp" || r.model == "gold" || r.error.is_some() {
            continue;
        }
        // SMILES and C++ instances share one grammar: one point per task.
        let which = if r.task == "json" {
            r.instance_id.clone()
        } else {
            r.task.clone()
        };
        let e = by_grammar
            .entry((r.model.clone(), r.mode.clone()))
            .or_default()
            .entry((r.task.clone(), which))
            .or_insert((size, 0.0, 0));
        e.1 += r.ms_constraint;
        e.2 += r.tokens;
    }
    if !by_grammar.is_empty() {
        let series: Vec<Points> = by_grammar
            .iter()
            .enumerate()
            .map(|(i, ((model, mode), m))| Points {
                name: format!("{model} {mode}"),
                color: COLORS[i % COLORS.len()],
                points: m
                    .iter()
                    .filter(|(_, (_, _, tokens))| *tokens > 0)
                    .map(|((_, what), &(size, ms, tokens))| {
                        (size as f64, ms / tokens as f64, what.clone())
                    })
                    .collect(),
            })
            .collect();
        let file = dir.join("grammar-size.svg");
        let chart = scatter_chart(
            "constraint time per token by grammar size",
            "productions of the normalized grammar",
            "constraint ms / token",
            &series,
        );
        std::fs::write(&file, chart).map_err(|e| io(&file, e))?;
        written.push(file);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(100.0), 100.0);
        assert_eq!(nice_ceiling(37.0), 50.0);
        assert_eq!(nice_ceiling(0.21), 0.25);
        assert_eq!(nice_ceiling(3.0), 5.0);
    }

    #[test]
    fn a_mode_that_never_ran_is_not_drawn() {
        let rec = |mode: &str, error: Option<&str>| -> Record {
            serde_json::from_value(serde_json::json!({
                "instance_id": "CPP/1_spans_1", "task": "mri-cpp", "model": "m",
                "mode": mode, "seed": 0, "number_spans": 1, "text": "",
                "syntax_ok": error.is_none(), "functional_ok": null, "tokens": 1,
                "ms_model": 1.0, "ms_constraint": 0.1, "rejections": 0,
                "used_witness": false, "gave_up": false, "error": error
            }))
            .unwrap()
        };
        let dir = std::env::temp_dir().join(format!("cdiff-plots-{}", std::process::id()));
        let rs = [rec("con", None), rec("gp", Some("prompt too long"))];
        let files = write_plots(&rs, &dir).unwrap();
        let rates = files
            .iter()
            .find(|f| f.ends_with("mri-cpp-1-rates.svg"))
            .unwrap();
        let svg = std::fs::read_to_string(rates).unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(svg.contains("m con"), "{svg}");
        assert!(!svg.contains("m gp"), "{svg}");
    }

    #[test]
    fn bars_are_drawn_to_scale() {
        let svg = bar_chart(
            "t <1>",
            "%",
            &["a".into(), "b".into()],
            &[Series {
                name: "s".into(),
                color: COLORS[0],
                values: vec![Some(100.0), Some(50.0)],
            }],
        );
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("t &lt;1&gt;"));
        // The 100 % bar spans the plot height (270), the 50 % one half.
        assert!(svg.contains(r#"height="270.0" fill"#), "{svg}");
        assert!(svg.contains(r#"height="135.0" fill"#), "{svg}");
    }
}

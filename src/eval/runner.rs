//! Running an evaluation's work items on several workers, and telling the
//! person at the terminal how far it is.
//!
//! A run is a list of items (in `cdiff eval run`, the instances of its
//! shard, each with its modes and seeds). [`for_each`] hands them to `jobs`
//! workers of a `rayon` thread pool; each worker makes its own state once
//! (a model with its caches: models are not shared between threads, they
//! mutate their caches as they run) and takes the next item not yet taken
//! until none is left. Every record is a function of its instance, mode and
//! seed only (the decoding seed mixes the run's seed with the instance id),
//! so a run with several workers writes the same records as one worker, in
//! the order they finish instead of the instances' order; the report sorts
//! them. Times per record (model, constraint) are measured while the
//! workers compete for the cores: compare timings from runs with one
//! worker.
//!
//! [`Progress`] is a bar with an ETA when standard error is a terminal, and
//! otherwise one line per record (what a log file wants).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind};

/// Runs `run(state, index, item)` for every item of `items` on `jobs`
/// workers (at least one), each with the state `init` made for it once.
/// With one worker everything runs on the calling thread, in order.
///
/// Stops taking items after the first error and returns it (of the errors
/// seen, the one of the earliest item).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// let sum = AtomicUsize::new(0);
/// cdiff::eval::runner::for_each(&[1usize, 2, 3, 4], 2, || Ok(()), |_, _, &x| {
///     sum.fetch_add(x, Ordering::Relaxed);
///     Ok::<(), cdiff::Error>(())
/// })?;
/// assert_eq!(sum.into_inner(), 10);
/// # Ok::<(), cdiff::Error>(())
/// ```
///
/// # Errors
/// The first error of `init` or `run`; a
/// [`ErrorKind::Setting`] error (converted into `E`) when the thread pool
/// cannot be built.
pub fn for_each<T, S, E>(
    items: &[T],
    jobs: usize,
    init: impl Fn() -> std::result::Result<S, E> + Sync,
    run: impl Fn(&mut S, usize, &T) -> std::result::Result<(), E> + Sync,
) -> std::result::Result<(), E>
where
    T: Sync,
    E: Send + From<Error>,
{
    let jobs = jobs.clamp(1, items.len().max(1));
    if jobs == 1 {
        let mut state = init()?;
        for (i, item) in items.iter().enumerate() {
            run(&mut state, i, item)?;
        }
        return Ok(());
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("cdiff-eval-{i}"))
        .build()
        .map_err(|e| {
            Error::new(
                ErrorKind::Setting,
                format!("cannot start {jobs} evaluation workers: {e}"),
            )
        })?;
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    // (item index, error): the earliest item's error wins.
    let failed: Mutex<Option<(usize, E)>> = Mutex::new(None);
    let fail = |at: usize, e: E| {
        stop.store(true, Ordering::Relaxed);
        let mut f = failed.lock().unwrap_or_else(|p| p.into_inner());
        if f.as_ref().is_none_or(|(i, _)| at < *i) {
            *f = Some((at, e));
        }
    };
    pool.scope(|s| {
        for _ in 0..jobs {
            s.spawn(|_| {
                let mut state = match init() {
                    Ok(st) => st,
                    Err(e) => return fail(0, e),
                };
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    if let Err(e) = run(&mut state, i, item) {
                        return fail(i, e);
                    }
                }
            });
        }
    });
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some((_, e)) => Err(e),
        None => Ok(()),
    }
}

/// Progress of a run of `total` records: a bar with an ETA on a terminal,
/// else a line per record; nothing when quiet. Shared by the workers.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    quiet: bool,
    total: usize,
    done: AtomicUsize,
    start: Instant,
}

impl Progress {
    /// Progress of `total` records, shown on standard error unless `quiet`
    /// (a bar when it is a terminal).
    pub fn new(total: usize, quiet: bool) -> Progress {
        use std::io::IsTerminal;
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "cdiff eval {bar:30} {pos}/{len} records, {elapsed} (ETA {eta}) {wide_msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
            bar.set_style(style);
            bar
        });
        Progress {
            bar,
            quiet,
            total,
            done: AtomicUsize::new(0),
            start: Instant::now(),
        }
    }

    /// One more record done, described by `line`.
    pub fn record(&self, line: &str) {
        let n = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) => {
                bar.set_message(line.to_string());
                bar.inc(1);
            }
            None => {
                let elapsed = self.start.elapsed();
                let left = self.total.saturating_sub(n) as f64 / n as f64;
                tracing_line(&format!(
                    "cdiff eval: [{n}/{}] {line}; ETA {}",
                    self.total,
                    fmt_duration(elapsed.mul_f64(left))
                ));
            }
        }
    }

    /// A warning, printed above the bar (also when quiet).
    pub fn warn(&self, message: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| tracing_line(message)),
            None => tracing_line(message),
        }
    }

    /// Removes the bar; the time since the run started.
    pub fn finish(&self) -> Duration {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.start.elapsed()
    }
}

/// A line on standard error (the command's own output channel for people).
fn tracing_line(s: &str) {
    eprintln!("{s}");
}

/// `d` as `1h02m`, `3m05s` or `4.2s`.
pub fn fmt_duration(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_runs_once_and_the_earliest_error_wins() {
        for jobs in [1, 2, 4, 9] {
            let items: Vec<usize> = (0..50).collect();
            let seen = Mutex::new(Vec::new());
            let inits = AtomicUsize::new(0);
            for_each::<_, _, Error>(
                &items,
                jobs,
                || {
                    inits.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                },
                |_, i, &x| {
                    assert_eq!(i, x);
                    seen.lock().unwrap().push(x);
                    Ok(())
                },
            )
            .unwrap();
            let mut seen = seen.into_inner().unwrap();
            seen.sort_unstable();
            assert_eq!(seen, items, "jobs {jobs}");
            assert!(inits.into_inner() <= jobs);
            let r = for_each::<_, _, Error>(
                &items,
                jobs,
                || Ok(()),
                |_, i, _| {
                    if i % 10 == 7 {
                        Err(Error::new(ErrorKind::Setting, format!("item {i}")))
                    } else {
                        Ok(())
                    }
                },
            );
            // With one worker the first failure stops the run; with more,
            // items after it may have started, but the earliest is named.
            assert_eq!(r.unwrap_err().message(), "item 7", "jobs {jobs}");
        }
        let none: [u8; 0] = [];
        for_each::<_, _, Error>(&none, 3, || Ok(()), |_, _, _| unreachable!()).unwrap();
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(fmt_duration(Duration::from_millis(4200)), "4.2s");
        assert_eq!(fmt_duration(Duration::from_secs(185)), "3m05s");
        assert_eq!(fmt_duration(Duration::from_secs(3720)), "1h02m");
    }
}

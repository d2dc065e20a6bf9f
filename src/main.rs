//! The `cdiff` command-line tool: a thin entry point. Argument parsing and
//! the commands live in the binary-private `cli` module; errors are mapped to
//! exit codes here (0: everything ran, 1: a benchmark found a wrong answer,
//! 2: bad input or a failed check).

mod cli;

/// Counts the bytes in use, so that `--max-memory` stops a search with an
/// error before the system runs out (see `cdiff::memory`).
#[global_allocator]
static ALLOC: cdiff::memory::CountingAlloc = cdiff::memory::CountingAlloc;

use std::process::ExitCode;

fn main() -> ExitCode {
    // Large blocks freed are kept for the next allocation instead of being
    // unmapped and faulted in again (a quarter of a decode's time).
    cdiff::memory::keep_freed_memory();
    // Before any thread: candle otherwise reads /proc/cpuinfo per product.
    #[cfg(feature = "models")]
    cdiff::model::pin_cpu_threads();
    match cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) if e.is_reported() => ExitCode::from(e.exit_code()),
        Err(e) => {
            eprintln!("cdiff: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

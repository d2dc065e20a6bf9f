//! Metrics of one output: syntax (cdiff's own recognizer, and `g++
//! -fsyntax-only` as an independent judge) and functional correctness
//! (compile with `g++ -std=c++17`, run, pass iff exit code 0).
//!
//! Every compiler and program run happens in a fresh temporary directory
//! that is removed afterwards, under a wall-clock limit: on timeout the
//! whole process group (the `g++` driver and its `cc1plus`, `as`, `ld`) is
//! killed. Programs run with standard output discarded, the standard input
//! closed and, where `sh` has `ulimit -v`, an address-space limit.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::error::{Error, ErrorKind, Result};
use crate::recognize::Recognizer;

/// Environment variable naming the C++ compiler (default: `g++` on `PATH`).
/// Set it to a path that does not exist to run as if there were none.
pub const GXX_VAR: &str = "CDIFF_GXX";

/// Whether `text` is in the grammar, by cdiff's independent recognizer (a
/// recognizer error, e.g. an exhausted budget, counts as not in it).
pub fn syntax_ok(recognizer: &Recognizer, text: &str) -> bool {
    recognizer.accepts(text.as_bytes()).unwrap_or(false)
}

/// Limits of a compile-and-run.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Wall-clock limit of the compiler.
    pub compile: Duration,
    /// Wall-clock limit of the program.
    pub run: Duration,
    /// Address-space limit of the program, in MiB (`None`: no limit).
    pub memory_mib: Option<u64>,
}

impl Default for Limits {
    /// 10 s to compile, 5 s to run, 4 GiB of address space.
    fn default() -> Limits {
        Limits {
            compile: Duration::from_secs(10),
            run: Duration::from_secs(5),
            memory_mib: Some(4096),
        }
    }
}

/// What happened to a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled, ran and exited with code 0.
    Pass,
    /// Compiled and ran, but exited with another code (`None`: killed by a
    /// signal, e.g. a failed `assert` aborts); the first line of its stderr.
    Fail {
        /// Exit code, if it exited.
        code: Option<i32>,
        /// First line of the program's standard error.
        stderr: String,
    },
    /// The compiler rejected it; its first error line.
    CompileError(String),
    /// The compiler ran past its limit.
    CompileTimeout,
    /// The program ran past its limit.
    RunTimeout,
}

impl Outcome {
    /// Whether the program passed its tests.
    pub fn passed(&self) -> bool {
        *self == Outcome::Pass
    }

    /// A short description for the records (`pass`, `exit 1: ...`,
    /// `signal: ...`, `compile error: ...`, `compile timeout`, `run timeout`).
    pub fn status(&self) -> String {
        match self {
            Outcome::Pass => "pass".into(),
            Outcome::Fail {
                code: Some(c),
                stderr,
            } => format!("exit {c}: {stderr}"),
            Outcome::Fail { code: None, stderr } => format!("signal: {stderr}"),
            Outcome::CompileError(m) => format!("compile error: {m}"),
            Outcome::CompileTimeout => "compile timeout".into(),
            Outcome::RunTimeout => "run timeout".into(),
        }
    }
}

/// A C++ compiler.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gxx {
    /// Path of the executable.
    pub path: PathBuf,
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("cdiff-eval-{}-{n}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn io_err(path: &Path, e: std::io::Error) -> Error {
    Error::new(ErrorKind::Io, format!("{}: {e}", path.display()))
}

/// Waits for `child` up to `limit`; on timeout kills its process group and
/// returns `None`.
fn wait_limited(child: &mut Child, limit: Duration) -> Result<Option<ExitStatus>> {
    let t0 = Instant::now();
    let mut nap = Duration::from_millis(1);
    loop {
        if let Some(st) = child
            .try_wait()
            .map_err(|e| Error::new(ErrorKind::Io, format!("waiting for a child: {e}")))?
        {
            return Ok(Some(st));
        }
        if t0.elapsed() >= limit {
            // The child leads its own process group: kill all of it.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status();
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(Duration::from_millis(20));
    }
}

/// Spawns `cmd` in its own process group with stdin closed, stdout
/// discarded and stderr into `err`.
fn spawn(cmd: &mut Command, err: &Path) -> Result<Child> {
    use std::os::unix::process::CommandExt;
    let f = std::fs::File::create(err).map_err(|e| io_err(err, e))?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(f))
        .process_group(0)
        .spawn()
        .map_err(|e| Error::new(ErrorKind::Io, format!("cannot run {cmd:?}: {e}")))
}

/// The first line of `path` that mentions an error (else its first
/// non-empty line), at most 200 characters.
fn first_error_line(path: &Path) -> String {
    let text = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let line = text
        .lines()
        .find(|l| l.contains("error"))
        .or_else(|| text.lines().find(|l| !l.trim().is_empty()))
        .unwrap_or("")
        .trim();
    line.chars().take(200).collect()
}

/// Extra link flags a HumanEval-X program needs: `-lcrypto` when it
/// includes OpenSSL (`CPP/162`, `md5`).
pub fn link_flags(program: &str) -> Vec<&'static str> {
    if program.contains("openssl/") {
        vec!["-lcrypto"]
    } else {
        Vec::new()
    }
}

impl Gxx {
    /// The compiler named by [`GXX_VAR`] if set (none when that path does
    /// not exist), else `g++` on `PATH`.
    pub fn find() -> Option<Gxx> {
        if let Some(v) = std::env::var_os(GXX_VAR).filter(|v| !v.is_empty()) {
            let p = PathBuf::from(v);
            let p = if p.components().count() == 1 {
                find_on_path(&p)?
            } else {
                p
            };
            return p.is_file().then_some(Gxx { path: p });
        }
        find_on_path(Path::new("g++")).map(|path| Gxx { path })
    }

    /// Whether `g++ -std=c++17 -fsyntax-only` accepts `program` (g++'s
    /// front end: parsing and semantic analysis, no code generation). A
    /// timeout counts as not accepted.
    ///
    /// # Errors
    /// [`ErrorKind::Io`]: the temporary directory or the compiler cannot be
    /// created or started.
    pub fn syntax_only(&self, program: &str, limit: Duration) -> Result<bool> {
        let dir = TempDir::new()?;
        let src = dir.0.join("prog.cpp");
        std::fs::write(&src, program).map_err(|e| io_err(&src, e))?;
        let mut child = spawn(
            Command::new(&self.path)
                .args(["-std=c++17", "-fsyntax-only", "prog.cpp"])
                .current_dir(&dir.0),
            &dir.0.join("cc.err"),
        )?;
        Ok(wait_limited(&mut child, limit)?.is_some_and(|s| s.success()))
    }

    /// Compiles `program` with `g++ -std=c++17` (plus [`link_flags`]) and
    /// runs it under `limits`.
    ///
    /// # Errors
    /// [`ErrorKind::Io`]: the temporary directory, the compiler or the
    /// program cannot be created or started.
    pub fn compile_and_run(&self, program: &str, limits: &Limits) -> Result<Outcome> {
        let dir = TempDir::new()?;
        let src = dir.0.join("prog.cpp");
        std::fs::write(&src, program).map_err(|e| io_err(&src, e))?;
        let cc_err = dir.0.join("cc.err");
        let mut child = spawn(
            Command::new(&self.path)
                .args(["-std=c++17", "prog.cpp", "-o", "prog"])
                .args(link_flags(program))
                .current_dir(&dir.0),
            &cc_err,
        )?;
        match wait_limited(&mut child, limits.compile)? {
            None => return Ok(Outcome::CompileTimeout),
            Some(s) if !s.success() => return Ok(Outcome::CompileError(first_error_line(&cc_err))),
            Some(_) => {}
        }
        let run_err = dir.0.join("run.err");
        let mut cmd = match limits.memory_mib {
            Some(mib) => {
                let mut c = Command::new("sh");
                c.arg("-c")
                    .arg(format!("ulimit -v {} 2>/dev/null; exec \"$0\"", mib * 1024))
                    .arg(dir.0.join("prog"));
                c
            }
            None => Command::new(dir.0.join("prog")),
        };
        let mut child = spawn(cmd.current_dir(&dir.0), &run_err)?;
        Ok(match wait_limited(&mut child, limits.run)? {
            None => Outcome::RunTimeout,
            Some(s) if s.success() => Outcome::Pass,
            Some(s) => Outcome::Fail {
                code: s.code(),
                stderr: first_error_line(&run_err),
            },
        })
    }
}

fn find_on_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

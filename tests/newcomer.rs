//! Regression tests for issue 17, "a newcomer's first hour": what a new user
//! following the README and `--help` ran into.

mod common;

use std::path::{Path, PathBuf};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

// Item 6: no machine paths.

/// The files under `dir` (recursively) that a reader or a script may open,
/// leaving out build outputs and git's own folder.
fn text_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        if p.is_dir() {
            if name != "target" && name != ".git" {
                text_files(&p, out);
            }
        } else if ["rs", "md", "py", "sh", "toml", "yml", "yaml"]
            .iter()
            .any(|x| p.extension().is_some_and(|e| e == *x))
            || p.parent().is_some_and(|d| d.ends_with(".ci"))
        {
            out.push(p);
        }
    }
}

#[test]
fn no_machine_paths_in_the_repository() {
    // Built from parts so that this file does not match itself.
    let needles: Vec<String> = ["work", "root", "home", "Users"]
        .iter()
        .map(|d| format!("/{d}/"))
        .collect();
    let mut files = Vec::new();
    text_files(Path::new(ROOT), &mut files);
    assert!(files.len() > 50, "{} files", files.len());
    let mut found = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for (i, line) in text.lines().enumerate() {
            if needles.iter().any(|n| line.contains(n.as_str())) {
                let rel = f.strip_prefix(ROOT).unwrap_or(f);
                found.push(format!("{}:{}: {}", rel.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "absolute machine paths (use CDIFF_SHARED / ../shared, or public sources):\n{}",
        found.join("\n")
    );
}

#[test]
fn shared_data_comes_from_cdiff_shared_or_beside_the_crate() {
    use common::shared::{dir, root_from, skip_message};
    assert_eq!(root_from(Some("/data/x".into())), PathBuf::from("/data/x"));
    let default = PathBuf::from(ROOT).join("../shared");
    assert_eq!(root_from(None), default);
    assert_eq!(root_from(Some("".into())), default);
    // An absent folder is a skip that says which test, which folder and how
    // to provide it.
    assert_eq!(dir("no-such-folder-for-this-test", "t"), None);
    let m = skip_message("t", Path::new("/x/y"));
    assert!(
        m.starts_with("skipped: t: /x/y is absent") && m.contains("CDIFF_SHARED"),
        "{m}"
    );
}

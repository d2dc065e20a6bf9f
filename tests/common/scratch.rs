//! A fresh scratch folder under the system temp dir, removed on drop.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A scratch folder named after the test and the process.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// Creates (or empties) `cdiff-<prefix>-<pid>-<name>` in the temp dir.
    pub fn new(prefix: &str, name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("cdiff-{prefix}-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Scratch(p)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The folder as a string (model loaders take `&str`).
    pub fn str(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

//! What an iteration did to the workspace, seen from outside the agent: whether files changed
//! and whether the plan changed. The spin guard and the upkeep reminder are decided from this,
//! so they work the same for every executor, including external agents tether cannot see into.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash as _, Hasher as _};
use std::path::Path;
use std::time::UNIX_EPOCH;

/// Directories never looked into: version control, tether's own state, build output and
/// dependencies, which change without the agent meaning to change the project.
const SKIPPED: &[&str] = &[
    ".git",
    ".tether",
    "target",
    "node_modules",
    ".venv",
    "__pycache__",
];

/// At most this many entries are looked at; a bigger tree is fingerprinted by its first ones.
const MAX_ENTRIES: usize = 200_000;

/// A fingerprint of the workspace's files (path, size, modification time), leaving out the
/// plan file and the skipped directories. Equal fingerprints mean no file changed.
pub fn fingerprint(root: &Path, plan: &Path) -> u64 {
    let mut hasher = DefaultHasher::new();
    let mut seen = 0usize;
    walk(root, root, plan, &mut hasher, &mut seen);
    hasher.finish()
}

fn walk(root: &Path, dir: &Path, plan: &Path, h: &mut DefaultHasher, seen: &mut usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for entry in entries {
        *seen += 1;
        if *seen > MAX_ENTRIES {
            return;
        }
        let path = entry.path();
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            let name = entry.file_name();
            if SKIPPED.iter().any(|s| name == *s) {
                continue;
            }
            walk(root, &path, plan, h, seen);
        } else if path != plan {
            path.strip_prefix(root).unwrap_or(&path).hash(h);
            meta.len().hash(h);
            meta.modified()
                .ok()
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map(|d| d.as_nanos())
                .hash(h);
        }
    }
}

/// A short stable hash of a text (the plan, a verify output).
pub fn text_hash(text: &str) -> u64 {
    let mut h = DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn a_written_file_changes_the_fingerprint_and_skipped_dirs_and_the_plan_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let plan = root.join("plan.md");
        std::fs::write(&plan, "# Plan\n").unwrap();
        std::fs::create_dir_all(root.join(".tether")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        let before = fingerprint(root, &plan);
        assert_eq!(before, fingerprint(root, &plan));

        std::fs::write(&plan, "# Plan: changed\n").unwrap();
        std::fs::write(root.join(".tether/x"), "state").unwrap();
        assert_eq!(before, fingerprint(root, &plan));

        std::fs::write(root.join("src/lib.rs"), "fn main() {}").unwrap();
        assert_ne!(before, fingerprint(root, &plan));
    }
}

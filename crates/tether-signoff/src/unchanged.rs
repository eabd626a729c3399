//! No re-check of nothing: a goal rejected on a workspace is not judged again on the same
//! workspace. A sign-off that is rejected (verify failed, or the judge said no) leaves a
//! fingerprint of the workspace and the contract; the next `complete_goal` of that goal compares
//! the workspace with it first and, when nothing changed, refuses at once — no verify, no model
//! call — saying which attempt saw this tree. An agent that loops on "done?" without working
//! costs nothing, and the loop's spin guard sees a turn that changed nothing.
//!
//! The fingerprint hashes every regular file under the workspace (path and content; files over
//! [`MAX_HASHED`] by size and modification time), leaving out `.tether/` and `.git/`, and the
//! plan with its `status:` lines, its `## Log` section and its blank lines left out — tether's
//! own writes after a reject. A judge that failed (no verdict) judged nothing, so it leaves no
//! fingerprint. It is bounded ([`MAX_FILES`], [`MAX_BYTES`]): a workspace past the
//! bounds gets no fingerprint, and every attempt is checked in full.

use std::fs;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::verify::hex_digest;

/// Files hashed at most; past it, no fingerprint.
pub const MAX_FILES: usize = 20_000;
/// Bytes read at most, all files together; past it, no fingerprint.
pub const MAX_BYTES: u64 = 256 * 1024 * 1024;
/// A file larger than this is fingerprinted by its size and modification time.
pub const MAX_HASHED: u64 = 4 * 1024 * 1024;

/// The most of a rejected attempt's record read (an attempt number and a hash).
const RECORD_BYTES: u64 = 4096;

/// Directories never looked into.
const SKIPPED: [&str; 2] = [".tether", ".git"];

/// The workspace at `root` (whose plan is `plan`) and the goal's contract, as one hash; `None`
/// past the bounds or on an unreadable directory.
pub(crate) fn fingerprint(root: &Path, plan: &Path, contract_hash: &str) -> Option<String> {
    let mut files = Vec::new();
    collect(root, root, &mut files)?;
    files.sort();
    let mut hash = Sha256::new();
    hash.update(contract_hash.as_bytes());
    let mut budget = MAX_BYTES;
    for rel in &files {
        let path = root.join(rel);
        hash.update(rel.to_string_lossy().as_bytes());
        hash.update([0]);
        if path == plan {
            // The plan through its one reader: bounded, regular files only, never blocking.
            let plan = tether_plan::file::read(&path).ok()?;
            hash.update(without_own_writes(plan.text()).as_bytes());
        } else {
            file_part(&path, &mut hash, &mut budget)?;
        }
        hash.update([0]);
    }
    Some(hex_digest(hash.finalize().as_slice()))
}

/// The regular files under `dir`, relative to `root`, skipping [`SKIPPED`] and symlinks.
fn collect(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) -> Option<()> {
    for entry in fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        let kind = entry.file_type().ok()?;
        let path = entry.path();
        if kind.is_dir() {
            if dir == root && SKIPPED.iter().any(|s| entry.file_name() == *s) {
                continue;
            }
            collect(root, &path, files)?;
        } else if kind.is_file() {
            if files.len() >= MAX_FILES {
                return None;
            }
            files.push(path.strip_prefix(root).ok()?.to_path_buf());
        }
    }
    Some(())
}

/// A file's content into `hash` (or its size and time when large), within `budget`.
fn file_part(path: &Path, hash: &mut Sha256, budget: &mut u64) -> Option<()> {
    let meta = fs::symlink_metadata(path).ok()?;
    if meta.len() > MAX_HASHED {
        let modified = meta
            .modified()
            .ok()?
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        hash.update(format!("{}:{}", meta.len(), modified.as_nanos()).as_bytes());
        return Some(());
    }
    *budget = budget.checked_sub(meta.len())?;
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    fs::File::open(path)
        .ok()?
        .take(MAX_HASHED)
        .read_to_end(&mut bytes)
        .ok()?;
    hash.update(&bytes);
    Some(())
}

/// The plan without what tether writes after a reject: `status:` lines and the `## Log`
/// section.
pub(crate) fn without_own_writes(plan: &str) -> String {
    let mut out = String::with_capacity(plan.len());
    let mut in_log = false;
    for line in plan.lines() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("## ") {
            in_log = trimmed == "## Log";
        }
        if in_log || trimmed.is_empty() || line.trim_start().starts_with("status:") {
            continue;
        }
        out.push_str(trimmed);
        out.push('\n');
    }
    out
}

/// Where the fingerprint of a goal's last rejected attempt is kept.
fn record_path(state_dir: &Path, goal_id: &str) -> PathBuf {
    let safe: String = goal_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state_dir
        .join("signoff")
        .join(format!("rejected-{safe}.fingerprint"))
}

/// The attempt a goal was last rejected at, if the workspace is as it was then.
pub(crate) fn rejected_on_same_tree(state_dir: &Path, goal_id: &str, now: &str) -> Option<u32> {
    let mut text = String::new();
    fs::File::open(record_path(state_dir, goal_id))
        .ok()?
        .take(RECORD_BYTES)
        .read_to_string(&mut text)
        .ok()?;
    let (attempt, fingerprint) = text.trim().split_once(' ')?;
    (fingerprint == now).then(|| attempt.parse().ok()).flatten()
}

/// Keeps the fingerprint of a rejected attempt (best effort: without it, the next attempt is
/// only checked in full).
pub(crate) fn remember_reject(state_dir: &Path, goal_id: &str, attempt: u32, fingerprint: &str) {
    let path = record_path(state_dir, goal_id);
    let written = path
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| fs::write(&path, format!("{attempt} {fingerprint}\n")));
    if let Err(e) = written {
        tracing::warn!(error = %e, path = %path.display(), "could not keep the rejected tree's fingerprint");
    }
}

/// Forgets it (the goal was signed off).
pub(crate) fn forget(state_dir: &Path, goal_id: &str) {
    let _ = fs::remove_file(record_path(state_dir, goal_id));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tethers_own_writes_to_the_plan_do_not_count() {
        let before = "## Goal: A\nstatus: active\ndone_when: x\n\n## Log\n- started\n";
        let after = "## Goal: A\nstatus: active\ndone_when: x\n\n## Log\n- started\n- rejected\n";
        assert_eq!(without_own_writes(before), without_own_writes(after));
        let edited = "## Goal: A\nstatus: done\ndone_when: x, and y\n\n## Log\n";
        assert_ne!(without_own_writes(before), without_own_writes(edited));
    }

    #[test]
    fn a_plan_of_gigabytes_gives_no_fingerprint_without_being_read() {
        let dir = tempfile::tempdir().unwrap();
        let plan = dir.path().join("plan.md");
        // A sparse file: six GiB of one line, no disk.
        fs::File::create(&plan).unwrap().set_len(6 << 30).unwrap();
        assert_eq!(fingerprint(dir.path(), &plan, "h"), None);
    }

    #[test]
    fn a_changed_file_changes_the_fingerprint_and_tethers_files_do_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let plan = root.join("plan.md");
        fs::write(&plan, "## Goal: A\nstatus: active\n").unwrap();
        fs::write(root.join("lib.rs"), "fn a() {}\n").unwrap();
        let first = fingerprint(root, &plan, "h1").unwrap();
        fs::create_dir_all(root.join(".tether/runs")).unwrap();
        fs::write(root.join(".tether/runs/log"), "noise").unwrap();
        fs::write(&plan, "## Goal: A\nstatus: active\n\n## Log\n- rejected\n").unwrap();
        assert_eq!(fingerprint(root, &plan, "h1").unwrap(), first);
        assert_ne!(
            fingerprint(root, &plan, "h2").unwrap(),
            first,
            "the contract counts"
        );
        fs::write(root.join("lib.rs"), "fn a() { 1; }\n").unwrap();
        assert_ne!(fingerprint(root, &plan, "h1").unwrap(), first);
        remember_reject(&root.join(".tether"), "a", 3, &first);
        assert_eq!(
            rejected_on_same_tree(&root.join(".tether"), "a", &first),
            Some(3)
        );
        assert_eq!(
            rejected_on_same_tree(&root.join(".tether"), "a", "other"),
            None
        );
        forget(&root.join(".tether"), "a");
        assert_eq!(
            rejected_on_same_tree(&root.join(".tether"), "a", &first),
            None
        );
    }
}

//! What a snapshot leaves out beyond the work tree's own `.gitignore` files, which git reads as
//! data: the files the person ignores everywhere (their global `core.excludesFile`), the
//! repository's `info/exclude`, and what the `.gitignore` files above the work tree ignore
//! everywhere beneath them (a workspace in a subdirectory of its repository). All are read in
//! process, bounded, and handed to git as one list of patterns (`--exclude-from`): git is never
//! pointed at the person's configuration or at a `.git` it would follow.
//!
//! Leaving a file out only ever makes fewer lines count as changed by a run (a stricter check).

use std::path::{Path, PathBuf};

use tokio_util::sync::CancellationToken;

use crate::{bounded, user};

/// The most read of any one ignore file.
const FILE_BYTES: u64 = 256 * 1024;
/// The most directories looked at above the work tree for its repository.
const ABOVE: usize = 64;

/// The patterns of the person's global ignore file, the repository's `info/exclude` (of
/// `git_dir` when given, else of the `.git` directory at its top) and the `.gitignore` files
/// above `work_tree` up to its repository's top (the nearest directory holding a `.git`), in
/// that order.
pub(crate) async fn patterns(
    work_tree: &Path,
    git_dir: Option<&Path>,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(global) = user::global_excludes_file(env_remove, cancel).await
        && let Some(bytes) = bounded::read(&global, FILE_BYTES, true)
    {
        section(&mut out, "the person's global excludes", &bytes);
    }
    let top = repository_top(work_tree);
    let dot_git = top.as_ref().map(|top| top.join(".git"));
    let git_dir = match (git_dir, &dot_git) {
        (Some(dir), _) => Some(dir.to_path_buf()),
        // Never through a `.git` file: only a directory there is read.
        (None, Some(dot_git)) => std::fs::symlink_metadata(dot_git)
            .is_ok_and(|m| m.is_dir())
            .then(|| dot_git.clone()),
        (None, None) => None,
    };
    if let Some(git_dir) = git_dir
        && let Some(bytes) = bounded::read(&git_dir.join("info/exclude"), FILE_BYTES, false)
    {
        section(&mut out, "the repository's info/exclude", &bytes);
    }
    let Some(top) = top else {
        return out;
    };
    for dir in work_tree.ancestors().skip(1) {
        if let Some(bytes) = bounded::read(&dir.join(".gitignore"), FILE_BYTES, false) {
            section(
                &mut out,
                "a .gitignore above the workspace",
                &everywhere(&bytes),
            );
        }
        if dir == top {
            break;
        }
    }
    out
}

/// The nearest of `work_tree` and the directories above it that holds a `.git` (a directory or
/// a file: only looked at, never followed).
fn repository_top(work_tree: &Path) -> Option<PathBuf> {
    work_tree
        .ancestors()
        .take(ABOVE)
        .find(|dir| std::fs::symlink_metadata(dir.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

fn section(out: &mut Vec<u8>, what: &str, bytes: &[u8]) {
    out.extend_from_slice(format!("# {what}\n").as_bytes());
    out.extend_from_slice(bytes);
    if !bytes.ends_with(b"\n") {
        out.push(b'\n');
    }
}

/// The patterns of a `.gitignore` that match at any depth beneath it (no slash but a trailing
/// one, or starting `**/`), which therefore mean the same beneath the work tree; the others
/// are anchored to that directory and are left out.
fn everywhere(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for line in bytes.split(|b| *b == b'\n') {
        let pattern = line.strip_prefix(b"!").unwrap_or(line);
        let body = pattern.strip_suffix(b"/").unwrap_or(pattern);
        let anywhere = !body.is_empty()
            && !line.starts_with(b"#")
            && (!body.contains(&b'/') || body.starts_with(b"**/"));
        if anywhere {
            out.extend_from_slice(line);
            out.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_patterns_that_match_at_any_depth_are_carried_down() {
        let gitignore = b"target/\n*.log\n/build\ndocs/out\n**/node_modules\n!keep.log\n# c\n\n";
        assert_eq!(
            String::from_utf8(everywhere(gitignore)).unwrap(),
            "target/\n*.log\n**/node_modules\n!keep.log\n"
        );
    }

    #[tokio::test]
    async fn the_repositorys_excludes_and_the_ignores_above_the_work_tree_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let top = dir.path();
        let ws = top.join("sub/ws");
        std::fs::create_dir_all(&ws).unwrap();
        std::fs::create_dir_all(top.join(".git/info")).unwrap();
        std::fs::write(top.join(".git/info/exclude"), "secret.txt\n").unwrap();
        std::fs::write(top.join(".gitignore"), "target/\n/ws/only-here\n").unwrap();
        std::fs::write(top.join("sub/.gitignore"), "*.tmp").unwrap();
        let got = patterns(&ws, None, &[], &CancellationToken::new()).await;
        let got = String::from_utf8(got).unwrap();
        assert!(got.contains("secret.txt\n"), "{got}");
        assert!(got.contains("target/\n"), "{got}");
        assert!(got.contains("*.tmp\n"), "{got}");
        assert!(!got.contains("only-here"), "{got}");
    }
}

//! A goal whose merge back conflicted is settled by its own agent: the run's branch is merged
//! into the goal's, in the goal's worktree, the conflicts left in its files; the goal is set
//! back to active there and a goal run of its own settles them (its prompt names the paths; only
//! a sign-off of that run counts, after verify and the judge again). Its sign-off commits the
//! settled merge on the goal's branch, whose merge back then holds no conflict. A path that
//! still holds a conflict marker once the goal is signed off again counts as another conflict.

use std::io::Read as _;
use std::path::Path;

use tether_plan::Status;
use tether_worktree::Worktree;

use crate::error::{Error, Result};

/// The most of a file read when looking for conflict markers.
const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// Gets goal `goal`'s worktree `tree` ready for its agent to settle: the integration branch
/// merged into it (the plan file settled, the other conflicts left in the files), and the goal
/// set back to active in its plan. The paths to settle — those the merge left in conflict, and
/// those of `before` that still hold a marker — or `None` when nothing is left to settle (the
/// merge went through, or was there already).
pub(super) async fn prepare(
    tree: &Worktree,
    integration: &str,
    (run, goal): (&tether_store::RunId, &str),
    how: &super::merge::Merging<'_>,
    before: &[String],
) -> Result<Option<Vec<String>>> {
    let merged = super::merge::merge_back(tree, integration, (run, goal), how).await?;
    let mut paths = match merged {
        tether_worktree::Merge::Conflict { paths } => paths,
        tether_worktree::Merge::Merged { .. } | tether_worktree::Merge::UpToDate => Vec::new(),
    };
    for left in with_markers(&tree.dir, before) {
        if !paths.contains(&left) {
            paths.push(left);
        }
    }
    if paths.is_empty() {
        return Ok(None);
    }
    reopen(tree, how.plan, goal)?;
    Ok(Some(paths))
}

/// Sets `goal` back to active in the plan file `plan` (relative to the worktree) of `tree`: it
/// was signed off on the goal's branch, and is worked on again.
pub(super) fn reopen(tree: &Worktree, plan: &str, goal: &str) -> Result<()> {
    tether_plan::file::patch(&tree.dir.join(plan), |doc| {
        doc.set_status(goal, Status::Active)
    })
    .map(drop)
    .map_err(Error::FleetPlan)
}

/// The paths of `paths` (relative to the worktree `dir`) whose files still hold a line git
/// writes to mark a conflict (`<<<<<<< ` or `>>>>>>> ` at its start). A path that is no
/// regular file (deleted, a link) holds none; one that cannot be read, or is larger than
/// tether reads, counts as holding one.
pub(super) fn with_markers(dir: &Path, paths: &[String]) -> Vec<String> {
    paths
        .iter()
        .filter(|p| marked(&dir.join(p)))
        .cloned()
        .collect()
}

fn marked(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => {}
        Ok(_) => return false,
        Err(e) => return e.kind() != std::io::ErrorKind::NotFound,
    }
    let Ok(file) = std::fs::File::open(path) else {
        return true;
    };
    let mut bytes = Vec::new();
    if file.take(MAX_BYTES + 1).read_to_end(&mut bytes).is_err() || bytes.len() as u64 > MAX_BYTES {
        return true;
    }
    bytes
        .split(|b| *b == b'\n')
        .any(|line| line.starts_with(b"<<<<<<< ") || line.starts_with(b">>>>>>> "))
}

#[cfg(test)]
mod tests {
    use super::with_markers;

    #[test]
    fn a_path_holding_a_conflict_marker_is_named_and_a_settled_or_deleted_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("left.txt"),
            "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> tether/r-1\n",
        )
        .unwrap();
        std::fs::write(root.join("settled.txt"), "b\nc\n").unwrap();
        // Markers of another kind of text, not at a line's start, are no conflict.
        std::fs::write(root.join("doc.md"), "=======\nsee <<<<<<< in git's docs\n").unwrap();
        let paths: Vec<String> = ["left.txt", "settled.txt", "doc.md", "gone.txt"]
            .map(str::to_owned)
            .to_vec();
        assert_eq!(with_markers(root, &paths), ["left.txt"]);
    }
}

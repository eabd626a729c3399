//! Merging a signed-off goal's branch into the run's integration branch, and the run's branch
//! into a goal's whose merge conflicted (for its agent to settle).

use tether_store::RunId;
use tether_worktree::{Merge, OnConflict, Worktree, goal_branch_name};

use crate::compose::launch::{Note, Settles};
use crate::error::Result;

/// Merges `goal`'s branch into the integration branch; a conflict undoes the merge.
pub(super) async fn merge(
    integration: &Worktree,
    run: &RunId,
    goal: &str,
    how: &Merging<'_>,
) -> Result<Merge> {
    let branch = goal_branch_name(run.as_str(), goal);
    let message = format!("tether: merge goal {goal}\n\nTether-Run: {run}\n");
    merge_into(integration, &branch, &message, how, OnConflict::Abort).await
}

/// Merges the integration branch into `goal`'s worktree `tree`; a conflict is left in its
/// files for its agent, the plan file settled already (the paths returned are the others).
pub(super) async fn merge_back(
    tree: &Worktree,
    integration: &str,
    (run, goal): (&RunId, &str),
    how: &Merging<'_>,
) -> Result<Merge> {
    let message = format!("tether: merge {integration} into goal {goal}\n\nTether-Run: {run}\n");
    merge_into(tree, integration, &message, how, OnConflict::Leave).await
}

/// Merges `branch` into `tree`. The plan file is settled by keeping both sides (each branch
/// signs its own goals off in it; the store holds who signed what off); when it alone
/// conflicts, the merge is committed. Any other conflict is dealt with as `left` says: undone
/// (every conflicting path named), or left in the files (the plan settled, the other paths
/// named).
async fn merge_into(
    tree: &Worktree,
    branch: &str,
    message: &str,
    how: &Merging<'_>,
    left: OnConflict,
) -> Result<Merge> {
    let merged = tree.merge(branch, message, OnConflict::Leave).await?;
    let Merge::Conflict { paths } = merged else {
        return Ok(merged);
    };
    let others: Vec<String> = paths.iter().filter(|p| *p != how.plan).cloned().collect();
    if !others.is_empty() && left == OnConflict::Abort {
        tree.abort_merge().await?;
        return Ok(Merge::Conflict { paths });
    }
    if others.len() < paths.len() {
        tree.keep_both(how.plan).await?;
    }
    if !others.is_empty() {
        return Ok(Merge::Conflict { paths: others });
    }
    let with = tether_worktree::Snapshotting {
        state_dir: how.state_dir,
        git: how.git,
        env_remove: how.env_remove,
    };
    match tree.commit(message, false, &with).await? {
        Some(commit) => Ok(Merge::Merged { commit }),
        None => Ok(Merge::UpToDate),
    }
}

/// What a merge needs to commit a settled plan: the plan file's path in the worktree, and how
/// tether builds a commit.
pub(super) struct Merging<'a> {
    pub(super) plan: &'a str,
    pub(super) state_dir: &'a std::path::Path,
    pub(super) git: tether_git::Confinement,
    pub(super) env_remove: &'a [String],
}

pub(super) trait Said {
    fn note(&self, goal: &str, integration: &Worktree, settles: Settles) -> Note;
}

impl Said for Merge {
    fn note(&self, goal: &str, integration: &Worktree, settles: Settles) -> Note {
        match self {
            Merge::Merged { commit } => Note::GoalMerged {
                goal: goal.to_owned(),
                branch: integration.branch.clone(),
                commit: commit.clone(),
            },
            Merge::UpToDate => Note::GoalMerged {
                goal: goal.to_owned(),
                branch: integration.branch.clone(),
                commit: String::new(),
            },
            Merge::Conflict { paths } => Note::MergeConflict {
                goal: goal.to_owned(),
                paths: paths.clone(),
                settles,
            },
        }
    }
}

//! Merging a signed-off goal's branch into the run's integration branch.

use tether_store::RunId;
use tether_worktree::{Merge, OnConflict, Worktree, goal_branch_name};

use crate::compose::launch::Note;
use crate::error::Result;

/// Merges `goal`'s branch into the integration branch. The plan file is settled by keeping
/// both sides (each branch signs its own goals off in it; the store holds who signed what off);
/// any other conflict undoes the merge.
pub(super) async fn merge(
    integration: &Worktree,
    run: &RunId,
    goal: &str,
    how: &Merging<'_>,
) -> Result<Merge> {
    let branch = goal_branch_name(run.as_str(), goal);
    let message = format!("tether: merge goal {goal}\n\nTether-Run: {run}\n");
    let merged = integration
        .merge(&branch, &message, OnConflict::Leave)
        .await?;
    let Merge::Conflict { paths } = &merged else {
        return Ok(merged);
    };
    if paths.iter().any(|p| *p != how.plan) {
        integration.abort_merge().await?;
        return Ok(merged);
    }
    integration.keep_both(how.plan).await?;
    let with = tether_worktree::Snapshotting {
        state_dir: how.state_dir,
        git: how.git,
        env_remove: how.env_remove,
    };
    match integration.commit(&message, false, &with).await? {
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
    fn note(&self, goal: &str, integration: &Worktree) -> Note;
}

impl Said for Merge {
    fn note(&self, goal: &str, integration: &Worktree) -> Note {
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
            },
        }
    }
}

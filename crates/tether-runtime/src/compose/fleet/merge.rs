//! Merging a signed-off goal's branch into the run's integration branch, and the run's branch
//! into a goal's whose merge conflicted (for its agent to settle); the coordinator's merge step
//! (the merged goal's worktree removed and every merged goal's verify run again, or the
//! conflict counted).

use std::time::Instant;

use tether_core::fleet::Step;
use tether_store::RunId;
use tether_worktree::{Merge, OnConflict, Worktree, goal_branch_name};

use super::{Coordinator, goal_run_name, millis, remote};
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

impl Coordinator {
    /// How a merge of this run commits.
    pub(super) fn merging<'m>(
        &'m self,
        env_remove: &'m [String],
        state_dir: &'m std::path::Path,
    ) -> Merging<'m> {
        Merging {
            plan: &self.plan_rel,
            state_dir,
            git: crate::compose::worktree::git_of(&self.launch.config),
            env_remove,
        }
    }

    /// Merges `goal` back; once merged, the verify of every goal merged so far runs again.
    pub(super) async fn merge(
        &mut self,
        goal: &str,
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        let (env_remove, state_dir) = (self.launch.config.key_vars(), self.launch.ws.state_dir());
        let how = self.merging(&env_remove, &state_dir);
        let began = Instant::now();
        let merged = merge(&self.tree, &self.run, goal, &how).await?;
        let git = began.elapsed();
        match merged {
            Merge::Merged { .. } | Merge::UpToDate => {
                self.launch
                    .observer
                    .note(merged.note(goal, &self.tree, Settles::Agent));
                self.schedule.merged(goal);
                self.merged.push(goal.to_owned());
                self.conflicts.remove(goal);
                self.tidy(goal).await;
                let checking = Instant::now();
                self.regression = self.recheck.after(goal, &self.merged).await;
                let recheck = checking.elapsed();
                let pushing = Instant::now();
                if let (Some(url), None) = (&self.remote, &self.regression) {
                    remote::push(self.repo.git_dir(), url, &self.tree.branch).await?;
                }
                tracing::info!(
                    goal,
                    git_ms = millis(git),
                    recheck_ms = millis(recheck),
                    push_ms = millis(pushing.elapsed()),
                    "goal merged"
                );
            }
            Merge::Conflict { paths } => self.conflicted(goal, paths, runtime),
        }
        Ok(())
    }

    /// `goal`'s merge conflicted in `paths`: its agent settles it when a place is free, or, at
    /// the `merge_attempts`th conflict, a person is asked.
    pub(super) fn conflicted(
        &mut self,
        goal: &str,
        paths: Vec<String>,
        runtime: &tokio::runtime::Handle,
    ) {
        let ask = self.schedule.conflicted(goal);
        let settles = if ask.is_some() {
            Settles::Person
        } else {
            Settles::Agent
        };
        let conflict = Merge::Conflict { paths };
        self.launch
            .observer
            .note(conflict.note(goal, &self.tree, settles));
        let Merge::Conflict { paths } = conflict else {
            return;
        };
        self.conflicts.insert(goal.to_owned(), paths);
        if let Some(Step::AskPerson(goal)) = ask {
            self.ask_person(&goal, runtime);
        }
    }

    /// Removes the worktree of `goal`, merged: its branch keeps its work. A worktree that
    /// cannot be removed stays (`tether worktree` lists it), said in the log.
    pub(super) async fn tidy(&mut self, goal: &str) {
        let Some(tree) = self.trees.remove(goal) else {
            return;
        };
        let (id, dir) = (goal_run_name(&self.run, goal), tree.dir);
        if let Err(e) = self.repo.remove(&id, &dir, false).await {
            tracing::warn!(goal, dir = %dir.display(), "could not remove the goal's worktree: {e}");
        }
    }
}

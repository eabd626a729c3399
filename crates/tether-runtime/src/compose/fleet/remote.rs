//! A run of many goals whose goals work on other machines (`tether run --parallel N
//! --workers`): the coordinator's side of it. The run's integration branch, holding the plan and
//! `tether.toml` the goals keep to, is pushed to the repository's shared remote; a goal the
//! schedule starts is offered in the store (`ready`) for a worker (`tether worker`) to claim,
//! and a goal whose merge conflicted is offered to be settled (`conflicted`); the store is read
//! every half second for the goals workers report — a goal signed off has its branch fetched
//! from the remote and merged as any other, a goal ended ends, a conflict a worker could not
//! settle (`needs_person`) counts as another conflict — and after every merge the integration
//! branch is pushed again, so the next goals are cut from it.

use std::path::Path;
use std::time::Duration;

use tether_git::remote::Exchange;
use tether_store::{GoalState, RunId};
use tether_worktree::{Repo, Worktree, goal_branch_name};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// How often the coordinator reads what the workers reported.
pub(super) const COLLECT: Duration = Duration::from_millis(500);

/// What a worker reported of a goal the coordinator offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reported {
    /// Signed off, its branch pushed: it merges.
    SignedOff,
    /// It ended without a sign-off.
    Ended,
    /// Its worker could not settle its conflicting merge (it put the goal back as one a person
    /// or another attempt settles).
    Unsettled,
}

/// The repository's shared remote named `remote`: a remote of the repository (`origin`), or a
/// URL (with `/` or `:` in it) as it is.
pub async fn remote_url(repo: &Repo, remote: &str) -> Result<String> {
    if remote.contains('/') || remote.contains(':') {
        return Ok(remote.to_owned());
    }
    repo.remote_url(remote)
        .await?
        .ok_or_else(|| Error::NoRemote {
            name: remote.to_owned(),
        })
}

/// Commits what the integration worktree holds that its branch does not (the plan file and
/// `tether.toml`, copied in from the checkout), so the workers' goals keep to them; then pushes
/// the branch.
pub(super) async fn publish(
    repo: &Repo,
    tree: &Worktree,
    url: &str,
    with: &tether_worktree::Snapshotting<'_>,
) -> Result<()> {
    let message = format!(
        "tether: the plan and configuration of run {}\n\nTether-Run: {}\n",
        tree.run_id, tree.run_id
    );
    tree.commit(&message, false, with).await?;
    push(repo.git_dir(), url, &tree.branch).await
}

/// Pushes `branch` (a short name) to the remote, a fast-forward only.
pub(super) async fn push(git_dir: &Path, url: &str, branch: &str) -> Result<()> {
    let refspecs = [format!("refs/heads/{branch}:refs/heads/{branch}")];
    let out = Exchange::Push {
        git_dir,
        url,
        refspecs: &refspecs,
    }
    .run(&[], &CancellationToken::new())
    .await?;
    exchanged(&out, "push")
}

/// Fetches the branch goal `goal`'s worker pushed into the repository's branch of that name
/// (replacing what it held: the worker's is the goal's work).
pub(super) async fn fetch_goal(
    git_dir: &Path,
    url: &str,
    (run, goal): (&RunId, &str),
) -> Result<()> {
    let branch = goal_branch_name(run.as_str(), goal);
    let refspecs = [format!("+refs/heads/{branch}:refs/heads/{branch}")];
    let out = Exchange::Fetch {
        git_dir,
        url,
        refspecs: &refspecs,
    }
    .run(&[], &CancellationToken::new())
    .await?;
    exchanged(&out, "fetch")
}

/// What the workers reported of the goals `offered`, as the store says now.
pub(super) fn reported(
    fleet: &tether_store::Fleet,
    offered: &std::collections::HashSet<String>,
) -> Vec<(String, Reported)> {
    fleet
        .goals
        .iter()
        .filter(|g| offered.contains(&g.goal_id))
        .filter_map(|g| match g.state {
            GoalState::SignedOff => Some((g.goal_id.clone(), Reported::SignedOff)),
            GoalState::Ended => Some((g.goal_id.clone(), Reported::Ended)),
            GoalState::NeedsPerson => Some((g.goal_id.clone(), Reported::Unsettled)),
            _ => None,
        })
        .collect()
}

/// Nothing when git's exchange `what` (`clone`, `fetch`, `push`) went through; else what git said.
pub(super) fn exchanged(out: &tether_git::GitOutput, what: &str) -> Result<()> {
    if out.ok() {
        return Ok(());
    }
    Err(Error::Remote {
        what: what.to_owned(),
        stderr: out.stderr.trim().to_owned(),
    })
}

impl super::Coordinator {
    /// Takes in what the workers reported of the goals offered to them: a goal signed off has
    /// its branch fetched from the remote (its merge comes), a goal ended ends.
    pub(super) async fn collect(&mut self, runtime: &tokio::runtime::Handle) -> Result<()> {
        let Some(url) = self.remote.clone() else {
            return Ok(());
        };
        let fleet = self.record.journal().store().fleet(&self.run)?;
        for (goal, reported) in reported(&fleet, &self.offered) {
            self.offered.remove(&goal);
            match reported {
                Reported::SignedOff => {
                    let began = std::time::Instant::now();
                    fetch_goal(self.repo.git_dir(), &url, (&self.run, &goal)).await?;
                    tracing::info!(
                        goal,
                        fetch_ms = super::millis(began.elapsed()),
                        "goal fetched"
                    );
                    self.schedule.signed_off(&goal);
                }
                Reported::Ended => self.schedule.ended(&goal),
                // Its worker could not settle its conflict: another conflict of the goal.
                Reported::Unsettled => {
                    let paths = self.conflicts.get(&goal).cloned().unwrap_or_default();
                    self.conflicted(&goal, paths, runtime);
                }
            }
        }
        Ok(())
    }
}

//! Many goals of one run at once: each goal works in a worktree of its own on a branch cut from
//! the run's integration branch (`tether/<run-id>`), and a signed-off goal's branch is merged
//! back into it.
//!
//! A merge runs `git merge` in the worktree of the branch merged into, through `tether-git` as
//! every git command here (the configuration neutralised: no hook, driver or filter of anyone's
//! runs; bounded in time; in a sandbox writing only the objects, that branch and the worktree).
//! It reads only commits, which tether made from the agents' files, never a file an agent can
//! still change. On a conflict the merge is either undone (`git merge --abort`: the branch as it
//! was, [`OnConflict::Abort`]) or left in the worktree with its conflict markers for that
//! worktree's agent to settle ([`OnConflict::Leave`]: the integration branch merged into a
//! goal's branch); either way the conflicting paths are named. The settled files are committed
//! as any signed-off work is ([`Worktree::commit`]), as a merge: its second parent is the
//! branch being merged.

use std::path::Path;

use tether_git::{ObjectId, Writes};
use tokio_util::sync::CancellationToken;

use crate::WorktreeError;
use crate::git::{command, git};
use crate::repo::{Repo, Worktree};

/// The most of `MERGE_HEAD` read (one object id per merged branch).
const MERGE_HEAD_BYTES: u64 = 4096;

/// The branch of goal `goal_id` of run `run_id`: `tether/<run-id>-<goal-id>` (beside the run's
/// own `tether/<run-id>`, which git could not hold as a directory of refs too).
pub fn goal_branch_name(run_id: &str, goal_id: &str) -> String {
    format!("tether/{run_id}-{goal_id}")
}

/// What a merge did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Merge {
    /// The branch was merged: the merge commit (or the commit the branch moved to).
    Merged {
        /// The branch's new head.
        commit: String,
    },
    /// Everything of the other branch was in this one already: nothing changed.
    UpToDate,
    /// The two branches change the same lines.
    Conflict {
        /// The paths in conflict.
        paths: Vec<String>,
    },
}

/// What a conflicting merge leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Nothing: the merge is undone and the branch is as it was.
    Abort,
    /// The merge in progress, with conflict markers in the worktree's files, for its agent.
    Leave,
}

impl Repo {
    /// A new branch for goal `goal_id` of run `run_id` cut from the branch `from` (the run's
    /// integration branch) and a locked worktree for it at `dir`.
    pub async fn create_goal(
        &self,
        run_id: &str,
        goal_id: &str,
        from: &str,
        dir: &Path,
    ) -> Result<Worktree, WorktreeError> {
        let branch = goal_branch_name(run_id, goal_id);
        self.create_on(run_id, &branch, from, dir).await
    }

    /// The worktree of goal `goal_id` of run `run_id` at `dir` again (a run of many goals taken
    /// up again): as it is, or made again from the goal's branch; locked either way.
    pub async fn reopen_goal(
        &self,
        run_id: &str,
        goal_id: &str,
        dir: &Path,
    ) -> Result<Worktree, WorktreeError> {
        self.reopen_on(run_id, goal_branch_name(run_id, goal_id), dir)
            .await
    }
}

impl Worktree {
    /// Merges `branch` into this worktree's branch with a merge commit saying `message`
    /// (always a merge commit, so the history shows each goal's work as one); a conflict is
    /// dealt with as `on_conflict` says.
    pub async fn merge(
        &self,
        branch: &str,
        message: &str,
        on_conflict: OnConflict,
    ) -> Result<Merge, WorktreeError> {
        let before = self.head().await?;
        let (name, email) = self.identity().await?;
        let cmd = command(
            &self.dir,
            &[
                "merge",
                "--no-ff",
                "--no-edit",
                "--quiet",
                "-m",
                message,
                branch,
            ],
        )
        .config("user.name", name)
        .config("user.email", email)
        .writes(self.writes());
        let out = self.git.run(&cmd, &CancellationToken::new()).await?;
        if out.ok() {
            let after = self.head().await?;
            return Ok(if after == before {
                Merge::UpToDate
            } else {
                Merge::Merged { commit: after }
            });
        }
        let paths = self.conflicts().await?;
        if paths.is_empty() {
            // Not a conflict: git refused for another reason (an unknown branch).
            return Err(WorktreeError::Git {
                what: cmd.describe(),
                stderr: out.stderr.trim().to_owned(),
            });
        }
        if on_conflict == OnConflict::Abort {
            self.abort_merge().await?;
        }
        Ok(Merge::Conflict { paths })
    }

    /// Settles the conflicts of `path` (relative to the worktree) in the merge in progress by
    /// keeping both sides' lines (`git merge-file --union` of its three versions): for a file
    /// that only grows by sections and lines of its own on each branch (the plan, whose goals
    /// each branch signs off apart). The worktree's file is rewritten; git's index is left to
    /// the commit that follows ([`Worktree::commit`]).
    pub async fn keep_both(&self, path: &str) -> Result<(), WorktreeError> {
        let scratch = tempfile::tempdir().map_err(WorktreeError::Spawn)?;
        let mut sides = Vec::new();
        for (stage, name) in [(2, "ours"), (1, "base"), (3, "theirs")] {
            let text = git(&self.git, &self.dir, &["show", &format!(":{stage}:{path}")])
                .await
                .unwrap_or_default();
            let file = scratch.path().join(name);
            std::fs::write(&file, text).map_err(WorktreeError::Spawn)?;
            sides.push(file.display().to_string());
        }
        let mut args = vec!["merge-file", "-p", "--union"];
        args.extend(sides.iter().map(String::as_str));
        let cmd = command(&self.dir, &args).scratch(scratch.path());
        let out = self.git.run(&cmd, &CancellationToken::new()).await?;
        std::fs::write(self.dir.join(path), out.stdout).map_err(WorktreeError::Spawn)
    }

    /// Undoes the merge in progress: the branch and its files as they were.
    pub async fn abort_merge(&self) -> Result<(), WorktreeError> {
        let abort = command(&self.dir, &["merge", "--abort"]).writes(self.writes());
        crate::git::git_with(&self.git, &abort).await.map(drop)
    }

    /// The head of the branch a merge in progress merges (`MERGE_HEAD`, in the worktree's own
    /// git directory, which tether knows and no agent writes), if one is in progress.
    pub(crate) fn merging(&self) -> Result<Option<ObjectId>, WorktreeError> {
        use std::io::Read as _;
        let path = self.git.git_dir.join("MERGE_HEAD");
        let file = match std::fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(WorktreeError::Spawn(e)),
        };
        let mut text = String::new();
        file.take(MERGE_HEAD_BYTES)
            .read_to_string(&mut text)
            .map_err(WorktreeError::Spawn)?;
        let first = text.lines().next().unwrap_or("").trim();
        ObjectId::parse(first)
            .map(Some)
            .ok_or_else(|| WorktreeError::Git {
                what: "reading MERGE_HEAD".to_owned(),
                stderr: format!("not an object id: {first}"),
            })
    }

    /// Ends a merge in progress whose result was committed: git forgets it, files and index
    /// as they are.
    pub(crate) async fn forget_merge(&self) -> Result<(), WorktreeError> {
        let quit = command(&self.dir, &["merge", "--quit"]).writes(self.writes());
        crate::git::git_with(&self.git, &quit).await.map(drop)
    }

    /// The commit the worktree's branch points at.
    pub async fn head(&self) -> Result<String, WorktreeError> {
        let out = git(
            &self.git,
            &self.dir,
            &["rev-parse", "--verify", "HEAD^{commit}"],
        )
        .await?;
        Ok(out.trim().to_owned())
    }

    /// The paths a merge in progress left in conflict.
    async fn conflicts(&self) -> Result<Vec<String>, WorktreeError> {
        let out = git(
            &self.git,
            &self.dir,
            &["diff", "--name-only", "--diff-filter=U", "-z"],
        )
        .await?;
        Ok(out
            .split('\0')
            .filter(|p| !p.is_empty())
            .map(str::to_owned)
            .collect())
    }

    /// What a merge in this worktree writes: the objects, its branch and its log, its own git
    /// directory and its files.
    fn writes(&self) -> Writes {
        Writes::Commit(format!("refs/heads/{}", self.branch))
    }
}

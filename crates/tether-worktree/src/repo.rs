//! The repository, its tether worktrees, and the commit per signed-off goal.

use std::path::{Path, PathBuf};

use crate::WorktreeError;
use crate::git::{git, git_ok, git_with};

/// The branch of run `run_id`: `tether/<run-id>`.
pub fn branch_name(run_id: &str) -> String {
    format!("tether/{run_id}")
}

/// A git repository with at least one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    toplevel: PathBuf,
}

/// A run's worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worktree {
    /// Its directory.
    pub dir: PathBuf,
    /// Its branch (`tether/<run-id>`).
    pub branch: String,
    /// The run.
    pub run_id: String,
}

/// One worktree as `git worktree list` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeInfo {
    /// Its directory.
    pub dir: PathBuf,
    /// The commit checked out.
    pub head: String,
    /// The branch checked out (short name), if any.
    pub branch: Option<String>,
    /// Why it is locked, if it is.
    pub locked: Option<String>,
}

impl WorktreeInfo {
    /// The run this worktree belongs to, when it is one of tether's.
    pub fn run_id(&self) -> Option<&str> {
        self.branch.as_deref()?.strip_prefix("tether/")
    }
}

impl Repo {
    /// The repository `dir` is in; refused when it is none or has no commit yet.
    pub async fn discover(dir: &Path) -> Result<Repo, WorktreeError> {
        let not_a_repo = |detail: String| WorktreeError::NotARepo {
            dir: dir.to_path_buf(),
            detail,
        };
        let top = git(dir, &["rev-parse", "--show-toplevel"])
            .await
            .map_err(|e| not_a_repo(e.to_string()))?;
        if !git_ok(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).await? {
            return Err(not_a_repo("the repository has no commit yet".to_owned()));
        }
        Ok(Repo {
            toplevel: PathBuf::from(top.trim()),
        })
    }

    /// The checkout's top directory.
    pub fn toplevel(&self) -> &Path {
        &self.toplevel
    }

    /// A new branch `tether/<run-id>` from `HEAD` and a locked worktree for it at `dir`.
    pub async fn create(&self, run_id: &str, dir: &Path) -> Result<Worktree, WorktreeError> {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(WorktreeError::Spawn)?;
        }
        let branch = branch_name(run_id);
        let path = path_arg(dir)?;
        let _held = exclusive(dir).await?;
        git(
            &self.toplevel,
            &["worktree", "add", "--quiet", "-b", &branch, path, "HEAD"],
        )
        .await?;
        let tree = Worktree {
            dir: dir.to_path_buf(),
            branch,
            run_id: run_id.to_owned(),
        };
        self.lock(&tree).await?;
        Ok(tree)
    }

    /// The run's worktree at `dir` again: as it is when it is there, made again from the
    /// run's branch when the directory was removed; locked either way.
    pub async fn reopen(&self, run_id: &str, dir: &Path) -> Result<Worktree, WorktreeError> {
        let branch = branch_name(run_id);
        let tree = Worktree {
            dir: dir.to_path_buf(),
            branch: branch.clone(),
            run_id: run_id.to_owned(),
        };
        let listed = self.list().await?;
        let present = listed
            .iter()
            .any(|w| w.branch.as_deref() == Some(branch.as_str()) && w.dir.is_dir());
        if !present {
            let reference = format!("refs/heads/{branch}");
            if !git_ok(
                &self.toplevel,
                &["show-ref", "--verify", "--quiet", &reference],
            )
            .await?
            {
                return Err(WorktreeError::NoBranch { branch });
            }
            let _held = exclusive(dir).await?;
            // A directory removed by hand leaves git's record of it behind.
            let _ = git(&self.toplevel, &["worktree", "unlock", path_arg(dir)?]).await;
            git(&self.toplevel, &["worktree", "prune"]).await?;
            if let Some(parent) = dir.parent() {
                std::fs::create_dir_all(parent).map_err(WorktreeError::Spawn)?;
            }
            git(
                &self.toplevel,
                &["worktree", "add", "--quiet", path_arg(dir)?, &branch],
            )
            .await?;
        }
        self.lock(&tree).await?;
        Ok(tree)
    }

    async fn lock(&self, tree: &Worktree) -> Result<(), WorktreeError> {
        let reason = format!("tether run {}", tree.run_id);
        let path = path_arg(&tree.dir)?;
        if !git_ok(
            &self.toplevel,
            &["worktree", "lock", "--reason", &reason, path],
        )
        .await?
        {
            // Already locked (a resumed run): fine when it is locked at all.
            let locked = self
                .list()
                .await?
                .into_iter()
                .any(|w| w.dir == tree.dir && w.locked.is_some());
            if !locked {
                return Err(WorktreeError::Git {
                    what: format!("worktree lock {path}"),
                    stderr: "could not lock the worktree".to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Every worktree of the repository (the checkout itself first).
    pub async fn list(&self) -> Result<Vec<WorktreeInfo>, WorktreeError> {
        let out = git(&self.toplevel, &["worktree", "list", "--porcelain"]).await?;
        Ok(parse_list(&out))
    }

    /// Removes the run's worktree (its branch stays: the work is kept). Refused when `live`.
    pub async fn remove(&self, run_id: &str, dir: &Path, live: bool) -> Result<(), WorktreeError> {
        if live {
            return Err(WorktreeError::Live {
                run: run_id.to_owned(),
            });
        }
        let path = path_arg(dir)?;
        let _ = git(&self.toplevel, &["worktree", "unlock", path]).await;
        if dir.exists() {
            git(&self.toplevel, &["worktree", "remove", "--force", path]).await?;
        } else {
            git(&self.toplevel, &["worktree", "prune"]).await?;
        }
        Ok(())
    }
}

impl Worktree {
    /// Commits every change of the worktree on its branch with `message`; `None` when nothing
    /// changed. Git hooks run only when `hooks`. The author is the user's git identity, or
    /// `tether <tether@localhost>` when none is configured.
    pub async fn commit(
        &self,
        message: &str,
        hooks: bool,
    ) -> Result<Option<String>, WorktreeError> {
        git(&self.dir, &["add", "--all"]).await?;
        if git_ok(&self.dir, &["diff", "--cached", "--quiet"]).await? {
            return Ok(None);
        }
        let mut args: Vec<&str> = Vec::new();
        if !hooks {
            args.extend(["-c", "core.hooksPath=/dev/null"]);
        }
        let named = git_ok(&self.dir, &["config", "user.email"]).await?;
        if !named {
            tracing::warn!(
                "no git identity (user.name, user.email) is configured: tether commits as \
                 tether <tether@localhost>"
            );
            args.extend([
                "-c",
                "user.name=tether",
                "-c",
                "user.email=tether@localhost",
            ]);
        }
        args.extend(["commit", "--quiet", "--file", "-"]);
        if !hooks {
            args.push("--no-verify");
        }
        git_with(&self.dir, &args, Some(message)).await?;
        let id = git(&self.dir, &["rev-parse", "HEAD"]).await?;
        Ok(Some(id.trim().to_owned()))
    }
}

fn path_arg(dir: &Path) -> Result<&str, WorktreeError> {
    dir.to_str().ok_or_else(|| WorktreeError::NotARepo {
        dir: dir.to_path_buf(),
        detail: "the path is not UTF-8".to_owned(),
    })
}

/// `git worktree list --porcelain`: blocks of `key value` lines separated by blank lines.
fn parse_list(out: &str) -> Vec<WorktreeInfo> {
    out.split("\n\n")
        .filter_map(|block| {
            let mut info = WorktreeInfo {
                dir: PathBuf::new(),
                head: String::new(),
                branch: None,
                locked: None,
            };
            for line in block.lines() {
                let (key, value) = line.split_once(' ').unwrap_or((line, ""));
                match key {
                    "worktree" => info.dir = PathBuf::from(value),
                    "HEAD" => info.head = value.to_owned(),
                    "branch" => {
                        info.branch = Some(
                            value
                                .strip_prefix("refs/heads/")
                                .unwrap_or(value)
                                .to_owned(),
                        );
                    }
                    "locked" => info.locked = Some(value.to_owned()),
                    _ => {}
                }
            }
            (!info.dir.as_os_str().is_empty()).then_some(info)
        })
        .collect()
}

/// How long a run waits for another one adding a worktree to the same repository.
const ADD_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(60);

/// Holds the lock on adding worktrees beside `dir` (one directory per repository holds every
/// run's worktree): git reads every worktree's record while it adds one, and fails on a record
/// another process is half-way through writing, so two runs starting at once take turns.
async fn exclusive(dir: &Path) -> Result<std::fs::File, WorktreeError> {
    let parent = dir.parent().unwrap_or(dir);
    std::fs::create_dir_all(parent).map_err(WorktreeError::Spawn)?;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(parent.join(".add.lock"))
        .map_err(WorktreeError::Spawn)?;
    let give_up = tokio::time::Instant::now() + ADD_LOCK_WAIT;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if tokio::time::Instant::now() < give_up => {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(WorktreeError::Spawn(std::io::Error::other(format!(
                    "another run held {} for {} s",
                    parent.join(".add.lock").display(),
                    ADD_LOCK_WAIT.as_secs()
                ))));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(WorktreeError::Spawn(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_porcelain_list_is_read_block_by_block() {
        let out = "worktree /repo\nHEAD abc\nbranch refs/heads/main\n\n\
                   worktree /wt/r-1\nHEAD def\nbranch refs/heads/tether/r-1\nlocked tether run r-1\n\n\
                   worktree /wt/old\nHEAD 123\ndetached\nlocked\n";
        let list = parse_list(out);
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!(list[1].run_id(), Some("r-1"));
        assert_eq!(list[1].locked.as_deref(), Some("tether run r-1"));
        assert_eq!(list[2].branch, None);
        assert_eq!(list[2].locked.as_deref(), Some(""));
    }
}

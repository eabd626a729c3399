//! The repository, its tether worktrees, and the commit per signed-off goal.

use std::path::{Path, PathBuf};

use tether_git::{Confinement, GitRepo, ObjectId, Snapshots, Writes};
use tokio_util::sync::CancellationToken;

use crate::WorktreeError;
use crate::git::{command, git, git_ok, git_with, git_writing};

/// The branch of run `run_id`: `tether/<run-id>`.
pub fn branch_name(run_id: &str) -> String {
    format!("tether/{run_id}")
}

/// A git repository with at least one commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    git: GitRepo,
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
    /// Its repository as git is told it: its own git directory (git's record of it in the
    /// checkout's `.git/worktrees/`), never what its `.git` file says.
    pub git: GitRepo,
    /// The checkout's git directory, every worktree's (its objects, its hooks).
    common: PathBuf,
}

/// How tether builds a commit of a worktree: in its snapshot repository (under `state_dir`),
/// its git run as `git` says, without the variables `env_remove` (tether's keys).
#[derive(Debug, Clone, Copy)]
pub struct Snapshotting<'a> {
    /// The state directory whose snapshot repository builds the commit's tree.
    pub state_dir: &'a Path,
    /// Where that git runs.
    pub git: Confinement,
    /// Variables git does not get.
    pub env_remove: &'a [String],
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
    /// The repository `dir` is in (found with the configuration neutralised, in a sandbox that
    /// reads only `dir` and the `.git` above it); refused when it is none, git does not trust it
    /// (`safe.directory`), or it has no commit yet. Its commands run as `confinement` says:
    /// each in a sandbox of its own granting what it writes, or — the run's sandbox off —
    /// outside any.
    pub async fn discover(dir: &Path, confinement: Confinement) -> Result<Repo, WorktreeError> {
        let not_a_repo = |detail: String| WorktreeError::NotARepo {
            dir: dir.to_path_buf(),
            detail,
        };
        let cancel = CancellationToken::new();
        let git = match tether_git::discover(dir, confinement, &[], &cancel).await {
            Ok(tether_git::Found::Repo(git)) => git,
            Ok(tether_git::Found::NotARepository(why)) => return Err(not_a_repo(why)),
            // git could not look (no sandbox to look in, no git): said as it is.
            Err(e) => return Err(WorktreeError::Run(e)),
        };
        let head = command(dir, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
        if !git_ok(&git, &head).await? {
            return Err(not_a_repo("the repository has no commit yet".to_owned()));
        }
        Ok(Repo { git })
    }

    /// The checkout's top directory.
    pub fn toplevel(&self) -> &Path {
        &self.git.work_tree
    }

    /// `git <args>` in the checkout's top directory, writing `writes` of the repository.
    async fn git(&self, args: &[&str], writes: Writes) -> Result<String, WorktreeError> {
        git_writing(&self.git, &self.git.work_tree, args, writes).await
    }

    /// Whether `git <args>` in the checkout's top directory exited with 0.
    async fn git_ok(&self, args: &[&str], writes: Writes) -> Result<bool, WorktreeError> {
        git_ok(
            &self.git,
            &command(&self.git.work_tree, args).writes(writes),
        )
        .await
    }

    /// The worktree at `dir` of run `run_id` on `branch`, its repository as git's record in the
    /// checkout says.
    fn worktree(&self, run_id: &str, branch: &str, dir: &Path) -> Result<Worktree, WorktreeError> {
        let common = self.git.common_dir.clone();
        let git_dir = record_of(&common, dir)?;
        Ok(Worktree {
            dir: dir.to_path_buf(),
            branch: branch.to_owned(),
            run_id: run_id.to_owned(),
            git: GitRepo {
                git_dir,
                work_tree: dir.to_path_buf(),
                common_dir: common.clone(),
                confinement: self.git.confinement,
            },
            common,
        })
    }

    /// `git worktree add <args>` of a new worktree at `dir` (made here, empty: the sandbox
    /// grants git that directory, which must exist) on the branch `branch` (which it may
    /// create), with absolute paths in git's records (tether reads them).
    async fn add(&self, dir: &Path, branch: &str, args: &[&str]) -> Result<(), WorktreeError> {
        std::fs::create_dir_all(dir).map_err(WorktreeError::Spawn)?;
        let mut all = vec!["worktree", "add", "--quiet"];
        all.extend_from_slice(args);
        let writes = Writes::NewWorktree {
            dir: dir.to_path_buf(),
            branch: format!("refs/heads/{branch}"),
        };
        let cmd = command(&self.git.work_tree, &all)
            .config("worktree.useRelativePaths", "false")
            .writes(writes);
        git_with(&self.git, &cmd).await.map(drop)
    }

    /// A new branch `tether/<run-id>` from `HEAD` and a locked worktree for it at `dir`.
    pub async fn create(&self, run_id: &str, dir: &Path) -> Result<Worktree, WorktreeError> {
        self.create_on(run_id, &branch_name(run_id), "HEAD", dir)
            .await
    }

    /// A new branch `branch` of run `run_id` from `from` and a locked worktree for it at `dir`.
    pub(crate) async fn create_on(
        &self,
        run_id: &str,
        branch: &str,
        from: &str,
        dir: &Path,
    ) -> Result<Worktree, WorktreeError> {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent).map_err(WorktreeError::Spawn)?;
        }
        let path = path_arg(dir)?;
        let _held = exclusive(dir).await?;
        // A branch cut from a remote-tracking ref tracks nothing: the config is not written.
        self.add(dir, branch, &["--no-track", "-b", branch, path, from])
            .await?;
        let tree = self.worktree(run_id, branch, dir)?;
        self.lock(&tree).await?;
        Ok(tree)
    }

    /// The repository's git directory (the checkout's `.git`, every worktree's objects and
    /// refs).
    pub fn git_dir(&self) -> &Path {
        &self.git.git_dir
    }

    /// The URL of the repository's remote `name`, if it has one.
    pub async fn remote_url(&self, name: &str) -> Result<Option<String>, WorktreeError> {
        let key = format!("remote.{name}.url");
        let cmd = crate::git::command(self.toplevel(), &["config", "--get", &key]);
        let out = self.git.run(&cmd, &CancellationToken::new()).await?;
        Ok(out
            .ok()
            .then(|| out.stdout.trim().to_owned())
            .filter(|url| !url.is_empty()))
    }

    /// Whether the repository has the ref `name` (a full name, `refs/…`).
    pub async fn has_ref(&self, name: &str) -> Result<bool, WorktreeError> {
        self.git_ok(&["show-ref", "--verify", "--quiet", name], Writes::Nothing)
            .await
    }

    /// The run's worktree at `dir` again: as it is when it is there, made again from the
    /// run's branch when the directory was removed; locked either way.
    pub async fn reopen(&self, run_id: &str, dir: &Path) -> Result<Worktree, WorktreeError> {
        self.reopen_on(run_id, branch_name(run_id), dir).await
    }

    /// [`Repo::reopen`] of the worktree of run `run_id` on `branch`.
    pub(crate) async fn reopen_on(
        &self,
        run_id: &str,
        branch: String,
        dir: &Path,
    ) -> Result<Worktree, WorktreeError> {
        let listed = self.list().await?;
        let present = listed
            .iter()
            .any(|w| w.branch.as_deref() == Some(branch.as_str()) && w.dir.is_dir());
        if !present {
            let reference = format!("refs/heads/{branch}");
            if !self
                .git_ok(
                    &["show-ref", "--verify", "--quiet", &reference],
                    Writes::Nothing,
                )
                .await?
            {
                return Err(WorktreeError::NoBranch { branch });
            }
            let _held = exclusive(dir).await?;
            // A directory removed by hand leaves git's record of it behind.
            let unlock = ["worktree", "unlock", path_arg(dir)?];
            let _ = self.git(&unlock, Writes::Records).await;
            self.git(&["worktree", "prune"], Writes::Records).await?;
            self.add(dir, &branch, &[path_arg(dir)?, &branch]).await?;
        }
        let tree = self.worktree(run_id, &branch, dir)?;
        self.lock(&tree).await?;
        Ok(tree)
    }

    async fn lock(&self, tree: &Worktree) -> Result<(), WorktreeError> {
        let reason = format!("tether run {}", tree.run_id);
        let path = path_arg(&tree.dir)?;
        if !self
            .git_ok(
                &["worktree", "lock", "--reason", &reason, path],
                Writes::Records,
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
        let out = self
            .git(&["worktree", "list", "--porcelain"], Writes::Nothing)
            .await?;
        Ok(parse_list(&out))
    }

    /// Removes the run's worktree (its branch stays: the work is kept). Refused when `live`.
    ///
    /// The directory tether made is removed by tether, without following a link in it, and
    /// only when git's records name it as a worktree of this repository; then `git worktree
    /// prune` drops the record. So no git ever writes beyond the records.
    pub async fn remove(&self, run_id: &str, dir: &Path, live: bool) -> Result<(), WorktreeError> {
        if live {
            return Err(WorktreeError::Live {
                run: run_id.to_owned(),
            });
        }
        let path = path_arg(dir)?;
        let _ = self
            .git(&["worktree", "unlock", path], Writes::Records)
            .await;
        if std::fs::symlink_metadata(dir).is_ok() {
            record_of(&self.git.common_dir, dir)?;
            std::fs::remove_dir_all(dir).map_err(WorktreeError::Spawn)?;
        }
        self.git(&["worktree", "prune"], Writes::Records).await?;
        Ok(())
    }
}

impl Worktree {
    /// Commits the worktree's files on its branch with `message`; `None` when nothing changed.
    ///
    /// The tree is built in tether's snapshot repository (`with`), which reads none of the
    /// repository's configuration and no `.gitattributes`, in a sandbox where git writes only
    /// the repository's `objects/`, starting from the branch's tree: a file gone from the
    /// worktree is removed, and files over 16 MiB and what is not a file keep the branch's
    /// version (a new one is not committed; each is logged). Without `hooks` the commit is made
    /// there too (`git commit-tree`), and the branch moved with `git update-ref` (in a sandbox
    /// that writes only the refs and their logs) — no git that reads the person's configuration
    /// ever looks at the agent's files. With `hooks` (the person asked for their hooks), the
    /// worktree's index is set to that tree and `git commit` runs the checkout's own hooks (its
    /// git directory's `hooks/`), the configuration neutralised, in a sandbox of its own (see
    /// `commit_with_hooks`). The author is the repository's configured identity, else the
    /// person's global one, else `tether <tether@localhost>`.
    pub async fn commit(
        &self,
        message: &str,
        hooks: bool,
        with: &Snapshotting<'_>,
    ) -> Result<Option<String>, WorktreeError> {
        let snaps = Snapshots::for_commit(
            with.state_dir,
            &self.dir,
            &self.common,
            with.git,
            with.env_remove,
        )?;
        let index = snaps.index_path();
        let made = self.commit_through(&snaps, &index, message, hooks).await;
        let _ = std::fs::remove_file(&index);
        made
    }

    async fn commit_through(
        &self,
        snaps: &Snapshots,
        index: &Path,
        message: &str,
        hooks: bool,
    ) -> Result<Option<String>, WorktreeError> {
        let cancel = CancellationToken::new();
        let parent = self
            .object(&["rev-parse", "--verify", "HEAD^{commit}"])
            .await?;
        let parent_tree = self
            .object(&["rev-parse", "--verify", "HEAD^{tree}"])
            .await?;
        let snapshot = snaps.snapshot_over(&parent_tree, index, &cancel).await?;
        for skipped in &snapshot.skipped {
            tracing::warn!(path = %skipped.path, why = %skipped.why, "left out of the commit");
        }
        // A merge the worktree's agent settled (see `merge.rs`) is committed as one, even when
        // it kept the branch's own tree.
        let merged = self.merging()?;
        if snapshot.tree == parent_tree && merged.is_none() {
            return Ok(None);
        }
        if hooks {
            self.take_index(index)?;
            let scratch = snaps.scratch_dir("hooks").map_err(WorktreeError::Run)?;
            let made = self.commit_with_hooks(message, &scratch).await;
            let _ = std::fs::remove_dir_all(&scratch);
            return made;
        }
        let (name, email) = self.identity().await?;
        let mut parents = vec![&parent];
        parents.extend(merged.as_ref());
        let id = snaps
            .commit_tree(&snapshot.tree, &parents, message, (&name, &email), &cancel)
            .await?;
        let reference = format!("refs/heads/{}", self.branch);
        git_writing(
            &self.git,
            &self.dir,
            &[
                "update-ref",
                "-m",
                "tether: signed-off work",
                &reference,
                id.as_str(),
                parent.as_str(),
            ],
            Writes::Ref(reference.clone()),
        )
        .await?;
        self.take_index(index)?;
        if merged.is_some() {
            self.forget_merge().await?;
        }
        Ok(Some(id.to_string()))
    }

    /// `git commit` of the worktree's index, with the checkout's own hooks: in a sandbox (unless
    /// the run's is off) that writes the commit, the branch, the worktree's own git directory and
    /// its files, with `scratch` for the hooks' temporary files — the network off, the home
    /// directory covered, the repository's `hooks/` and `config` read-only.
    async fn commit_with_hooks(
        &self,
        message: &str,
        scratch: &Path,
    ) -> Result<Option<String>, WorktreeError> {
        let dir = &self.dir;
        let mut cmd = command(dir, &["commit", "--quiet", "--file", "-"])
            .input(message.as_bytes().to_vec())
            .hooks_in(self.common.join("hooks"))
            .writes(Writes::Commit(format!("refs/heads/{}", self.branch)))
            .scratch(scratch);
        let (name, email) = self.identity().await?;
        cmd = cmd.config("user.name", name).config("user.email", email);
        git_with(&self.git, &cmd).await?;
        let id = git(&self.git, dir, &["rev-parse", "HEAD"]).await?;
        Ok(Some(id.trim().to_owned()))
    }

    /// The object id `git <args>` names, in the worktree's repository.
    async fn object(&self, args: &[&str]) -> Result<ObjectId, WorktreeError> {
        let out = git(&self.git, &self.dir, args).await?;
        ObjectId::parse(out.trim()).ok_or_else(|| WorktreeError::Git {
            what: args.join(" "),
            stderr: format!("not an object id: {}", out.trim()),
        })
    }

    /// Makes the index built at `index` the worktree's own (its git directory's `index`, by a
    /// rename over it), so the worktree shows clean against the new commit.
    fn take_index(&self, index: &Path) -> Result<(), WorktreeError> {
        let own = self.git.git_dir.join("index");
        let aside = self.git.git_dir.join("index.tether");
        std::fs::copy(index, &aside)
            .and_then(|_| std::fs::rename(&aside, &own))
            .map_err(WorktreeError::Spawn)
    }

    /// The identity to commit as: the repository's configured `user.name` and `user.email`,
    /// else the person's global ones, else tether's.
    pub(crate) async fn identity(&self) -> Result<(String, String), WorktreeError> {
        let configured = |key: &'static str| async move {
            git(&self.git, &self.dir, &["config", "--get", key])
                .await
                .ok()
                .map(|v| v.trim().to_owned())
                .filter(|v| !v.is_empty())
        };
        if let (Some(name), Some(email)) = (
            configured("user.name").await,
            configured("user.email").await,
        ) {
            return Ok((name, email));
        }
        let cancel = CancellationToken::new();
        let name = tether_git::user::global_identity("name", &cancel).await;
        let email = tether_git::user::global_identity("email", &cancel).await;
        if let (Some(name), Some(email)) = (name, email) {
            return Ok((name, email));
        }
        tracing::warn!(
            "no git identity (user.name, user.email) is configured: tether commits as \
             tether <tether@localhost>"
        );
        Ok(("tether".to_owned(), "tether@localhost".to_owned()))
    }
}

/// The longest `gitdir` record read.
const RECORD_BYTES: u64 = 4096;

/// The git directory of the worktree at `dir`: the entry of `common/worktrees/` whose `gitdir`
/// file (git's record, in the checkout's git directory, which the agent cannot write) names
/// `dir/.git`.
fn record_of(common: &Path, dir: &Path) -> Result<PathBuf, WorktreeError> {
    use std::io::Read as _;
    let want = std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .join(".git");
    let entries = std::fs::read_dir(common.join("worktrees")).map_err(WorktreeError::Spawn)?;
    for entry in entries.flatten() {
        let mut text = String::new();
        let read = std::fs::File::open(entry.path().join("gitdir"))
            .and_then(|f| f.take(RECORD_BYTES).read_to_string(&mut text));
        if read.is_err() {
            continue;
        }
        let named = PathBuf::from(text.trim());
        let named = named
            .parent()
            .and_then(|p| std::fs::canonicalize(p).ok())
            .map_or(named.clone(), |p| p.join(".git"));
        if named == want {
            return Ok(entry.path());
        }
    }
    Err(WorktreeError::NoRecord {
        dir: dir.to_path_buf(),
    })
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

//! `--worktree`: a run in a git worktree of its own (see `tether-worktree`), with its state in
//! the checkout's `.tether/`, and a commit on its branch for each goal it signs off (for a
//! Ralph run, one of its work as it keeps its promise, before it is recorded completed).
//!
//! Worktrees live outside the checkout, under `$XDG_STATE_HOME/tether/worktrees/` (default
//! `~/.local/state/tether/worktrees/`), one directory per repository (its name and a hash of
//! its path) and one per run. The plan file and `tether.toml` are copied in as they are in the
//! checkout (committed or not), so the run follows the plan the user approved; the checkout is
//! never written.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use tether_config::{Config, Workspace};
use tether_core::looping::{AfterIteration, Isolation};
use tether_store::{Journal, Run, RunId, VerdictKind};
use tether_worktree::{CommitInfo, Quote, Repo, Snapshotting, Worktree, commit_message};

use crate::compose::launch::{Note, Observer};
use crate::error::{Error, Result};

/// A commit tether made on a run's branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The branch.
    pub branch: String,
    /// The commit's id.
    pub id: String,
}

impl Commit {
    /// The id's first 12 digits.
    pub fn short(&self) -> &str {
        &self.id[..self.id.len().min(12)]
    }
}

/// Where a run works: the workspace its agent, verify commands and judge see, and for a
/// worktree run the worktree and what the loop does with it.
pub struct Placement {
    /// The run's workspace: the checkout's, or the same place inside the worktree with the
    /// checkout's state directory.
    pub ws: Workspace,
    /// The run's worktree, if it has one.
    pub worktree: Option<Worktree>,
    /// The run id drawn for the worktree (a new run).
    pub run_id: Option<RunId>,
    /// The one goal of a goal's run in a run of many goals (see `sandbox::Made`).
    pub goal: Option<String>,
}

impl Placement {
    /// The run works in the checkout.
    pub fn in_place(ws: &Workspace) -> Self {
        Placement {
            ws: ws.clone(),
            worktree: None,
            run_id: None,
            goal: None,
        }
    }

    /// What tether made for the run that its sandbox grants: for a worktree, the git directory
    /// it shares with its checkout — as tether knows it from git's record, never from the
    /// worktree's `.git` file.
    pub fn made(&self) -> crate::compose::sandbox::Made {
        crate::compose::sandbox::Made {
            goal: self.goal.clone(),
            repository: self
                .worktree
                .as_ref()
                .and_then(|tree| common_dir(&tree.git.git_dir)),
        }
    }

    /// What the loop needs: the run's id, and (when `commit`) the commit after each sign-off,
    /// told to `observer` — or, for a Ralph run (`kept`), the commit of its work as it keeps
    /// its promise, made before the run is recorded completed and left in `kept`.
    pub fn isolation(
        &self,
        journal: &Journal,
        config: &Config,
        (commit, kept): (bool, Option<&Kept>),
        observer: Arc<dyn Observer>,
    ) -> Isolation {
        let Some(tree) = &self.worktree else {
            return Isolation::default();
        };
        Isolation {
            run_id: self.run_id.clone(),
            after_iteration: commit.then(|| -> Arc<dyn AfterIteration> {
                Arc::new(Committer {
                    tree: tree.clone(),
                    journal: journal.clone(),
                    plan_name: config.plan.to_string_lossy().into_owned(),
                    plan_path: config.plan_path(self.ws.root()),
                    hooks: config.run.commit_hooks,
                    git: GitSetting {
                        state_dir: self.ws.state_dir(),
                        confinement: git_of(config),
                        env_remove: config.key_vars(),
                    },
                    seen: Mutex::new(0),
                    observer,
                    kept: kept.cloned(),
                })
            }),
        }
    }
}

/// The git directory a linked worktree's own (`<common>/worktrees/<name>`, git's record of it in
/// its checkout) lies in.
fn common_dir(git_dir: &Path) -> Option<PathBuf> {
    let records = git_dir.parent()?;
    (records.file_name()? == "worktrees").then(|| records.parent().map(Path::to_path_buf))?
}

/// A run's worktree, as `tether worktree list` shows it.
#[derive(Debug, serde::Serialize)]
pub struct Listed {
    /// The run.
    pub run: String,
    /// Its branch.
    pub branch: String,
    /// Its directory.
    pub dir: String,
    /// Whether a process drives the run now.
    pub live: bool,
}

/// The repository of `ws` and the worktrees of its runs, its git run as `config`'s sandbox
/// says (see [`git_of`]).
pub async fn list(ws: &Workspace, config: &Config) -> Result<(Repo, Vec<Listed>)> {
    let repo = Repo::discover(ws.root(), git_of(config)).await?;
    let listed = repo.list().await.map_err(Error::ListWorktrees)?;
    let entries = listed
        .iter()
        .filter_map(|w| {
            let run = w.run_id()?;
            let live = run.parse::<RunId>().is_ok_and(|id| {
                let lock = tether_core::looping::lock_path(ws, &id);
                tether_store::run_lock::RunLock::holder(&lock).is_some()
            });
            Some(Listed {
                run: run.to_owned(),
                branch: w.branch.clone().unwrap_or_default(),
                dir: w.dir.display().to_string(),
                live,
            })
        })
        .collect();
    Ok((repo, entries))
}

/// Where the git commands on the person's repository run: each in a sandbox of its own,
/// unless the person turned the run's sandbox off (`[sandbox] mode = "off"`).
pub fn git_of(config: &Config) -> tether_git::Confinement {
    tether_signoff::git_confinement(config)
}

/// The directory of the repository at `toplevel`'s worktrees.
pub fn worktrees_of(toplevel: &Path) -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir);
    let name = toplevel
        .file_name()
        .map_or_else(|| "repo".to_owned(), |n| n.to_string_lossy().into_owned());
    let hash = fnv(toplevel.as_os_str().as_encoded_bytes());
    base.join("tether/worktrees")
        .join(format!("{name}-{hash:08x}"))
}

/// A short stable hash of a path, to keep two checkouts of the same name apart.
fn fnv(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, b| {
        (h ^ u32::from(*b)).wrapping_mul(0x0100_0193)
    })
}

/// A new run's worktree: a run id drawn now, its branch and worktree, the plan and config
/// copied in, and the workspace inside it.
pub async fn for_new_run(ws: &Workspace, config: &Config) -> Result<Placement> {
    let repo = Repo::discover(ws.root(), git_of(config)).await?;
    let id = RunId::generate();
    let dir = worktrees_of(repo.toplevel()).join(id.as_str());
    let tree = repo.create(id.as_str(), &dir).await?;
    let inside = inside(&repo, ws, &dir);
    for file in [config.plan_path(ws.root()), ws.default_config_path()] {
        copy_in(ws.root(), &file, &inside)?;
    }
    Ok(Placement {
        ws: Workspace::at(&inside).with_state_dir(ws.state_dir()),
        worktree: Some(tree),
        run_id: Some(id),
        goal: None,
    })
}

/// The worktree of the run of many goals `id` (`tether run --parallel`): its integration
/// branch `tether/<id>` from `HEAD`, the plan file and `tether.toml` copied in as they are in
/// the checkout — or, taken up `again` after it was interrupted, the branch and worktree as they
/// are (made again from the branch if its directory was removed); with the repository, and
/// where the run's commands work in it.
pub async fn for_fleet(
    ws: &Workspace,
    config: &Config,
    id: &RunId,
    again: bool,
) -> Result<(Repo, Worktree, Placement)> {
    let repo = Repo::discover(ws.root(), git_of(config)).await?;
    let dir = worktrees_of(repo.toplevel()).join(id.as_str());
    let (tree, inside) = if again {
        let tree = repo.reopen(id.as_str(), &dir).await?;
        (tree, inside(&repo, ws, &dir))
    } else {
        let tree = repo.create(id.as_str(), &dir).await?;
        (tree, copy_config(&repo, ws, config, &dir)?)
    };
    let placement = Placement {
        ws: Workspace::at(&inside).with_state_dir(ws.state_dir()),
        worktree: Some(tree.clone()),
        run_id: Some(id.clone()),
        goal: None,
    };
    Ok((repo, tree, placement))
}

/// Where goal `goal` of the run of many goals `fleet` works: a worktree of its own on the
/// branch `tether/<fleet>-<goal>` cut from the integration branch `from`, the plan file and
/// `tether.toml` copied in as they are in the integration worktree (the goals merged so far
/// signed off in its plan), and a run id of its own; each goal it signs off committed on its
/// branch.
pub async fn for_fleet_goal(
    repo: &Repo,
    ws: &Workspace,
    config: &Config,
    (fleet, goal): (&RunId, &str),
    from: &Worktree,
) -> Result<Placement> {
    let dir = worktrees_of(repo.toplevel()).join(format!("{fleet}-{goal}"));
    let tree = repo
        .create_goal(fleet.as_str(), goal, &from.branch, &dir)
        .await?;
    let integration = Workspace::at(inside(repo, ws, &from.dir));
    let here = inside(repo, ws, &dir);
    for file in [
        config.plan_path(integration.root()),
        integration.default_config_path(),
    ] {
        copy_in(integration.root(), &file, &here)?;
    }
    Ok(Placement {
        ws: Workspace::at(&here).with_state_dir(ws.state_dir()),
        worktree: Some(tree),
        run_id: Some(RunId::generate()),
        goal: Some(goal.to_owned()),
    })
}

/// Where goal `goal` of the run of many goals `fleet` works again once the run is taken up:
/// its worktree as the goal left it (made again from its branch if removed), with a new run id
/// drawn for a `new_run` (none for a run resumed there).
pub async fn for_fleet_goal_again(
    repo: &Repo,
    ws: &Workspace,
    (fleet, goal): (&RunId, &str),
    new_run: bool,
) -> Result<Placement> {
    let dir = worktrees_of(repo.toplevel()).join(format!("{fleet}-{goal}"));
    let tree = repo.reopen_goal(fleet.as_str(), goal, &dir).await?;
    Ok(Placement {
        ws: Workspace::at(inside(repo, ws, &dir)).with_state_dir(ws.state_dir()),
        worktree: Some(tree),
        run_id: new_run.then(RunId::generate),
        goal: Some(goal.to_owned()),
    })
}

/// Where goal `goal` of a run of many goals settles its conflicting merge: its worktree `tree`
/// as it is (the run's branch merged in, the conflicts in its files), and a run id of its own.
pub fn for_fleet_settle(repo: &Repo, ws: &Workspace, tree: &Worktree, goal: &str) -> Placement {
    Placement {
        ws: Workspace::at(inside(repo, ws, &tree.dir)).with_state_dir(ws.state_dir()),
        worktree: Some(tree.clone()),
        run_id: Some(RunId::generate()),
        goal: Some(goal.to_owned()),
    }
}

/// Copies the plan file and `tether.toml` of `ws` into the worktree at `dir`; where the
/// checkout's workspace root is inside it.
fn copy_config(repo: &Repo, ws: &Workspace, config: &Config, dir: &Path) -> Result<PathBuf> {
    let inside = inside(repo, ws, dir);
    for file in [config.plan_path(ws.root()), ws.default_config_path()] {
        copy_in(ws.root(), &file, &inside)?;
    }
    Ok(inside)
}

/// A stopped run's worktree again, when it had one (its recorded workspace is not the
/// checkout's): as it is, or made again from its branch; its git run as `config` says.
pub async fn for_resumed_run(ws: &Workspace, run: &Run, config: &Config) -> Result<Placement> {
    if run.workspace == ws.root() {
        return Ok(Placement::in_place(ws));
    }
    let repo = Repo::discover(ws.root(), git_of(config)).await?;
    let trees = worktrees_of(repo.toplevel());
    let dir = trees.join(run.id.as_str());
    if !run.workspace.starts_with(&dir) {
        // A goal's run of a run of many goals works in that run's worktree of the goal: never
        // take it up in the checkout.
        if run.workspace.starts_with(&trees) {
            return Err(Error::GoalOfFleet {
                run: run.id.to_string(),
            });
        }
        return Ok(Placement::in_place(ws));
    }
    let tree = repo.reopen(run.id.as_str(), &dir).await?;
    Ok(Placement {
        ws: Workspace::at(&run.workspace).with_state_dir(ws.state_dir()),
        worktree: Some(tree),
        run_id: None,
        goal: None,
    })
}

/// Where the checkout's workspace root is inside the worktree (the same place relative to the
/// repository's top).
fn inside(repo: &Repo, ws: &Workspace, dir: &Path) -> PathBuf {
    let root = std::fs::canonicalize(ws.root()).unwrap_or_else(|_| ws.root().to_path_buf());
    let top = std::fs::canonicalize(repo.toplevel()).unwrap_or_else(|_| repo.toplevel().into());
    match root.strip_prefix(&top) {
        Ok(rel) => dir.join(rel),
        Err(_) => dir.to_path_buf(),
    }
}

/// Copies `file` (under `root`) to the same place under `inside`, when it exists.
fn copy_in(root: &Path, file: &Path, inside: &Path) -> Result<()> {
    let Ok(rel) = file.strip_prefix(root) else {
        return Ok(());
    };
    if !file.is_file() {
        return Ok(());
    }
    let to = inside.join(rel);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|cause| Error::WorktreeFile {
            what: format!("creating {}", parent.display()),
            cause,
        })?;
    }
    std::fs::copy(file, &to).map_err(|cause| Error::WorktreeFile {
        what: format!("copying {} into the run's worktree", file.display()),
        cause,
    })?;
    Ok(())
}

/// The commit of a Ralph run's work on its branch, made as the run kept its promise: filled
/// by the loop's [`AfterIteration`] hook, read once the run ends.
#[derive(Clone, Default)]
pub struct Kept(Arc<Mutex<Option<Commit>>>);

impl Kept {
    /// The commit, if one was made.
    pub fn take(&self) -> Option<Commit> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn put(&self, commit: Commit) {
        *self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(commit);
    }
}

/// How tether's git builds a commit for the run (see [`tether_worktree::Snapshotting`]).
struct GitSetting {
    state_dir: PathBuf,
    confinement: tether_git::Confinement,
    env_remove: Vec<String>,
}

impl GitSetting {
    fn snapshotting(&self) -> Snapshotting<'_> {
        Snapshotting {
            state_dir: &self.state_dir,
            git: self.confinement,
            env_remove: &self.env_remove,
        }
    }
}

/// Commits each goal the run signs off, on the run's branch; or a Ralph run's work as it keeps
/// its promise.
struct Committer {
    tree: Worktree,
    journal: Journal,
    plan_name: String,
    plan_path: PathBuf,
    hooks: bool,
    git: GitSetting,
    /// The newest verdict looked at.
    seen: Mutex<i64>,
    /// Hears of each commit.
    observer: Arc<dyn Observer>,
    /// Where a Ralph run's commit goes (`None`: a goal run).
    kept: Option<Kept>,
}

impl AfterIteration for Committer {
    fn after<'a>(&'a self, run: &'a RunId, completing: bool) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(kept) = &self.kept {
                if completing
                    && let Some(commit) = commit_work(
                        &self.tree,
                        &self.journal,
                        run,
                        (self.hooks, &self.git.snapshotting()),
                    )
                    .await
                {
                    kept.put(commit);
                }
                return;
            }
            let messages = match self.signed_off(run) {
                Ok(m) => m,
                Err(e) => {
                    tracing::warn!("could not read the run's sign-offs to commit them: {e}");
                    return;
                }
            };
            for (goal, message) in messages {
                let with = self.git.snapshotting();
                match self.tree.commit(&message, self.hooks, &with).await {
                    Ok(Some(id)) => self.observer.note(Note::GoalCommitted {
                        goal,
                        commit: Commit {
                            branch: self.tree.branch.clone(),
                            id,
                        },
                    }),
                    Ok(None) => tracing::info!(goal, "signed off with nothing to commit"),
                    Err(e) => tracing::warn!(goal, "could not commit the signed-off goal: {e}"),
                }
            }
        })
    }
}

impl Committer {
    /// The commit messages of the goals `run` signed off since the last look.
    fn signed_off(&self, run: &RunId) -> Result<Vec<(String, String)>, tether_store::StoreError> {
        let store = self.journal.store();
        let mut seen = self
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let records = store.verdicts_after(&self.plan_name, *seen)?;
        if let Some(last) = records.last() {
            *seen = last.id;
        }
        let no_judge = store
            .run(run)?
            .spec
            .get("no_judge")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        drop(store);
        // The plan in the worktree is the agent's to write: read bounded, as every plan read.
        let doc = tether_plan::file::read(&self.plan_path)
            .unwrap_or_else(|_| tether_plan::PlanDoc::parse(&self.plan_path, String::new()));
        let plan = doc.plan();
        Ok(records
            .iter()
            .map(|r| &r.decision)
            .filter(|d| d.run_id.as_ref() == Some(run) && d.kind == VerdictKind::Accepted)
            .filter(|d| d.judge_model.is_some() || no_judge)
            .map(|d| {
                let goal = plan.goal(&d.goal_id);
                let title = goal.map_or(d.goal_id.as_str(), |g| g.title.as_str());
                let verify = goal
                    .and_then(|g| g.verify.as_ref())
                    .map(|l| l.value.as_str());
                let result = match d.verify_exit {
                    Some(code) => format!("exit {code}"),
                    None => "no exit code".to_owned(),
                };
                let verdict = match &d.judge_model {
                    Some(model) => format!("accepted by the judge ({model}): {}", d.reason),
                    None => format!("accepted by verify alone (--no-judge): {}", d.reason),
                };
                let quotes = quotes(&d.checks);
                let message = commit_message(&CommitInfo {
                    title,
                    verdict: &verdict,
                    verify_command: verify,
                    verify_result: verify.map(|_| result.as_str()),
                    quotes: &quotes,
                    run_id: run.as_str(),
                    contract_hash: d.contract_hash.as_deref().unwrap_or("none"),
                });
                (d.goal_id.clone(), message)
            })
            .collect())
    }
}

/// The judge's checks (`[{"path","quote",…}]`) as quotes.
fn quotes(checks: &serde_json::Value) -> Vec<Quote> {
    checks
        .as_array()
        .map(|all| {
            all.iter()
                .filter_map(|c| {
                    Some(Quote {
                        at: c.get("path")?.as_str()?.to_owned(),
                        text: c.get("quote")?.as_str()?.to_owned(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Commits what a loop without goals (ralph) left in its worktree when it ended done: its
/// prompt's first line as the subject. Never fails the run: a problem is logged.
async fn commit_work(
    tree: &Worktree,
    journal: &Journal,
    run: &RunId,
    (hooks, with): (bool, &Snapshotting<'_>),
) -> Option<Commit> {
    let prompt = journal
        .store()
        .run(run)
        .ok()
        .and_then(|r| r.spec.get("prompt")?.as_str().map(str::to_owned))
        .unwrap_or_default();
    let subject = prompt.lines().next().unwrap_or("ralph run").trim();
    let message =
        format!("{subject}\n\nThe agent kept its completion promise.\n\nTether-Run: {run}\n");
    match tree.commit(&message, hooks, with).await {
        Ok(Some(id)) => Some(Commit {
            branch: tree.branch.clone(),
            id,
        }),
        Ok(None) => None,
        Err(e) => {
            tracing::warn!("could not commit the run's work: {e}");
            None
        }
    }
}

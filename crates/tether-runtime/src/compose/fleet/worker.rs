//! A worker (`tether worker`): works on the goals of runs of many goals started on other
//! machines, found in the team store.
//!
//! It claims a goal that is ready ([`tether_store::Store::claim_fleet_goal`]), with a lease it
//! renews every few seconds while the goal's run works; clones the run's repository from its
//! shared remote into a directory of its own (or fetches it again), and cuts the goal's branch
//! `tether/<run>-<goal>` from the run's integration branch — or from the goal's own branch on
//! the remote, when a worker that stopped had pushed it — into a worktree of its own. There it
//! runs the goal as a goal run of its own, scoped to the goal, with the configuration and plan
//! the integration branch holds and the keys of this machine's environment; its records are
//! the workspace's the run was started in ([`tether_config::Workspace::standing_for`]), so the
//! contracts a person approved there bind it. A goal signed off is pushed to the remote
//! (never forced) and reported signed off; any other end is reported, and the goal's lease
//! ends. A goal whose merge conflicted (`conflicted`) is settled the same way as on one machine
//! (see `settle.rs`): the run's branch merged into the goal's, the goal's run settling the
//! conflicts; settled and signed off, it is pushed; otherwise it is reported `needs_person`
//! (the coordinator counts another conflict). A lease lost (the worker paused or cut off past it, another worker taking the goal
//! over) stops the goal's run: its late report would be refused anyway.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_config::{Env, Workspace};
use tether_core::goal::{GoalEnd, Settling};
use tether_core::looping::BudgetPool;
use tether_git::remote::Exchange;
use tether_human::Console;
use tether_store::{GoalClaim, GoalState, Holder, RunId, Store};
use tether_worktree::{Repo, goal_branch_name};
use tokio_util::sync::CancellationToken;

use crate::Host;
use crate::compose::launch::{End, Launch, Observer, Place, RunHandle, RunSpec};
use crate::compose::worktree::Placement;
use crate::error::{Error, Result};

/// How long a worker's claim of a goal lasts unless renewed.
pub const LEASE: Duration = Duration::from_secs(15);

/// How often a worker renews its claim while the goal's run works.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// What a front end gives every goal run its worker starts.
#[derive(Clone)]
pub struct Front {
    /// Whether a person at a terminal answers questions there.
    pub console: Console,
    /// Hears what each run tells besides its events.
    pub observer: Arc<dyn Observer>,
    /// How the process runs the tether commands an agent hands over.
    pub host: Host,
    /// How long the end of a run waits for its last notices.
    pub notice_grace: Duration,
}

/// A worker: where it keeps its clones, the workspace it was started in (its store, its own
/// settings) and what its front end gives each run.
pub struct Worker {
    /// Its own directory: a clone of each run's repository and the goals' worktrees.
    pub dir: PathBuf,
    /// The workspace it was started in.
    pub ws: Workspace,
    /// What each run is given.
    pub front: Front,
}

/// What a worker did with one goal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Worked {
    /// The run of many goals.
    pub fleet: RunId,
    /// The goal.
    pub goal: String,
    /// Its goal run (none when its conflict needed no settling after all).
    pub run: Option<RunId>,
    /// Where the goal stands now, as reported (signed off, ended, or ready again when the
    /// worker was stopped).
    pub state: GoalState,
}

impl Worker {
    /// Claims the next goal a worker may take and works on it to its end: `None` when there is
    /// none. `interrupt` stops the goal's run (the goal is then ready for another worker).
    pub async fn next(
        &self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: &CancellationToken,
    ) -> Result<Option<Worked>> {
        let store = crate::compose::store::open(&self.ws, env)?;
        let holder = Holder::this_process(&self.dir);
        let Some(claim) = store.claim_fleet_goal(&holder, millis(LEASE))? else {
            return Ok(None);
        };
        tracing::info!(fleet = %claim.fleet.id, goal = claim.goal_id, "claimed a goal");
        let worked = self.work(&claim, &store, env, runtime, interrupt).await;
        if let Err(e) = &worked {
            // Released at once: for another worker when this one could not reach the remote
            // (another may); else it ends, for a person to look at.
            let state = match (e, claim.settle) {
                (Error::Remote { .. } | Error::Git(_), false) => GoalState::Ready,
                (Error::Remote { .. } | Error::Git(_), true) => GoalState::Conflicted,
                _ => GoalState::Ended,
            };
            let _ =
                store.report_fleet_goal(&claim.fleet.id, &claim.goal_id, claim.token, state, None);
        }
        worked.map(Some)
    }

    /// Works on the claimed goal: its worktree, its run under a renewed lease, its push.
    async fn work(
        &self,
        claim: &GoalClaim,
        store: &Store,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: &CancellationToken,
    ) -> Result<Worked> {
        let fleet = &claim.fleet;
        let url = fleet.remote.clone().ok_or(Error::FleetOfGoals)?;
        let home = self.dir.join(fleet.id.as_str());
        let clone = fetched(&home, &url, &fleet.id).await?;
        // The worker's own settings say how its git runs; the goal's run keeps to those the
        // integration branch holds (the workspace is the repository's root).
        let own = tether_config::load(crate::schema(), self.ws.root(), env)?;
        let git = crate::compose::worktree::git_of(&own.config);
        let repo = Repo::discover(&clone, git).await?;
        let tree = worktree(&repo, &home, (&fleet.id, &claim.goal_id)).await?;
        let loaded = tether_config::load(crate::schema(), &tree.dir, env)?;
        let settling = match claim.settle {
            false => None,
            true => match self.prepare_settling(claim, &tree, &loaded).await? {
                Some(settling) => Some(settling),
                // Nothing left to settle: the goal's branch holds the run's, its merge goes through.
                None => {
                    push(&clone, &url, (&fleet.id, &claim.goal_id)).await?;
                    return self.report(store, claim, GoalState::SignedOff, None);
                }
            },
        };
        let run = RunId::generate();
        let paths = settling.as_ref().map(|s| s.paths.clone());
        let working = if settling.is_some() {
            GoalState::Settling
        } else {
            GoalState::Working
        };
        let launch = self.launch(claim, &loaded, &home, (tree.clone(), run.clone(), settling));
        let handle = launch.prepare(env).await?.start(runtime);
        store.report_fleet_goal(&fleet.id, &claim.goal_id, claim.token, working, Some(&run))?;
        let stop = handle.interrupter();
        let beat = runtime.spawn(heartbeat(
            crate::compose::store::open(&self.ws, env)?,
            (fleet.id.clone(), claim.goal_id.clone(), claim.token),
            stop.clone(),
        ));
        let watch = interrupt.clone();
        let relay = runtime.spawn(async move {
            watch.cancelled().await;
            stop.cancel();
        });
        let finished = RunHandle::finished(handle).await;
        beat.abort();
        relay.abort();
        let signed_off = matches!(
            finished.as_ref().map(|f| &f.end),
            Ok(End::Goal(GoalEnd::AllDone { .. }))
        );
        // A settling that left a conflict marker is not pushed: the conflict is the
        // coordinator's to count (another attempt, or a person).
        let left = paths
            .as_deref()
            .map(|paths| super::settle::with_markers(&tree.dir, paths))
            .unwrap_or_default();
        let state = match (signed_off, claim.settle) {
            (true, _) if left.is_empty() => {
                push(&clone, &url, (&fleet.id, &claim.goal_id)).await?;
                GoalState::SignedOff
            }
            (_, true) if interrupt.is_cancelled() => GoalState::Conflicted,
            (_, true) => GoalState::NeedsPerson,
            (false, false) if interrupt.is_cancelled() => GoalState::Ready,
            (_, false) => GoalState::Ended,
        };
        let worked = self.report(store, claim, state, Some(run))?;
        finished?;
        Ok(worked)
    }

    /// Reports the goal's end and says what was done.
    fn report(
        &self,
        store: &Store,
        claim: &GoalClaim,
        state: GoalState,
        run: Option<RunId>,
    ) -> Result<Worked> {
        store.report_fleet_goal(&claim.fleet.id, &claim.goal_id, claim.token, state, None)?;
        Ok(Worked {
            fleet: claim.fleet.id.clone(),
            goal: claim.goal_id.clone(),
            run,
            state,
        })
    }

    /// The goal's worktree ready for its agent to settle its conflicting merge (the run's
    /// branch merged in, the goal active again): what it settles, or `None` when nothing is
    /// left to settle.
    async fn prepare_settling(
        &self,
        claim: &GoalClaim,
        tree: &tether_worktree::Worktree,
        loaded: &tether_config::Loaded,
    ) -> Result<Option<Settling>> {
        let fleet = &claim.fleet;
        let state_dir = self
            .dir
            .join(fleet.id.as_str())
            .join(tether_config::STATE_DIR);
        let env_remove = loaded.config.key_vars();
        let how = super::merge::Merging {
            plan: &fleet.plan_path,
            state_dir: &state_dir,
            git: crate::compose::worktree::git_of(&loaded.config),
            env_remove: &env_remove,
        };
        let integration = format!("refs/remotes/origin/{}", fleet.branch);
        let paths =
            super::settle::prepare(tree, &integration, (&fleet.id, &claim.goal_id), &how, &[])
                .await?;
        Ok(paths.map(|paths| Settling {
            branch: fleet.branch.clone(),
            paths,
        }))
    }

    /// The goal's run: scoped to the goal, in its worktree, with the configuration the
    /// integration branch holds, its records the workspace's the run was started in; settling
    /// its conflicting merge when `settling` says so.
    fn launch(
        &self,
        claim: &GoalClaim,
        loaded: &tether_config::Loaded,
        home: &Path,
        (tree, run, settling): (tether_worktree::Worktree, RunId, Option<Settling>),
    ) -> Launch {
        let fleet = &claim.fleet;
        let ws = Workspace::at(home).standing_for(&fleet.machine, &fleet.workspace);
        let config = loaded.config.clone();
        let max = Some(config.r#loop.max_iterations).filter(|m| *m > 0);
        let budget = crate::compose::launch::loop_budget(&config);
        let mut spec = RunSpec::goal_spec(&config, max, budget, false);
        spec.scope = Some(BTreeSet::from([claim.goal_id.clone()]));
        spec.settling = settling;
        // The configuration it keeps to is the worktree's (the integration branch's).
        let bounds = crate::compose::bounds::for_new_run(&Workspace::at(&tree.dir), loaded);
        let placement = Placement {
            ws: Workspace::at(&tree.dir).with_state_dir(ws.state_dir()),
            worktree: Some(tree),
            run_id: Some(run),
            goal: Some(claim.goal_id.clone()),
        };
        let front = &self.front;
        Launch {
            bounds,
            ws,
            config,
            spec: RunSpec::Goal(spec),
            place: Place {
                worktree: false,
                commit: true,
            },
            placement: Some(placement),
            sinks: Vec::new(),
            console: front.console.clone(),
            by: "worker".to_owned(),
            notice_grace: front.notice_grace,
            observer: front.observer.clone(),
            host: front.host.clone(),
            // The run's budgets, shared by every goal's run on every worker.
            pool: fleet
                .budget
                .map(|limits| BudgetPool::of_fleet(limits, fleet.started_at_ms, fleet.id.clone())),
        }
    }
}

/// The run's repository cloned from `url` into `home/repo` (once), its integration branch and
/// goal branches fetched anew; the clone's root.
async fn fetched(home: &Path, url: &str, fleet: &RunId) -> Result<PathBuf> {
    let clone = home.join("repo");
    let cancel = CancellationToken::new();
    if !clone.join(".git").is_dir() {
        std::fs::create_dir_all(home).map_err(|cause| Error::WorktreeFile {
            what: format!("creating {}", home.display()),
            cause,
        })?;
        let branch = tether_worktree::branch_name(fleet.as_str());
        let out = Exchange::Clone {
            url,
            branch: &branch,
            dir: &clone,
        }
        .run(&[], &cancel)
        .await?;
        super::remote::exchanged(&out, "clone")?;
    }
    let refspecs = [format!(
        "+refs/heads/tether/{fleet}*:refs/remotes/origin/tether/{fleet}*"
    )];
    let out = Exchange::Fetch {
        git_dir: &clone.join(".git"),
        url,
        refspecs: &refspecs,
    }
    .run(&[], &cancel)
    .await?;
    super::remote::exchanged(&out, "fetch")?;
    Ok(clone)
}

/// The goal's worktree in `home`: as a run of this worker left it, or its branch cut from the
/// goal's own branch on the remote (pushed by a worker that stopped) or else from the run's.
async fn worktree(
    repo: &Repo,
    home: &Path,
    (fleet, goal): (&RunId, &str),
) -> Result<tether_worktree::Worktree> {
    let dir = home.join(goal);
    if dir.is_dir() {
        return Ok(repo.reopen_goal(fleet.as_str(), goal, &dir).await?);
    }
    let branch = goal_branch_name(fleet.as_str(), goal);
    let pushed = format!("refs/remotes/origin/{branch}");
    let from = if repo.has_ref(&pushed).await? {
        pushed
    } else {
        format!("refs/remotes/origin/tether/{fleet}")
    };
    Ok(repo.create_goal(fleet.as_str(), goal, &from, &dir).await?)
}

/// Pushes the goal's branch to the remote (a fast-forward only).
async fn push(clone: &Path, url: &str, (fleet, goal): (&RunId, &str)) -> Result<()> {
    let branch = goal_branch_name(fleet.as_str(), goal);
    super::remote::push(&clone.join(".git"), url, &branch).await
}

/// Renews the goal's lease every [`HEARTBEAT`]; a lease lost stops the goal's run (`stop`).
async fn heartbeat(
    store: Store,
    (fleet, goal, token): (RunId, String, i64),
    stop: CancellationToken,
) {
    loop {
        tokio::time::sleep(HEARTBEAT).await;
        match store.renew_fleet_goal(&fleet, &goal, token, millis(LEASE)) {
            Ok(_) => {}
            Err(tether_store::StoreError::LeaseLost { lapse, .. }) => {
                tracing::warn!(%fleet, goal, "the goal's lease was lost ({lapse}): its run stops");
                stop.cancel();
                return;
            }
            // A store that cannot be reached now: the next beat tries again, within the lease.
            Err(e) => tracing::warn!(%fleet, goal, "could not renew the goal's lease: {e}"),
        }
    }
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

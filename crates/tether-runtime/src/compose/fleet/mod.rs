//! Many goals of one plan at once (`tether run --parallel N`): a run of many goals.
//!
//! The run gets a worktree of its own on its integration branch `tether/<run-id>`, cut from
//! `HEAD`. Each goal works in a worktree of its own, on a branch cut from the integration branch
//! as it stands when the goal starts (`tether/<run-id>-<goal>`), as a goal run of its own scoped
//! to that one goal (its own agent process, iterations and sign-off, each sign-off committed on
//! its branch). What happens next is decided by [`tether_core::fleet::Schedule`]: at most
//! `parallel` goals at once, a goal started only when every goal in its `after:` is merged, and
//! a signed-off goal's branch merged into the integration branch, one merge at a time
//! ([`merge`]). A merge that conflicts is undone and left to a person (the goal's branch and the
//! conflicting paths named); the goals waiting on that goal do not start. After every merge the
//! verify commands of every goal merged so far run again on the integration branch, in the
//! run's sandbox ([`recheck`]): one that fails stops the run, naming the goals. A merged goal's
//! worktree is removed (its branch stays). The person's checkout is never written: the
//! integration branch is the result.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tether_config::Env;
use tether_core::fleet::{Finish, Schedule, Step};
use tether_core::goal::GoalEnd;
use tether_store::RunId;
use tether_worktree::{Merge, Repo, Worktree};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::compose::launch::{End, Finished, Launch, RunHandle, RunSpec};
use crate::compose::worktree::Placement;
use crate::error::{Error, Result};

mod merge;
mod plan;
mod recheck;

use merge::{Merging, Said};
pub use recheck::Regression;

/// A run of many goals, from the launch of a goal run (`spec` a new goal run over the plan)
/// and how many goals work at once.
pub struct Fleet {
    /// The goal run each goal's run is made from (its configuration, budgets, sinks, ...).
    pub launch: Launch,
    /// How many goals work at once.
    pub parallel: usize,
}

/// How a run of many goals ended.
#[derive(Debug)]
pub struct FleetEnd {
    /// The run.
    pub run: RunId,
    /// Its integration branch: the result.
    pub branch: String,
    /// Where each goal stood.
    pub finish: Finish,
    /// The goals merged, in order.
    pub merged: Vec<String>,
    /// Each goal's own run.
    pub runs: Vec<(String, RunId)>,
    /// The goals whose merge conflicted, with the conflicting paths.
    pub conflicts: Vec<(String, Vec<String>)>,
    /// The merge after which a merged goal's verify failed, when one did: the run stopped.
    pub regression: Option<Regression>,
}

/// A goal's run ended: the goal, and how.
type Ended = (String, Result<Finished>);

/// How a goal's worktree is named among the run's (`<run>-<goal>`).
fn goal_run_name(run: &RunId, goal: &str) -> String {
    format!("{run}-{goal}")
}

/// `d` in milliseconds, to a tenth.
fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 10_000.0).round() / 10.0
}

/// Refuses a run of many goals in `ws` before anything is asked or made for it: its goals work
/// in git worktrees of the repository, which must have a commit to branch from.
pub async fn ready(ws: &tether_config::Workspace, config: &tether_config::Config) -> Result<()> {
    let git = crate::compose::worktree::git_of(config);
    match Repo::discover(ws.root(), git).await {
        Ok(_) => Ok(()),
        Err(tether_worktree::WorktreeError::NotARepo { detail, .. }) => {
            Err(Error::FleetNeedsRepository { detail })
        }
        Err(e) => Err(e.into()),
    }
}

impl Fleet {
    /// Drives the run to its end on `runtime`: every goal's run started as the schedule says,
    /// merged back as each signs off. `interrupt` interrupts every goal's run.
    pub async fn drive(
        self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: CancellationToken,
    ) -> Result<FleetEnd> {
        // Several runs and this coordinator wait for children of their own.
        tether_core::subreaper::share_process();
        let Fleet { launch, parallel } = self;
        let RunSpec::Goal(template) = &launch.spec else {
            return Err(Error::FleetOfGoals);
        };
        let run = RunId::generate();
        let (repo, tree, integration) =
            crate::compose::worktree::for_fleet(&launch.ws, &launch.config, &run).await?;
        let plan_path = launch.config.plan_path(launch.ws.root());
        let doc = tether_plan::file::read(&plan_path).map_err(Error::FleetPlan)?;
        let recheck = recheck::Recheck::new(&launch, &integration, doc.plan())?;
        let c = Coordinator {
            schedule: plan::schedule_of(doc.plan(), parallel),
            plan_rel: plan::plan_in(&repo, &plan_path),
            tree,
            run,
            template: template.clone(),
            recheck,
            repo,
            launch: &launch,
            handles: HashMap::new(),
            trees: HashMap::new(),
            ended: mpsc::unbounded_channel(),
            merged: Vec::new(),
            runs: Vec::new(),
            conflicts: Vec::new(),
            regression: None,
        };
        c.drive(env, runtime, interrupt).await
    }
}

/// The coordinator of one run of many goals.
struct Coordinator<'a> {
    schedule: Schedule,
    plan_rel: String,
    tree: Worktree,
    run: RunId,
    template: tether_core::goal::GoalSpec,
    recheck: recheck::Recheck,
    repo: Repo,
    launch: &'a Launch,
    /// The goals working, each with what interrupts its run.
    handles: HashMap<String, CancellationToken>,
    /// The worktree of each goal started and not merged yet.
    trees: HashMap<String, PathBuf>,
    ended: (mpsc::UnboundedSender<Ended>, mpsc::UnboundedReceiver<Ended>),
    merged: Vec<String>,
    runs: Vec<(String, RunId)>,
    conflicts: Vec<(String, Vec<String>)>,
    regression: Option<Regression>,
}

impl Coordinator<'_> {
    async fn drive(
        mut self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: CancellationToken,
    ) -> Result<FleetEnd> {
        loop {
            if self.regression.is_none() {
                self.take_steps(env, runtime).await?;
            }
            if self.handles.is_empty() {
                return Ok(self.end());
            }
            let ended = tokio::select! {
                ended = self.ended.1.recv() => ended,
                () = interrupt.cancelled() => {
                    self.interrupt_all();
                    self.ended.1.recv().await
                }
            };
            let Some((goal, finished)) = ended else {
                return Err(Error::Task("every goal's run ended unheard".to_owned()));
            };
            self.goal_ended(&goal, finished);
        }
    }

    /// Every step the schedule gives, until a merge or a start gives no more (or a merge broke
    /// what was merged before).
    async fn take_steps(
        &mut self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        while let steps = self.schedule.steps()
            && !steps.is_empty()
        {
            for step in steps {
                match step {
                    Step::Start(goal) => self.start(&goal, env, runtime).await?,
                    Step::Merge(goal) => self.merge(&goal).await?,
                    // Only with more than one merge attempt, which this run does not give.
                    Step::Settle { goal, .. } | Step::AskPerson(goal) => {
                        self.schedule.ended(&goal);
                    }
                }
                if self.regression.is_some() {
                    self.interrupt_all();
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Starts the run of `goal` alone, in its worktree cut from the integration branch.
    async fn start(
        &mut self,
        goal: &str,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        let began = Instant::now();
        let placement = crate::compose::worktree::for_fleet_goal(
            &self.repo,
            &self.launch.ws,
            &self.launch.config,
            (&self.run, goal),
            &self.tree,
        )
        .await?;
        let git = began.elapsed();
        if let Some(tree) = &placement.worktree {
            self.trees.insert(goal.to_owned(), tree.dir.clone());
        }
        let handle = self
            .child(goal, placement)
            .prepare(env)
            .await?
            .start(runtime);
        // What starting a goal costs the run beside git (its run composed: the sandbox, the
        // store, the executor), for the fleet's benchmark and a person reading the log.
        tracing::info!(
            goal,
            coordinator_ms = millis(began.elapsed().saturating_sub(git)),
            git_ms = millis(git),
            "goal started"
        );
        self.handles.insert(goal.to_owned(), handle.interrupter());
        let tx = self.ended.0.clone();
        let goal = goal.to_owned();
        runtime.spawn(async move {
            let _ = tx.send((goal, RunHandle::finished(handle).await));
        });
        Ok(())
    }

    /// The launch of `goal`'s own run: the run's, scoped to the goal, placed in its worktree.
    fn child(&self, goal: &str, placement: Placement) -> Launch {
        let l = self.launch;
        let mut spec = self.template.clone();
        spec.scope = Some(BTreeSet::from([goal.to_owned()]));
        Launch {
            ws: l.ws.clone(),
            config: l.config.clone(),
            bounds: l.bounds.clone(),
            spec: RunSpec::Goal(spec),
            place: l.place,
            placement: Some(placement),
            sinks: l.sinks.clone(),
            console: l.console.clone(),
            by: l.by.clone(),
            notice_grace: l.notice_grace,
            observer: l.observer.clone(),
            host: l.host.clone(),
        }
    }

    /// Merges `goal` back; once merged, the verify of every goal merged so far runs again.
    async fn merge(&mut self, goal: &str) -> Result<()> {
        let env_remove = self.launch.config.key_vars();
        let state_dir = self.launch.ws.state_dir();
        let how = Merging {
            plan: &self.plan_rel,
            state_dir: &state_dir,
            git: crate::compose::worktree::git_of(&self.launch.config),
            env_remove: &env_remove,
        };
        let began = Instant::now();
        let merged = merge::merge(&self.tree, &self.run, goal, &how).await?;
        let git = began.elapsed();
        self.launch.observer.note(merged.note(goal, &self.tree));
        match merged {
            Merge::Merged { .. } | Merge::UpToDate => {
                self.schedule.merged(goal);
                self.merged.push(goal.to_owned());
                self.tidy(goal).await;
                let checking = Instant::now();
                self.regression = self.recheck.after(goal, &self.merged).await;
                tracing::info!(
                    goal,
                    git_ms = millis(git),
                    recheck_ms = millis(checking.elapsed()),
                    "goal merged"
                );
            }
            Merge::Conflict { paths } => {
                self.schedule.conflicted(goal);
                self.conflicts.push((goal.to_owned(), paths));
            }
        }
        Ok(())
    }

    /// A goal's run ended: signed off (its merge comes), or not.
    fn goal_ended(&mut self, goal: &str, finished: Result<Finished>) {
        self.handles.remove(goal);
        match finished {
            Ok(finished) => {
                self.runs.push((goal.to_owned(), finished.run.clone()));
                let done = matches!(finished.end, End::Goal(GoalEnd::AllDone { .. }));
                if done && self.regression.is_none() {
                    self.schedule.signed_off(goal);
                } else {
                    self.schedule.ended(goal);
                }
            }
            Err(e) => {
                tracing::warn!(goal, "the goal's run failed: {e}");
                self.schedule.ended(goal);
            }
        }
    }

    /// Removes the worktree of `goal`, merged: its branch keeps its work. A worktree that
    /// cannot be removed stays (`tether worktree` lists it), said in the log.
    async fn tidy(&mut self, goal: &str) {
        let Some(dir) = self.trees.remove(goal) else {
            return;
        };
        let id = goal_run_name(&self.run, goal);
        if let Err(e) = self.repo.remove(&id, &dir, false).await {
            tracing::warn!(goal, dir = %dir.display(), "could not remove the goal's worktree: {e}");
        }
    }

    fn interrupt_all(&self) {
        for stop in self.handles.values() {
            stop.cancel();
        }
    }

    /// How the run ended, once no goal works.
    fn end(self) -> FleetEnd {
        let finish = match &self.regression {
            Some(_) => Finish::Stuck {
                ended: Vec::new(),
                waiting: self.schedule.not_merged(),
            },
            None => self.schedule.finish().unwrap_or(Finish::Stuck {
                ended: Vec::new(),
                waiting: self.schedule.not_merged(),
            }),
        };
        FleetEnd {
            run: self.run,
            branch: self.tree.branch,
            finish,
            merged: self.merged,
            runs: self.runs,
            conflicts: self.conflicts,
            regression: self.regression,
        }
    }
}

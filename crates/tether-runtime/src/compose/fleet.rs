//! Many goals of one plan at once (`tether run --parallel N`): a run of many goals.
//!
//! The run gets a worktree of its own on its integration branch `tether/<run-id>`, cut from
//! `HEAD`. Each goal works in a worktree of its own, on a branch cut from the integration branch
//! as it stands when the goal starts (`tether/<run-id>-<goal>`), as a goal run of its own scoped
//! to that one goal (its own agent process, iterations and sign-off, each sign-off committed on
//! its branch). What happens next is decided by [`tether_core::fleet::Schedule`]: at most
//! `parallel` goals at once, a goal started only when every goal in its `after:` is merged, and
//! a signed-off goal's branch merged into the integration branch, one merge at a time. A merge
//! that conflicts is undone and left to a person (the goal's branch and the conflicting paths
//! named); the goals waiting on that goal do not start. The person's checkout is never
//! written: the integration branch is the result.

use std::collections::{BTreeSet, HashMap};

use tether_config::Env;
use tether_core::fleet::{Finish, Schedule, Step};
use tether_core::goal::GoalEnd;
use tether_store::RunId;
use tether_worktree::{Merge, OnConflict, Repo, Worktree, goal_branch_name};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::compose::launch::{End, Finished, Launch, Note, RunSpec};
use crate::error::{Error, Result};

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
}

/// A goal's run ended: the goal, and how.
type Ended = (String, Result<Finished>);

impl Fleet {
    /// Drives the run to its end on `runtime`: every goal's run started as the schedule says,
    /// merged back as each signs off. `interrupt` interrupts every goal's run.
    pub async fn drive(
        self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: CancellationToken,
    ) -> Result<FleetEnd> {
        let Fleet { launch, parallel } = self;
        // Several runs and this coordinator wait for children of their own.
        tether_core::subreaper::share_process();
        let RunSpec::Goal(template) = &launch.spec else {
            return Err(Error::FleetOfGoals);
        };
        let template = template.clone();
        let (repo, integration, run) =
            crate::compose::worktree::for_fleet(&launch.ws, &launch.config).await?;
        let plan_path = launch.config.plan_path(launch.ws.root());
        let doc = tether_plan::file::read(&plan_path).map_err(Error::FleetPlan)?;
        let mut schedule = schedule_of(doc.plan(), parallel);
        let plan_rel = plan_in(&repo, &plan_path);
        let state_dir = launch.ws.state_dir();
        let env_remove = launch.config.key_vars();
        let (tx, mut rx) = mpsc::unbounded_channel::<Ended>();
        let mut end = FleetEnd {
            run: run.clone(),
            branch: integration.branch.clone(),
            finish: Finish::AllMerged,
            merged: Vec::new(),
            runs: Vec::new(),
            conflicts: Vec::new(),
        };
        let mut handles = HashMap::new();
        loop {
            // Every step the schedule gives, until a merge or a start gives no more.
            while let steps = schedule.steps()
                && !steps.is_empty()
            {
                for step in steps {
                    match step {
                        Step::Start(goal) => {
                            let started = Start {
                                launch: &launch,
                                repo: &repo,
                                integration: &integration,
                                run: &run,
                                template: &template,
                            };
                            let handle = started.goal(&goal, env, runtime).await?;
                            handles.insert(goal.clone(), handle.interrupter());
                            let tx = tx.clone();
                            runtime.spawn(async move {
                                let _ = tx.send((goal, handle.finished().await));
                            });
                        }
                        Step::Merge(goal) => {
                            let how = Merging {
                                plan: &plan_rel,
                                state_dir: &state_dir,
                                git: crate::compose::worktree::git_of(&launch.config),
                                env_remove: &env_remove,
                            };
                            let merged = merge(&integration, &run, &goal, &how).await?;
                            launch.observer.note(merged.note(&goal, &integration));
                            match merged {
                                Merge::Merged { .. } | Merge::UpToDate => {
                                    schedule.merged(&goal);
                                    end.merged.push(goal);
                                }
                                Merge::Conflict { paths } => {
                                    schedule.conflicted(&goal);
                                    end.conflicts.push((goal, paths));
                                }
                            }
                        }
                        // Only with more than one merge attempt, which this run does not give.
                        Step::Settle { goal, .. } | Step::AskPerson(goal) => schedule.ended(&goal),
                    }
                }
            }
            if let Some(finish) = schedule.finish() {
                end.finish = finish;
                return Ok(end);
            }
            if schedule.working() == 0 {
                return Err(Error::Task(
                    "a run of many goals had nothing to wait for yet had not ended".to_owned(),
                ));
            }
            let ended = tokio::select! {
                ended = rx.recv() => ended,
                () = interrupt.cancelled() => {
                    for stop in handles.values() {
                        stop.cancel();
                    }
                    rx.recv().await
                }
            };
            let Some((goal, finished)) = ended else {
                return Err(Error::Task("every goal's run ended unheard".to_owned()));
            };
            handles.remove(&goal);
            match finished {
                Ok(finished) => {
                    end.runs.push((goal.clone(), finished.run.clone()));
                    if matches!(finished.end, End::Goal(GoalEnd::AllDone { .. })) {
                        schedule.signed_off(&goal);
                    } else {
                        schedule.ended(&goal);
                    }
                }
                Err(e) => {
                    tracing::warn!(goal, "the goal's run failed: {e}");
                    schedule.ended(&goal);
                }
            }
        }
    }
}

/// What starting a goal's run needs.
struct Start<'a> {
    launch: &'a Launch,
    repo: &'a Repo,
    integration: &'a Worktree,
    run: &'a RunId,
    template: &'a tether_core::goal::GoalSpec,
}

impl Start<'_> {
    /// The run of `goal` alone, in its worktree cut from the integration branch, started.
    async fn goal(
        &self,
        goal: &str,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<crate::compose::launch::RunHandle> {
        let l = self.launch;
        let placement = crate::compose::worktree::for_fleet_goal(
            self.repo,
            &l.ws,
            &l.config,
            (self.run, goal),
            self.integration,
        )
        .await?;
        let mut spec = self.template.clone();
        spec.scope = Some(BTreeSet::from([goal.to_owned()]));
        let child = Launch {
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
        };
        let prepared = child.prepare(env).await?;
        Ok(prepared.start(runtime))
    }
}

/// Merges `goal`'s branch into the integration branch. The plan file is settled by keeping
/// both sides (each branch signs its own goals off in it; the store holds who signed what off);
/// any other conflict undoes the merge.
async fn merge(
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
struct Merging<'a> {
    plan: &'a str,
    state_dir: &'a std::path::Path,
    git: tether_git::Confinement,
    env_remove: &'a [String],
}

trait Said {
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

/// The plan file's path relative to the repository's top (as git names it in a merge).
fn plan_in(repo: &Repo, plan: &std::path::Path) -> String {
    let top = std::fs::canonicalize(repo.toplevel()).unwrap_or_else(|_| repo.toplevel().into());
    let plan = std::fs::canonicalize(plan).unwrap_or_else(|_| plan.to_path_buf());
    plan.strip_prefix(&top)
        .unwrap_or(&plan)
        .to_string_lossy()
        .into_owned()
}

/// The schedule of the plan's goals: every active goal, and every goal already done (which
/// counts as merged), each with its `after:`; a goal an active goal waits on that is neither
/// (open, cancelled) is not this run's to do, so what waits on it never starts.
fn schedule_of(plan: &tether_plan::Plan, parallel: usize) -> Schedule {
    use tether_plan::Status;
    let waited_on: BTreeSet<&str> = plan
        .active_goals()
        .flat_map(|g| g.after().iter().map(String::as_str))
        .collect();
    let mut outside = Vec::new();
    let goals: Vec<_> = plan
        .goals
        .iter()
        .filter_map(|g| {
            let id = g.id()?.to_owned();
            match g.status() {
                Status::Active => Some((id, g.after().to_vec(), false)),
                Status::Done => Some((id, g.after().to_vec(), true)),
                Status::Open | Status::Cancelled if waited_on.contains(id.as_str()) => {
                    outside.push(id.clone());
                    Some((id, Vec::new(), false))
                }
                Status::Open | Status::Cancelled => None,
            }
        })
        .collect();
    // A conflict is a person's to settle: the schedule asks at the first one.
    let mut schedule = Schedule::new(goals, parallel, 1);
    for id in &outside {
        schedule.ended(id);
    }
    schedule
}

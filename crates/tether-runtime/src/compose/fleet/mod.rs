//! Many goals of one plan at once (`tether run --parallel N`): a run of many goals.
//!
//! The run gets a worktree of its own on its integration branch `tether/<run-id>`, cut from
//! `HEAD`. Each goal works in a worktree of its own, on a branch cut from the integration branch
//! as it stands when the goal starts (`tether/<run-id>-<goal>`), as a goal run of its own scoped
//! to that one goal (its own agent process, iterations and sign-off, each sign-off committed on
//! its branch). What happens next is decided by [`tether_core::fleet::Schedule`]: at most
//! `parallel` goals at once, a goal started only when every goal in its `after:` is merged, and
//! a signed-off goal's branch merged into the integration branch, one merge at a time
//! ([`merge`]). A merge that conflicts is undone, and the goal's agent settles it ([`settle`]):
//! the integration branch is merged into the goal's, the conflicts left in its files, and a
//! run of the goal's own settles them and signs the goal off again; then its branch is merged
//! back. At the `[run] merge_attempts`th conflict a person is asked instead ([`person`]):
//! `retry` merges the goal's branch again (they settled it by hand), anything else leaves it;
//! the goals waiting on it do not start meanwhile. After every merge the verify commands of
//! every goal merged so far run again on the integration branch, in the run's sandbox
//! ([`recheck`]): one that fails stops the run, naming the goals. A merged goal's worktree is
//! removed (its branch stays). The person's checkout is never written: the integration branch
//! is the result.
//!
//! Here are the run's types and the coordinator's loop; the run composed in [`compose`], a
//! goal's run started (or offered to workers) in [`start`].

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use tether_config::Env;
use tether_core::fleet::{Finish, Phase, Schedule, Step};
use tether_core::goal::GoalEnd;
use tether_core::looping::BudgetPool;
use tether_store::RunId;
use tether_worktree::{Repo, Worktree};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::compose::asking::Asker;
use crate::compose::launch::{End, Finished, Launch};
use crate::error::{Error, Result};

mod again;
mod compose;
mod merge;
mod person;
mod plan;
mod recheck;
mod record;
pub mod remote;
mod settle;
mod start;
pub mod worker;

use person::Heard;
pub use recheck::Regression;

/// A run of many goals, from the launch of a goal run (`spec` a new goal run over the plan)
/// and how many goals work at once.
pub struct Fleet {
    /// Its id, drawn beforehand (its integration branch is `tether/<id>`).
    pub id: RunId,
    /// The goal run each goal's run is made from (its configuration, budgets, sinks, ...).
    pub launch: Launch,
    /// How many goals work at once.
    pub parallel: usize,
    /// Its goals work on other machines (`tether worker`), through this shared remote of the
    /// repository (a remote's name or a URL); `None`: on this machine.
    pub remote: Option<String>,
}

/// A run of many goals under way: its integration branch made and the run recorded, no goal
/// started yet.
pub struct Going(Coordinator);

impl Going {
    /// The run's id.
    pub fn id(&self) -> &RunId {
        &self.0.run
    }

    /// Drives the run to its end on `runtime`: every goal's run started as the schedule says,
    /// merged back as each signs off. `interrupt` interrupts every goal's run.
    pub async fn drive(
        self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: CancellationToken,
    ) -> Result<FleetEnd> {
        self.0.drive(env, runtime, interrupt).await
    }
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
    /// The goals whose conflicting merge was left to a person and not merged, with the paths
    /// of their last conflict.
    pub conflicts: Vec<(String, Vec<String>)>,
    /// The merge after which a merged goal's verify failed, when one did: the run stopped.
    pub regression: Option<Regression>,
    /// The run's budget, when its goals' runs spent it together (no goal started after).
    pub budget_spent: Option<tether_store::SpentBudget>,
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

/// The coordinator of one run of many goals.
struct Coordinator {
    schedule: Schedule,
    plan_rel: String,
    tree: Worktree,
    run: RunId,
    template: tether_core::goal::GoalSpec,
    recheck: recheck::Recheck,
    repo: Repo,
    launch: Launch,
    /// The goals working, each with what interrupts its run.
    handles: HashMap<String, CancellationToken>,
    /// The worktree of each goal started and not merged yet.
    trees: HashMap<String, Worktree>,
    /// How each goal that had started before the run was taken up again goes on.
    earlier: HashMap<String, again::Before>,
    ended: (mpsc::UnboundedSender<Ended>, mpsc::UnboundedReceiver<Ended>),
    merged: Vec<String>,
    runs: Vec<(String, RunId)>,
    /// The paths of each goal's last conflicting merge, while it is not merged.
    conflicts: HashMap<String, Vec<String>>,
    regression: Option<Regression>,
    /// The desk a person is asked at.
    asker: Arc<Asker>,
    /// The goals a person is asked about, each with what withdraws the question.
    asking: HashMap<String, CancellationToken>,
    heard: (mpsc::UnboundedSender<Heard>, mpsc::UnboundedReceiver<Heard>),
    /// Whether the run was interrupted: no goal starts after.
    interrupted: bool,
    /// The run's budgets, shared by its goals' runs.
    pool: BudgetPool,
    /// The store's record of the run.
    record: record::Record,
    /// The shared remote its goals' workers fetch from and push to, when they work elsewhere.
    remote: Option<String>,
    /// The goals offered to workers and not reported yet.
    offered: HashSet<String>,
    /// The goals a worker still held when the run was taken up again: waited for when they
    /// start, not offered again.
    held: HashSet<String>,
}

impl Coordinator {
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
            self.record.sync(&self.schedule);
            if self.regression.is_some() || interrupt.is_cancelled() {
                self.withdraw_questions();
            }
            if self.handles.is_empty() && self.asking.is_empty() && self.offered.is_empty() {
                return Ok(self.end());
            }
            tokio::select! {
                ended = self.ended.1.recv(), if !self.handles.is_empty() => {
                    let Some((goal, finished)) = ended else {
                        return Err(Error::Task("every goal's run ended unheard".to_owned()));
                    };
                    self.goal_ended(&goal, finished, runtime);
                }
                heard = self.heard.1.recv(), if !self.asking.is_empty() => {
                    if let Some((goal, decided)) = heard {
                        self.decided(&goal, decided);
                    }
                }
                () = interrupt.cancelled(), if !self.interrupted => {
                    self.interrupted = true;
                    self.interrupt_all();
                    self.withdraw_questions();
                    // The goals on workers go on there; this run stops waiting for them.
                    self.offered.clear();
                }
                () = tokio::time::sleep(remote::COLLECT), if !self.offered.is_empty() => {
                    self.collect(runtime).await?;
                }
            }
        }
    }

    /// Every step the schedule gives, until a merge or a start gives no more (or a merge broke
    /// what was merged before).
    async fn take_steps(
        &mut self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        while !self.interrupted
            && let steps = self.schedule.steps()
            && !steps.is_empty()
        {
            for step in steps {
                match step {
                    Step::Start(goal) => self.start(&goal, env, runtime).await?,
                    Step::Merge(goal) => self.merge(&goal, runtime).await?,
                    Step::Settle { goal, .. } => self.settle(&goal, env, runtime).await?,
                    Step::AskPerson(goal) => self.ask_person(&goal, runtime),
                }
                if self.regression.is_some() {
                    self.interrupt_all();
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// A goal's run ended: signed off (its merge comes), or not. A run that settled a conflict
    /// and left a conflict marker is another conflict.
    fn goal_ended(
        &mut self,
        goal: &str,
        finished: Result<Finished>,
        runtime: &tokio::runtime::Handle,
    ) {
        self.handles.remove(goal);
        let settling = self.schedule.phase(goal) == Some(&Phase::Working { settling: true });
        match finished {
            Ok(finished) => {
                self.runs.push((goal.to_owned(), finished.run.clone()));
                let done = matches!(finished.end, End::Goal(GoalEnd::AllDone { .. }));
                if !done || self.regression.is_some() {
                    self.schedule.ended(goal);
                    return;
                }
                let left = match (settling, self.trees.get(goal), self.conflicts.get(goal)) {
                    (true, Some(tree), Some(paths)) => settle::with_markers(&tree.dir, paths),
                    _ => Vec::new(),
                };
                if left.is_empty() {
                    self.schedule.signed_off(goal);
                } else {
                    self.conflicted(goal, left, runtime);
                }
            }
            Err(e) => {
                tracing::warn!(goal, "the goal's run failed: {e}");
                self.schedule.ended(goal);
            }
        }
    }

    /// The run's budget its goals' runs have spent together, if they have (a store that
    /// cannot say is taken as not spent: each goal's run checks it again).
    fn budget_spent(&self) -> Option<tether_store::SpentBudget> {
        match self
            .pool
            .spent(self.record.journal(), tether_store::now_ms())
        {
            Ok(overrun) => overrun.map(|overrun| tether_store::SpentBudget {
                overrun,
                goal_id: None,
                raised: false,
                shared: true,
            }),
            Err(e) => {
                tracing::warn!("could not read what the goals' runs spent: {e}");
                None
            }
        }
    }

    fn interrupt_all(&self) {
        for stop in self.handles.values() {
            stop.cancel();
        }
    }

    /// How the run ended, once no goal works.
    fn end(mut self) -> FleetEnd {
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
        let mut conflicts = Vec::new();
        for goal in self.schedule.not_merged() {
            if self.schedule.phase(&goal) == Some(&Phase::NeedsPerson)
                && let Some(paths) = self.conflicts.remove(&goal)
            {
                conflicts.push((goal, paths));
            }
        }
        let outcome = match (&finish, &self.regression) {
            (_, Some(_)) => "stopped",
            (Finish::AllMerged, None) => "all_merged",
            (Finish::Stuck { .. }, None) if self.interrupted => "interrupted",
            (Finish::Stuck { .. }, None) => "stuck",
        };
        self.record.end(&self.schedule, outcome);
        let budget_spent = match finish {
            Finish::AllMerged => None,
            Finish::Stuck { .. } => self.budget_spent(),
        };
        FleetEnd {
            run: self.run,
            branch: self.tree.branch,
            budget_spent,
            finish,
            merged: self.merged,
            runs: self.runs,
            conflicts,
            regression: self.regression,
        }
    }
}

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

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_config::Env;
use tether_core::fleet::{Finish, Phase, Schedule, Step};
use tether_core::goal::{GoalEnd, Settling};
use tether_core::looping::BudgetPool;
use tether_store::RunId;
use tether_worktree::{Merge, Repo, Worktree, goal_branch_name};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::compose::asking::Asker;
use crate::compose::launch::{End, Finished, Launch, RunHandle, RunSpec, Settles};
use crate::compose::worktree::Placement;
use crate::error::{Error, Result};

mod again;
mod merge;
mod person;
mod plan;
mod recheck;
mod record;
pub mod remote;
mod settle;
pub mod worker;

use merge::{Merging, Said};
use person::{Conflicted, Decided, Heard};
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

impl Fleet {
    /// [`Fleet::begin`], then [`Going::drive`].
    pub async fn drive(
        self,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
        interrupt: CancellationToken,
    ) -> Result<FleetEnd> {
        self.begin(env).await?.drive(env, runtime, interrupt).await
    }

    /// Makes the run's integration branch and worktree, reads the plan and records the run;
    /// what cannot be (no repository, a plan that does not read, no store) is refused here,
    /// before any goal starts.
    pub async fn begin(self, env: &(dyn Env + Sync)) -> Result<Going> {
        self.compose(env, None).await
    }

    /// Takes the run of many goals `self.id` up again, as the store recorded it (`before`):
    /// from its integration branch and the worktrees its goals left (see `again.rs`); refused
    /// when it merged every goal already.
    pub async fn again(self, env: &(dyn Env + Sync), before: tether_store::Fleet) -> Result<Going> {
        if before.outcome.as_deref() == Some("all_merged") {
            return Err(Error::FleetDone {
                run: self.id.to_string(),
                branch: before.branch,
            });
        }
        self.compose(env, Some(before)).await
    }

    /// The coordinator of a new run of many goals, or of one taken up again (`before`).
    async fn compose(
        self,
        env: &(dyn Env + Sync),
        before: Option<tether_store::Fleet>,
    ) -> Result<Going> {
        // Several runs and this coordinator wait for children of their own.
        tether_core::subreaper::share_process();
        let Fleet {
            id: run,
            launch,
            parallel,
            remote,
        } = self;
        let RunSpec::Goal(template) = &launch.spec else {
            return Err(Error::FleetOfGoals);
        };
        let template = template.clone();
        let (repo, tree, integration) =
            crate::compose::worktree::for_fleet(&launch.ws, &launch.config, &run, before.is_some())
                .await?;
        let plan_path = launch.config.plan_path(launch.ws.root());
        let doc = tether_plan::file::read(&plan_path).map_err(Error::FleetPlan)?;
        let recheck = recheck::Recheck::new(&launch, &integration, doc.plan())?;
        let store = crate::compose::store::open(&launch.ws, env)?;
        let journal =
            tether_store::Journal::new(crate::compose::store::open(&launch.ws, env)?, Vec::new())?;
        let asker = Asker::new(&launch.ws, &launch.config, store, launch.console.clone())?;
        let mut limits = template.budget;
        limits.iterations = template.max_iterations;

        let url = match &remote {
            Some(remote) => {
                // The workers read the plan and tether.toml at the integration branch's root.
                if integration.ws.root() != tree.dir {
                    return Err(Error::WorkersNeedRoot {
                        workspace: launch.ws.root().display().to_string(),
                    });
                }
                let url = remote::remote_url(&repo, remote).await?;
                let (env_remove, state_dir) = (launch.config.key_vars(), launch.ws.state_dir());
                let with = tether_worktree::Snapshotting {
                    state_dir: &state_dir,
                    git: crate::compose::worktree::git_of(&launch.config),
                    env_remove: &env_remove,
                };
                remote::publish(&repo, &tree, &url, &with).await?;
                Some(url)
            }
            None => None,
        };
        let attempts = launch.config.run.merge_attempts;
        let mut schedule = plan::schedule_of(doc.plan(), parallel, attempts);
        // Goals on workers spend from the budget every worker reads from the store.
        let pool = match url {
            Some(_) => BudgetPool::of_fleet(limits, tether_store::now_ms(), run.clone()),
            None => BudgetPool::new(limits, tether_store::now_ms()),
        };
        let new = tether_store::NewFleet {
            id: run.clone(),
            workspace: launch.ws.root().to_path_buf(),
            plan_path: template.plan.clone(),
            branch: tree.branch.clone(),
            remote: url.clone(),
            budget: Some(limits),
            parallel: u32::try_from(parallel).unwrap_or(u32::MAX),
            goals: schedule
                .goals()
                .map(|(goal, after, _)| (goal.to_owned(), after.to_vec()))
                .collect(),
        };
        let (record, taken_up) = match &before {
            None => (
                record::Record::begin(journal, &new, &schedule, url.is_some()),
                again::TakenUp::default(),
            ),
            Some(before) => {
                let now = tether_store::now_ms();
                let taken_up = again::apply(before, &mut schedule, &journal.store(), now);
                let record = record::Record::again(journal, &run, &schedule, url.is_some());
                (record, taken_up)
            }
        };
        let again::TakenUp {
            earlier,
            to_merge,
            held,
        } = taken_up;
        let mut trees = HashMap::new();
        for goal in to_merge {
            let placement = crate::compose::worktree::for_fleet_goal_again(
                &repo,
                &launch.ws,
                (&run, &goal),
                false,
            )
            .await?;
            trees.extend(placement.worktree.map(|tree| (goal, tree)));
        }
        let c = Coordinator {
            schedule,
            plan_rel: plan::plan_in(&repo, &plan_path),
            tree,
            run,
            template,
            recheck,
            repo,
            launch,
            handles: HashMap::new(),
            trees,
            earlier,
            ended: mpsc::unbounded_channel(),
            merged: Vec::new(),
            runs: Vec::new(),
            conflicts: HashMap::new(),
            regression: None,
            asker: Arc::new(asker),
            asking: HashMap::new(),
            heard: mpsc::unbounded_channel(),
            interrupted: false,
            pool,
            record,
            remote: url,
            offered: HashSet::new(),
            held: held.into_iter().collect(),
        };
        Ok(Going(c))
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

    /// Starts the run of `goal` alone, in its worktree cut from the integration branch.
    async fn start(
        &mut self,
        goal: &str,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        if self.budget_spent().is_some() {
            self.schedule.ended(goal);
            return Ok(());
        }
        if self.remote.is_some() {
            let began = Instant::now();
            if !self.held.remove(goal) {
                self.record.offer(goal);
            }
            self.offered.insert(goal.to_owned());
            // Offering a goal costs the run a write to the store; git works on the worker.
            tracing::info!(
                goal,
                coordinator_ms = millis(began.elapsed()),
                git_ms = 0.0,
                "goal started"
            );
            return Ok(());
        }
        let began = Instant::now();
        let before = self.earlier.remove(goal);
        let placement = match &before {
            None => {
                crate::compose::worktree::for_fleet_goal(
                    &self.repo,
                    &self.launch.ws,
                    &self.launch.config,
                    (&self.run, goal),
                    &self.tree,
                )
                .await?
            }
            Some(before) => {
                let new_run = *before == again::Before::Reopen;
                crate::compose::worktree::for_fleet_goal_again(
                    &self.repo,
                    &self.launch.ws,
                    (&self.run, goal),
                    new_run,
                )
                .await?
            }
        };
        let git = began.elapsed();
        if let Some(tree) = &placement.worktree {
            self.trees.insert(goal.to_owned(), tree.clone());
        }
        let launch = match before {
            Some(again::Before::Resume(run)) => self.child_of(RunSpec::Resume(run), placement),
            None | Some(again::Before::Reopen) => self.child(goal, placement, None),
        };
        self.launch_goal(goal, launch, env, runtime).await?;
        // What starting a goal costs the run beside git (its run composed: the sandbox, the
        // store, the executor), for the fleet's benchmark and a person reading the log.
        tracing::info!(
            goal,
            coordinator_ms = millis(began.elapsed().saturating_sub(git)),
            git_ms = millis(git),
            "goal started"
        );
        Ok(())
    }

    /// Starts `launch`, a run of `goal`'s own; its end comes back to the coordinator.
    async fn launch_goal(
        &mut self,
        goal: &str,
        launch: Launch,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        let run = match (&launch.spec, &launch.placement) {
            (RunSpec::Resume(run), _) => Some(run),
            (_, Some(placement)) => placement.run_id.as_ref(),
            (_, None) => None,
        };
        if let Some(run) = run {
            self.pool.join(run);
            self.record.working(goal, run);
        }
        let handle = launch.prepare(env).await?.start(runtime);
        self.handles.insert(goal.to_owned(), handle.interrupter());
        let tx = self.ended.0.clone();
        let goal = goal.to_owned();
        runtime.spawn(async move {
            let _ = tx.send((goal, RunHandle::finished(handle).await));
        });
        Ok(())
    }

    /// Settles `goal`'s conflicting merge: the integration branch merged into the goal's, and
    /// what conflicts (or still holds a conflict marker from before) given to a run of the
    /// goal's own. Nothing left to settle: the goal merges again.
    async fn settle(
        &mut self,
        goal: &str,
        env: &(dyn Env + Sync),
        runtime: &tokio::runtime::Handle,
    ) -> Result<()> {
        if self.remote.is_some() {
            // Its worktree is on a worker: a worker settles it.
            self.record.offer_settle(goal);
            self.offered.insert(goal.to_owned());
            return Ok(());
        }
        let Some(tree) = self.trees.get(goal).cloned() else {
            self.schedule.ended(goal);
            return Ok(());
        };
        if self.budget_spent().is_some() {
            self.schedule.ended(goal);
            return Ok(());
        }
        let (env_remove, state_dir) = (self.launch.config.key_vars(), self.launch.ws.state_dir());
        let how = self.merging(&env_remove, &state_dir);
        let before = self.conflicts.get(goal).cloned().unwrap_or_default();
        let integration = self.tree.branch.clone();
        let prepared =
            settle::prepare(&tree, &integration, (&self.run, goal), &how, &before).await?;
        let Some(paths) = prepared else {
            self.schedule.signed_off(goal);
            return Ok(());
        };
        let placement =
            crate::compose::worktree::for_fleet_settle(&self.repo, &self.launch.ws, &tree, goal);
        let settling = Settling {
            branch: self.tree.branch.clone(),
            paths: paths.clone(),
        };
        self.conflicts.insert(goal.to_owned(), paths);
        let launch = self.child(goal, placement, Some(settling));
        self.launch_goal(goal, launch, env, runtime).await
    }

    /// The launch of `goal`'s own run: the run's, scoped to the goal, placed in its worktree
    /// (settling a conflicting merge when `settling` says so).
    fn child(&self, goal: &str, placement: Placement, settling: Option<Settling>) -> Launch {
        let mut spec = self.template.clone();
        spec.scope = Some(BTreeSet::from([goal.to_owned()]));
        spec.settling = settling;
        self.child_of(RunSpec::Goal(spec), placement)
    }

    /// The launch of `spec` (a goal's run, new or resumed) with the run's settings, placed in
    /// the goal's worktree.
    fn child_of(&self, spec: RunSpec, placement: Placement) -> Launch {
        let l = &self.launch;
        Launch {
            ws: l.ws.clone(),
            config: l.config.clone(),
            bounds: l.bounds.clone(),
            spec,
            place: l.place,
            placement: Some(placement),
            sinks: l.sinks.clone(),
            console: l.console.clone(),
            by: l.by.clone(),
            notice_grace: l.notice_grace,
            observer: l.observer.clone(),
            host: l.host.clone(),
            pool: Some(self.pool.clone()),
        }
    }

    /// Takes in what the workers reported of the goals offered to them: a goal signed off has
    /// its branch fetched from the remote (its merge comes), a goal ended ends.
    async fn collect(&mut self, runtime: &tokio::runtime::Handle) -> Result<()> {
        let Some(url) = self.remote.clone() else {
            return Ok(());
        };
        let fleet = self.record.journal().store().fleet(&self.run)?;
        for (goal, reported) in remote::reported(&fleet, &self.offered) {
            self.offered.remove(&goal);
            match reported {
                remote::Reported::SignedOff => {
                    let began = Instant::now();
                    remote::fetch_goal(self.repo.git_dir(), &url, (&self.run, &goal)).await?;
                    tracing::info!(goal, fetch_ms = millis(began.elapsed()), "goal fetched");
                    self.schedule.signed_off(&goal);
                }
                remote::Reported::Ended => self.schedule.ended(&goal),
                // Its worker could not settle its conflict: another conflict of the goal.
                remote::Reported::Unsettled => {
                    let paths = self.conflicts.get(&goal).cloned().unwrap_or_default();
                    self.conflicted(&goal, paths, runtime);
                }
            }
        }
        Ok(())
    }

    /// How a merge of this run commits.
    fn merging<'m>(
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
    async fn merge(&mut self, goal: &str, runtime: &tokio::runtime::Handle) -> Result<()> {
        let (env_remove, state_dir) = (self.launch.config.key_vars(), self.launch.ws.state_dir());
        let how = self.merging(&env_remove, &state_dir);
        let began = Instant::now();
        let merged = merge::merge(&self.tree, &self.run, goal, &how).await?;
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
    fn conflicted(&mut self, goal: &str, paths: Vec<String>, runtime: &tokio::runtime::Handle) {
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

    /// Asks a person what to do about `goal`, whose merges kept conflicting.
    fn ask_person(&mut self, goal: &str, runtime: &tokio::runtime::Handle) {
        let paths = self.conflicts.get(goal).cloned().unwrap_or_default();
        let branch = goal_branch_name(self.run.as_str(), goal);
        let about = Conflicted {
            goal,
            paths: &paths,
            branch: &branch,
            dir: self.trees.get(goal).map(|t| t.dir.as_path()),
            integration: &self.tree.branch,
            attempts: self.launch.config.run.merge_attempts,
        };
        let withdraw = CancellationToken::new();
        person::ask(
            &self.asker,
            &about,
            runtime,
            self.heard.0.clone(),
            withdraw.clone(),
        );
        self.asking.insert(goal.to_owned(), withdraw);
    }

    /// A person decided about `goal`.
    fn decided(&mut self, goal: &str, decided: Decided) {
        if self.asking.remove(goal).is_none() {
            return;
        }
        match decided {
            Decided::Retry if !self.interrupted && self.regression.is_none() => {
                self.schedule.retry(goal);
            }
            Decided::Retry | Decided::Leave => {}
        }
    }

    /// Withdraws every question still asked: the run ends without their answers.
    fn withdraw_questions(&mut self) {
        for withdraw in self.asking.values() {
            withdraw.cancel();
        }
        self.asking.clear();
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

    /// Removes the worktree of `goal`, merged: its branch keeps its work. A worktree that
    /// cannot be removed stays (`tether worktree` lists it), said in the log.
    async fn tidy(&mut self, goal: &str) {
        let Some(tree) = self.trees.remove(goal) else {
            return;
        };
        let (id, dir) = (goal_run_name(&self.run, goal), tree.dir);
        if let Err(e) = self.repo.remove(&id, &dir, false).await {
            tracing::warn!(goal, dir = %dir.display(), "could not remove the goal's worktree: {e}");
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

//! A run of many goals composed: its integration branch and worktree made (or taken up again),
//! the plan read, the store's record begun, the coordinator ready to drive it.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tether_config::Env;
use tether_core::looping::BudgetPool;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{Coordinator, Fleet, FleetEnd, Going, again, plan, recheck, record, remote};
use crate::compose::asking::Asker;
use crate::compose::launch::RunSpec;
use crate::error::{Error, Result};

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

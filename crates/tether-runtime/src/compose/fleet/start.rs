//! The coordinator starting a goal's run: a new one in a worktree cut from the integration
//! branch, one taken up again, one settling a conflicting merge — or, when the goals work on
//! other machines, the goal offered to the workers.

use std::collections::BTreeSet;
use std::time::Instant;

use tether_config::Env;
use tether_core::goal::Settling;

use super::{Coordinator, again, millis, settle};
use crate::compose::launch::{Launch, RunHandle, RunSpec};
use crate::compose::worktree::Placement;
use crate::error::Result;

impl Coordinator {
    /// Starts the run of `goal` alone, in its worktree cut from the integration branch.
    pub(super) async fn start(
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
    pub(super) async fn launch_goal(
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
    pub(super) async fn settle(
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
    pub(super) fn child(
        &self,
        goal: &str,
        placement: Placement,
        settling: Option<Settling>,
    ) -> Launch {
        let mut spec = self.template.clone();
        spec.scope = Some(BTreeSet::from([goal.to_owned()]));
        spec.settling = settling;
        self.child_of(RunSpec::Goal(spec), placement)
    }

    /// The launch of `spec` (a goal's run, new or resumed) with the run's settings, placed in
    /// the goal's worktree.
    pub(super) fn child_of(&self, spec: RunSpec, placement: Placement) -> Launch {
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
}

//! A run of many goals taken up again (`tether resume <id>` of an interrupted one): the store's
//! record says where each goal stood, and the run goes on from there in the worktrees it left.
//! A goal merged stays merged; one signed off merges; one whose goal run stopped before its
//! end (interrupted, paused, out of budget, its process killed) has that run resumed in the
//! goal's worktree; one whose run failed or was cancelled starts a new run there, on the work
//! its worktree holds; one whose run signed it off without the run of many goals hearing of it
//! merges; one never started starts as in a new run. A goal a worker still holds (its lease
//! live) is waited for, not offered to another.

use std::collections::HashMap;

use tether_core::fleet::Schedule;
use tether_store::{Fleet, GoalState, RunId, RunStatus, Store};

/// How a goal that had started goes on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Before {
    /// Its goal run is resumed.
    Resume(RunId),
    /// A new goal run starts in its worktree.
    Reopen,
}

/// How a run of many goals taken up again goes on, from its record.
#[derive(Debug, Default)]
pub(super) struct TakenUp {
    /// How each goal that had started goes on when it starts again.
    pub(super) earlier: HashMap<String, Before>,
    /// The goals whose worktree must be there at once (to merge).
    pub(super) to_merge: Vec<String>,
    /// The goals a worker still holds (its lease live): waited for, not offered again.
    pub(super) held: Vec<String>,
}

/// The goals of `before` put where they stood into `schedule`, at `now`.
pub(super) fn apply(before: &Fleet, schedule: &mut Schedule, store: &Store, now: i64) -> TakenUp {
    let mut earlier = HashMap::new();
    let mut to_merge = Vec::new();
    let mut held = Vec::new();
    for goal in &before.goals {
        let id = goal.goal_id.as_str();
        if schedule.phase(id).is_none() {
            continue;
        }
        if goal.lease.is_some_and(|lease| lease.expires_at_ms > now) {
            held.push(id.to_owned());
            continue;
        }
        let status = goal
            .run_id
            .as_ref()
            .and_then(|run| store.run(run).ok())
            .map(|run| run.state.status);
        match (goal.state, status, &goal.run_id) {
            (GoalState::Merged, ..) => schedule.merged(id),
            (GoalState::SignedOff | GoalState::NeedsPerson, ..)
            | (_, Some(RunStatus::Completed), _) => {
                schedule.signed_off(id);
                to_merge.push(id.to_owned());
            }
            (GoalState::Waiting, ..) | (_, _, None) => {}
            (_, Some(status), Some(_)) if tether_store::control::is_ended(status) => {
                earlier.insert(id.to_owned(), Before::Reopen);
            }
            (_, _, Some(run)) => {
                earlier.insert(id.to_owned(), Before::Resume(run.clone()));
            }
        }
    }
    TakenUp {
        earlier,
        to_merge,
        held,
    }
}

#[cfg(test)]
mod tests {
    use tether_core::fleet::{Phase, Schedule};
    use tether_store::{GoalState, Holder, NewFleet, RunId, Store};

    use super::{Before, apply};

    #[test]
    fn a_goal_a_worker_still_holds_is_waited_for_and_one_merged_stays_merged() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("tether.db")).unwrap();
        let id = RunId::generate();
        store
            .begin_fleet(&NewFleet {
                id: id.clone(),
                workspace: dir.path().to_path_buf(),
                plan_path: "plan.md".into(),
                branch: format!("tether/{id}"),
                remote: Some("/srv/git/repo.git".into()),
                budget: None,
                parallel: 2,
                goals: ["held", "merged", "lost", "new"]
                    .map(|g| (g.to_owned(), Vec::new()))
                    .to_vec(),
            })
            .unwrap();
        let worker = Holder {
            machine: "w1".into(),
            pid: 1,
            workspace: "/srv".into(),
        };
        for goal in ["held", "lost"] {
            store
                .set_fleet_goal(&id, goal, GoalState::Ready, None)
                .unwrap();
        }
        // `held` claimed for a minute; `lost` for five seconds, with a run that was interrupted
        // (long enough for its report to land on a busy machine; lapsed by the time it is taken
        // up, ten seconds on).
        let held = store.claim_fleet_goal(&worker, 60_000).unwrap().unwrap();
        assert_eq!(held.goal_id, "held");
        let lost = store.claim_fleet_goal(&worker, 5_000).unwrap().unwrap();
        let run = store
            .create_run(
                tether_store::RunKind::Goal,
                dir.path(),
                &serde_json::json!({}),
            )
            .unwrap();
        store
            .report_fleet_goal(&id, "lost", lost.token, GoalState::Working, Some(&run))
            .unwrap();
        store
            .set_fleet_goal(&id, "merged", GoalState::Merged, None)
            .unwrap();
        let record = store.fleet(&id).unwrap();
        let mut schedule = Schedule::new(
            ["held", "merged", "lost", "new"].map(|g| (g.to_owned(), Vec::new(), false)),
            2,
            3,
        );
        let later = tether_store::now_ms() + 10_000;
        let taken = apply(&record, &mut schedule, &store, later);
        assert_eq!(taken.held, ["held"]);
        assert_eq!(schedule.phase("merged"), Some(&Phase::Merged));
        assert_eq!(taken.earlier.get("lost"), Some(&Before::Resume(run)));
        assert!(!taken.earlier.contains_key("new") && !taken.earlier.contains_key("held"));
    }
}

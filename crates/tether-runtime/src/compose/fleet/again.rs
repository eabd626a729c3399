//! A run of many goals taken up again (`tether resume <id>` of an interrupted one): the store's
//! record says where each goal stood, and the run goes on from there in the worktrees it left.
//! A goal merged stays merged; one signed off merges; one whose goal run stopped before its
//! end (interrupted, paused, out of budget, its process killed) has that run resumed in the
//! goal's worktree; one whose run failed or was cancelled starts a new run there, on the work
//! its worktree holds; one whose run signed it off without the run of many goals hearing of it
//! merges; one never started starts as in a new run.

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

/// The goals of `before` put where they stood into `schedule`; how each started goal goes on
/// when it starts again, and the goals whose worktree must be there at once (to merge).
pub(super) fn apply(
    before: &Fleet,
    schedule: &mut Schedule,
    store: &Store,
) -> (HashMap<String, Before>, Vec<String>) {
    let mut earlier = HashMap::new();
    let mut to_merge = Vec::new();
    for goal in &before.goals {
        let id = goal.goal_id.as_str();
        if schedule.phase(id).is_none() {
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
    (earlier, to_merge)
}

//! What a run of many goals reads of the plan: its goals, their `after:`, their verify.

use std::collections::BTreeSet;

use tether_core::fleet::Schedule;
use tether_worktree::Repo;

/// The plan file's path relative to the repository's top (as git names it in a merge).
pub(super) fn plan_in(repo: &Repo, plan: &std::path::Path) -> String {
    let top = std::fs::canonicalize(repo.toplevel()).unwrap_or_else(|_| repo.toplevel().into());
    let plan = std::fs::canonicalize(plan).unwrap_or_else(|_| plan.to_path_buf());
    plan.strip_prefix(&top)
        .unwrap_or(&plan)
        .to_string_lossy()
        .into_owned()
}

/// The schedule of the plan's goals: every active goal, and every goal already done (which
/// counts as merged), each with its `after:`; a goal an active goal waits on that is neither
/// (open, cancelled) is not this run's to do, so what waits on it never starts. A person is
/// asked at a goal's `merge_attempts`th conflicting merge.
pub(super) fn schedule_of(
    plan: &tether_plan::Plan,
    parallel: usize,
    merge_attempts: u32,
) -> Schedule {
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
    let mut schedule = Schedule::new(goals, parallel, merge_attempts);
    for id in &outside {
        schedule.ended(id);
    }
    schedule
}

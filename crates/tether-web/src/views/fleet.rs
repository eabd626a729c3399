//! Runs of many goals (`tether run --parallel`): on the runs page, the newest of them, each with
//! how far its goals are; and a page of its own, every goal with where it stands — waiting on
//! which goals, ready for a worker, working (on which machine, in which goal run, a worker's
//! heartbeat), settling a conflict, signed off, merged, waiting for a person, or ended — and the
//! workers holding its goals, each with its heartbeat.

use maud::{Markup, html};
use tether_store::{Fleet, FleetGoal, GoalState};

use super::{text, when};

/// Runs of many goals shown on the runs page.
pub const FLEETS_SHOWN: usize = 5;

/// The runs page's section of the newest runs of many goals (empty when there are none).
pub fn fleets(list: &[Fleet], now_ms: i64) -> Markup {
    html! {
        section.fleets #fleets aria-labelledby="fleets-title" {
            @if !list.is_empty() {
                h2 #fleets-title { "Many goals at once" }
                ol.fleets {
                    @for f in list {
                        li #(format!("fleet-{}", f.id)) {
                            a href=(format!("/fleets/{}", f.id)) { code { (f.id.as_str()) } }
                            " · " (tally(f)) " · " (outcome(f))
                            " · started " (when(f.started_at_ms, now_ms))
                        }
                    }
                }
            }
        }
    }
}

/// A run of many goals: its head and its goals.
pub fn fleet(f: &Fleet, now_ms: i64) -> Markup {
    html! {
        section.fleet #fleet {
            h1 { "Run of many goals " code { (f.id.as_str()) } }
            p.fleet-head {
                (outcome(f)) " · " (tally(f)) " · up to " (f.parallel) " at once · branch "
                code { (text(&f.branch)) } " · plan " code { (text(&f.plan_path)) }
                " · coordinated on " (text(&f.machine)) " in " code { (text(&f.workspace.display().to_string())) }
                " · started " (when(f.started_at_ms, now_ms))
            }
            @let workers = workers(f);
            @if !workers.is_empty() {
                h2 { "Workers" }
                ul.workers #fleet-workers {
                    @for (machine, beat) in &workers {
                        li { (text(machine)) " · heartbeat " (when(*beat, now_ms)) }
                    }
                }
            }
            table.goals #fleet-goals {
                thead { tr { th { "Goal" } th { "Where it stands" } th { "Goal run" } th { "Moved" } } }
                tbody {
                    @for g in &f.goals {
                        tr #(format!("goal-{}", g.goal_id)) data-state=(g.state.as_str()) {
                            td { code { (text(&g.goal_id)) } }
                            td { (standing(f, g, now_ms)) }
                            td {
                                @if let Some(run) = &g.run_id {
                                    a href=(format!("/runs/{run}")) { code { (run.as_str()) } }
                                } @else { "—" }
                            }
                            td { (when(g.updated_at_ms, now_ms)) }
                        }
                    }
                }
            }
        }
    }
}

/// How many goals are merged, and how many work now.
fn tally(f: &Fleet) -> String {
    let merged = count(f, GoalState::Merged);
    let working = count(f, GoalState::Working) + count(f, GoalState::Settling);
    let mut said = format!("{merged} of {} goals merged", f.goals.len());
    if working > 0 {
        said.push_str(&format!(", {working} working"));
    }
    said
}

fn count(f: &Fleet, state: GoalState) -> usize {
    f.goals.iter().filter(|g| g.state == state).count()
}

/// How the run ended, or that it goes on.
fn outcome(f: &Fleet) -> Markup {
    let said = match f.outcome.as_deref() {
        None => "going on",
        Some("all_merged") => "every goal merged",
        Some("stuck") => "ended with goals not merged",
        Some("stopped") => "stopped: a merge broke a goal merged before",
        Some("interrupted") => "interrupted",
        Some(other) => other,
    };
    html! { span.outcome { (text(said)) } }
}

/// The workers holding a goal of the run, each with its latest heartbeat, by machine.
fn workers(f: &Fleet) -> Vec<(String, i64)> {
    let mut by_machine: std::collections::BTreeMap<String, i64> = std::collections::BTreeMap::new();
    for g in &f.goals {
        if let (Some(machine), Some(lease)) = (&g.machine, g.lease) {
            let beat = by_machine
                .entry(machine.clone())
                .or_insert(lease.renewed_at_ms);
            *beat = (*beat).max(lease.renewed_at_ms);
        }
    }
    by_machine.into_iter().collect()
}

/// Where one goal stands, in words.
fn standing(f: &Fleet, g: &FleetGoal, now_ms: i64) -> Markup {
    let on = g.machine.as_deref().map(text);
    html! {
        span.state { (g.state.as_str().replace('_', " ")) }
        @match g.state {
            GoalState::Waiting => {
                @let waits = f.waits_on(g);
                @if !waits.is_empty() { " on " (text(&waits.join(", "))) }
            }
            GoalState::Ready => { " for a worker to claim it" }
            GoalState::Conflicted => { ": its merge waits for a worker to settle it" }
            GoalState::Working | GoalState::Settling => {
                @if let Some(on) = on { " on " (on) }
                @if let Some(lease) = g.lease { " · heartbeat " (when(lease.renewed_at_ms, now_ms)) }
            }
            _ => {}
        }
    }
}

//! The runs list, in the groups `tether watch` shows (needs input, running, paused, done; the
//! runs that need a person first): each run with its kind, state (waiting for input stands
//! out), what it works toward, where it lives (machine and workspace, links to their runs),
//! iteration n/max, elapsed time, last activity and a sparkline of its tokens per iteration;
//! above it the filter form (machine, workspace, state).

use std::collections::HashMap;

use maud::{Markup, html};
use tether_read::{Group, IterationUsage};
use tether_store::RunStatus;

use super::{sparkline, text, when};
use crate::filter::{FilterLinks, Page, RunFilter, encode};
use crate::model::RunSummary;

/// Runs on one page of the list.
pub const RUNS_SHOWN: usize = 200;

/// The runs list: the filter form, the runs of `page` in their groups (each with its
/// sparkline, from `usage`, by run id) and, when older runs may match, a link to the next page
/// (with the same filter). Every group has its list, empty or not, so a run that changes group
/// while the page is open moves into it; an empty group is not shown.
pub fn table(
    page: &Page,
    usage: &HashMap<String, Vec<IterationUsage>>,
    filter: &RunFilter,
    now_ms: i64,
) -> Markup {
    html! {
        h1 { "Runs" }
        (filters(filter))
        @if page.runs.is_empty() && filter.is_empty() && page.next.is_none() {
            p.empty { "No runs yet in this workspace. Start one with " code { "tether run" } " or " code { "tether ralph \"…\"" } "." }
        } @else if page.runs.is_empty() && page.next.is_none() {
            p.empty { "No runs match this filter." }
        }
        div #runs-list {
            @for group in Group::ALL {
                section.group {
                    h2 { (group.title()) }
                    ol.runs #(group_list(group)) {
                        @for r in page.runs.iter().filter(|r| r.group == group) {
                            (row(r, usage.get(&r.id).map_or(&[][..], Vec::as_slice), now_ms))
                        }
                    }
                }
            }
        }
        @if let Some(last) = &page.next {
            p.older {
                a href=(filter.url(&format!("after={}", encode(last.as_str())))) { "Older runs" }
            }
        }
    }
}

/// The filter form: machine, workspace and state; a plain `GET` form, a navigation like a
/// link, so every filtered list has its own URL.
pub fn filters(filter: &RunFilter) -> Markup {
    html! {
        form.filters method="get" action="/" role="search" aria-label="Filter runs" {
            label {
                "Machine "
                input type="text" name="machine" value=[filter.machine.as_deref()] placeholder="any" autocomplete="off";
            }
            label {
                "Workspace "
                input type="text" name="workspace" value=[filter.workspace.as_deref()] placeholder="any" autocomplete="off";
            }
            label {
                "State "
                select name="state" {
                    option value="" selected[filter.status.is_none()] { "any" }
                    @for s in RunStatus::ALL {
                        option value=(s.as_str()) selected[filter.status == Some(*s)] { (s.as_str().replace('_', " ")) }
                    }
                }
            }
            button type="submit" { "Filter" }
            @if !filter.is_empty() {
                " " a href="/" { "All runs" }
            }
        }
    }
}

/// Where a run lives: its machine and workspace, each a link to the runs there.
pub fn place(r: &RunSummary) -> Markup {
    let on = |machine: &str| RunFilter {
        machine: Some(machine.to_owned()),
        ..RunFilter::default()
    };
    let inside = RunFilter {
        workspace: Some(r.workspace.clone()),
        ..RunFilter::default()
    };
    html! {
        p.place {
            @match &r.machine {
                Some(m) => { "on " a.machine href=(on(m).url("")) { (text(m)) } }
                None => { "machine not recorded" }
            }
            " · in " a.workspace href=(inside.url("")) { code { (text(&r.workspace)) } }
            @if let Some(remote) = &r.repo_remote {
                " · " span.remote { (text(remote)) }
            }
        }
    }
}

/// One run in the list, with the sparkline of its newest iterations' tokens (`usage`).
pub fn row(r: &RunSummary, usage: &[IterationUsage], now_ms: i64) -> Markup {
    let last = r.last_event_at_ms.unwrap_or(r.created_at_ms);
    let elapsed_to = if r.status.is_stopped() { last } else { now_ms };
    html! {
        li.run #(format!("run-{}", r.id)) {
            p.run-title {
                a href=(format!("/runs/{}", r.id)) { code { (r.id) } }
                " " span.kind { (r.kind.as_str()) }
                " " (badge(r))
                @if !usage.is_empty() { " " span.usage { (sparkline(usage)) } }
            }
            p.objective { (text(&short(&r.objective, 160))) }
            @if !r.goals.is_empty() {
                p.goals { "goals: " @for (i, g) in r.goals.iter().enumerate() { @if i > 0 { ", " } code { (text(g)) } } }
            }
            (place(r))
            p.meta {
                "iteration " (iteration(r))
                " · elapsed " (elapsed(elapsed_to - r.created_at_ms))
                " · last activity: " (text(&r.last_event_kind.clone().unwrap_or_default().replace('_', " ")))
                " " (when(last, now_ms))
            }
        }
    }
}

/// The id of `group`'s list on the runs page (`runs-needs_input`, …).
pub fn group_list(group: Group) -> String {
    format!("runs-{}", group.as_str())
}

/// The state badge, from the run's group as `tether watch` reads it: a run a person is needed
/// for has its own look and words, and never reads as running.
pub fn badge(r: &RunSummary) -> Markup {
    let (class, words) = match r.group {
        Group::NeedsInput if r.status == RunStatus::Blocked => {
            ("badge waiting", "blocked: needs a person".to_owned())
        }
        Group::NeedsInput => ("badge waiting", "waiting for input".to_owned()),
        Group::Running if r.usage_limit.is_some() => {
            ("badge waiting", "waiting for a usage limit".to_owned())
        }
        Group::Running => ("badge running", "running".to_owned()),
        Group::Paused if r.orphaned => ("badge orphaned", "killed (no process)".to_owned()),
        Group::Done if r.status == RunStatus::Completed => ("badge done", "completed".to_owned()),
        Group::Paused | Group::Done => ("badge stopped", r.status.as_str().replace('_', " ")),
    };
    html! { span class=(class) { (words) } }
}

/// `3/20`, `3/∞`, with the iteration in progress.
pub fn iteration(r: &RunSummary) -> String {
    let max = match r.max_iterations {
        Some(m) if m > 0 => m.to_string(),
        _ => "∞".to_owned(),
    };
    match r.in_progress {
        Some(n) => format!("{}/{max} (iteration {n} in progress)", r.iteration),
        None => format!("{}/{max}", r.iteration),
    }
}

/// `42 s`, `3 min 5 s`, `2 h 4 min`.
pub fn elapsed(ms: i64) -> String {
    let s = ms.max(0) / 1000;
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min {} s", s / 60, s % 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}

/// At most `max` characters, with an ellipsis.
pub fn short(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(max).collect();
    out.push('…');
    out
}

/// The "New run" form of a dashboard that starts runs: a Ralph loop (a prompt, an optional
/// completion promise) or a goal run on the plan's active goals, each with an optional
/// iteration budget.
pub fn new_run() -> Markup {
    html! {
        details.new-run {
            summary { "New run" }
            form method="post" action="/runs" {
                fieldset {
                    legend { "Kind" }
                    label { input type="radio" name="kind" value="ralph" checked; " Ralph loop: the same prompt until its promise" }
                    label { input type="radio" name="kind" value="goal"; " Goal run: the plan's active goals, each signed off by verify and the judge" }
                }
                label for="new-prompt" { "Prompt (Ralph loop)" }
                textarea #new-prompt name="prompt" rows="3" {}
                label for="new-promise" { "Completion promise (Ralph loop; empty: run to the budget)" }
                input #new-promise type="text" name="completion_promise" placeholder="DONE";
                label for="new-max" { "Iterations at most (empty: [loop] max_iterations)" }
                input #new-max type="number" name="max_iterations" min="1" max="20000";
                label { input #new-worktree type="checkbox" name="worktree" value="true"; " In a git worktree of its own (the checkout is never written)" }
                label for="new-parallel" { "Goals at once (goal run; empty: [run] parallel): each in a worktree of its own, merged back as it signs off" }
                input #new-parallel type="number" name="parallel" min="1" max="64";
                button type="submit" { "Start" }
                p.hint { "A goal run needs its contracts approved first, by a person: " code { "tether plan approve" } "." }
            }
        }
    }
}

//! The runs list: each run with its kind, state (waiting for input stands out), what it works
//! toward, iteration n/max, elapsed time and last activity.

use maud::{Markup, html};
use tether_store::RunStatus;

use super::{text, when};
use crate::model::RunSummary;

/// The runs list.
/// The runs list; `older` is the last run shown when older runs may follow (a link to the next
/// page).
pub fn table(runs: &[RunSummary], now_ms: i64, older: Option<&str>) -> Markup {
    html! {
        h1 { "Runs" }
        @if runs.is_empty() {
            p.empty { "No runs yet in this workspace. Start one with " code { "tether run" } " or " code { "tether ralph \"…\"" } "." }
        }
        ol.runs #runs-list {
            @for r in runs { (row(r, now_ms)) }
        }
        @if let Some(last) = older {
            p { a href=(format!("/?after={last}")) { "Older runs" } }
        }
    }
}

/// One run in the list.
pub fn row(r: &RunSummary, now_ms: i64) -> Markup {
    let last = r.last_event_at_ms.unwrap_or(r.created_at_ms);
    let elapsed_to = if r.status.is_stopped() { last } else { now_ms };
    html! {
        li.run #(format!("run-{}", r.id)) {
            p.run-title {
                a href=(format!("/runs/{}", r.id)) { code { (r.id) } }
                " " span.kind { (r.kind.as_str()) }
                " " (badge(r))
            }
            p.objective { (text(&short(&r.objective, 160))) }
            @if !r.goals.is_empty() {
                p.goals { "goals: " @for (i, g) in r.goals.iter().enumerate() { @if i > 0 { ", " } code { (text(g)) } } }
            }
            p.meta {
                "iteration " (iteration(r))
                " · elapsed " (elapsed(elapsed_to - r.created_at_ms))
                " · last activity: " (text(&r.last_event_kind.clone().unwrap_or_default().replace('_', " ")))
                " " (when(last, now_ms))
            }
        }
    }
}

/// The state badge; waiting for input gets its own look and words.
pub fn badge(r: &RunSummary) -> Markup {
    let (class, words) = match r.status {
        RunStatus::WaitingForInput => ("badge waiting", "waiting for input".to_owned()),
        RunStatus::Running if r.orphaned => ("badge orphaned", "killed (no process)".to_owned()),
        RunStatus::Running if r.usage_limit.is_some() => {
            ("badge waiting", "waiting for a usage limit".to_owned())
        }
        RunStatus::Running => ("badge running", "running".to_owned()),
        RunStatus::Completed => ("badge done", "completed".to_owned()),
        s => ("badge stopped", s.as_str().replace('_', " ")),
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

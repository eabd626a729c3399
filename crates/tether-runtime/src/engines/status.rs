//! A run's status as a person reads it (`tether status`): from the view any process has of a
//! run (`tether_core::control::RunView`), as text.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use tether_core::control::RunView;
use tether_store::Event;

/// Now, in milliseconds since the Unix epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `12 s ago`, `3 min ago`, `2 h 5 min ago`.
pub fn ago(ms: i64) -> String {
    let secs = (now_ms() - ms).max(0) / 1000;
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        _ => format!("{} h {} min ago", secs / 3600, secs % 3600 / 60),
    }
}

/// `tether status`'s text of the run `v` shows: its state, worktree, machine, what it is doing
/// or waiting for, what it used and spent, its last event and how to go on.
pub fn text(v: &RunView) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail.
    let _ = write_status(&mut out, v);
    out
}

fn write_status(out: &mut String, v: &RunView) -> std::fmt::Result {
    let max = v
        .max_iterations
        .map_or_else(|| "∞".to_owned(), |m| m.to_string());
    let state = if v.orphaned {
        format!(
            "{} — but no process is driving it (it was killed)",
            v.status.as_str()
        )
    } else {
        v.status.as_str().to_owned()
    };
    let pid = v.pid.map_or_else(String::new, |p| format!(" · pid {p}"));
    writeln!(
        out,
        "run {} ({}) · {state} · iteration {}/{max}{pid}",
        v.id, v.kind, v.budget_used
    )?;
    if let Some(branch) = &v.branch {
        writeln!(out, "worktree {} · branch {branch}", v.workspace)?;
    }
    if v.elsewhere {
        writeln!(
            out,
            "on machine {} in {} (its processes cannot be seen from here)",
            v.machine.as_deref().unwrap_or("unknown"),
            v.workspace
        )?;
    }
    if let Some(n) = v.in_progress {
        writeln!(out, "in progress: iteration {n}")?;
    }
    if let Some(wait) = v.usage_limit.as_ref().filter(|_| !v.orphaned) {
        writeln!(out, "{}", wait.describe())?;
    }
    if let Some(usage) = v.usage_line() {
        writeln!(out, "usage: {usage}")?;
    }
    if let Some(budget) = v.budget_line() {
        writeln!(out, "budget: {budget}")?;
    }
    if let Some(spent) = &v.budget_spent {
        let hint = crate::compose::budget::go_on_hint(v.id.as_str(), spent);
        writeln!(out, "stopped: {}; go on with: {hint}", spent.describe())?;
    }
    if let Some(e) = &v.last_event {
        let what = match &e.event {
            Some(Event::ToolCalled { summary, .. }) => format!("tool call: {summary}"),
            Some(Event::IterationFailed { error, .. }) => format!("iteration failed: {error}"),
            Some(Event::IterationCompleted { summary, .. }) => {
                format!("iteration completed: {summary}")
            }
            Some(Event::Paused { reason }) => format!("paused: {reason}"),
            Some(Event::FreshContext { n, reason }) => {
                format!("iteration {n} started from a fresh context: {reason}")
            }
            Some(Event::WaitingForUsageLimit {
                n,
                message,
                until_ms,
            }) => format!(
                "iteration {n} hit a usage limit, retry at {} ({message})",
                tether_store::utc_clock(*until_ms)
            ),
            _ => e.kind.replace('_', " "),
        };
        writeln!(out, "last event: {what} ({})", ago(e.at_ms))?;
    }
    if let Some(t) = &v.last_tool_call {
        writeln!(out, "last tool call: {t}")?;
    }
    if v.elsewhere {
        writeln!(out, "started {}", ago(v.created_at_ms))?;
        return Ok(());
    }
    writeln!(
        out,
        "started {} · transcripts: {}/",
        ago(v.created_at_ms),
        v.transcripts
    )?;
    let stopped = v.pid.is_none()
        && matches!(
            v.status.as_str(),
            "running" | "waiting_for_input" | "paused" | "budget_exhausted"
        );
    if stopped {
        writeln!(out, "continue with: tether resume {}", v.id)?;
    }
    Ok(())
}

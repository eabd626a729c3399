//! `tether status`, `tether pause`, `tether cancel`, `tether say`: a run seen and steered from
//! any shell while (or after) another process drives it.

use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Result, anyhow};
use tether_core::control::{self, Control, RunView};
use tether_human::visible::visible;
use tether_store::Event;

use super::Ctx;
use crate::cli::{RunArg, SayArgs, StatusArgs};
use crate::exit::Exit;
use crate::failure::Failure;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// `12 s ago`, `3 min ago`, `2 h 5 min ago`.
pub(super) fn ago(ms: i64) -> String {
    let secs = (now_ms() - ms).max(0) / 1000;
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        _ => format!("{} h {} min ago", secs / 3600, secs % 3600 / 60),
    }
}

/// `tether status`.
pub fn status(ctx: &mut Ctx<'_>, args: &StatusArgs) -> Result<Exit> {
    let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let view = control::view(&store, &ctx.ws, &run)?;
    if args.json {
        super::json(ctx.out, &view)?;
    } else {
        // The agent's tool calls, errors and summaries are in it.
        write!(ctx.out, "{}", visible(&status_text(&view)))?;
    }
    Ok(Exit::Done)
}

fn status_text(v: &RunView) -> String {
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
        let hint = super::budget::go_on_hint(v.id.as_str(), spent);
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

/// `tether pause`.
pub fn pause(ctx: &mut Ctx<'_>, args: &RunArg) -> Result<Exit> {
    let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let line = match control::pause(&store, &ctx.ws, &run, "cli")? {
        Control::Requested => {
            format!(
                "pause requested: run {} pauses at its next iteration boundary",
                run.id
            )
        }
        Control::Applied => format!(
            "run {} paused; continue with: tether resume {}",
            run.id, run.id
        ),
        Control::Unchanged(s) => format!("run {} is {}; nothing to pause", run.id, s.as_str()),
    };
    writeln!(ctx.out, "{line}")?;
    Ok(Exit::Done)
}

/// `tether cancel`.
pub fn cancel(ctx: &mut Ctx<'_>, args: &RunArg) -> Result<Exit> {
    let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let line = match control::cancel(&store, &ctx.ws, &run, "cli")? {
        Control::Requested => format!("cancel requested: run {} stops now", run.id),
        Control::Applied => format!("run {} cancelled", run.id),
        Control::Unchanged(s) => format!("run {} already ended ({})", run.id, s.as_str()),
    };
    writeln!(ctx.out, "{line}")?;
    Ok(Exit::Done)
}

/// `tether say`.
pub fn say(ctx: &mut Ctx<'_>, args: &SayArgs) -> Result<Exit> {
    let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let by = super::who(ctx);
    match control::say(&store, &run, &args.message, &by)? {
        Control::Unchanged(status) => Err(Failure::usage(anyhow!(
            "run {} has ended ({}); a message can only go to a run that can continue",
            run.id,
            status.as_str()
        ))),
        _ => {
            writeln!(
                ctx.out,
                "message queued for run {}: delivered at the start of its next iteration",
                run.id
            )?;
            Ok(Exit::Done)
        }
    }
}

/// `tether report`: the run's report, written beside its transcripts (when the run works here)
/// and printed.
pub fn report(ctx: &mut Ctx<'_>, args: &crate::cli::ReportArgs) -> Result<Exit> {
    let run = {
        let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
        control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?
    };
    let (path, markdown) = match write_report(ctx, &run.id)? {
        Some((path, markdown)) => (Some(path), markdown),
        None => {
            let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
            (None, tether_core::report::render(&store, &run, None)?)
        }
    };
    let shown = path.as_ref().map(|p| ctx.ws.display(p).into_owned());
    if args.json {
        super::json(
            ctx.out,
            &serde_json::json!({"path": shown, "markdown": markdown}),
        )?;
    } else {
        write!(ctx.out, "{}", visible(&markdown))?;
        if let Some(shown) = shown {
            eprintln!("written to {shown}");
        }
    }
    Ok(Exit::Done)
}

/// Renders run `id`'s report and writes it to `.tether/runs/<run>/report.md`: the path and the
/// markdown, or `None` for a run of another machine (its directory is there, not here).
fn write_report(
    ctx: &Ctx<'_>,
    id: &tether_store::RunId,
) -> Result<Option<(std::path::PathBuf, String)>> {
    let journal =
        tether_store::Journal::new(tether_runtime::store::open(&ctx.ws, ctx.env)?, Vec::new())?;
    let env_remove = tether_config::load(ctx.ws.root(), ctx.env)
        .map(|loaded| loaded.config.key_vars())
        .unwrap_or_default();
    let written = super::current_thread()?.block_on(tether_runtime::report::write(
        &ctx.ws,
        &journal,
        id,
        &env_remove,
    ))?;
    Ok(written)
}

//! `tether status`, `tether pause`, `tether cancel`, `tether say`: a run seen and steered from
//! any shell while (or after) another process drives it.

use anyhow::{Result, anyhow};
use tether_core::control::{self, Control};
use tether_human::visible::visible;

use super::Ctx;
use crate::cli::{RunArg, SayArgs, StatusArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether status`.
pub fn status(ctx: &mut Ctx<'_>, args: &StatusArgs) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let view = control::view(&store, &ctx.ws, &run)?;
    if args.json {
        super::json(ctx.out, &view)?;
    } else {
        // The agent's tool calls, errors and summaries are in it.
        write!(ctx.out, "{}", visible(&tether_runtime::status::text(&view)))?;
    }
    Ok(Exit::Done)
}

/// `tether pause`.
pub fn pause(ctx: &mut Ctx<'_>, args: &RunArg) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
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
    let store = crate::cmd::store(ctx)?;
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
    let store = crate::cmd::store(ctx)?;
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
        let store = crate::cmd::store(ctx)?;
        control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?
    };
    let (path, markdown) = match tether_runtime::report::write_now(&ctx.ws, ctx.env, &run.id)? {
        Some((path, markdown)) => (Some(path), markdown),
        None => {
            let store = crate::cmd::store(ctx)?;
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

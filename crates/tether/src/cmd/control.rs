//! `tether status`, `tether pause`, `tether cancel`, `tether say`: a run seen and steered from
//! any shell while (or after) another process drives it.
//!
//! Run by the agent (in its process tree, or handed over from its sandbox), `say` and `pause`
//! are the agent's own, recorded as such and only for its own run — its `say` reaches the next
//! prompt as a note it left itself, never as a person's message — and `cancel` is refused: a run
//! cancelled ends for good, which only a person decides.

use anyhow::{Result, anyhow};
use tether_core::control::{self, Control};
use tether_human::visible::visible;

use tether_runtime::human_act::{HumanAct, require_human};
use tether_store::Author;

use super::{Asker, Ctx};
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

/// `tether pause`: a person's request, or the agent's own (recorded as the agent's; only for
/// its own run).
pub fn pause(ctx: &mut Ctx<'_>, args: &RunArg) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
    let asker = super::asker(ctx);
    let run = target(&store, &asker, args.run.as_deref(), "pause")?;
    let by = match &asker {
        Asker::Person(_) => ("cli", Author::Person),
        Asker::Agent { .. } => (AGENT, Author::Agent),
    };
    let line = match control::pause(&store, &ctx.ws, &run, by)? {
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

/// `tether cancel`: a person's act (a run cancelled ends for good), refused to an agent.
pub fn cancel(ctx: &mut Ctx<'_>, args: &RunArg) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::CancelRun)?;
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

/// `tether say`: a person's message for the run's agent, or — from the agent itself — a note it
/// leaves itself, recorded and shown as its own (only to its own run).
pub fn say(ctx: &mut Ctx<'_>, args: &SayArgs) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
    let asker = super::asker(ctx);
    let run = target(&store, &asker, args.run.as_deref(), "say")?;
    let by = match &asker {
        Asker::Person(name) => (name.as_str(), Author::Person),
        Asker::Agent { .. } => (AGENT, Author::Agent),
    };
    match control::say(&store, &run, &args.message, by)? {
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

/// How the agent's own requests are signed.
const AGENT: &str = "the agent";

/// The run `named` (or the latest) for a person; for an agent, its own run (the one it belongs
/// to, when that is known): another is refused, so an agent never speaks to a run it is not.
fn target(
    store: &tether_store::Store,
    asker: &Asker,
    named: Option<&str>,
    what: &str,
) -> Result<tether_store::Run> {
    let own = match asker {
        Asker::Agent { run: Some(own) } => own,
        _ => return control::find_run(store, named).map_err(Failure::usage),
    };
    let run =
        control::find_run(store, Some(named.unwrap_or(own.as_str()))).map_err(Failure::usage)?;
    if run.id != *own {
        return Err(Failure::usage(anyhow!(
            "refused: the agent of run {own} may `tether {what}` only its own run, not run {}",
            run.id
        )));
    }
    Ok(run)
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
            (
                None,
                tether_core::report::render(&store, &ctx.ws, &run, None)?,
            )
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

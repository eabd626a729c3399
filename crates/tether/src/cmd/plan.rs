//! `tether plan`: the task list with its flags; `tether plan new` (plan mode) and
//! `tether plan approve` (locking contracts) live in the submodules.

mod approve;
mod interrupts;
mod new;
pub(super) mod review;

use std::io::IsTerminal as _;

use anyhow::Result;
use serde::Serialize;
use tether_core::planning::{PlanRef, PlanningError};
use tether_plan::Plan;
use tether_plan::file as plan_file;
use tether_plan::render;

use super::{Ctx, who};
use crate::cli::{PlanArgs, PlanCommand};
use crate::exit::Exit;
use crate::failure::Failure;

#[allow(unused_imports)] // `tether run` calls it before its goal loop starts.
pub use approve::ensure_approved;

#[derive(Serialize)]
struct PlanJson<'a> {
    file: String,
    plan: &'a Plan,
}

/// `tether plan` and its subcommands.
pub fn run(ctx: &mut Ctx<'_>, args: &PlanArgs) -> Result<Exit> {
    match &args.command {
        None => show(ctx, args.json),
        Some(PlanCommand::New(a)) => new::run(ctx, a),
        Some(PlanCommand::Approve(a)) => approve::run(ctx, a),
        Some(PlanCommand::Archive(a)) => archive(ctx, a.json),
    }
}

/// `tether plan archive`: moves the finished goals to `## Archive` and says which.
fn archive(ctx: &mut Ctx<'_>, json: bool) -> Result<Exit> {
    let config = super::load_config(ctx).map_err(Failure::usage)?;
    let path = config.config.plan_path(ctx.ws.root());
    let mut moved = Vec::new();
    plan_file::patch(&path, |doc| {
        let (patch, titles) = doc.archive_finished()?;
        moved = titles;
        Ok(patch)
    })
    .map_err(Failure::usage)?;
    if json {
        super::json(ctx.out, &moved)?;
    } else if moved.is_empty() {
        writeln!(
            ctx.out,
            "no goal to archive: none is done or cancelled outside the archive"
        )?;
    } else {
        writeln!(
            ctx.out,
            "archived {} goal(s) in {}:",
            moved.len(),
            ctx.ws.display(&path)
        )?;
        for title in &moved {
            writeln!(ctx.out, "  {}", tether_human::visible::visible(title))?;
        }
    }
    Ok(Exit::Done)
}

/// Prints the plan as a task list (with the store's flags), or as JSON.
fn show(ctx: &mut Ctx<'_>, json: bool) -> Result<Exit> {
    let config = super::load_config(ctx).map_err(Failure::usage)?;
    let path = config.config.plan_path(ctx.ws.root());
    let doc = match plan_file::read(&path) {
        Err(e) if e.is_usage() => return Err(Failure::usage(e)),
        other => other?,
    };
    let file = ctx.ws.display(&path).into_owned();
    if json {
        let value = PlanJson {
            file,
            plan: doc.plan(),
        };
        super::json(ctx.out, &value)?;
    } else {
        let plan = PlanRef::new(&ctx.ws, &config.config);
        let store =
            tether_runtime::store::for_reading_of(&ctx.ws, &crate::cmd::store_config(ctx)?)?;
        let (flags, notes) = tether_runtime::plan::flags(&store, &plan.key, doc.plan())?;
        let options = render::Options {
            flags,
            notes,
            log_lines: 3,
        };
        let list = render::task_list(&file, doc.plan(), &options);
        write!(ctx.out, "{}", tether_human::visible::visible(&list))?;
    }
    Ok(Exit::Done)
}

/// Both stdin and stderr are a terminal, so a menu or question can be shown and answered.
fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// A planning error as the CLI reports it: what the user can fix exits 2.
fn planning_error(e: PlanningError) -> anyhow::Error {
    if e.is_usage() {
        Failure::usage(e)
    } else {
        e.into()
    }
}

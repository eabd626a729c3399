//! `tether plan`: the task list with its flags; `tether plan new` (plan mode) and
//! `tether plan approve` (locking contracts) live in the submodules.

mod approve;
mod cards;
mod interrupts;
mod new;
pub(super) mod review;

use std::io::IsTerminal as _;

use anyhow::Result;
use serde::Serialize;
use tether_core::planning::{ContractState, PlanRef, PlanningError, contract_states};
use tether_plan::file as plan_file;
use tether_plan::render::{self, Flag};
use tether_plan::{Plan, Status};
use tether_store::Store;

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
        serde_json::to_writer_pretty(&mut *ctx.out, &moved)?;
        writeln!(ctx.out)?;
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
        serde_json::to_writer_pretty(&mut *ctx.out, &value)?;
        writeln!(ctx.out)?;
    } else {
        let plan = PlanRef::new(&ctx.ws, &config.config);
        let store = store_for_reading(ctx)?;
        let (flags, notes) = store_flags(&store, &plan.key, doc.plan())?;
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

/// The store, or an empty one in memory when the workspace has none yet (a reading command does
/// not create `.tether/`); a team store when one is configured.
fn store_for_reading(ctx: &Ctx<'_>) -> Result<Store> {
    if ctx.ws.db_path().is_file() || tether_runtime::store::is_team(&ctx.ws, ctx.env)? {
        return Ok(tether_runtime::store::open(&ctx.ws, ctx.env)?);
    }
    Ok(Store::open_in_memory()?)
}

/// The flags only the store can tell: a `done` goal never signed off, a contract changed since
/// it was approved; and the milder note on an active goal whose contract was never approved.
fn store_flags(store: &Store, plan_key: &str, plan: &Plan) -> Result<(Vec<Flag>, Vec<Flag>)> {
    let mut flags = Vec::new();
    let mut notes = Vec::new();
    for (index, goal) in plan.goals.iter().enumerate() {
        if goal.status() != Status::Done {
            continue;
        }
        let signed = match goal.id() {
            Some(id) => store.has_accepted_signoff(plan_key, id)?,
            None => false,
        };
        if !signed {
            flags.push(Flag {
                goal: index,
                message: "done, but no sign-off is recorded: goals are signed off through \
                          complete_goal (verify, then the judge)"
                    .to_owned(),
            });
        }
    }
    for c in contract_states(store, plan_key, plan)? {
        match &c.state {
            ContractState::Changed {
                approved_by,
                approved_at_ms,
            } if c.status != Status::Cancelled => flags.push(Flag {
                goal: c.index,
                message: format!(
                    "contract changed since {approved_by} approved it on {}; it cannot be \
                     signed off until approved again: tether plan approve {}",
                    cards::utc(*approved_at_ms),
                    c.id
                ),
            }),
            ContractState::NeverApproved if c.status == Status::Active => notes.push(Flag {
                goal: c.index,
                message: format!("contract not approved yet: tether plan approve {}", c.id),
            }),
            _ => {}
        }
    }
    flags.sort_by_key(|f| f.goal);
    Ok((flags, notes))
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

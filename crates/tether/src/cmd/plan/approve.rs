//! `tether plan approve`, and [`ensure_approved`], the check a goal loop makes before it starts:
//! a human agrees to each goal's contract before work on it counts.

use std::io::{self, BufRead, Write};

use anyhow::{Result, anyhow};
use tether_core::planning::approve::{self, Prepared, Selection};
use tether_core::planning::{GoalContract, PlanRef};
use tether_human::Keyboard;
use tether_runtime::human_act::{HumanAct, require_human};

use super::{Ctx, interactive, planning_error, review, who};
use crate::cli::PlanApproveArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use tether_core::planning::cards;

/// `tether plan approve [<id>…] [--all]`.
pub fn run(ctx: &mut Ctx<'_>, args: &PlanApproveArgs) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::ApproveContracts)?;
    let config = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let plan = PlanRef::new(&ctx.ws, &config.config);
    let store = crate::cmd::store(ctx)?;
    let selection = if args.ids.is_empty() {
        Selection::Pending
    } else {
        Selection::Ids(args.ids.clone())
    };
    let prepared = approve::prepare(&store, &plan, &selection).map_err(planning_error)?;
    added_ids(ctx.out, &prepared)?;
    let (todo, already): (Vec<GoalContract>, Vec<GoalContract>) = prepared
        .goals
        .iter()
        .cloned()
        .partition(GoalContract::needs_approval);
    for g in &already {
        writeln!(
            ctx.out,
            "{}: already approved as it is; nothing to do",
            g.id
        )?;
    }
    if todo.is_empty() {
        if args.ids.is_empty() {
            writeln!(
                ctx.out,
                "Every open and active goal's contract is approved; nothing to do."
            )?;
        }
        return Ok(Exit::Done);
    }
    for g in &todo {
        show(ctx.out, &prepared, g)?;
    }
    if args.ids.is_empty() && !args.all {
        if !interactive() {
            return Err(Failure::usage(anyhow!(
                "{} not approved; name the goals (tether plan approve {}) or pass --all",
                goals_phrase(&todo),
                todo.iter()
                    .map(|g| g.id.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            )));
        }
        ctx.out.flush()?;
        let yes = review::confirm(
            &mut Keyboard::get().reader(),
            &mut io::stderr(),
            "Approve these contracts?",
        )?;
        if !yes {
            writeln!(ctx.out, "Nothing was approved.")?;
            return Ok(Exit::Done);
        }
    }
    approve::record(&store, &plan.key, &prepared.doc, &todo, &who(ctx))?;
    locked(ctx.out, &todo)?;
    Ok(Exit::Done)
}

fn added_ids(out: &mut dyn Write, prepared: &Prepared) -> io::Result<()> {
    for a in &prepared.assigned {
        writeln!(
            out,
            "added <!-- id: {} --> to goal `{}` (line {})",
            a.id, a.title, a.heading_line
        )?;
    }
    Ok(())
}

/// `Approving cache (never approved):` and the contract card.
fn show(out: &mut dyn Write, prepared: &Prepared, g: &GoalContract) -> io::Result<()> {
    writeln!(out, "\nApproving {} ({}):", g.id, cards::state(&g.state))?;
    if let Some(goal) = prepared.doc.plan().goals.get(g.index) {
        write!(out, "{}", cards::contract(goal))?;
    }
    Ok(())
}

fn locked(out: &mut dyn Write, goals: &[GoalContract]) -> io::Result<()> {
    let n = goals.len();
    writeln!(
        out,
        "\nLocked {n} contract{} (a later edit of done_when, verify, failure_modes or \
         ask_before needs approval again):",
        if n == 1 { "" } else { "s" }
    )?;
    write!(out, "{}", cards::locked_lines(goals))
}

/// `the contract of goal a (never approved) is` / `the contracts of 2 goals … are`.
fn goals_phrase(goals: &[GoalContract]) -> String {
    let list: Vec<String> = goals
        .iter()
        .map(|g| format!("`{}` ({})", g.id, cards::state(&g.state)))
        .collect();
    if goals.len() == 1 {
        format!("the contract of goal {} is", list.join(""))
    } else {
        format!(
            "the contracts of {} goals, {}, are",
            goals.len(),
            list.join(", ")
        )
    }
}

/// Makes sure a human agreed to the contract of every goal a goal loop may work on, before it
/// starts. Call it once, before the first iteration of `tether run`.
///
/// 1. Adds an `<!-- id: … -->` line to every goal that has none, as a patch of the plan file
///    (every other byte stays as it was).
/// 2. Looks at every **open or active** goal: its contract (`done_when`, `verify`,
///    `failure_modes`, `ask_before`) must hash to the approval in force in the store.
/// 3. When all do, returns `Ok(())` having printed nothing. Otherwise:
///    - `approve == true` (`tether run --approve`): records the approvals (as `$USER`) without
///      asking, and says on stderr which contracts were locked;
///    - on a terminal (stdin and stderr are TTYs): shows each contract on stderr and asks
///      "Approve these contracts? [y/N]"; yes records them, anything else is the usage error
///      below;
///    - otherwise: fails with a usage error (exit 2, via [`Failure`]) naming the goals and the
///      commands that approve them (`tether plan approve`, `tether run --approve`).
///
/// Writes only to stderr, never to `ctx.out` (stdout may carry `--events jsonl`). A plan that
/// is missing or does not parse is a usage error naming the file and line.
pub fn ensure_approved(ctx: &mut Ctx<'_>, approve: bool) -> Result<()> {
    let mut err = io::stderr();
    // The process's one reader of stdin: the terminal channel of the run's desk, built
    // already, reads from it too.
    let mut input = interactive().then(|| Keyboard::get().reader());
    let ask = input.as_mut().map(|i| i as &mut dyn BufRead);
    ensure_approved_with(ctx, approve, ask, &mut err)
}

/// [`ensure_approved`] with the question's input (`None`: not a terminal) and the output given.
pub(super) fn ensure_approved_with(
    ctx: &mut Ctx<'_>,
    approve: bool,
    ask: Option<&mut dyn BufRead>,
    err: &mut dyn Write,
) -> Result<()> {
    let config = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let plan = PlanRef::new(&ctx.ws, &config.config);
    let store = crate::cmd::store(ctx)?;
    let prepared = approve::prepare(&store, &plan, &Selection::Pending).map_err(planning_error)?;
    added_ids(err, &prepared)?;
    let todo = &prepared.goals;
    if todo.is_empty() {
        return Ok(());
    }
    require_human(&ctx.ws, ctx.env, HumanAct::ApproveContracts)?;
    if !approve {
        let refused = || {
            Failure::usage(anyhow!(
                "{} not approved, so no goal loop starts. Review them with `tether plan`, then \
                 approve them with `tether plan approve` (or start with `tether run --approve`)",
                goals_phrase(todo)
            ))
        };
        let Some(input) = ask else {
            return Err(refused());
        };
        for g in todo {
            show(err, &prepared, g)?;
        }
        if !review::confirm(input, err, "Approve these contracts?")? {
            return Err(refused());
        }
    }
    approve::record(&store, &plan.key, &prepared.doc, todo, &who(ctx))?;
    locked(err, todo)?;
    Ok(())
}

#[cfg(test)]
#[path = "approve_tests.rs"]
mod tests;

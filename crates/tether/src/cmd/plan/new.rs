//! `tether plan new "<objective>"`: plan mode. The agent drafts goals (read-only, writing only
//! the plan), the human reviews them — Ready / Edit / $EDITOR / Cancel on a terminal, `--approve`
//! in scripts — and Ready locks the new goals' contracts.
//!
//! Ctrl+C while drafting or at the menu cancels: the plan is restored as it was before drafting
//! (exit 130). Inside `$EDITOR` it belongs to the editor.

use std::path::Path;

use anyhow::{Result, anyhow};
use serde::Serialize;
use tether_agent::ExecError;
use tether_config::Env;
use tether_core::planning::approve::{self, Selection};
use tether_core::planning::{Draft, DraftError, PlanRef};
use tether_runtime::human_act::{HumanAct, require_human};

use super::interrupts::Interrupts;
use super::review::{self, Choice};
use super::{Ctx, interactive, planning_error, who};
use crate::cli::PlanNewArgs;
use crate::exit::Exit;
use crate::failure::Failure;
use tether_core::planning::cards;
use tether_runtime::drafting::Progress;

#[derive(Serialize)]
struct GoalJson {
    id: Option<String>,
    title: String,
    status: String,
    contract_hash: String,
}

#[derive(Serialize)]
struct NewJson {
    file: String,
    outcome: &'static str,
    goals: Vec<GoalJson>,
    problems: Vec<String>,
    approved: Vec<String>,
}

/// `tether plan new`.
pub fn run(ctx: &mut Ctx<'_>, args: &PlanNewArgs) -> Result<Exit> {
    if args.approve {
        require_human(&ctx.ws, ctx.env, HumanAct::ApproveContracts)?;
    }
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let objective = args.objective.trim();
    if objective.is_empty() {
        return Err(Failure::usage(anyhow!("the objective is empty")));
    }
    let (mut drafter, describe) = tether_runtime::drafting::session(
        &loaded.config,
        (&ctx.ws, ctx.env),
        objective,
        args.model.as_deref(),
        &crate::bridged::host(),
    )?;
    let plan = drafter.plan().clone();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let guard = Interrupts::install(&runtime, &drafter);
    eprintln!("plan mode · {describe} · drafting goals for: {objective}");
    let cancel = guard.turn();
    let draft = match runtime.block_on(drafter.draft(&Progress, cancel)) {
        Ok(d) => d,
        Err(e) => {
            drafter.restore()?;
            if let DraftError::Agent(ExecError::Cancelled) = e {
                eprintln!("interrupted; {} restored", plan.key);
                return Ok(Exit::Interrupted);
            }
            return Err(anyhow::Error::new(e).context(format!(
                "drafting failed; {} was restored as it was",
                plan.key
            )));
        }
    };
    let json = args.json;
    let mut draft = draft;
    say(ctx, json, &describe_draft(&plan, &draft))?;
    if !args.approve && interactive() {
        loop {
            guard.idle();
            let choice = review::choose(
                &mut tether_human::Keyboard::get().reader(),
                &mut std::io::stderr(),
                &plan.key,
            )?;
            match choice {
                Choice::Ready if draft.doc.plan().has_errors() || draft.new_ids().is_empty() => {
                    eprintln!("The plan has no new goal that can be approved yet; edit it first.");
                }
                Choice::Ready => break,
                Choice::Edit(request) => {
                    let cancel = guard.turn();
                    match runtime.block_on(drafter.revise(&request, &Progress, cancel)) {
                        Ok(d) => draft = d,
                        Err(DraftError::Agent(ExecError::Cancelled)) => {
                            drafter.restore()?;
                            eprintln!("interrupted; {} restored", plan.key);
                            return Ok(Exit::Interrupted);
                        }
                        Err(e) => {
                            eprintln!("the revision failed: {e:#}");
                            draft = drafter.current()?;
                        }
                    }
                    say(ctx, json, &describe_draft(&plan, &draft))?;
                }
                Choice::Editor => {
                    guard.editor();
                    open_editor(ctx.env, &plan.path)?;
                    draft = drafter.current()?;
                    say(ctx, json, &describe_draft(&plan, &draft))?;
                }
                Choice::Cancel => {
                    drafter.restore()?;
                    say(ctx, json, &format!("cancelled; {} restored\n", plan.key))?;
                    return finish(ctx, json, &plan, &draft, "cancelled", Vec::new());
                }
                Choice::Closed => {
                    say(ctx, json, &unapproved(&plan, &draft))?;
                    return finish(ctx, json, &plan, &draft, "drafted", Vec::new());
                }
            }
        }
    } else if !draft.problems.is_empty() {
        finish(ctx, json, &plan, &draft, "drafted", Vec::new())?;
        return Err(anyhow!(
            "the draft is still short of the format after it was sent back once; it is in {}, \
             not approved: fix it by hand, then lock it with `tether plan approve`",
            plan.key
        ));
    } else if !args.approve {
        say(ctx, json, &unapproved(&plan, &draft))?;
        return finish(ctx, json, &plan, &draft, "drafted", Vec::new());
    }
    require_human(&ctx.ws, ctx.env, HumanAct::ApproveContracts)?;
    let store = crate::cmd::store(ctx)?;
    let done = approve::approve(&store, &plan, &Selection::Ids(draft.new_ids()), &who(ctx))
        .map_err(planning_error)?;
    let mut text = format!(
        "\nLocked {} contract{} (a later edit of done_when, verify, failure_modes or ask_before \
         needs approval again):\n",
        done.approved.len(),
        if done.approved.len() == 1 { "" } else { "s" }
    );
    text.push_str(&cards::locked_lines(done.approved.iter().map(|(g, _)| g)));
    text.push_str("Start the work with `tether run`.\n");
    say(ctx, json, &text)?;
    let approved = done.approved.iter().map(|(g, _)| g.id.clone()).collect();
    finish(ctx, json, &plan, &draft, "approved", approved)
}

/// Text for the human: on stdout, or on stderr when stdout carries `--json`.
fn say(ctx: &mut Ctx<'_>, json: bool, text: &str) -> Result<()> {
    if json {
        eprint!("{text}");
    } else {
        write!(ctx.out, "{text}")?;
        ctx.out.flush()?;
    }
    Ok(())
}

fn describe_draft(plan: &PlanRef, draft: &Draft) -> String {
    let goals = draft.doc.plan();
    let n = draft.new_goals.len();
    let mut out = format!(
        "\nDrafted {n} goal{} in {}:\n",
        if n == 1 { "" } else { "s" },
        plan.key
    );
    for i in &draft.new_goals {
        if let Some(goal) = goals.goals.get(*i) {
            out.push('\n');
            out.push_str(&cards::contract(goal));
        }
    }
    if !draft.problems.is_empty() {
        out.push_str("\nThe draft is short of the format:\n");
        for p in &draft.problems {
            out.push_str(&format!("  - {p}\n"));
        }
    }
    out
}

fn unapproved(plan: &PlanRef, draft: &Draft) -> String {
    format!(
        "\nThe draft is in {}, not approved yet. Review it with `tether plan`, then lock it with \
         `tether plan approve {}` (or start with `tether run --approve`).\n",
        plan.key,
        draft.new_ids().join(" ")
    )
}

fn finish(
    ctx: &mut Ctx<'_>,
    json: bool,
    plan: &PlanRef,
    draft: &Draft,
    outcome: &'static str,
    approved: Vec<String>,
) -> Result<Exit> {
    if json {
        let goals = draft
            .new_goals
            .iter()
            .filter_map(|i| draft.doc.plan().goals.get(*i))
            .map(|g| GoalJson {
                id: g.id().map(str::to_owned),
                title: g.title.clone(),
                status: g.status().to_string(),
                contract_hash: g.contract_hash(),
            })
            .collect();
        let value = NewJson {
            file: plan.key.clone(),
            outcome,
            goals: if outcome == "cancelled" {
                Vec::new()
            } else {
                goals
            },
            problems: draft.problems.clone(),
            approved,
        };
        crate::cmd::json(ctx.out, &value)?;
    }
    Ok(Exit::Done)
}

/// Opens the plan in `$VISUAL`, `$EDITOR` or `vi`, through `sh` so an editor with arguments
/// (`code --wait`) works. The editor is interactive: it gets the terminal and no timeout.
fn open_editor(env: &dyn Env, path: &Path) -> Result<()> {
    let editor = env
        .var("VISUAL")
        .filter(|v| !v.trim().is_empty())
        .or_else(|| env.var("EDITOR").filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| "vi".to_owned());
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("{editor} \"$1\""))
        .arg("sh")
        .arg(path)
        .status()
        .map_err(|e| anyhow!("could not start the editor `{editor}`: {e}"))?;
    if !status.success() {
        eprintln!("the editor `{editor}` exited with {status}; reading the plan as it is");
    }
    Ok(())
}

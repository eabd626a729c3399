//! `tether store push`: copies this workspace's history (`.tether/tether.db`) into the team
//! store — every run with its journal, questions, posts and verdicts, the questions of no run,
//! and the contract approvals and sign-offs of the plan's goals — keeping ids and times.
//! Running it again adds only what is new: a run pushed while still running gets the events it
//! lacks. Events of no run stay in the workspace file.

use anyhow::{Result, anyhow};
use serde::Serialize;
use tether_store::{Run, Seq, Store};
use tether_store_pg::{Imported, RunHistory, TeamStore};

use super::Ctx;
use crate::cli::{StoreCommand, StorePushArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// Runs read from the workspace's file at a time.
const PAGE: usize = 200;

/// `tether store …`.
pub fn run(ctx: &mut Ctx<'_>, command: &StoreCommand) -> Result<Exit> {
    match command {
        StoreCommand::Push(args) => push(ctx, args),
    }
}

/// What a push did.
#[derive(Debug, Default, Serialize)]
struct Pushed {
    /// Runs that were new to the team store.
    runs_copied: usize,
    /// Runs the team store had the start of, and got the rest of.
    runs_extended: usize,
    /// Runs the team store had entirely.
    runs_already_there: usize,
    /// Runs whose team copy went another way (left alone).
    runs_diverged: Vec<String>,
    /// Events added.
    events: usize,
    /// Questions of no run added.
    questions: usize,
    /// Contract approvals added.
    approvals: usize,
}

fn push(ctx: &mut Ctx<'_>, args: &StorePushArgs) -> Result<Exit> {
    let url = match &args.store {
        Some(url) => url.clone(),
        None => tether_config::load_store(ctx.ws.root(), ctx.env)
            .map_err(Failure::usage)?
            .url
            .ok_or_else(|| {
                Failure::usage(anyhow!(
                    "no team store to push to: pass --store postgres://… or set \
                     TETHER_STORE_URL (or [store] url in tether.toml)"
                ))
            })?,
    };
    let db = ctx.ws.db_path();
    if !db.is_file() {
        return Err(Failure::usage(anyhow!(
            "no history to push: {} does not exist",
            ctx.ws.display(&db)
        )));
    }
    let local = Store::open(&db)?;
    let team = tether_runtime::store::team(&url)?.scoped(&tether_runtime::store::here(&ctx.ws));
    let mut pushed = Pushed::default();
    push_runs(&local, &team, &mut pushed)?;
    push_loose_questions(&local, &team, &mut pushed)?;
    push_plan_records(ctx, &local, &team, &mut pushed)?;
    if args.json {
        serde_json::to_writer_pretty(&mut *ctx.out, &pushed)?;
        writeln!(ctx.out)?;
    } else {
        writeln!(
            ctx.out,
            "pushed to {}: {} runs copied, {} extended, {} already there; {} events, {} \
             questions of no run, {} contract approvals",
            tether_store_pg::redacted(&url),
            pushed.runs_copied,
            pushed.runs_extended,
            pushed.runs_already_there,
            pushed.events,
            pushed.questions,
            pushed.approvals
        )?;
        for run in &pushed.runs_diverged {
            writeln!(
                ctx.out,
                "left alone: run {run} — its team copy has events this workspace does not"
            )?;
        }
    }
    Ok(Exit::Done)
}

/// Every run of the workspace, page by page.
fn push_runs(local: &Store, team: &TeamStore, pushed: &mut Pushed) -> Result<()> {
    let mut page = local.runs(PAGE)?;
    while let Some(last) = page.last().map(|r| r.id.clone()) {
        for run in &page {
            let history = history_of(local, run)?;
            match team.block(team.pg().import_run(&history))? {
                Imported::Copied(n) => {
                    pushed.runs_copied += 1;
                    pushed.events += n;
                }
                Imported::Extended(n) => {
                    pushed.runs_extended += 1;
                    pushed.events += n;
                }
                Imported::AlreadyThere => pushed.runs_already_there += 1,
                Imported::Diverged => pushed.runs_diverged.push(run.id.to_string()),
            }
        }
        page = local.runs_after(&last, PAGE)?;
    }
    Ok(())
}

/// A run as the workspace's file holds it.
fn history_of(local: &Store, run: &Run) -> Result<RunHistory> {
    let questions = local
        .questions_for_run(&run.id)?
        .into_iter()
        .map(|q| {
            let posts = local.posts(&q.id)?;
            Ok((q, posts))
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(RunHistory {
        run: run.clone(),
        events: local.events(&run.id, Seq::START, usize::MAX)?,
        questions,
        verdicts: local.verdicts_for_run(&run.id)?,
    })
}

/// Questions asked outside a run (`tether ask`, a standalone `tether mcp`).
fn push_loose_questions(local: &Store, team: &TeamStore, pushed: &mut Pushed) -> Result<()> {
    for question in local.question_history(usize::MAX)? {
        if question.run_id.is_some() {
            continue;
        }
        let posts = local.posts(&question.id)?;
        if team.block(team.pg().import_question(&question, &posts))? {
            pushed.questions += 1;
        }
    }
    Ok(())
}

/// The approvals in force and the sign-offs made by hand for the plan's goals.
fn push_plan_records(
    ctx: &Ctx<'_>,
    local: &Store,
    team: &TeamStore,
    pushed: &mut Pushed,
) -> Result<()> {
    let plan_path = match tether_config::load(ctx.ws.root(), ctx.env) {
        Ok(loaded) => loaded.config.plan_path(ctx.ws.root()),
        Err(_) => ctx.ws.root().join(tether_config::Config::DEFAULT_PLAN),
    };
    let Ok(doc) = tether_plan::file::read(&plan_path) else {
        return Ok(());
    };
    let key = tether_signoff::plan_key(&ctx.ws, &plan_path);
    for goal in doc.plan().goals.iter().filter_map(|g| g.id()) {
        if let Some(approval) = local.approval(&key, goal)?
            && team.block(team.pg().import_approval(&approval))?
        {
            pushed.approvals += 1;
        }
        for verdict in local.verdicts_for_goal(&key, goal)? {
            if verdict.decision.run_id.is_none() {
                team.block(team.pg().import_verdict(&verdict))?;
            }
        }
    }
    Ok(())
}

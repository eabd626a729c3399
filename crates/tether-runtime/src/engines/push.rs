//! `tether store push`'s work: copies a workspace's history (`.tether/tether.db`) into the team
//! store — every run with its journal, questions, posts and verdicts, the questions of no run,
//! and the contract approvals and sign-offs of the plan's goals — keeping ids and times.
//! Running it again adds only what is new: a run pushed while still running gets the events it
//! lacks. Events of no run stay in the workspace file.

use serde::Serialize;
use tether_config::{Config, Workspace};
use tether_store::{Run, Seq, Store};
use tether_store_pg::{Imported, RunHistory, TeamStore};

use crate::error::{Error, Result};

/// Runs read from the workspace's file at a time.
const PAGE: usize = 200;

/// What a push did.
#[derive(Debug, Default, Serialize)]
pub struct Pushed {
    /// Runs that were new to the team store.
    pub runs_copied: usize,
    /// Runs the team store had the start of, and got the rest of.
    pub runs_extended: usize,
    /// Runs the team store had entirely.
    pub runs_already_there: usize,
    /// Runs whose team copy went another way (left alone).
    pub runs_diverged: Vec<String>,
    /// Events added.
    pub events: usize,
    /// Questions of no run added.
    pub questions: usize,
    /// Contract approvals added.
    pub approvals: usize,
}

/// Copies `ws`'s history (its own file) into the team store at `url`: every run, the
/// questions of no run, and the plan's approvals and sign-offs by hand; what the team store
/// has already is left as it is.
pub fn push(ws: &Workspace, config: Option<&Config>, url: &str) -> Result<Pushed> {
    let db = ws.db_path();
    if !db.is_file() {
        return Err(Error::NothingToPush(ws.display(&db).into_owned()));
    }
    let local = Store::open(&db)?;
    let team = crate::compose::store::team(url)?.scoped(&crate::compose::store::here(ws));
    let mut pushed = Pushed::default();
    push_runs(&local, &team, &mut pushed)?;
    push_loose_questions(&local, &team, &mut pushed)?;
    push_plan_records(ws, config, &local, &team, &mut pushed)?;
    Ok(pushed)
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
        .collect::<Result<Vec<_>, tether_store::StoreError>>()?;
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

/// The approvals in force and the sign-offs made by hand for the plan's goals (`config`'s plan,
/// else the default one).
fn push_plan_records(
    ws: &Workspace,
    config: Option<&Config>,
    local: &Store,
    team: &TeamStore,
    pushed: &mut Pushed,
) -> Result<()> {
    let plan_path = match config {
        Some(config) => config.plan_path(ws.root()),
        None => ws.root().join(Config::DEFAULT_PLAN),
    };
    let Ok(doc) = tether_plan::file::read(&plan_path) else {
        return Ok(());
    };
    let key = tether_signoff::plan_key(ws, &plan_path);
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

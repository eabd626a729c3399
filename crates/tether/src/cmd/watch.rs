//! `tether watch`: the runs in the terminal ([`tether_watch`]). A person's act — its holder
//! answers questions, pauses, cancels and speaks to runs and adds iterations to them — so it is
//! refused inside an agent's process tree. Its acts are those of `tether answer`, `pause`,
//! `cancel`, `say` and `resume --add-iterations` (whose raise is refused for a run of another
//! machine, and inside an agent of the run's own workspace).

use std::io::IsTerminal as _;

use anyhow::{Result, anyhow};
use tether_core::control::{self, Control};
use tether_runtime::human_act::{HumanAct, require_human};
use tether_store::{AnswerOutcome, Author, QuestionId, RunId, RunStatus, Store, Unit};

use super::Ctx;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether watch`.
pub fn run(ctx: &mut Ctx<'_>) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::WatchRuns)?;
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(Failure::usage(anyhow!(
            "tether watch needs a terminal; without one, `tether status` says where a run stands"
        )));
    }
    let config = super::store_config(ctx)?;
    let store = tether_runtime::store::open_of(&ctx.ws, &config)?;
    let connector = tether_runtime::store::connector_of(&ctx.ws, &config)?;
    let acts = ByPerson {
        ctx: Acting {
            ws: ctx.ws.clone(),
            env: ctx.env,
            name: super::who(ctx),
            config: super::load_config(ctx).map(|l| l.config).ok(),
            grace: tether_runtime::process::notice_grace(ctx.env),
            store_config: config,
        },
    };
    let export_dir = ctx.ws.root().to_path_buf();
    tether_watch::run(&store, &ctx.ws, || connector.connect(), &acts, export_dir)?;
    Ok(Exit::Done)
}

/// What the acts need of the command's context.
struct Acting<'a> {
    ws: tether_config::Workspace,
    env: &'a dyn tether_config::Env,
    name: String,
    config: Option<tether_config::Config>,
    grace: std::time::Duration,
    store_config: tether_config::StoreConfig,
}

/// A person's acts from the screen.
struct ByPerson<'a> {
    ctx: Acting<'a>,
}

impl ByPerson<'_> {
    fn store(&self) -> Result<Store, String> {
        tether_runtime::store::open_of(&self.ctx.ws, &self.ctx.store_config)
            .map_err(|e| format!("{e:#}"))
    }

    fn run(&self, store: &Store, id: &RunId) -> Result<tether_store::Run, String> {
        store.run(id).map_err(|e| e.to_string())
    }
}

impl tether_watch::Acts for ByPerson<'_> {
    fn answer(&self, question: &QuestionId, text: &str) -> Result<String, String> {
        let store = self.store()?;
        let config = self.ctx.config.clone();
        let answered = tether_runtime::ask::answer(
            (&self.ctx.ws, store),
            (question, text),
            &self.ctx.name,
            (
                move || config.ok_or("no configuration to tell the notice sinks with"),
                self.ctx.grace,
            ),
        )
        .map_err(|e| e.to_string())?;
        Ok(match answered {
            AnswerOutcome::Answered(q) => match q.choice {
                Some(i) => format!("answered: option {}", i + 1),
                None => "answered".to_owned(),
            },
            AnswerOutcome::AlreadyAnswered {
                responder,
                by_channel,
                ..
            } => format!("already answered by {responder} ({by_channel}): the first answer counts"),
            AnswerOutcome::Cancelled => "the question was withdrawn".to_owned(),
        })
    }

    fn pause(&self, run: &RunId) -> Result<String, String> {
        let store = self.store()?;
        let found = self.run(&store, run)?;
        Ok(
            match control::pause(&store, &self.ctx.ws, &found, ("watch", Author::Person))
                .map_err(|e| e.to_string())?
            {
                Control::Requested => {
                    "pause asked: it pauses at its next iteration boundary".to_owned()
                }
                Control::Applied => format!("paused; continue with tether resume {run}"),
                Control::Unchanged(s) => format!("it is {}: nothing to pause", s.as_str()),
            },
        )
    }

    fn cancel(&self, run: &RunId) -> Result<String, String> {
        let store = self.store()?;
        let found = self.run(&store, run)?;
        Ok(
            match control::cancel(&store, &self.ctx.ws, &found, "watch")
                .map_err(|e| e.to_string())?
            {
                Control::Requested => "cancel asked: it stops now".to_owned(),
                Control::Applied => "cancelled".to_owned(),
                Control::Unchanged(s) => format!("it already ended ({})", s.as_str()),
            },
        )
    }

    fn say(&self, run: &RunId, text: &str) -> Result<String, String> {
        let store = self.store()?;
        let found = self.run(&store, run)?;
        match control::say(
            &store,
            &found,
            text,
            (self.ctx.name.as_str(), Author::Person),
        )
        .map_err(|e| e.to_string())?
        {
            Control::Unchanged(s) => Err(format!(
                "it has ended ({}): a message only goes to a run that can continue",
                s.as_str()
            )),
            _ => Ok("message queued: its agent reads it at its next iteration".to_owned()),
        }
    }

    fn add_iterations(&self, run: &RunId, n: u32) -> Result<String, String> {
        let store = self.store()?;
        let found = self.run(&store, run)?;
        let state = &found.state;
        if control::is_ended(state.status) {
            return Err(format!(
                "it has ended ({}): there is nothing to add iterations to",
                state.status.as_str()
            ));
        }
        // As `tether resume --add-iterations`: a run of another machine is raised there, and
        // no agent of the run's own workspace may raise it, whichever workspace this is.
        if tether_store::control::is_elsewhere(&found) {
            return Err(format!(
                "it belongs to {}: add iterations there (tether resume {run} --add-iterations {n})",
                found.machine.as_deref().unwrap_or("another machine")
            ));
        }
        if !found.workspace.as_os_str().is_empty() {
            let theirs = tether_config::Workspace::at(&found.workspace);
            tether_runtime::human_act::require_human(&theirs, self.ctx.env, HumanAct::RaiseBudget)
                .map_err(|e| format!("{e:#}"))?;
        }
        if found.limits().iterations.filter(|m| *m > 0).is_none() {
            return Err("it has no iteration limit: nothing to add to".to_owned());
        }
        let raised = tether_runtime::budget::raise(
            &store,
            &found,
            &[(Unit::Iterations, f64::from(n))],
            &self.ctx.name,
        )
        .map_err(|e| format!("{e:#}"))?;
        // Said from what was recorded: the run's budget, or the goal's whose budget stopped it.
        let whose = raised.iter().find_map(|e| match e {
            tether_store::Event::BudgetRaised { goal_id, .. } => Some(goal_id.clone()),
            _ => None,
        });
        let whose = match whose.flatten() {
            Some(goal) => format!("goal {goal}'s iteration budget"),
            None => "its iteration budget".to_owned(),
        };
        Ok(match state.status {
            RunStatus::BudgetExhausted => {
                format!("added {n} to {whose}; go on with tether resume {run}")
            }
            _ => format!("added {n} to {whose}"),
        })
    }
}

//! `tether watch`: the runs in the terminal ([`tether_watch`]). A person's act — its holder
//! answers questions and pauses, cancels and speaks to runs — so it is refused inside an
//! agent's process tree. Its acts are those of `tether answer`, `pause`, `cancel` and `say`.

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
struct Acting {
    ws: tether_config::Workspace,
    name: String,
    config: Option<tether_config::Config>,
    grace: std::time::Duration,
    store_config: tether_config::StoreConfig,
}

/// A person's acts from the screen.
struct ByPerson {
    ctx: Acting,
}

impl ByPerson {
    fn store(&self) -> Result<Store, String> {
        tether_runtime::store::open_of(&self.ctx.ws, &self.ctx.store_config)
            .map_err(|e| format!("{e:#}"))
    }

    fn run(&self, store: &Store, id: &RunId) -> Result<tether_store::Run, String> {
        store.run(id).map_err(|e| e.to_string())
    }
}

impl tether_watch::Acts for ByPerson {
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
        let limit = found.limits().iterations.filter(|m| *m > 0);
        let Some(limit) = limit else {
            return Err("it has no iteration limit: nothing to add to".to_owned());
        };
        tether_runtime::budget::raise(
            &store,
            &found,
            &[(Unit::Iterations, f64::from(n))],
            &self.ctx.name,
        )
        .map_err(|e| format!("{e:#}"))?;
        let now = limit.saturating_add(n);
        Ok(match state.status {
            RunStatus::BudgetExhausted => {
                format!("budget now {now} iterations; go on with tether resume {run}")
            }
            _ => format!("budget now {now} iterations"),
        })
    }
}

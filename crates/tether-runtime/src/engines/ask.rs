//! Asking a human from any shell (`tether ask`) and telling who answered (`tether answer`),
//! at the workspace's human desk: every channel `[human]` lists, the terminal when a person is
//! there, recorded in the workspace's store.

use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_human::{Answer, BrokerError, Console, Desk, LateAnswer};
use tether_store::{AnswerOutcome, Journal, NewQuestion, Question, QuestionId, Store, StoreError};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The desk a question from a shell is asked at.
pub struct Asker {
    desk: Desk,
}

impl Asker {
    /// `config`'s desk in `ws`, recording in `store`, with `console` as the terminal's channel;
    /// refused, naming its problems, when a channel it lists is not set up.
    pub fn new(ws: &Workspace, config: &Config, store: Store, console: Console) -> Result<Self> {
        let journal = Journal::new(store, Vec::new())?;
        let reach = crate::compose::reach::of(config, ws, &journal);
        let desk = Desk::from_config(config, ws, journal, (console, reach));
        let problems = &desk.policy().problems;
        if !problems.is_empty() {
            return Err(Error::Desk(problems.join("; ")));
        }
        Ok(Asker { desk })
    }

    /// Asks `question` and waits for the first answer, from any channel; `stored` is told the
    /// question once it is recorded. Withdrawn by `cancel`, the question stays pending, recorded
    /// as one nobody waits for (so `tether answer` tells the sinks). What the sinks queued (the
    /// question, who answered it) is delivered before this returns, for at most `grace`.
    pub async fn ask(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
        stored: impl FnOnce(&Question),
        grace: Duration,
    ) -> Result<Answer, BrokerError> {
        // A run's agent asking again what its run asked before a crash is given it back.
        let asked = self
            .desk
            .broker()
            .ask_once_with(question, cancel, stored)
            .await;
        if let Err(BrokerError::Cancelled(id)) = &asked {
            self.abandon(id);
        }
        self.desk.flush_within(grace).await;
        asked
    }

    /// Records that nobody waits for the interrupted question `id` any more, so `tether
    /// questions` says so and the `tether answer` that answers it tells the sinks.
    fn abandon(&self, id: &QuestionId) {
        let store = self.desk.broker().journal().store();
        if let Err(e) = store.abandon_question(id, "tether ask was interrupted") {
            tracing::warn!(question = %id, error = %e, "could not record that nobody waits");
        }
    }
}

/// Answers question `id` of `ws`'s `store` with `text` as `responder`, from the command line.
/// Whoever waits for the question tells its channels who answered; when nobody does, the notice
/// sinks of the configuration `config` reads are told here (waiting for that at most `grace`;
/// a failure only logs: the answer is recorded). Call it outside any runtime.
pub fn answer<E: std::fmt::Display>(
    (ws, store): (&Workspace, Store),
    (id, text): (&QuestionId, &str),
    responder: &str,
    (config, grace): (impl FnOnce() -> Result<Config, E>, Duration),
) -> Result<AnswerOutcome, StoreError> {
    let nobody_waits = match store.question(id) {
        Ok(q) => matches!(store.abandoned(&q), Ok(Some(_))),
        Err(_) => false,
    };
    let outcome =
        tether_human::broker::answer(&store, &ws.state_dir(), id, text, "cli", responder)?;
    if let AnswerOutcome::Answered(q) = &outcome
        && nobody_waits
    {
        let told = match config() {
            Ok(config) => tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
                .and_then(|rt| {
                    rt.block_on(tell_late_answer(ws, &config, store, q, grace))
                        .map_err(|e| crate::error::chain(&e))
                }),
            Err(e) => Err(e.to_string()),
        };
        if let Err(e) = told {
            tracing::warn!(question = %q.id, "could not tell the notice sinks who answered: {e}");
        }
    }
    Ok(outcome)
}

/// Tells the notice sinks of `config` who answered `q` (nobody waiting for it would), waiting
/// for that to be delivered for at most `grace`.
async fn tell_late_answer(
    ws: &Workspace,
    config: &Config,
    store: Store,
    q: &Question,
    grace: Duration,
) -> Result<()> {
    let Some(answered) = Answer::of(q) else {
        return Ok(());
    };
    let journal = Journal::new(store, Vec::new())?;
    let sinks = LateAnswer::from_config(config, ws, &journal);
    sinks.tell(q, &answered, grace).await;
    Ok(())
}

//! Asking a human from any shell (`tether ask`) and telling who answered (`tether answer`),
//! at the workspace's human desk: every channel `[human]` lists, the terminal when a person is
//! there, recorded in the workspace's store.

use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_human::{Answer, LateAnswer};
use tether_store::{AnswerOutcome, Journal, Question, QuestionId, Store, StoreError};

pub use crate::compose::asking::Asker;
use crate::error::Result;

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

//! Asking a person at the workspace's human desk from outside any run: every channel `[human]`
//! lists, the terminal when a person is there, recorded in the workspace's store. `tether ask`
//! asks this way, and so does a run of many goals about a goal whose merges kept conflicting.

use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_human::{Answer, BrokerError, Console, Desk};
use tether_store::{Journal, NewQuestion, Question, QuestionId, Store};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

/// The desk a question from outside a run is asked at.
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

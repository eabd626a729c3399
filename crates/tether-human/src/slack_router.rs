//! Answers that reached this process's Slack socket for a wait it does not hold.
//!
//! Slack hands each event to only one of an app's sockets, so a reply or a press for a
//! question another process waits on (or this one, before its wait listens) may arrive here.
//! The [`Router`] looks the post up in the registry of waits ([`crate::slack_registry`]) and
//! stores the answer in the waiting workspace's store ([`crate::relay`]), which wakes its
//! waiter; a press has no history in Slack to catch up from, so it is looked up again a few
//! times while its post may still be being registered.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tether_slack::{BotIdentity, Incoming, SlackApi, Ts, answered_note, unescape};
use tether_store::{AnswerOutcome, Journal, Question, QuestionId, QuestionStatus};

use crate::broker;
use crate::chat::ChatError;
use crate::slack::{NAME, question_message};
use crate::slack_registry::{Entry, Registry};

/// How long after an unmatched reply or press the registry is looked at again: the post's
/// process may still be recording it (a person can answer within milliseconds of the post,
/// and a press leaves no history in Slack to catch up from).
const RECHECKS: [Duration; 4] = [
    Duration::from_millis(50),
    Duration::from_millis(250),
    Duration::from_secs(1),
    Duration::from_secs(3),
];

/// Stores answers that reached this process's socket for waits of other processes (or of this
/// one, before its wait listens).
#[derive(Clone)]
pub(crate) struct Router {
    registry: Registry,
    bot: Arc<OnceLock<BotIdentity>>,
    /// For replacing the buttons of a question answered here (the Web API only: no cycle
    /// back to the socket that calls the router).
    api: SlackApi,
    /// This process's own store: a team store holds the questions of every workspace that
    /// shares it, so an answer for one of them is recorded there.
    journal: Journal,
    /// This process's workspace's `.tether/`.
    state_dir: PathBuf,
}

enum Answered {
    Text(String),
    Choice(usize),
}

impl Router {
    /// A router looking waits up in `registry`, recognising the bot (once known) by `bot`.
    pub(crate) fn new(
        registry: Registry,
        bot: Arc<OnceLock<BotIdentity>>,
        api: SlackApi,
        journal: Journal,
        state_dir: PathBuf,
    ) -> Self {
        Router {
            registry,
            bot,
            api,
            journal,
            state_dir,
        }
    }

    /// Stores `incoming`'s answer for the wait it belongs to; when no registered wait matches
    /// yet, looks again after each of [`RECHECKS`].
    pub(crate) fn route(&self, incoming: &Incoming) {
        if self.settle(incoming) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (router, incoming) = (self.clone(), incoming.clone());
        runtime.spawn(async move {
            for delay in RECHECKS {
                tokio::time::sleep(delay).await;
                if router.settle(&incoming) {
                    return;
                }
            }
        });
    }

    /// Stores `incoming`'s answer if a registered wait matches it; `false` when none does.
    fn settle(&self, incoming: &Incoming) -> bool {
        let found = match incoming {
            Incoming::Button(press) => self
                .registry
                .by_post(&press.channel, press.message_ts.as_str())
                .and_then(|entry| {
                    let index: usize = press
                        .action_id
                        .strip_prefix("tether_option_")?
                        .parse()
                        .ok()?;
                    let who = press
                        .user_name
                        .clone()
                        .unwrap_or_else(|| press.user.clone());
                    Some((entry, Answered::Choice(index), who))
                }),
            Incoming::Message(m) => self.message(m),
        };
        let Some((entry, answered, who)) = found else {
            return false;
        };
        match self.store_answer(&entry, &answered, &who) {
            Ok(Some(question)) => self.mark_answered(&entry, &question, &who),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "could not store a slack answer for another process");
            }
        }
        true
    }

    /// Records the answer in the waiting workspace's store (first answer wins) and pokes it;
    /// the question when this answer was the one recorded.
    fn store_answer(
        &self,
        entry: &Entry,
        answered: &Answered,
        who: &str,
    ) -> Result<Option<Question>, ChatError> {
        let Ok(id) = entry.question_id.parse::<QuestionId>() else {
            return Ok(None);
        };
        let recorded = crate::relay::in_store_of(
            &self.journal,
            &self.state_dir,
            &entry.state_dir,
            &id,
            |store| -> Result<Option<Question>, ChatError> {
                let question = store.question(&id)?;
                if question.status != QuestionStatus::Pending {
                    return Ok(None);
                }
                let text = match answered {
                    Answered::Text(text) => text.clone(),
                    Answered::Choice(index) => question
                        .options
                        .get(*index)
                        .cloned()
                        .ok_or(ChatError::NoOption(*index))?,
                };
                let outcome = broker::answer(store, &entry.state_dir, &id, &text, NAME, who)?;
                Ok(match outcome {
                    AnswerOutcome::Answered(question) => Some(*question),
                    _ => None,
                })
            },
        )?;
        Ok(recorded.flatten())
    }

    /// Replaces the buttons of `question` (answered here for another process), best effort.
    fn mark_answered(&self, entry: &Entry, question: &Question, who: &str) {
        let Some(ts) = Ts::parse(&entry.ts) else {
            return;
        };
        let (text, blocks) = question_message(question).render_answered(&answered_note(NAME, who));
        let (api, channel) = (self.api.clone(), entry.channel.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = api.update_message(&channel, &ts, &text, &blocks).await {
                    tracing::warn!(error = %e, "could not mark the slack question answered");
                }
            });
        }
    }

    /// The wait a human's message answers: the newest question in its thread older than it.
    fn message(&self, m: &tether_slack::Message) -> Option<(Entry, Answered, String)> {
        let bot = self.bot.get();
        let human = m.bot_id.is_none()
            && matches!(m.subtype.as_deref(), None | Some("thread_broadcast"))
            && m.user.is_some()
            && bot.is_none_or(|b| m.user.as_deref() != Some(b.user_id.as_str()));
        let text = m.text.trim();
        if !human || text.is_empty() {
            return None;
        }
        let (channel, thread, ts) = (m.channel.as_deref()?, m.thread_ts.as_deref()?, m.ts()?);
        let entry = self
            .registry
            .in_thread(channel, thread)
            .into_iter()
            .filter(|e| Ts::parse(&e.ts).is_some_and(|q| q < ts))
            .max_by_key(|e| Ts::parse(&e.ts))?;
        Some((entry, Answered::Text(unescape(text)), m.user.clone()?))
    }
}

#[cfg(test)]
#[path = "slack_router_tests.rs"]
mod tests;

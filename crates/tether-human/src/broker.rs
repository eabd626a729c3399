//! The broker: a question is stored first (pending), then offered on every channel at once; the
//! first answer wins, is stored with who answered and where, and the other channels are told.
//!
//! The store is itself a channel: `tether answer` (and the dashboard) write the answer there, in
//! any process, and poke this one awake (see [`super::notify`]). Cancelling a wait leaves the
//! question pending, so it is asked again — the same question, not re-posted — on resume.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde::Serialize;
use tether_store::{AnswerOutcome, NewQuestion, Question, QuestionId, QuestionStatus, RunId};
use tokio_util::sync::CancellationToken;

use super::notify::{self, SharedListener};
use tether_store::Journal;

/// How often a waiter re-reads the store even without a poke.
const RECHECK: Duration = Duration::from_millis(500);

/// What the agent (or a script) asks.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// What needs deciding.
    pub question: String,
    /// Error logs, code, options considered.
    pub context: String,
    /// 0–100: how sure the asker is it could resolve this alone.
    pub confidence: Option<u8>,
    /// An earlier conversation to continue.
    pub thread_id: Option<String>,
    /// The run asking, if any.
    pub run: Option<RunId>,
}

/// The winning answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    /// The question answered.
    pub question_id: QuestionId,
    /// The answer.
    pub text: String,
    /// Where it came from (`cli`, `terminal`, `web`, `zulip`, `timeout`).
    pub channel: String,
    /// Who answered.
    pub responder: String,
    /// The conversation, for follow-ups.
    pub thread_id: String,
}

/// An answer a channel received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAnswer {
    /// The answer.
    pub text: String,
    /// Who answered.
    pub responder: String,
}

/// Somewhere a question can be offered to a human (terminal, Zulip, …).
pub trait Channel: Send + Sync {
    /// The channel's name, stored with answers.
    fn name(&self) -> &'static str;

    /// Offers `question`; resolves with an answer if this channel got one, or `None` when it
    /// stopped without one. `stop` fires when another channel won or the wait was cancelled.
    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>>;

    /// Tells the channel another channel answered first (e.g. a note in the Zulip topic).
    fn answered_elsewhere<'a>(
        &'a self,
        _question: &'a Question,
        _answer: &'a Answer,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }
}

/// Waiting for an answer failed.
#[derive(Debug, thiserror::Error)]
pub enum BrokerError {
    /// The wait was cancelled; the question stays pending and is asked again on resume.
    #[error("stopped waiting for an answer to {0}; the question stays pending")]
    Cancelled(QuestionId),
    /// The question was withdrawn (`cancel_question`); there will be no answer.
    #[error("question {0} was withdrawn")]
    Withdrawn(QuestionId),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] tether_store::StoreError),
}

/// An optional deadline with the answer given when it passes.
#[derive(Debug, Clone)]
pub struct Timeout {
    /// How long to wait.
    pub after: Duration,
    /// The answer given then.
    pub answer: String,
}

/// Asks humans and waits for the first answer.
#[derive(Clone)]
pub struct Broker {
    journal: Journal,
    state_dir: PathBuf,
    channels: Vec<Arc<dyn Channel>>,
    timeout: Option<Timeout>,
    listener: SharedListener,
}

impl Broker {
    /// A broker over the store in `journal`; `state_dir` is the workspace's `.tether/`.
    pub fn new(journal: Journal, state_dir: PathBuf, channels: Vec<Arc<dyn Channel>>) -> Self {
        Broker {
            journal,
            listener: SharedListener::new(state_dir.clone()),
            state_dir,
            channels,
            timeout: None,
        }
    }

    /// Answers with `timeout.answer` when no human has after `timeout.after`.
    pub fn with_timeout(mut self, timeout: Option<Timeout>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Stores the question (pending) and waits for the first answer.
    pub async fn ask(&self, ask: Ask, cancel: CancellationToken) -> Result<Answer, BrokerError> {
        self.ask_with(ask, cancel, |_| {}).await
    }

    /// Like [`Broker::ask`], telling `stored` the question once it is in the store (so a caller
    /// can say how to answer it).
    pub async fn ask_with(
        &self,
        ask: Ask,
        cancel: CancellationToken,
        stored: impl FnOnce(&Question),
    ) -> Result<Answer, BrokerError> {
        let question = self.journal.store().insert_question(&NewQuestion {
            run_id: ask.run.clone(),
            thread_id: ask.thread_id.clone(),
            question: ask.question,
            context: ask.context,
            confidence: ask.confidence,
        })?;
        stored(&question);
        self.wait(&question.id, cancel).await
    }

    /// Waits for the answer to a stored question (a new one, or one left pending by a crash).
    pub async fn wait(
        &self,
        id: &QuestionId,
        cancel: CancellationToken,
    ) -> Result<Answer, BrokerError> {
        let poked = self.listener.subscribe(id);
        let question = self.journal.store().question(id)?;
        if let Some(answer) = settled(&question)? {
            return Ok(answer);
        }
        let stop = cancel.child_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, ChannelAnswer)>();
        let mut offers = Vec::new();
        for (i, channel) in self.channels.iter().enumerate() {
            let (channel, q, stop, tx) =
                (channel.clone(), question.clone(), stop.clone(), tx.clone());
            offers.push(tokio::spawn(async move {
                if let Some(answer) = channel.offer(&q, stop).await {
                    let _ = tx.send((i, answer));
                }
            }));
        }
        drop(tx);
        let deadline = self
            .timeout
            .as_ref()
            .map(|t| tokio::time::Instant::now() + t.after);
        let result = loop {
            let current = self.journal.store().question(id)?;
            if let Some(answer) = settled(&current)? {
                break Ok(answer);
            }
            let timed_out = async {
                match deadline {
                    Some(d) => tokio::time::sleep_until(d).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = cancel.cancelled() => break Err(BrokerError::Cancelled(id.clone())),
                Some((i, got)) = rx.recv() => {
                    let name = self.channels[i].name();
                    self.record(id, &got.text, name, &got.responder)?;
                }
                () = timed_out => {
                    if let Some(t) = &self.timeout {
                        self.record(id, &t.answer, "timeout", "tether")?;
                    }
                }
                () = poked.poked() => {}
                () = tokio::time::sleep(RECHECK) => {}
            }
        };
        stop.cancel();
        for offer in offers {
            let _ = offer.await;
        }
        if let Ok(answer) = &result {
            for channel in self.channels.iter().filter(|c| c.name() != answer.channel) {
                channel.answered_elsewhere(&question, answer).await;
            }
        }
        result
    }

    /// Stores an answer (the first one wins) and wakes every waiter.
    fn record(
        &self,
        id: &QuestionId,
        text: &str,
        channel: &str,
        responder: &str,
    ) -> Result<(), BrokerError> {
        answer(
            &self.journal.store(),
            &self.state_dir,
            id,
            text,
            channel,
            responder,
        )?;
        Ok(())
    }
}

/// Stores an answer to `id` from any process and pokes the waiters; the first answer wins.
pub fn answer(
    store: &tether_store::Store,
    state_dir: &std::path::Path,
    id: &QuestionId,
    text: &str,
    channel: &str,
    responder: &str,
) -> Result<AnswerOutcome, tether_store::StoreError> {
    let outcome = store.answer_question(id, text, channel, responder)?;
    notify::poke(state_dir, id);
    Ok(outcome)
}

/// The answer to a question that is no longer pending.
fn settled(q: &Question) -> Result<Option<Answer>, BrokerError> {
    match q.status {
        QuestionStatus::Pending => Ok(None),
        QuestionStatus::Cancelled => Err(BrokerError::Withdrawn(q.id.clone())),
        QuestionStatus::Answered => Ok(Some(Answer {
            question_id: q.id.clone(),
            text: q.answer.clone().unwrap_or_default(),
            channel: q.channel.clone().unwrap_or_default(),
            responder: q.responder.clone().unwrap_or_default(),
            thread_id: q.thread_id.clone().unwrap_or_else(|| q.id.to_string()),
        })),
    }
}

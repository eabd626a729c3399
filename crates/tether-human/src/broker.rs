//! The broker: a question is stored first (pending), then offered on every channel at once; the
//! first answer wins, is stored with who answered and where, and the other channels are told.
//!
//! The store is itself a channel: `tether answer` (and the dashboard) write the answer there, in
//! any process, and poke this one awake (see [`super::notify`]). Cancelling a wait leaves the
//! question pending, so it is asked again — the same question, not re-posted — on resume.
//!
//! A question still waiting is brought back to mind: after `human.remind_after` every channel
//! it was offered on is reminded once ([`Channel::remind`]); after `human.escalate_after` it is
//! offered on the escalation sinks too ([`Escalation`]), and the first answer anywhere still
//! wins, every channel it was offered on being told. Like the deadline, these count from when
//! the question was asked, so a question waited for again after a restart is reminded and
//! escalated on time (at once, when that time is past).
//!
//! The deadline (`human.timeout_secs`) counts from when the question was asked, not from when
//! this process started waiting: a question left pending by a killed run times out on resume
//! when its time is already up, and otherwise after what remains of it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tether_http::Backoff;
use tether_store::{
    AnswerOutcome, Change, Event, Following, Journal, NewQuestion, Outcome, Question, QuestionId,
    QuestionStatus, RunId,
};
use tokio_util::sync::CancellationToken;

use crate::channels::{ChannelAnswer, DynChannel};
use crate::notify::{self, SharedListener};

/// How often a waiter re-reads the store even without a poke.
const RECHECK: Duration = Duration::from_millis(500);
/// The first and the longest pause before trying an unavailable store again.
const STORE_RETRY_FIRST: Duration = Duration::from_millis(100);
const STORE_RETRY_MAX: Duration = Duration::from_secs(2);

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
    /// The option chosen (an index into the question's options), or `None` for free text.
    pub choice: Option<usize>,
    /// How many options the question offered (0 for a plain question).
    pub options_offered: usize,
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

/// Reminders and escalation of a question still waiting (`human.remind_after`,
/// `human.escalate_after`, `human.escalate_to`).
#[derive(Clone, Default)]
pub struct Escalation {
    /// After this long the channels the question was offered on are reminded of it (once).
    pub remind_after: Option<Duration>,
    /// After this long the question is offered on `channels` too.
    pub escalate_after: Option<Duration>,
    /// The escalation sinks, offered a question only once it waited `escalate_after`.
    pub channels: Vec<Arc<dyn DynChannel>>,
}

/// Asks humans and waits for the first answer.
#[derive(Clone)]
pub struct Broker {
    journal: Journal,
    state_dir: PathBuf,
    channels: Vec<Arc<dyn DynChannel>>,
    timeout: Option<Timeout>,
    escalation: Escalation,
    listener: SharedListener,
    /// The store's own feed of answers from other machines (a team store), while it runs.
    _following: Option<Arc<Following>>,
}

impl Broker {
    /// A broker over the store in `journal`; `state_dir` is the workspace's `.tether/`.
    /// When the store has a feed of changes (a team store shared by several machines), an
    /// answer given on another machine wakes this broker's waiters through it.
    pub fn new(journal: Journal, state_dir: PathBuf, channels: Vec<Arc<dyn DynChannel>>) -> Self {
        let listener = SharedListener::new(state_dir.clone());
        let feed = listener.clone();
        let following = journal.store().follow(Box::new(move |change| match change {
            Change::Question(id) => feed.wake(Some(&id)),
            Change::Resync => feed.wake(None),
            Change::Control(_) | Change::Events(_) => {}
        }));
        Broker {
            journal,
            listener,
            state_dir,
            channels,
            timeout: None,
            escalation: Escalation::default(),
            _following: following.map(Arc::new),
        }
    }

    /// Answers with `timeout.answer` when no human has `timeout.after` after the question was
    /// asked.
    pub fn with_timeout(mut self, timeout: Option<Timeout>) -> Self {
        self.timeout = timeout;
        self
    }

    /// Reminds and escalates questions still waiting as `escalation` says.
    pub fn with_escalation(mut self, escalation: Escalation) -> Self {
        self.escalation = escalation;
        self
    }

    /// Offers questions on `channel` too.
    pub fn with_channel(mut self, channel: Arc<dyn DynChannel>) -> Self {
        self.channels.push(channel);
        self
    }

    /// The channels questions are offered on (notices go to the same ones).
    pub fn channels(&self) -> &[Arc<dyn DynChannel>] {
        &self.channels
    }

    /// Waits until every channel — the escalation sinks too — has handed over what it queued
    /// (see [`Channel::flush`]). The caller bounds the wait.
    pub async fn flush(&self) {
        let all = self.channels.iter().chain(&self.escalation.channels);
        futures_util::future::join_all(all.map(|c| c.flush())).await;
    }

    /// The store this broker records questions and answers in.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// Stores the question (pending) and waits for the first answer.
    pub async fn ask(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
    ) -> Result<Answer, BrokerError> {
        self.ask_with(question, cancel, |_| {}).await
    }

    /// Like [`Broker::ask`], telling `stored` the question once it is in the store (so a caller
    /// can say how to answer it).
    pub async fn ask_with(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
        stored: impl FnOnce(&Question),
    ) -> Result<Answer, BrokerError> {
        let question = self.journal.store().insert_question(&question)?;
        self.publish(&question);
        stored(&question);
        self.wait(&question.id, cancel).await
    }

    /// Like [`Broker::ask_with`], for a question an agent asks (`ask_human`, `tether ask`): when
    /// its run already asked the same question and it is still pending, or was answered in an
    /// iteration that never ended (the agent's work started over after a crash), that question
    /// is given back — waited for, or its stored answer at once — and nothing is posted again
    /// ([`crate::repeat`]). `stored` is told the question waited for, when it waits.
    pub async fn ask_once_with(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
        stored: impl FnOnce(&Question),
    ) -> Result<Answer, BrokerError> {
        let Some(earlier) = crate::repeat::earlier(&self.journal.store(), &question)? else {
            return self.ask_with(question, cancel, stored).await;
        };
        if let Some(run) = &earlier.run_id {
            let repeated = Event::QuestionRepeated {
                question_id: earlier.id.clone(),
            };
            self.journal.store().append(Some(run), &repeated)?;
            tracing::info!(question = %earlier.id, "the agent asked again a question its run already asked; not posted again");
        }
        if earlier.status == QuestionStatus::Pending {
            stored(&earlier);
        }
        self.publish(&earlier);
        self.wait(&earlier.id, cancel).await
    }

    /// Tells the journal's sinks (the live progress line) about what was just stored for the
    /// question's run — asked, answered — so the line goes quiet while a question waits and
    /// never redraws over the terminal's `Your answer:` prompt.
    fn publish(&self, question: &Question) {
        if let Some(run) = &question.run_id
            && let Err(e) = self.journal.publish(run)
        {
            tracing::warn!(error = %e, "could not pass the question's events on");
        }
    }

    /// Waits for the answer to a stored question (a new one, or one left pending by a crash),
    /// offering it on every channel; a channel that already posted it waits on that post.
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
        {
            // Someone waits for it again: it is no longer "nobody is waiting".
            let store = self.journal.store();
            if store.abandoned(&question)?.is_some() {
                store.await_question(id)?;
            }
        }
        let stop = cancel.child_token();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<(usize, ChannelAnswer)>();
        // Every channel the question was offered on, by the index its answers carry.
        let mut offered: Vec<Arc<dyn DynChannel>> = Vec::new();
        let mut offers = Vec::new();
        for channel in &self.channels {
            offers.push(offer(channel, offered.len(), &question, &stop, &tx));
            offered.push(Arc::clone(channel));
        }
        let mut escalation_tx = (!self.escalation.channels.is_empty()).then_some(tx);
        let deadline = self.deadline(&question);
        let mut remind_at = self.due(&question, self.escalation.remind_after);
        let mut escalate_at = escalation_tx
            .as_ref()
            .and_then(|_| self.due(&question, self.escalation.escalate_after));
        let mut recorded_by: Option<usize> = None;
        let result = loop {
            let current = match self.patiently(id, &cancel, |s| s.question(id)).await {
                Ok(current) => current,
                Err(e) => break Err(e),
            };
            match settled(&current) {
                Ok(Some(answer)) => break Ok(answer),
                Ok(None) => {}
                Err(e) => break Err(e),
            }
            tokio::select! {
                () = cancel.cancelled() => break Err(BrokerError::Cancelled(id.clone())),
                Some((i, got)) = rx.recv() => {
                    let name = offered[i].name();
                    if let Err(e) = self.record(id, got.body.text(), name, &got.responder, &cancel).await {
                        break Err(e);
                    }
                    recorded_by = Some(i);
                }
                () = at(remind_at) => {
                    remind_at = None;
                    let (channels, q) = (offered.clone(), question.clone());
                    tokio::spawn(async move {
                        let reminders = channels.iter().map(|c| c.remind(&q));
                        futures_util::future::join_all(reminders).await;
                    });
                }
                () = at(escalate_at) => {
                    escalate_at = None;
                    if let Some(tx) = escalation_tx.take() {
                        tracing::info!(question = %id, "escalating a question still waiting");
                        for channel in &self.escalation.channels {
                            offers.push(offer(channel, offered.len(), &question, &stop, &tx));
                            offered.push(Arc::clone(channel));
                        }
                    }
                }
                () = at(deadline) => {
                    if let Some(t) = &self.timeout
                        && let Err(e) = self.record(id, &t.answer, "timeout", "tether", &cancel).await
                    {
                        break Err(e);
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
        self.publish(&question);
        if let Ok(answer) = &result {
            for (i, channel) in offered.iter().enumerate() {
                let answered_here = match recorded_by {
                    Some(by) => by == i && channel.name() == answer.channel,
                    None => channel.name() == answer.channel,
                };
                if !answered_here {
                    channel.answered_elsewhere(&question, answer).await;
                }
            }
        }
        result
    }

    /// Tells every channel that `run` ended with `outcome`.
    pub async fn run_ended(&self, run: &RunId, outcome: Outcome) {
        for channel in &self.channels {
            channel.run_ended(run, outcome).await;
        }
    }

    /// When something `after` the question was asked is due (at once if that is past).
    fn due(&self, question: &Question, after: Option<Duration>) -> Option<tokio::time::Instant> {
        let after = after?;
        let waited = tether_store::now_ms().saturating_sub(question.created_at_ms);
        let waited = Duration::from_millis(u64::try_from(waited).unwrap_or(0));
        Some(tokio::time::Instant::now() + after.saturating_sub(waited))
    }

    /// When the timeout answer is due: `timeout.after` after the question was asked (at once if
    /// that is past).
    fn deadline(&self, question: &Question) -> Option<tokio::time::Instant> {
        self.due(question, self.timeout.as_ref().map(|t| t.after))
    }

    /// Stores an answer (the first one wins) and wakes every waiter.
    async fn record(
        &self,
        id: &QuestionId,
        text: &str,
        channel: &str,
        responder: &str,
        cancel: &CancellationToken,
    ) -> Result<(), BrokerError> {
        self.patiently(id, cancel, |store| {
            answer(store, &self.state_dir, id, text, channel, responder)
        })
        .await?;
        Ok(())
    }

    /// Runs a store operation for the question `id` until it succeeds, waiting out a store that
    /// is busy or unreachable (a team store's server restarting, a network cut): a question
    /// waits as long as it takes and an answer in hand is not dropped. Stops when `cancel`
    /// fires, leaving the question pending.
    async fn patiently<T>(
        &self,
        id: &QuestionId,
        cancel: &CancellationToken,
        operation: impl Fn(&tether_store::Store) -> Result<T, tether_store::StoreError>,
    ) -> Result<T, BrokerError> {
        let mut backoff = Backoff::new(STORE_RETRY_FIRST, STORE_RETRY_MAX);
        loop {
            let result = operation(&self.journal.store());
            match result {
                Ok(value) => return Ok(value),
                Err(e) if e.is_retryable() => {
                    let delay = backoff.exponential();
                    tracing::warn!(error = %e, question = %id, ?delay, "the store is unavailable; trying again");
                    tokio::select! {
                        () = cancel.cancelled() => return Err(BrokerError::Cancelled(id.clone())),
                        () = tokio::time::sleep(delay) => {}
                    }
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// Offers `question` on `channel`, sending its answer with `index` on `tx`.
fn offer(
    channel: &Arc<dyn DynChannel>,
    index: usize,
    question: &Question,
    stop: &CancellationToken,
    tx: &tokio::sync::mpsc::UnboundedSender<(usize, ChannelAnswer)>,
) -> tokio::task::JoinHandle<()> {
    let (channel, q, stop, tx) = (
        Arc::clone(channel),
        question.clone(),
        stop.clone(),
        tx.clone(),
    );
    tokio::spawn(async move {
        if let Some(answer) = channel.offer(&q, stop).await {
            let _ = tx.send((index, answer));
        }
    })
}

/// Resolves at `when`, or never.
async fn at(when: Option<tokio::time::Instant>) {
    match when {
        Some(when) => tokio::time::sleep_until(when).await,
        None => std::future::pending().await,
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

impl Answer {
    /// The answer stored with `q`, if it is answered.
    pub fn of(q: &Question) -> Option<Self> {
        (q.status == QuestionStatus::Answered).then(|| Answer {
            question_id: q.id.clone(),
            text: q.answer.clone().unwrap_or_default(),
            channel: q.channel.clone().unwrap_or_default(),
            responder: q.responder.clone().unwrap_or_default(),
            thread_id: q.thread_id.clone().unwrap_or_else(|| q.id.to_string()),
            choice: q.choice,
            options_offered: q.options.len(),
        })
    }
}

/// The answer to a question that is no longer pending.
fn settled(q: &Question) -> Result<Option<Answer>, BrokerError> {
    match q.status {
        QuestionStatus::Pending => Ok(None),
        QuestionStatus::Cancelled => Err(BrokerError::Withdrawn(q.id.clone())),
        QuestionStatus::Answered => Ok(Answer::of(q)),
    }
}

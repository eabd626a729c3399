//! The chat channels' one adapter: what Zulip, Slack and Telegram have in common, written once.
//!
//! A chat channel posts a question where people talk, waits in its thread (a Zulip topic, a
//! Slack thread, a Telegram reply chain or forum topic) and takes the first reply; it records
//! where it posted in the store (`question_posts`), so a question offered again after a restart
//! (`tether resume`) waits on the same post instead of posting twice, a follow-up
//! (`thread_id`) goes to its conversation's thread, and a run's notices go where its latest
//! question is. That flow, and the `Channel` a broker talks to, is [`Chat`].
//!
//! What differs is a [`ChatService`]: how a question is posted (and a follow-up in a thread),
//! how a wait on a post starts again, how replies are waited for, how "answered elsewhere" and
//! a notice are said, and what a post's place is ([`ChatService::Place`], stored as JSON). A new
//! chat service is a module implementing it with its descriptor, its `tether.toml` table
//! declared in [`crate::tables`] (a chat channel's, [`tether_config::Role::Channel`]: its keys,
//! the variables of its tokens, what overrides them), and one line in [`crate::registry`].

use std::future::Future;

use serde::Serialize;
use serde::de::DeserializeOwned;
use tether_store::{Journal, Question, QuestionId, RunId, StoreError};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::{Channel, ChannelAnswer};
use crate::notices::Notice;

/// How far a conversation is followed back to find its thread (a follow-up of a follow-up …).
const MAX_THREAD_HOPS: usize = 32;

/// What keeps the agent from answering on a chat channel in a person's place: a reply is a post
/// by one of the service's accounts, and the agent holds the credentials of none (the bot's
/// token is one of tether's keys, kept from it).
pub const ACCOUNTS: &str = "a reply is a post by one of the service's accounts, and the agent \
    holds the credentials of none: the bot's token is kept from it";

/// Why a chat channel could not post, wait or tell; logged, never the agent's.
#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    /// The service failed (refused, unreachable after retries, cancelled).
    #[error(transparent)]
    Service(Box<dyn std::error::Error + Send + Sync>),
    /// The store failed (recording the post, reading a question).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A press named an option the question does not have (a stale or forged button).
    #[error("the question has no option {0}")]
    NoOption(usize),
    /// The post could not be listed for the process that polls the service.
    #[error("cannot register the post for the process that polls: {0}")]
    Register(std::io::Error),
    /// Where the question was posted could not be written down as JSON.
    #[error("cannot record where the question was posted: {0}")]
    Place(#[from] serde_json::Error),
}

impl ChatError {
    /// A service's own error.
    pub fn service(err: impl std::error::Error + Send + Sync + 'static) -> Self {
        ChatError::Service(Box::new(err))
    }
}

/// What one chat service does its own way; [`Chat`] does the rest.
pub trait ChatService: Send + Sync + 'static {
    /// The channel's name: `human.channels`' spelling, stored with answers and posts.
    const NAME: &'static str;

    /// Where a question was posted, as recorded in the store: enough to wait on it again, to
    /// post a follow-up in its thread and a note under it.
    type Place: Serialize + DeserializeOwned + Send + Sync;

    /// A wait begun by a post or a resume (e.g. an event queue registered before the post, so
    /// no reply slips by).
    type Waiting: Send;

    /// Posts `question`: a new conversation, or a follow-up in the thread of `thread` (the
    /// conversation's earlier post) when it has one. Where it went, and the wait to hand to
    /// [`ChatService::wait`].
    fn post(
        &self,
        question: &Question,
        thread: Option<&Self::Place>,
        stop: &CancellationToken,
    ) -> impl Future<Output = Result<(Self::Place, Self::Waiting), ChatError>> + Send;

    /// Begins waiting again on the post at `place` (after a restart): nothing is posted.
    fn resume(
        &self,
        question: &Question,
        place: &Self::Place,
        stop: &CancellationToken,
    ) -> impl Future<Output = Result<Self::Waiting, ChatError>> + Send;

    /// Waits for the first reply to the post at `place`, until `stop`. `None` when the service
    /// records its answers in the store itself (the broker sees them there).
    fn wait(
        &self,
        question: &Question,
        place: &Self::Place,
        waiting: Self::Waiting,
        stop: &CancellationToken,
    ) -> impl Future<Output = Result<Option<ChannelAnswer>, ChatError>> + Send;

    /// Says under the post at `place` that `answer` came from elsewhere (and closes its
    /// buttons, where it has any).
    fn answered_elsewhere(
        &self,
        question: &Question,
        place: &Self::Place,
        answer: &Answer,
    ) -> impl Future<Output = Result<(), ChatError>> + Send;

    /// Posts `notice` under `place` (the run's latest question posted here), or where the
    /// service puts a run's notices when it has none.
    fn notice(
        &self,
        place: Option<&Self::Place>,
        notice: &Notice,
    ) -> impl Future<Output = Result<(), ChatError>> + Send;
}

/// A chat service as a channel: offer → find or post → wait → the first reply; answered
/// elsewhere; notices; a resumed offer never posts twice.
pub struct Chat<S> {
    service: S,
    journal: Journal,
}

impl<S: ChatService> Chat<S> {
    /// `service` as a channel, recording its posts in `journal`'s store.
    pub fn new(service: S, journal: Journal) -> Self {
        Chat { service, journal }
    }

    /// Where `question` was posted on this service, if it was.
    pub fn posted(&self, question: &QuestionId) -> Option<S::Place> {
        let posts = self.journal.store().posts(question).ok()?;
        let post = posts.into_iter().find(|p| p.channel == S::NAME)?;
        serde_json::from_value(post.external_ref).ok()
    }

    /// The post of the conversation `thread` names: a thread id is the id of the question that
    /// started it, followed back while that one was never posted here. `None` opens a new
    /// conversation.
    fn thread_place(&self, thread: &str) -> Option<S::Place> {
        let mut id: QuestionId = thread.parse().ok()?;
        for _ in 0..MAX_THREAD_HOPS {
            if let Some(place) = self.posted(&id) {
                return Some(place);
            }
            id = self
                .journal
                .store()
                .question(&id)
                .ok()?
                .thread_id?
                .parse()
                .ok()?;
        }
        None
    }

    /// The post of `run`'s latest question posted here.
    fn run_place(&self, run: &RunId) -> Option<S::Place> {
        let questions = self.journal.store().questions_for_run(run).ok()?;
        questions.iter().rev().find_map(|q| self.posted(&q.id))
    }

    /// Posts `question` once (recording where) or finds its post, then waits on it.
    async fn answer(
        &self,
        question: &Question,
        stop: &CancellationToken,
    ) -> Result<Option<ChannelAnswer>, ChatError> {
        let (place, waiting) = match self.posted(&question.id) {
            Some(place) => {
                let waiting = self.service.resume(question, &place, stop).await?;
                (place, waiting)
            }
            None => {
                let thread = question
                    .thread_id
                    .as_deref()
                    .and_then(|t| self.thread_place(t));
                let (place, waiting) = self.service.post(question, thread.as_ref(), stop).await?;
                let reference = serde_json::to_value(&place)?;
                self.journal
                    .store()
                    .record_post(&question.id, S::NAME, &reference)?;
                (place, waiting)
            }
        };
        self.service.wait(question, &place, waiting, stop).await
    }
}

impl<S: ChatService> Channel for Chat<S> {
    fn name(&self) -> &'static str {
        S::NAME
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        match self.answer(question, &stop).await {
            Ok(answer) => answer,
            Err(e) => {
                if !stop.is_cancelled() {
                    tracing::warn!(channel = S::NAME, error = %e, "the channel stopped");
                }
                None
            }
        }
    }

    async fn answered_elsewhere(&self, question: &Question, answer: &Answer) {
        let Some(place) = self.posted(&question.id) else {
            return;
        };
        if let Err(e) = self
            .service
            .answered_elsewhere(question, &place, answer)
            .await
        {
            tracing::warn!(channel = S::NAME, error = %e, "could not tell who answered");
        }
    }

    async fn notice(&self, notice: &Notice) {
        let place = notice.run_id.as_ref().and_then(|run| self.run_place(run));
        if let Err(e) = self.service.notice(place.as_ref(), notice).await {
            tracing::warn!(channel = S::NAME, error = %e, "could not post a notice");
        }
    }
}

//! The channel interface: somewhere a question can be offered to a human — the terminal, Zulip,
//! and next the dashboard and other chat services.
//!
//! A channel is told five things by the [`crate::Broker`]: a question to offer (it resolves
//! with an answer or stops when told to), that the question was answered elsewhere (so it can
//! close its card or say who answered in its thread), that a question is still waiting
//! (`human.remind_after`), a notice about a run (it finished, paused, …), and that a run ended
//! (so it can tidy up what it shows for that run). All but the first have no-op defaults, so a
//! channel implements only what it has to show. A channel writes them as `async fn`s
//! ([`Channel`]); the broker holds channels as trait objects ([`DynChannel`], implemented for
//! every channel), so none of them boxes its futures itself.
//!
//! An answer's body is an [`AnswerBody`]: free text, or a choice among the question's options
//! (a button). Either way what is stored is text — a choice as its label — and the store reads
//! it against the options, so a typed `2` and a pressed second button record the same choice.

pub use futures_util::future::BoxFuture;
use tether_store::{Outcome, Question, RunId};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::notices::Notice;

/// What a human answered on a channel.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AnswerBody {
    /// Free text (a typed `2` or an option's label still counts as that choice).
    Text(String),
    /// One of the question's options, picked with a button.
    Choice {
        /// Its index in the question's options.
        index: usize,
        /// Its label.
        label: String,
    },
}

impl AnswerBody {
    /// The answer as text: what is stored and what the agent reads (a choice's label).
    pub fn text(&self) -> &str {
        match self {
            AnswerBody::Text(text) => text,
            AnswerBody::Choice { label, .. } => label,
        }
    }
}

/// An answer a channel received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelAnswer {
    /// The answer.
    pub body: AnswerBody,
    /// Who answered.
    pub responder: String,
}

impl ChannelAnswer {
    /// The option `index` of `question`, picked by `responder`; `None` when the question has no
    /// such option (a stale or forged button).
    pub fn choice(question: &Question, index: usize, responder: impl Into<String>) -> Option<Self> {
        let label = question.options.get(index)?.clone();
        Some(ChannelAnswer {
            body: AnswerBody::Choice { index, label },
            responder: responder.into(),
        })
    }

    /// A free-text answer from `responder`.
    pub fn text(text: impl Into<String>, responder: impl Into<String>) -> Self {
        ChannelAnswer {
            body: AnswerBody::Text(text.into()),
            responder: responder.into(),
        }
    }
}

/// Somewhere a question can be offered to a human (terminal, Zulip, …): what a channel
/// implements, as async methods. The broker holds channels as [`DynChannel`]s, which every
/// channel is.
pub trait Channel: Send + Sync {
    /// The channel's name, stored with answers.
    fn name(&self) -> &'static str;

    /// Offers `question`; resolves with an answer if this channel got one, or `None` when it
    /// stopped without one. `stop` fires when another channel won or the wait was cancelled.
    ///
    /// The same question is offered again after a restart (`tether resume`): a channel that
    /// posts somewhere must remember where (the store's `question_posts`) and wait on that post
    /// instead of posting again.
    fn offer(
        &self,
        question: &Question,
        stop: CancellationToken,
    ) -> impl Future<Output = Option<ChannelAnswer>> + Send;

    /// Tells the channel another channel answered first (e.g. a note in the Zulip topic).
    fn answered_elsewhere(
        &self,
        _question: &Question,
        _answer: &Answer,
    ) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Shows a notice about a run (it finished, paused, …) where this channel shows the run's
    /// questions. Called only for the kinds `[notify]` turns on for this channel.
    fn notice(&self, _notice: &Notice) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Reminds whoever this channel reaches that `question` is still waiting (`human.remind_after`
    /// passed). Sinks send a "still waiting" notice; a chat channel may do nothing, its post
    /// being still there.
    fn remind(&self, _question: &Question) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Waits until what the channel queued to send in the background is handed over or given
    /// up, so a run's last notice is not lost when the process exits. The caller bounds the
    /// wait.
    fn flush(&self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// Tells the channel the run `run` ended with `outcome`. Questions of an interrupted run
    /// stay pending and are offered again when it is resumed.
    fn run_ended(&self, _run: &RunId, _outcome: Outcome) -> impl Future<Output = ()> + Send {
        async {}
    }
}

/// A [`Channel`] as the broker holds it, a trait object: the same methods, their futures
/// boxed. Implemented for every channel; implement [`Channel`] instead.
pub trait DynChannel: Send + Sync {
    /// [`Channel::name`].
    fn name(&self) -> &'static str;
    /// [`Channel::offer`].
    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>>;
    /// [`Channel::answered_elsewhere`].
    fn answered_elsewhere<'a>(
        &'a self,
        question: &'a Question,
        answer: &'a Answer,
    ) -> BoxFuture<'a, ()>;
    /// [`Channel::notice`].
    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()>;
    /// [`Channel::remind`].
    fn remind<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, ()>;
    /// [`Channel::flush`].
    fn flush(&self) -> BoxFuture<'_, ()>;
    /// [`Channel::run_ended`].
    fn run_ended<'a>(&'a self, run: &'a RunId, outcome: Outcome) -> BoxFuture<'a, ()>;
}

impl<C: Channel> DynChannel for C {
    fn name(&self) -> &'static str {
        Channel::name(self)
    }

    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>> {
        Box::pin(Channel::offer(self, question, stop))
    }

    fn answered_elsewhere<'a>(
        &'a self,
        question: &'a Question,
        answer: &'a Answer,
    ) -> BoxFuture<'a, ()> {
        Box::pin(Channel::answered_elsewhere(self, question, answer))
    }

    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(Channel::notice(self, notice))
    }

    fn remind<'a>(&'a self, question: &'a Question) -> BoxFuture<'a, ()> {
        Box::pin(Channel::remind(self, question))
    }

    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(Channel::flush(self))
    }

    fn run_ended<'a>(&'a self, run: &'a RunId, outcome: Outcome) -> BoxFuture<'a, ()> {
        Box::pin(Channel::run_ended(self, run, outcome))
    }
}

//! A channel the agent could answer on in a person's place, kept to telling.
//!
//! A channel's descriptor says when its reply path is within the agent's reach
//! ([`crate::registry::ReplyPath::Exposed`]): ntfy with its topic in tether.toml and the network
//! open, whose buttons the agent could press itself. Such a channel is wrapped here: it is still
//! offered every question — so the person is still reached there — and still told who answered,
//! reminded and sent notices, but whatever it hears is dropped, never recorded as an answer. The
//! question then waits for the other channels, the terminal, the dashboard or `tether answer`.
//!
//! The channel is also built to offer no way to answer (ntfy pushes no buttons and follows no
//! reply topic); this wrapper is what holds whatever a channel does.

use std::sync::Arc;

use tether_store::{Outcome, Question, RunId};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::{Channel, ChannelAnswer, DynChannel};
use crate::notices::Notice;

/// `inner`, whose answers are never taken.
pub struct TellOnly {
    inner: Arc<dyn DynChannel>,
}

impl TellOnly {
    /// `inner`, telling only.
    pub fn new(inner: Arc<dyn DynChannel>) -> Self {
        TellOnly { inner }
    }
}

impl Channel for TellOnly {
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        if let Some(dropped) = self.inner.offer(question, stop.clone()).await {
            tracing::warn!(
                channel = self.inner.name(),
                responder = %crate::visible::one_line(&dropped.responder),
                "an answer on a channel the agent can reach was not taken"
            );
            stop.cancelled().await;
        }
        None
    }

    async fn answered_elsewhere(&self, question: &Question, answer: &Answer) {
        self.inner.answered_elsewhere(question, answer).await;
    }

    async fn notice(&self, notice: &Notice) {
        self.inner.notice(notice).await;
    }

    async fn remind(&self, question: &Question) {
        self.inner.remind(question).await;
    }

    async fn flush(&self) {
        self.inner.flush().await;
    }

    async fn run_ended(&self, run: &RunId, outcome: Outcome) {
        self.inner.run_ended(run, outcome).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A channel that answers every question at once.
    struct Eager;

    impl Channel for Eager {
        fn name(&self) -> &'static str {
            "eager"
        }

        async fn offer(&self, _q: &Question, _stop: CancellationToken) -> Option<ChannelAnswer> {
            Some(ChannelAnswer::text("yes", "the agent"))
        }
    }

    #[tokio::test]
    async fn what_it_hears_is_never_an_answer() {
        let store = tether_store::Store::open_in_memory().unwrap();
        let question = store
            .insert_question(&tether_store::NewQuestion {
                question: "run `git push`? yes/no".into(),
                options: vec!["yes".into(), "no".into()],
                ..tether_store::NewQuestion::default()
            })
            .unwrap();
        let channel = TellOnly::new(Arc::new(Eager));
        let stop = CancellationToken::new();
        let offered = {
            let stop = stop.clone();
            async move { Channel::offer(&channel, &question, stop).await }
        };
        let offered = tokio::spawn(offered);
        stop.cancel();
        assert_eq!(offered.await.unwrap(), None);
    }
}

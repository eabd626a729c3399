//! Building the notice sinks — ntfy, webhook, email, command — from `tether.toml`: those
//! `human.channels` lists, and those `human.escalate_to` names (built beside the others, offered
//! a question only once it waited `human.escalate_after`).
//!
//! A sink that cannot be built is left out with a [`SinkError`] naming the setting or variable
//! to fix, which the desk keeps with the chat channels' problems (every call that needs a human
//! then says what to fix) and `tether doctor` shows. Secrets never appear in these errors.

use std::sync::Arc;

use tether_config::{Config, Workspace};
use tether_store::{Journal, Question};

use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::{BoxFuture, Channel, ChannelAnswer, DynChannel};
use crate::notices::Notice;
use crate::registry::{Role, Setup};
use crate::sink_body::{BodyKind, SinkBody};

/// Why a sink is off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SinkError {
    /// Settings or variables it needs are not set.
    #[error("the {sink} sink is off: it needs {}", .missing.join(", "))]
    Missing {
        /// The sink (`ntfy`, `webhook`, `email`, `notify_command`).
        sink: &'static str,
        /// What to set, each naming its setting or variable.
        missing: Vec<String>,
    },
    /// A setting's value cannot be used.
    #[error("a notice sink is off: `{setting}`: {problem}")]
    Invalid {
        /// The setting, e.g. `[webhook] url_env`.
        setting: &'static str,
        /// What is wrong with it (never the value of a secret).
        problem: String,
    },
    /// Its HTTP client could not be set up.
    #[error("a notice sink is off: {0}")]
    Setup(String),
}

/// An HTTP client with tether's TLS setup.
pub(crate) fn http_client(https: bool) -> Result<reqwest::Client, SinkError> {
    tether_ntfy::http_client(https).map_err(|e| SinkError::Setup(e.to_string()))
}

/// Where a sink records that it handed a question over (the store's posts, under `key`), so a
/// question waited for again after a restart is not sent twice.
#[derive(Clone)]
pub struct SentLog {
    journal: Journal,
    key: String,
}

impl SentLog {
    /// A log in `journal`'s store under `key`.
    pub fn new(journal: Journal, key: impl Into<String>) -> Self {
        SentLog {
            journal,
            key: key.into(),
        }
    }

    /// Whether `question` was not handed over yet (and records that it now is). When the store
    /// cannot say, it is handed over again rather than not at all.
    pub fn first_time(&self, question: &Question) -> bool {
        self.journal
            .store()
            .record_post(&question.id, &self.key, &serde_json::json!({}))
            .unwrap_or(true)
    }

    /// Whether `question` was handed over here. When the store cannot say, it was (its answer
    /// is told rather than not).
    pub fn handed_over(&self, question: &Question) -> bool {
        self.journal
            .store()
            .posts(&question.id)
            .map_or(true, |posts| posts.iter().any(|p| p.channel == self.key))
    }

    /// Whether `question`'s answer was not told here yet (and records that it now is), so it is
    /// told once whichever process tells it — the one waiting for the question, or the
    /// `tether answer` of a question nobody waits for. When the store cannot say, it is told.
    pub fn first_answer(&self, question: &Question) -> bool {
        self.journal
            .store()
            .record_post(
                &question.id,
                &answered_key(&self.key),
                &serde_json::json!({}),
            )
            .unwrap_or(true)
    }
}

/// The key under which telling a sink (recorded under `key`) a question's answer is recorded.
pub(crate) fn answered_key(key: &str) -> String {
    format!("answered:{key}")
}

/// A sink that only tells — the webhook, email, a command: it hands each message over and never
/// answers a question. [`OneWay`] makes one a channel.
pub trait Deliver: Send + Sync {
    /// Its channel name.
    fn name(&self) -> &'static str;

    /// Hands `body` over; a failure is logged, never the caller's.
    fn deliver(&self, body: SinkBody) -> BoxFuture<'_, ()>;

    /// Waits until what it queued is handed over or given up (before the process exits).
    fn flush(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

/// A one-way sink as a channel: a question is handed over once (once across restarts, with a
/// [`SentLog`]), then its reminders, the answer given elsewhere (once, and only if the question
/// was handed over) and the run's notices; it never answers.
pub struct OneWay<D> {
    sink: D,
    sent: Option<SentLog>,
}

impl<D: Deliver> OneWay<D> {
    /// `sink` as a channel.
    pub fn new(sink: D) -> Self {
        OneWay { sink, sent: None }
    }

    /// Records what was handed over in `sent`, so a question goes out once across restarts.
    pub fn with_sent_log(mut self, sent: SentLog) -> Self {
        self.sent = Some(sent);
        self
    }

    /// The sink itself.
    pub fn sink(&self) -> &D {
        &self.sink
    }
}

impl<D: Deliver> Channel for OneWay<D> {
    fn name(&self) -> &'static str {
        self.sink.name()
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        if self.sent.as_ref().is_none_or(|s| s.first_time(question)) {
            let body = SinkBody::question(question, BodyKind::Question);
            tokio::select! {
                () = self.sink.deliver(body) => {}
                () = stop.cancelled() => return None,
            }
        }
        stop.cancelled().await;
        None
    }

    /// Told only when the question was handed over here, and once.
    async fn answered_elsewhere(&self, question: &Question, answer: &Answer) {
        let tell = self
            .sent
            .as_ref()
            .is_none_or(|s| s.handed_over(question) && s.first_answer(question));
        if tell {
            self.sink
                .deliver(SinkBody::answered(question, answer))
                .await;
        }
    }

    async fn remind(&self, question: &Question) {
        self.sink
            .deliver(SinkBody::question(question, BodyKind::Reminder))
            .await
    }

    async fn notice(&self, notice: &Notice) {
        self.sink.deliver(SinkBody::notice(notice)).await
    }

    async fn flush(&self) {
        self.sink.flush().await
    }
}

/// What is wrong with the notice sinks `config` turns on (listed in `human.channels`, or named
/// by `human.escalate_to`), without building them: what `tether doctor` reports.
pub fn problems(config: &Config) -> Vec<String> {
    crate::registry::problems(config)
}

/// Builds the sinks of one process: the config, the workspace and the store.
pub struct SinkBuilder<'a> {
    setup: Setup<'a>,
}

impl<'a> SinkBuilder<'a> {
    /// A builder over `config` for the workspace `ws`, recording in `journal`.
    pub fn new(config: &'a Config, ws: &'a Workspace, journal: &'a Journal) -> Self {
        SinkBuilder {
            // They only tell here: as if the agent reached anything.
            setup: Setup {
                config,
                ws,
                journal,
                reach: crate::registry::Reach::ANYTHING,
            },
        }
    }

    /// Every sink that may have been handed a question: the notice sinks `human.channels`
    /// lists and the escalation sinks (their problems left out: what cannot be built was never
    /// handed one).
    pub fn all(&self) -> Vec<Arc<dyn DynChannel>> {
        let sinks = self
            .setup
            .config
            .human
            .channels
            .iter()
            .filter_map(|kind| crate::registry::find(*kind))
            .filter(|def| def.is_sink())
            .filter_map(|def| (def.build)(&self.setup, Role::Listed).ok());
        let mut all: Vec<Arc<dyn DynChannel>> = sinks.collect();
        all.extend(crate::registry::escalation(&self.setup).0);
        all
    }
}

//! The high level the broker calls: ask in a topic, resume after a crash, post a note.
//!
//! [`ZulipClient`] holds the settings, the HTTP client and the bot's identity (fetched once with
//! `GET /users/me`), and hands out [`PendingReply`]s that do the waiting.

use std::sync::Arc;

use crate::ZulipConfig;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::api::{ApiOptions, ZulipApi};
use crate::error::ZulipError;
use crate::pending::{PendingReply, Reply};
use crate::retry::RetryPolicy;
use crate::settings::ZulipSettings;
use crate::wire::{BotIdentity, MessageId};

/// Tuning of a [`ZulipClient`]; the defaults suit a real server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Timeouts of the HTTP layer.
    pub api: ApiOptions,
    /// Backoff and retry limits.
    pub retry: RetryPolicy,
    /// Messages per `GET /messages` page when catching up (the docs recommend ≤ 1000).
    pub catch_up_page: u32,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            api: ApiOptions::default(),
            retry: RetryPolicy::default(),
            catch_up_page: 1000,
        }
    }
}

/// A Zulip bot posting questions into one stream. Cheap to clone.
#[derive(Debug, Clone)]
pub struct ZulipClient {
    shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) api: ZulipApi,
    pub(crate) stream: String,
    pub(crate) options: ClientOptions,
    bot: OnceCell<BotIdentity>,
}

impl ZulipClient {
    /// A client with default options. Fails only when TLS cannot be set up.
    pub fn new(settings: &ZulipSettings) -> Result<Self, ZulipError> {
        Self::with_options(settings, ClientOptions::default())
    }

    /// A client with the given options.
    pub fn with_options(
        settings: &ZulipSettings,
        options: ClientOptions,
    ) -> Result<Self, ZulipError> {
        let api = ZulipApi::new(settings, options.api.clone())?;
        Ok(Self {
            shared: Arc::new(Shared {
                api,
                stream: settings.stream.clone(),
                options,
                bot: OnceCell::new(),
            }),
        })
    }

    /// A client for the `[zulip]` table; a missing value is a [`ZulipError::Config`] naming it
    /// and its environment variable.
    pub fn from_config(config: &ZulipConfig) -> Result<Self, ZulipError> {
        Self::new(&ZulipSettings::from_config(config)?)
    }

    /// The stream questions go to.
    pub fn stream(&self) -> &str {
        &self.shared.stream
    }

    /// The low-level API this client uses.
    pub fn api(&self) -> &ZulipApi {
        &self.shared.api
    }

    /// The bot's identity (`GET /users/me`, fetched once).
    pub async fn bot(&self, cancel: &CancellationToken) -> Result<BotIdentity, ZulipError> {
        let bot = self
            .shared
            .bot
            .get_or_try_init(|| {
                self.shared.options.retry.request(
                    "users/me",
                    &self.shared.api,
                    cancel,
                    |api| async move { api.me().await },
                )
            })
            .await?;
        Ok(bot.clone())
    }

    /// Asks in `topic` and waits for the first human reply: [`ZulipClient::post_question`]
    /// then [`PendingReply::wait`]. Use the two steps to persist the question's id first.
    pub async fn ask(
        &self,
        topic: &str,
        content: &str,
        cancel: &CancellationToken,
    ) -> Result<Reply, ZulipError> {
        self.post_question(topic, content, cancel)
            .await?
            .wait(cancel)
            .await
    }

    /// Registers a queue narrowed to `topic`, **then** posts `content` there, so no reply can
    /// slip in before the queue exists. The returned [`PendingReply`] knows the posted id
    /// ([`PendingReply::question_id`]). Works the same for a follow-up in an existing topic:
    /// only replies newer than this post answer it.
    ///
    /// Transient failures are retried [`RetryPolicy::request_retries`] times; if posting fails
    /// for good the queue is deregistered and the error returned.
    pub async fn post_question(
        &self,
        topic: &str,
        content: &str,
        cancel: &CancellationToken,
    ) -> Result<PendingReply, ZulipError> {
        let topic = clean_topic(topic)?;
        let bot = self.bot(cancel).await?;
        let mut pending =
            PendingReply::new(Arc::clone(&self.shared), topic, &bot, MessageId(0), None);
        let limit = Some(self.shared.options.retry.request_retries);
        pending.register(cancel, limit).await?;
        match pending.post(content, cancel).await {
            Ok(id) => {
                tracing::info!(topic = %pending.topic(), message_id = %id, "question posted to zulip");
                pending.set_question(id);
                Ok(pending)
            }
            Err(err) => {
                pending.close().await;
                Err(err)
            }
        }
    }

    /// A [`PendingReply`] for a question already posted as `question_id` (after a crash):
    /// its wait registers a queue, reads the replies posted meanwhile with `GET /messages`,
    /// then long-polls. Nothing is posted.
    pub async fn pending(
        &self,
        topic: &str,
        question_id: MessageId,
        cancel: &CancellationToken,
    ) -> Result<PendingReply, ZulipError> {
        let topic = clean_topic(topic)?;
        let bot = self.bot(cancel).await?;
        Ok(PendingReply::new(
            Arc::clone(&self.shared),
            topic,
            &bot,
            question_id,
            None,
        ))
    }

    /// Waits for the first reply newer than `question_id` in `topic` without posting again:
    /// [`ZulipClient::pending`] then [`PendingReply::wait`].
    pub async fn resume(
        &self,
        topic: &str,
        question_id: MessageId,
        cancel: &CancellationToken,
    ) -> Result<Reply, ZulipError> {
        self.pending(topic, question_id, cancel)
            .await?
            .wait(cancel)
            .await
    }

    /// Posts `text` in `topic` (e.g. [`crate::answered_elsewhere_note`]), retrying transient
    /// failures [`RetryPolicy::request_retries`] times. A note is not checked for duplicates: in
    /// the rare case of a lost response it may appear twice.
    pub async fn note(
        &self,
        topic: &str,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<MessageId, ZulipError> {
        let topic = clean_topic(topic)?;
        let (stream, topic) = (self.shared.stream.as_str(), topic.as_str());
        self.shared
            .options
            .retry
            .request(
                "messages",
                &self.shared.api,
                cancel,
                move |api| async move { api.send_stream_message(stream, topic, text).await },
            )
            .await
    }
}

/// Topics are compared trimmed (Zulip strips them); an empty one is an error.
fn clean_topic(topic: &str) -> Result<String, ZulipError> {
    let topic = topic.trim();
    if topic.is_empty() {
        return Err(ZulipError::EmptyTopic);
    }
    Ok(topic.to_owned())
}

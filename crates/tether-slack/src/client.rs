//! The high level the channel calls: ask in the channel (or in a thread), resume after a crash,
//! post a note, mark a question answered.
//!
//! [`SlackClient`] holds the settings, the HTTP client, the bot's identity (fetched once with
//! `auth.test`) and the one Socket Mode connection its [`PendingReply`]s share.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::api::{ApiOptions, OutgoingMessage, Posted, SlackApi};
use crate::error::SlackError;
use crate::filter::ReplyFilter;
use crate::hub::{Hub, UnclaimedHandler};
use crate::pending::{PendingReply, Thread};
use crate::retry::{Backoff, RetryPolicy, guarded, pause};
use crate::settings::SlackSettings;
use crate::socket::SocketOptions;
use crate::wire::{BotIdentity, Ts};

/// How many of the channel's or thread's newest messages are searched for a post whose answer
/// was lost.
const RECENT_FOR_ECHO: u32 = 100;

/// Tuning of a [`SlackClient`]; the defaults suit Slack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Timeouts of the HTTP layer.
    pub api: ApiOptions,
    /// Timing of the Socket Mode connection.
    pub socket: SocketOptions,
    /// Backoff and retry limits.
    pub retry: RetryPolicy,
    /// Messages per `conversations.replies` page when catching up.
    pub catch_up_page: u32,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            api: ApiOptions::default(),
            socket: SocketOptions::default(),
            retry: RetryPolicy::default(),
            catch_up_page: 200,
        }
    }
}

/// A Slack bot posting questions into one channel. Cheap to clone; clones share one socket.
#[derive(Debug, Clone)]
pub struct SlackClient {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) api: SlackApi,
    names: std::sync::Mutex<std::collections::HashMap<String, String>>,
    pub(crate) channel: String,
    pub(crate) options: ClientOptions,
    pub(crate) hub: Hub,
    bot: OnceCell<BotIdentity>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("channel", &self.channel)
            .finish_non_exhaustive()
    }
}

impl SlackClient {
    /// A client with default options. Fails only when TLS cannot be set up.
    pub fn new(settings: &SlackSettings) -> Result<Self, SlackError> {
        Self::with_options(settings, ClientOptions::default())
    }

    /// A client with the given options.
    pub fn with_options(
        settings: &SlackSettings,
        options: ClientOptions,
    ) -> Result<Self, SlackError> {
        let api = SlackApi::new(settings, &options.api)?;
        let hub = Hub::new(
            api.clone(),
            settings.channel.clone(),
            options.socket.clone(),
            options.retry.clone(),
        );
        Ok(Self {
            shared: Arc::new(Shared {
                api,
                channel: settings.channel.clone(),
                options,
                hub,
                names: std::sync::Mutex::default(),
                bot: OnceCell::new(),
            }),
        })
    }

    /// A client for the `[slack]` table; a missing value is a [`SlackError::Config`] naming it
    /// and the variable or key that sets it.
    pub fn from_config(config: &crate::SlackConfig) -> Result<Self, SlackError> {
        Self::new(&SlackSettings::from_config(config)?)
    }

    /// The channel questions go to.
    pub fn channel(&self) -> &str {
        &self.shared.channel
    }

    /// The low-level API this client uses.
    pub fn api(&self) -> &SlackApi {
        &self.shared.api
    }

    /// How many Socket Mode connections reached `hello` so far.
    pub fn connections(&self) -> u64 {
        self.shared.hub.connections()
    }

    /// Events in the channel that no wait of this client claims (Slack gave them to this
    /// process's socket, but another process waits on their thread) go to `handler`, called on
    /// the socket's task before the event is acknowledged.
    pub fn on_unclaimed(&self, handler: UnclaimedHandler) {
        self.shared.hub.set_unclaimed(handler);
    }

    /// The bot's identity (`auth.test`, fetched once).
    pub async fn bot(&self, cancel: &CancellationToken) -> Result<BotIdentity, SlackError> {
        let bot = self
            .shared
            .bot
            .get_or_try_init(|| {
                self.shared.options.retry.request(
                    "auth.test",
                    &self.shared.api,
                    cancel,
                    |api| async move { api.auth_test().await },
                )
            })
            .await?;
        Ok(bot.clone())
    }

    /// How `user` is shown (`users.info`, needing the scope `users:read`), remembered once
    /// known; `None` when Slack does not say within 2 s (the caller then shows the user id).
    pub async fn user_name(&self, user: &str) -> Option<String> {
        let names = |s: &Shared| {
            s.names
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .get(user)
                .cloned()
        };
        if let Some(name) = names(&self.shared) {
            return Some(name);
        }
        let asked = tokio::time::timeout(
            std::time::Duration::from_secs(2),
            self.shared.api.user_name(user),
        )
        .await;
        match asked {
            Ok(Ok(name)) => {
                self.shared
                    .names
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(user.to_owned(), name.clone());
                Some(name)
            }
            Ok(Err(err)) => {
                tracing::debug!(error = %err, "slack did not name a user");
                None
            }
            Err(_) => None,
        }
    }

    /// Posts a question — a new thread in the channel, or a follow-up in `thread` — and returns
    /// the [`PendingReply`] to wait on (persist its thread and ts first). `options` is the
    /// number of buttons `text`/`blocks` carry.
    ///
    /// Transient failures are retried [`RetryPolicy::request_retries`] times; after a failure
    /// that may hide a stored post (a 5xx, a lost response) the channel or thread is searched
    /// for the post's nonce first, so the question is not posted twice.
    pub async fn post_question(
        &self,
        text: &str,
        blocks: Value,
        options: usize,
        thread: Option<&Thread>,
        cancel: &CancellationToken,
    ) -> Result<PendingReply, SlackError> {
        let bot = self.bot(cancel).await?;
        let nonce = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let message = OutgoingMessage {
            text: text.to_owned(),
            blocks,
            thread_ts: thread.map(|t| t.ts.clone()),
            nonce: Some(nonce.clone()),
        };
        let posted = self.post(&message, &bot, cancel).await?;
        tracing::info!(ts = %posted.ts, "question posted to slack");
        let thread_ts = thread.map_or_else(|| posted.ts.clone(), |t| t.ts.clone());
        Ok(PendingReply::new(
            Arc::clone(&self.shared),
            ReplyFilter {
                channel: posted.channel,
                thread: thread_ts,
                question: posted.ts,
                options,
                bot,
            },
        ))
    }

    /// A [`PendingReply`] for a question already posted as `question` in `thread` (after a
    /// crash): its wait reads the thread first, then listens. Nothing is posted.
    pub async fn pending(
        &self,
        thread: &Thread,
        question: &Ts,
        options: usize,
        cancel: &CancellationToken,
    ) -> Result<PendingReply, SlackError> {
        let bot = self.bot(cancel).await?;
        Ok(PendingReply::new(
            Arc::clone(&self.shared),
            ReplyFilter {
                channel: thread.channel.clone(),
                thread: thread.ts.clone(),
                question: question.clone(),
                options,
                bot,
            },
        ))
    }

    /// Posts `text` in `thread` (a note: who answered, a run's notice). Retried
    /// [`RetryPolicy::request_retries`] times; in the rare case of a lost response it may appear
    /// twice.
    pub async fn note(
        &self,
        thread: Option<&Thread>,
        text: &str,
        cancel: &CancellationToken,
    ) -> Result<Posted, SlackError> {
        let message = OutgoingMessage {
            text: crate::format::escape(text),
            blocks: Value::Null,
            thread_ts: thread.map(|t| t.ts.clone()),
            nonce: None,
        };
        let channel = thread.map_or(self.shared.channel.as_str(), |t| t.channel.as_str());
        let message = &message;
        self.shared
            .options
            .retry
            .request(
                "chat.postMessage",
                &self.shared.api,
                cancel,
                move |api| async move { api.post_message(channel, message).await },
            )
            .await
    }

    /// Replaces the bot's message `ts` (e.g. a question's buttons by who answered).
    pub async fn update(
        &self,
        channel: &str,
        ts: &Ts,
        text: &str,
        blocks: &Value,
        cancel: &CancellationToken,
    ) -> Result<(), SlackError> {
        self.shared
            .options
            .retry
            .request(
                "chat.update",
                &self.shared.api,
                cancel,
                move |api| async move { api.update_message(channel, ts, text, blocks).await },
            )
            .await
    }

    /// Posts `message` as `bot`, retrying; after a failure that may hide a stored post, looks
    /// for it by the message's nonce first.
    async fn post(
        &self,
        message: &OutgoingMessage,
        bot: &BotIdentity,
        cancel: &CancellationToken,
    ) -> Result<Posted, SlackError> {
        // Shortly before the post: where a search for it starts.
        let since = now_ts(-120);
        let limit = self.shared.options.retry.request_retries;
        let mut backoff = Backoff::from(self.shared.options.retry.clone());
        let channel = self.shared.channel.as_str();
        loop {
            match guarded(self.shared.api.post_message(channel, message), cancel, None).await {
                Ok(posted) => return Ok(posted),
                Err(err) if err.is_retryable() => {
                    if err.is_ambiguous()
                        && let Some(posted) =
                            self.find_own_post(message, bot, &since, cancel).await?
                    {
                        tracing::info!(ts = %posted.ts, error = %err, "the slack post landed despite the error");
                        return Ok(posted);
                    }
                    if backoff.failures() >= limit {
                        return Err(err);
                    }
                    let delay = backoff.delay(&err);
                    tracing::warn!(error = %err, ?delay, "posting to slack failed; retrying");
                    pause(delay, cancel, None).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// The bot's own post carrying `message`'s nonce, if Slack stored it despite the error:
    /// searched since `since` in the thread (a follow-up) or among the channel's newest
    /// messages. A message without a nonce cannot be found.
    async fn find_own_post(
        &self,
        message: &OutgoingMessage,
        bot: &BotIdentity,
        since: &Ts,
        cancel: &CancellationToken,
    ) -> Result<Option<Posted>, SlackError> {
        let Some(nonce) = message.nonce.as_deref() else {
            return Ok(None);
        };
        let channel = self.shared.channel.as_str();
        let thread = message.thread_ts.as_ref();
        let page = self
            .shared
            .options
            .retry
            .request("find post", &self.shared.api, cancel, |api| async move {
                match thread {
                    Some(thread) => {
                        api.replies(channel, thread, Some(since), RECENT_FOR_ECHO, None)
                            .await
                    }
                    None => api.history(channel, since, RECENT_FOR_ECHO).await,
                }
            })
            .await?;
        let own = |m: &&crate::wire::Message| {
            m.nonce() == Some(nonce)
                && (m.user.as_deref() == Some(bot.user_id.as_str())
                    || (m.bot_id.is_some() && m.bot_id == bot.bot_id))
        };
        Ok(page.messages.iter().find(own).and_then(|m| {
            Some(Posted {
                channel: channel.to_owned(),
                ts: m.ts()?,
            })
        }))
    }
}

/// A ts `offset_secs` from now (for "messages since shortly before the post").
fn now_ts(offset_secs: i64) -> Ts {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    Ts::from_secs(now.saturating_add_signed(offset_secs))
}

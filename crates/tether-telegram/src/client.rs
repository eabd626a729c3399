//! The high level the channel calls: post a question (or a note), close its card, and serve —
//! poll for replies while holding the bot's lock, else wait to take it over.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::TelegramConfig;
use tokio::sync::OnceCell;
use tokio_util::sync::CancellationToken;

use crate::api::{ApiOptions, Button, TelegramApi};
use crate::error::TelegramError;
use crate::poller::{self, DEFAULT_LOCK_RETRY, Deliver};
use crate::registry::Registry;
use crate::retry::{RetryPolicy, pause};
use crate::settings::TelegramSettings;
use crate::wire::{Message, User};

/// Tuning of a [`TelegramClient`]; the defaults suit the real Bot API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// Timeouts of the HTTP layer (incl. the long-poll's).
    pub api: ApiOptions,
    /// Backoff and retry limits.
    pub retry: RetryPolicy,
    /// Where the per-bot registry and lock live (default [`Registry::default_base`]).
    pub registry_base: Option<PathBuf>,
    /// How often a process that does not poll tries to take the poller lock.
    pub lock_retry: Duration,
    /// How long to wait before looking a reply to an unregistered bot message up again.
    pub unknown_recheck: Duration,
}

impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            api: ApiOptions::default(),
            retry: RetryPolicy::default(),
            registry_base: None,
            lock_retry: DEFAULT_LOCK_RETRY,
            unknown_recheck: Duration::from_millis(50),
        }
    }
}

/// A Telegram bot asking in one chat. Cheap to clone.
#[derive(Debug, Clone)]
pub struct TelegramClient {
    shared: Arc<Shared>,
}

#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) api: TelegramApi,
    pub(crate) chat_id: String,
    pub(crate) bot_id: u64,
    pub(crate) options: ClientOptions,
    pub(crate) registry: Registry,
    bot: OnceCell<User>,
    forum: OnceCell<bool>,
}

impl TelegramClient {
    /// A client with `options`. Fails when TLS or the registry directory cannot be set up.
    pub fn new(settings: &TelegramSettings, options: ClientOptions) -> Result<Self, TelegramError> {
        let api = TelegramApi::new(settings, options.api.clone())?;
        let base = options
            .registry_base
            .clone()
            .unwrap_or_else(Registry::default_base);
        let registry =
            Registry::open(&base, settings.bot_id()).map_err(|e| TelegramError::Transport {
                detail: format!(
                    "cannot open the bot's registry under {}: {e}",
                    base.display()
                ),
            })?;
        Ok(Self {
            shared: Arc::new(Shared {
                api,
                chat_id: settings.chat_id.clone(),
                bot_id: settings.bot_id(),
                options,
                registry,
                bot: OnceCell::new(),
                forum: OnceCell::new(),
            }),
        })
    }

    /// A client for `[telegram]`; a missing value is a [`TelegramError::Config`] naming it.
    pub fn from_config(config: &TelegramConfig) -> Result<Self, TelegramError> {
        Self::new(
            &TelegramSettings::from_config(config)?,
            ClientOptions::default(),
        )
    }

    /// The configured chat (`-100…` or `@name`).
    pub fn chat_id(&self) -> &str {
        &self.shared.chat_id
    }

    /// The shared registry of waiting posts.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The low-level API.
    pub fn api(&self) -> &TelegramApi {
        &self.shared.api
    }

    /// The bot (`getMe`, fetched once; checks the token).
    pub async fn bot(&self, cancel: &CancellationToken) -> Result<User, TelegramError> {
        let user = self
            .shared
            .bot
            .get_or_try_init(|| {
                self.shared.options.retry.request(
                    "getMe",
                    &self.shared.api,
                    cancel,
                    |api| async move { api.get_me().await },
                )
            })
            .await?;
        Ok(user.clone())
    }

    /// Sends `text` to the configured chat (as a reply to `reply_to`, with `buttons`), retrying
    /// transient failures [`RetryPolicy::request_retries`] times. Telegram has no idempotency
    /// key: a response lost after the message was stored can make a retry post it twice.
    pub async fn send(
        &self,
        text: &str,
        reply_to: Option<i64>,
        buttons: &[Button],
        cancel: &CancellationToken,
    ) -> Result<Message, TelegramError> {
        self.send_in(text, reply_to, None, buttons, cancel).await
    }

    /// [`TelegramClient::send`] into the forum topic `thread`, when given.
    pub async fn send_in(
        &self,
        text: &str,
        reply_to: Option<i64>,
        thread: Option<i64>,
        buttons: &[Button],
        cancel: &CancellationToken,
    ) -> Result<Message, TelegramError> {
        let chat = self.shared.chat_id.as_str();
        self.shared
            .options
            .retry
            .request(
                "sendMessage",
                &self.shared.api,
                cancel,
                move |api| async move {
                    api.send_message(chat, text, reply_to, thread, buttons)
                        .await
                },
            )
            .await
    }

    /// Whether the configured chat has forum topics (`getChat`, asked once).
    pub async fn is_forum(&self, cancel: &CancellationToken) -> Result<bool, TelegramError> {
        let chat = self.shared.chat_id.as_str();
        let forum = self
            .shared
            .forum
            .get_or_try_init(|| {
                self.shared.options.retry.request(
                    "getChat",
                    &self.shared.api,
                    cancel,
                    move |api| async move { api.get_chat(chat).await.map(|c| c.is_forum) },
                )
            })
            .await?;
        Ok(*forum)
    }

    /// Opens a forum topic named `name` in the configured chat; its `message_thread_id`.
    pub async fn create_topic(
        &self,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<i64, TelegramError> {
        let chat = self.shared.chat_id.as_str();
        self.shared
            .options
            .retry
            .request(
                "createForumTopic",
                &self.shared.api,
                cancel,
                move |api| async move { api.create_forum_topic(chat, name).await },
            )
            .await
    }

    /// Removes a question's buttons (best effort, one try).
    pub async fn close_card(&self, chat_id: i64, message_id: i64) {
        if let Err(e) = self.shared.api.remove_keyboard(chat_id, message_id).await {
            tracing::debug!(error = %e, "could not remove a telegram keyboard");
        }
    }

    /// Serves replies until `cancel` fires: while this process holds the bot's poller lock it
    /// long-polls and hands every reply to a waiting post (of any workspace) to `deliver`;
    /// otherwise it tries to take the lock every [`ClientOptions::lock_retry`], so when the
    /// poller exits another waiter takes over. `Err` only for a fatal error (a refused token).
    pub async fn serve(
        &self,
        deliver: &dyn Deliver,
        cancel: &CancellationToken,
    ) -> Result<(), TelegramError> {
        loop {
            match self.shared.registry.try_lock() {
                Ok(Some(lock)) => {
                    tracing::debug!("polling telegram for this bot");
                    let result = poller::poll(&self.shared, deliver, cancel).await;
                    drop(lock);
                    return result;
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, "cannot take the telegram poller lock"),
            }
            if pause(self.shared.options.lock_retry, cancel).await.is_err() {
                return Ok(());
            }
        }
    }
}

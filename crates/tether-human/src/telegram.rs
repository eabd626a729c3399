//! The Telegram channel: a question is a message from the bot in the configured chat (its
//! options as inline buttons), and a reply to that message — or a press of one of its buttons —
//! answers it.
//!
//! Telegram lets only one process poll a bot, while several tether processes may wait at once
//! (a run, `tether mcp` in an editor, a `tether ask` in a script, in one workspace or several).
//! So this channel never hands an answer back through its wait: it registers its post in the
//! bot's shared registry and serves — the one process holding the bot's poller lock long-polls
//! and writes every reply into the store of the workspace that asked ([`crate::relay`], which
//! pokes that workspace's waiters); the others wait on their store and take the lock over when
//! the poller exits. The store is the truth, whoever polls.
//!
//! Where it goes: in a supergroup with forum topics, each conversation opens a topic of its own
//! (named after its first question) and any message in the topic answers; elsewhere the
//! question is a message in the chat and a reply to it answers (a follow-up replies to the
//! conversation's first question, keeping the chain).
//!
//! A post's place is its chat, message, topic and date ([`TelegramPost`]); the adapter
//! ([`crate::chat`]) records it, so a resumed run registers the same message again instead of
//! posting twice; a reply given meanwhile stays queued at Telegram (or was already stored by
//! another poller) and is delivered.

use std::path::PathBuf;
use tether_telegram::{ApiOptions, TelegramApi, TelegramConfig, TelegramError, TelegramSettings};

use serde::{Deserialize, Serialize};
use tether_store::{AnswerOutcome, Journal, Question, QuestionId, QuestionStatus, StoreError};
use tether_telegram::{
    Deliver, Delivered, QuestionMessage, Reply, TelegramClient, WaitingPost,
    answered_elsewhere_note,
};
use tokio_util::sync::CancellationToken;

use crate::broker::{Answer, answer};
use crate::channels::ChannelAnswer;
use crate::chat::{Chat, ChatError, ChatService};
use crate::notices::Notice;
use crate::registry::{Probed, probed_settings};

/// The name answers from Telegram are stored under.
const NAME: &str = "telegram";

/// Asks in a Telegram chat.
pub struct Telegram {
    client: TelegramClient,
    /// Where the poller records answers (this process's store).
    journal: Journal,
    state_dir: PathBuf,
}

/// Where a question was posted on Telegram.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TelegramPost {
    /// The chat.
    pub chat_id: i64,
    /// The question's message.
    pub message_id: i64,
    /// The forum topic it opened or followed up in.
    pub thread_id: Option<i64>,
    /// When it was sent (Unix seconds), to recognise a copy left by a retried send.
    #[serde(default)]
    pub date: Option<i64>,
}

/// The Telegram channel asking with `client`, recording posts and answers in `journal`'s
/// store, the store of the workspace whose state dir is `state_dir`.
pub fn channel(client: TelegramClient, journal: Journal, state_dir: PathBuf) -> Chat<Telegram> {
    let service = Telegram {
        client,
        journal: journal.clone(),
        state_dir,
    };
    Chat::new(service, journal)
}

impl Telegram {
    /// Where a new conversation goes: into a topic of its own when the chat has topics, else
    /// into the chat. The topic, if any.
    async fn new_topic(
        &self,
        q: &Question,
        stop: &CancellationToken,
    ) -> Result<Option<i64>, ChatError> {
        let forum = match self.client.is_forum(stop).await {
            Ok(forum) => forum,
            Err(e) => {
                tracing::warn!(error = %e, "cannot tell whether the telegram chat has topics; using a reply chain");
                false
            }
        };
        if !forum {
            return Ok(None);
        }
        let topic = self
            .client
            .create_topic(&topic_name(&q.question), stop)
            .await
            .map_err(ChatError::service)?;
        Ok(Some(topic))
    }

    /// Sends `text` as a reply to `reply_to` in `topic`, without buttons.
    async fn say(
        &self,
        text: &str,
        reply_to: Option<i64>,
        topic: Option<i64>,
    ) -> Result<(), ChatError> {
        self.client
            .send_in(text, reply_to, topic, &[], &CancellationToken::new())
            .await
            .map(drop)
            .map_err(ChatError::service)
    }
}

/// `q` as Telegram shows it.
fn question_message(q: &Question) -> QuestionMessage<'_> {
    QuestionMessage {
        question: &q.question,
        context: &q.context,
        confidence: q.confidence.unwrap_or(0),
        options: &q.options,
        follow_up: q.thread_id.is_some(),
    }
}

impl ChatService for Telegram {
    const NAME: &'static str = NAME;
    type Place = TelegramPost;
    type Waiting = ();

    /// A follow-up goes into its conversation's topic (or replies to the conversation's first
    /// message in a reply chain).
    async fn post(
        &self,
        q: &Question,
        thread: Option<&TelegramPost>,
        stop: &CancellationToken,
    ) -> Result<(TelegramPost, ()), ChatError> {
        let (reply_to, topic) = match thread {
            Some(TelegramPost {
                thread_id: Some(topic),
                ..
            }) => (None, Some(*topic)),
            Some(earlier) => (Some(earlier.message_id), None),
            None => (None, self.new_topic(q, stop).await?),
        };
        let message = question_message(q);
        let sent = self
            .client
            .send_in(
                &message.render(),
                reply_to,
                topic,
                &message.buttons(q.id.as_str()),
                stop,
            )
            .await
            .map_err(ChatError::service)?;
        let place = TelegramPost {
            chat_id: sent.chat.id,
            message_id: sent.message_id,
            thread_id: topic,
            date: Some(sent.date),
        };
        Ok((place, ()))
    }

    async fn resume(
        &self,
        _q: &Question,
        _place: &TelegramPost,
        _stop: &CancellationToken,
    ) -> Result<(), ChatError> {
        Ok(())
    }

    /// Registers the post for whichever process polls, and serves until `stop`; the answer, if
    /// Telegram gives one, is in the store.
    async fn wait(
        &self,
        q: &Question,
        place: &TelegramPost,
        (): (),
        stop: &CancellationToken,
    ) -> Result<Option<ChannelAnswer>, ChatError> {
        let post = WaitingPost {
            chat_id: place.chat_id,
            message_id: place.message_id,
            state_dir: self.state_dir.clone(),
            question_id: q.id.to_string(),
            options: q.options.clone(),
            thread_id: place.thread_id,
            text: Some(question_message(q).render()),
            posted_at: place.date,
        };
        // A post is kept while its workspace's state directory exists (see
        // `Registry::prune_missing`), which a team store's workspace may not have made yet.
        std::fs::create_dir_all(&self.state_dir)
            .and_then(|()| self.client.registry().add(&post))
            .map_err(ChatError::Register)?;
        let deliver = StoreDeliver {
            journal: self.journal.clone(),
            state_dir: self.state_dir.clone(),
        };
        let served = self
            .client
            .serve(&deliver, stop)
            .await
            .map_err(ChatError::service);
        let settled = self
            .journal
            .store()
            .question(&q.id)
            .is_ok_and(|now| now.status != QuestionStatus::Pending);
        if settled {
            self.client
                .registry()
                .remove(place.chat_id, place.message_id);
        }
        served.map(|()| None)
    }

    async fn answered_elsewhere(
        &self,
        _q: &Question,
        place: &TelegramPost,
        answer: &Answer,
    ) -> Result<(), ChatError> {
        let (chat, message) = (place.chat_id, place.message_id);
        self.client.registry().remove(chat, message);
        self.client.close_card(chat, message).await;
        let note = answered_elsewhere_note(&answer.channel, &answer.responder);
        self.say(&note, Some(message), place.thread_id).await
    }

    /// Under the run's latest question (in its topic, replying to it), or else in the chat.
    async fn notice(&self, place: Option<&TelegramPost>, notice: &Notice) -> Result<(), ChatError> {
        let (reply_to, topic) = place.map_or((None, None), |p| (Some(p.message_id), p.thread_id));
        self.say(&notice.plain(), reply_to, topic).await
    }
}

/// Telegram's limit on a topic's name.
const MAX_TOPIC_CHARS: usize = 128;

/// A forum topic's name: the question, cut to Telegram's limit.
fn topic_name(question: &str) -> String {
    let question = question.split_whitespace().collect::<Vec<_>>().join(" ");
    if question.chars().count() <= MAX_TOPIC_CHARS {
        return if question.is_empty() {
            "Question from tether".to_owned()
        } else {
            question
        };
    }
    let mut cut: String = question.chars().take(MAX_TOPIC_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// Writes replies into the asking workspace's store and pokes its waiters.
struct StoreDeliver {
    journal: Journal,
    state_dir: PathBuf,
}

impl Deliver for StoreDeliver {
    fn deliver(&self, post: &WaitingPost, reply: &Reply) -> Result<Delivered, String> {
        let Ok(id) = post.question_id.parse::<QuestionId>() else {
            return Ok(Delivered::Settled);
        };
        let outcome = crate::relay::in_store_of(
            &self.journal,
            &self.state_dir,
            &post.state_dir,
            &id,
            |store| {
                answer(
                    store,
                    &post.state_dir,
                    &id,
                    &reply.text,
                    NAME,
                    &reply.responder,
                )
            },
        );
        match outcome {
            Ok(Some(AnswerOutcome::Answered(_))) => Ok(Delivered::Recorded),
            Ok(_) | Err(StoreError::NotFound { .. }) => Ok(Delivered::Settled),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The Telegram channel in the registry ([`crate::registry`]), its table `[telegram]`
/// ([`crate::tables::telegram`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::telegram::TABLE,
    build: |setup, _| {
        let client = TelegramClient::from_config(&TelegramConfig::of(setup.config))
            .map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(channel(
            client,
            setup.journal.clone(),
            setup.ws.state_dir(),
        )))
    },
    check: |config, _| {
        TelegramSettings::from_config(&TelegramConfig::of(config))
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
    probe: Some(|config, timeout| Box::pin(probe(config, timeout))),
    notices: |config| TelegramConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::Protected(crate::chat::ACCOUNTS.to_owned()),
};

/// `tether doctor`'s Telegram probe: the settings present, the token taken (`getMe`) and the
/// chat reachable by the bot (`getChat`).
async fn probe(config: &tether_config::Config, timeout: std::time::Duration) -> Probed {
    let telegram = TelegramConfig::of(config);
    let settings = match probed_settings(TelegramSettings::from_config(&telegram), "telegram") {
        Ok(settings) => settings,
        Err(failed) => return failed,
    };
    let options = ApiOptions {
        connect_timeout: timeout,
        request_timeout: timeout,
        ..ApiOptions::default()
    };
    let api = match TelegramApi::new(&settings, options) {
        Ok(api) => api,
        Err(e) => return Probed::fails(e.to_string(), "check telegram.api_url"),
    };
    let token_var = &telegram.bot_token_env;
    let bot = match api.get_me().await {
        Ok(bot) => bot,
        Err(e @ TelegramError::Unauthorized { .. }) => {
            return Probed::fails(
                e.to_string(),
                format!("check the bot token in {token_var} (from @BotFather)"),
            );
        }
        Err(e) => {
            return Probed::fails(
                e.to_string(),
                "check telegram.api_url and that the Bot API is reachable from here",
            );
        }
    };
    let name = match &bot.username {
        Some(user) => format!("{} (@{user})", bot.first_name),
        None => bot.display_name(),
    };
    let at = format!("bot {name} in chat {}", settings.chat_id);
    match api.get_chat(&settings.chat_id).await {
        Ok(chat) => {
            let place = if chat.is_forum {
                "a topic per conversation"
            } else {
                "reply chains"
            };
            Probed::Works(format!("{at} ({}): questions go as {place}", chat.kind))
        }
        Err(e) => Probed::fails(
            format!("{at}: {e}"),
            "check telegram.chat_id (TELEGRAM_CHAT_ID) and that the bot is a member of that chat",
        ),
    }
}

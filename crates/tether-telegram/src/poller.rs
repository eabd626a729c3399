//! The one `getUpdates` loop of a bot on this machine (whoever holds the registry's lock runs
//! it): each reply or button press to a waiting question is handed to a [`Deliver`] (which
//! stores it in the asking workspace), and only then is its update confirmed — the next call's
//! `offset` is `update_id + 1` — so a crash between receiving and storing re-delivers the
//! update rather than losing it. A re-delivered update finds its question already answered.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::client::Shared;
use crate::error::TelegramError;
use crate::format::parse_callback_data;
use crate::registry::WaitingPost;
use crate::retry::{Backoff, guarded, pause};
use crate::wire::{CallbackQuery, Message, Update};

/// After this many failed deliveries of one update it is skipped (logged), so one broken
/// workspace cannot stall every other question of the bot.
const MAX_DELIVERY_FAILURES: u32 = 10;

/// A human's reply to a waiting question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The answer as text (a pressed button's label).
    pub text: String,
    /// The option pressed, for a button.
    pub choice: Option<usize>,
    /// Who answered.
    pub responder: String,
    /// The update it came in.
    pub update_id: i64,
}

/// What became of a delivered reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivered {
    /// It is the question's answer.
    Recorded,
    /// The question was already settled (answered elsewhere, withdrawn, or gone).
    Settled,
}

/// Stores replies for their questions (tether-human writes them into the asking workspace's
/// store and wakes its waiters).
pub trait Deliver: Send + Sync {
    /// Records `reply` as the answer to `post`'s question. An `Err` leaves the update
    /// unconfirmed: it is delivered again.
    fn deliver(&self, post: &WaitingPost, reply: &Reply) -> Result<Delivered, String>;
}

/// A reply matched to its waiting post.
struct Matched {
    post: WaitingPost,
    reply: Reply,
    callback: Option<String>,
}

/// Polls until `cancel` fires (`Ok`) or a fatal error (a refused token).
pub(crate) async fn poll(
    shared: &Shared,
    deliver: &dyn Deliver,
    cancel: &CancellationToken,
) -> Result<(), TelegramError> {
    shared.registry.prune_missing();
    let mut offset: Option<i64> = shared.registry.offset();
    let mut backoff = Backoff::from(shared.options.retry.clone());
    let mut failing: (i64, u32) = (i64::MIN, 0);
    let timeout = shared.api.options().poll_timeout;
    loop {
        let updates = match guarded(shared.api.get_updates(offset, timeout), cancel).await {
            Ok(updates) => {
                backoff.reset();
                updates
            }
            Err(TelegramError::Cancelled) => return Ok(()),
            Err(err) if err.is_retryable() => {
                let delay = backoff.delay(&err);
                tracing::warn!(error = %err, ?delay, "telegram getUpdates failed; retrying");
                if pause(delay, cancel).await.is_err() {
                    return Ok(());
                }
                continue;
            }
            Err(err) => return Err(err),
        };
        for update in updates {
            if offset.is_some_and(|o| update.update_id < o) {
                continue;
            }
            match handle(shared, deliver, &update, cancel).await {
                Ok(()) => {
                    offset = Some(update.update_id + 1);
                    shared.registry.set_offset(update.update_id + 1);
                }
                Err(HandleError::Cancelled) => return Ok(()),
                Err(HandleError::Store(e)) => {
                    failing = match failing {
                        (id, n) if id == update.update_id => (id, n + 1),
                        _ => (update.update_id, 1),
                    };
                    if failing.1 >= MAX_DELIVERY_FAILURES {
                        tracing::error!(update_id = update.update_id, error = %e, "cannot store a telegram reply; skipping it");
                        offset = Some(update.update_id + 1);
                        shared.registry.set_offset(update.update_id + 1);
                        continue;
                    }
                    tracing::warn!(update_id = update.update_id, error = %e, "cannot store a telegram reply yet; it will come again");
                    let delay = backoff.delay(&TelegramError::Transport { detail: e });
                    if pause(delay, cancel).await.is_err() {
                        return Ok(());
                    }
                    break;
                }
            }
        }
    }
}

enum HandleError {
    Cancelled,
    Store(String),
}

async fn handle(
    shared: &Shared,
    deliver: &dyn Deliver,
    update: &Update,
    cancel: &CancellationToken,
) -> Result<(), HandleError> {
    let Some(matched) = matched(shared, update, cancel).await? else {
        if let Some(q) = &update.callback_query {
            tidy(
                shared
                    .api
                    .answer_callback_query(&q.id, "This question is closed."),
            )
            .await;
        }
        return Ok(());
    };
    let outcome = deliver
        .deliver(&matched.post, &matched.reply)
        .map_err(HandleError::Store)?;
    tracing::info!(
        question = %matched.post.question_id,
        update_id = matched.reply.update_id,
        ?outcome,
        "telegram reply delivered"
    );
    shared
        .registry
        .remove(matched.post.chat_id, matched.post.message_id);
    if let Some(id) = &matched.callback {
        let text = match outcome {
            Delivered::Recorded => format!("Answer recorded: {}", matched.reply.text),
            Delivered::Settled => "This question was already answered.".to_owned(),
        };
        tidy(shared.api.answer_callback_query(id, &text)).await;
    }
    tidy(
        shared
            .api
            .remove_keyboard(matched.post.chat_id, matched.post.message_id),
    )
    .await;
    Ok(())
}

/// Best effort, bounded by the request timeout; a failure only leaves a button spinning.
async fn tidy(call: impl Future<Output = Result<(), TelegramError>>) {
    if let Err(e) = call.await {
        tracing::debug!(error = %e, "telegram tidy-up failed");
    }
}

/// The waiting post an update answers, if any. A reply to one of the bot's messages that is
/// not registered yet is looked up once more after a moment: its asker may be between
/// `sendMessage` returning and registering the post.
async fn matched(
    shared: &Shared,
    update: &Update,
    cancel: &CancellationToken,
) -> Result<Option<Matched>, HandleError> {
    for attempt in 0..2 {
        if attempt == 1 {
            pause(shared.options.unknown_recheck, cancel)
                .await
                .map_err(|_| HandleError::Cancelled)?;
        }
        let (found, to_bot) = if let Some(message) = &update.message {
            from_message(shared, message, update.update_id)
        } else if let Some(query) = &update.callback_query {
            from_callback(shared, query, update.update_id)
        } else {
            (None, false)
        };
        if found.is_some() || !to_bot {
            return Ok(found);
        }
    }
    Ok(None)
}

/// A text message replying to a waiting question (or, in a private chat, the chat's one
/// waiting question). Returns whether it replies to the bot at all.
fn from_message(shared: &Shared, message: &Message, update_id: i64) -> (Option<Matched>, bool) {
    let Some(from) = &message.from else {
        return (None, false);
    };
    let text = message.text.as_deref().map(str::trim).unwrap_or_default();
    if from.is_bot || from.id == shared.bot_id || text.is_empty() {
        return (None, false);
    }
    let reply = Reply {
        text: text.to_owned(),
        choice: None,
        responder: from.display_name(),
        update_id,
    };
    let chat = message.chat.id;
    // In a forum topic Telegram sets `reply_to_message` to the topic's first message even for
    // a plain message, so a reply to a registered post wins, then the topic a question opened.
    let replied = message.reply_to_message.as_ref().map(|to| {
        let to_bot = to.from.as_ref().is_some_and(|u| u.id == shared.bot_id);
        let post = shared.registry.find(chat, to.message_id).or_else(|| {
            // A first copy of a question (its send retried after a lost response) is not
            // registered: it reads the same and was sent just before the registered one.
            if !to_bot {
                return None;
            }
            shared
                .registry
                .in_chat(chat)
                .into_iter()
                .find(|p| p.is_copy(to))
        });
        (post, to_bot)
    });
    let in_topic = || {
        message
            .message_thread_id
            .and_then(|thread| shared.registry.in_topic(chat, thread))
    };
    // In a private chat a plain message answers the chat's one waiting question.
    let only_wait = || {
        if message.chat.kind != "private" {
            return None;
        }
        let mut waiting = shared.registry.in_chat(chat);
        (waiting.len() == 1).then(|| waiting.remove(0))
    };
    let (post, to_bot) = match replied {
        Some((post, to_bot)) => (post.or_else(in_topic), to_bot),
        None => (in_topic().or_else(only_wait), false),
    };
    let matched = post.map(|post| Matched {
        post,
        reply,
        callback: None,
    });
    (matched, to_bot)
}

/// A press of one of a waiting question's buttons.
fn from_callback(
    shared: &Shared,
    query: &CallbackQuery,
    update_id: i64,
) -> (Option<Matched>, bool) {
    let Some(message) = &query.message else {
        return (None, false);
    };
    let Some((index, question)) = query.data.as_deref().and_then(parse_callback_data) else {
        return (None, false);
    };
    // A press on a second copy of a question (a retried send) finds it by the question id.
    let copy = || {
        shared
            .registry
            .in_chat(message.chat.id)
            .into_iter()
            .find(|p| !question.is_empty() && p.question_id.starts_with(question))
    };
    let Some(post) = shared
        .registry
        .find(message.chat.id, message.message_id)
        .or_else(copy)
    else {
        return (None, true);
    };
    if !post.question_id.starts_with(question) {
        return (None, false);
    }
    let Some(label) = post.options.get(index).cloned() else {
        return (None, false);
    };
    let reply = Reply {
        text: label,
        choice: Some(index),
        responder: query.from.display_name(),
        update_id,
    };
    (
        Some(Matched {
            post,
            reply,
            callback: Some(query.id.clone()),
        }),
        true,
    )
}

/// How long a process that does not poll waits before trying to take the lock again.
pub(crate) const DEFAULT_LOCK_RETRY: Duration = Duration::from_millis(500);

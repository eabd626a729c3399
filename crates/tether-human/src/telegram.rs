//! The Telegram channel: a question is a message from the bot in the configured chat (its
//! options as inline buttons), and a reply to that message — or a press of one of its buttons —
//! answers it.
//!
//! Telegram lets only one process poll a bot, while several tether processes may wait at once
//! (a run, `tether mcp` in an editor, a `tether ask` in a script, in one workspace or several).
//! So this channel never hands an answer back through [`Channel::offer`]: it registers its post
//! in the bot's shared registry and serves — the one process holding the bot's poller lock
//! long-polls and writes every reply into the store of the workspace that asked (which pokes
//! that workspace's waiters); the others wait on their store and take the lock over when the
//! poller exits. The store is the truth, whoever polls.
//!
//! Where a question was posted is recorded in the store (`question_posts`), so a resumed run —
//! which offers the question its killed process left pending again — registers the same
//! message again instead of posting twice; a reply given meanwhile stays queued at Telegram
//! (or was already stored by another poller) and is delivered.

use std::path::{Path, PathBuf};

use serde_json::json;
use tether_store::{
    AnswerOutcome, Journal, Question, QuestionId, QuestionStatus, Store, StoreError,
};
use tether_telegram::{
    Deliver, Delivered, QuestionMessage, Reply, TelegramClient, WaitingPost,
    answered_elsewhere_note,
};
use tokio_util::sync::CancellationToken;

use crate::broker::{Answer, answer};
use crate::channels::{BoxFuture, Channel, ChannelAnswer};
use crate::notices::Notice;

/// The name answers from Telegram are stored under.
const NAME: &str = "telegram";

/// Offers questions in a Telegram chat.
pub struct Telegram {
    client: TelegramClient,
    journal: Journal,
    state_dir: PathBuf,
}

impl Telegram {
    /// A channel asking with `client`, recording posts and answers in `journal`'s store, the
    /// store of the workspace whose state dir is `state_dir`.
    pub fn new(client: TelegramClient, journal: Journal, state_dir: PathBuf) -> Self {
        Telegram {
            client,
            journal,
            state_dir,
        }
    }

    /// The chat and message id where `question` was posted, if it was.
    fn posted(&self, question: &QuestionId) -> Option<(i64, i64)> {
        let posts = self.journal.store().posts(question).ok()?;
        let post = posts.into_iter().find(|p| p.channel == NAME)?;
        let chat = post.external_ref.get("chat_id")?.as_i64()?;
        let id = post.external_ref.get("message_id")?.as_i64()?;
        Some((chat, id))
    }

    /// The message the conversation `thread` started with on Telegram (a thread id is the id
    /// of its first question), for a follow-up to reply to.
    fn thread_message(&self, thread: &str) -> Option<i64> {
        let id: QuestionId = thread.parse().ok()?;
        self.posted(&id).map(|(_, message)| message)
    }

    /// Posts `q` (once) and returns where.
    async fn post(&self, q: &Question, stop: &CancellationToken) -> Result<(i64, i64), String> {
        if let Some(posted) = self.posted(&q.id) {
            return Ok(posted);
        }
        let message = QuestionMessage {
            question: &q.question,
            context: &q.context,
            confidence: q.confidence.unwrap_or(0),
            options: &q.options,
            follow_up: q.thread_id.is_some(),
        };
        let reply_to = q.thread_id.as_deref().and_then(|t| self.thread_message(t));
        let sent = self
            .client
            .send(
                &message.render(),
                reply_to,
                &message.buttons(q.id.as_str()),
                stop,
            )
            .await
            .map_err(|e| e.to_string())?;
        let reference = json!({"chat_id": sent.chat.id, "message_id": sent.message_id});
        self.journal
            .store()
            .record_post(&q.id, NAME, &reference)
            .map_err(|e| e.to_string())?;
        Ok((sent.chat.id, sent.message_id))
    }

    /// Posts (once), registers the post for whichever process polls, and serves until `stop`.
    async fn wait(&self, q: &Question, stop: &CancellationToken) -> Result<(), String> {
        let (chat_id, message_id) = self.post(q, stop).await?;
        let post = WaitingPost {
            chat_id,
            message_id,
            state_dir: self.state_dir.clone(),
            question_id: q.id.to_string(),
            options: q.options.clone(),
        };
        self.client
            .registry()
            .add(&post)
            .map_err(|e| format!("cannot register the telegram post: {e}"))?;
        let deliver = StoreDeliver {
            journal: self.journal.clone(),
            state_dir: self.state_dir.clone(),
        };
        let served = self
            .client
            .serve(&deliver, stop)
            .await
            .map_err(|e| e.to_string());
        let settled = self
            .journal
            .store()
            .question(&q.id)
            .is_ok_and(|now| now.status != QuestionStatus::Pending);
        if settled {
            self.client.registry().remove(chat_id, message_id);
        }
        served
    }
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
        let outcome = if same_dir(&post.state_dir, &self.state_dir) {
            let store = self.journal.store();
            answer(
                &store,
                &post.state_dir,
                &id,
                &reply.text,
                NAME,
                &reply.responder,
            )
        } else {
            let db = post.state_dir.join("tether.db");
            if !db.exists() {
                return Ok(Delivered::Settled);
            }
            let store = Store::open(&db).map_err(|e| e.to_string())?;
            answer(
                &store,
                &post.state_dir,
                &id,
                &reply.text,
                NAME,
                &reply.responder,
            )
        };
        match outcome {
            Ok(AnswerOutcome::Answered(_)) => Ok(Delivered::Recorded),
            Ok(_) | Err(StoreError::NotFound { .. }) => Ok(Delivered::Settled),
            Err(e) => Err(e.to_string()),
        }
    }
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!(
            (a.canonicalize(), b.canonicalize()),
            (Ok(a), Ok(b)) if a == b
        )
}

impl Channel for Telegram {
    fn name(&self) -> &'static str {
        NAME
    }

    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>> {
        Box::pin(async move {
            if let Err(e) = self.wait(question, &stop).await
                && !stop.is_cancelled()
            {
                tracing::warn!(error = %e, "telegram channel stopped");
            }
            // The answer, if Telegram gave it, is already in the store.
            None
        })
    }

    fn answered_elsewhere<'a>(
        &'a self,
        question: &'a Question,
        answer: &'a Answer,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some((chat, message)) = self.posted(&question.id) else {
                return;
            };
            self.client.registry().remove(chat, message);
            self.client.close_card(chat, message).await;
            let note = answered_elsewhere_note(&answer.channel, &answer.responder);
            if let Err(e) = self
                .client
                .send(&note, Some(message), &[], &CancellationToken::new())
                .await
            {
                tracing::warn!(error = %e, "could not tell telegram who answered");
            }
        })
    }

    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Err(e) = self
                .client
                .send(&notice.plain(), None, &[], &CancellationToken::new())
                .await
            {
                tracing::warn!(error = %e, "could not post a notice on telegram");
            }
        })
    }
}

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
//! Where it goes: in a supergroup with forum topics, each conversation opens a topic of its own
//! (named after its first question) and any message in the topic answers; elsewhere the
//! question is a message in the chat and a reply to it answers (a follow-up replies to the
//! conversation's first question, keeping the chain).
//!
//! Where a question was posted is recorded in the store (`question_posts`), so a resumed run —
//! which offers the question its killed process left pending again — registers the same
//! message again instead of posting twice; a reply given meanwhile stays queued at Telegram
//! (or was already stored by another poller) and is delivered.

use std::path::{Path, PathBuf};

use serde_json::json;
use tether_store::{
    AnswerOutcome, BackendKind, Journal, Question, QuestionId, QuestionStatus, Store, StoreError,
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

    /// Where `question` was posted, if it was.
    fn posted(&self, question: &QuestionId) -> Option<Posted> {
        let posts = self.journal.store().posts(question).ok()?;
        let post = posts.into_iter().find(|p| p.channel == NAME)?;
        Some(Posted {
            chat: post.external_ref.get("chat_id")?.as_i64()?,
            message: post.external_ref.get("message_id")?.as_i64()?,
            topic: post.external_ref.get("thread_id").and_then(|t| t.as_i64()),
            date: post.external_ref.get("date").and_then(|d| d.as_i64()),
        })
    }

    /// Where a notice about `run` goes: under the run's latest question posted here (in its
    /// topic, replying to it), or else in the chat.
    fn run_place(&self, run: &tether_store::RunId) -> Option<Posted> {
        let questions = self
            .journal
            .store()
            .questions_for_run(run)
            .unwrap_or_default();
        questions.iter().rev().find_map(|q| self.posted(&q.id))
    }

    /// Where a question goes: a follow-up into its conversation's topic (or as a reply to the
    /// conversation's first message in a reply chain); a new conversation into a topic of its
    /// own when the chat has topics, else into the chat. Returns `(reply_to, topic)`.
    async fn place(
        &self,
        q: &Question,
        stop: &CancellationToken,
    ) -> Result<(Option<i64>, Option<i64>), String> {
        let earlier = q
            .thread_id
            .as_deref()
            .and_then(|t| t.parse::<QuestionId>().ok())
            .and_then(|t| self.posted(&t));
        if let Some(earlier) = earlier {
            return Ok(match earlier.topic {
                Some(topic) => (None, Some(topic)),
                None => (Some(earlier.message), None),
            });
        }
        let forum = match self.client.is_forum(stop).await {
            Ok(forum) => forum,
            Err(e) => {
                tracing::warn!(error = %e, "cannot tell whether the telegram chat has topics; using a reply chain");
                false
            }
        };
        if !forum {
            return Ok((None, None));
        }
        let topic = self
            .client
            .create_topic(&topic_name(&q.question), stop)
            .await
            .map_err(|e| e.to_string())?;
        Ok((None, Some(topic)))
    }

    /// The text of `q`'s message.
    fn render(q: &Question) -> String {
        QuestionMessage {
            question: &q.question,
            context: &q.context,
            confidence: q.confidence.unwrap_or(0),
            options: &q.options,
            follow_up: q.thread_id.is_some(),
        }
        .render()
    }

    /// Posts `q` (once) and returns where.
    async fn post(&self, q: &Question, stop: &CancellationToken) -> Result<Posted, String> {
        if let Some(posted) = self.posted(&q.id) {
            return Ok(posted);
        }
        let (reply_to, topic) = self.place(q, stop).await?;
        let message = QuestionMessage {
            question: &q.question,
            context: &q.context,
            confidence: q.confidence.unwrap_or(0),
            options: &q.options,
            follow_up: q.thread_id.is_some(),
        };
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
            .map_err(|e| e.to_string())?;
        let reference = json!({"chat_id": sent.chat.id, "message_id": sent.message_id,
                               "thread_id": topic, "date": sent.date});
        self.journal
            .store()
            .record_post(&q.id, NAME, &reference)
            .map_err(|e| e.to_string())?;
        Ok(Posted {
            chat: sent.chat.id,
            message: sent.message_id,
            topic,
            date: Some(sent.date),
        })
    }

    /// Posts (once), registers the post for whichever process polls, and serves until `stop`.
    async fn wait(&self, q: &Question, stop: &CancellationToken) -> Result<(), String> {
        let posted = self.post(q, stop).await?;
        let (chat_id, message_id) = (posted.chat, posted.message);
        let post = WaitingPost {
            chat_id,
            message_id,
            state_dir: self.state_dir.clone(),
            question_id: q.id.to_string(),
            options: q.options.clone(),
            thread_id: posted.topic,
            text: Some(Self::render(q)),
            posted_at: posted.date,
        };
        // A post is kept while its workspace's state directory exists (see
        // `Registry::prune_missing`), which a team store's workspace may not have made yet.
        std::fs::create_dir_all(&self.state_dir)
            .and_then(|()| self.client.registry().add(&post))
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

/// Where a question was posted.
struct Posted {
    chat: i64,
    message: i64,
    /// The forum topic it opened or followed up in.
    topic: Option<i64>,
    /// When it was sent (Unix seconds), to recognise a copy left by a retried send.
    date: Option<i64>,
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
        // A team store holds the questions of every workspace sharing it.
        let shared = {
            let store = self.journal.store();
            store.kind() == BackendKind::Team && store.question(&id).is_ok()
        };
        let outcome = if shared || same_dir(&post.state_dir, &self.state_dir) {
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
            let Some(Posted {
                chat,
                message,
                topic,
                ..
            }) = self.posted(&question.id)
            else {
                return;
            };
            self.client.registry().remove(chat, message);
            self.client.close_card(chat, message).await;
            let note = answered_elsewhere_note(&answer.channel, &answer.responder);
            if let Err(e) = self
                .client
                .send_in(&note, Some(message), topic, &[], &CancellationToken::new())
                .await
            {
                tracing::warn!(error = %e, "could not tell telegram who answered");
            }
        })
    }

    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let place = notice.run_id.as_ref().and_then(|run| self.run_place(run));
            let (reply_to, topic) = match place {
                Some(p) => (Some(p.message), p.topic),
                None => (None, None),
            };
            if let Err(e) = self
                .client
                .send_in(
                    &notice.plain(),
                    reply_to,
                    topic,
                    &[],
                    &CancellationToken::new(),
                )
                .await
            {
                tracing::warn!(error = %e, "could not post a notice on telegram");
            }
        })
    }
}

/// The Telegram channel in the registry ([`crate::registry`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    kind: tether_config::Channel::Telegram,
    build: |setup, _| {
        let client = tether_telegram::TelegramClient::from_config(&setup.config.telegram)
            .map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(Telegram::new(
            client,
            setup.journal.clone(),
            setup.ws.state_dir(),
        )))
    },
    check: |config, _| {
        tether_telegram::TelegramSettings::from_config(&config.telegram)
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
};

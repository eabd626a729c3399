//! The Zulip channel: one topic per conversation, the question posted by the bot, the first
//! human reply in the topic taken as the answer.
//!
//! Where a question was posted is recorded in the store (`question_posts`), so a resumed run —
//! which offers the question its killed process left pending again — waits in the same topic
//! for replies newer than the same message: the question is never posted twice.

use serde_json::json;
use tether_store::Question;
use tether_zulip::{MessageId, QuestionMessage, ZulipClient, answered_elsewhere_note, topic_name};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::{BoxFuture, Channel, ChannelAnswer};
use crate::notices::Notice;
use tether_store::Journal;

/// Offers questions in a Zulip stream.
pub struct Zulip {
    client: ZulipClient,
    journal: Journal,
}

impl Zulip {
    /// A channel posting with `client`, recording posts in `journal`'s store.
    pub fn new(client: ZulipClient, journal: Journal) -> Self {
        Zulip { client, journal }
    }

    /// The topic and message id where `question` was posted, if it was.
    fn posted(&self, question: &Question) -> Option<(String, u64)> {
        let posts = self.journal.store().posts(&question.id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == "zulip")?;
        let topic = post.external_ref.get("topic")?.as_str()?.to_owned();
        let id = post.external_ref.get("message_id")?.as_u64()?;
        Some((topic, id))
    }

    /// The topic of the conversation `thread` names: a thread id is the id of the question that
    /// started it, so its topic is where that question was posted (following its own thread
    /// back). `None` when it was never posted on Zulip: the follow-up then opens a new topic.
    fn thread_topic(&self, thread: &str) -> Option<String> {
        let mut id: tether_store::QuestionId = thread.parse().ok()?;
        for _ in 0..32 {
            let first = self.journal.store().question(&id).ok()?;
            if let Some((topic, _)) = self.posted(&first) {
                return Some(topic);
            }
            id = first.thread_id.as_deref()?.parse().ok()?;
        }
        None
    }

    /// Where a notice about `run` goes: the topic of the run's latest question posted here, or
    /// else the run's own topic (`Run r-…`), the same for every notice of the run. A notice of
    /// no run (a person's sign-off) goes to the topic `Goals`.
    fn run_topic(&self, run: Option<&tether_store::RunId>) -> String {
        let Some(run) = run else {
            return "Goals".to_owned();
        };
        let questions = self
            .journal
            .store()
            .questions_for_run(run)
            .unwrap_or_default();
        questions
            .iter()
            .rev()
            .find_map(|q| self.posted(q))
            .map_or_else(|| format!("Run {run}"), |(topic, _)| topic)
    }

    async fn answer(
        &self,
        q: &Question,
        stop: &CancellationToken,
    ) -> Result<ChannelAnswer, String> {
        let reply = if let Some((topic, id)) = self.posted(q) {
            self.client.resume(&topic, MessageId(id), stop).await
        } else {
            let topic = match q.thread_id.as_deref().and_then(|t| self.thread_topic(t)) {
                Some(t) => t,
                None => {
                    let n = self
                        .journal
                        .store()
                        .next_topic_number(self.client.stream())
                        .map_err(|e| e.to_string())?;
                    topic_name(n, &q.question)
                }
            };
            let message = QuestionMessage {
                question: &q.question,
                context: &q.context,
                confidence: q.confidence.unwrap_or(0),
                options: &q.options,
            };
            let content = if q.thread_id.is_some() {
                message.render_follow_up()
            } else {
                message.render()
            };
            let pending = self
                .client
                .post_question(&topic, &content, stop)
                .await
                .map_err(|e| e.to_string())?;
            let reference =
                json!({"topic": pending.topic(), "message_id": pending.question_id().0});
            self.journal
                .store()
                .record_post(&q.id, "zulip", &reference)
                .map_err(|e| e.to_string())?;
            pending.wait(stop).await
        };
        let reply = reply.map_err(|e| e.to_string())?;
        Ok(ChannelAnswer::text(reply.text, reply.sender_full_name))
    }
}

impl Channel for Zulip {
    fn name(&self) -> &'static str {
        "zulip"
    }

    fn offer<'a>(
        &'a self,
        question: &'a Question,
        stop: CancellationToken,
    ) -> BoxFuture<'a, Option<ChannelAnswer>> {
        Box::pin(async move {
            match self.answer(question, &stop).await {
                Ok(a) => Some(a),
                Err(e) => {
                    if !stop.is_cancelled() {
                        tracing::warn!(error = %e, "zulip channel stopped");
                    }
                    None
                }
            }
        })
    }

    fn answered_elsewhere<'a>(
        &'a self,
        question: &'a Question,
        answer: &'a Answer,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some((topic, _)) = self.posted(question) {
                let note = answered_elsewhere_note(&answer.channel, &answer.responder);
                if let Err(e) = self
                    .client
                    .note(&topic, &note, &CancellationToken::new())
                    .await
                {
                    tracing::warn!(error = %e, "could not tell zulip who answered");
                }
            }
        })
    }

    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let topic = self.run_topic(notice.run_id.as_ref());
            let text = match &notice.resume {
                Some(command) => format!("{}\nTo continue: `{command}`", notice.text),
                None => notice.text.clone(),
            };
            if let Err(e) = self
                .client
                .note(&topic, &text, &CancellationToken::new())
                .await
            {
                tracing::warn!(error = %e, "could not post a notice on zulip");
            }
        })
    }
}

/// The Zulip channel in the registry ([`crate::registry`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    kind: tether_config::Channel::Zulip,
    build: |setup, _| {
        let client = tether_zulip::ZulipClient::from_config(&setup.config.zulip)
            .map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(Zulip::new(
            client,
            setup.journal.clone(),
        )))
    },
    check: |config, _| {
        tether_zulip::ZulipSettings::from_config(&config.zulip)
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
};

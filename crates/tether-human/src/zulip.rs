//! The Zulip channel: one topic per conversation, the question posted by the bot, the first
//! human reply in the topic taken as the answer.
//!
//! A post's place is its topic and message id ([`ZulipPost`]); the adapter ([`crate::chat`])
//! records it, so a resumed run waits in the same topic for replies newer than the same message
//! and a follow-up goes to its conversation's topic. A new conversation opens a numbered topic
//! (`Agent Q #n — …`); a notice of a run with no question here goes to the run's own topic
//! (`Run r-…`), and one of no run (a person's sign-off) to `Goals`.

use serde::{Deserialize, Serialize};
use tether_store::{Journal, Question};
use tether_zulip::{ApiOptions, ZulipApi, ZulipConfig, ZulipError, ZulipSettings};
use tether_zulip::{
    MessageId, PendingReply, QuestionMessage, ZulipClient, answered_elsewhere_note, topic_name,
};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::ChannelAnswer;
use crate::chat::{Chat, ChatError, ChatService};
use crate::notices::Notice;
use crate::registry::{Probed, probed_settings};

/// Asks in a Zulip stream.
pub struct Zulip {
    client: ZulipClient,
    /// Numbers the topics of new conversations.
    journal: Journal,
}

/// Where a question was posted on Zulip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZulipPost {
    /// Its topic: the conversation.
    pub topic: String,
    /// The question's message; replies newer than it answer.
    pub message_id: u64,
}

/// The Zulip channel posting with `client`, recording posts in `journal`'s store.
pub fn channel(client: ZulipClient, journal: Journal) -> Chat<Zulip> {
    let service = Zulip {
        client,
        journal: journal.clone(),
    };
    Chat::new(service, journal)
}

impl ChatService for Zulip {
    const NAME: &'static str = "zulip";
    type Place = ZulipPost;
    type Waiting = PendingReply;

    async fn post(
        &self,
        q: &Question,
        thread: Option<&ZulipPost>,
        stop: &CancellationToken,
    ) -> Result<(ZulipPost, PendingReply), ChatError> {
        let topic = match thread {
            Some(earlier) => earlier.topic.clone(),
            None => {
                let n = self
                    .journal
                    .store()
                    .next_topic_number(self.client.stream())?;
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
            .map_err(ChatError::service)?;
        let place = ZulipPost {
            topic: pending.topic().to_owned(),
            message_id: pending.question_id().0,
        };
        Ok((place, pending))
    }

    async fn resume(
        &self,
        _q: &Question,
        place: &ZulipPost,
        stop: &CancellationToken,
    ) -> Result<PendingReply, ChatError> {
        self.client
            .pending(&place.topic, MessageId(place.message_id), stop)
            .await
            .map_err(ChatError::service)
    }

    async fn wait(
        &self,
        _q: &Question,
        _place: &ZulipPost,
        pending: PendingReply,
        stop: &CancellationToken,
    ) -> Result<Option<ChannelAnswer>, ChatError> {
        let reply = pending.wait(stop).await.map_err(ChatError::service)?;
        Ok(Some(ChannelAnswer::text(
            reply.text,
            reply.sender_full_name,
        )))
    }

    async fn answered_elsewhere(
        &self,
        _q: &Question,
        place: &ZulipPost,
        answer: &Answer,
    ) -> Result<(), ChatError> {
        let note = answered_elsewhere_note(&answer.channel, &answer.responder);
        self.note(&place.topic, &note).await
    }

    async fn notice(&self, place: Option<&ZulipPost>, notice: &Notice) -> Result<(), ChatError> {
        let topic = match (place, &notice.run_id) {
            (Some(place), _) => place.topic.clone(),
            (None, Some(run)) => format!("Run {run}"),
            (None, None) => "Goals".to_owned(),
        };
        let text = match &notice.resume {
            Some(command) => format!("{}\nTo continue: `{command}`", notice.text),
            None => notice.text.clone(),
        };
        self.note(&topic, &text).await
    }
}

impl Zulip {
    /// Posts `text` in `topic`.
    async fn note(&self, topic: &str, text: &str) -> Result<(), ChatError> {
        self.client
            .note(topic, text, &CancellationToken::new())
            .await
            .map(drop)
            .map_err(ChatError::service)
    }
}

/// The Zulip channel in the registry ([`crate::registry`]), its table `[zulip]`
/// ([`crate::tables::zulip`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::zulip::TABLE,
    build: |setup, _| {
        let client =
            ZulipClient::from_config(&ZulipConfig::of(setup.config)).map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(channel(client, setup.journal.clone())))
    },
    check: |config, _| {
        ZulipSettings::from_config(&ZulipConfig::of(config))
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
    probe: Some(|config, timeout| Box::pin(probe(config, timeout))),
    notices: |config| ZulipConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::Protected(crate::chat::ACCOUNTS.to_owned()),
};

/// `tether doctor`'s Zulip probe: the settings present, the bot known to the server.
async fn probe(config: &tether_config::Config, timeout: std::time::Duration) -> Probed {
    let zulip = ZulipConfig::of(config);
    let settings = match probed_settings(ZulipSettings::from_config(&zulip), "zulip") {
        Ok(settings) => settings,
        Err(failed) => return failed,
    };
    let options = ApiOptions {
        connect_timeout: timeout,
        request_timeout: timeout,
        ..ApiOptions::default()
    };
    let at = format!(
        "bot {} on {}, stream {}",
        settings.bot_email, settings.server_url, settings.stream
    );
    let me = match ZulipApi::new(&settings, options) {
        Ok(api) => api.me().await,
        Err(e) => Err(e),
    };
    match me {
        Ok(_) => Probed::Works(format!("{at}: the server knows the bot")),
        Err(e @ ZulipError::Auth { .. }) => Probed::fails(
            format!("{at}: {e}"),
            format!(
                "check the bot's email and its API key (in {})",
                zulip.api_key_env
            ),
        ),
        Err(e) => Probed::fails(
            format!("{at}: {e}"),
            "check zulip.server_url (ZULIP_SERVER_URL) and that the server is reachable",
        ),
    }
}

//! The Slack channel: a question is a message in the configured channel (one button per
//! option), its thread is the conversation (follow-ups post in the same thread), and the first
//! human reply in the thread — or a press of one of its buttons — is the answer.
//!
//! A post's place is its channel, thread and ts ([`SlackPost`]); the adapter ([`crate::chat`])
//! records it, so a resumed run waits on the same post and the question is never posted twice;
//! the client catches up the thread after every (re)connect, so a reply given meanwhile is
//! found. Once answered — here or elsewhere — the question's buttons are replaced by who
//! answered.
//!
//! Several processes may wait on one Slack app at once (a run, `tether mcp`, a `tether ask`),
//! and Slack hands each event to only one of their sockets: every wait is listed in a per-user
//! registry ([`crate::slack_registry`]), and an event no wait of this process claims is stored
//! for the wait it belongs to by [`crate::slack_router`].

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use tether_slack::{ApiOptions, SlackApi, SlackConfig, SlackError, SlackSettings};

use serde::{Deserialize, Serialize};
use tether_slack::{
    BotIdentity, PendingReply, QuestionMessage, ReplyBody, SlackClient, Thread, Ts, answered_note,
};
use tether_store::{Journal, Question};
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::ChannelAnswer;
use crate::chat::{Chat, ChatError, ChatService};
use crate::notices::Notice;
use crate::registry::{Probed, probed_settings};
use crate::slack_registry::{Entry, Registry};
use crate::slack_router::Router;

/// The channel's name, stored with answers and posts.
pub(crate) const NAME: &str = "slack";

/// Asks in a Slack channel.
pub struct Slack {
    client: SlackClient,
    state_dir: PathBuf,
    registry: Registry,
}

/// Where a question was posted on Slack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SlackPost {
    /// The Slack channel's ID.
    pub channel: String,
    /// The ts of the thread's first message: the conversation.
    pub thread_ts: Ts,
    /// The question's own ts.
    pub ts: Ts,
}

impl SlackPost {
    fn thread(&self) -> Thread {
        Thread {
            channel: self.channel.clone(),
            ts: self.thread_ts.clone(),
        }
    }
}

/// The Slack channel posting with `client`, recording posts in `journal`'s store; `state_dir`
/// is the workspace's `.tether/`; `api_url` names the bot in the registry of waits.
pub fn channel(
    client: SlackClient,
    journal: Journal,
    state_dir: PathBuf,
    api_url: &str,
) -> Chat<Slack> {
    let registry = Registry::for_bot(api_url, client.channel());
    with_registry(client, journal, state_dir, registry)
}

/// Like [`channel`], listing waits in `dir` instead of the per-user directory (tests).
pub fn channel_with_registry_dir(
    client: SlackClient,
    journal: Journal,
    state_dir: PathBuf,
    dir: PathBuf,
) -> Chat<Slack> {
    with_registry(client, journal, state_dir, Registry::at(dir))
}

fn with_registry(
    client: SlackClient,
    journal: Journal,
    state_dir: PathBuf,
    registry: Registry,
) -> Chat<Slack> {
    let bot: Arc<OnceLock<BotIdentity>> = Arc::default();
    let router = Router::new(
        registry.clone(),
        Arc::clone(&bot),
        client.api().clone(),
        journal.clone(),
        state_dir.clone(),
    );
    client.on_unclaimed(Arc::new(move |incoming| router.route(&incoming)));
    learn_bot(&client, bot);
    let service = Slack {
        client,
        state_dir,
        registry,
    };
    Chat::new(service, journal)
}

/// Fetches the bot's identity in the background, for the router to recognise its messages.
fn learn_bot(client: &SlackClient, slot: Arc<OnceLock<BotIdentity>>) {
    let client = client.clone();
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        runtime.spawn(async move {
            if let Ok(bot) = client.bot(&CancellationToken::new()).await {
                let _ = slot.set(bot);
            }
        });
    }
}

/// `q` as Slack shows it.
pub(crate) fn question_message(q: &Question) -> QuestionMessage<'_> {
    QuestionMessage {
        question: &q.question,
        context: &q.context,
        confidence: q.confidence.unwrap_or(0),
        options: &q.options,
        follow_up: q.thread_id.is_some(),
    }
}

impl ChatService for Slack {
    const NAME: &'static str = NAME;
    type Place = SlackPost;
    type Waiting = PendingReply;

    async fn post(
        &self,
        q: &Question,
        thread: Option<&SlackPost>,
        stop: &CancellationToken,
    ) -> Result<(SlackPost, PendingReply), ChatError> {
        let thread = thread.map(SlackPost::thread);
        let (text, blocks) = question_message(q).render();
        let pending = self
            .client
            .post_question(&text, blocks, q.options.len(), thread.as_ref(), stop)
            .await
            .map_err(ChatError::service)?;
        let Thread { channel, ts } = pending.thread();
        let place = SlackPost {
            channel,
            thread_ts: ts,
            ts: pending.question_ts().clone(),
        };
        Ok((place, pending))
    }

    async fn resume(
        &self,
        q: &Question,
        place: &SlackPost,
        stop: &CancellationToken,
    ) -> Result<PendingReply, ChatError> {
        self.client
            .pending(&place.thread(), &place.ts, q.options.len(), stop)
            .await
            .map_err(ChatError::service)
    }

    async fn wait(
        &self,
        q: &Question,
        place: &SlackPost,
        pending: PendingReply,
        stop: &CancellationToken,
    ) -> Result<Option<ChannelAnswer>, ChatError> {
        let entry = Entry {
            state_dir: self.state_dir.clone(),
            question_id: q.id.to_string(),
            channel: place.channel.clone(),
            thread_ts: place.thread_ts.to_string(),
            ts: place.ts.to_string(),
        };
        self.registry.add(&entry);
        let reply = pending.wait(stop).await;
        self.registry.remove(&entry);
        let reply = reply.map_err(ChatError::service)?;
        let responder = match self.client.user_name(&reply.user).await {
            Some(name) => name,
            None => reply.responder().to_owned(),
        };
        let answer = match reply.body {
            ReplyBody::Choice(index) => {
                ChannelAnswer::choice(q, index, responder).ok_or(ChatError::NoOption(index))?
            }
            ReplyBody::Text(text) => ChannelAnswer::text(text, responder),
        };
        self.mark_answered(q, place, &answered_note(NAME, &answer.responder));
        Ok(Some(answer))
    }

    async fn answered_elsewhere(
        &self,
        q: &Question,
        place: &SlackPost,
        answer: &Answer,
    ) -> Result<(), ChatError> {
        let note = answered_note(&answer.channel, &answer.responder);
        self.mark_answered(q, place, &note);
        self.note(Some(&place.thread()), &note).await
    }

    async fn notice(&self, place: Option<&SlackPost>, notice: &Notice) -> Result<(), ChatError> {
        let thread = place.map(SlackPost::thread);
        self.note(thread.as_ref(), &notice.plain()).await
    }
}

impl Slack {
    /// Posts `text` in `thread`, or else in the channel.
    async fn note(&self, thread: Option<&Thread>, text: &str) -> Result<(), ChatError> {
        self.client
            .note(thread, text, &CancellationToken::new())
            .await
            .map(drop)
            .map_err(ChatError::service)
    }

    /// Replaces the question's buttons by `line`, in the background (the agent need not wait).
    fn mark_answered(&self, q: &Question, place: &SlackPost, line: &str) {
        let (text, blocks) = question_message(q).render_answered(line);
        let (client, channel, ts) = (self.client.clone(), place.channel.clone(), place.ts.clone());
        tokio::spawn(async move {
            let cancel = CancellationToken::new();
            if let Err(e) = client.update(&channel, &ts, &text, &blocks, &cancel).await {
                tracing::warn!(error = %e, "could not mark the slack question answered");
            }
        });
    }
}

/// The Slack channel in the registry ([`crate::registry`]), its table `[slack]`
/// ([`crate::tables::slack`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::slack::TABLE,
    build: |setup, _| {
        let slack = SlackConfig::of(setup.config);
        let client = SlackClient::from_config(&slack).map_err(|e| e.to_string())?;
        Ok(Arc::new(channel(
            client,
            setup.journal.clone(),
            setup.ws.state_dir(),
            &slack.api_url,
        )))
    },
    check: |config, _| {
        SlackSettings::from_config(&SlackConfig::of(config))
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
    probe: Some(|config, timeout| Box::pin(probe(config, timeout))),
    notices: |config| SlackConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::Protected(crate::chat::ACCOUNTS.to_owned()),
};

/// `tether doctor`'s Slack probe: the settings present, the bot token taken (`auth.test`), the
/// app-level token able to open a Socket Mode connection (`apps.connections.open`, whose URL is
/// not used) and the channel readable by the bot (`conversations.history`).
async fn probe(config: &tether_config::Config, timeout: std::time::Duration) -> Probed {
    let slack = SlackConfig::of(config);
    let settings = match probed_settings(SlackSettings::from_config(&slack), "slack") {
        Ok(settings) => settings,
        Err(failed) => return failed,
    };
    let options = ApiOptions {
        connect_timeout: timeout,
        request_timeout: timeout,
    };
    let api = match SlackApi::new(&settings, &options) {
        Ok(api) => api,
        Err(e) => return Probed::fails(e.to_string(), "check slack.api_url"),
    };
    let (bot_var, app_var) = (&slack.bot_token_env, &slack.app_token_env);
    let bot = match api.auth_test().await {
        Ok(bot) => bot,
        Err(e) => return refused(e, format!("check the bot token (xoxb-…) in {bot_var}")),
    };
    if let Err(e) = api.open_connection().await {
        return refused(
            e,
            format!(
                "check the app-level token (xapp-…, scope connections:write) in {app_var} and \
                 that Socket Mode is on in the app's settings"
            ),
        );
    }
    let channel = &settings.channel;
    let at = format!("bot {} in channel {channel}", bot.user_id);
    let Some(now) = Ts::parse(&format!("{}.000000", tether_store::now_ms() / 1000)) else {
        return Probed::fails("the clock cannot be read", "check the system clock");
    };
    match api.history(channel, &now, 1).await {
        Ok(_) => Probed::Works(format!(
            "{at}: Socket Mode connects; questions go as a thread each"
        )),
        Err(e) => Probed::fails(
            format!("{at}: {e}"),
            "check slack.channel (SLACK_CHANNEL) is the channel's id, that the bot was invited \
             there (/invite), and its scopes (chat:write, channels:history, groups:history)",
        ),
    }
}

/// A failed request: a refused token names `fix`; anything else is about reaching Slack.
fn refused(e: SlackError, fix: String) -> Probed {
    match e {
        SlackError::Auth { .. } => Probed::fails(e.to_string(), fix),
        e => Probed::fails(
            e.to_string(),
            "check slack.api_url and that the Slack API is reachable from here",
        ),
    }
}

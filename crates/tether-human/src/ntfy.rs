//! The ntfy sink: notices and questions pushed to an ntfy topic, a question's options as
//! buttons that answer it.
//!
//! A button is an ntfy `http` action: pressing it makes the phone POST a small JSON body —
//! `{"q": <question id>, "o": <option index>, "n": <nonce>}` — to the *reply topic* on the same
//! server. tether follows the reply topic ([`tether_ntfy::Follower`]) while questions wait, so
//! a question is answered from a lock screen with nothing of tether's reachable from outside.
//!
//! When the server protects the reply topic, `[ntfy] reply_token_env` names a token the buttons
//! send (`Authorization: Bearer`, in the action's headers); it travels inside every
//! notification, so it should be one that may only write to the reply topic.
//!
//! The nonce is drawn per question and recorded with its post in the store; a press whose nonce
//! does not match (someone else publishing to the reply topic, a question of another
//! workspace) is ignored. Where a question was posted is recorded too, so a resumed run waits
//! on the same notification instead of pushing it again. The id of the last reply handled is
//! kept in the workspace's state directory (`ntfy/<reply topic>.last-id`): the next follower
//! starts there, so a press made while no tether process was following is delivered once when
//! one follows again. A valid press for a question waiting in no process of this channel but
//! pending in the store is written to the store directly (and wakes whoever waits).
//!
//! One follower per channel serves every question it waits for, and stops when none waits.
//!
//! When the agent could press the buttons itself — it reads the topic in tether.toml and has the
//! network ([`DEF`]'s reply path) — the sink only tells: questions are pushed without buttons,
//! no reply topic is followed, and the question waits for a person elsewhere.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::json;
use tether_ntfy::{Action, FollowOptions, Follower, Message, NtfyClient, Publish};
use tether_store::{Journal, Question, QuestionId, QuestionStatus};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::broker::{Answer, answer};
use crate::channels::{Channel, ChannelAnswer};
use crate::notices::Notice;
use crate::registry::ReplyPath;
use crate::sink_body::{BodyKind, SinkBody};
use crate::sinks::SinkError;
use crate::state_file;
use crate::tables::ntfy::NtfyConfig;

/// The name answers from ntfy are stored under.
const NAME: &str = "ntfy";
/// The longest button label.
const MAX_LABEL_CHARS: usize = 40;
/// How long the follower waits after the server refused it (a wrong token) before trying again.
const REFUSED_PAUSE: std::time::Duration = std::time::Duration::from_secs(60);

/// A button's body: which question, which option, and the question's nonce.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Press {
    /// The question's id.
    pub q: String,
    /// The option's index.
    pub o: usize,
    /// The question's nonce.
    pub n: String,
}

/// Pushes to an ntfy topic and reads answers from its reply topic.
pub struct Ntfy {
    shared: Arc<Shared>,
}

struct Shared {
    client: NtfyClient,
    topic: String,
    reply_topic: String,
    priority: u8,
    /// The token the buttons send, if the reply topic needs one.
    reply_token: Option<tether_config::Secret>,
    journal: Journal,
    state_dir: PathBuf,
    /// The key its posts are recorded under (`ntfy`, or `ntfy:<topic>` for an escalation's).
    post_key: String,
    follow: FollowOptions,
    /// Whether it takes answers: not when the agent could press the buttons itself (see
    /// [`reply`]); then a question is pushed without buttons and no reply topic is followed.
    answers: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    waiters: HashMap<String, Waiter>,
    follower: Option<CancellationToken>,
    next_key: u64,
}

struct Waiter {
    key: u64,
    question: Question,
    nonce: String,
    tx: mpsc::UnboundedSender<ChannelAnswer>,
}

impl Ntfy {
    /// The sink `config` describes, publishing to `topic` instead of `config.topic` when given
    /// (an escalation's), recording in `journal`, keeping its place in `state_dir`.
    pub fn from_config(
        config: &NtfyConfig,
        topic: Option<&str>,
        journal: Journal,
        state_dir: PathBuf,
    ) -> Result<Self, SinkError> {
        let (topic, reply_topic, post_key) = match topic {
            Some(t) => (t.to_owned(), format!("{t}-reply"), format!("{NAME}:{t}")),
            None => {
                let missing = config.missing();
                let (Some(topic), Some(reply), true) =
                    (&config.topic, config.reply_topic(), missing.is_empty())
                else {
                    return Err(SinkError::Missing {
                        sink: NAME,
                        missing,
                    });
                };
                (topic.clone(), reply, NAME.to_owned())
            }
        };
        let missing: Vec<String> = config
            .missing()
            .into_iter()
            .filter(|m| !m.contains("[ntfy] topic"))
            .collect();
        if !missing.is_empty() {
            return Err(SinkError::Missing {
                sink: NAME,
                missing,
            });
        }
        let client = NtfyClient::new(&config.server, config.token.clone()).map_err(|e| {
            SinkError::Invalid {
                setting: "[ntfy] server",
                problem: e.to_string(),
            }
        })?;
        Ok(Ntfy {
            shared: Arc::new(Shared {
                client,
                topic,
                reply_topic,
                priority: config.priority,
                reply_token: config.reply_token.clone(),
                journal,
                state_dir,
                post_key,
                follow: FollowOptions::default(),
                answers: true,
                state: Mutex::default(),
            }),
        })
    }

    /// Follows the reply topic with `options` (tests: short backoffs).
    pub fn with_follow_options(mut self, options: FollowOptions) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.follow = options;
        }
        self
    }

    /// Pushes questions without buttons and follows no reply topic: the agent could read the
    /// topic and press them itself ([`reply`]).
    pub fn tell_only(mut self) -> Self {
        if let Some(shared) = Arc::get_mut(&mut self.shared) {
            shared.answers = false;
        }
        self
    }

    /// The file keeping the last reply handled.
    pub fn last_id_path(&self) -> PathBuf {
        self.shared.last_id_path()
    }
}

impl Shared {
    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn last_id_path(&self) -> PathBuf {
        self.state_dir
            .join("ntfy")
            .join(format!("{}.last-id", self.reply_topic))
    }

    fn saved_last_id(&self) -> Option<String> {
        let text = state_file::read(&self.last_id_path())?;
        let id = text.trim();
        (!id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric())).then(|| id.to_owned())
    }

    /// Several processes may follow one reply topic: each write has a temporary name of its own
    /// ([`state_file::replace`]), so none renames another's half-written file or loses its own.
    fn save_last_id(&self, id: &str) {
        if let Err(e) = state_file::replace(&self.last_id_path(), id) {
            tracing::warn!(sink = NAME, error = %e, "cannot keep the last ntfy reply's id");
        }
    }

    /// The question's push: its text, its first options as buttons.
    fn publish_of(&self, question: &Question, nonce: &str, kind: BodyKind) -> Publish {
        let body = SinkBody::question(question, kind);
        let url = self.client.topic_url(&self.reply_topic);
        let buttons = if self.answers {
            Publish::MAX_ACTIONS
        } else {
            0
        };
        let actions = question
            .options
            .iter()
            .take(buttons)
            .enumerate()
            .map(|(i, label)| {
                let press = Press {
                    q: question.id.to_string(),
                    o: i,
                    n: nonce.to_owned(),
                };
                let body = serde_json::to_string(&press).unwrap_or_default();
                let mut action = Action::http_post(label_of(label), url.clone(), body);
                if let Some(token) = &self.reply_token {
                    let value = format!("Bearer {}", token.expose());
                    action.headers.insert("Authorization".to_owned(), value);
                }
                action
            })
            .collect();
        Publish {
            topic: self.topic.clone(),
            title: Some(body.title()),
            message: body.plain(),
            priority: Some(self.priority),
            tags: vec!["question".to_owned()],
            actions,
        }
    }

    /// The question's nonce, publishing it first if it was never published here.
    async fn post(&self, q: &Question, stop: &CancellationToken) -> Result<String, String> {
        let recorded = self
            .journal
            .store()
            .posts(&q.id)
            .ok()
            .into_iter()
            .flatten()
            .find(|p| p.channel == self.post_key)
            .and_then(|p| p.external_ref.get("nonce")?.as_str().map(str::to_owned));
        if let Some(nonce) = recorded {
            return Ok(nonce);
        }
        let nonce: String = std::iter::repeat_with(fastrand::alphanumeric)
            .take(24)
            .collect();
        let sent = self
            .client
            .publish(&self.publish_of(q, &nonce, BodyKind::Question), stop)
            .await
            .map_err(|e| e.to_string())?;
        let reference = json!({"nonce": nonce, "message_id": sent.id, "topic": self.topic});
        if let Err(e) = self
            .journal
            .store()
            .record_post(&q.id, &self.post_key, &reference)
        {
            tracing::warn!(sink = NAME, error = %e, "cannot record the ntfy post");
        }
        Ok(nonce)
    }

    /// The nonce recorded for `id`'s post here, if it was posted here.
    fn recorded_nonce(&self, id: &QuestionId) -> Option<String> {
        let posts = self.journal.store().posts(id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == self.post_key)?;
        post.external_ref.get("nonce")?.as_str().map(str::to_owned)
    }

    /// Handles one reply: a press for a question waiting here goes to its waiter; a valid press
    /// for a question pending in the store goes to the store; anything else is ignored.
    fn handle(&self, message: &Message) {
        let Some(press) = message
            .message
            .as_deref()
            .and_then(|m| serde_json::from_str::<Press>(m).ok())
        else {
            tracing::debug!(sink = NAME, "ignored a reply that is no button press");
            return;
        };
        {
            let state = self.state();
            if let Some(waiter) = state.waiters.get(&press.q) {
                match (waiter.nonce == press.n)
                    .then(|| ChannelAnswer::choice(&waiter.question, press.o, NAME))
                    .flatten()
                {
                    Some(got) => {
                        let _ = waiter.tx.send(got);
                    }
                    None => tracing::debug!(sink = NAME, "ignored a forged or stale press"),
                }
                return;
            }
        }
        let Ok(id) = press.q.parse::<QuestionId>() else {
            return;
        };
        if self.recorded_nonce(&id).as_deref() != Some(press.n.as_str()) {
            tracing::debug!(sink = NAME, "ignored a press for an unknown question");
            return;
        }
        let store = self.journal.store();
        let Ok(question) = store.question(&id) else {
            return;
        };
        if question.status != QuestionStatus::Pending {
            return;
        }
        if let Some(label) = question.options.get(press.o)
            && let Err(e) = answer(&store, &self.state_dir, &id, label, NAME, NAME)
        {
            tracing::warn!(sink = NAME, error = %e, "cannot store an answer from ntfy");
        }
    }

    /// Follows the reply topic until `stop`, handling every reply once.
    async fn follow(self: Arc<Self>, since: String, stop: CancellationToken) {
        let mut follower = Follower::new(
            self.client.clone(),
            &self.reply_topic,
            &since,
            self.follow.clone(),
        );
        loop {
            match follower.next(&stop).await {
                Ok(message) => {
                    self.handle(&message);
                    self.save_last_id(&message.id);
                }
                Err(tether_ntfy::NtfyError::Cancelled) => return,
                Err(e) => {
                    tracing::warn!(sink = NAME, error = %e, "cannot follow the ntfy reply topic");
                    tokio::select! {
                        () = stop.cancelled() => return,
                        () = tokio::time::sleep(REFUSED_PAUSE) => {}
                    }
                }
            }
        }
    }

    /// Registers a waiter for `question` and starts following if nobody was.
    fn wait_for(
        self: &Arc<Self>,
        question: &Question,
        nonce: String,
    ) -> (u64, mpsc::UnboundedReceiver<ChannelAnswer>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut state = self.state();
        state.next_key += 1;
        let key = state.next_key;
        state.waiters.insert(
            question.id.to_string(),
            Waiter {
                key,
                question: question.clone(),
                nonce,
                tx,
            },
        );
        if state.follower.is_none() {
            let stop = CancellationToken::new();
            state.follower = Some(stop.clone());
            let since = self.saved_last_id().unwrap_or_else(|| {
                // Never followed here: from a little before the question was asked.
                (question.created_at_ms / 1000 - 60).max(0).to_string()
            });
            tokio::spawn(Arc::clone(self).follow(since, stop));
        }
        (key, rx)
    }

    /// Unregisters the waiter `key` of `question`; stops following when nobody waits.
    fn done_waiting(&self, question: &QuestionId, key: u64) {
        let mut state = self.state();
        if state
            .waiters
            .get(question.as_str())
            .is_some_and(|w| w.key == key)
        {
            state.waiters.remove(question.as_str());
        }
        if state.waiters.is_empty()
            && let Some(stop) = state.follower.take()
        {
            stop.cancel();
        }
    }

    async fn push(&self, publish: Publish) {
        if let Err(e) = self
            .client
            .publish(&publish, &CancellationToken::new())
            .await
        {
            tracing::warn!(sink = NAME, error = %e, "could not push to ntfy");
        }
    }

    fn plain(&self, body: &SinkBody, priority: u8, tag: &str) -> Publish {
        Publish {
            topic: self.topic.clone(),
            title: Some(body.title()),
            message: body.plain(),
            priority: Some(priority),
            tags: vec![tag.to_owned()],
            actions: Vec::new(),
        }
    }
}

/// A button's label: the option on one line, cut to [`MAX_LABEL_CHARS`].
fn label_of(option: &str) -> String {
    let line = crate::visible::one_line(option);
    if line.chars().count() <= MAX_LABEL_CHARS {
        return line.into_owned();
    }
    let cut: String = line.chars().take(MAX_LABEL_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

impl Channel for Ntfy {
    fn name(&self) -> &'static str {
        NAME
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        let nonce = match self.shared.post(question, &stop).await {
            Ok(nonce) => nonce,
            Err(e) => {
                if !stop.is_cancelled() {
                    tracing::warn!(sink = NAME, error = %e, "could not push the question to ntfy");
                }
                stop.cancelled().await;
                return None;
            }
        };
        if question.options.is_empty() || !self.shared.answers {
            // Nothing to press: the push says how to answer.
            stop.cancelled().await;
            return None;
        }
        let (key, mut rx) = self.shared.wait_for(question, nonce);
        let got = tokio::select! {
            got = rx.recv() => got,
            () = stop.cancelled() => None,
        };
        self.shared.done_waiting(&question.id, key);
        got
    }

    async fn answered_elsewhere(&self, question: &Question, answer: &Answer) {
        // Only where it was pushed, and once, whichever process tells it.
        let tell = self.shared.recorded_nonce(&question.id).is_some()
            && self
                .shared
                .journal
                .store()
                .record_post(
                    &question.id,
                    &crate::sinks::answered_key(&self.shared.post_key),
                    &json!({}),
                )
                .unwrap_or(true);
        if tell {
            let body = SinkBody::answered(question, answer);
            self.shared
                .push(self.shared.plain(&body, 2, "white_check_mark"))
                .await;
        }
    }

    async fn remind(&self, question: &Question) {
        let nonce = self.shared.recorded_nonce(&question.id);
        let publish = match nonce {
            Some(nonce) => self.shared.publish_of(question, &nonce, BodyKind::Reminder),
            None => {
                let body = SinkBody::question(question, BodyKind::Reminder);
                self.shared.plain(&body, self.shared.priority, "hourglass")
            }
        };
        self.shared.push(publish).await;
    }

    async fn notice(&self, notice: &Notice) {
        let body = SinkBody::notice(notice);
        self.shared
            .push(self.shared.plain(&body, self.shared.priority, "bell"))
            .await;
    }
}

/// The ntfy sink in the registry ([`crate::registry`]), its table `[ntfy]`
/// ([`crate::tables::ntfy`]): `human.channels`' `"ntfy"` pushes to `[ntfy] topic`; an
/// escalation's `"ntfy:<topic>"` to that topic (`"ntfy"` alone: the `[ntfy] topic`).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::ntfy::TABLE,
    build: |setup, role| {
        let topic = escalation_topic(setup.config, role)?;
        let sink = Ntfy::from_config(
            &NtfyConfig::of(setup.config),
            topic.as_deref(),
            setup.journal.clone(),
            setup.ws.state_dir(),
        )
        .map_err(|e| e.to_string())?;
        let sink = match reply(setup.config, role, setup.reach) {
            ReplyPath::Exposed { .. } => sink.tell_only(),
            ReplyPath::None | ReplyPath::Protected(_) => sink,
        };
        Ok(std::sync::Arc::new(sink))
    },
    check: |config, role| {
        let mut missing = NtfyConfig::of(config).missing();
        if other_topic(role).is_some() {
            missing.retain(|m| !m.contains("[ntfy] topic"));
        }
        if missing.is_empty() {
            Ok(())
        } else {
            Err(SinkError::Missing {
                sink: "ntfy",
                missing,
            }
            .to_string())
        }
    },
    probe: None,
    notices: |config| NtfyConfig::of(config).notify.clone(),
    reply,
};

/// The other topic an escalation names (`ntfy:<topic>`), if it names one.
fn other_topic<'a>(role: crate::registry::Role<'a>) -> Option<&'a str> {
    match role {
        crate::registry::Role::Escalation(target) => target.arg.as_deref(),
        crate::registry::Role::Listed => None,
    }
}

/// Whether the agent could answer on ntfy in a person's place. A button's press carries the
/// question's nonce, which travels in the notification: whoever reads the topic can press it
/// (the reply token, when there is one, travels there too). The agent can read the topic when
/// it knows the topic — written in tether.toml, which it reads — and the server lets it read
/// without a token, over the network. Protected: a topic from `[ntfy] topic_env` (kept from the
/// agent like a key), topics that need the access token `[ntfy] token_env` names (kept from it
/// too), or no network for the agent.
fn reply(
    config: &tether_config::Config,
    role: crate::registry::Role<'_>,
    reach: crate::registry::Reach,
) -> ReplyPath {
    let ntfy = NtfyConfig::of(config);
    let written = match other_topic(role) {
        Some(t) => Some(format!("the topic `ntfy:{t}` of `human.escalate_to`")),
        None if ntfy.topic_from_env => None,
        None => Some("`[ntfy] topic`".to_owned()),
    };
    let Some(written) = written else {
        let var = ntfy.topic_env.as_deref().unwrap_or("its variable");
        return ReplyPath::Protected(format!(
            "its topic comes from {var}, which the agent never gets"
        ));
    };
    if let Some(var) = &ntfy.token_env
        && ntfy.token.is_some()
    {
        return ReplyPath::Protected(format!(
            "its topics need the access token in {var}, which the agent never gets (so long as \
                 the server refuses anyone reading them without one)"
        ));
    }
    if !reach.network {
        return ReplyPath::Protected("the agent has no network to follow its topic".to_owned());
    }
    ReplyPath::Exposed {
        why: format!(
            "the agent has the network and reads {written} in tether.toml: it could follow the \
                 topic and press its own questions' buttons"
        ),
        fix: "keep the topic out of tether.toml: set `[ntfy] topic_env` to the name of a \
             variable holding it (tether keeps it from the agent like a key; name no topic in \
             `human.escalate_to`), or protect the topics with an access token (`[ntfy] \
             token_env`) on a server that refuses anonymous readers. Meanwhile questions are \
             pushed there without buttons: answer on the terminal, the dashboard or with \
             `tether answer`"
            .to_owned(),
    }
}

/// The topic an escalation pushes to (`None` for the listed sink, which takes `[ntfy] topic`).
fn escalation_topic(
    config: &tether_config::Config,
    role: crate::registry::Role<'_>,
) -> Result<Option<String>, crate::registry::Off> {
    match (role, other_topic(role)) {
        (_, Some(t)) => Ok(Some(t.to_owned())),
        (crate::registry::Role::Escalation(_), None) => NtfyConfig::of(config)
            .topic
            .clone()
            .map(Some)
            .ok_or_else(|| {
                SinkError::Missing {
                    sink: "ntfy",
                    missing: vec!["`[ntfy] topic`".to_owned()],
                }
                .to_string()
            }),
        (crate::registry::Role::Listed, None) => Ok(None),
    }
}

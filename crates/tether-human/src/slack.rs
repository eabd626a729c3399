//! The Slack channel: a question is a message in the configured channel (one button per
//! option), its thread is the conversation (follow-ups post in the same thread), and the first
//! human reply in the thread — or a press of one of its buttons — is the answer.
//!
//! Where a question was posted is recorded in the store (`question_posts`: channel, thread and
//! ts), so a resumed run waits on the same post and the question is never posted twice; the
//! client catches up the thread after every (re)connect, so a reply given meanwhile is found.
//!
//! Several processes may wait on one Slack app at once (a run, `tether mcp`, a `tether ask`),
//! and Slack hands each event to only one of their sockets: every wait is listed in a per-user
//! registry ([`crate::slack_registry`]), and an event no wait of this process claims is looked
//! up there and its answer stored in the waiting workspace's store, which wakes its waiter.

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::json;
use tether_slack::{
    BotIdentity, Incoming, QuestionMessage, ReplyBody, SlackApi, SlackClient, Thread, Ts,
    answered_note, unescape,
};
use tether_store::{
    AnswerOutcome, BackendKind, Journal, Question, QuestionId, QuestionStatus, Store,
};
use tokio_util::sync::CancellationToken;

use crate::broker::{self, Answer};
use crate::channels::{BoxFuture, Channel, ChannelAnswer};
use crate::notices::Notice;
use crate::slack_registry::{Entry, Registry};

/// The channel's name, stored with answers and posts.
const NAME: &str = "slack";

/// Offers questions in a Slack channel.
pub struct Slack {
    client: SlackClient,
    journal: Journal,
    state_dir: PathBuf,
    registry: Registry,
}

impl Slack {
    /// A channel posting with `client`, recording posts in `journal`'s store; `state_dir` is
    /// the workspace's `.tether/`; `api_url` names the bot in the registry of waits.
    pub fn new(client: SlackClient, journal: Journal, state_dir: PathBuf, api_url: &str) -> Self {
        let registry = Registry::for_bot(api_url, client.channel());
        Self::with_registry(client, journal, state_dir, registry)
    }

    /// Like [`Slack::new`], listing waits in `dir` instead of the per-user directory (tests).
    pub fn with_registry_dir(
        client: SlackClient,
        journal: Journal,
        state_dir: PathBuf,
        dir: PathBuf,
    ) -> Self {
        Self::with_registry(client, journal, state_dir, Registry::at(dir))
    }

    fn with_registry(
        client: SlackClient,
        journal: Journal,
        state_dir: PathBuf,
        registry: Registry,
    ) -> Self {
        let bot: Arc<OnceLock<BotIdentity>> = Arc::default();
        let router = Router {
            registry: registry.clone(),
            bot: Arc::clone(&bot),
            api: client.api().clone(),
            journal: journal.clone(),
        };
        client.on_unclaimed(Arc::new(move |incoming| router.route(&incoming)));
        let channel = Slack {
            client,
            journal,
            state_dir,
            registry,
        };
        channel.learn_bot(bot);
        channel
    }

    /// Fetches the bot's identity in the background, for the router to recognise its messages.
    fn learn_bot(&self, slot: Arc<OnceLock<BotIdentity>>) {
        let client = self.client.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Ok(bot) = client.bot(&CancellationToken::new()).await {
                    let _ = slot.set(bot);
                }
            });
        }
    }

    /// The thread and ts where `question` was posted, if it was.
    fn posted(&self, question: &Question) -> Option<(Thread, Ts)> {
        let posts = self.journal.store().posts(&question.id).ok()?;
        let post = posts.into_iter().find(|p| p.channel == NAME)?;
        let r = &post.external_ref;
        let thread = Thread {
            channel: r.get("channel")?.as_str()?.to_owned(),
            ts: Ts::parse(r.get("thread_ts")?.as_str()?)?,
        };
        Some((thread, Ts::parse(r.get("ts")?.as_str()?)?))
    }

    /// The Slack thread of the conversation `thread` names (its first question's post,
    /// following the thread back); `None` starts a new thread.
    fn thread_of(&self, thread: &str) -> Option<Thread> {
        let mut id: QuestionId = thread.parse().ok()?;
        for _ in 0..32 {
            let first = self.journal.store().question(&id).ok()?;
            if let Some((thread, _)) = self.posted(&first) {
                return Some(thread);
            }
            id = first.thread_id.as_deref()?.parse().ok()?;
        }
        None
    }

    fn message<'q>(q: &'q Question) -> QuestionMessage<'q> {
        QuestionMessage {
            question: &q.question,
            context: &q.context,
            confidence: q.confidence.unwrap_or(0),
            options: &q.options,
            follow_up: q.thread_id.is_some(),
        }
    }

    async fn answer(
        &self,
        q: &Question,
        stop: &CancellationToken,
    ) -> Result<ChannelAnswer, String> {
        let pending = if let Some((thread, ts)) = self.posted(q) {
            self.client
                .pending(&thread, &ts, q.options.len(), stop)
                .await
        } else {
            let thread = q.thread_id.as_deref().and_then(|t| self.thread_of(t));
            let (text, blocks) = Self::message(q).render();
            let pending = self
                .client
                .post_question(&text, blocks, q.options.len(), thread.as_ref(), stop)
                .await
                .map_err(|e| e.to_string())?;
            let t = pending.thread();
            let reference = json!({"channel": t.channel, "thread_ts": t.ts.as_str(),
                "ts": pending.question_ts().as_str()});
            self.journal
                .store()
                .record_post(&q.id, NAME, &reference)
                .map_err(|e| e.to_string())?;
            Ok(pending)
        }
        .map_err(|e| e.to_string())?;
        let entry = Entry {
            state_dir: self.state_dir.clone(),
            question_id: q.id.to_string(),
            channel: pending.thread().channel,
            thread_ts: pending.thread().ts.to_string(),
            ts: pending.question_ts().to_string(),
        };
        self.registry.add(&entry);
        let reply = pending.wait(stop).await;
        self.registry.remove(&entry);
        let reply = reply.map_err(|e| e.to_string())?;
        let responder = match self.client.user_name(&reply.user).await {
            Some(name) => name,
            None => reply.responder().to_owned(),
        };
        let answer = match reply.body {
            ReplyBody::Choice(index) => ChannelAnswer::choice(q, index, responder)
                .ok_or_else(|| format!("no option {index}"))?,
            ReplyBody::Text(text) => ChannelAnswer::text(text, responder),
        };
        self.mark_answered(q, &answered_note(NAME, &answer.responder));
        Ok(answer)
    }

    /// Replaces the question's buttons by `line`, in the background (the agent need not wait).
    fn mark_answered(&self, q: &Question, line: &str) {
        let Some((thread, ts)) = self.posted(q) else {
            return;
        };
        let (text, blocks) = Self::message(q).render_answered(line);
        let client = self.client.clone();
        tokio::spawn(async move {
            let cancel = CancellationToken::new();
            if let Err(e) = client
                .update(&thread.channel, &ts, &text, &blocks, &cancel)
                .await
            {
                tracing::warn!(error = %e, "could not mark the slack question answered");
            }
        });
    }
}

impl Channel for Slack {
    fn name(&self) -> &'static str {
        NAME
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
                        tracing::warn!(error = %e, "slack channel stopped");
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
            if let Some((thread, _)) = self.posted(question) {
                let note = answered_note(&answer.channel, &answer.responder);
                self.mark_answered(question, &note);
                if let Err(e) = self
                    .client
                    .note(Some(&thread), &note, &CancellationToken::new())
                    .await
                {
                    tracing::warn!(error = %e, "could not tell slack who answered");
                }
            }
        })
    }

    fn notice<'a>(&'a self, notice: &'a Notice) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let questions = notice
                .run_id
                .as_ref()
                .and_then(|run| self.journal.store().questions_for_run(run).ok())
                .unwrap_or_default();
            let thread = questions
                .iter()
                .rev()
                .find_map(|q| self.posted(q))
                .map(|(t, _)| t);
            if let Err(e) = self
                .client
                .note(thread.as_ref(), &notice.plain(), &CancellationToken::new())
                .await
            {
                tracing::warn!(error = %e, "could not post the notice to slack");
            }
        })
    }
}

/// How long after an unmatched reply or press the registry is looked at again: the post's
/// process may still be recording it (a person can answer within milliseconds of the post,
/// and a press leaves no history in Slack to catch up from).
const RECHECKS: [std::time::Duration; 4] = [
    std::time::Duration::from_millis(50),
    std::time::Duration::from_millis(250),
    std::time::Duration::from_secs(1),
    std::time::Duration::from_secs(3),
];

/// Stores answers that reached this process's socket for waits of other processes (or of this
/// one, before its wait listens).
#[derive(Clone)]
struct Router {
    registry: Registry,
    bot: Arc<OnceLock<BotIdentity>>,
    /// For replacing the buttons of a question answered here (the Web API only: no cycle
    /// back to the socket that calls the router).
    api: SlackApi,
    /// This process's own store: a team store holds the questions of every workspace that
    /// shares it, so an answer for one of them is recorded there.
    journal: Journal,
}

impl Router {
    /// Stores `incoming`'s answer for the wait it belongs to; when no registered wait matches
    /// yet, looks again after each of [`RECHECKS`].
    fn route(&self, incoming: &Incoming) {
        if self.settle(incoming) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (router, incoming) = (self.clone(), incoming.clone());
        runtime.spawn(async move {
            for delay in RECHECKS {
                tokio::time::sleep(delay).await;
                if router.settle(&incoming) {
                    return;
                }
            }
        });
    }

    /// Stores `incoming`'s answer if a registered wait matches it; `false` when none does.
    fn settle(&self, incoming: &Incoming) -> bool {
        let found = match incoming {
            Incoming::Button(press) => self
                .registry
                .by_post(&press.channel, press.message_ts.as_str())
                .and_then(|entry| {
                    let index: usize = press
                        .action_id
                        .strip_prefix("tether_option_")?
                        .parse()
                        .ok()?;
                    let who = press
                        .user_name
                        .clone()
                        .unwrap_or_else(|| press.user.clone());
                    Some((entry, Answered::Choice(index), who))
                }),
            Incoming::Message(m) => self.message(m),
        };
        let Some((entry, answered, who)) = found else {
            return false;
        };
        match store_answer(&entry, &answered, &who, &self.journal) {
            Ok(Some(question)) => self.mark_answered(&entry, &question, &who),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "could not store a slack answer for another process");
            }
        }
        true
    }

    /// Replaces the buttons of `question` (answered here for another process), best effort.
    fn mark_answered(&self, entry: &Entry, question: &Question, who: &str) {
        let Some(ts) = Ts::parse(&entry.ts) else {
            return;
        };
        let (text, blocks) = Slack::message(question).render_answered(&answered_note(NAME, who));
        let (api, channel) = (self.api.clone(), entry.channel.clone());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = api.update_message(&channel, &ts, &text, &blocks).await {
                    tracing::warn!(error = %e, "could not mark the slack question answered");
                }
            });
        }
    }

    /// The wait a human's message answers: the newest question in its thread older than it.
    fn message(&self, m: &tether_slack::Message) -> Option<(Entry, Answered, String)> {
        let bot = self.bot.get();
        let human = m.bot_id.is_none()
            && matches!(m.subtype.as_deref(), None | Some("thread_broadcast"))
            && m.user.is_some()
            && bot.is_none_or(|b| m.user.as_deref() != Some(b.user_id.as_str()));
        let text = m.text.trim();
        if !human || text.is_empty() {
            return None;
        }
        let (channel, thread, ts) = (m.channel.as_deref()?, m.thread_ts.as_deref()?, m.ts()?);
        let entry = self
            .registry
            .in_thread(channel, thread)
            .into_iter()
            .filter(|e| Ts::parse(&e.ts).is_some_and(|q| q < ts))
            .max_by_key(|e| Ts::parse(&e.ts))?;
        Some((entry, Answered::Text(unescape(text)), m.user.clone()?))
    }
}

enum Answered {
    Text(String),
    Choice(usize),
}

/// Records the answer in the waiting workspace's store (first answer wins) and pokes it;
/// returns the question when this answer was the one recorded. The waiting workspace's store is
/// this process's own when that is a team store holding the question, else its file.
fn store_answer(
    entry: &Entry,
    answered: &Answered,
    who: &str,
    own: &Journal,
) -> Result<Option<Question>, String> {
    let id: QuestionId = entry
        .question_id
        .parse()
        .map_err(|_| "bad question id".to_owned())?;
    let shared = {
        let store = own.store();
        store.kind() == BackendKind::Team && store.question(&id).is_ok()
    };
    if shared {
        return answer_in(&own.store(), entry, answered, who, &id);
    }
    let store = Store::open(entry.state_dir.join("tether.db")).map_err(|e| e.to_string())?;
    answer_in(&store, entry, answered, who, &id)
}

/// [`store_answer`] in `store`.
fn answer_in(
    store: &Store,
    entry: &Entry,
    answered: &Answered,
    who: &str,
    id: &QuestionId,
) -> Result<Option<Question>, String> {
    let question = store.question(id).map_err(|e| e.to_string())?;
    if question.status != QuestionStatus::Pending {
        return Ok(None);
    }
    let text = match answered {
        Answered::Text(text) => text.clone(),
        Answered::Choice(index) => question
            .options
            .get(*index)
            .cloned()
            .ok_or_else(|| format!("no option {index}"))?,
    };
    let outcome = broker::answer(store, Path::new(&entry.state_dir), id, &text, NAME, who)
        .map_err(|e| e.to_string())?;
    Ok(match outcome {
        AnswerOutcome::Answered(question) => Some(*question),
        _ => None,
    })
}

/// The Slack channel in the registry ([`crate::registry`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    kind: tether_config::Channel::Slack,
    build: |setup, _| {
        let client = tether_slack::SlackClient::from_config(&setup.config.slack)
            .map_err(|e| e.to_string())?;
        Ok(std::sync::Arc::new(Slack::new(
            client,
            setup.journal.clone(),
            setup.ws.state_dir(),
            &setup.config.slack.api_url,
        )))
    },
    check: |config, _| {
        tether_slack::SlackSettings::from_config(&config.slack)
            .map(|_| ())
            .map_err(|e| e.to_string())
    },
};

#[cfg(test)]
#[path = "slack_tests.rs"]
mod tests;

//! The human desk: the one place a process gets its human side — the broker with its channels,
//! the ask policy and the timeout — built from `tether.toml` and the workspace.
//!
//! Every part that asks or waits for a human goes through a [`Desk`]: the built-in agent's
//! `ask_human` tool, `tether ask`, `tether mcp`, the demo, and a resumed run waiting for the
//! question its killed process left pending. So a question is offered on the same channels, with
//! the same deadline, whoever asks it and whenever it is waited for.
//!
//! What it builds:
//! - **Zulip** when `human.channels` lists it (from `[zulip]`, recording its posts in the store so
//!   a question is never posted twice);
//! - **Slack** when `human.channels` lists it (from `[slack]` and the token variables it names;
//!   its posts recorded the same way);
//! - **Telegram** when `human.channels` lists it (from `[telegram]` and the token's variable;
//!   its posts recorded in the store, its replies written to the asking workspace's store by
//!   whichever process polls the bot);
//! - **the notice sinks** `human.channels` lists — ntfy, webhook, email, notify_command — from
//!   their tables ([`crate::sinks`]), and the escalation sinks `human.escalate_to` names, with
//!   `human.remind_after` and `human.escalate_after` ([`crate::broker::Escalation`]);
//! - each of them kept to telling when the agent could answer on it in a person's place, given
//!   what it reaches ([`crate::registry::Reach`]; ntfy with its topic in tether.toml and the
//!   network open): its answers are never taken;
//! - **the terminal** when the caller says stdin and stderr are a person ([`Console::Person`]);
//!   only the caller knows (for `tether mcp` they are the protocol);
//! - **the policy**: the interaction threshold and what is wrong with the channels that could not
//!   be set up. Misconfiguration never stops anything: such a channel is left out and every call
//!   that needs a human fails with a tool error naming what to fix;
//! - **the timeout** from `human.timeout_secs` / `human.on_timeout`, counted from when a question
//!   was asked (so it also fires for a question waited for again after a resume);
//! - **the notice routes** from `[notify]` and each chat table's `notify` list, and the desktop
//!   notifier when `[notify] desktop` is on and the session has one ([`Desk::notify`]).
//!
//! A webhook queues what it sends and delivers it in the background, so a process about to exit
//! — a run at its end, `tether ask`, `tether mcp`, `tether goal complete` — first waits, at most
//! [`DELIVERY_GRACE`], for its channels to hand that over ([`Desk::flush_within`]).

use std::io::IsTerminal as _;
use std::sync::Arc;
use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_store::{Journal, NewQuestion, Outcome, Question, QuestionId, RunId};
use tokio_util::sync::CancellationToken;

use crate::asking::{self, AskFailed, AskPolicy, Reply};
use crate::broker::{Answer, Broker, BrokerError, Escalation, Timeout};
use crate::channels::DynChannel;
use crate::desktop::Desktop;
use crate::notice_events::NoticeQueue;
use crate::notices::{Notice, NoticeRoutes};
use crate::registry::Reach;
use crate::terminal::Terminal;

/// Whether the process's stdin and stderr are a person at a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Console {
    /// A person: questions are also shown as a card there and answered by typing.
    Person {
        /// Who answers there (stored as the responder).
        who: String,
    },
    /// Not a person (a pipe, a protocol, a service): no terminal channel.
    Absent,
}

impl Console {
    /// [`Console::Person`] when stdin and stderr are both terminals, answering as `who` (the
    /// person's name, [`crate::person::name`]).
    pub fn detect(who: impl FnOnce() -> String) -> Self {
        if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() {
            Console::Person { who: who() }
        } else {
            Console::Absent
        }
    }
}

/// A process's human side. Cheap to clone; clones share the broker.
#[derive(Clone)]
pub struct Desk {
    broker: Broker,
    policy: AskPolicy,
    notices: Arc<NoticeRoutes>,
}

impl Desk {
    /// The desk `config` describes for the workspace `ws`, recording in `journal` (the process's
    /// one store connection), for an agent that reaches what `reach` says: a channel whose
    /// reply path it reaches only tells (see [`crate::registry::ReplyPath`]).
    pub fn from_config(
        config: &Config,
        ws: &Workspace,
        journal: Journal,
        (console, reach): (Console, Reach),
    ) -> Self {
        let mut channels: Vec<Arc<dyn DynChannel>> = Vec::new();
        if let Console::Person { who } = console {
            channels.push(Arc::new(Terminal::stdio(who)));
        }
        let setup = crate::registry::Setup {
            config,
            ws,
            journal: &journal,
            reach,
        };
        let (listed, mut problems) = crate::registry::listed(&setup);
        channels.extend(listed);
        let (escalation, escalation_problems) = crate::registry::escalation(&setup);
        problems.extend(escalation_problems);
        let escalation = Escalation {
            remind_after: config.human.remind_after_secs.map(Duration::from_secs),
            escalate_after: config.human.escalate_after_secs.map(Duration::from_secs),
            channels: escalation,
        };
        let broker = Broker::new(journal, ws.state_dir(), channels)
            .with_timeout(timeout(config))
            .with_escalation(escalation);
        Desk::new(
            broker,
            AskPolicy {
                threshold: config.human.threshold,
                problems,
            },
        )
        .with_notices(notice_routes(config))
    }

    /// A desk over a broker built by hand (tests, benchmarks); notices follow the default
    /// `[notify]`, without desktop notifications.
    pub fn new(broker: Broker, policy: AskPolicy) -> Self {
        Desk {
            broker,
            policy,
            notices: Arc::new(NoticeRoutes::from_config(&Config::default())),
        }
    }

    /// Routes notices with `routes`.
    pub fn with_notices(mut self, routes: NoticeRoutes) -> Self {
        self.notices = Arc::new(routes);
        self
    }

    /// Offers questions on `channel` too (e.g. the demo's automatic answerer).
    pub fn with_channel(mut self, channel: Arc<dyn DynChannel>) -> Self {
        self.broker = self.broker.with_channel(channel);
        self
    }

    /// The broker, for callers that ask without the policy (`tether ask`).
    pub fn broker(&self) -> &Broker {
        &self.broker
    }

    /// The interaction threshold and the channels' problems.
    pub fn policy(&self) -> &AskPolicy {
        &self.policy
    }

    /// The reply given without reaching a human, if `question` needs none (see
    /// [`AskPolicy::settle`]).
    pub fn settle(&self, question: &NewQuestion) -> Option<Reply> {
        self.policy.settle(question)
    }

    /// `ask_human`: settles the question without a person when it can, otherwise stores it,
    /// offers it on every channel and waits for the first answer.
    pub async fn ask_human(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
    ) -> Result<Reply, AskFailed> {
        self.ask_human_with(question, cancel, |_| {}).await
    }

    /// Like [`Desk::ask_human`], telling `stored` the question once it is in the store.
    pub async fn ask_human_with(
        &self,
        question: NewQuestion,
        cancel: CancellationToken,
        stored: impl FnOnce(&Question),
    ) -> Result<Reply, AskFailed> {
        if let Some(reply) = self.settle(&question) {
            return Ok(reply);
        }
        asking::ask(&self.broker, question, cancel, stored).await
    }

    /// Waits for the answer to a question already stored — one a killed run left pending —
    /// offering it again on every channel (without posting it again where it was posted) and
    /// honouring the timeout counted from when it was asked.
    pub async fn wait(
        &self,
        id: &QuestionId,
        cancel: CancellationToken,
    ) -> Result<Answer, BrokerError> {
        self.broker.wait(id, cancel).await
    }

    /// Tells every channel that `run` ended with `outcome`.
    pub async fn run_ended(&self, run: &RunId, outcome: Outcome) {
        self.broker.run_ended(run, outcome).await;
    }
}

impl Desk {
    /// Sends `notice` to every channel whose `[notify]` filter includes its kind, at once, and
    /// to the desktop when it is on for that kind. A channel that cannot deliver only logs it.
    pub async fn notify(&self, notice: &Notice) {
        let channels = self
            .broker
            .channels()
            .iter()
            .filter(|c| self.notices.wants(c.name(), notice.kind))
            .map(|c| c.notice(notice));
        let desktop = async {
            if let Some(d) = self.notices.desktop(notice.kind) {
                d.show(notice).await;
            }
        };
        futures_util::future::join(futures_util::future::join_all(channels), desktop).await;
    }

    /// Delivers the notices `queue` receives (from the run's [`crate::NoticeSink`]) one by one
    /// until `stop` fires, then those still queued, and returns.
    pub async fn deliver_notices(&self, mut queue: NoticeQueue, stop: CancellationToken) {
        loop {
            let next = tokio::select! {
                biased;
                n = queue.rx.recv() => n,
                () = stop.cancelled() => break,
            };
            match next {
                Some(notice) => self.notify(&notice).await,
                None => break,
            }
        }
        while let Ok(notice) = queue.rx.try_recv() {
            self.notify(&notice).await;
        }
        self.flush().await;
    }

    /// Waits until every channel has handed over what it queued (a webhook's messages), so the
    /// run's last notices reach people before the process exits. Callers bound the wait.
    pub async fn flush(&self) {
        self.broker.flush().await;
    }

    /// [`Desk::flush`], for at most `grace` (normally [`DELIVERY_GRACE`]): what a process that
    /// is about to exit calls, so what its channels queued (the answer a webhook is told, a
    /// notice) reaches them. Returns at once when nothing is queued; whether all was handed
    /// over. What is still queued after `grace` is given up (and logged).
    pub async fn flush_within(&self, grace: Duration) -> bool {
        within(grace, self.flush()).await
    }
}

/// Runs `delivery` for at most `grace`; whether it finished. What it had not delivered then is
/// given up (and logged).
pub(crate) async fn within(
    grace: Duration,
    delivery: impl std::future::Future<Output = ()>,
) -> bool {
    tracing::debug!(
        ?grace,
        "waiting for the notice sinks to hand over what they queued"
    );
    let delivered = tokio::time::timeout(grace, delivery).await.is_ok();
    if !delivered {
        tracing::warn!(
            ?grace,
            "gave up delivering what the notice sinks queued; it is dropped"
        );
    }
    delivered
}

/// How long a process that is ending waits for its channels to hand over what they queued: a
/// run's last notices, the answer `tether ask` or `tether mcp` tells a webhook.
pub const DELIVERY_GRACE: Duration = Duration::from_secs(30);

/// The notice routes of `config`: `[notify]`, the channels' own lists, and desktop
/// notifications when `[notify] desktop` is on and the session can show them.
fn notice_routes(config: &Config) -> NoticeRoutes {
    let desktop = config
        .notify
        .desktop
        .then(|| Desktop::detect(config.key_vars()))
        .flatten();
    NoticeRoutes::from_config(config).with_desktop(desktop)
}

/// The broker's deadline from `human.timeout_secs` and `human.on_timeout`, if set.
fn timeout(config: &Config) -> Option<Timeout> {
    config.human.timeout.as_ref().map(|t| Timeout {
        after: Duration::from_secs(t.secs),
        answer: t.on_timeout.clone(),
    })
}

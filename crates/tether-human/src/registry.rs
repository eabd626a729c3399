//! Every channel a question can be offered on besides the terminal and the store, in one table.
//!
//! A channel kind is one [`ChannelDef`]: its `tether.toml` table, declared once
//! ([`ChannelDef::settings`], in [`crate::tables`]: its keys and their descriptions, which name a
//! secret's variable, which a variable overrides, and how the table is read — and so how
//! `human.channels` and, for a notice sink, `human.escalate_to` name it), one function that
//! builds it — or says, naming the setting or variable, why it cannot — for the desk and for
//! escalation, one that checks its settings without building it, for a service tether talks to
//! the probe `tether doctor` runs (a few bounded requests, nothing posted), and the notices it
//! asks for itself. The desk ([`crate::Desk::from_config`]), the sinks a short-lived command
//! waits for ([`crate::sinks::SinkBuilder`]), the notices' routes, `tether doctor` and the
//! configuration's schema ([`tables`]: its template, its checks, the secrets kept from the
//! agent) all go through [`CHANNELS`], so a channel is added by writing its module with its
//! table and one line here.
//!
//! Each also says whether the agent could answer on it in a person's place ([`ReplyPath`]),
//! from what its configuration leaves readable and what the agent reaches ([`Reach`]): ntfy
//! with its topic written in tether.toml and the network open, for one. Such a channel is built
//! to tell only — a question is still pushed there, with no way to answer it there, and nothing
//! it hears is taken — for every question: an `ask_before` yes would run what a person must
//! approve, and any answer is recorded, reported and acted on as a person's. The question then
//! waits for the other channels, the terminal, the dashboard or `tether answer`; `tether
//! doctor` says why and how to protect the channel.
//!
//! The terminal, the CLI and the dashboard are not in the table: the terminal is the caller's
//! (only it knows whether stdin is a person), and the CLI and the dashboard answer through the
//! store, which every question is offered on.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;

use tether_config::{Channel as Kind, Config, EscalationTarget, NoticeKind, Role as TableRole};
use tether_config::{Schema, TableDecl, Workspace};
use tether_store::Journal;

use crate::channels::DynChannel;
use crate::sinks::{Deliver, OneWay, SentLog};

/// What a channel is built from in this process.
#[derive(Clone, Copy)]
pub struct Setup<'a> {
    /// The loaded `tether.toml`.
    pub config: &'a Config,
    /// The workspace (its state directory keeps a channel's files).
    pub ws: &'a Workspace,
    /// The process's store connection (posts are recorded there).
    pub journal: &'a Journal,
    /// What the agent can reach: a channel whose reply path it reaches answers nothing.
    pub reach: Reach,
}

/// What the workspace's agent can reach, as tether's sandbox leaves it, for the channels'
/// reply paths. It always reads the workspace, tether.toml included, and the paths
/// `[sandbox] readable` grants; never tether's keys (the variables the `*_env` settings name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    /// Whether it may reach the network: the sandbox is off or lets it out, a goal opens it
    /// (`network: on`, once its contract is approved), or the agent talks to its model itself
    /// (an agent CLI, an ACP agent).
    pub network: bool,
}

impl Reach {
    /// The most an agent may reach: what is assumed when nothing says less (an MCP client
    /// tether does not sandbox, a process that knows nothing of the run's agent).
    pub const ANYTHING: Reach = Reach { network: true };
}

/// Whether an answer taken on a channel can only be a person's, as its configuration leaves
/// it ([`ChannelDef::reply`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReplyPath {
    /// It takes no answers: it only tells (the webhook, email, a command).
    None,
    /// Only a person answers there; the text says what keeps the agent out.
    Protected(String),
    /// The agent could answer there in a person's place: the channel only tells (a question is
    /// still pushed, without a way to answer it there), and its answers are never taken.
    Exposed {
        /// What the agent can read or reach (never a secret's value).
        why: String,
        /// How a person protects it.
        fix: String,
    },
}

impl Setup<'_> {
    /// `sink` as a one-way channel that records what it handed over under `key` (so a question
    /// goes out once across restarts).
    pub fn one_way<D: Deliver + 'static>(&self, sink: D, key: impl Into<String>) -> Built {
        let log = SentLog::new(self.journal.clone(), key);
        Ok(Arc::new(OneWay::new(sink).with_sent_log(log)))
    }
}

/// Why a channel is off: the text names the setting or variable to fix, never a secret.
pub type Off = String;

/// A channel built, or why it is off.
pub type Built = Result<Arc<dyn DynChannel>, Off>;

/// For whom a channel is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role<'a> {
    /// Listed in `human.channels`: offered every question.
    Listed,
    /// Named by `human.escalate_to`: offered a question once it waited `escalate_after`.
    Escalation(&'a EscalationTarget),
}

impl Role<'_> {
    /// The key a sink of `kind` records what it handed over under in this role: the kind, with
    /// `:escalation` when escalated to (the two are separate sinks, each sending once).
    pub fn sent_key(&self, kind: &str) -> String {
        match self {
            Role::Listed => kind.to_owned(),
            Role::Escalation(_) => format!("{kind}:escalation"),
        }
    }
}

/// What a channel's probe found, for `tether doctor`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probed {
    /// It works: what was found (the bot, the place questions go).
    Works(String),
    /// It does not.
    Fails {
        /// What failed (never a secret: variables are named, not read out).
        detail: String,
        /// What to do about it.
        fix: String,
    },
}

impl Probed {
    /// A failure saying `detail`, fixed by `fix`.
    pub fn fails(detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Probed::Fails {
            detail: detail.into(),
            fix: fix.into(),
        }
    }
}

/// A channel's settings as its probe reads them (`read`), or the probe's failure naming its
/// `[table]`.
pub(crate) fn probed_settings<T, E: std::fmt::Display>(
    read: Result<T, E>,
    table: &str,
) -> Result<T, Probed> {
    read.map_err(|e| {
        Probed::fails(
            e.to_string(),
            format!("set each missing value in [{table}] or its environment variable"),
        )
    })
}

/// A probe of the service a channel talks to, each request bounded by the duration given.
pub type Probe = for<'a> fn(&'a Config, Duration) -> BoxFuture<'a, Probed>;

/// One kind of channel.
pub struct ChannelDef {
    /// Its table of `tether.toml`, declared once: its keys, its secrets' variables, how it is
    /// read; its name is the channel's in `human.channels` (and, for a notice sink, in
    /// `human.escalate_to`).
    pub settings: &'static TableDecl,
    /// Builds it for `role`, or says why it is off.
    pub build: fn(&Setup<'_>, Role<'_>) -> Built,
    /// What is wrong with its settings for `role`, without building it (nothing sent, nothing
    /// opened): what `tether doctor` reports.
    pub check: fn(&Config, Role<'_>) -> Result<(), Off>,
    /// Reaches the service with the settings (`tether doctor`, when `human.channels` lists the
    /// channel); none for a sink whose settings are all there is to check.
    pub probe: Option<Probe>,
    /// The notices it asks for itself (its table's `notify = [...]`), when not `[notify] on`.
    pub notices: fn(&Config) -> Option<Vec<NoticeKind>>,
    /// Whether the agent, reaching what [`Reach`] says, could answer on it for `role` as its
    /// configuration stands — read what a question offers there (a button's nonce) and give the
    /// answer back. An exposed channel is built to tell only ([`crate::tell_only`]).
    pub reply: fn(&Config, Role<'_>, Reach) -> ReplyPath,
}

impl ChannelDef {
    /// Its name in `human.channels`: its table's.
    pub fn kind(&self) -> Kind {
        Kind::named(self.settings.name)
    }

    /// Whether it is a notice sink (it tells; it holds no conversation), which
    /// `human.escalate_to` may name.
    pub fn is_sink(&self) -> bool {
        matches!(self.settings.role, TableRole::Sink { .. })
    }
}

/// Every channel kind tether builds from `tether.toml`.
pub static CHANNELS: &[ChannelDef] = &[
    crate::zulip::DEF,
    crate::slack::DEF,
    crate::telegram::DEF,
    crate::ntfy::DEF,
    crate::webhook::DEF,
    crate::email::DEF,
    crate::notify_command::DEF,
];

/// The tables of every channel kind, in the table's order: what the configuration's schema
/// adds to the core tables for the channels.
pub fn tables() -> impl Iterator<Item = &'static TableDecl> {
    CHANNELS.iter().map(|def| def.settings)
}

/// The core tables and every channel's: a configuration as the human side reads it (the
/// runtime's schema adds the agents' tables, if any).
pub fn schema() -> Schema {
    Schema::core().with(tables())
}

/// The definition of `kind`, when it is built from the table.
pub fn find(kind: Kind) -> Option<&'static ChannelDef> {
    CHANNELS.iter().find(|def| def.kind() == kind)
}

/// `def` built for `role`; one the agent could answer on kept to telling.
fn build(def: &ChannelDef, setup: &Setup<'_>, role: Role<'_>) -> Built {
    let channel = (def.build)(setup, role)?;
    Ok(match (def.reply)(setup.config, role, setup.reach) {
        ReplyPath::Exposed { why, .. } => {
            tracing::warn!(
                channel = def.kind().as_str(),
                "takes no answers, only tells: {why} (`tether doctor` says how to protect it)"
            );
            Arc::new(crate::tell_only::TellOnly::new(channel))
        }
        ReplyPath::None | ReplyPath::Protected(_) => channel,
    })
}

/// The reply path of each channel `config` turns on — listed, then named for escalation —
/// given what the agent reaches, with the channel's spelling (what `tether doctor` reports).
pub fn reply_paths(config: &Config, reach: Reach) -> Vec<(String, ReplyPath)> {
    let listed = config
        .human
        .channels
        .iter()
        .filter_map(|k| find(*k))
        .map(|def| (def.kind().as_str().to_owned(), def, Role::Listed));
    let escalated = escalation_defs(config)
        .map(|(def, target)| (target.spelling(), def, Role::Escalation(target)));
    listed
        .chain(escalated)
        .map(|(name, def, role)| (name, (def.reply)(config, role, reach)))
        .collect()
}

/// The channels `human.channels` lists (those of the table), and the problems of those that
/// could not be built. One the agent could answer on tells only.
pub fn listed(setup: &Setup<'_>) -> (Vec<Arc<dyn DynChannel>>, Vec<Off>) {
    let mut built = Vec::new();
    let mut problems = Vec::new();
    for def in setup.config.human.channels.iter().filter_map(|k| find(*k)) {
        match build(def, setup, Role::Listed) {
            Ok(channel) => built.push(channel),
            Err(off) => {
                tracing::warn!(channel = def.kind().as_str(), "a channel is off: {off}");
                problems.push(off);
            }
        }
    }
    (built, problems)
}

/// The sinks `human.escalate_to` names (only when `human.escalate_after` is set), and the
/// problems of those that could not be built.
pub fn escalation(setup: &Setup<'_>) -> (Vec<Arc<dyn DynChannel>>, Vec<Off>) {
    let mut built = Vec::new();
    let mut problems = Vec::new();
    for (def, target) in escalation_defs(setup.config) {
        match build(def, setup, Role::Escalation(target)) {
            Ok(channel) => built.push(channel),
            Err(off) => {
                tracing::warn!(target = %target.spelling(), "an escalation sink is off: {off}");
                problems.push(format!("for escalation (`human.escalate_to`), {off}"));
            }
        }
    }
    (built, problems)
}

/// What is wrong with the settings of every notice sink `config` turns on (listed, or named for
/// escalation), without building any. The chat channels have their doctor probes instead.
pub fn problems(config: &Config) -> Vec<Off> {
    let mut out: Vec<Off> = config
        .human
        .channels
        .iter()
        .filter_map(|k| find(*k))
        .filter(|def| def.is_sink())
        .filter_map(|def| (def.check)(config, Role::Listed).err())
        .collect();
    out.extend(escalation_defs(config).filter_map(|(def, target)| {
        (def.check)(config, Role::Escalation(target))
            .err()
            .map(|off| format!("for escalation (`human.escalate_to`), {off}"))
    }));
    out
}

/// The escalation targets with their definitions (none without `human.escalate_after`).
fn escalation_defs(
    config: &Config,
) -> impl Iterator<Item = (&'static ChannelDef, &EscalationTarget)> {
    let on = config.human.escalate_after_secs.is_some();
    config
        .human
        .escalate_to
        .iter()
        .filter(move |_| on)
        .filter_map(|target| find(target.kind).map(|def| (def, target)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_channel_but_the_callers_own_is_in_the_table_once() {
        for (name, kind) in schema().channels() {
            let defs = CHANNELS.iter().filter(|d| d.kind() == kind).count();
            let callers_own = Kind::OWN.contains(&kind);
            assert_eq!(defs, usize::from(!callers_own), "{name}");
        }
        let tables: Vec<&'static TableDecl> = tables().collect();
        assert_eq!(Schema::conflicts(&tables), Vec::<String>::new());
        assert_eq!(schema().declared().len(), CHANNELS.len());
        for def in CHANNELS {
            assert!(def.settings.channel().is_some(), "{}", def.settings.name);
        }
    }

    #[test]
    fn every_variable_a_channels_table_names_is_one_of_tethers_keys() {
        let keys = schema().key_settings();
        for def in CHANNELS {
            for key in def
                .settings
                .keys
                .iter()
                .filter(|k| k.name.ends_with("_env"))
            {
                let setting = (def.settings.name, key.name);
                assert!(
                    keys.contains(&setting),
                    "{setting:?} is not among tether's keys"
                );
            }
        }
    }

    fn config(ntfy: &str, env: &[(&str, &str)]) -> Config {
        let text = format!(
            "[human]\nchannels = [\"zulip\", \"ntfy\", \"webhook\"]\nescalate_after = \"1h\"\n\
             escalate_to = [\"ntfy\", \"ntfy:oncall\", \"email\"]\n[ntfy]\n{ntfy}\n"
        );
        let mut vars = tether_config::MapEnv::new();
        for (k, v) in env {
            vars.set(*k, *v);
        }
        tether_config::parse(&schema(), &text, std::path::Path::new("tether.toml"), &vars).unwrap()
    }

    /// Each channel's spelling with `exposed`, `protected` or `none`.
    fn paths(config: &Config, network: bool) -> Vec<(String, &'static str)> {
        reply_paths(config, Reach { network })
            .into_iter()
            .map(|(name, path)| {
                let kind = match path {
                    ReplyPath::Exposed { .. } => "exposed",
                    ReplyPath::Protected(_) => "protected",
                    ReplyPath::None => "none",
                };
                (name, kind)
            })
            .collect()
    }

    fn owned(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter().map(|(n, k)| ((*n).to_owned(), *k)).collect()
    }

    #[test]
    fn ntfy_answers_only_where_the_agent_cannot_read_its_topic_or_reach_the_network() {
        let in_file = config("topic = \"t1\"", &[]);
        assert_eq!(
            paths(&in_file, true),
            owned(&[
                ("zulip", "protected"),
                ("ntfy", "exposed"),
                ("webhook", "none"),
                ("ntfy", "exposed"),
                ("ntfy:oncall", "exposed"),
                ("email", "none"),
            ])
        );
        assert!(paths(&in_file, false).iter().all(|(_, k)| *k != "exposed"));
        // The topic from a variable: the escalation's own topic is still written in the file.
        let hidden = config("topic_env = \"T\"", &[("T", "t1")]);
        assert_eq!(
            paths(&hidden, true)
                .into_iter()
                .filter(|(n, _)| n.starts_with("ntfy"))
                .collect::<Vec<_>>(),
            owned(&[
                ("ntfy", "protected"),
                ("ntfy", "protected"),
                ("ntfy:oncall", "exposed")
            ])
        );
        // Topics that need a token the agent never gets.
        let token = config("topic = \"t1\"\ntoken_env = \"TK\"", &[("TK", "tk_1")]);
        assert!(paths(&token, true).iter().all(|(_, k)| *k != "exposed"));
        // A token variable named but unset protects nothing.
        let unset = config("topic = \"t1\"\ntoken_env = \"TK\"", &[]);
        assert!(paths(&unset, true).contains(&("ntfy".to_owned(), "exposed")));
    }

    #[test]
    fn an_exposed_channel_is_said_with_its_fix_never_its_topic() {
        let hidden = config("topic_env = \"T\"", &[("T", "secret-topic-9")]);
        let in_file = config("topic = \"t1\"", &[]);
        for config in [hidden, in_file] {
            for (_, path) in reply_paths(&config, Reach::ANYTHING) {
                let text = format!("{path:?}");
                assert!(!text.contains("secret-topic-9"), "{text}");
                if let ReplyPath::Exposed { fix, .. } = path {
                    assert!(fix.contains("topic_env"), "{fix}");
                }
            }
        }
    }

    #[test]
    fn an_escalation_target_names_a_sink_of_the_table() {
        let text = "[human]\nescalate_after = \"1h\"\n\
                    escalate_to = [\"ntfy\", \"email\", \"webhook\", \"notify_command\"]\n";
        let config = tether_config::parse(
            &schema(),
            text,
            std::path::Path::new("tether.toml"),
            &tether_config::MapEnv::new(),
        )
        .unwrap();
        for target in &config.human.escalate_to {
            assert!(
                find(target.kind).is_some_and(ChannelDef::is_sink),
                "{target:?}"
            );
        }
        let sinks: Vec<&str> = CHANNELS
            .iter()
            .filter(|d| d.is_sink())
            .map(|d| d.settings.name)
            .collect();
        assert_eq!(sinks, ["ntfy", "webhook", "email", "notify_command"]);
    }
}

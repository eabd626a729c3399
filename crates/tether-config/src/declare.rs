//! What an integration declares of its settings, once, beside its descriptor: its table of
//! `tether.toml` ([`TableDecl`]) — the table's name and introduction, each key with its
//! description and template line ([`KeyDecl`]), which keys name a secret's variable or are a
//! credential themselves ([`KeyKind`]), which a variable overrides — whether the table is a
//! channel's or a notice sink's ([`Role`]), and the function that reads it into the
//! integration's own type (through a [`TableReader`](crate::TableReader)).
//!
//! tether-config names no integration. Its caller assembles a [`Schema`](crate::Schema) of the
//! core tables and the declared ones, and from each declaration tether-config reads and checks
//! the table (unknown keys and their suggestions, the environment's overrides, a secret's
//! variable), writes it into the template `tether init` writes (and so the configuration
//! reference), lists `human.channels`' and `human.escalate_to`'s spellings, hides its
//! credentials from a run's record, and keeps the variables of its secrets out of tether's
//! environment and from every child ([`Config::key_vars`](crate::Config::key_vars)).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::values::Check;

/// The parsed settings of one declared table, held by a [`Config`](crate::Config) without
/// its type and read back typed by the integration
/// ([`Config::integration`](crate::Config::integration)).
///
/// Any `Debug + PartialEq` type is one. Its `Debug` is what a configuration's `Debug` shows:
/// it must never show a secret (hold them as [`Secret`](crate::Secret)); its `PartialEq` is
/// how a run's recorded configuration is compared with the file's.
pub trait Settings: Any + Send + Sync + fmt::Debug {
    /// Whether `other` holds the same settings (of the same type).
    fn same(&self, other: &dyn Settings) -> bool;
    /// As `Any`, to be read back typed.
    fn as_any(&self) -> &dyn Any;
}

impl<T: Any + Send + Sync + fmt::Debug + PartialEq> Settings for T {
    fn same(&self, other: &dyn Settings) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// Reads a declared table (present or not: the environment may still configure it) into its
/// settings.
pub type ReadTable = fn(&mut crate::TableReader<'_, '_>) -> Arc<dyn Settings>;

/// One table of `tether.toml` an integration declares.
#[derive(Debug)]
pub struct TableDecl {
    /// Its name (`zulip`): the table's header, and, for a channel or a sink, its spelling in
    /// `human.channels`.
    pub name: &'static str,
    /// What the table is, for the template: one or more lines (`\n` between them) written as
    /// comments above its header.
    pub intro: &'static str,
    /// A channel's table, a notice sink's, or settings only.
    pub role: Role,
    /// Its keys, in the template's order.
    pub keys: &'static [KeyDecl],
    /// The key, naming a secret's variable, that a key looking like a credential written in
    /// the table (`token = "…"`) is pointed to; `None`: such a key is only unknown.
    pub advice: Option<&'static str>,
    /// Reads the table.
    pub read: ReadTable,
    /// Its settings when the file and the environment say nothing (what `read` gives then).
    pub default: fn() -> Arc<dyn Settings>,
}

impl TableDecl {
    /// The declaration of `key`.
    pub fn key(&self, key: &str) -> Option<&'static KeyDecl> {
        self.keys.iter().find(|k| k.name == key)
    }

    /// The channel `human.channels` names it by, when it is a channel's or a sink's.
    pub fn channel(&self) -> Option<crate::Channel> {
        match self.role {
            Role::Settings => None,
            Role::Channel | Role::Sink { .. } => Some(crate::Channel::named(self.name)),
        }
    }
}

/// What a declared table is.
#[derive(Debug, Clone, Copy)]
pub enum Role {
    /// Settings only: nothing `human.channels` lists.
    Settings,
    /// A channel a question is offered on (a conversation: Zulip, Slack, Telegram):
    /// `human.channels` lists it by the table's name.
    Channel,
    /// A notice sink (it reaches a person rather than holding a conversation): listed in
    /// `human.channels` like a channel, and named by `human.escalate_to` as the table's name,
    /// or `name:<arg>` when it takes an argument.
    Sink {
        /// What follows the colon in `human.escalate_to`, when anything may.
        arg: Option<EscalationArg>,
    },
}

/// What a sink takes after `name:` in `human.escalate_to` (`ntfy:<topic>`).
#[derive(Debug, Clone, Copy)]
pub struct EscalationArg {
    /// What it is called in messages and the template (`topic`).
    pub name: &'static str,
    /// One, for the template's example (`oncall`).
    pub example: &'static str,
    /// Its rule.
    pub check: Check,
}

/// One key of a declared table.
#[derive(Debug, Clone, Copy)]
pub struct KeyDecl {
    /// Its name in the table.
    pub name: &'static str,
    /// What it is, for the template: one or more lines (`\n` between them) written as comments
    /// above it.
    pub doc: &'static str,
    /// The value the template writes (TOML: `"https://chat.example.com"`, `3`, `[]`).
    pub example: &'static str,
    /// Whether the template writes it set (its `example` is then its default), rather than
    /// commented out.
    pub active: bool,
    /// Whether it names a secret's variable or is a credential itself.
    pub kind: KeyKind,
    /// The environment variable overriding it, when one does (`ZULIP_STREAM`).
    pub env: Option<&'static str>,
    /// A valid value other than its default (TOML), so the tests that every key is read,
    /// recorded and compared can set it.
    pub sample: &'static str,
}

impl KeyDecl {
    /// A plain key, commented out in the template with `example`; `sample` is a valid value
    /// other than its default.
    pub const fn new(
        name: &'static str,
        doc: &'static str,
        example: &'static str,
        sample: &'static str,
    ) -> Self {
        KeyDecl {
            name,
            doc,
            example,
            active: false,
            kind: KeyKind::Plain,
            env: None,
            sample,
        }
    }

    /// Written set in the template (its example is its default).
    pub const fn active(self) -> Self {
        KeyDecl {
            active: true,
            ..self
        }
    }

    /// Naming the variable of a secret, `default` when the file names none.
    pub const fn secret_var(self, default: Option<&'static str>) -> Self {
        KeyDecl {
            kind: KeyKind::SecretVar { default },
            ..self
        }
    }

    /// A credential itself (a webhook's URL): hidden from a run's record.
    pub const fn credential(self) -> Self {
        KeyDecl {
            kind: KeyKind::Credential,
            ..self
        }
    }

    /// Overridden by the variable `var`.
    pub const fn overridden_by(self, var: &'static str) -> Self {
        KeyDecl {
            env: Some(var),
            ..self
        }
    }
}

/// An agent CLI tether drives, as `[executor] kind` spells it: its descriptor's kind
/// (`claude`) and what the template says of it (`Claude Code, with tether's tools over MCP`,
/// written after the agent before it in the template's list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentDecl {
    /// Its spelling in `[executor] kind`.
    pub kind: &'static str,
    /// What the template says of it, in brackets after its spelling.
    pub about: &'static str,
}

/// Whether a key names a secret's variable or is a credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Neither.
    Plain,
    /// The NAME of the variable holding a secret (a token, a password, a URL that is a
    /// credential): read by tether-config, the variable taken out of tether's environment at
    /// start and kept from every child, never one a model's key is read from.
    SecretVar {
        /// The variable named when the file names none.
        default: Option<&'static str>,
    },
    /// Its value is a credential (a webhook's URL written in the file): a run's record holds a
    /// salted digest of it, never the value.
    Credential,
}

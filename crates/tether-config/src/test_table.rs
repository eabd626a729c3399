//! A table declared for the tests only, as an integration declares one: `[pager]`, a notice
//! sink with a credential written in the file (`url`), a variable overriding a setting
//! (`PAGER_ROOM`), a secret's variable with a default (`token_env`) and an escalation argument
//! (`pager:<number>`); and three agent CLIs' spellings. With them the tests show a declared
//! table read, checked, documented and protected, and an agent CLI's kind accepted, with no
//! edit to tether-config. (Shared by the unit tests and the integration
//! tests, which include this file.)

#![allow(dead_code)]

use std::sync::Arc;

use tether_config::{
    AgentDecl, Config, EscalationArg, KeyDecl, NoticeKind, Role, Schema, Secret, TableDecl,
    TableReader, values,
};

/// The test sink's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PagerSettings {
    /// Where pages go; a credential.
    pub url: Option<Secret>,
    /// The room paged (`PAGER_ROOM` overrides).
    pub room: Option<String>,
    /// The NAME of the variable holding the token.
    pub token_env: String,
    /// The token.
    pub token: Option<Secret>,
    /// How loud.
    pub level: u8,
    /// Its own notices.
    pub notify: Option<Vec<NoticeKind>>,
}

impl Default for PagerSettings {
    fn default() -> Self {
        PagerSettings {
            url: None,
            room: None,
            token_env: "PAGER_TOKEN".to_owned(),
            token: None,
            level: 2,
            notify: None,
        }
    }
}

impl PagerSettings {
    /// The pager's settings in `config`.
    pub fn of(config: &Config) -> PagerSettings {
        config.integration::<PagerSettings>().into_owned()
    }
}

/// `[pager]`.
pub const PAGER: TableDecl = TableDecl {
    name: "pager",
    intro: "The pager sink (list \"pager\" in human.channels): a test's, paging a room.",
    role: Role::Sink {
        arg: Some(EscalationArg {
            name: "number",
            example: "555",
            check: digits,
        }),
    },
    keys: &[
        KeyDecl::new(
            "url",
            "Where pages go: an http:// or https:// URL (itself a credential).",
            "\"https://pager.example/hook\"",
            "\"https://pager.example/other\"",
        )
        .credential(),
        KeyDecl::new("room", "The room paged.", "\"ops\"", "\"dev\"").overridden_by("PAGER_ROOM"),
        KeyDecl::new(
            "token_env",
            "The NAME of the environment variable holding the pager's token.",
            "\"PAGER_TOKEN\"",
            "\"OTHER_PAGER_TOKEN\"",
        )
        .active()
        .secret_var(Some("PAGER_TOKEN")),
        KeyDecl::new("level", "How loud: 1..5.", "2", "4"),
        KeyDecl::new(
            "notify",
            "The notices paged, when not [notify] on.",
            "[\"failed\"]",
            "[\"done\"]",
        ),
    ],
    advice: Some("token_env"),
    read: |t| Arc::new(read(t)),
    default: || Arc::new(PagerSettings::default()),
};

/// The agent CLIs the tests' registry spells in `[executor] kind`, as tether's registers its own.
pub const AGENTS: [AgentDecl; 3] = [
    AgentDecl {
        kind: "claude",
        about: "Claude Code, with tether's tools over MCP",
    },
    AgentDecl {
        kind: "codex",
        about: "the Codex CLI, the same way",
    },
    AgentDecl {
        kind: "pi",
        about: "the pi coding agent, the same way",
    },
];

/// The core tables and `[pager]`, with the agent CLIs of [`AGENTS`].
pub fn schema() -> Schema {
    Schema::core().with([&PAGER]).with_agents(AGENTS)
}

fn read(t: &mut TableReader<'_, '_>) -> PagerSettings {
    let mut out = PagerSettings {
        token: t.secret("token_env"),
        ..PagerSettings::default()
    };
    if let Some(var) = t.secret_var("token_env") {
        out.token_env = var;
    }
    out.url = t.string("url", values::http_url).map(Secret::new);
    out.room = t.string("room", room);
    if let Some(level) = t.int("level", 1, 5) {
        out.level = level;
    }
    out.notify = t.notices("notify");
    if !t.given("room") {
        t.lacks("`pager.room` (or PAGER_ROOM)");
    }
    if out.token.is_none() {
        t.lacks(format!("the token (set {})", out.token_env));
    }
    out
}

/// A room's name: lower-case letters, digits and `-`.
fn room(value: &str) -> Result<(), String> {
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "must be a room's name (a-z, 0-9, -), got {value:?}"
        ))
    }
}

/// A phone number: digits only.
fn digits(value: &str) -> Result<(), String> {
    if !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit()) {
        Ok(())
    } else {
        Err(format!("must be a number, got {value:?}"))
    }
}

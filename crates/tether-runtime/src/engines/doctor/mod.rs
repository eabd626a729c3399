//! The checks of `tether doctor`, the ones a person setting tether up runs once, each on one line with ✓ or
//! ✗ and, for every failure, the fix — the config, the executor (an agent CLI found and new
//! enough), tether's MCP server answering with its four tools, the model endpoints, Zulip, Slack,
//! Telegram and the notice sinks.
//!
//! Each check is its own module: `agent` (the executor), `key` (the key variable an agent
//! CLI's own configuration names), `mcp` (the MCP server), `remote` (model endpoints, and each
//! listed channel's probe from the channel registry: Zulip's bot, Slack's tokens and channel,
//! Telegram's bot and chat), `sinks` (the notice sinks' settings), `answers` (only a person can
//! answer on the channels: one whose reply path the agent could reach takes none, with the fix).
//! [`checks`] runs them in order; none calls a model or posts anything. The CLI prints them.

mod agent;
mod answers;
mod family;
mod key;
mod mcp;
mod remote;
mod sandbox;
mod sinks;
mod store;

use std::path::Path;

use serde::Serialize;
use tether_config::{Config, ConfigError, Env, Loaded, Workspace};

use crate::Host;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// It works.
    Pass,
    /// It does not; the check says how to fix it.
    Fail,
    /// Not checked: nothing to check, or what it needs failed first.
    Skip,
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// What was checked (`config`, `store`, `executor`, `agent key`, `sandbox`, `mcp`, `model`,
    /// `judge`, `zulip`, `slack`, `telegram`, `notices`, `answers`).
    pub name: &'static str,
    /// How it ended.
    pub status: Status,
    /// What was found; further lines list details (each problem of the config).
    pub detail: String,
    /// What to do about a failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    fn pass(name: &'static str, detail: impl Into<String>) -> Self {
        Check {
            name,
            status: Status::Pass,
            detail: detail.into(),
            fix: None,
        }
    }

    fn fail(name: &'static str, detail: impl Into<String>, fix: impl Into<String>) -> Self {
        Check {
            name,
            status: Status::Fail,
            detail: detail.into(),
            fix: Some(fix.into()),
        }
    }

    fn skip(name: &'static str, detail: impl Into<String>) -> Self {
        Check {
            name,
            status: Status::Skip,
            detail: detail.into(),
            fix: None,
        }
    }
}

/// Every check of `ws` in order, with `tether` as the binary agent CLIs start `tether mcp`
/// from.
pub async fn checks(
    ws: &Workspace,
    env: &(dyn Env + Sync),
    tether: &Path,
    host: &Host,
) -> Vec<Check> {
    let loaded = tether_config::load(crate::schema(), ws.root(), env);
    let mut checks = vec![config(&loaded), store::check(ws, env).await];
    let config = loaded.as_ref().ok().map(|l| &l.config);
    let not_loaded = "not checked: the config does not load";
    match config {
        Some(config) => {
            checks.push(agent::check(config, (ws, env), tether, host).await);
            checks.extend(key::check(config, env));
            checks.push(sandbox::check(config));
        }
        None => {
            checks.push(Check::skip("executor", not_loaded));
            checks.push(Check::skip("sandbox", not_loaded));
        }
    }
    let key_vars = config.map(Config::key_vars).unwrap_or_default();
    checks.push(mcp::check(tether, ws.root(), &key_vars).await);
    match config {
        Some(config) => {
            checks.extend(remote::checks(config, env).await);
            checks.push(sinks::check(config));
            checks.push(answers::check(config, ws, env));
        }
        None => {
            let names = ["model", "judge"]
                .into_iter()
                .chain(remote::channel_names());
            for name in names.chain(["notices", "answers"]) {
                checks.push(Check::skip(name, not_loaded));
            }
        }
    }
    checks
}

/// The config loads and validates; its problems with file and line when it does not.
fn config(loaded: &Result<Loaded, ConfigError>) -> Check {
    match loaded {
        Ok(loaded) => {
            let file = loaded.source.as_ref().map_or_else(
                || "no tether.toml: the defaults".to_owned(),
                |p| format!("{} is valid", p.display()),
            );
            let mut detail = file;
            for warning in &loaded.warnings {
                detail.push_str(&format!("\nwarning: {warning}"));
            }
            Check::pass("config", detail)
        }
        Err(e @ ConfigError::Invalid { .. }) => Check::fail(
            "config",
            e.to_string(),
            "correct these lines (`tether validate` lists every problem)",
        ),
        Err(e @ ConfigError::MissingKey { var }) => {
            Check::fail("config", e.to_string(), format!("export {var}=…"))
        }
        Err(e) => Check::fail(
            "config",
            e.to_string(),
            "make the file readable, or unset TETHER_CONFIG to use tether.toml",
        ),
    }
}

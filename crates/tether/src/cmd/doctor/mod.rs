//! `tether doctor`: the checks a person setting tether up runs once, each on one line with ✓ or
//! ✗ and, for every failure, the fix — the config, the executor (an agent CLI found and new
//! enough), tether's MCP server answering with its four tools, the model endpoints, Zulip, Slack,
//! Telegram and the notice sinks.
//!
//! Each check is its own module: [`agent`] (the executor), [`key`] (the key variable an agent
//! CLI's own configuration names), [`mcp`] (the MCP server),
//! [`remote`] (model endpoints and Zulip), [`slack`] (the app's tokens and its channel),
//! [`telegram`] (the bot and its chat), [`sinks`] (the notice sinks' settings). They run in order on one small runtime; none calls a
//! model or posts anything.

mod agent;
mod key;
mod mcp;
mod remote;
mod sandbox;
mod sinks;
mod slack;
mod store;
mod telegram;

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use serde::Serialize;
use tether_config::{Config, ConfigError, Loaded};

use super::Ctx;
use crate::cli::DoctorArgs;
use crate::exit::Exit;

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
    /// `judge`, `zulip`, `slack`, `telegram`, `notices`).
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

#[derive(Serialize)]
struct Report<'a> {
    ok: bool,
    checks: &'a [Check],
}

/// Runs every check and prints them; exit 1 when any failed.
pub fn run(ctx: &mut Ctx<'_>, args: &DoctorArgs) -> Result<Exit> {
    let tether = match &args.tether {
        Some(path) => path.clone(),
        None => std::env::current_exe().context("finding this tether binary")?,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let checks = runtime.block_on(checks(ctx, tether));
    let ok = checks.iter().all(|c| c.status != Status::Fail);
    if args.json {
        serde_json::to_writer_pretty(
            &mut *ctx.out,
            &Report {
                ok,
                checks: &checks,
            },
        )?;
        writeln!(ctx.out)?;
    } else {
        write_text(ctx, &checks)?;
    }
    Ok(if ok { Exit::Done } else { Exit::Error })
}

async fn checks(ctx: &Ctx<'_>, tether: PathBuf) -> Vec<Check> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env);
    let mut checks = vec![config(&loaded), store::check(&ctx.ws, ctx.env).await];
    let config = loaded.as_ref().ok().map(|l| &l.config);
    let not_loaded = "not checked: the config does not load";
    match config {
        Some(config) => {
            checks.push(agent::check(config, &ctx.ws, ctx.env, &tether).await);
            checks.extend(key::check(config, ctx.env));
            checks.push(sandbox::check(config));
        }
        None => {
            checks.push(Check::skip("executor", not_loaded));
            checks.push(Check::skip("sandbox", not_loaded));
        }
    }
    let key_vars = config.map(Config::key_vars).unwrap_or_default();
    checks.push(mcp::check(&tether, ctx.ws.root(), &key_vars).await);
    match config {
        Some(config) => {
            checks.extend(remote::checks(config, ctx.env).await);
            checks.push(sinks::check(config));
        }
        None => {
            for name in ["model", "judge", "zulip", "slack", "telegram", "notices"] {
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

fn write_text(ctx: &mut Ctx<'_>, checks: &[Check]) -> Result<()> {
    for check in checks {
        let mark = match check.status {
            Status::Pass => "✓",
            Status::Fail => "✗",
            Status::Skip => "-",
        };
        let mut lines = check.detail.lines();
        let first = lines.next().unwrap_or_default();
        let line = format!("{mark} {}: {first}", check.name);
        writeln!(ctx.out, "{}", tether_human::visible::visible(&line))?;
        for more in lines {
            writeln!(ctx.out, "    {}", tether_human::visible::visible(more))?;
        }
        if let Some(fix) = &check.fix {
            writeln!(ctx.out, "  fix: {}", tether_human::visible::visible(fix))?;
        }
    }
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    match failed {
        0 => writeln!(ctx.out, "\nall checks passed")?,
        1 => writeln!(ctx.out, "\n1 check failed")?,
        n => writeln!(ctx.out, "\n{n} checks failed")?,
    }
    Ok(())
}

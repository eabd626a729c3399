//! `tether init`.

use anyhow::Result;
use tether_core::init::{self, Agent, InitAction, InitError, InitOptions};

use super::Ctx;
use crate::cli::{InitAgent, InitArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// Sets the workspace up and says what was done.
pub fn run(ctx: &mut Ctx<'_>, args: &InitArgs) -> Result<Exit> {
    let agent = match (args.agent, &args.program) {
        (None, _) => None,
        (Some(InitAgent::Acp), Some(program)) if !program.trim().is_empty() => {
            Some(Agent::Acp(program.clone()))
        }
        (Some(InitAgent::Acp), _) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "--agent acp needs the agent's program: `tether init --agent acp PROGRAM`"
            )));
        }
        (Some(other), Some(program)) => {
            return Err(Failure::usage(anyhow::anyhow!(
                "only --agent acp takes a PROGRAM; {} is found by its own name on PATH (to run \
                 {program}, set `program` under [executor] in the tether.toml it writes)",
                kind(other)
            )));
        }
        (Some(InitAgent::Claude), None) => Some(Agent::Claude),
        (Some(InitAgent::Codex), None) => Some(Agent::Codex),
        (Some(InitAgent::Pi), None) => Some(Agent::Pi),
        (Some(InitAgent::Builtin), None) => Some(Agent::Builtin),
    };
    let options = InitOptions {
        force: args.force,
        agent: agent.clone(),
    };
    let actions = match init::init(&ctx.ws, tether_runtime::schema(), options) {
        Err(e @ InitError::Exists { .. }) => return Err(Failure::usage(e)),
        other => other?,
    };
    let ws = &ctx.ws;
    for action in &actions {
        let line = match action {
            InitAction::Created(p) => format!("created   {}", ws.display(p)),
            InitAction::Overwrote(p) => format!("replaced  {}", ws.display(p)),
            InitAction::Kept(p) => format!(
                "kept      {} (yours: init writes one only where none is)",
                ws.display(p)
            ),
            InitAction::CreatedStore(p) => format!("created   {} (the store)", ws.display(p)),
            InitAction::KeptStore(p) => format!("kept      {} (the store)", ws.display(p)),
            InitAction::IgnoredState(p) => format!("ignored   .tether/ in {}", ws.display(p)),
            InitAction::AlreadyIgnored(p) => {
                format!("kept      {} (already ignores .tether/)", ws.display(p))
            }
        };
        writeln!(ctx.out, "{line}")?;
    }
    match agent {
        Some(agent) => {
            let exports: Vec<String> = agent
                .key_vars()
                .iter()
                .map(|var| format!("export {var}=…"))
                .collect();
            writeln!(
                ctx.out,
                "\nNext: {}, then `tether doctor` checks the setup; describe your goals in \
                 plan.md, then `tether validate` and `tether plan`.",
                exports.join(" and ")
            )?;
        }
        None => writeln!(
            ctx.out,
            "\nNext: pick who does the work under [executor] and a judge under [judge] (or write \
             a short working file for your agent instead: `tether init --force --agent \
             claude|codex|pi|builtin|acp PROGRAM`); describe your goals in plan.md, then `tether \
             validate` and `tether plan`."
        )?,
    }
    Ok(Exit::Done)
}

/// `--agent`'s spelling of `agent`.
fn kind(agent: InitAgent) -> &'static str {
    match agent {
        InitAgent::Claude => "claude",
        InitAgent::Codex => "codex",
        InitAgent::Pi => "pi",
        InitAgent::Builtin => "builtin",
        InitAgent::Acp => "acp",
    }
}

//! The tether commands a sandboxed agent hands over through the bridge (see
//! `tether_runtime::bridge`), run in the process driving its run: parsed as the command line
//! they are, run as the agent in the run's workspace with the run's configuration and sandbox.
//! Only those that ask, sign off, read, or are refused anyway as human acts are run; `tether
//! mcp` is served as a session of its own.

use std::sync::Arc;

use clap::Parser as _;
use tether_runtime::Host;
use tether_runtime::bridge::{Call, Forward, Handler, HandlerError, Reply};

use crate::cli::{Cli, Command, PlanCommand};

/// This binary as the runtime's host: its commands run the bridge's calls.
pub fn host() -> Host {
    Host::new(Arc::new(Commands))
}

/// What a command line run inside the sandbox hands over besides itself.
pub fn forwarded(argv: &[String]) -> Forward {
    match Cli::try_parse_from(argv).ok().map(|cli| cli.command) {
        Some(Command::Mcp(_)) => Forward::Session,
        Some(Command::Gate(_)) => Forward::Stdin,
        _ => Forward::Plain,
    }
}

/// Runs handed-over command lines with this binary's commands.
struct Commands;

impl Handler for Commands {
    fn is_session(&self, argv: &[String]) -> bool {
        forwarded(argv) == Forward::Session
    }

    fn session(&self, call: &Call<'_>) -> Result<tether_mcp::TetherMcp, HandlerError> {
        let Ok(Cli {
            command: Command::Mcp(args),
            ..
        }) = Cli::try_parse_from(call.argv)
        else {
            return Err("not an MCP session".into());
        };
        let mut sink = std::io::sink();
        let ctx = context(call, &mut sink);
        Ok(crate::cmd::mcp::server(&ctx, &args)?)
    }

    fn command(&self, call: &Call<'_>) -> Reply {
        let cli = match Cli::try_parse_from(call.argv) {
            Ok(cli) => cli,
            Err(e) if e.use_stderr() => {
                return Reply {
                    code: 2,
                    stdout: String::new(),
                    stderr: e.to_string(),
                };
            }
            Err(e) => {
                return Reply {
                    code: 0,
                    stdout: e.to_string(),
                    stderr: String::new(),
                };
            }
        };
        if !allowed(&cli.command) {
            return Reply::refused(
                "error: this tether command is not available inside the sandbox: run it from \
                 your own shell\n",
            );
        }
        let mut out = Vec::new();
        let mut ctx = context(call, &mut out);
        let (code, stderr) = match crate::dispatch(&cli, &mut ctx) {
            Ok(exit) => (exit.code(), String::new()),
            Err(e) => crate::failed(&e),
        };
        Reply {
            code,
            stdout: String::from_utf8_lossy(&out).into_owned(),
            stderr,
        }
    }
}

/// The context a handed-over command runs in: as the agent of the run the bridge serves, with
/// the run's configuration and sandbox, its stdin what the agent's command read.
fn context<'a>(call: &'a Call<'_>, out: &'a mut dyn std::io::Write) -> crate::cmd::Ctx<'a> {
    crate::cmd::Ctx {
        ws: call.ws.clone(),
        env: call.env,
        out,
        bridged: true,
        input: call.stdin.map(str::to_owned),
        run_config: Some(call.config.clone()),
        run_sandbox: Some(call.sandbox.clone()),
        run: call.run.cloned(),
    }
}

/// The commands the agent may have run for it: those that ask, sign off, read, or are
/// refused anyway as human acts, and `tether gate` (Claude Code's hook). Not loops (plan mode
/// included), servers or the setup. (`tether mcp` is served as a session of its own.)
fn allowed(command: &Command) -> bool {
    matches!(
        command,
        Command::Goal(_)
            | Command::Gate(_)
            | Command::Ask(_)
            | Command::Answer(_)
            | Command::Questions(_)
            | Command::History(_)
            | Command::Status(_)
            | Command::Plan(crate::cli::PlanArgs {
                command: None | Some(PlanCommand::Approve(_) | PlanCommand::Archive(_)),
                ..
            })
            | Command::Validate(_)
            | Command::Say(_)
            | Command::Pause(_)
            | Command::Cancel(_)
            | Command::Resume(_)
    )
}

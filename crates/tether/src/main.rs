//! The `tether` binary: parses the command line, sets up logging on stderr, runs one command,
//! and turns its result into an exit code. stdout carries only results (text or `--json`).

mod bridged;
mod cli;
mod cmd;
mod exit;
mod failure;
mod sinks;

use std::io::{self, IsTerminal as _, Write as _};
use std::process::ExitCode;

use clap::Parser as _;
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::prelude::*;

use crate::cli::{Cli, Command};
use crate::exit::Exit;
use crate::failure::Failure;

fn main() -> ExitCode {
    // Inside the sandbox the store is out of reach: the process driving the run runs this
    // command for the agent.
    if let Some(socket) = std::env::var_os(tether_runtime::bridge::BRIDGE_VAR) {
        return ExitCode::from(forward(std::path::Path::new(&socket)));
    }
    let cli = Cli::parse();
    init_logging(cli.verbose);
    // An agent CLI's MCP server inside the sandbox (the CLI may not pass the variable on).
    if let Command::Mcp(args) = &cli.command
        && let Some(socket) = &args.bridge
    {
        return ExitCode::from(forward(socket));
    }
    let ws = match workspace(&cli) {
        Ok(ws) => ws,
        Err(e) => {
            let (code, message) = failed(&e);
            let _ = io::stderr().lock().write_all(message.as_bytes());
            return ExitCode::from(code);
        }
    };
    tether_runtime::process::take_keys(&ws);
    // Before anything is spawned: children cannot read tether's keys through /proc.
    tether_runtime::process::protect_self();
    // Not locked for the whole run: `tether mcp` writes stdout from its runtime.
    let mut out = io::stdout();
    match run(&cli, ws, &mut out) {
        Ok(exit) => exit.into(),
        Err(e) if is_broken_pipe(&e) => Exit::Done.into(),
        Err(e) => {
            let _ = out.flush();
            let (code, message) = failed(&e);
            let _ = io::stderr().lock().write_all(message.as_bytes());
            ExitCode::from(code)
        }
    }
}

/// Hands this command line to the process driving the run through the bridge at `socket`.
fn forward(socket: &std::path::Path) -> u8 {
    let argv: Vec<String> = std::env::args().collect();
    let what = bridged::forwarded(&argv);
    tether_runtime::bridge::forward(socket, argv, what)
}

/// The exit code of a command that failed, and what it prints on stderr: the error's chain,
/// each cause once, with control characters escaped (errors quote goal ids, plan lines and
/// tool output). A usage error (exit 2) is one a command marked ([`Failure`]), or one the
/// runtime says a person must fix.
fn failed(e: &anyhow::Error) -> (u8, String) {
    let usage = |c: &(dyn std::error::Error + 'static)| {
        c.is::<Failure>()
            || c.downcast_ref::<tether_runtime::Error>()
                .is_some_and(tether_runtime::Error::is_usage)
    };
    let code = if e.chain().any(usage) {
        Exit::Usage
    } else {
        Exit::Error
    };
    let message = format!("{e:#}");
    (
        code.code(),
        format!("error: {}\n", tether_human::visible::visible(&message)),
    )
}

/// The workspace the command works in: `-C`, else the nearest one upwards (`init`: here).
fn workspace(cli: &Cli) -> anyhow::Result<tether_config::Workspace> {
    let cwd = std::env::current_dir()?;
    Ok(match &cli.workspace {
        Some(dir) => tether_config::Workspace::at(cwd.join(dir)),
        None if matches!(cli.command, Command::Init(_)) => tether_config::Workspace::at(cwd),
        None => tether_config::Workspace::discover(&cwd),
    })
}

fn run(cli: &Cli, ws: tether_config::Workspace, out: &mut dyn io::Write) -> anyhow::Result<Exit> {
    tracing::debug!(root = %ws.root().display(), "workspace");
    let env = tether_config::ProcessEnv;
    let mut ctx = cmd::Ctx {
        ws,
        env: &env,
        out,
        bridged: false,
        input: None,
        run_config: None,
        run_sandbox: None,
        run: None,
    };
    dispatch(cli, &mut ctx)
}

/// Runs `cli`'s command in `ctx` (here, or for a sandboxed agent through the bridge).
fn dispatch(cli: &Cli, ctx: &mut cmd::Ctx<'_>) -> anyhow::Result<Exit> {
    let ctx = &mut *ctx;
    let exit = match &cli.command {
        Command::Init(args) => cmd::init::run(ctx, args),
        Command::Validate(args) => cmd::validate::run(ctx, args.json),
        Command::Plan(args) => cmd::plan::run(ctx, args),
        Command::Run(args) => cmd::run::run(ctx, args),
        Command::Ralph(args) => cmd::ralph::run(ctx, args),
        Command::Status(args) => cmd::control::status(ctx, args),
        Command::Pause(args) => cmd::control::pause(ctx, args),
        Command::Cancel(args) => cmd::control::cancel(ctx, args),
        Command::Say(args) => cmd::control::say(ctx, args),
        Command::Side(args) => cmd::side::run(ctx, args),
        Command::Watch => cmd::watch::run(ctx),
        Command::Resume(args) => cmd::resume::run(ctx, args),
        Command::Demo(args) => cmd::demo::run(ctx, args),
        Command::Ask(args) => cmd::human::ask(ctx, args),
        Command::Answer(args) => cmd::human::answer_cmd(ctx, args),
        Command::Questions(args) => cmd::human::questions(ctx, args.json),
        Command::History(args) => cmd::human::history(ctx, args),
        Command::Goal(args) => cmd::goal::run(ctx, args),
        Command::Doctor(args) => cmd::doctor::run(ctx, args),
        Command::Mcp(args) => cmd::mcp::run(ctx, args),
        Command::Serve(args) => cmd::serve::run(ctx, args),
        Command::Store(args) => cmd::store::run(ctx, args),
        Command::Worktree(args) => cmd::worktree::run(ctx, args),
        Command::Worker(args) => cmd::worker::run(ctx, args),
        Command::Schedule(command) => cmd::schedule::run(ctx, command),
        Command::Report(args) => cmd::control::report(ctx, args),
        Command::Judge(cmd) => cmd::judge::run(ctx, cmd),
        Command::Completions(args) => cmd::shell::completions(ctx, args),
        Command::Man => cmd::shell::man(ctx),
        Command::Gate(args) => cmd::gate::run(ctx, args),
    }?;
    ctx.out.flush()?;
    Ok(exit)
}

/// Logs go to stderr. `TETHER_LOG` takes a filter such as `debug` or `tether_core=debug,warn`;
/// otherwise `-v` raises the level from warnings to info and debug.
fn init_logging(verbose: u8) {
    let from_env = std::env::var("TETHER_LOG")
        .ok()
        .and_then(|s| s.parse::<Targets>().ok());
    let filter = from_env.unwrap_or_else(|| {
        let level = match verbose {
            0 => LevelFilter::WARN,
            1 => LevelFilter::INFO,
            _ => LevelFilter::DEBUG,
        };
        // The ACP library warns of every message it cannot read (some agents send fields the
        // schema forbids, such as Claude's `"used": null`); tether goes on without them.
        let acp = if verbose > 0 {
            level
        } else {
            LevelFilter::ERROR
        };
        Targets::new()
            .with_default(level)
            .with_target("agent_client_protocol", acp)
    });
    // Colour only for a person reading a terminal: a log file or a pipe gets plain text.
    let colour =
        io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(io::stderr)
                .with_ansi(colour),
        )
        .with(filter)
        .try_init();
}

/// A reader closed our stdout (`tether plan | head`): not an error worth reporting.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        let io_kind = c
            .downcast_ref::<io::Error>()
            .map(io::Error::kind)
            .or_else(|| c.downcast_ref::<serde_json::Error>()?.io_error_kind());
        io_kind == Some(io::ErrorKind::BrokenPipe)
    })
}

#[cfg(test)]
#[path = "error_chain_tests.rs"]
mod error_chain_tests;

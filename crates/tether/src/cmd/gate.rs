//! `tether gate`: `[human] ask_before` for an agent CLI that runs its own shell, as a
//! `PreToolUse` hook (see `tether_runtime::gate`). It reads the hook's JSON on stdin and
//! prints the hook's JSON decision on stdout.
//!
//! The gate runs inside the agent's process tree, so it only asks: answering stays a human act
//! (`tether answer` refuses to run there). It never fails open: any error is a `deny` naming it.

use std::io::Read as _;

use anyhow::{Context as _, Result, anyhow};
use tether_core::ask_before::Decision;
use tether_runtime::gate::hook_output;
use tether_store::RunId;
use tokio::signal::unix::SignalKind;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::GateArgs;
use crate::exit::Exit;

/// The most of the hook's input read.
const MAX_INPUT: u64 = 1024 * 1024;

/// `tether gate`.
pub fn run(ctx: &mut Ctx<'_>, args: &GateArgs) -> Result<Exit> {
    let decision = match decide(ctx, args) {
        Ok(decision) => decision,
        Err(e) => Decision::Refused(format!(
            "not run: tether's ask_before gate could not check this command ({e:#}); do not run \
             it another way"
        )),
    };
    writeln!(ctx.out, "{}", hook_output(&decision))?;
    Ok(Exit::Done)
}

fn decide(ctx: &Ctx<'_>, args: &GateArgs) -> Result<Decision> {
    let input = match &ctx.input {
        Some(handed_over) => handed_over.clone(),
        None => {
            let mut input = String::new();
            std::io::stdin()
                .take(MAX_INPUT)
                .read_to_string(&mut input)
                .context("reading the hook's input")?;
            input
        }
    };
    let Some(command) = tether_runtime::gate::bash_command(&input)? else {
        return Ok(Decision::Clear);
    };
    // Handed over by a run's agent: its run, whatever `--run` says.
    let run = match &args.run {
        _ if ctx.run.is_some() => ctx.run.clone(),
        Some(r) => Some(
            r.trim()
                .parse::<RunId>()
                .map_err(|_| anyhow!("--run `{r}` is not a run id"))?,
        ),
        None => None,
    };
    // Handed over by a run's agent: the run's configuration (its `[human] ask_before`).
    let config = super::load_config(ctx)?.config;
    let store = crate::cmd::store(ctx)?;
    let runtime = super::current_thread()?;
    runtime.block_on(async {
        let cancel = CancellationToken::new();
        // Run for a sandboxed agent, the gate lives in the driving process, whose signals are
        // its own.
        if !ctx.bridged {
            stop_on_signals(&cancel)?;
        }
        let decided =
            tether_runtime::gate::decide(&ctx.ws, config, (store, run), &command, cancel).await;
        Ok(decided?)
    })
}

/// Fires `cancel` on SIGTERM, SIGINT or SIGHUP (the agent's turn was stopped), so the question
/// is withdrawn rather than left pending with nobody to run the command.
fn stop_on_signals(cancel: &CancellationToken) -> std::io::Result<()> {
    for kind in [
        SignalKind::terminate(),
        SignalKind::interrupt(),
        SignalKind::hangup(),
    ] {
        let mut signal = tokio::signal::unix::signal(kind)?;
        let c = cancel.clone();
        tokio::spawn(async move {
            if signal.recv().await.is_some() {
                c.cancel();
            }
        });
    }
    Ok(())
}

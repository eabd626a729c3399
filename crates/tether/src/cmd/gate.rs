//! `tether gate`: `[human] ask_before` for an agent CLI that runs its own shell, as a
//! `PreToolUse` hook (Claude Code runs it before each Bash command of a turn tether drives).
//!
//! It reads the hook's JSON on stdin (`tool_name`, `tool_input.command`), checks the command
//! with the same gate as the built-in agent's `bash` (tether.toml's prefixes and the active
//! goals' lists), and when it is held asks a human through the desk — every channel, filed under
//! the run — waiting as long as it takes. It prints the hook's JSON decision on stdout: `allow`
//! after a clear yes (so the command runs even where the CLI would otherwise refuse it
//! headless), `deny` with the reason for the model otherwise, and no decision (`{}`) for a
//! command no prefix holds, leaving the CLI's own permission rules in charge.
//!
//! The gate runs inside the agent's process tree, so it only asks: answering stays a human act
//! (`tether answer` refuses to run there). It never fails open: any error is a `deny` naming it.

use std::io::Read as _;

use anyhow::{Context as _, Result, anyhow};
use serde_json::{Value, json};
use tether_core::ask_before::{AskBeforeGate, Decision};
use tether_core::planning::terms::Approvals;
use tether_human::{Console, Desk};
use tether_store::{Journal, RunId};
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

/// The hook's JSON answer for `decision`.
pub fn hook_output(decision: &Decision) -> Value {
    let (verdict, reason) = match decision {
        Decision::Clear => return json!({}),
        Decision::Allowed => (
            "allow",
            "a human said yes to this command through tether (ask_before)",
        ),
        Decision::Refused(reason) => ("deny", reason.as_str()),
    };
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": verdict,
        "permissionDecisionReason": reason,
    }})
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
    let Some(command) = bash_command(&input)? else {
        return Ok(Decision::Clear);
    };
    let run = match &args.run {
        Some(r) => Some(
            r.trim()
                .parse::<RunId>()
                .map_err(|_| anyhow!("--run `{r}` is not a run id"))?,
        ),
        None => None,
    };
    // Handed over by a run's agent: the run's configuration (its `[human] ask_before`).
    let config = super::load_config(ctx)?.config;
    let journal = Journal::new(tether_runtime::store::open(&ctx.ws, ctx.env)?, Vec::new())?;
    // Never the terminal: stdin is the hook's, and the loop's own terminal shows the question.
    let desk = Desk::from_config(&config, &ctx.ws, journal.clone(), Console::Absent);
    let cell = std::sync::Arc::new(std::sync::Mutex::new(run.clone()));
    let plan = tether_core::planning::PlanRef::new(&ctx.ws, &config);
    let gate = AskBeforeGate::new(desk, config.human.ask_before, plan.path, cell)
        .with_approvals(Approvals::new(journal.clone(), plan.key));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let cancel = CancellationToken::new();
        // Run for a sandboxed agent, the gate lives in the driving process, whose signals are
        // its own.
        if !ctx.bridged {
            stop_on_signals(&cancel)?;
        }
        // A `tether cancel` of the run withdraws the question at once.
        let watcher = run.map(|run| {
            tokio::spawn(tether_core::looping::watch_for_cancel(
                journal,
                run,
                cancel.clone(),
            ))
        });
        let decision = gate.judge(&command, cancel).await;
        if let Some(w) = watcher {
            w.abort();
        }
        Ok(decision)
    })
}

/// The command of a Bash call in the hook's input; `None` for any other tool.
fn bash_command(input: &str) -> Result<Option<String>> {
    let hook: Value = serde_json::from_str(input).context("the hook's input is not JSON")?;
    if hook["tool_name"].as_str() != Some("Bash") {
        return Ok(None);
    }
    hook["tool_input"]["command"]
        .as_str()
        .map(|c| Some(c.to_owned()))
        .ok_or_else(|| anyhow!("the Bash call has no tool_input.command"))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_bash_calls_are_checked() {
        let bash = r#"{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"git push"}}"#;
        assert_eq!(bash_command(bash).unwrap().as_deref(), Some("git push"));
        let edit = r#"{"tool_name":"Edit","tool_input":{"file_path":"/x"}}"#;
        assert_eq!(bash_command(edit).unwrap(), None);
        assert!(bash_command(r#"{"tool_name":"Bash","tool_input":{}}"#).is_err());
        assert!(bash_command("not json").is_err());
    }

    #[test]
    fn the_decisions_are_the_hooks_json() {
        insta::assert_snapshot!(hook_output(&Decision::Clear), @"{}");
        insta::assert_snapshot!(
            hook_output(&Decision::Allowed),
            @r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","permissionDecisionReason":"a human said yes to this command through tether (ask_before)"}}"#
        );
        insta::assert_snapshot!(
            hook_output(&Decision::Refused("not run: no".into())),
            @r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not run: no"}}"#
        );
    }
}

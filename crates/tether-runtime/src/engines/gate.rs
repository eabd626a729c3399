//! `tether gate`'s decision: `[human] ask_before` for an agent CLI that runs its own shell, as
//! a `PreToolUse` hook (Claude Code runs it before each Bash command of a turn tether drives).
//!
//! It reads the hook's JSON (`tool_name`, `tool_input.command`), checks the command
//! with the same gate as the built-in agent's `bash` (tether.toml's prefixes and the active
//! goals' lists), and when it is held asks a human through the desk — every channel, filed under
//! the run — waiting as long as it takes. It prints the hook's JSON decision on stdout: `allow`
//! after a clear yes (so the command runs even where the CLI would otherwise refuse it
//! headless), `deny` with the reason for the model otherwise, and no decision (`{}`) for a
//! command no prefix holds, leaving the CLI's own permission rules in charge.
//!
//! The gate runs inside the agent's process tree, so it only asks: answering stays a human act
//! (`tether answer` refuses to run there). It never fails open: any error is a `deny` naming it.

use serde_json::{Value, json};
use tether_config::{Config, Workspace};
use tether_core::ask_before::{AskBeforeGate, Decision};
use tether_core::planning::terms::Approvals;
use tether_human::{Console, Desk};
use tether_store::{Journal, RunId, Store};
use tokio_util::sync::CancellationToken;

use crate::error::{Error, Result};

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

/// The decision on the Bash `command` (see [`bash_command`]) in `ws`, for the run `run` (if
/// any) recording in `store`:
/// `[human] ask_before` in `config` (the run's, for a command handed over) and the active goals'
/// lists, a held command asked at the desk's channels (never the terminal: stdin is the hook's,
/// and the loop's own terminal shows the question), withdrawn when `cancel` fires or the run is
/// cancelled.
pub async fn decide(
    ws: &Workspace,
    config: Config,
    (store, run): (Store, Option<RunId>),
    command: &str,
    cancel: CancellationToken,
) -> Result<Decision> {
    let journal = Journal::new(store, Vec::new())?;
    let reach = crate::compose::reach::of(&config, ws, &journal);
    let desk = Desk::from_config(&config, ws, journal.clone(), (Console::Absent, reach));
    let cell = std::sync::Arc::new(std::sync::Mutex::new(run.clone()));
    let plan = tether_core::planning::PlanRef::new(ws, &config);
    let gate = AskBeforeGate::new(desk, config.human.ask_before, plan.path, cell)
        .with_approvals(Approvals::new(journal.clone(), plan.key));
    // A `tether cancel` of the run withdraws the question at once.
    let watcher = run.map(|run| {
        tokio::spawn(tether_core::looping::watch_for_cancel(
            journal,
            run,
            cancel.clone(),
        ))
    });
    let decision = gate.judge(command, cancel).await;
    if let Some(w) = watcher {
        w.abort();
    }
    Ok(decision)
}

/// The command of a Bash call in the hook's input; `None` for any other tool (the gate has
/// nothing to say of it).
pub fn bash_command(input: &str) -> Result<Option<String>> {
    let hook: Value = serde_json::from_str(input).map_err(Error::HookNotJson)?;
    if hook["tool_name"].as_str() != Some("Bash") {
        return Ok(None);
    }
    hook["tool_input"]["command"]
        .as_str()
        .map(|c| Some(c.to_owned()))
        .ok_or(Error::HookWithoutCommand)
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

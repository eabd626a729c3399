//! `bash`: run a shell command in the workspace root, through [`run_shell`].
//!
//! The output the model reads ends with one status line — the exit code, or that the command
//! timed out or was cancelled — so it never has to guess why output stopped.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use nix::sys::signal::Signal;
use serde::Deserialize;
use serde_json::{Value, json};

use super::str_arg;
use crate::error::FatalToolError;
use crate::gate::CommandGate;
use crate::options::ToolOptions;
use crate::output::ToolOutput;
use crate::shell::{ShellCommand, ShellEnd, ShellRun, run_shell};
use crate::spec::ToolSpec;
use crate::text::first_line;
use crate::tool::{ToolContext, TypedTool};
use crate::workspace::Workspace;

/// The `bash` tool.
#[derive(Debug, Clone)]
pub(crate) struct BashTool {
    ws: Workspace,
    default_timeout: Duration,
    max_timeout: Duration,
    kill_grace: Duration,
    output_cap: usize,
    env_remove: Vec<String>,
    sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    network: Option<crate::options::NetworkSwitch>,
    gate: Option<Arc<dyn CommandGate>>,
    spec: ToolSpec,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Args {
    command: String,
    timeout_secs: Option<u64>,
}

impl BashTool {
    /// `bash` in `ws`'s root, with the limits of `options`.
    pub(crate) fn new(ws: Workspace, options: &ToolOptions) -> Self {
        let max_timeout = options.bash_max_timeout.max(Duration::from_secs(1));
        let default_timeout = options
            .bash_default_timeout
            .clamp(Duration::from_secs(1), max_timeout);
        let description = format!(
            "Run a shell command with `sh -c` in the workspace root and return its combined \
             stdout and stderr, followed by its exit code. There is no input (stdin is empty), so \
             interactive commands fail instead of waiting. The command is stopped after \
             `timeout_secs` (default {}, at most {}), together with every process it started; \
             background processes are also stopped when the command finishes. Only the last {} \
             bytes of output are kept. Prefer `read`, `grep`, `ls`, `write` and `edit` for files.",
            default_timeout.as_secs(),
            max_timeout.as_secs(),
            options.bash_output_cap
        );
        let properties = json!({
            "command": {"type": "string", "description": "The shell command to run."},
            "timeout_secs": {"type": "integer", "minimum": 1, "description": "Seconds before the command is stopped."},
        });
        Self {
            ws,
            default_timeout,
            max_timeout,
            kill_grace: options.bash_kill_grace,
            output_cap: options.bash_output_cap.max(1),
            env_remove: options.bash_env_remove.clone(),
            sandbox: options.bash_sandbox.clone(),
            network: options.bash_network.clone(),
            gate: options.bash_gate.clone(),
            spec: ToolSpec::object("bash", description, properties, &["command"]),
        }
    }

    async fn shell(&self, args: Args, ctx: &ToolContext) -> ToolOutput {
        if args.command.trim().is_empty() {
            return ToolOutput::error("`command` is empty; give a shell command to run");
        }
        if let Some(gate) = &self.gate
            && let Err(reason) = gate.allow(&args.command, ctx).await
        {
            return ToolOutput::error(reason).with_note("refused by ask_before");
        }
        let mut notes = String::new();
        let timeout = match args.timeout_secs {
            None => self.default_timeout,
            Some(secs) if Duration::from_secs(secs) > self.max_timeout => {
                let max = self.max_timeout.as_secs();
                let _ = writeln!(
                    notes,
                    "[timeout_secs {secs} is above the limit of {max}; used {max}]"
                );
                self.max_timeout
            }
            Some(secs) => Duration::from_secs(secs.max(1)),
        };
        let command = ShellCommand {
            command: args.command,
            cwd: self.ws.root().to_path_buf(),
            timeout,
            kill_grace: self.kill_grace,
            output_cap: self.output_cap,
            env_remove: self.env_remove.clone(),
            sandbox: match &self.network {
                Some(switch) if (switch.wanted)() => Some(switch.open.clone()),
                _ => self.sandbox.clone(),
            },
        };
        match run_shell(&command, ctx.cancel_token()).await {
            Ok(run) => report(&run, timeout, notes),
            Err(err) => ToolOutput::error(format!("could not start `sh`: {err}")),
        }
    }
}

fn report(run: &ShellRun, timeout: Duration, mut text: String) -> ToolOutput {
    text.push_str(if run.output.is_empty() {
        "(no output)"
    } else {
        &run.output
    });
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if run.output_left_open {
        text.push_str("[a process that left the command's process group kept the output open; stopped reading]\n");
    }
    let secs = format!("{:.1} s", run.elapsed.as_secs_f64());
    let (status, note, is_error) = match run.end {
        ShellEnd::Exited(code) => (
            format!("[exit code {code}]"),
            format!("exit {code}, {secs}"),
            code != 0,
        ),
        ShellEnd::Signalled(signal) => {
            let name = Signal::try_from(signal)
                .map(Signal::as_str)
                .unwrap_or("unknown");
            (
                format!("[killed by signal {signal} ({name})]"),
                format!("signal {signal}, {secs}"),
                true,
            )
        }
        ShellEnd::TimedOut => (
            format!(
                "[timed out after {} s; the command and every process it started were killed]",
                timeout.as_secs()
            ),
            format!("timed out after {} s", timeout.as_secs()),
            true,
        ),
        ShellEnd::Cancelled => (
            "[cancelled; the command and every process it started were killed]".to_owned(),
            format!("cancelled after {secs}"),
            true,
        ),
    };
    text.push_str(&status);
    ToolOutput {
        content: text,
        is_error,
        note: Some(note),
    }
}

impl TypedTool for BashTool {
    type Args = Args;

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn run(&self, args: Args, ctx: &ToolContext) -> Result<ToolOutput, FatalToolError> {
        Ok(self.shell(args, ctx).await)
    }

    fn describe_call(&self, args: &Value) -> String {
        format!(
            "bash: {}",
            first_line(str_arg(args, "command").unwrap_or("?"), 60)
        )
    }
}

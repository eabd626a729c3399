//! The `pi` executor: the pi coding agent (`pi --mode json -p`) as the agent, with tether's
//! tools over MCP.
//!
//! Each turn is a fresh `pi --mode json -p --no-session` process with the prompt on stdin,
//! spawned like every child of tether (own process group, timeout, killed with everything it
//! started when the turn is cancelled). pi runs with a per-run agent directory ([`agent_dir`])
//! whose `mcp.json` names tether's own binary (`tether mcp --run <id> -C <workspace>`), so the
//! agent's `ask_human`, `complete_goal`, `cancel_goal` and `plan_status` reach this run while
//! the user's own pi configuration is used as it is and left alone.
//!
//! `[human] ask_before` is enforced through a pi extension tether writes for the run ([`gate`]):
//! before each `bash` call it runs `tether gate`, which asks a human when the command is held.
//!
//! pi does not report an MCP server that failed to start in its JSON stream, so before the
//! first turn tether runs `pi mcp list` with the same agent directory and stops the run with
//! the fix when tether's server does not connect. The output is parsed as it arrives
//! ([`stream`]) and kept as the transcript. Which provider pi will use, and the variables its key
//! comes from, is read from its configuration by [`provider`], for the sandbox to pass on.

mod agent_dir;
mod gate;
pub(crate) mod provider;
mod stream;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use tether_tools::{ProgramRun, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use crate::cli::{
    AgentCli, Cli, CliError, CliSettings, ConfigDir, Gate, KeyNaming, RunId, SERVER, TOOL_TIMEOUT,
    Version,
};
use crate::executor::{Access, ExecError, Turn, TurnOutcome, TurnRequest, Turns};
use stream::{Seen, StreamParser};

/// pi's tools a read-only turn may use, and tether's own (MCP tools are declared only when
/// `--tools` names them).
pub const READ_ONLY_TOOLS: &str = "read,grep,find,ls,mcp__tether__*";

/// How long `pi mcp list` may take (it starts tether's server and lists its tools).
const MCP_LIST_TIMEOUT: Duration = Duration::from_secs(60);

/// How much of `pi mcp list`'s report goes into the error.
const MCP_STATUS_CHARS: usize = 600;

/// pi as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "pi",
    title: "pi",
    program: "pi",
    install: "npm install -g @earendil-works/pi-coding-agent (with Node 22.19 or newer)",
    // Built-in MCP support with `"exposure": "direct"`.
    minimum: Version::new(0, 99, 0),
    env_prefixes: &["PI_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "NODE_"],
    // Each run gets an agent directory of its own, which names itself to pi.
    config_dir: ConfigDir {
        var: "PI_CODING_AGENT_DIR",
        default: ".pi/agent",
        named_by_tether: false,
    },
    key: Some(KeyNaming {
        read: |dir, args| provider::provider_key(Some(dir), args),
        setting: |_| "the provider's apiKey in pi's models.json (\"apiKey\": \"$NAME\")".to_owned(),
    }),
    gate: Gate::Extension,
    // No ACP adapter of pi is known by its name.
    acp_adapter: None,
    executor: |settings, run| std::sync::Arc::new(PiExecutor::new(settings, run)),
};

/// Runs pi per turn.
pub struct PiExecutor {
    cli: Cli,
    /// The user's own agent directory, linked into each run's.
    user_dir: Option<PathBuf>,
    /// Set once `pi mcp list` saw tether's server connect.
    mcp_connected: OnceLock<()>,
}

impl PiExecutor {
    /// An executor running `settings`; `run` names the run once it exists.
    /// `PI_CODING_AGENT_DIR` in `settings.env` names the user's agent directory (default: the
    /// one in tether's environment, else `~/.pi/agent`); pi itself runs with the run's own.
    pub fn new(mut settings: CliSettings, run: RunId) -> Self {
        let configured = settings
            .env
            .iter()
            .rev()
            .find(|(key, _)| key == agent_dir::VAR)
            .map(|(_, value)| value.clone());
        settings.env.retain(|(key, _)| key != agent_dir::VAR);
        PiExecutor {
            cli: Cli::new(&CLI, settings, run),
            user_dir: agent_dir::user_dir(configured),
            mcp_connected: OnceLock::new(),
        }
    }

    /// The variables every pi process of the run gets: its agent directory, and no update
    /// check on every turn.
    fn env(agent_dir: &Path) -> Vec<(String, String)> {
        vec![
            (agent_dir::VAR.to_owned(), agent_dir.display().to_string()),
            ("PI_SKIP_VERSION_CHECK".to_owned(), "1".to_owned()),
        ]
    }

    /// The arguments of one turn. pi has no sandbox and no approval prompts in `-p` mode: a
    /// working turn has its default tools (read, bash, edit, write, or the user's
    /// `defaultTools`); a read-only turn only pi's reading tools and tether's.
    fn turn_argv(&self, access: Access, gate: &Path) -> Vec<String> {
        let gate = gate.display().to_string();
        let mut args = vec!["--mode", "json", "-p", "--no-session", "-e", &gate];
        if access == Access::ReadOnly {
            args.extend(["--tools", READ_ONLY_TOOLS]);
        }
        let mut argv = self.cli.argv(args);
        argv.extend(self.cli.settings().args.iter().cloned());
        argv
    }

    /// Writes the run's agent directory next to the turn's transcript.
    fn prepare_agent_dir(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        let run_dir = self.cli.turn_dir(&request.transcript);
        let settings = self.cli.settings();
        let server = agent_dir::server_entry(
            &settings.tether.display().to_string(),
            &self.cli.mcp_args(),
            TOOL_TIMEOUT.as_secs(),
        );
        let dir = agent_dir::prepare(run_dir, self.user_dir.as_deref(), SERVER, &server).map_err(
            |source| {
                ExecError::Model(Box::new(CliError::Config {
                    path: run_dir.join(agent_dir::DIR_NAME),
                    source,
                }))
            },
        )?;
        // The record of what pi was given, next to the transcript (the agent directory may be
        // in the sandbox's scratch directory).
        let record = request
            .transcript
            .parent()
            .unwrap_or(Path::new("."))
            .join("pi-mcp.json");
        std::fs::copy(dir.join("mcp.json"), &record).map_err(|source| {
            ExecError::Model(Box::new(CliError::Config {
                path: record.clone(),
                source,
            }))
        })?;
        Ok(dir)
    }

    /// Writes the run's `ask_before` extension next to the turn's transcript: `tether gate
    /// [--run <id>] -C <workspace>` before each `bash` call.
    fn write_gate(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        let run_dir = self.cli.turn_dir(&request.transcript);
        let settings = self.cli.settings();
        let mut argv = vec![settings.tether.display().to_string(), "gate".to_owned()];
        if let Some(run) = self.cli.run_id() {
            argv.extend(["--run".to_owned(), run]);
        }
        argv.extend(["-C".to_owned(), settings.workspace.display().to_string()]);
        gate::write(run_dir, &argv).map_err(|source| {
            ExecError::Model(Box::new(CliError::Config {
                path: run_dir.to_owned(),
                source,
            }))
        })
    }

    /// `pi mcp list` with the run's agent directory, once: tether's server must connect.
    async fn check_mcp(
        &self,
        agent_dir: &Path,
        cancel: &CancellationToken,
    ) -> Result<(), ExecError> {
        if self.mcp_connected.get().is_some() {
            return Ok(());
        }
        let command = self.cli.settings().command(
            self.cli.argv(["mcp", "list"]),
            None,
            MCP_LIST_TIMEOUT,
            Self::env(agent_dir),
        );
        let run = run_program(&command, cancel).await.map_err(|e| {
            ExecError::Setup(Box::new(
                self.cli.not_runnable(format!("could not start: {e}")),
            ))
        })?;
        let report = format!("{}\n{}", run.stdout, run.stderr);
        match run.end {
            ShellEnd::Cancelled => Err(ExecError::Cancelled),
            // A failing server of a trusted project's own `.pi/mcp.json` fails the listing too;
            // only tether's matters here.
            ShellEnd::Exited(code) if code == 0 || connected(&report) => {
                let _ = self.mcp_connected.set(());
                Ok(())
            }
            _ => Err(ExecError::Setup(Box::new(
                self.cli.mcp_not_connected(mcp_status(&report)),
            ))),
        }
    }

    /// What the turn came to, once it ran to its end.
    fn outcome(&self, run: ProgramRun, seen: Seen) -> Result<TurnOutcome, ExecError> {
        // pi's own words first: they are the limit's message when it is one.
        let mut said = String::new();
        let detail = match seen.last {
            Some(last) if !last.failed() && run.end == ShellEnd::Exited(0) => {
                return Ok(TurnOutcome {
                    final_message: last.text,
                    tool_calls: seen.tool_calls,
                    input_tokens: seen.input_tokens,
                    cached_input_tokens: seen.cached_input_tokens,
                    output_tokens: seen.output_tokens,
                    cost_usd: seen.cost_usd,
                });
            }
            Some(last) if last.failed() => {
                let error = last.error.unwrap_or_else(|| "no error message".to_owned());
                said.clone_from(&error);
                match last.stop_reason.as_str() {
                    "aborted" => format!("the turn was aborted: {error}"),
                    _ => format!("the model call failed: {error}"),
                }
            }
            Some(_) => format!("stderr: {}", run.stderr.trim()),
            None => format!("no assistant message; stderr: {}", run.stderr.trim()),
        };
        Err(self.cli.failure(&run, &said, detail))
    }
}

/// Whether `pi mcp list` reported tether's server connected (`tether: connected, 4 tools …`).
fn connected(report: &str) -> bool {
    let head = format!("{SERVER}: connected");
    report.lines().any(|line| line.starts_with(&head))
}

/// What `pi mcp list` said about tether's server: its block (`tether: failed …` and the
/// indented lines under it), or the whole report when it has none, on one line.
fn mcp_status(report: &str) -> String {
    let prefix = format!("{SERVER}:");
    let mut lines = report.lines().skip_while(|line| !line.starts_with(&prefix));
    let block: Vec<&str> = match lines.next() {
        Some(head) => std::iter::once(head)
            .chain(lines.take_while(|line| line.starts_with(' ') || line.is_empty()))
            .collect(),
        None => report.lines().collect(),
    };
    let words: Vec<&str> = block
        .iter()
        .map(|line| line.trim())
        .filter(|line| !line.is_empty())
        .collect();
    let text = format!("`pi mcp list`: {}", words.join("; "));
    text.chars().take(MCP_STATUS_CHARS).collect()
}

impl Turns for PiExecutor {
    fn label(&self) -> String {
        self.cli.label()
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        self.cli.check_version(&turn.cancel).await?;
        let agent_dir = self.prepare_agent_dir(&turn.request)?;
        let gate = self.write_gate(&turn.request)?;
        self.check_mcp(&agent_dir, &turn.cancel).await?;
        let command = self.cli.turn_command(
            turn.request.access,
            self.turn_argv(turn.request.access, &gate),
            Some(turn.request.prompt.clone().into_bytes()),
            Self::env(&agent_dir),
        );
        let (run, parser) = self
            .cli
            .run_streamed(
                &command,
                &turn.request.transcript,
                StreamParser::new(turn.observer),
                &turn.cancel,
            )
            .await?;
        let seen = parser.seen;
        self.cli.check_end(run.end, turn.cancel.is_cancelled())?;
        self.outcome(run, seen)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mcp_report_names_tethers_server_and_why() {
        let report = "other: connected, 2 tools (direct, global)\n  /bin/other\n\
                      tether: failed (direct, global)\n  /bin/tether mcp --bogus\n  write EPIPE\n  \
                      error: unexpected argument '--bogus' found\n  \n  Usage: tether mcp\n\
                      last: connected\n";
        assert_eq!(
            mcp_status(report),
            "`pi mcp list`: tether: failed (direct, global); /bin/tether mcp --bogus; write \
             EPIPE; error: unexpected argument '--bogus' found; Usage: tether mcp"
        );
        assert_eq!(
            mcp_status("Invalid mcp.json\n"),
            "`pi mcp list`: Invalid mcp.json"
        );
        assert!(!connected(report));
        assert!(connected(
            "mine: failed\ntether: connected, 4 tools (direct, global)\n"
        ));
    }
}

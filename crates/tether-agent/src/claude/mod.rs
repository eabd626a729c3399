//! The `claude` executor: Claude Code (`claude -p`) as the agent, with tether's tools over MCP.
//!
//! Each turn is a fresh `claude -p --verbose --output-format stream-json` process with the prompt
//! on stdin — with `--resume <session>` when it continues the session of the last turn
//! ([`crate::cli::resume`]) —, spawned like every child of tether (own process group, timeout, killed when the
//! turn is cancelled). Before it starts, tether writes an MCP configuration next to the turn's
//! transcript naming its own binary (`tether mcp --run <id> -C <workspace>`), so the agent's
//! `ask_human`, `complete_goal`, `cancel_goal` and `plan_status` reach this run. The server is
//! marked `alwaysLoad`: Claude Code's tool search stays on — the tools the agent rarely needs
//! are announced by name and loaded when asked for — while tether's tools are declared to the
//! model from the first request. The output is
//! parsed as it arrives ([`stream`]) and kept as the transcript. A working turn also gets, as
//! inline settings (`--settings`, out of reach of the agent's file edits), a `PreToolUse` hook on
//! Bash running `tether gate --run <id> -C <workspace>` ([`gate_settings`]): `[human]
//! ask_before` holds a matching command until a human answers.

mod stream;

use std::path::{Path, PathBuf};

use tether_tools::{ProgramRun, ShellEnd};

use crate::cli::resume::{Attempt, Resuming, SessionTap};
use crate::cli::{
    AgentCli, Cli, CliError, CliSettings, ConfigDir, ConfigFile, Gate, Resume, RunId, SERVER,
    TOOL_TIMEOUT, Version,
};
use crate::executor::{Access, ExecError, Turn, TurnOutcome, TurnRequest, Turns};
use crate::session::Kept;
use stream::{Seen, StreamParser};

/// Claude Code as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "claude",
    title: "Claude Code",
    about: "Claude Code, with tether's tools over MCP",
    program: "claude",
    install: "npm install -g @anthropic-ai/claude-code (with Node 22 or newer)",
    // stream-json with `system/init` MCP statuses, --strict-mcp-config, MCP_TOOL_TIMEOUT.
    minimum: Version::new(2, 0, 0),
    env_prefixes: &["ANTHROPIC_", "CLAUDE_", "NODE_"],
    config_dir: ConfigDir {
        var: "CLAUDE_CONFIG_DIR",
        default: ".claude",
        within: None,
        files: &[
            // Its login (OAuth tokens it refreshes), on Linux.
            ConfigFile::credential(".credentials.json"),
            // Its state (onboarding, projects, an API key from a Console login, user-scoped
            // MCP servers): `~/.claude.json` when no variable names the directory.
            ConfigFile {
                unnamed: Some(".claude.json"),
                ..ConfigFile::setting(".claude.json")
            },
            ConfigFile::setting("settings.json"),
            ConfigFile::setting("CLAUDE.md"),
            ConfigFile::shared("agents"),
            ConfigFile::shared("commands"),
            ConfigFile::shared("skills"),
            ConfigFile::shared("output-styles"),
        ],
    },
    // Its configuration names no variable of its own: its `ANTHROPIC_*` variables pass by
    // prefix.
    key: None,
    gate: Gate::Hook,
    // `--resume <id>`: the session named in stream-json's `system`/`init` line, which a session
    // that could not be resumed never prints.
    resume: Resume {
        session: |line| match (line["type"].as_str(), line["subtype"].as_str()) {
            (Some("system"), Some("init")) => line["session_id"].as_str(),
            _ => None,
        },
        args: |id| vec!["--resume".to_owned(), id.to_owned()],
    },
    acp_adapter: Some("claude"),
    home_reads: &[],
    pin: None,
    executor: |settings, run, _desk| std::sync::Arc::new(ClaudeExecutor::new(settings, run)),
};

/// tether's tools, as Claude Code names them.
pub const TOOLS: [&str; 4] = [
    "mcp__tether__ask_human",
    "mcp__tether__complete_goal",
    "mcp__tether__cancel_goal",
    "mcp__tether__plan_status",
];

/// Plan mode's tools (served by `tether mcp --drafting`), allowed in a read-only turn: the plan
/// file is the one thing a drafting agent may write.
const PLAN_TOOLS: [&str; 2] = ["mcp__tether__write_plan", "mcp__tether__edit_plan"];

/// Claude Code's tools that change the workspace or run commands, refused in a read-only turn.
const EDITING: [&str; 5] = ["Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"];

/// Claude Code's tools that serve a person at its prompt or a host around it, refused in every
/// turn (and so never declared to the model): its own question tool (nobody is at the prompt of
/// `claude -p`; `ask_human` asks a person), the pacing of its interactive `/loop`, and the
/// findings a host's code review renders.
pub const UNATTENDED: [&str; 3] = ["AskUserQuestion", "ScheduleWakeup", "ReportFindings"];

/// Runs Claude Code per turn.
pub struct ClaudeExecutor {
    cli: Cli,
    /// The session the next turn may resume.
    kept: Kept<String>,
}

impl ClaudeExecutor {
    /// An executor running `settings`; `run` names the run once it exists.
    pub fn new(settings: CliSettings, run: RunId) -> Self {
        ClaudeExecutor {
            cli: Cli::new(&CLI, settings, run),
            kept: Kept::default(),
        }
    }

    /// The variables every turn runs with: a tool timeout long enough for a human.
    fn env() -> Vec<(String, String)> {
        vec![(
            "MCP_TOOL_TIMEOUT".to_owned(),
            TOOL_TIMEOUT.as_millis().to_string(),
        )]
    }

    /// The arguments of one turn, with the MCP configuration at `mcp_config`. A read-only turn
    /// runs in Claude Code's default permission mode, where nothing that changes the workspace
    /// is allowed without a person there to approve it, and its editing tools are refused
    /// outright; a working turn may edit files (`acceptEdits`).
    fn turn_argv(&self, mcp_config: &Path, access: Access) -> Vec<String> {
        let settings = gate_settings(&self.cli);
        let config = mcp_config.display().to_string();
        let (mode, disallowed, tools) = match access {
            Access::Work => ("acceptEdits", UNATTENDED.join(","), TOOLS.join(",")),
            Access::ReadOnly => (
                "default",
                format!("{},{}", UNATTENDED.join(","), EDITING.join(",")),
                format!("{},{}", TOOLS.join(","), PLAN_TOOLS.join(",")),
            ),
        };
        let mut argv = self.cli.argv([
            "-p",
            "--verbose",
            "--output-format",
            "stream-json",
            "--strict-mcp-config",
            "--permission-mode",
            mode,
            "--disallowedTools",
            &disallowed,
            "--allowedTools",
            &tools,
            "--mcp-config",
            &config,
        ]);
        if access == Access::Work {
            argv.extend(["--settings".to_owned(), settings]);
        }
        argv.extend(self.cli.settings().args.iter().cloned());
        argv
    }

    /// Writes the MCP configuration of a turn where the CLI reads it (the sandbox's scratch
    /// directory, or next to the transcript), and a copy next to the transcript as the record.
    /// tether's server is `alwaysLoad`: its tools are never deferred behind tool search.
    fn write_mcp_config(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        let config = serde_json::json!({"mcpServers": {SERVER: {
            "command": self.cli.settings().tether.display().to_string(),
            "args": self.cli.mcp_args(),
            "alwaysLoad": true,
        }}});
        let record = request.transcript.parent().unwrap_or(Path::new("."));
        let mut path = PathBuf::new();
        for dir in [record, self.cli.turn_dir(&request.transcript)] {
            path = dir.join("claude-mcp.json");
            std::fs::create_dir_all(dir)
                .and_then(|()| std::fs::write(&path, config.to_string()))
                .map_err(|source| {
                    ExecError::Model(Box::new(CliError::Config {
                        path: path.clone(),
                        source,
                    }))
                })?;
        }
        Ok(path)
    }

    /// What the turn came to, once it ran to its end.
    fn outcome(&self, run: ProgramRun, seen: Seen) -> Result<TurnOutcome, ExecError> {
        let (said, detail) = match seen.finish {
            Some(f) if !f.is_error && run.end == ShellEnd::Exited(0) => {
                return Ok(TurnOutcome {
                    final_message: f.message,
                    tool_calls: seen.tool_calls,
                    input_tokens: f.input_tokens,
                    cached_input_tokens: f.cached_input_tokens,
                    cache_write_input_tokens: f.cache_write_input_tokens,
                    output_tokens: f.output_tokens,
                    cost_usd: f.cost_usd,
                });
            }
            Some(f) => (f.message.clone(), format!("{}: {}", f.subtype, f.message)),
            None => (
                String::new(),
                format!("no result line; stderr: {}", run.stderr.trim()),
            ),
        };
        // A 429 comes back as `API Error: Request rejected (429) · Rate limit reached`.
        Err(self.cli.failure(&run, &said, detail))
    }
}

impl Turns for ClaudeExecutor {
    fn label(&self) -> String {
        self.cli.label()
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let outcome = self.run_turn(turn).await;
        self.cli.turn_ended();
        outcome
    }
}

impl ClaudeExecutor {
    async fn run_turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        self.cli.check_version(&turn.cancel).await?;
        let mcp_config = self.write_mcp_config(&turn.request)?;
        self.cli
            .continuing(&self.kept, &turn, |resuming| {
                self.attempt(&turn, &mcp_config, resuming)
            })
            .await
    }

    /// One run of `claude -p` for the turn: resuming a session (`--resume <id>`, with the
    /// shorter prompt), or from a fresh context.
    async fn attempt(
        &self,
        turn: &Turn<'_>,
        mcp_config: &Path,
        resuming: Option<Resuming>,
    ) -> Attempt {
        let mut session = None;
        let result = self
            .run_once(turn, mcp_config, resuming, &mut session)
            .await;
        Attempt { result, session }
    }

    async fn run_once(
        &self,
        turn: &Turn<'_>,
        mcp_config: &Path,
        resuming: Option<Resuming>,
        session: &mut Option<String>,
    ) -> Result<TurnOutcome, ExecError> {
        // A turn whose MCP server did not connect is stopped at once (see `StreamParser`).
        let child_cancel = turn.cancel.child_token();
        let mut argv = self.turn_argv(mcp_config, turn.request.access);
        let prompt = match resuming {
            Some(resuming) => {
                argv.extend((CLI.resume.args)(&resuming.id));
                resuming.prompt
            }
            None => turn.request.prompt.clone(),
        };
        let command = self.cli.turn_command(
            turn.request.access,
            argv,
            Some(prompt.into_bytes()),
            Self::env(),
        );
        let parser = SessionTap::new(
            StreamParser::new(turn.observer, child_cancel.clone()),
            CLI.resume.session,
        );
        let (run, tap) = self
            .cli
            .run_streamed(&command, &turn.request.transcript, parser, &child_cancel)
            .await?;
        session.clone_from(&tap.session);
        let seen = tap.inner.seen;
        if let Some(status) = seen.mcp_status.clone().filter(|s| s != "connected") {
            let status = format!("status {status:?}");
            return Err(ExecError::Setup(Box::new(
                self.cli.mcp_not_connected(status),
            )));
        }
        self.cli.check_end(run.end, turn.cancel.is_cancelled())?;
        self.outcome(run, seen)
    }
}

/// Claude Code settings with a `PreToolUse` hook on Bash that runs `tether gate` for the run,
/// given as much time as a human needs.
pub fn gate_settings(cli: &Cli) -> String {
    let mut gate = vec![
        cli.settings().tether.display().to_string(),
        "gate".to_owned(),
    ];
    if let Some(run) = cli.run_id() {
        gate.extend(["--run".to_owned(), run]);
    }
    gate.extend([
        "-C".to_owned(),
        cli.settings().workspace.display().to_string(),
    ]);
    let command: Vec<String> = gate.iter().map(|a| shell_quote(a)).collect();
    serde_json::json!({"hooks": {"PreToolUse": [{
        "matcher": "Bash",
        "hooks": [{
            "type": "command",
            "command": command.join(" "),
            "timeout": TOOL_TIMEOUT.as_secs(),
        }],
    }]}})
    .to_string()
}

/// `arg` quoted for `sh`.
fn shell_quote(arg: &str) -> String {
    format!("'{}'", arg.replace('\'', "'\\''"))
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod settings_tests;

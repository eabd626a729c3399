//! The `codex` executor: the OpenAI Codex CLI (`codex exec`) as the agent, with tether's tools
//! over MCP.
//!
//! Each turn is a fresh `codex exec --json` process in the workspace with the prompt on stdin —
//! `codex exec … resume <thread>` when it continues the thread of the last turn
//! ([`crate::cli::resume`]) —, spawned like every child of tether (own process group, timeout, killed when the turn is
//! cancelled). tether's MCP server (`tether mcp --run <id> -C <workspace>`) is given to it as
//! `-c` overrides for this process only — the user's own Codex configuration and login are used
//! as they are and never written — with the tools approved up front (`codex exec` cannot ask
//! anybody) and a tool timeout long enough for a human to answer. The JSONL output is parsed as
//! it arrives ([`stream`]) and kept as the transcript; stderr is kept beside it
//! (`iteration-NNNN.stderr.log`) and watched for the one failure Codex reports only there,
//! tether's MCP server not starting. Which provider Codex will use, and the variable its key
//! comes from, is read from its configuration by [`provider`], for the sandbox to pass on.

pub(crate) mod provider;
mod stream;

use tether_tools::{ProgramRun, ShellEnd, run_program_tees};

use crate::cli::lines::LineSink;
use crate::cli::resume::{Attempt, Resuming, SessionTap};
use crate::cli::{
    AgentCli, Cli, CliSettings, ConfigDir, ConfigFile, Gate, KeyNaming, Resume, RunId, SERVER,
    TOOL_TIMEOUT, Version,
};
use crate::executor::{Access, ExecError, Turn, TurnOutcome, Turns};
use crate::session::Kept;
use stream::{Seen, StderrWatch, StreamParser};

/// Codex's own goal tools (`get_goal`, `create_goal`, `update_goal`) turned off: the plan's goals
/// are tether's, signed off through `complete_goal` only, and an agent told of goals must not
/// take Codex's for them (their declarations also cost some 3 kB of every request). A later
/// `-c features.goals=true` in `[executor] args` turns them back on.
const OWN_GOALS_OFF: &str = "features.goals=false";

/// How long Codex waits for tether's MCP server to start (it answers at once; a cold disk may
/// be slow).
const MCP_STARTUP_SECS: u64 = 60;

/// Codex as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "codex",
    title: "Codex",
    about: "the Codex CLI, the same way",
    program: "codex",
    install: "npm install -g @openai/codex",
    // `exec --json` item events, namespaced MCP tools, per-tool approval modes.
    minimum: Version::new(0, 160, 0),
    env_prefixes: &["OPENAI_", "CODEX_", "NODE_"],
    config_dir: ConfigDir {
        var: "CODEX_HOME",
        default: ".codex",
        within: None,
        files: &[
            // Its login (an API key, or ChatGPT tokens it refreshes).
            ConfigFile::credential("auth.json"),
            // Its settings (providers, MCP servers, `notify`, hooks) and instructions. Its
            // skills are not linked: it writes its own there when it starts.
            ConfigFile::setting("config.toml"),
            ConfigFile::setting("AGENTS.md"),
            ConfigFile::shared("prompts"),
        ],
    },
    key: Some(KeyNaming {
        read: provider::provider_key,
        setting: |provider| {
            format!("env_key in [model_providers.{provider}] of Codex's config.toml")
        },
    }),
    gate: Gate::Ungated {
        allows: "every command its workspace-write sandbox allows",
    },
    // `codex exec … resume <id> -`: the thread named by the `--json` stream's `thread.started`.
    resume: Resume {
        session: |line| match line["type"].as_str() {
            Some("thread.started") => line["thread_id"].as_str(),
            _ => None,
        },
        args: |id| vec!["resume".to_owned(), id.to_owned()],
    },
    acp_adapter: Some("codex"),
    home_reads: &[],
    pin: None,
    executor: |settings, run, _desk| std::sync::Arc::new(CodexExecutor::new(settings, run)),
};

/// Runs Codex per turn.
pub struct CodexExecutor {
    cli: Cli,
    /// The thread the next turn may resume.
    kept: Kept<String>,
}

impl CodexExecutor {
    /// An executor running `settings`; `run` names the run once it exists.
    pub fn new(settings: CliSettings, run: RunId) -> Self {
        CodexExecutor {
            cli: Cli::new(&CLI, settings, run),
            kept: Kept::default(),
        }
    }

    /// The variables every turn runs with: Codex logs warnings on stderr, where it reports an
    /// MCP server that did not start (by default it logs only errors).
    fn env() -> Vec<(String, String)> {
        vec![("RUST_LOG".to_owned(), "warn".to_owned())]
    }

    /// The `-c key=value` overrides naming tether's MCP server for this run. Values are TOML;
    /// a JSON string is a valid TOML basic string.
    fn mcp_overrides(&self) -> Vec<String> {
        let quote = |s: &str| serde_json::Value::from(s).to_string();
        let tether = self.cli.settings().tether.display().to_string();
        let args: Vec<String> = self.cli.mcp_args().iter().map(|a| quote(a)).collect();
        let key = |k: &str| format!("mcp_servers.{SERVER}.{k}");
        vec![
            format!("{}={}", key("command"), quote(&tether)),
            format!("{}=[{}]", key("args"), args.join(",")),
            format!("{}={}", key("startup_timeout_sec"), MCP_STARTUP_SECS),
            format!("{}={}", key("tool_timeout_sec"), TOOL_TIMEOUT.as_secs()),
            // `codex exec` never asks for approval: unapproved tool calls would be refused.
            format!("{}=\"approve\"", key("default_tools_approval_mode")),
            format!("{}=true", key("enabled")),
        ]
    }

    /// The arguments of one turn: JSON events, the workspace as the root, the sandbox the
    /// access asks for, tether's MCP server, the user's extra arguments, the thread it resumes
    /// (`resume <id>`) if any, the prompt on stdin.
    fn turn_argv(&self, access: Access, resume: Option<&str>) -> Vec<String> {
        let workspace = self.cli.settings().workspace.display().to_string();
        // Codex's own sandbox (bubblewrap) cannot run inside tether's: under tether's, which
        // bounds it, Codex's is turned off.
        let sandbox = match access {
            _ if self.cli.settings().sandbox.is_some() => "danger-full-access",
            Access::Work => "workspace-write",
            Access::ReadOnly => "read-only",
        };
        let mut argv = self.cli.argv([
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--color",
            "never",
            "-C",
            &workspace,
            "-s",
            sandbox,
        ]);
        for value in self.mcp_overrides() {
            argv.extend(["-c".to_owned(), value]);
        }
        argv.extend(["-c".to_owned(), OWN_GOALS_OFF.to_owned()]);
        argv.extend(self.cli.settings().args.iter().cloned());
        if let Some(id) = resume {
            argv.extend((CLI.resume.args)(id));
        }
        argv.push("-".to_owned());
        argv
    }

    /// What the turn came to, once it ran to its end.
    fn outcome(&self, run: ProgramRun, seen: Seen) -> Result<TurnOutcome, ExecError> {
        // A top-level `error` (a retried stream, say) does not fail a turn that completed.
        if seen.completed && run.end == ShellEnd::Exited(0) {
            return Ok(TurnOutcome {
                final_message: seen.final_message,
                tool_calls: seen.tool_calls,
                input_tokens: seen.input_tokens,
                cached_input_tokens: seen.cached_input_tokens,
                // Codex caches by prefix without being asked and reports no writes.
                cache_write_input_tokens: 0,
                output_tokens: seen.output_tokens,
                cost_usd: None,
            });
        }
        let detail = match seen.failure {
            Some(message) => message,
            None => format!("no completed turn; stderr: {}", run.stderr.trim()),
        };
        Err(self.cli.failure(&run, &detail, detail.clone()))
    }
}

impl Turns for CodexExecutor {
    fn label(&self) -> String {
        self.cli.label()
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let outcome = self.run_turn(turn).await;
        self.cli.turn_ended();
        outcome
    }
}

impl CodexExecutor {
    async fn run_turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        self.cli.check_version(&turn.cancel).await?;
        self.cli
            .continuing(&self.kept, &turn, |resuming| self.attempt(&turn, resuming))
            .await
    }

    /// One run of `codex exec` for the turn: resuming a thread (`resume <id>`, with the shorter
    /// prompt), or from a fresh context.
    async fn attempt(&self, turn: &Turn<'_>, resuming: Option<Resuming>) -> Attempt {
        let mut session = None;
        let result = self.run_once(turn, resuming, &mut session).await;
        Attempt { result, session }
    }

    async fn run_once(
        &self,
        turn: &Turn<'_>,
        resuming: Option<Resuming>,
        session: &mut Option<String>,
    ) -> Result<TurnOutcome, ExecError> {
        let transcript_err = |source| ExecError::Transcript {
            path: turn.request.transcript.clone(),
            source,
        };
        if let Some(dir) = turn.request.transcript.parent() {
            std::fs::create_dir_all(dir).map_err(transcript_err)?;
        }
        let file = std::fs::File::create(&turn.request.transcript).map_err(transcript_err)?;
        // A turn whose MCP server did not start is stopped at once (see `StderrWatch`).
        let child_cancel = turn.cancel.child_token();
        let mut sink = LineSink::new(
            Box::new(std::io::BufWriter::new(file)),
            SessionTap::new(StreamParser::new(turn.observer), CLI.resume.session),
        );
        let stderr_path = turn.request.transcript.with_extension("stderr.log");
        let stderr_file =
            std::fs::File::create(&stderr_path).map_err(|source| ExecError::Transcript {
                path: stderr_path.clone(),
                source,
            })?;
        let mut stderr = StderrWatch::new(
            Box::new(std::io::BufWriter::new(stderr_file)),
            child_cancel.clone(),
        );
        let (resume, prompt) = match resuming {
            Some(resuming) => (Some(resuming.id), resuming.prompt),
            None => (None, turn.request.prompt.clone()),
        };
        let command = self.cli.turn_command(
            turn.request.access,
            self.turn_argv(turn.request.access, resume.as_deref()),
            Some(prompt.into_bytes()),
            Self::env(),
        );
        let run = run_program_tees(&command, &child_cancel, &mut sink, &mut stderr).await;
        let run = run.map_err(|e| {
            ExecError::Setup(Box::new(
                self.cli.not_runnable(format!("could not start: {e}")),
            ))
        })?;
        let tap = sink.finish().map_err(transcript_err)?;
        session.clone_from(&tap.session);
        let seen = tap.inner.seen;
        std::io::Write::flush(&mut stderr).map_err(|source| ExecError::Transcript {
            path: stderr_path.clone(),
            source,
        })?;
        if let Some(line) = stderr.mcp_failed.take() {
            return Err(ExecError::Setup(Box::new(self.cli.mcp_not_connected(line))));
        }
        self.cli.check_end(run.end, turn.cancel.is_cancelled())?;
        self.outcome(run, seen)
    }
}

#[cfg(test)]
mod tests;

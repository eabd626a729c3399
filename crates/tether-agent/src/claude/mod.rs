//! The `claude` executor: Claude Code (`claude -p`) as the agent, with tether's tools over MCP.
//!
//! Each turn is a fresh `claude -p --verbose --output-format stream-json` process with the prompt
//! on stdin, spawned like every child of tether (own process group, timeout, killed when the
//! turn is cancelled). Before it starts, tether writes an MCP configuration next to the turn's
//! transcript naming its own binary (`tether mcp --run <id> -C <workspace>`), so the agent's
//! `ask_human`, `complete_goal`, `cancel_goal` and `plan_status` reach this run. The output is
//! parsed as it arrives ([`stream`]) and kept as the transcript.

mod stream;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tether_tools::{ProgramCommand, ShellEnd, run_program, run_program_teed};
use tokio_util::sync::CancellationToken;

use crate::executor::{ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest};
use stream::{SERVER, StreamSink};

/// tether's tools, as Claude Code names them.
pub const TOOLS: [&str; 4] = [
    "mcp__tether__ask_human",
    "mcp__tether__complete_goal",
    "mcp__tether__cancel_goal",
    "mcp__tether__plan_status",
];

/// How long one MCP tool call may take (`MCP_TOOL_TIMEOUT`): a human may answer days later.
const TOOL_TIMEOUT_MS: u64 = 7 * 24 * 3600 * 1000;

/// How long `claude --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(60);

/// Between SIGTERM and SIGKILL when a turn is stopped.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How much of stderr is kept for an error (the tail).
const MAX_STDERR: usize = 2000;

/// How much of stdout is kept in memory (the whole stream goes to the transcript).
const MAX_STDOUT: usize = 64 * 1024;

/// The run a turn belongs to, once it exists (the MCP server files questions under it).
pub type RunId = Arc<dyn Fn() -> Option<String> + Send + Sync>;

/// How Claude Code is run.
#[derive(Clone)]
pub struct ClaudeSettings {
    /// The program (`claude`, or a path).
    pub program: String,
    /// Extra arguments, after tether's own.
    pub args: Vec<String>,
    /// Extra environment variables.
    pub env: Vec<(String, String)>,
    /// How long one turn may take.
    pub turn_timeout: Duration,
    /// The workspace the agent works in.
    pub workspace: PathBuf,
    /// The tether binary serving the MCP tools.
    pub tether: PathBuf,
    /// Variables Claude Code starts without (the keys tether holds).
    pub env_remove: Vec<String>,
}

/// Runs Claude Code per turn.
pub struct ClaudeExecutor {
    settings: ClaudeSettings,
    run: RunId,
    checked: AtomicBool,
}

/// Claude Code could not be run, or its turn failed.
#[derive(Debug, thiserror::Error)]
pub enum ClaudeError {
    /// The program is missing or does not run.
    #[error(
        "Claude Code does not run: `{program} --version` {detail}; install it with `npm install \
         -g @anthropic-ai/claude-code` or set [executor] program in tether.toml to its path"
    )]
    NotRunnable {
        /// The program.
        program: String,
        /// What went wrong.
        detail: String,
    },
    /// tether's MCP server did not connect, so the agent would run without tether's tools.
    #[error(
        "Claude Code could not start tether's MCP server (status {status:?}); check that \
         `{tether} mcp --run <run>` runs in this workspace (see `tether mcp --help`)"
    )]
    McpNotConnected {
        /// The status reported in `system`/`init`.
        status: String,
        /// The tether binary named in the MCP configuration.
        tether: String,
    },
    /// The process failed or reported an error result.
    #[error("Claude Code failed ({end}): {detail}")]
    Failed {
        /// How it ended.
        end: String,
        /// Its error message or the end of its stderr.
        detail: String,
    },
    /// The turn ran longer than `turn_timeout_secs`.
    #[error("Claude Code ran longer than {0} s and was killed")]
    Timeout(u64),
    /// The MCP configuration could not be written.
    #[error("writing the MCP configuration {}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
}

impl ClaudeExecutor {
    /// An executor running `settings`; `run` names the run once it exists.
    pub fn new(settings: ClaudeSettings, run: RunId) -> Self {
        ClaudeExecutor {
            settings,
            run,
            checked: AtomicBool::new(false),
        }
    }

    fn spec(&self, argv: Vec<String>, input: Option<Vec<u8>>, timeout: Duration) -> ProgramCommand {
        let mut env = vec![
            ("ENABLE_TOOL_SEARCH".to_owned(), "false".to_owned()),
            ("MCP_TOOL_TIMEOUT".to_owned(), TOOL_TIMEOUT_MS.to_string()),
        ];
        env.extend(self.settings.env.iter().cloned());
        ProgramCommand {
            argv,
            cwd: self.settings.workspace.clone(),
            input,
            timeout,
            kill_grace: KILL_GRACE,
            stdout_cap: MAX_STDOUT,
            stderr_cap: MAX_STDERR,
            env_remove: self.settings.env_remove.clone(),
            env,
        }
    }

    /// `claude --version` once, before the first turn.
    async fn check_version(&self, cancel: &CancellationToken) -> Result<(), ExecError> {
        if self.checked.load(Ordering::SeqCst) {
            return Ok(());
        }
        let program = self.settings.program.clone();
        let argv = vec![program.clone(), "--version".to_owned()];
        let not_runnable = |detail: String| {
            ExecError::Setup(Box::new(ClaudeError::NotRunnable {
                program: program.clone(),
                detail,
            }))
        };
        let run = run_program(&self.spec(argv, None, VERSION_TIMEOUT), cancel)
            .await
            .map_err(|e| not_runnable(format!("could not start: {e}")))?;
        match run.end {
            ShellEnd::Cancelled => return Err(ExecError::Cancelled),
            ShellEnd::Exited(0) => {}
            other => {
                let detail = format!("{}: {}", describe_end(other), run.stderr.trim());
                return Err(not_runnable(detail));
            }
        }
        self.checked.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// The arguments of one turn, with the MCP configuration at `mcp_config`.
    fn turn_argv(&self, mcp_config: &Path) -> Vec<String> {
        let mut argv: Vec<String> = [
            self.settings.program.as_str(),
            "-p",
            "--verbose",
            "--output-format",
            "stream-json",
            "--strict-mcp-config",
            "--permission-mode",
            "acceptEdits",
            "--disallowedTools",
            "AskUserQuestion",
            "--allowedTools",
            &TOOLS.join(","),
            "--mcp-config",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        argv.push(mcp_config.display().to_string());
        argv.extend(self.settings.args.iter().cloned());
        argv
    }

    /// Writes the MCP configuration of a turn next to its transcript.
    fn write_mcp_config(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        let dir = request.transcript.parent().unwrap_or(Path::new("."));
        let path = dir.join("claude-mcp.json");
        let mut args = vec!["mcp".to_owned()];
        if let Some(run) = (self.run)() {
            args.extend(["--run".to_owned(), run]);
        }
        args.extend([
            "-C".to_owned(),
            self.settings.workspace.display().to_string(),
        ]);
        let config = serde_json::json!({"mcpServers": {SERVER: {
            "command": self.settings.tether.display().to_string(),
            "args": args,
        }}});
        std::fs::create_dir_all(dir)
            .and_then(|()| std::fs::write(&path, config.to_string()))
            .map_err(|source| {
                ExecError::Model(Box::new(ClaudeError::Config {
                    path: path.clone(),
                    source,
                }))
            })?;
        Ok(path)
    }

    async fn turn(
        &self,
        request: TurnRequest,
        observer: &dyn TurnObserver,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ExecError> {
        self.check_version(&cancel).await?;
        let mcp_config = self.write_mcp_config(&request)?;
        let transcript_err = |source| ExecError::Transcript {
            path: request.transcript.clone(),
            source,
        };
        let file = std::fs::File::create(&request.transcript).map_err(transcript_err)?;
        // A turn whose MCP server did not connect is stopped at once (see `StreamSink`).
        let child_cancel = cancel.child_token();
        let mut sink = StreamSink::new(
            Box::new(std::io::BufWriter::new(file)),
            observer,
            child_cancel.clone(),
        );
        let spec = self.spec(
            self.turn_argv(&mcp_config),
            Some(request.prompt.clone().into_bytes()),
            self.settings.turn_timeout,
        );
        let run = run_program_teed(&spec, &child_cancel, &mut sink).await;
        let run = run.map_err(|e| {
            ExecError::Setup(Box::new(ClaudeError::NotRunnable {
                program: self.settings.program.clone(),
                detail: format!("could not start: {e}"),
            }))
        })?;
        let seen = sink.finish().map_err(transcript_err)?;
        outcome(self, run, seen, cancel.is_cancelled())
    }
}

fn outcome(
    exec: &ClaudeExecutor,
    run: tether_tools::ProgramRun,
    seen: stream::Seen,
    cancelled: bool,
) -> Result<TurnOutcome, ExecError> {
    let fail = |e: ClaudeError| Err(ExecError::Model(Box::new(e)));
    if let Some(status) = seen.mcp_status.clone().filter(|s| s != "connected") {
        return Err(ExecError::Setup(Box::new(ClaudeError::McpNotConnected {
            status,
            tether: exec.settings.tether.display().to_string(),
        })));
    }
    match run.end {
        ShellEnd::Cancelled if cancelled => return Err(ExecError::Cancelled),
        ShellEnd::TimedOut => {
            return fail(ClaudeError::Timeout(exec.settings.turn_timeout.as_secs()));
        }
        _ => {}
    }
    let finish = match seen.finish {
        Some(f) if !f.is_error && run.end == ShellEnd::Exited(0) => f,
        Some(f) => {
            let detail = format!("{}: {}", f.subtype, f.message);
            return fail(ClaudeError::Failed {
                end: describe_end(run.end),
                detail,
            });
        }
        None => {
            return fail(ClaudeError::Failed {
                end: describe_end(run.end),
                detail: format!("no result line; stderr: {}", run.stderr.trim()),
            });
        }
    };
    Ok(TurnOutcome {
        final_message: finish.message,
        tool_calls: seen.tool_calls,
        input_tokens: finish.input_tokens,
        output_tokens: finish.output_tokens,
    })
}

fn describe_end(end: ShellEnd) -> String {
    match end {
        ShellEnd::Exited(code) => format!("exit status {code}"),
        ShellEnd::Signalled(signal) => format!("killed by signal {signal}"),
        ShellEnd::TimedOut => "timed out".to_owned(),
        ShellEnd::Cancelled => "stopped".to_owned(),
    }
}

impl Executor for ClaudeExecutor {
    fn describe(&self) -> String {
        format!("claude · {}", self.settings.program)
    }

    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        Box::pin(self.turn(request, observer, cancel))
    }
}

//! The `pi` executor: the pi coding agent (`pi --mode json -p`) as the agent, with tether's
//! tools over MCP.
//!
//! Each turn is a fresh `pi --mode json -p --no-session` process with the prompt on stdin —
//! in a goal run whose iterations continue the agent's session, its session saved in the run's
//! pi directory and resumed by the next turn (`--session <id>`, [`crate::cli::resume`]) —,
//! spawned like every child of tether (own process group, timeout, killed with everything it
//! started when the turn is cancelled). pi runs with a per-run agent directory ([`agent_dir`])
//! whose `mcp.json` names tether's own binary (`tether mcp --run <id> -C <workspace>`), so the
//! agent's `ask_human`, `complete_goal`, `cancel_goal` and `plan_status` reach this run while
//! the user's own pi configuration is copied from and left alone (but for a login pi refreshed).
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
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tether_tools::{ProgramRun, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use crate::cli::resume::{Attempt, Resuming, SessionTap};
use crate::cli::{
    AgentCli, Cli, CliError, CliSettings, ConfigDir, ConfigFile, Gate, KeyNaming, Resume,
    RunConfigDir, RunId, SERVER, TOOL_TIMEOUT, Version,
};
use crate::executor::{Access, Context, ExecError, Turn, TurnOutcome, TurnRequest, Turns};
use crate::session::Kept;
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
    about: "the pi coding agent, the same way",
    program: "pi",
    install: "npm install -g @earendil-works/pi-coding-agent (with Node 22.19 or newer)",
    // Built-in MCP support with `"exposure": "direct"`.
    minimum: Version::new(0, 99, 0),
    env_prefixes: &["PI_", "ANTHROPIC_", "OPENAI_", "GEMINI_", "NODE_"],
    config_dir: ConfigDir {
        var: "PI_CODING_AGENT_DIR",
        default: ".pi/agent",
        within: None,
        files: &[
            // Its logins (OAuth tokens it refreshes, API keys).
            ConfigFile::credential("auth.json"),
            // Its providers and models, its settings and instructions. Not `mcp.json`: the
            // run's names tether's server only.
            ConfigFile::setting("models.json"),
            ConfigFile::setting("settings.json"),
            ConfigFile::setting("keybindings.json"),
            ConfigFile::setting("AGENTS.md"),
            ConfigFile::setting("SYSTEM.md"),
            ConfigFile::setting("APPEND_SYSTEM.md"),
            ConfigFile::shared("extensions"),
            ConfigFile::shared("skills"),
            ConfigFile::shared("prompts"),
            ConfigFile::shared("themes"),
        ],
    },
    key: Some(KeyNaming {
        read: |dir, args| provider::provider_key(Some(dir), args),
        setting: |_| "the provider's apiKey in pi's models.json (\"apiKey\": \"$NAME\")".to_owned(),
    }),
    gate: Gate::Extension,
    // `--session <id>` in place of `--no-session`: the session of `--mode json`'s first line.
    resume: Resume {
        session: |line| match line["type"].as_str() {
            Some("session") => line["id"].as_str(),
            _ => None,
        },
        args: |id| vec!["--session".to_owned(), id.to_owned()],
    },
    // No ACP adapter of pi is known by its name.
    acp_adapter: None,
    home_reads: &[],
    pin: None,
    executor: |settings, run, _desk| std::sync::Arc::new(PiExecutor::new(settings, run)),
};

/// Runs pi per turn.
pub struct PiExecutor {
    cli: Cli,
    /// The user's own agent directory (and whether a variable names it), copied into the run's
    /// when the settings give none.
    user_dir: Option<(PathBuf, bool)>,
    /// The run's agent directory once made here (the settings gave none).
    own_dir: Mutex<Option<Arc<RunConfigDir>>>,
    /// Set once `pi mcp list` saw tether's server connect.
    mcp_connected: OnceLock<()>,
    /// The session the next turn may resume.
    kept: Kept<String>,
}

/// What a turn does with pi's sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Session<'a> {
    /// Keeps none (`--no-session`): no later turn continues it.
    None,
    /// Starts one, saved in the run's pi directory for the next turn to continue.
    New,
    /// Continues this one (`--session <id>`).
    Resume(&'a str),
}

impl PiExecutor {
    /// An executor running `settings`; `run` names the run once it exists. pi runs in the
    /// run's agent directory the settings give (`config_dir`); without one, in one made beside
    /// the first turn's transcript from the user's: `PI_CODING_AGENT_DIR` in `settings.env`
    /// (default: the one in tether's environment, else `~/.pi/agent`).
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
            own_dir: Mutex::new(None),
            mcp_connected: OnceLock::new(),
            kept: Kept::default(),
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
    /// `defaultTools`); a read-only turn only pi's reading tools and tether's. Its session is
    /// kept only when a later turn may continue it.
    fn turn_argv(&self, access: Access, gate: &Path, session: Session<'_>) -> Vec<String> {
        let gate = gate.display().to_string();
        let mut args = vec!["--mode", "json", "-p"];
        if session == Session::None {
            args.push("--no-session");
        }
        args.extend(["-e", &gate]);
        if access == Access::ReadOnly {
            args.extend(["--tools", READ_ONLY_TOOLS]);
        }
        let mut argv = self.cli.argv(args);
        if let Session::Resume(id) = session {
            argv.extend((CLI.resume.args)(id));
        }
        argv.extend(self.cli.settings().args.iter().cloned());
        argv
    }

    /// The run's agent directory: the settings', or one made beside the turn's transcript.
    fn agent_dir(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        if let Some(dir) = &self.cli.settings().config_dir {
            return Ok(dir.dir().to_path_buf());
        }
        let mut own = self
            .own_dir
            .lock()
            .map_err(|_| ExecError::Model("the run's pi directory is poisoned".into()))?;
        if let Some(dir) = own.as_ref() {
            return Ok(dir.dir().to_path_buf());
        }
        let dir = self
            .cli
            .turn_dir(&request.transcript)
            .join(agent_dir::DIR_NAME);
        let user = self
            .user_dir
            .as_ref()
            .map(|(user, named)| (user.as_path(), *named));
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let made = RunConfigDir::seed(&CLI, user, home.as_deref(), &dir)
            .map_err(|source| config_error(&dir, source))?;
        *own = Some(Arc::new(made));
        Ok(dir)
    }

    /// Writes tether's server into the run's agent directory.
    fn prepare_agent_dir(&self, request: &TurnRequest) -> Result<PathBuf, ExecError> {
        let dir = self.agent_dir(request)?;
        let settings = self.cli.settings();
        let server = agent_dir::server_entry(
            &settings.tether.display().to_string(),
            &self.cli.mcp_args(),
            TOOL_TIMEOUT.as_secs(),
        );
        agent_dir::write_mcp(&dir, SERVER, &server)
            .map_err(|source| config_error(&dir.join("mcp.json"), source))?;
        // The record of what pi was given, next to the transcript (the agent directory may be
        // in the sandbox's scratch directory).
        let record = request
            .transcript
            .parent()
            .unwrap_or(Path::new("."))
            .join("pi-mcp.json");
        std::fs::copy(dir.join("mcp.json"), &record)
            .map_err(|source| config_error(&record, source))?;
        Ok(dir)
    }

    /// A turn ended: the logins pi refreshed flow back.
    fn turn_ended(&self) {
        self.cli.turn_ended();
        if let Ok(own) = self.own_dir.lock()
            && let Some(dir) = own.as_ref()
        {
            dir.keep_credentials();
        }
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
                    cache_write_input_tokens: seen.cache_write_input_tokens,
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
        let outcome = self.run_turn(turn).await;
        self.turn_ended();
        outcome
    }
}

impl PiExecutor {
    async fn run_turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        self.cli.check_version(&turn.cancel).await?;
        let agent_dir = self.prepare_agent_dir(&turn.request)?;
        let gate = self.write_gate(&turn.request)?;
        self.check_mcp(&agent_dir, &turn.cancel).await?;
        let dirs = (agent_dir.as_path(), gate.as_path());
        self.cli
            .continuing(&self.kept, &turn, |resuming| {
                self.attempt(&turn, dirs, resuming)
            })
            .await
    }

    /// One run of pi for the turn: resuming a session (`--session <id>`, with the shorter
    /// prompt), or from a fresh context; `dirs` are the run's pi directory and its gate.
    async fn attempt(
        &self,
        turn: &Turn<'_>,
        dirs: (&Path, &Path),
        resuming: Option<Resuming>,
    ) -> Attempt {
        let mut session = None;
        let result = self.run_once(turn, dirs, resuming, &mut session).await;
        Attempt { result, session }
    }

    async fn run_once(
        &self,
        turn: &Turn<'_>,
        (agent_dir, gate): (&Path, &Path),
        resuming: Option<Resuming>,
        session: &mut Option<String>,
    ) -> Result<TurnOutcome, ExecError> {
        let (kept, prompt) = match &resuming {
            Some(resuming) => (Session::Resume(&resuming.id), resuming.prompt.clone()),
            None if matches!(turn.request.context, Context::Continue(_)) => {
                (Session::New, turn.request.prompt.clone())
            }
            None => (Session::None, turn.request.prompt.clone()),
        };
        let command = self.cli.turn_command(
            turn.request.access,
            self.turn_argv(turn.request.access, gate, kept),
            Some(prompt.into_bytes()),
            Self::env(agent_dir),
        );
        let parser = SessionTap::new(StreamParser::new(turn.observer), CLI.resume.session);
        let (run, tap) = self
            .cli
            .run_streamed(&command, &turn.request.transcript, parser, &turn.cancel)
            .await?;
        session.clone_from(&tap.session);
        let seen = tap.inner.seen;
        self.cli.check_end(run.end, turn.cancel.is_cancelled())?;
        self.outcome(run, seen)
    }
}

/// A file tether writes for pi could not be written.
fn config_error(path: &Path, source: std::io::Error) -> ExecError {
    ExecError::Model(Box::new(CliError::Config {
        path: path.to_path_buf(),
        source,
    }))
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

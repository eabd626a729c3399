//! The `command` executor: any program as the agent.
//!
//! Each turn runs the configured command in the workspace in a fresh process — the prompt
//! substituted for a `{prompt}` argument, or written to its stdin when no argument asks for it —
//! and takes what it printed on stdout as the turn's final message (where the loop looks for the
//! promise). The process is spawned by `tether-tools`' [`run_program`], like every child of
//! tether: in its own process group, so cancelling a turn, a turn outliving its timeout, or a
//! dropped turn stops everything it started, and whatever it leaves running when it exits is
//! stopped too. A failed program whose stderr reports a usage or rate limit
//! ([`crate::cli::limits`]) is a limit the loop waits out, not a failed turn.

use std::sync::Arc;

use std::path::PathBuf;
use std::time::Duration;
use tether_sandbox::Sandbox;

use tether_tools::{ProgramCommand, ShellEnd, run_program};

use crate::cli::limits;
use crate::executor::{ExecError, Turn, TurnOutcome, TurnRequest, Turns};

/// How much of the command's stdout is kept as the final message (the tail).
const MAX_OUTPUT: usize = 256 * 1024;

/// How much of its stderr is kept for the error when it fails (the tail).
const MAX_STDERR: usize = 2000;

/// Between SIGTERM and SIGKILL when a turn is stopped.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// Runs a program per turn.
#[derive(Debug, Clone)]
pub struct CommandExecutor {
    argv: Vec<String>,
    cwd: PathBuf,
    timeout: Duration,
    /// Variables the program starts without (the keys tether holds).
    env_remove: Vec<String>,
    /// The sandbox the program runs in.
    sandbox: Option<Arc<Sandbox>>,
}

/// The command could not be run, or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The program could not be started (not found, not executable, no command configured).
    #[error("could not start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The process exited unsuccessfully, or was killed by a signal it did not get from us.
    #[error("`{program}` {}: {stderr_tail}", ended(.end))]
    Failed {
        /// The program.
        program: String,
        /// How it ended: an exit code other than 0, or a signal.
        end: ShellEnd,
        /// The end of what it printed on stderr.
        stderr_tail: String,
    },
    /// The process ran longer than the turn timeout and was killed.
    #[error("`{program}` ran longer than {secs} s and was killed")]
    Timeout {
        /// The program.
        program: String,
        /// The timeout.
        secs: u64,
    },
}

impl CommandExecutor {
    /// `argv[0]` with `argv[1..]`, run in `cwd`; each turn may take at most `timeout`.
    pub fn new(argv: Vec<String>, cwd: PathBuf, timeout: Duration) -> Self {
        CommandExecutor {
            argv,
            cwd,
            timeout,
            env_remove: Vec::new(),
            sandbox: None,
        }
    }

    /// The same executor, whose program starts without the variables `vars`: the keys tether
    /// holds never reach the agent.
    pub fn without_vars(mut self, vars: Vec<String>) -> Self {
        self.env_remove = vars;
        self
    }

    /// The same executor, whose program runs in `sandbox`.
    pub fn sandboxed(mut self, sandbox: Option<Arc<Sandbox>>) -> Self {
        self.sandbox = sandbox;
        self
    }

    fn program(&self) -> String {
        self.argv.first().cloned().unwrap_or_default()
    }

    /// The program of one turn: `{prompt}` substituted in the arguments, or else the prompt on
    /// stdin.
    fn spec(&self, prompt: &str) -> ProgramCommand {
        let substitutes = self.argv.iter().skip(1).any(|a| a.contains("{prompt}"));
        let argv = self
            .argv
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if i == 0 {
                    a.clone()
                } else {
                    a.replace("{prompt}", prompt)
                }
            })
            .collect();
        ProgramCommand {
            argv,
            cwd: self.cwd.clone(),
            input: (!substitutes).then(|| prompt.as_bytes().to_vec()),
            timeout: self.timeout,
            kill_grace: KILL_GRACE,
            stdout_cap: MAX_OUTPUT,
            stderr_cap: MAX_STDERR,
            env_remove: self.env_remove.clone(),
            env: Vec::new(),
            sandbox: self.sandbox.clone(),
        }
    }
}

/// How a failed program ended, for [`CommandError::Failed`].
fn ended(end: &ShellEnd) -> String {
    match end {
        ShellEnd::Exited(code) => format!("exited with exit status: {code}"),
        ShellEnd::Signalled(signal) => format!("was killed by signal {signal}"),
        ShellEnd::TimedOut => "timed out".to_owned(),
        ShellEnd::Cancelled => "was cancelled".to_owned(),
    }
}

fn write_transcript(request: &TurnRequest, output: &str) -> std::io::Result<()> {
    if let Some(dir) = request.transcript.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let lines = [
        serde_json::json!({"role": "user", "content": request.prompt}),
        serde_json::json!({"role": "assistant", "content": output}),
    ];
    let mut text = String::new();
    for l in lines {
        text.push_str(&l.to_string());
        text.push('\n');
    }
    std::fs::write(&request.transcript, text)
}

impl Turns for CommandExecutor {
    fn label(&self) -> String {
        format!("command · {}", self.argv.join(" "))
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let program = self.program();
        let fail = |e: CommandError| ExecError::Model(Box::new(e));
        let run = run_program(&self.spec(&turn.request.prompt), &turn.cancel)
            .await
            .map_err(|source| {
                fail(CommandError::Spawn {
                    program: program.clone(),
                    source,
                })
            })?;
        match run.end {
            ShellEnd::Cancelled => return Err(ExecError::Cancelled),
            ShellEnd::TimedOut => {
                return Err(fail(CommandError::Timeout {
                    program,
                    secs: self.timeout.as_secs(),
                }));
            }
            ShellEnd::Exited(_) | ShellEnd::Signalled(_) => {}
        }
        write_transcript(&turn.request, &run.stdout).map_err(|source| ExecError::Transcript {
            path: turn.request.transcript.clone(),
            source,
        })?;
        if run.end != ShellEnd::Exited(0) {
            if let Some(limit) = limits::recognise(&run.stderr, limits::now_unix()) {
                return Err(ExecError::UsageLimit(limit));
            }
            return Err(fail(CommandError::Failed {
                program,
                end: run.end,
                stderr_tail: run.stderr.trim().to_owned(),
            }));
        }
        Ok(TurnOutcome {
            final_message: run.stdout,
            ..TurnOutcome::default()
        })
    }
}

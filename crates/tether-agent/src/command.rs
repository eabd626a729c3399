//! The `command` executor: any program as the agent.
//!
//! Each turn runs the configured command in the workspace in a fresh process — the prompt
//! substituted for a `{prompt}` argument, or written to its stdin when no argument asks for it —
//! and takes what it printed on stdout as the turn's final message (where the loop looks for the
//! promise). The process gets its own process group, so cancelling a turn kills everything it
//! started, and a turn that outlives its timeout is killed the same way.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::executor::{BoxFuture, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest};

/// How much of the command's stdout is kept as the final message (the tail).
const MAX_OUTPUT: usize = 256 * 1024;

/// Runs a program per turn.
#[derive(Debug, Clone)]
pub struct CommandExecutor {
    argv: Vec<String>,
    cwd: PathBuf,
    timeout: Duration,
}

/// The command could not be run, or did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The program could not be started (not found, not executable).
    #[error("could not start `{program}`")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Talking to the process failed.
    #[error("reading from or writing to `{program}`")]
    Io {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// The process exited unsuccessfully.
    #[error("`{program}` exited with {status}: {stderr_tail}")]
    Failed {
        /// The program.
        program: String,
        /// Its exit status.
        status: std::process::ExitStatus,
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
        CommandExecutor { argv, cwd, timeout }
    }

    fn program(&self) -> String {
        self.argv.first().cloned().unwrap_or_default()
    }

    async fn turn(
        &self,
        request: TurnRequest,
        cancel: CancellationToken,
    ) -> Result<TurnOutcome, ExecError> {
        let program = self.program();
        let fail = |e: CommandError| ExecError::Model(Box::new(e));
        let substitutes = self.argv.iter().skip(1).any(|a| a.contains("{prompt}"));
        let mut cmd = Command::new(&program);
        cmd.args(
            self.argv
                .iter()
                .skip(1)
                .map(|a| a.replace("{prompt}", &request.prompt)),
        )
        .current_dir(&self.cwd)
        .stdin(if substitutes {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|source| {
            fail(CommandError::Spawn {
                program: program.clone(),
                source,
            })
        })?;
        let group = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        let kill_group = || {
            if let Some(pgid) = group {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
        };
        let io = |source| {
            fail(CommandError::Io {
                program: program.clone(),
                source,
            })
        };
        if let Some(mut stdin) = child.stdin.take() {
            let prompt = request.prompt.clone();
            tokio::spawn(async move {
                let _ = stdin.write_all(prompt.as_bytes()).await;
            });
        }
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        // Both pipes are drained at once: a child that fills one while we wait on the other
        // would otherwise block forever.
        let read_all = async {
            let (mut out, mut err) = (Vec::new(), Vec::new());
            let read_out = async {
                match stdout.as_mut() {
                    Some(s) => s.read_to_end(&mut out).await.map(|_| ()),
                    None => Ok(()),
                }
            };
            let read_err = async {
                match stderr.as_mut() {
                    Some(s) => s.read_to_end(&mut err).await.map(|_| ()),
                    None => Ok(()),
                }
            };
            let (a, b) = tokio::join!(read_out, read_err);
            a?;
            b?;
            Ok::<_, std::io::Error>((out, err))
        };
        let run = async {
            let (out, err) = read_all.await?;
            let status = child.wait().await?;
            Ok::<_, std::io::Error>((status, out, err))
        };
        let (status, out, err) = tokio::select! {
            r = run => r.map_err(io)?,
            () = cancel.cancelled() => {
                kill_group();
                return Err(ExecError::Cancelled);
            }
            () = tokio::time::sleep(self.timeout) => {
                kill_group();
                return Err(fail(CommandError::Timeout { program, secs: self.timeout.as_secs() }));
            }
        };
        // Anything the command left running in its group goes with it.
        kill_group();
        let text = tail(&out, MAX_OUTPUT);
        write_transcript(&request, &text).map_err(|source| ExecError::Transcript {
            path: request.transcript.clone(),
            source,
        })?;
        if !status.success() {
            return Err(fail(CommandError::Failed {
                program,
                status,
                stderr_tail: tail(&err, 2000).trim().to_owned(),
            }));
        }
        Ok(TurnOutcome {
            final_message: text,
            ..TurnOutcome::default()
        })
    }
}

fn tail(bytes: &[u8], max: usize) -> String {
    let start = bytes.len().saturating_sub(max);
    String::from_utf8_lossy(&bytes[start..]).into_owned()
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

impl Executor for CommandExecutor {
    fn describe(&self) -> String {
        format!("command · {}", self.argv.join(" "))
    }

    fn run_turn<'a>(
        &'a self,
        request: TurnRequest,
        _observer: &'a dyn TurnObserver,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<TurnOutcome, ExecError>> {
        Box::pin(self.turn(request, cancel))
    }
}

//! Running a child process the way an unattended loop needs: bounded in time, bounded in
//! output, and leaving nothing behind. Every process tether starts goes through here.
//!
//! The command runs as `sh -c` in its own process group with stdin from `/dev/null` (so a
//! command that waits for input fails at once instead of hanging), stdout and stderr on one pipe
//! (so their interleaving is kept), and only the tail of the output kept. On timeout or
//! cancellation the whole group gets SIGTERM, then SIGKILL once the shell has exited or a grace
//! period has passed, which also reaches grandchildren that ignore SIGTERM or outlive the shell.
//! When the shell exits on its own, whatever it left running in its group is killed too: a
//! background job must not outlive the call that started it. Dropping the future kills the group
//! as well. Processes that leave the group (`setsid`) are out of the spawner's reach (in a run's
//! sandbox they end with the run: see `tether_sandbox::RunNamespace`); reading their output
//! stops shortly after the shell has gone.
//!
//! Used by the `bash` tool, by sign-off for a goal's `verify` command, which also keeps the
//! whole output in a log file ([`run_shell_tee`]), and by the `command` executor, which runs a
//! program directly, may hand it its prompt on stdin, and reads stdout and stderr apart
//! ([`run_program`]). The supervision they share is in `group`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_sandbox::Sandbox;
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use self::group::{Group, Output};

mod group;
mod live;
mod program;

pub use live::LiveProgram;
pub use program::{ProgramCommand, ProgramRun, run_program, run_program_teed, run_program_tees};

/// A command to run with [`run_shell`].
#[derive(Debug, Clone)]
pub struct ShellCommand {
    /// The script given to `sh -c`.
    pub command: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// When the whole process group is stopped.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL, at most.
    pub kill_grace: Duration,
    /// How many bytes of the combined output are kept (the tail).
    pub output_cap: usize,
    /// Environment variables removed before the command starts.
    pub env_remove: Vec<String>,
    /// The sandbox the command runs in; `None` for tether's own commands (git).
    pub sandbox: Option<Arc<Sandbox>>,
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellEnd {
    /// The shell exited with this code.
    Exited(i32),
    /// The shell was killed by this signal (not by us).
    Signalled(i32),
    /// The timeout passed; the group was killed.
    TimedOut,
    /// The cancellation token fired; the group was killed.
    Cancelled,
}

/// The result of [`run_shell`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellRun {
    /// How it ended.
    pub end: ShellEnd,
    /// The tail of stdout and stderr combined, prefixed `[… N bytes cut …]` if cut.
    pub output: String,
    /// How many bytes of output there were in all.
    pub total_bytes: u64,
    /// Whether a process outside the group still held the output open when reading stopped.
    pub output_left_open: bool,
    /// From start to end, including the kill.
    pub elapsed: Duration,
}

/// Runs `spec`, stopping it when its timeout passes or `cancel` fires.
///
/// Errors only if the command cannot be started (no `sh`, a missing working directory).
pub async fn run_shell(spec: &ShellCommand, cancel: &CancellationToken) -> io::Result<ShellRun> {
    run_shell_tee(spec, cancel, &mut io::sink()).await
}

/// A short fixed command tether runs for itself (git, say): its exit code and output, or
/// `None` when it could not start, timed out or was cancelled (logged at debug level).
pub async fn run_exit_code(
    spec: &ShellCommand,
    cancel: &CancellationToken,
) -> Option<(i32, String)> {
    match run_shell(spec, cancel).await {
        Ok(ShellRun {
            end: ShellEnd::Exited(code),
            output,
            ..
        }) => Some((code, output)),
        Ok(run) => {
            tracing::debug!(command = %spec.command, end = ?run.end, "did not finish");
            None
        }
        Err(e) => {
            tracing::debug!(command = %spec.command, error = %e, "could not run");
            None
        }
    }
}

/// [`run_shell`], also writing every byte of the combined output to `tee` as it arrives (a log
/// file that keeps what the tail drops).
///
/// Errors if the command cannot be started, or if writing to `tee` failed; in the latter case
/// the command still ran to its end (or was killed) before the error is returned.
pub async fn run_shell_tee(
    spec: &ShellCommand,
    cancel: &CancellationToken,
    tee: &mut (dyn Write + Send),
) -> io::Result<ShellRun> {
    let started = Instant::now();
    let (reader, writer) = io::pipe()?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(&spec.command)
        .stdout(writer.try_clone()?)
        .stderr(writer);
    let group = Group::spawn(
        cmd,
        &spec.cwd,
        &spec.env_remove,
        group::Stdin::Null,
        spec.sandbox.as_deref(),
    )?;
    let mut outputs = [Output::new(reader, spec.output_cap, tee)?];
    let (end, reached_eof) = group
        .supervise(&mut outputs, spec.timeout, spec.kill_grace, cancel)
        .await?;
    let [out] = outputs;
    let (output, total_bytes) = out.finish()?;
    Ok(ShellRun {
        end,
        total_bytes,
        output,
        output_left_open: !reached_eof,
        elapsed: started.elapsed(),
    })
}

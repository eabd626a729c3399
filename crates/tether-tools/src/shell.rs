//! Running one shell command the way an unattended loop needs: bounded in time, bounded in
//! output, and leaving nothing behind.
//!
//! The command runs as `sh -c` in its own process group with stdin from `/dev/null` (so a
//! command that waits for input fails at once instead of hanging), stdout and stderr on one pipe
//! (so their interleaving is kept), and only the tail of the output kept. On timeout or
//! cancellation the whole group gets SIGTERM, then SIGKILL once the shell has exited or a grace
//! period has passed, which also reaches grandchildren that ignore SIGTERM or outlive the shell.
//! When the shell exits on its own, whatever it left running in its group is killed too: a
//! background job must not outlive the call that started it. Dropping the future kills the group
//! as well. Processes that leave the group (`setsid`) are out of reach; reading their output
//! stops shortly after the shell has gone.
//!
//! Used by the `bash` tool, and by sign-off for a goal's `verify` command, which also keeps the
//! whole output in a log file ([`run_shell_tee`]).

use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use crate::tail::TailBuffer;

/// How long output is still read after the shell and its group are gone (only a process that
/// left the group can still hold the pipe open).
const DRAIN_LIMIT: Duration = Duration::from_millis(500);

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

/// Kills the whole group if the run is abandoned midway (its future dropped).
struct GroupGuard(Option<Pid>);

impl GroupGuard {
    fn kill(&mut self, signal: Signal) {
        if let Some(pgid) = self.0 {
            // ESRCH (nobody left in the group) is the expected outcome once it is done.
            let _ = killpg(pgid, signal);
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill(Signal::SIGKILL);
    }
}

/// Reads the pipe into the tail buffer (and the tee).
struct Output<'t> {
    pipe: pipe::Receiver,
    tail: TailBuffer,
    tee: &'t mut (dyn Write + Send),
    tee_error: Option<io::Error>,
    eof: bool,
    buf: Box<[u8]>,
}

impl Output<'_> {
    async fn read_some(&mut self) {
        match self.pipe.read(&mut self.buf).await {
            Ok(0) => self.eof = true,
            Ok(n) => {
                self.tail.push(&self.buf[..n]);
                if self.tee_error.is_none()
                    && let Err(err) = self.tee.write_all(&self.buf[..n])
                {
                    self.tee_error = Some(err);
                }
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => {
                tracing::warn!(%err, "reading a command's output");
                self.eof = true;
            }
        }
    }

    /// Reads until EOF, or until `limit` has passed; returns whether EOF was reached.
    async fn drain(&mut self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        while !self.eof {
            tokio::select! {
                () = self.read_some() => {}
                () = sleep_until(deadline) => return false,
            }
        }
        true
    }
}

/// Runs `spec`, stopping it when its timeout passes or `cancel` fires.
///
/// Errors only if the command cannot be started (no `sh`, a missing working directory).
pub async fn run_shell(spec: &ShellCommand, cancel: &CancellationToken) -> io::Result<ShellRun> {
    run_shell_tee(spec, cancel, &mut io::sink()).await
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
    let mut child = {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(&spec.command)
            .current_dir(&spec.cwd)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .process_group(0)
            .kill_on_drop(true);
        for name in &spec.env_remove {
            cmd.env_remove(name);
        }
        // `cmd` holds our copies of the pipe's write end; it is dropped at the end of this
        // block so the pipe reaches EOF once the command's processes close theirs.
        cmd.spawn()?
    };
    let mut group = GroupGuard(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
    );
    let mut out = Output {
        pipe: pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?,
        tail: TailBuffer::new(spec.output_cap),
        tee,
        tee_error: None,
        eof: false,
        buf: vec![0; 16 * 1024].into_boxed_slice(),
    };

    let deadline = started + spec.timeout;
    let end = loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => break ShellEnd::Cancelled,
            () = sleep_until(deadline) => break ShellEnd::TimedOut,
            status = child.wait() => break end_of(status?),
            () = out.read_some(), if !out.eof => {}
        }
    };
    if matches!(end, ShellEnd::TimedOut | ShellEnd::Cancelled) {
        stop_group(&mut child, &mut group, &mut out, spec.kill_grace).await;
    } else {
        // The shell is gone; take down whatever it left running in its group.
        group.kill(Signal::SIGKILL);
    }
    // The group is dead and reaped; stop the guard from signalling a recycled id later.
    group.0 = None;
    let reached_eof = out.drain(DRAIN_LIMIT).await;
    if let Some(err) = out.tee_error.take() {
        return Err(err);
    }
    out.tee.flush()?;
    Ok(ShellRun {
        end,
        total_bytes: out.tail.total(),
        output: out.tail.finish(),
        output_left_open: !reached_eof,
        elapsed: started.elapsed(),
    })
}

/// SIGTERM to the group, up to `grace` for the shell to exit (still reading output, so nobody
/// blocks on a full pipe), then SIGKILL to the group and the shell.
async fn stop_group(
    child: &mut Child,
    group: &mut GroupGuard,
    out: &mut Output<'_>,
    grace: Duration,
) {
    group.kill(Signal::SIGTERM);
    let grace_end = Instant::now() + grace;
    loop {
        tokio::select! {
            _ = child.wait() => break,
            () = sleep_until(grace_end) => break,
            () = out.read_some(), if !out.eof => {}
        }
    }
    group.kill(Signal::SIGKILL);
    let _ = child.start_kill();
    // SIGKILL cannot be ignored; the bound only guards against a wedged kernel.
    if timeout(Duration::from_secs(5), child.wait()).await.is_err() {
        tracing::warn!("a killed command did not exit within 5 s");
    }
}

fn end_of(status: ExitStatus) -> ShellEnd {
    match (status.code(), status.signal()) {
        (Some(code), _) => ShellEnd::Exited(code),
        (None, Some(signal)) => ShellEnd::Signalled(signal),
        (None, None) => ShellEnd::Signalled(0),
    }
}

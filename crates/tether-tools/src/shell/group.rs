//! What every child process of tether shares, whatever it runs: spawned in its own process
//! group, stdin from `/dev/null` unless the caller hands it bytes, killed (the whole group) on
//! drop, on timeout and on cancellation, and its output read into a bounded tail.
//!
//! [`super::run_shell`] and [`super::run_program`] only say what to spawn and which pipes to
//! read; the supervision is here, once.

use std::io::{self, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures_util::future::{FutureExt as _, select_all};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tether_sandbox::Sandbox;
use tokio::io::{AsyncReadExt, AsyncWriteExt as _};
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::ShellEnd;
use crate::tail::TailBuffer;

/// How long output is still read after the process and its group are gone (only a process that
/// left the group can still hold a pipe open).
const DRAIN_LIMIT: Duration = Duration::from_millis(500);

/// What a child's stdin is.
pub(super) enum Stdin {
    /// `/dev/null`.
    Null,
    /// These bytes, then end-of-file.
    Bytes(Vec<u8>),
    /// A pipe the caller writes to (a conversation: [`super::LiveProgram`]).
    Piped,
}

impl Stdin {
    /// `/dev/null` for `None`, else the bytes.
    pub(super) fn of(input: Option<Vec<u8>>) -> Self {
        input.map_or(Stdin::Null, Stdin::Bytes)
    }
}

/// A child running in its own process group, killed with its group if dropped midway.
pub(super) struct Group {
    child: Child,
    pgid: Option<Pid>,
    started: Instant,
}

impl Group {
    /// Spawns `cmd` (program, arguments and output pipes already set) in `cwd`, in a new
    /// process group, without the variables in `env_remove` and with
    /// [`AGENT_MARK`](crate::process::AGENT_MARK) set, in `sandbox` when there is one. Its
    /// stdin is as `stdin` says.
    pub(super) fn spawn(
        mut cmd: Command,
        cwd: &Path,
        env_remove: &[String],
        stdin: Stdin,
        sandbox: Option<&Sandbox>,
    ) -> io::Result<Self> {
        cmd.current_dir(cwd)
            .stdin(match stdin {
                Stdin::Null => Stdio::null(),
                Stdin::Bytes(_) | Stdin::Piped => Stdio::piped(),
            })
            .process_group(0)
            .kill_on_drop(true);
        for name in env_remove {
            cmd.env_remove(name);
        }
        cmd.env(crate::process::AGENT_MARK, std::process::id().to_string());
        if let Some(sandbox) = sandbox {
            sandbox
                .confine(cmd.as_std_mut())
                .map_err(io::Error::other)?;
        }
        let started = Instant::now();
        let mut child = cmd.spawn().map_err(|e| {
            // The sandbox's setup in the child reports only an OS error code, one exec itself
            // never gives: say where it came from.
            let from_setup = matches!(
                e.raw_os_error(),
                Some(
                    nix::libc::EPERM
                        | nix::libc::EINVAL
                        | nix::libc::ENOSPC
                        | nix::libc::EUSERS
                        | nix::libc::ENOSYS
                        | nix::libc::EALREADY
                )
            );
            let hidden = sandbox
                .is_some()
                .then(|| hidden_program(cmd.as_std().get_program(), &e, cwd))
                .flatten();
            if let Some(installed) = hidden {
                io::Error::new(
                    e.kind(),
                    format!(
                        "{e}: it is installed at {} but not in sight in the sandbox; name the \
                         directory it is installed in under [sandbox] readable in tether.toml",
                        installed.display()
                    ),
                )
            } else if sandbox.is_some() && from_setup {
                io::Error::new(
                    e.kind(),
                    format!("{e} (while entering the sandbox: see [sandbox] in tether.toml)"),
                )
            } else {
                e
            }
        })?;
        // `cmd` holds our copies of the pipes' write ends; it is dropped here so the pipes reach
        // EOF once the child's processes close theirs.
        drop(cmd);
        if let Stdin::Bytes(input) = stdin
            && let Some(mut stdin) = child.stdin.take()
        {
            tokio::spawn(async move {
                // A child that exits without reading its input is not an error of ours.
                let _ = stdin.write_all(&input).await;
            });
        }
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        Ok(Self {
            child,
            pgid,
            started,
        })
    }

    /// The child's process id, while it runs.
    pub(super) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// The child (its pipes, its exit).
    pub(super) fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Stops the group (SIGTERM, up to `grace`, SIGKILL) and reaps the child; nothing is
    /// signalled after this.
    pub(super) async fn terminate(&mut self, grace: Duration) {
        if self.pgid.is_none() {
            return;
        }
        self.stop(&mut [], grace).await;
        self.pgid = None;
    }

    fn kill(&mut self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (nobody left in the group) is the expected outcome once it is done.
            let _ = killpg(pgid, signal);
        }
    }

    /// Waits for the child while reading `outputs`, until it exits, `timeout` has passed since
    /// it was spawned, or `cancel` fires; then stops the group (SIGTERM, up to `grace`, SIGKILL), or kills what the
    /// child left running in it, and reads what is left of the output. Returns how it ended and
    /// whether every output reached EOF.
    pub(super) async fn supervise(
        mut self,
        outputs: &mut [Output<'_>],
        timeout: Duration,
        grace: Duration,
        cancel: &CancellationToken,
    ) -> io::Result<(ShellEnd, bool)> {
        let deadline = self.started + timeout;
        let end = loop {
            tokio::select! {
                biased;
                () = cancel.cancelled() => break ShellEnd::Cancelled,
                () = sleep_until(deadline) => break ShellEnd::TimedOut,
                status = self.child.wait() => break end_of(status?),
                () = read_any(outputs) => {}
            }
        };
        if matches!(end, ShellEnd::TimedOut | ShellEnd::Cancelled) {
            self.stop(outputs, grace).await;
        } else {
            // The child is gone; take down whatever it left running in its group.
            self.kill(Signal::SIGKILL);
        }
        // The group is dead and reaped; stop the drop guard from signalling a recycled id.
        self.pgid = None;
        let drain_end = Instant::now() + DRAIN_LIMIT;
        let mut reached_eof = true;
        for out in outputs.iter_mut() {
            reached_eof &= out.drain_until(drain_end).await;
        }
        Ok((end, reached_eof))
    }

    /// SIGTERM to the group, up to `grace` for the child to exit (still reading output, so
    /// nobody blocks on a full pipe), then SIGKILL to the group and the child.
    async fn stop(&mut self, outputs: &mut [Output<'_>], grace: Duration) {
        self.kill(Signal::SIGTERM);
        let grace_end = Instant::now() + grace;
        loop {
            tokio::select! {
                _ = self.child.wait() => break,
                () = sleep_until(grace_end) => break,
                () = read_any(outputs) => {}
            }
        }
        self.kill(Signal::SIGKILL);
        let _ = self.child.start_kill();
        // SIGKILL cannot be ignored; the bound only guards against a wedged kernel.
        if tokio::time::timeout(Duration::from_secs(5), self.child.wait())
            .await
            .is_err()
        {
            tracing::warn!("a killed command did not exit within 5 s");
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill(Signal::SIGKILL);
    }
}

/// One pipe of the child's output, read into a tail buffer (and a tee).
pub(super) struct Output<'t> {
    pipe: pipe::Receiver,
    tail: TailBuffer,
    tee: &'t mut (dyn Write + Send),
    tee_error: Option<io::Error>,
    eof: bool,
    buf: Box<[u8]>,
}

impl<'t> Output<'t> {
    /// Reads `reader`, keeping the last `cap` bytes and copying every byte to `tee`.
    pub(super) fn new(
        reader: io::PipeReader,
        cap: usize,
        tee: &'t mut (dyn Write + Send),
    ) -> io::Result<Self> {
        Ok(Self {
            pipe: pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?,
            tail: TailBuffer::new(cap),
            tee,
            tee_error: None,
            eof: false,
            buf: vec![0; 16 * 1024].into_boxed_slice(),
        })
    }

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

    /// Reads until EOF, or until `deadline`; returns whether EOF was reached.
    async fn drain_until(&mut self, deadline: Instant) -> bool {
        while !self.eof {
            tokio::select! {
                () = self.read_some() => {}
                () = sleep_until(deadline) => return false,
            }
        }
        true
    }

    /// The kept tail and the byte count, or the error writing to the tee (after the run).
    pub(super) fn finish(mut self) -> io::Result<(String, u64)> {
        if let Some(err) = self.tee_error.take() {
            return Err(err);
        }
        self.tee.flush()?;
        let total = self.tail.total();
        Ok((self.tail.finish(), total))
    }
}

/// Reads some output from whichever pipe has it first; never completes once all are at EOF.
async fn read_any(outputs: &mut [Output<'_>]) {
    let reads: Vec<_> = outputs
        .iter_mut()
        .filter(|out| !out.eof)
        .map(|out| out.read_some().boxed())
        .collect();
    if reads.is_empty() {
        std::future::pending::<()>().await;
    } else {
        select_all(reads).await;
    }
}

fn end_of(status: ExitStatus) -> ShellEnd {
    match (status.code(), status.signal()) {
        (Some(code), _) => ShellEnd::Exited(code),
        (None, Some(signal)) => ShellEnd::Signalled(signal),
        (None, None) => ShellEnd::Signalled(0),
    }
}

/// Where `program` is installed when the sandbox hid it: a start that failed as "not found" or
/// "permission denied" for a program this process finds (by its path, relative to `cwd`, or on
/// `PATH`) — the sandbox did not show it, or something it needs.
fn hidden_program(
    program: &std::ffi::OsStr,
    e: &io::Error,
    cwd: &Path,
) -> Option<std::path::PathBuf> {
    if !matches!(
        e.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::PermissionDenied
    ) {
        return None;
    }
    crate::process::locate(Path::new(program), cwd)
}

#[cfg(test)]
mod hidden_tests {
    use std::io;
    use std::path::Path;

    use super::hidden_program;

    #[test]
    fn a_program_found_here_but_not_started_there_is_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("bin")).unwrap();
        std::fs::write(dir.path().join("bin/agent"), "#!/bin/sh\n").unwrap();
        let missing = io::Error::from(io::ErrorKind::NotFound);
        let refused = io::Error::from(io::ErrorKind::PermissionDenied);
        let other = io::Error::from(io::ErrorKind::InvalidInput);
        let found = hidden_program("bin/agent".as_ref(), &missing, dir.path());
        assert_eq!(found, Some(dir.path().join("bin/agent")));
        assert!(hidden_program("bin/agent".as_ref(), &refused, dir.path()).is_some());
        assert_eq!(
            hidden_program("bin/agent".as_ref(), &other, dir.path()),
            None
        );
        assert_eq!(
            hidden_program("bin/nothing".as_ref(), &missing, dir.path()),
            None
        );
        // On PATH: `sh` is found wherever the system keeps it.
        let sh = hidden_program("sh".as_ref(), &missing, Path::new("/"));
        assert!(sh.is_some_and(|p| p.ends_with("sh")));
    }
}

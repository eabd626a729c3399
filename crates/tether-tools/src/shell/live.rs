//! [`LiveProgram`]: a program tether talks to while it runs (an agent speaking a protocol on
//! its stdin and stdout), supervised like every other child: its own process group, the
//! sandbox, the keys tether holds removed, stderr kept as a bounded tail, and the whole group
//! killed when it is stopped or dropped — closing its stdin is not enough, since some agents
//! never exit on end-of-file, and a wrapper killed alone can orphan the program it started.

use std::io;
use std::os::fd::OwnedFd;
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::net::unix::pipe;
use tokio::process::{ChildStdin, ChildStdout, Command};

use super::ProgramCommand;
use super::group::{Group, Stdin};
use crate::tail::TailBuffer;

/// A running program with its stdin and stdout handed to the caller.
pub struct LiveProgram {
    group: Group,
    stderr: Arc<Mutex<TailBuffer>>,
    grace: Duration,
}

impl std::fmt::Debug for LiveProgram {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveProgram").finish_non_exhaustive()
    }
}

impl LiveProgram {
    /// Starts `spec` (its `input` and `timeout` are not used: the caller talks to it and decides
    /// when it stops; `kill_grace` and `stderr_cap` apply).
    pub fn spawn(spec: &ProgramCommand) -> io::Result<Self> {
        let Some((program, args)) = spec.argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "no program to run (the command is empty)",
            ));
        };
        let (err_reader, err_writer) = io::pipe()?;
        let mut cmd = Command::new(program);
        cmd.args(args).stdout(Stdio::piped()).stderr(err_writer);
        cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
        let group = Group::spawn(
            cmd,
            &spec.cwd,
            &spec.env_remove,
            Stdin::Piped,
            spec.sandbox.as_deref(),
        )?;
        let stderr = Arc::new(Mutex::new(TailBuffer::new(spec.stderr_cap)));
        let mut pipe = pipe::Receiver::from_owned_fd(OwnedFd::from(err_reader))?;
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 8192];
            loop {
                match pipe.read(&mut buf).await {
                    Ok(0) => break,
                    Ok(n) => tail
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(&buf[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
        Ok(LiveProgram {
            group,
            stderr,
            grace: spec.kill_grace,
        })
    }

    /// Its stdin (once).
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.group.child_mut().stdin.take()
    }

    /// Its stdout (once).
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.group.child_mut().stdout.take()
    }

    /// Its process id, while it runs.
    pub fn id(&self) -> Option<u32> {
        self.group.id()
    }

    /// The tail of what it wrote to stderr so far.
    pub fn stderr_tail(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .finish()
    }

    /// Whether it has exited (its exit status, as text), without waiting.
    pub fn exited(&mut self) -> Option<String> {
        match self.group.child_mut().try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(e) => Some(e.to_string()),
        }
    }

    /// Waits up to `limit` for it to exit (its stdout closed, say); its exit status as text, or
    /// `None` when it is still running.
    pub async fn wait_exit(&mut self, limit: std::time::Duration) -> Option<String> {
        match tokio::time::timeout(limit, self.group.child_mut().wait()).await {
            Ok(Ok(status)) => Some(status.to_string()),
            Ok(Err(e)) => Some(e.to_string()),
            Err(_) => None,
        }
    }

    /// Stops its whole process group: SIGTERM, up to the grace period, then SIGKILL.
    pub async fn stop(&mut self) {
        self.group.terminate(self.grace).await;
    }
}

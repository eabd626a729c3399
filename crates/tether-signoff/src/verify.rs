//! Stage 1 of sign-off: the goal's `verify` command.
//!
//! It is the deterministic half of the check, so it runs before any model is asked and a failure
//! rejects the attempt at once. The command runs as `sh -c` in the workspace root with stdin
//! from `/dev/null`, in its own process group, under a timeout, and the whole group is killed on
//! timeout or cancellation (tether-tools' [`run_shell_tee`] does all of this). The agent and the
//! judge read only the last 4 KiB of output; the whole output goes to a log file, and its hash
//! lets the goal loop notice the same failure coming back.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use sha2::{Digest as _, Sha256};
use tether_tools::{ShellCommand, ShellEnd, run_shell_tee};
use tokio_util::sync::CancellationToken;

use super::SignoffError;

/// How much of the output's end the result keeps (what the agent and the judge read).
pub const TAIL_BYTES: usize = 4096;

/// Between SIGTERM and SIGKILL for a verify command that timed out or was cancelled.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How a goal's `verify` command ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VerifyResult {
    /// The command, as written in the plan.
    pub command: String,
    /// The exit code; `None` when it timed out or was killed by a signal.
    pub exit_code: Option<i32>,
    /// The signal that killed the shell, when one did (and it was not tether's timeout).
    pub signal: Option<i32>,
    /// Whether the timeout passed (the whole process group was killed).
    pub timed_out: bool,
    /// The last 4 KiB of stdout and stderr combined, prefixed `[… N bytes cut …]` if cut.
    pub tail: String,
    /// How many bytes of output there were in all.
    pub total_bytes: u64,
    /// `sha256:` and the hex digest of the whole output: the same output, the same hash.
    pub output_hash: String,
    /// The full output's log file, relative to the workspace root.
    pub log_path: String,
    /// How long it ran, in milliseconds.
    pub elapsed_ms: u64,
    /// How long it was allowed to run (`[loop] verify_timeout_secs`), in milliseconds.
    pub timeout_ms: u64,
}

impl VerifyResult {
    /// Whether the command exited 0 within its time.
    pub fn passed(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }

    /// How it ended, in a few words: `exited 0`, `timed out after 600 s`, `was killed by signal
    /// 9`.
    pub fn ending(&self) -> String {
        match (self.exit_code, self.signal) {
            // The limit, not the time taken: that includes the kill's grace period.
            _ if self.timed_out => format!(
                "timed out after {} (its process group was killed)",
                seconds(self.timeout_ms)
            ),
            (Some(code), _) => format!("exited {code}"),
            (None, Some(signal)) => format!("was killed by signal {signal}"),
            (None, None) => "ended without an exit code".to_owned(),
        }
    }
}

/// Writes to the log file and hashes what it writes.
struct HashingLog {
    file: BufWriter<File>,
    hash: Sha256,
}

impl Write for HashingLog {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.hash.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

/// What a verify command runs without, and in.
pub(crate) struct Confinement<'a> {
    /// tether's keys, removed from its environment.
    pub env_remove: &'a [String],
    /// The run's sandbox.
    pub sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
}

/// Runs `command` in `root` with `timeout`, writing the whole output to `log` (absolute) and
/// naming it `log_display` in the result. Errs if the log cannot be written or the command
/// cannot be started; a cancellation is [`SignoffError::Cancelled`].
pub(crate) async fn run(
    command: &str,
    root: &Path,
    timeout: Duration,
    log: &Path,
    log_display: String,
    child: Confinement<'_>,
    cancel: &CancellationToken,
) -> Result<VerifyResult, SignoffError> {
    let io_err = |cause| SignoffError::Io {
        what: "writing the verify log",
        path: log.to_owned(),
        cause,
    };
    if let Some(dir) = log.parent() {
        fs::create_dir_all(dir).map_err(io_err)?;
    }
    let mut tee = HashingLog {
        file: BufWriter::new(File::create(log).map_err(io_err)?),
        hash: Sha256::new(),
    };
    let spec = ShellCommand {
        command: command.to_owned(),
        cwd: root.to_owned(),
        timeout,
        kill_grace: KILL_GRACE,
        output_cap: TAIL_BYTES,
        env_remove: child.env_remove.to_vec(),
        sandbox: child.sandbox,
    };
    let run = run_shell_tee(&spec, cancel, &mut tee)
        .await
        .map_err(|cause| SignoffError::VerifyStart {
            command: command.to_owned(),
            cause,
        })?;
    let (exit_code, signal, timed_out) = match run.end {
        ShellEnd::Exited(code) => (Some(code), None, false),
        ShellEnd::Signalled(signal) => (None, Some(signal), false),
        ShellEnd::TimedOut => (None, None, true),
        ShellEnd::Cancelled => return Err(SignoffError::Cancelled),
    };
    Ok(VerifyResult {
        command: command.to_owned(),
        exit_code,
        signal,
        timed_out,
        tail: run.output,
        total_bytes: run.total_bytes,
        output_hash: hex_digest(tee.hash.finalize().as_slice()),
        log_path: log_display,
        elapsed_ms: u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX),
        timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
    })
}

/// `2 s`, or `0.5 s` for a limit that is not whole seconds.
fn seconds(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// `sha256:` and the lower-case hex of `digest`.
pub(crate) fn hex_digest(digest: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(7 + digest.len() * 2);
    out.push_str("sha256:");
    for byte in digest {
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 0xf)]));
    }
    out
}

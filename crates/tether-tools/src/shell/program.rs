//! [`run_program`]: a program run directly (no shell), for an executor that is an external
//! agent: its stdout is its answer and its stderr says why it failed, so the two are kept apart.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_sandbox::Sandbox;
use tokio::process::Command;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ShellEnd;
use super::group::{Group, Output};

/// A program to run with [`run_program`].
#[derive(Debug, Clone)]
pub struct ProgramCommand {
    /// The program and its arguments; an empty list cannot be started.
    pub argv: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Bytes written to its stdin, followed by end-of-file; `None` for `/dev/null`.
    pub input: Option<Vec<u8>>,
    /// When the whole process group is stopped.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL, at most.
    pub kill_grace: Duration,
    /// How many bytes of stdout are kept (the tail).
    pub stdout_cap: usize,
    /// How many bytes of stderr are kept (the tail).
    pub stderr_cap: usize,
    /// Environment variables removed before the program starts.
    pub env_remove: Vec<String>,
    /// Environment variables set for the program; a name also in `env_remove` is removed.
    pub env: Vec<(String, String)>,
    /// The sandbox the program runs in; `None` for tether's own programs.
    pub sandbox: Option<Arc<Sandbox>>,
}

/// The result of [`run_program`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramRun {
    /// How it ended.
    pub end: ShellEnd,
    /// The tail of stdout, prefixed `[… N bytes cut …]` if cut.
    pub stdout: String,
    /// The tail of stderr, prefixed the same way.
    pub stderr: String,
    /// From start to end, including the kill.
    pub elapsed: Duration,
}

/// Runs `spec` in its own process group, stopping the group when its timeout passes or `cancel`
/// fires, and killing what it left running when it exits.
///
/// Errors only if the program cannot be started (not found, not executable, no working
/// directory, an empty `argv`).
pub async fn run_program(
    spec: &ProgramCommand,
    cancel: &CancellationToken,
) -> io::Result<ProgramRun> {
    run_program_teed(spec, cancel, &mut io::sink()).await
}

/// [`run_program`], copying every byte of stdout to `stdout_tee` as it arrives (an agent's event
/// stream, parsed and recorded while the program runs).
pub async fn run_program_teed(
    spec: &ProgramCommand,
    cancel: &CancellationToken,
    stdout_tee: &mut (dyn std::io::Write + Send),
) -> io::Result<ProgramRun> {
    run_program_tees(spec, cancel, stdout_tee, &mut io::sink()).await
}

/// [`run_program_teed`], copying stderr to `stderr_tee` as it arrives too (an agent that reports
/// some failures only on stderr, watched while it runs).
pub async fn run_program_tees(
    spec: &ProgramCommand,
    cancel: &CancellationToken,
    stdout_tee: &mut (dyn std::io::Write + Send),
    stderr_tee: &mut (dyn std::io::Write + Send),
) -> io::Result<ProgramRun> {
    let started = Instant::now();
    let Some((program, args)) = spec.argv.split_first() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "no program to run (the command is empty)",
        ));
    };
    let (out_reader, out_writer) = io::pipe()?;
    let (err_reader, err_writer) = io::pipe()?;
    let mut cmd = Command::new(program);
    cmd.args(args).stdout(out_writer).stderr(err_writer);
    cmd.envs(spec.env.iter().map(|(k, v)| (k, v)));
    let group = Group::spawn(
        cmd,
        &spec.cwd,
        &spec.env_remove,
        super::group::Stdin::of(spec.input.clone()),
        spec.sandbox.as_deref(),
    )?;
    let mut outputs = [
        Output::new(out_reader, spec.stdout_cap, stdout_tee)?,
        Output::new(err_reader, spec.stderr_cap, stderr_tee)?,
    ];
    let (end, _) = group
        .supervise(&mut outputs, spec.timeout, spec.kill_grace, cancel)
        .await?;
    let [out, err] = outputs;
    Ok(ProgramRun {
        end,
        stdout: out.finish()?.0,
        stderr: err.finish()?.0,
        elapsed: started.elapsed(),
    })
}

//! `run_program`: a program run without a shell, its stdin given or empty, stdout and stderr
//! kept apart, and its process group stopped on timeout, cancellation, a dropped call, and its
//! end — the same supervision as `bash`, through the same code.

use std::time::{Duration, Instant};

use tether_tools::{ProgramCommand, ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use super::bash::{assert_gone, pid_file};
use super::{CALL_LIMIT, Fixture};
use tether_testkit::wait_until_async;

fn program(fx: &Fixture, argv: &[&str]) -> ProgramCommand {
    ProgramCommand {
        argv: argv.iter().map(|a| (*a).to_owned()).collect(),
        cwd: fx.root.clone(),
        input: None,
        timeout: CALL_LIMIT,
        kill_grace: Duration::from_secs(1),
        stdout_cap: 1024,
        stderr_cap: 1024,
        env_remove: Vec::new(),
        env: Vec::new(),
        sandbox: None,
    }
}

#[tokio::test]
async fn stdout_and_stderr_are_kept_apart_and_the_exit_code_reported() {
    let fx = Fixture::new();
    let spec = program(&fx, &["sh", "-c", "echo out; echo err >&2; pwd; exit 3"]);
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert_eq!(run.end, ShellEnd::Exited(3));
    assert_eq!(run.stdout, format!("out\n{}\n", fx.root.display()));
    assert_eq!(run.stderr, "err\n");
}

#[tokio::test]
async fn input_is_written_to_stdin_and_otherwise_stdin_is_empty() {
    let fx = Fixture::new();
    let mut spec = program(&fx, &["cat"]);
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert_eq!((run.end, run.stdout.as_str()), (ShellEnd::Exited(0), ""));
    spec.input = Some(b"the prompt".to_vec());
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert_eq!(run.stdout, "the prompt");
}

#[tokio::test]
async fn only_the_tail_of_stdout_is_kept() {
    let fx = Fixture::new();
    let mut spec = program(&fx, &["seq", "1", "20000"]);
    spec.stdout_cap = 100;
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert!(run.stdout.starts_with("[… "), "{}", run.stdout);
    assert!(run.stdout.ends_with("19999\n20000\n"), "{}", run.stdout);
}

#[tokio::test]
async fn a_missing_program_or_an_empty_command_cannot_start() {
    let fx = Fixture::new();
    let cancel = CancellationToken::new();
    let missing = program(&fx, &["definitely-not-a-program-here"]);
    assert!(run_program(&missing, &cancel).await.is_err());
    let empty = program(&fx, &[]);
    let err = run_program(&empty, &cancel).await.unwrap_err();
    assert_eq!(err.to_string(), "no program to run (the command is empty)");
}

#[tokio::test]
async fn a_timeout_stops_the_group() {
    let fx = Fixture::new();
    let mut spec = program(&fx, &["sh", "-c", "sleep 1000 & echo $! > bg.pid; wait"]);
    spec.timeout = Duration::from_millis(300);
    let started = Instant::now();
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert_eq!(run.end, ShellEnd::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_gone(pid_file(&fx).unwrap()).await;
}

#[tokio::test]
async fn cancellation_stops_the_group() {
    let fx = Fixture::new();
    let spec = program(&fx, &["sh", "-c", "sleep 1000 & echo $! > bg.pid; wait"]);
    let token = CancellationToken::new();
    let cancel = async {
        wait_until_async("the program to start", CALL_LIMIT, || pid_file(&fx))
            .await
            .unwrap();
        token.cancel();
    };
    let (run, ()) = tokio::join!(run_program(&spec, &token), cancel);
    assert_eq!(run.unwrap().end, ShellEnd::Cancelled);
    assert_gone(pid_file(&fx).unwrap()).await;
}

#[tokio::test]
async fn background_jobs_are_stopped_when_the_program_ends() {
    let fx = Fixture::new();
    let spec = program(&fx, &["sh", "-c", "sleep 1000 & echo $! > bg.pid"]);
    let run = run_program(&spec, &CancellationToken::new()).await.unwrap();
    assert_eq!(run.end, ShellEnd::Exited(0));
    assert_gone(pid_file(&fx).unwrap()).await;
}

#[tokio::test]
async fn dropping_the_call_stops_the_group() {
    let fx = Fixture::new();
    let spec = program(&fx, &["sh", "-c", "sleep 1000 & echo $! > bg.pid; wait"]);
    let token = CancellationToken::new();
    tokio::select! {
        run = run_program(&spec, &token) => panic!("the program should still run: {run:?}"),
        started = wait_until_async("the program to start", CALL_LIMIT, || pid_file(&fx)) => {
            started.unwrap();
        }
    }
    assert_gone(pid_file(&fx).unwrap()).await;
}

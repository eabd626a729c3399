//! The `command` executor: the prompt reaches the program as an argument or on stdin, its stdout
//! is the final message, a failure says why with the end of its stderr, a timeout or a
//! cancellation stops it, and the variables it is told to go without are not in its environment.

use std::time::{Duration, Instant};

use tether_agent::{
    AgentEvent, CommandExecutor, ExecError, Executor, TurnObserver, TurnOutcome, TurnRequest,
};
use tokio_util::sync::CancellationToken;

struct Ignore;

impl TurnObserver for Ignore {
    fn event(&self, _event: AgentEvent) {}
}

fn request(dir: &std::path::Path) -> TurnRequest {
    TurnRequest {
        iteration: 1,
        prompt: "Do the task.".into(),
        transcript: dir.join("runs/r/iteration-0001.jsonl"),
        access: tether_agent::Access::Work,
        context: tether_agent::Context::Fresh,
    }
}

async fn turn(
    dir: &std::path::Path,
    argv: &[&str],
    timeout: Duration,
    cancel: CancellationToken,
) -> Result<TurnOutcome, ExecError> {
    let argv = argv.iter().map(|a| (*a).to_owned()).collect();
    let exec = CommandExecutor::new(argv, dir.to_owned(), timeout);
    exec.run_turn(request(dir), &Ignore, cancel).await
}

#[tokio::test]
async fn the_prompt_goes_in_as_an_argument_or_on_stdin_and_stdout_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let limit = Duration::from_secs(30);
    let arg = turn(
        dir.path(),
        &["sh", "-c", "echo \"got: $1\"", "sh", "{prompt}"],
        limit,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(arg.final_message, "got: Do the task.\n");
    let stdin = turn(dir.path(), &["cat"], limit, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(stdin.final_message, "Do the task.");
    let transcript =
        std::fs::read_to_string(dir.path().join("runs/r/iteration-0001.jsonl")).unwrap();
    assert_eq!(
        transcript,
        "{\"role\":\"user\",\"content\":\"Do the task.\"}\n\
         {\"role\":\"assistant\",\"content\":\"Do the task.\"}\n"
    );
}

#[tokio::test]
async fn a_failing_program_reports_its_exit_and_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let err = turn(
        dir.path(),
        &["sh", "-c", "echo partial; echo 'no key' >&2; exit 3"],
        Duration::from_secs(30),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::Model(inner) = err else {
        panic!("expected a model error, got {err:?}")
    };
    assert_eq!(inner.to_string(), "`sh` exited with exit status: 3: no key");
    let missing = turn(
        dir.path(),
        &["definitely-not-a-program-here"],
        Duration::from_secs(30),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    assert!(
        missing.to_string().contains("the agent's model failed"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_timeout_and_a_cancellation_stop_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let err = turn(
        dir.path(),
        &["sleep", "1000"],
        Duration::from_millis(200),
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::Model(inner) = err else {
        panic!("expected a model error, got {err:?}")
    };
    assert_eq!(
        inner.to_string(),
        "`sleep` ran longer than 0 s and was killed"
    );
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = turn(
        dir.path(),
        &["sleep", "1000"],
        Duration::from_secs(600),
        cancel,
    )
    .await
    .unwrap_err();
    assert!(matches!(err, ExecError::Cancelled), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn the_program_starts_without_the_variables_it_must_not_see() {
    // Cargo sets it for every test process, so the program would inherit it.
    assert!(std::env::var_os("CARGO_MANIFEST_DIR").is_some());
    let dir = tempfile::tempdir().unwrap();
    let argv: Vec<String> = ["sh", "-c", "echo \"dir=${CARGO_MANIFEST_DIR:-unset}\""]
        .iter()
        .map(|a| (*a).to_owned())
        .collect();
    let limit = Duration::from_secs(30);
    let exec = |vars: Vec<String>| {
        CommandExecutor::new(argv.clone(), dir.path().to_owned(), limit).without_vars(vars)
    };
    let kept = exec(Vec::new())
        .run_turn(request(dir.path()), &Ignore, CancellationToken::new())
        .await
        .unwrap();
    assert_ne!(kept.final_message, "dir=unset\n");
    let removed = exec(vec!["CARGO_MANIFEST_DIR".to_owned()])
        .run_turn(request(dir.path()), &Ignore, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(removed.final_message, "dir=unset\n");
}

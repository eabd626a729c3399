use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::*;

fn executor() -> CodexExecutor {
    let settings = CliSettings {
        args: vec!["-m".into(), "gpt-5-codex".into()],
        tether: PathBuf::from("/bin/te\"ther"),
        ..crate::cli::test_support::settings("codex")
    };
    CodexExecutor::new(settings, Arc::new(|| Some("r-1".to_owned())))
}

#[test]
fn a_turn_runs_codex_exec_with_tethers_server_and_the_prompt_on_stdin() {
    let argv = executor().turn_argv(Access::Work, None);
    insta::assert_debug_snapshot!(argv);
}

#[test]
fn a_continuing_turn_resumes_its_thread_before_the_prompt() {
    let argv = executor().turn_argv(Access::Work, Some("t-1"));
    assert_eq!(argv[argv.len() - 3..], ["resume", "t-1", "-"]);
}

#[test]
fn a_read_only_turn_runs_in_codexs_read_only_sandbox() {
    let argv = executor().turn_argv(Access::ReadOnly, None);
    let at = argv.iter().position(|a| a == "-s").unwrap();
    assert_eq!(argv[at + 1], "read-only");
}

fn run_of(end: ShellEnd, stderr: &str) -> ProgramRun {
    ProgramRun {
        end,
        stdout: String::new(),
        stderr: stderr.to_owned(),
        elapsed: Duration::from_secs(1),
    }
}

/// What a turn that ran as `run` came to: stopped early (`cancelled`: its token fired), or its
/// outcome.
fn ended(run: ProgramRun, seen: Seen, cancelled: bool) -> Result<TurnOutcome, ExecError> {
    let executor = executor();
    executor.cli.check_end(run.end, cancelled)?;
    executor.outcome(run, seen)
}

fn completed() -> Seen {
    Seen {
        final_message: "Done.".into(),
        completed: true,
        failure: Some("Reconnecting... 1/5".into()),
        tool_calls: 2,
        input_tokens: 20,
        cached_input_tokens: 0,
        output_tokens: 10,
    }
}

#[test]
fn a_completed_turn_is_the_outcome_even_after_a_retried_error() {
    let outcome = ended(run_of(ShellEnd::Exited(0), ""), completed(), false).unwrap();
    assert_eq!(
        outcome,
        TurnOutcome {
            final_message: "Done.".into(),
            tool_calls: 2,
            input_tokens: 20,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 10,
            cost_usd: None,
        }
    );
}

#[test]
fn a_failed_turn_is_a_usage_limit_a_failure_a_timeout_or_a_cancel() {
    let failed = |message: &str| Seen {
        failure: Some(message.to_owned()),
        ..Seen::default()
    };
    let limit = ended(
        run_of(ShellEnd::Exited(1), ""),
        failed("exceeded retry limit, last status: 429 Too Many Requests"),
        false,
    );
    assert!(matches!(limit, Err(ExecError::UsageLimit(_))), "{limit:?}");
    let other = ended(run_of(ShellEnd::Exited(1), ""), failed("boom"), false);
    let Err(ExecError::Model(e)) = other else {
        panic!("{other:?}")
    };
    assert_eq!(e.to_string(), "Codex failed (exit status 1): boom");
    let silent = ended(
        run_of(ShellEnd::Exited(2), "error: unexpected argument"),
        Seen::default(),
        false,
    );
    let Err(ExecError::Model(e)) = silent else {
        panic!("{silent:?}")
    };
    assert!(
        e.to_string().contains("stderr: error: unexpected argument"),
        "{e}"
    );
    let timeout = ended(run_of(ShellEnd::TimedOut, ""), Seen::default(), false);
    let Err(ExecError::Model(e)) = timeout else {
        panic!("{timeout:?}")
    };
    assert_eq!(e.to_string(), "Codex ran longer than 60 s and was killed");
    let cancelled = ended(run_of(ShellEnd::Cancelled, ""), completed(), true);
    assert!(
        matches!(cancelled, Err(ExecError::Cancelled)),
        "{cancelled:?}"
    );
}

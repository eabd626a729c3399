//! `bash`: exit codes, combined output and its cap, no stdin, and — most of all — that nothing
//! a command started survives a timeout, a cancellation, a dropped call, or the command's end.

use std::time::{Duration, Instant};

use nix::sys::signal::kill;
use nix::unistd::Pid;
use serde_json::json;
use tether_tools::{ToolContext, ToolOptions};
use tokio_util::sync::CancellationToken;

use tether_testkit::wait_until_async;

use super::{CALL_LIMIT, Fixture};

/// Whether `pid` is a live process (a zombie waiting for a reaper counts as gone: the PID 1 of
/// some containers never reaps orphans).
fn alive(pid: i32) -> bool {
    if kill(Pid::from_raw(pid), None).is_err() {
        return false;
    }
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => !std::path::Path::new("/proc/self").exists(),
    }
}

pub(super) async fn assert_gone(pid: i32) {
    wait_until_async(
        &format!("process {pid} to be gone"),
        Duration::from_secs(10),
        || (!alive(pid)).then_some(()),
    )
    .await
    .unwrap();
}

fn first_pid(content: &str) -> i32 {
    let line = content.lines().next().unwrap_or_default();
    line.trim()
        .parse()
        .unwrap_or_else(|_| panic!("expected a pid on the first line:\n{content}"))
}

pub(super) fn pid_file(fx: &Fixture) -> Option<i32> {
    std::fs::read_to_string(fx.root.join("bg.pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[tokio::test]
async fn exit_codes_and_combined_output() {
    let fx = Fixture::new();
    let out = fx
        .call(
            "bash",
            json!({"command": "echo out; echo err >&2; echo out2; exit 3"}),
        )
        .await;
    assert!(out.output.is_error);
    assert_eq!(out.output.content, "out\nerr\nout2\n[exit code 3]");
    assert!(
        out.summary
            .starts_with("bash: echo out; echo err >&2; echo out2; exit 3 (exit 3, "),
        "{}",
        out.summary
    );
    assert!(out.summary.ends_with(" s)"), "{}", out.summary);

    assert_eq!(
        fx.ok("bash", json!({"command": "printf hi"})).await,
        "hi\n[exit code 0]"
    );
    assert_eq!(
        fx.ok("bash", json!({"command": "true"})).await,
        "(no output)\n[exit code 0]"
    );
    let killed = fx.err("bash", json!({"command": "kill -9 $$"})).await;
    assert_eq!(killed, "(no output)\n[killed by signal 9 (SIGKILL)]");
}

#[tokio::test]
async fn runs_in_the_workspace_root() {
    let fx = Fixture::new();
    let out = fx.ok("bash", json!({"command": "pwd"})).await;
    assert_eq!(out, format!("{}\n[exit code 0]", fx.root.display()));
}

#[tokio::test]
async fn the_output_cap_keeps_the_tail() {
    let fx = Fixture::with_options(&ToolOptions {
        bash_output_cap: 1000,
        ..ToolOptions::default()
    });
    let out = fx.ok("bash", json!({"command": "seq 1 100000"})).await;
    assert!(out.ends_with("99999\n100000\n[exit code 0]"), "{out}");
    let (marker, body) = out.split_once('\n').unwrap();
    let cut: usize = marker
        .strip_prefix("[… ")
        .and_then(|rest| rest.strip_suffix(" bytes cut …]"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("expected a cut marker, got {marker:?}"));
    let kept = body.strip_suffix("[exit code 0]").unwrap();
    assert!(kept.len() <= 1000 && kept.len() > 700, "{}", kept.len());
    assert!(kept.starts_with(|c: char| c.is_ascii_digit()) && body.lines().all(|l| !l.is_empty()));
    let total: usize = (1..=100_000).map(|i: u32| i.to_string().len() + 1).sum();
    assert_eq!(cut + kept.len(), total);
}

#[tokio::test]
async fn stdin_is_null() {
    let fx = Fixture::new();
    let started = Instant::now();
    assert_eq!(
        fx.ok("bash", json!({"command": "cat", "timeout_secs": 60}))
            .await,
        "(no output)\n[exit code 0]"
    );
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let out = fx
        .ok(
            "bash",
            json!({"command": "read line; echo \"read exit $?\""}),
        )
        .await;
    assert_eq!(out, "read exit 1\n[exit code 0]");
}

#[tokio::test]
async fn a_timeout_kills_the_group_including_a_grandchild_that_ignores_term() {
    let fx = Fixture::new();
    let started = Instant::now();
    let command = "(trap '' TERM; exec sleep 1000) & echo $!; wait";
    let out = fx
        .call("bash", json!({"command": command, "timeout_secs": 1}))
        .await;
    let elapsed = started.elapsed();
    assert!(out.output.is_error);
    assert!(
        out.output.content.ends_with(
            "\n[timed out after 1 s; the command and every process it started were killed]"
        ),
        "{}",
        out.output.content
    );
    assert!(
        out.summary.ends_with("(timed out after 1 s)"),
        "{}",
        out.summary
    );
    assert!(elapsed >= Duration::from_secs(1), "{elapsed:?}");
    assert!(
        elapsed < Duration::from_secs(4),
        "returned {elapsed:?} after a 1 s timeout"
    );
    assert_gone(first_pid(&out.output.content)).await;
}

#[tokio::test]
async fn a_shell_ignoring_term_is_killed_after_the_grace() {
    let grace = Duration::from_millis(500);
    let fx = Fixture::with_options(&ToolOptions {
        bash_kill_grace: grace,
        ..ToolOptions::default()
    });
    let started = Instant::now();
    let command = "trap '' TERM; sleep 1000 & echo $!; wait; echo still here";
    let out = fx
        .call("bash", json!({"command": command, "timeout_secs": 1}))
        .await;
    let elapsed = started.elapsed();
    assert!(
        out.output.content.contains("[timed out after 1 s"),
        "{}",
        out.output.content
    );
    assert!(
        !out.output.content.contains("still here"),
        "{}",
        out.output.content
    );
    assert!(elapsed >= Duration::from_secs(1) + grace, "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    assert_gone(first_pid(&out.output.content)).await;
}

#[tokio::test]
async fn background_jobs_are_stopped_when_the_command_finishes() {
    let fx = Fixture::new();
    let started = Instant::now();
    let out = fx
        .ok("bash", json!({"command": "sleep 1000 & echo $!"}))
        .await;
    assert!(out.ends_with("\n[exit code 0]"), "{out}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_gone(first_pid(&out)).await;
}

#[tokio::test]
async fn cancellation_kills_the_group_and_says_so() {
    let fx = Fixture::new();
    let token = CancellationToken::new();
    let ctx = ToolContext::new(token.clone());
    let args = json!({"command": "sleep 1000 & echo $! > bg.pid; wait", "timeout_secs": 600});
    let started = Instant::now();
    let cancel = async {
        wait_until_async("the command to start", CALL_LIMIT, || pid_file(&fx))
            .await
            .unwrap();
        token.cancel();
    };
    let (out, ()) = tokio::join!(fx.call_with("bash", args, &ctx), cancel);
    assert!(out.output.is_error);
    assert_eq!(
        out.output.content,
        "(no output)\n[cancelled; the command and every process it started were killed]"
    );
    assert!(
        out.summary
            .starts_with("bash: sleep 1000 & echo $! > bg.pid; wait (cancelled after "),
        "{}",
        out.summary
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_gone(pid_file(&fx).unwrap()).await;
}

#[tokio::test]
async fn dropping_the_call_kills_the_group() {
    let fx = Fixture::new();
    let ctx = ToolContext::default();
    let args = json!({"command": "sleep 1000 & echo $! > bg.pid; wait", "timeout_secs": 600});
    tokio::select! {
        out = fx.call_with("bash", args, &ctx) => panic!("the command should still run: {out:?}"),
        started = wait_until_async("the command to start", CALL_LIMIT, || pid_file(&fx)) => {
            started.unwrap();
        }
    }
    assert_gone(pid_file(&fx).unwrap()).await;
}

#[tokio::test]
async fn a_timeout_above_the_maximum_is_lowered_with_a_note() {
    let fx = Fixture::with_options(&ToolOptions {
        bash_max_timeout: Duration::from_secs(5),
        ..ToolOptions::default()
    });
    let out = fx
        .ok("bash", json!({"command": "echo hi", "timeout_secs": 1000}))
        .await;
    assert_eq!(
        out,
        "[timeout_secs 1000 is above the limit of 5; used 5]\nhi\n[exit code 0]"
    );
}

#[tokio::test]
async fn bad_arguments_are_errors_for_the_model() {
    let fx = Fixture::new();
    assert_eq!(
        fx.err("bash", json!({"command": "  "})).await,
        "`command` is empty; give a shell command to run"
    );
    assert_eq!(
        fx.err("bash", json!({"command": "true", "timeout_secs": 0}))
            .await,
        "invalid arguments for `bash`: field `timeout_secs` must be at least 1, got 0"
    );
}

#[tokio::test]
async fn configured_variables_are_removed_from_the_environment() {
    assert!(
        std::env::var("CARGO_PKG_NAME").is_ok(),
        "cargo sets CARGO_PKG_NAME for tests"
    );
    let command = json!({"command": "echo \"[${CARGO_PKG_NAME-unset}]\""});
    let plain = Fixture::new();
    assert_eq!(
        plain.ok("bash", command.clone()).await,
        "[tether-tools]\n[exit code 0]"
    );
    let scrubbed = Fixture::with_options(&ToolOptions {
        bash_env_remove: vec!["CARGO_PKG_NAME".into()],
        ..ToolOptions::default()
    });
    assert_eq!(scrubbed.ok("bash", command).await, "[unset]\n[exit code 0]");
}

#[tokio::test]
async fn the_tee_gets_every_byte_while_the_result_keeps_the_tail() {
    let fx = Fixture::new();
    let spec = tether_tools::ShellCommand {
        command: "seq 1 20000; echo done >&2; exit 4".to_owned(),
        cwd: fx.root.clone(),
        timeout: CALL_LIMIT,
        kill_grace: Duration::from_secs(1),
        output_cap: 100,
        env_remove: Vec::new(),
        sandbox: None,
    };
    let mut log = Vec::new();
    let run = tether_tools::run_shell_tee(&spec, &CancellationToken::new(), &mut log)
        .await
        .unwrap();
    assert_eq!(run.end, tether_tools::ShellEnd::Exited(4));
    let mut expected: String = (1..=20_000).map(|i| format!("{i}\n")).collect();
    expected.push_str("done\n");
    assert_eq!(String::from_utf8(log).unwrap(), expected);
    assert_eq!(run.total_bytes, expected.len() as u64);
    assert!(
        run.output.ends_with("19999\n20000\ndone\n"),
        "{}",
        run.output
    );
    assert!(run.output.len() < 200, "{}", run.output);
}

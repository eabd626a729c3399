//! Stage 1: a failing or hanging verify rejects at once, with no model call, and leaves nothing
//! running.

use std::time::Duration;

use tether_model::scripted::{Script, Turn};
use tether_signoff::SignoffOutcome;
use tether_testkit::wait_until_async;
use tokio_util::sync::CancellationToken;

use crate::common::{Fx, scripted};

#[tokio::test]
async fn a_failing_verify_rejects_without_asking_the_judge() {
    let fx = Fx::new();
    fx.write(
        "src/lib.rs",
        "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
    );
    let script = Script::turns([]).then_repeat(Turn::text("{\"verdict\":\"accept\"}"));
    let outcome = fx.complete(Some(scripted(&script))).await;
    assert_eq!(script.served(), 0, "no judge session when verify fails");
    let SignoffOutcome::Rejected {
        reason,
        missing,
        verify,
        judge_unavailable,
        judge_model,
        transcript,
        attempt,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert!(
        reason.starts_with("verify failed: `sh check.sh` exited 1 (output "),
        "{reason}"
    );
    assert_eq!(missing.len(), 1);
    assert_eq!(
        missing[0],
        "the verify command `sh check.sh` must pass (it exited 1; its output is in \
         .tether/signoff/verify-add-1.log)"
    );
    assert!(!judge_unavailable);
    assert_eq!((judge_model, transcript, *attempt), (&None, &None, 1));
    let v = verify.as_ref().unwrap();
    assert_eq!((v.exit_code, v.timed_out), (Some(1), false));
    assert_eq!(v.log_path, ".tether/signoff/verify-add-1.log");
    assert!(fx.root().join(&v.log_path).is_file());
    assert!(!fx.root().join(".tether/signoff/judge-add-1.jsonl").exists());

    assert_eq!(fx.status("add"), "active");
    let log = fx.last_log();
    assert!(
        log.contains(" add sign-off rejected: verify failed: `sh check.sh` exited 1 (output "),
        "{log}"
    );
    let record = &fx.verdicts()[0].decision;
    assert_eq!((record.verify_exit, record.attempt), (Some(1), 1));
    assert_eq!(record.verdict, tether_store::Verdict::Reject);

    // The same failure gives the same hash; the next attempt (after a change that does not
    // fix it: an unchanged tree is not checked again) is number 2.
    fx.write("NOTES.md", "tried again\n");
    let again = fx.complete(Some(scripted(&script))).await;
    let second = again.verify().unwrap();
    assert_eq!(second.output_hash, v.output_hash);
    assert_eq!(second.log_path, ".tether/signoff/verify-add-2.log");
    assert_eq!(script.served(), 0);
}

#[tokio::test]
async fn the_whole_output_is_logged_and_hashed_while_the_result_keeps_4_kib() {
    let fx = Fx::new();
    fx.write(
        "check.sh",
        "seq 1 50000; echo 'the real error' >&2; exit 3\n",
    );
    let outcome = fx.complete(None).await;
    let v = outcome.verify().unwrap();
    let log = fx.read(&v.log_path);
    let mut expected: String = (1..=50_000).map(|i| format!("{i}\n")).collect();
    expected.push_str("the real error\n");
    assert_eq!(log, expected);
    assert_eq!(v.total_bytes, expected.len() as u64);
    assert!(
        v.tail.ends_with("49999\n50000\nthe real error\n"),
        "{}",
        v.tail
    );
    assert!(v.tail.len() < 4096 + 40, "{}", v.tail.len());
    assert!(v.output_hash.starts_with("sha256:") && v.output_hash.len() == 71);
    assert!(outcome.tool_text().contains("the real error"));
}

/// Whether `pid` is a live process (a zombie counts as gone).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

#[tokio::test]
async fn a_verify_that_times_out_is_killed_with_its_whole_process_group() {
    let fx = Fx::new();
    // A grandchild that ignores SIGTERM, and a shell that waits on it.
    fx.write(
        "check.sh",
        "sh -c 'trap \"\" TERM; echo $$ > grandchild.pid; exec sleep 300' &\nwait\n",
    );
    let outcome = fx
        .signoff(None)
        .with_verify_timeout(Duration::from_millis(500))
        .complete("add", "", &[], &CancellationToken::new())
        .await
        .unwrap();
    let v = outcome.verify().unwrap();
    assert!(v.timed_out, "{v:?}");
    assert_eq!(v.exit_code, None);
    assert!(
        outcome
            .reason()
            .starts_with("verify failed: `sh check.sh` timed out after 0.5 s "),
        "{}",
        outcome.reason()
    );
    let pid: i32 = fx.read("grandchild.pid").trim().parse().unwrap();
    wait_until_async(
        &format!("grandchild {pid} to die with the timeout"),
        Duration::from_secs(10),
        || (!alive(pid)).then_some(()),
    )
    .await
    .unwrap();
    assert_eq!(fx.verdicts()[0].decision.verify_exit, None);
}

#[tokio::test]
async fn a_cancelled_verify_records_nothing() {
    let fx = Fx::new();
    fx.write("check.sh", "sleep 300\n");
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let signoff = fx.signoff(None);
    let task = tokio::spawn(async move { signoff.complete("add", "", &[], &c).await });
    // Wait until the verify log exists (the command has started), then cancel.
    let log = fx.root().join(".tether/signoff/verify-add-1.log");
    wait_until_async("verify to start", Duration::from_secs(10), || {
        log.exists().then_some(())
    })
    .await
    .unwrap();
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(result, Err(tether_signoff::SignoffError::Cancelled)),
        "{result:?}"
    );
    assert!(fx.verdicts().is_empty());
    assert_eq!(fx.status("add"), "active");
}

/// Verify runs code the agent wrote: a test printing its environment must not put tether's keys
/// into the verify log or the result. (`HOME` stands in for a key variable here: a test cannot
/// set one in its own environment; the binary's suite does this with a real key.)
#[tokio::test]
async fn verify_runs_without_the_key_variables() {
    let home = std::env::var("HOME").expect("the test runs with HOME set");
    let fx = Fx::new();
    fx.write("check.sh", "env; echo \"home=[$HOME]\"\n");
    let outcome = fx
        .signoff(None)
        .without_env(vec!["HOME".to_owned()])
        .complete(
            "add",
            "add returns a + b; check.sh passes",
            &["src/lib.rs".to_owned()],
            &CancellationToken::new(),
        )
        .await
        .unwrap();
    let v = outcome.verify().unwrap();
    assert!(v.tail.contains("home=[]"), "{}", v.tail);
    let log = fx.read(&v.log_path);
    let has = |text: &str, line: &str| text.lines().any(|l| l == line);
    assert!(
        log.lines().any(|l| l.starts_with("PATH=")),
        "the rest of the environment stays: {log}"
    );
    let key = format!("HOME={home}");
    assert!(!has(&log, &key), "{log}");
    assert!(!has(&v.tail, &key), "{}", v.tail);
}

//! `tether ralph` with an agent that hits a usage limit (a shell script as the agent, the
//! `command` executor): the limit is waited out and the same iteration runs again without a
//! failure; while it waits, `tether status` (and `--json`) and `--events jsonl` say until when,
//! and `tether cancel` ends the wait at once.

use std::fs;
use std::process::Stdio;

use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, run, text, wait_output};

/// The agent: on its first run it reports a limit resetting after `$RESET` (and fails); then it
/// keeps the promise.
const AGENT: &str = r#"
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
if [ $n -eq 1 ]; then echo "Rate limit reached; try again in $RESET" >&2; exit 1; fi
echo "all done <promise>DONE</promise>"
"#;

fn workspace(reset: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[loop]\nmax_consecutive_failures = 1\n\n[executor]\nkind = \"command\"\n\
             command = [\"sh\", \"-c\", \"RESET='{reset}' sh agent.sh\"]\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn a_limit_is_waited_out_and_the_iteration_runs_again_without_a_failure() {
    let dir = workspace("1 second");
    let out = run(
        dir.path(),
        &[
            "ralph",
            "do it",
            "--completion-promise",
            "DONE",
            "--events",
            "jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let types: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|e| e["event"]["type"].as_str().unwrap().to_owned())
        .filter(|t| t != "tool_called")
        .collect();
    assert_eq!(
        types,
        [
            "run_started",
            "iteration_started",
            "waiting_for_usage_limit",
            "iteration_started",
            "iteration_completed",
            "run_finished"
        ]
    );
    let line = text(&out.stdout)
        .lines()
        .find(|l| l.contains("waiting_for_usage_limit"))
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .unwrap();
    assert_eq!(line["event"]["n"], 1);
    assert_eq!(
        line["event"]["message"],
        "Rate limit reached; try again in 1 second"
    );
    // One second plus a tenth.
    let wait = line["event"]["until_ms"].as_i64().unwrap() - line["at_ms"].as_i64().unwrap();
    assert!((1000..=1100).contains(&wait), "{wait}");
}

#[test]
fn status_shows_the_wait_and_cancel_ends_it() {
    let dir = workspace("2 hours");
    let loop_ = cmd(
        dir.path(),
        &["ralph", "do it", "--completion-promise", "DONE"],
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let status = wait_until("the wait in tether status", PATIENCE, || {
        let out = run(dir.path(), &["status"]);
        let s = text(&out.stdout);
        s.contains("waiting for usage limit").then_some(s)
    })
    .unwrap();
    let wait_line = status
        .lines()
        .find(|l| l.starts_with("waiting for usage limit until "))
        .unwrap();
    let re = regex_lite::Regex::new(
        r"^waiting for usage limit until \d\d:\d\d:\d\d UTC \(Rate limit reached; try again in 2 hours\)$",
    )
    .unwrap();
    assert!(re.is_match(wait_line), "{status}");
    assert!(status.contains("in progress: iteration 1"), "{status}");
    let json: serde_json::Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(json["usage_limit"]["n"], 1);
    assert_eq!(json["status"], "running");
    let out = run(dir.path(), &["cancel"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = wait_output(loop_);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "cancelled");
    assert_eq!(json["usage_limit"], serde_json::Value::Null);
    assert_eq!(
        fs::read_to_string(dir.path().join("count")).unwrap().trim(),
        "1"
    );
}

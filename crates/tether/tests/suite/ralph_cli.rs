//! `tether ralph` as a user runs it, with a shell script as the agent (the `command` executor):
//! endings, exit codes, events, and steering from another shell.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, run, spawn, text, wait_exit};

/// The agent: counts its runs in `count`; on run `PROMISE_AT` it keeps the promise. If a file
/// `hang-<n>` exists on run n it records its pid and waits for `go-<n>` (so a test can steer the
/// loop while an iteration is in flight).
const AGENT: &str = r#"
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
echo "iteration $n" >> log.txt
if [ -f hang-$n ]; then
  # Its pid as /proc numbers it (in the run's PID namespace `$$` is another number).
  read -r me _ < /proc/self/stat; echo $me > agent.pid
  while [ ! -f go-$n ]; do sleep 0.05; done
fi
if [ $n -ge ${PROMISE_AT:-3} ]; then echo "all done <promise>DONE</promise>"; else echo "step $n"; fi
"#;

fn workspace(promise_at: u32) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"PROMISE_AT={promise_at} sh agent.sh\"]\n"
        ),
    )
    .unwrap();
    dir
}

fn status_json(dir: &Path) -> serde_json::Value {
    let out = run(dir, &["status", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Waits (with a deadline) until `path` exists.
fn wait_for(path: PathBuf) {
    let what = path.display().to_string();
    wait_until(&what, PATIENCE, || path.exists().then_some(())).unwrap();
}

#[test]
fn the_promise_ends_the_loop_with_exit_0() {
    let dir = workspace(3);
    let out = run(
        dir.path(),
        &["ralph", "do it", "--completion-promise", "DONE"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let id = status_json(dir.path())["id"].as_str().unwrap().to_owned();
    assert_eq!(
        text(&out.stdout),
        format!(
            "promise kept in iteration 3: run {id} completed (transcripts: .tether/runs/{id}/)\n"
        )
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("count")).unwrap().trim(),
        "3"
    );
    let status = status_json(dir.path());
    assert_eq!(status["status"], "completed");
    assert_eq!(status["iteration"], 3);
    let transcript = dir
        .path()
        .join(format!(".tether/runs/{id}/iteration-0003.jsonl"));
    assert!(
        fs::read_to_string(transcript)
            .unwrap()
            .contains("<promise>DONE</promise>")
    );
}

#[test]
fn budget_spent_exits_3_and_resume_continues() {
    let dir = workspace(3);
    let out = run(
        dir.path(),
        &[
            "ralph",
            "do it",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(3));
    assert!(
        text(&out.stdout).contains("budget spent after iteration 2"),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("continue with: tether resume r-"));
    assert_eq!(status_json(dir.path())["status"], "budget_exhausted");

    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("promise kept in iteration 3"));
}

#[test]
fn events_jsonl_writes_every_event_to_stdout() {
    let dir = workspace(2);
    let out = run(
        dir.path(),
        &[
            "ralph",
            "x",
            "--completion-promise",
            "DONE",
            "--events",
            "jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let types: Vec<String> = text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["event"]["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        types,
        [
            "run_started",
            "iteration_started",
            "iteration_completed",
            "iteration_started",
            "iteration_completed",
            "run_finished"
        ]
    );
    assert!(text(&out.stderr).contains("promise kept in iteration 2"));
}

#[test]
fn usage_errors_exit_2() {
    let dir = workspace(3);
    for args in [
        vec!["ralph"],
        vec!["ralph", "x", "--max-iterations", "20001"],
        vec!["ralph", "   "],
        vec!["status"],
        vec!["status", "r-nope"],
    ] {
        let out = run(dir.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn pause_from_another_shell_stops_at_the_boundary() {
    let dir = workspace(3);
    fs::write(dir.path().join("hang-1"), "").unwrap();
    let mut child = spawn(dir.path(), &["ralph", "x", "--completion-promise", "DONE"]);
    wait_for(dir.path().join("agent.pid"));
    let out = run(dir.path(), &["pause"]);
    assert!(
        text(&out.stdout).starts_with("pause requested"),
        "{}",
        text(&out.stdout)
    );
    let status = status_json(dir.path());
    assert_eq!(status["status"], "running");
    assert!(status["pid"].as_u64().is_some());
    fs::write(dir.path().join("go-1"), "").unwrap();
    assert_eq!(wait_exit(&mut child).code(), Some(4));
    let status = status_json(dir.path());
    assert_eq!(
        (status["status"].as_str(), status["iteration"].as_u64()),
        (Some("paused"), Some(1))
    );

    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("count")).unwrap().trim(),
        "3"
    );
}

#[test]
fn cancel_from_another_shell_stops_the_running_iteration() {
    let dir = workspace(3);
    fs::write(dir.path().join("hang-2"), "").unwrap();
    let mut child = spawn(dir.path(), &["ralph", "x", "--completion-promise", "DONE"]);
    wait_for(dir.path().join("agent.pid"));
    let out = run(dir.path(), &["cancel"]);
    assert!(
        text(&out.stdout).starts_with("cancel requested"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(wait_exit(&mut child).code(), Some(130));
    let status = status_json(dir.path());
    assert_eq!(
        (status["status"].as_str(), status["iteration"].as_u64()),
        (Some("cancelled"), Some(1))
    );
    // The agent's process group was killed with the iteration.
    let pid: i32 = fs::read_to_string(dir.path().join("agent.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let gone = || (!Path::new(&format!("/proc/{pid}")).exists()).then_some(());
    wait_until(
        &format!("agent {pid} to die with the cancel"),
        Duration::from_secs(10),
        gone,
    )
    .unwrap();
    // Refused before anything starts: no dashboard, no sandbox, only the reason.
    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(2));
    let said = text(&out.stderr);
    assert!(said.contains("has already ended (cancelled)"), "{said}");
    assert!(!said.contains("dashboard"), "{said}");
}

#[test]
fn kill_9_then_resume_continues_from_the_last_completed_iteration() {
    let dir = workspace(3);
    fs::write(dir.path().join("hang-2"), "").unwrap();
    let mut child = cmd(dir.path(), &["ralph", "x", "--completion-promise", "DONE"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(dir.path().join("agent.pid"));
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // The orphaned agent is the test's to clean up; release it so it exits.
    fs::write(dir.path().join("go-2"), "").unwrap();

    let status = status_json(dir.path());
    assert_eq!(status["status"], "running");
    assert_eq!(status["orphaned"], true);
    assert_eq!(status["iteration"], 1);
    let text_status = text(&run(dir.path(), &["status"]).stdout);
    assert!(
        text_status.contains("no process is driving it"),
        "{text_status}"
    );

    fs::remove_file(dir.path().join("hang-2")).unwrap();
    fs::write(dir.path().join("count"), "1\n").unwrap();
    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("promise kept in iteration 3"),
        "{}",
        text(&out.stdout)
    );
    let status = status_json(dir.path());
    assert_eq!(
        (status["status"].as_str(), status["iteration"].as_u64()),
        (Some("completed"), Some(3))
    );
}

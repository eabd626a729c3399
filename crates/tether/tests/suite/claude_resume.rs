//! Claude Code as the executor when things go wrong mid-run, with the real CLI against the fake
//! model server: tether killed with SIGKILL mid-iteration, then `tether resume`; and a rate
//! limit (HTTP 429) waited out without counting a failed iteration.

use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::Fault;
use tether_testkit::wait_until;

use super::claude_cli::{configure_with, workspace};
use crate::common::agents::{
    Leftovers, diagnose, processes_in, ralph, ralph_waits_out_one_limit, start, status,
};
use crate::common::{PATIENCE, run, text, wait_exit};

#[test]
fn kill_9_of_tether_mid_iteration_then_resume_finishes_the_run() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("Done now. <promise>DONE</promise>")
    }));
    // The first model call never answers: the iteration is in flight when tether dies.
    server.fault_on(0, Fault::HoldBeforeHeaders);
    let dir = workspace(&server, "");
    let _leftovers = Leftovers(dir.path());
    let mut child = ralph(dir.path(), "Finish the job.");
    wait_until("Claude Code's first model call", PATIENCE, || {
        (server.request_count() >= 1).then_some(())
    })
    .unwrap();
    let turn = processes_in(dir.path());
    assert!(!turn.is_empty(), "the turn's processes run");
    child.kill().unwrap();
    wait_exit(&mut child);
    let killed = status(dir.path());
    assert_eq!(killed["status"], "running");
    assert_eq!(killed["orphaned"], true);
    assert_eq!(killed["in_progress"], 1);

    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert!(
        text(&out.stdout).contains("promise kept in iteration 1"),
        "{}",
        text(&out.stdout)
    );
    let done = status(dir.path());
    assert_eq!(done["status"], "completed");
    assert_eq!(done["iteration"], 1);
    // Resume stopped what the killed tether left running before it started a new turn.
    let left: Vec<u32> = turn
        .into_iter()
        .filter(|pid| std::path::Path::new(&format!("/proc/{pid}/cwd")).exists())
        .filter(|pid| processes_in(dir.path()).contains(pid))
        .collect();
    assert!(left.is_empty(), "left running after resume: {left:?}");
}

#[test]
fn a_rate_limit_is_waited_out_then_the_iteration_succeeds_without_a_failure() {
    let (_rt, server) = start(Script::from_fn(|_req: &Request| {
        Turn::text("Done. <promise>DONE</promise>")
    }));
    // Claude Code's own retries are off, so the 429 comes back as its result at once.
    server.fault_next(1, Fault::RateLimited { retry_after: None });
    let dir = tempfile::tempdir().unwrap();
    configure_with(
        dir.path(),
        &server,
        "usage_backoff_secs = 1\n",
        "CLAUDE_CODE_MAX_RETRIES = \"0\"\n",
    );
    let wait = &ralph_waits_out_one_limit(dir.path(), "Finish the job.")["event"];
    assert_eq!(
        wait["message"],
        "API Error: Request rejected (429) · Rate limit reached"
    );
    assert_eq!(server.request_count(), 2);
}

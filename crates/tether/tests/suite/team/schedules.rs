//! Two schedulers on one team store: both look at the same schedule of one workspace, each
//! fire is claimed by one of them, so the schedule fires once per interval, never twice.

use std::fs;
use std::process::{Child, Command, Stdio};

use serde_json::Value;
use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, text, wait_exit};

/// The agent: writes the time it started to `fires.log`, then keeps its promise.
const AGENT: &str = "date +%s%3N >> fires.log\necho 'all done <promise>DONE</promise>'\n";

fn tether(dir: &std::path::Path, url: &str, machine: &str, args: &[&str]) -> Command {
    let mut c = cmd(dir, args);
    c.env("TETHER_STORE_URL", url)
        .env("TETHER_MACHINE", machine);
    c
}

fn scheduler(dir: &std::path::Path, url: &str, machine: &str) -> Child {
    tether(dir, url, machine, &["schedule", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn stop(mut child: Child) -> String {
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap()),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    wait_exit(&mut child);
    text(&child.wait_with_output().unwrap().stderr)
}

#[test]
fn two_schedulers_on_one_team_store_fire_each_time_once() {
    let db = super::database();
    let url = db.url();
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"sh agent.sh\"]\n\
         [schedule]\npoll_secs = 1\n",
    )
    .unwrap();
    let added = tether(
        dir.path(),
        &url,
        "alpha",
        &[
            "schedule",
            "add",
            "--name",
            "tidy",
            "--every",
            "2s",
            "--ralph",
            "tidy up",
            "--completion-promise",
            "DONE",
        ],
    )
    .output()
    .unwrap();
    assert!(added.status.success(), "{}", text(&added.stderr));
    let (alpha, beta) = (
        scheduler(dir.path(), &url, "alpha"),
        scheduler(dir.path(), &url, "beta"),
    );
    let list = || -> Value {
        let out = tether(dir.path(), &url, "alpha", &["schedule", "list", "--json"])
            .output()
            .unwrap();
        serde_json::from_slice::<Value>(&out.stdout).unwrap()[0].clone()
    };
    // Four fires, whoever fired them.
    let fired = wait_until("four fires ended", 3 * PATIENCE, || {
        let s = list();
        let done = s["last_outcome"]
            .as_str()
            .is_some_and(|o| o.ends_with(" done"));
        let count = fs::read_to_string(dir.path().join("fires.log"))
            .unwrap_or_default()
            .lines()
            .count();
        (done && count >= 4).then_some(s)
    })
    .unwrap();
    let (alpha_said, beta_said) = (stop(alpha), stop(beta));
    let times: Vec<i64> = fs::read_to_string(dir.path().join("fires.log"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    for pair in times.windows(2) {
        assert!(
            pair[1] - pair[0] >= 1_900,
            "fired twice in one interval: {times:?}\nalpha: {alpha_said}\nbeta: {beta_said}"
        );
    }
    assert!(
        fired["last_run"].as_str().is_some(),
        "{fired}\nalpha: {alpha_said}\nbeta: {beta_said}"
    );
}

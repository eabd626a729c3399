//! A run of many goals on many machines: `tether run --parallel 3 --workers` offers its goals in
//! the team store and three `tether worker` processes (each a machine of its own, its own
//! clone of the repository from a bare repository standing for the shared remote) claim them,
//! sign them off and push them; the coordinator merges each into the run's branch.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use tether_store::{GoalState, Store};
use tether_store_pg::TeamStore;

use super::database;
use crate::common::fleet::{agent, own};
use crate::common::{cmd, sh, text, wait_output};
use crate::suite::fleet::{Worker, prepare_fleet};

/// Eight goals in four layers.
const EIGHT: &str = "# Plan: eight

## Goal: A
<!-- id: a -->
status: active
done_when: the file TARGET-a exists as a.txt
verify: test -f a.txt

## Goal: B
<!-- id: b -->
status: active
done_when: the file TARGET-b exists as b.txt
verify: test -f b.txt

## Goal: C
<!-- id: c -->
status: active
done_when: the file TARGET-c exists as c.txt
verify: test -f c.txt

## Goal: D
<!-- id: d -->
status: active
after: a
done_when: the file TARGET-d exists as d.txt
verify: test -f a.txt && test -f d.txt

## Goal: E
<!-- id: e -->
status: active
after: a, b
done_when: the file TARGET-e exists as e.txt
verify: test -f b.txt && test -f e.txt

## Goal: F
<!-- id: f -->
status: active
after: c
done_when: the file TARGET-f exists as f.txt
verify: test -f c.txt && test -f f.txt

## Goal: G
<!-- id: g -->
status: active
after: d, e
done_when: the file TARGET-g exists as g.txt
verify: test -f d.txt && test -f e.txt && test -f g.txt

## Goal: H
<!-- id: h -->
status: active
after: f, g
done_when: the file TARGET-h exists as h.txt
verify: test -f f.txt && test -f g.txt && test -f h.txt

## Log
";

/// `tether worker` as machine `name`, in a directory of its own, polling every second.
fn worker(db: &str, name: &str, home: &Path) -> Child {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = cmd(&dir, &["worker", "--poll", "1", "--dir"]);
    c.arg(dir.join("work"))
        .env("TETHER_STORE_URL", db)
        .env("TETHER_MACHINE", name)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

fn stop(child: Child) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    text(&out.stderr)
}

#[test]
fn three_workers_sign_off_eight_goals_that_the_coordinator_merges_each_once() {
    let db = database();
    let (dir, servers) = prepare_fleet(EIGHT, Worker::Model(agent(own)), own, "");
    let root = dir.path();
    let remote = tempfile::tempdir().unwrap();
    let bare = remote.path().join("shared.git");
    sh(
        root,
        &format!(
            "git init -q --bare {bare} && git remote add origin {bare} && git push -q origin main",
            bare = bare.display()
        ),
    );
    let homes = tempfile::tempdir().unwrap();
    let workers: Vec<Child> = ["w1", "w2", "w3"]
        .into_iter()
        .map(|name| worker(&db.url(), name, homes.path()))
        .collect();
    let coordinator = cmd(root, &["run", "--parallel", "3", "--workers", "--approve"])
        .env("TETHER_STORE_URL", db.url())
        .env("TETHER_MACHINE", "coord")
        .env("XDG_STATE_HOME", servers.3.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(coordinator);
    let said: Vec<String> = workers.into_iter().map(stop).collect();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{said:#?}");
    assert!(
        stdout.starts_with("all goals merged into tether/r-"),
        "{stdout}"
    );

    let store = Store::from_backend(Box::new(
        TeamStore::connect(db.url().parse().unwrap()).unwrap(),
    ));
    let fleet = store.fleets(1).unwrap().remove(0);
    assert_eq!(fleet.outcome.as_deref(), Some("all_merged"));
    assert_eq!(fleet.remote.as_deref(), Some(bare.to_str().unwrap()));
    let mut machines = std::collections::BTreeSet::new();
    for goal in &fleet.goals {
        assert_eq!(goal.state, GoalState::Merged, "{goal:?}");
        let machine = goal.machine.clone().unwrap();
        assert!(["w1", "w2", "w3"].contains(&machine.as_str()), "{goal:?}");
        machines.insert(machine);
        // Signed off once: one accept, by one goal run.
        let run = goal.run_id.clone().unwrap();
        let accepts = store
            .verdicts_for_run(&run)
            .unwrap()
            .iter()
            .filter(|v| v.decision.verdict == tether_store::Verdict::Accept)
            .count();
        assert_eq!(accepts, 1, "{goal:?}");
    }
    assert!(
        machines.len() >= 2,
        "one worker did everything: {machines:?}"
    );
    // The run's branch holds every goal's work, here and on the shared remote.
    for goal in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        assert_eq!(
            sh(root, &format!("git show {}:{goal}.txt", fleet.branch)),
            format!("done {goal}\n")
        );
    }
    assert_eq!(
        sh(root, &format!("git rev-parse {}", fleet.branch)),
        sh(
            root,
            &format!(
                "git ls-remote {} refs/heads/{}",
                bare.display(),
                fleet.branch
            )
        )
        .split('\t')
        .next()
        .unwrap()
        .to_owned()
            + "\n"
    );
}

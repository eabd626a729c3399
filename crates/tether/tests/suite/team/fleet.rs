//! A run of many goals on the team store: each goal's run works in a worktree of its own, yet
//! its records (the approved contracts it keeps to, its verdicts) are the workspace's, whose
//! state directory it keeps, so every goal is signed off and merged.

use super::database;
use crate::common::fleet::{agent, own};
use crate::common::{sh, text, wait_output};
use crate::suite::fleet::{Worker, prepare_fleet, spawn_fleet, three};

#[test]
fn a_run_of_many_goals_on_the_team_store_signs_each_goal_off_in_its_worktree() {
    let db = database();
    let (dir, servers) = prepare_fleet(&three(), Worker::Model(agent(own)), own, "");
    let root = dir.path();
    let child = spawn_fleet(root, &servers, &[("TETHER_STORE_URL", &db.url())]);
    let out = wait_output(child);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("all goals merged into tether/r-"),
        "{stdout}"
    );
    let branch = stdout["all goals merged into ".len()..]
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        sh(root, &format!("git show {branch}:three.txt")),
        "done three\n"
    );
}

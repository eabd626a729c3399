//! Reading and answering from any machine; driving only from the run's own.

use serde_json::Value;
use tether_store::{Origin, RunKind};
use tether_store_pg::TeamStore;

use super::{Machine, database};
use crate::common::{pending_question_by, text, wait_output};

#[test]
fn a_question_asked_on_one_machine_is_answered_from_another() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let asking = alpha.spawn(&["ask", "Postgres or SQLite?", "--json"]);
    let q = pending_question_by(|args| beta.run(args));
    let id = q["id"].as_str().unwrap();

    let out = beta.run(&["answer", id, "Postgres", "--as", "bob"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        (a["text"].as_str(), a["responder"].as_str()),
        (Some("Postgres"), Some("bob"))
    );

    // Nothing went to either workspace's own file.
    assert!(!alpha.path().join(".tether/tether.db").exists());
    assert!(!beta.path().join(".tether/tether.db").exists());
    let history = text(&alpha.run(&["history"]).stdout);
    assert!(history.contains("→ Postgres — bob via cli"), "{history}");
}

/// A run created on `machine` in `workspace`, straight through the team store.
fn run_of(url: &str, machine: &str, workspace: &std::path::Path) -> tether_store::RunId {
    let team = TeamStore::connect(url.parse().unwrap()).unwrap();
    let origin = Origin {
        machine: machine.to_owned(),
        workspace_root: workspace.to_path_buf(),
        repo_remote: Some("https://example.com/team/app.git".into()),
    };
    let spec = serde_json::json!({"prompt": "make the tests pass", "max_iterations": 5});
    team.block(
        team.pg()
            .create_run_from(RunKind::Ralph, workspace, &spec, &origin),
    )
    .unwrap()
}

#[test]
fn another_machine_reads_and_asks_a_run_but_cannot_drive_it() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let run = run_of(&db.url(), "alpha", alpha.path());
    let id = run.as_str();

    let status = beta.run(&["status", id]);
    let shown = text(&status.stdout);
    assert_eq!(status.status.code(), Some(0), "{}", text(&status.stderr));
    assert!(shown.contains("on machine alpha in "), "{shown}");
    assert!(!shown.contains("no process is driving it"), "{shown}");
    let json: Value = serde_json::from_slice(&beta.run(&["status", id, "--json"]).stdout).unwrap();
    assert_eq!(
        (json["machine"].as_str(), json["elsewhere"].as_bool()),
        (Some("alpha"), Some(true))
    );

    let resume = beta.run(&["resume", id]);
    assert_eq!(resume.status.code(), Some(2));
    let said = text(&resume.stderr);
    assert!(
        said.contains("belongs to machine alpha") && said.contains("resume it there"),
        "{said}"
    );

    // Pausing from beta only asks: alpha's loop (or its resume) acts on it.
    let pause = beta.run(&["pause", id]);
    assert_eq!(pause.status.code(), Some(0), "{}", text(&pause.stderr));
    let json: Value = serde_json::from_slice(&alpha.run(&["status", id, "--json"]).stdout).unwrap();
    assert_eq!(json["status"], "running");
    assert_eq!(json["elsewhere"], false);
    assert_eq!(
        json["orphaned"], true,
        "alpha sees that nothing drives it: {json}"
    );

    // Another workspace of the same machine is told where to resume it from.
    let other = Machine::new("alpha", &db.url());
    let resume = other.run(&["resume", id]);
    assert_eq!(resume.status.code(), Some(2));
    assert!(
        text(&resume.stderr).contains("resume it from there"),
        "{}",
        text(&resume.stderr)
    );
}

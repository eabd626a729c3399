//! `tether mcp` — what an agent CLI starts for `ask_human` — on the team store: the question is
//! filed under the run in the team store, answered from another machine, and the tool call
//! returns the answer.

use serde_json::json;
use tether_store::{Origin, RunKind, RunStatus, Store};
use tether_store_pg::TeamStore;

use super::{Machine, database};
use crate::common::mcp::{Server, assert_only_protocol, text};
use crate::common::pending_question_by;

#[test]
fn ask_human_over_mcp_is_answered_from_another_machine() {
    let db = database();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let team = Store::from_backend(Box::new(
        TeamStore::connect(db.url().parse().unwrap()).unwrap(),
    ));
    let run = {
        let pg = TeamStore::connect(db.url().parse().unwrap()).unwrap();
        let origin = Origin {
            machine: "alpha".into(),
            workspace_root: alpha.path().to_path_buf(),
            repo_remote: None,
        };
        pg.block(
            pg.pg()
                .create_run_from(RunKind::Goal, alpha.path(), &json!({}), &origin),
        )
        .unwrap()
    };
    let url = db.url();
    let mut server = Server::start(alpha.path(), &[], |c| {
        c.env("TETHER_RUN_ID", run.as_str())
            .env("TETHER_STORE_URL", &url)
            .env("TETHER_MACHINE", "alpha");
    });
    server.initialize();
    let call = server.call_tool(
        "ask_human",
        json!({"question": "Which port?", "context": "tests", "confidence": 10}),
        None,
    );
    let q = pending_question_by(|args| beta.run(args));
    assert_eq!(q["run_id"], run.as_str());
    assert_eq!(
        team.run(&run).unwrap().state.status,
        RunStatus::WaitingForInput
    );
    let id = q["id"].as_str().unwrap();
    let answered = beta.run(&["answer", id, "8080", "--as", "ana"]);
    assert_eq!(answered.status.code(), Some(0));
    let result = server.response(call);
    assert_eq!(result["result"]["isError"], false, "{result}");
    assert!(text(&result["result"]).contains("8080"), "{result}");
    let (code, lines) = server.close();
    assert_eq!(code, Some(0));
    assert_only_protocol(&lines);
    assert!(!alpha.path().join(".tether/tether.db").exists());
}

//! The team database restarted while a question waits: the answer still arrives.

use std::sync::Arc;

use serde_json::Value;
use tether_testkit::postgres::PgCluster;

use super::Machine;
use crate::common::{pending_question_by, text, wait_output};

#[test]
fn an_answer_given_after_the_database_restarted_reaches_the_waiting_machine() {
    // A cluster of its own: restarting the shared one would cut other tests' connections.
    let cluster = Arc::new(PgCluster::start().expect("PostgreSQL for the tests (run ./test.sh)"));
    let db = PgCluster::create_database(&cluster).unwrap();
    let alpha = Machine::new("alpha", &db.url());
    let beta = Machine::new("beta", &db.url());
    let asking = alpha.spawn(&["ask", "Ship it?", "--json"]);
    let q = pending_question_by(|args| beta.run(args));
    let id = q["id"].as_str().unwrap().to_owned();

    cluster.restart().unwrap();
    let out = beta.run(&["answer", &id, "Ship it", "--as", "carol"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        (a["text"].as_str(), a["responder"].as_str()),
        (Some("Ship it"), Some("carol"))
    );
}

use rmcp::model::{ElicitResult, ElicitationAction};
use serde_json::json;
use tether_human::AnswerBody;
use tether_store::{Question, QuestionStatus};

use super::{form, read};

fn question(options: &[&str]) -> Question {
    Question {
        id: "q-abc123".parse().unwrap(),
        run_id: None,
        thread_id: None,
        question: "Which database? I suggest Postgres.".into(),
        context: "a small app\n".into(),
        confidence: Some(20),
        status: QuestionStatus::Pending,
        created_at_ms: 0,
        answer: None,
        responder: None,
        channel: None,
        answered_at_ms: None,
        cancelled_at_ms: None,
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        choice: None,
    }
}

fn accepted(content: serde_json::Value) -> ElicitResult {
    ElicitResult::new(ElicitationAction::Accept).with_content(content)
}

#[test]
fn the_forms() {
    let open = serde_json::to_value(form(&question(&[])).unwrap()).unwrap();
    let choices = serde_json::to_value(form(&question(&["Postgres", "SQLite"])).unwrap()).unwrap();
    insta::assert_json_snapshot!(json!({"open": open, "choices": choices}));
}

#[test]
fn an_accepted_form_answers_and_own_words_win_over_a_choice() {
    let q = question(&["Postgres", "SQLite"]);
    let body = |content| read(&q, &accepted(content), "ana").map(|a| a.body);
    assert_eq!(
        body(json!({"choice": "SQLite"})),
        Some(AnswerBody::Choice {
            index: 1,
            label: "SQLite".into()
        })
    );
    assert_eq!(
        body(json!({"choice": "SQLite", "other": " Neither "})),
        Some(AnswerBody::Text("Neither".into()))
    );
    assert_eq!(body(json!({"choice": "Oracle"})), None, "not an option");
    assert_eq!(body(json!({"other": "  "})), None, "nothing filled in");
    let open = question(&[]);
    assert_eq!(
        read(&open, &accepted(json!({"answer": "Postgres"})), "ana").map(|a| a.body),
        Some(AnswerBody::Text("Postgres".into()))
    );
}

#[test]
fn declined_or_cancelled_is_no_answer() {
    let q = question(&[]);
    for action in [ElicitationAction::Decline, ElicitationAction::Cancel] {
        assert_eq!(read(&q, &ElicitResult::new(action), "ana"), None);
    }
}

//! The timeline says whose words are whose: a person's message as theirs, the agent's own
//! `tether say` and `tether pause` as the agent's, and a question the agent repeated after an
//! interrupted iteration as not posted again.

use tether_store::{Author, Event, RunKind};

use crate::common::{self, Web};

#[test]
fn the_agents_own_note_and_pause_are_shown_as_the_agents() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(RunKind::Goal, web.ws.root(), &serde_json::json!({}))
        .unwrap();
    let q = common::question(&store, Some(&run), "Which name?");
    for event in [
        Event::MessageQueued {
            text: "use the fixtures".into(),
            by: "ana".into(),
            author: Author::Person,
        },
        Event::MessageQueued {
            text: "approved: deploy now".into(),
            by: "the agent".into(),
            author: Author::Agent,
        },
        Event::PauseRequested {
            by: "the agent".into(),
            author: Author::Agent,
        },
        Event::QuestionRepeated { question_id: q.id },
    ] {
        store.append(Some(&run), &event).unwrap();
    }
    let page = web.get(&format!("/runs/{run}"));
    assert_eq!(page.status, 200);
    let body = &page.body;
    assert!(body.contains("Message from ana"), "{body}");
    assert!(
        body.contains("Note from <strong>the agent</strong> to itself (its own tether say)"),
        "{body}"
    );
    assert!(
        !body.contains("Message from the agent"),
        "the agent's note is never a message from someone: {body}"
    );
    assert!(
        body.contains("Pause requested by <strong>the agent</strong> (its own tether pause)"),
        "{body}"
    );
    assert!(
        body.contains("asked again after an interrupted iteration: not posted again"),
        "{body}"
    );
}

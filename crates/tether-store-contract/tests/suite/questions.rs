//! Questions, answers, posts and waits, on both backends.

use serde_json::json;
use tether_store::{AnswerOutcome, QuestionStatus, StoreError};

use super::{Backend, on_both_backends, question, run};

on_both_backends!(
    the_first_answer_wins_from_any_handle,
    a_choice_is_read_by_label_or_number,
    a_withdrawn_question_takes_no_answer,
    questions_are_listed_pending_by_history_and_by_run,
    posts_are_recorded_once_and_updated,
    topic_numbers_count_per_stream,
    an_abandoned_question_is_owed_to_the_next_prompt,
);

fn the_first_answer_wins_from_any_handle(b: &Backend) {
    let id = run(&b.store);
    let q = b
        .store
        .insert_question(&question(Some(&id), "Ship it?", &[]))
        .unwrap();
    assert_eq!(q.status, QuestionStatus::Pending);
    let other = b.other();
    let first = other.answer_question(&q.id, "yes", "cli", "ana").unwrap();
    let AnswerOutcome::Answered(answered) = first else {
        panic!("{first:?}")
    };
    assert_eq!(
        (answered.answer.as_deref(), answered.responder.as_deref()),
        (Some("yes"), Some("ana"))
    );
    let late = b.store.answer_question(&q.id, "no", "web", "bob").unwrap();
    assert_eq!(
        late,
        AnswerOutcome::AlreadyAnswered {
            answer: "yes".into(),
            by_channel: "cli".into(),
            responder: "ana".into(),
        }
    );
    let kinds: Vec<_> = b
        .store
        .events(&id, tether_store::Seq::START, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        ["run_started", "question_asked", "question_answered"]
    );
    let unknown = "q-zzzzzz".parse().unwrap();
    assert!(matches!(
        b.store.question(&unknown).unwrap_err(),
        StoreError::NotFound { .. }
    ));
}

fn a_choice_is_read_by_label_or_number(b: &Backend) {
    let store = &b.store;
    let by_label = store
        .insert_question(&question(None, "Which?", &["Postgres", "SQLite"]))
        .unwrap();
    store
        .answer_question(&by_label.id, "sqlite", "zulip", "ana")
        .unwrap();
    let q = store.question(&by_label.id).unwrap();
    assert_eq!((q.answer.as_deref(), q.choice), (Some("SQLite"), Some(1)));
    let by_number = store
        .insert_question(&question(None, "Which?", &["Postgres", "SQLite"]))
        .unwrap();
    store
        .answer_question(&by_number.id, "#1", "cli", "ana")
        .unwrap();
    let q = store.question(&by_number.id).unwrap();
    assert_eq!((q.answer.as_deref(), q.choice), (Some("Postgres"), Some(0)));
    let free = store
        .insert_question(&question(None, "Which?", &["Postgres", "SQLite"]))
        .unwrap();
    store
        .answer_question(&free.id, "neither", "cli", "ana")
        .unwrap();
    let q = store.question(&free.id).unwrap();
    assert_eq!((q.answer.as_deref(), q.choice), (Some("neither"), None));
    assert_eq!(q.options, ["Postgres", "SQLite"]);
}

fn a_withdrawn_question_takes_no_answer(b: &Backend) {
    let store = &b.store;
    let q = store
        .insert_question(&question(None, "Still there?", &[]))
        .unwrap();
    assert!(store.cancel_question(&q.id).unwrap());
    assert!(!store.cancel_question(&q.id).unwrap());
    assert_eq!(
        store.answer_question(&q.id, "yes", "cli", "ana").unwrap(),
        AnswerOutcome::Cancelled
    );
    assert_eq!(
        store.question(&q.id).unwrap().status,
        QuestionStatus::Cancelled
    );
}

fn questions_are_listed_pending_by_history_and_by_run(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let a = store
        .insert_question(&question(Some(&id), "a?", &[]))
        .unwrap();
    let bq = store.insert_question(&question(None, "b?", &[])).unwrap();
    let c = store
        .insert_question(&question(Some(&id), "c?", &[]))
        .unwrap();
    store.answer_question(&bq.id, "ok", "cli", "ana").unwrap();
    let ids = |qs: Vec<tether_store::Question>| qs.into_iter().map(|q| q.id).collect::<Vec<_>>();
    assert_eq!(
        ids(store.pending_questions().unwrap()),
        [a.id.clone(), c.id.clone()]
    );
    assert_eq!(
        ids(store.questions_for_run(&id).unwrap()),
        [a.id, c.id.clone()]
    );
    assert_eq!(ids(store.question_history(2).unwrap()), [c.id, bq.id]);
}

fn posts_are_recorded_once_and_updated(b: &Backend) {
    let store = &b.store;
    let q = store
        .insert_question(&question(None, "Posted?", &[]))
        .unwrap();
    assert!(
        store
            .record_post(&q.id, "zulip", &json!({"message": 1}))
            .unwrap()
    );
    assert!(
        !store
            .record_post(&q.id, "zulip", &json!({"message": 2}))
            .unwrap()
    );
    store
        .update_post_ref(&q.id, "zulip", &json!({"message": 1, "seen": 7}))
        .unwrap();
    store
        .record_post(&q.id, "slack", &json!({"ts": "1.2"}))
        .unwrap();
    let posts = store.posts(&q.id).unwrap();
    assert!(
        posts
            .windows(2)
            .all(|w| w[0].posted_at_ms <= w[1].posted_at_ms)
    );
    // In the order they were posted, which within one millisecond is by channel.
    let mut shown: Vec<_> = posts
        .iter()
        .map(|p| (p.channel.as_str(), p.external_ref.clone()))
        .collect();
    shown.sort_by(|a, b| a.0.cmp(b.0));
    assert_eq!(
        shown,
        [
            ("slack", json!({"ts": "1.2"})),
            ("zulip", json!({"message": 1, "seen": 7}))
        ]
    );
}

fn topic_numbers_count_per_stream(b: &Backend) {
    let store = &b.store;
    assert_eq!(store.next_topic_number("eng").unwrap(), 1);
    assert_eq!(store.next_topic_number("eng").unwrap(), 2);
    assert_eq!(store.next_topic_number("ops").unwrap(), 1);
    assert_eq!(b.other().next_topic_number("eng").unwrap(), 3);
}

fn an_abandoned_question_is_owed_to_the_next_prompt(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let q = store
        .insert_question(&question(Some(&id), "Later?", &[]))
        .unwrap();
    assert!(store.abandon_question(&q.id, "the client gave up").unwrap());
    assert!(!store.abandon_question(&q.id, "again").unwrap());
    let shown = store.question(&q.id).unwrap();
    let abandoned = store.abandoned(&shown).unwrap().unwrap();
    assert_eq!(abandoned.reason, "the client gave up");
    let listed = store.pending_with_waiters().unwrap();
    assert_eq!(
        listed
            .iter()
            .map(|p| (p.question.id.clone(), p.abandoned.clone()))
            .collect::<Vec<_>>(),
        [(q.id.clone(), Some(abandoned))]
    );
    assert!(store.await_question(&q.id).unwrap());
    assert_eq!(store.abandoned(&shown).unwrap(), None);
    assert_eq!(store.pending_with_waiters().unwrap()[0].abandoned, None);
    assert!(store.abandon_question(&q.id, "gave up again").unwrap());
    store.answer_question(&q.id, "now", "cli", "ana").unwrap();
    let owed = store.deliver(&id, 2).unwrap();
    let answers: Vec<_> = owed.answers.iter().map(|q| q.answer.as_deref()).collect();
    assert_eq!(answers, [Some("now")]);
    assert!(store.deliver(&id, 3).unwrap().answers.is_empty());
}

//! Questions, first-answer-wins, posts and topic numbers.

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};

use serde_json::json;
use tether_store::{
    AnswerOutcome, Event, NewQuestion, QuestionStatus, RunStatus, Seq, Store, StoreError,
};

use super::common::{assert_projection_matches_journal, memory_store, ralph_run, temp_db};

fn ask(store: &Store, run: Option<&tether_store::RunId>, text: &str) -> tether_store::Question {
    store
        .insert_question(&NewQuestion {
            run_id: run.cloned(),
            thread_id: Some("Agent Q #1".into()),
            question: text.into(),
            context: "ctx".into(),
            confidence: Some(30),
            options: Vec::new(),
        })
        .unwrap()
}

#[test]
fn asking_stores_a_pending_question_and_puts_the_run_in_waiting_for_input() {
    let store = memory_store();
    let run = ralph_run(&store);
    let q = ask(&store, Some(&run), "Which database?");
    assert_eq!(q.status, QuestionStatus::Pending);
    assert_eq!(
        (q.confidence, q.thread_id.as_deref()),
        (Some(30), Some("Agent Q #1"))
    );
    assert_eq!(store.question(&q.id).unwrap(), q);
    assert_eq!(store.pending_questions().unwrap(), vec![q.clone()]);
    let state = store.run(&run).unwrap().state;
    assert_eq!(state.status, RunStatus::WaitingForInput);
    assert_eq!(state.pending_questions, vec![q.id.clone()]);
    let last = store.events(&run, Seq::START, 10).unwrap().pop().unwrap();
    assert_eq!(last.event, Some(Event::QuestionAsked { question_id: q.id }));
}

#[test]
fn the_first_answer_wins_and_later_ones_learn_who_answered() {
    let store = memory_store();
    let run = ralph_run(&store);
    let q = ask(&store, Some(&run), "Ship it?");
    let AnswerOutcome::Answered(answered) =
        store.answer_question(&q.id, "yes", "web", "alice").unwrap()
    else {
        panic!("first answer must win");
    };
    assert_eq!(answered.status, QuestionStatus::Answered);
    assert_eq!(answered.answer.as_deref(), Some("yes"));
    assert_eq!(
        store.answer_question(&q.id, "no", "zulip", "bob").unwrap(),
        AnswerOutcome::AlreadyAnswered {
            answer: "yes".into(),
            by_channel: "web".into(),
            responder: "alice".into(),
        }
    );
    assert_eq!(
        store.question(&q.id).unwrap().answer.as_deref(),
        Some("yes")
    );
    assert!(store.pending_questions().unwrap().is_empty());
    assert_eq!(store.run(&run).unwrap().status, RunStatus::Running);
    let answers = store
        .events(&run, Seq::START, 100)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "question_answered")
        .count();
    assert_eq!(answers, 1);
    assert_projection_matches_journal(&store, &run);
}

#[test]
fn unknown_questions_are_not_found() {
    let store = memory_store();
    let id = "q-zzzzzz".parse().unwrap();
    for err in [
        store.answer_question(&id, "a", "cli", "me").unwrap_err(),
        store.question(&id).unwrap_err(),
        store.cancel_question(&id).unwrap_err(),
        store.record_post(&id, "zulip", &json!({})).unwrap_err(),
    ] {
        assert!(
            matches!(
                err,
                StoreError::NotFound {
                    what: "question",
                    ..
                }
            ),
            "{err:?}"
        );
    }
    let ghost_run = "r-000000000000".parse().unwrap();
    let err = store
        .insert_question(&NewQuestion {
            run_id: Some(ghost_run),
            question: "?".into(),
            ..NewQuestion::default()
        })
        .unwrap_err();
    assert!(
        matches!(err, StoreError::NotFound { what: "run", .. }),
        "{err:?}"
    );
}

#[test]
fn a_cancelled_question_takes_no_answer() {
    let store = memory_store();
    let q = ask(&store, None, "standalone");
    assert!(store.cancel_question(&q.id).unwrap());
    assert!(!store.cancel_question(&q.id).unwrap());
    assert_eq!(
        store.answer_question(&q.id, "late", "cli", "me").unwrap(),
        AnswerOutcome::Cancelled
    );
    let q = store.question(&q.id).unwrap();
    assert_eq!((q.status, q.answer), (QuestionStatus::Cancelled, None));
    assert!(q.cancelled_at_ms.is_some());
    let kinds: Vec<_> = store
        .events_all_after(Seq::START, 10)
        .unwrap()
        .into_iter()
        .map(|e| e.kind)
        .collect();
    assert_eq!(kinds, ["question_asked", "question_cancelled"]);
}

#[test]
fn history_is_newest_first_and_pending_is_oldest_first() {
    let store = memory_store();
    let ids: Vec<_> = ["one", "two", "three"]
        .iter()
        .map(|t| ask(&store, None, t).id)
        .collect();
    store.answer_question(&ids[1], "x", "cli", "me").unwrap();
    let history: Vec<_> = store
        .question_history(10)
        .unwrap()
        .into_iter()
        .map(|q| q.id)
        .collect();
    assert_eq!(
        history,
        vec![ids[2].clone(), ids[1].clone(), ids[0].clone()]
    );
    let pending: Vec<_> = store
        .pending_questions()
        .unwrap()
        .into_iter()
        .map(|q| q.id)
        .collect();
    assert_eq!(pending, vec![ids[0].clone(), ids[2].clone()]);
    assert_eq!(store.question_history(1).unwrap().len(), 1);
}

#[test]
fn two_connections_racing_to_answer_produce_exactly_one_winner() {
    let (_dir, db) = temp_db();
    let setup = Store::open(&db).unwrap();
    let run = ralph_run(&setup);
    let questions: Vec<_> = (0..40)
        .map(|i| ask(&setup, Some(&run), &format!("q{i}")).id)
        .collect();
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = ["web", "zulip"]
        .into_iter()
        .map(|channel| {
            let (db, questions, barrier) = (db.clone(), questions.clone(), Arc::clone(&barrier));
            std::thread::spawn(move || {
                let store = Store::open(&db).unwrap();
                questions
                    .iter()
                    .map(|id| {
                        barrier.wait();
                        store
                            .answer_question(id, channel, channel, channel)
                            .unwrap()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let results: Vec<Vec<AnswerOutcome>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    for (i, id) in questions.iter().enumerate() {
        let winners: Vec<_> = results
            .iter()
            .filter_map(|r| match &r[i] {
                AnswerOutcome::Answered(q) => Some(q.channel.clone().unwrap()),
                _ => None,
            })
            .collect();
        assert_eq!(winners.len(), 1, "question {i} had winners {winners:?}");
        let stored = setup.question(id).unwrap();
        assert_eq!(stored.channel, Some(winners[0].clone()));
        assert_eq!(stored.answer, Some(winners[0].clone()));
        for r in &results {
            if let AnswerOutcome::AlreadyAnswered { by_channel, .. } = &r[i] {
                assert_eq!(by_channel, &winners[0]);
            }
        }
    }
    let answered_events = setup
        .events(&run, Seq::START, usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "question_answered")
        .count();
    assert_eq!(answered_events, questions.len());
    assert_eq!(setup.run(&run).unwrap().status, RunStatus::Running);
    assert_projection_matches_journal(&setup, &run);
}

#[test]
fn a_post_is_recorded_once_and_its_reference_can_advance() {
    let store = memory_store();
    let q = ask(&store, None, "posted?");
    let first = json!({ "stream": "repo", "topic": "Agent Q #1", "message_id": 10 });
    assert!(store.record_post(&q.id, "zulip", &first).unwrap());
    assert!(
        !store
            .record_post(&q.id, "zulip", &json!({ "message_id": 99 }))
            .unwrap()
    );
    assert!(store.record_post(&q.id, "web", &json!(null)).unwrap());
    let posts = store.posts(&q.id).unwrap();
    assert_eq!(posts.len(), 2);
    let zulip = posts.iter().find(|p| p.channel == "zulip").unwrap();
    assert_eq!(zulip.external_ref, first);

    let advanced = json!({ "stream": "repo", "topic": "Agent Q #1", "last_seen": 12 });
    store.update_post_ref(&q.id, "zulip", &advanced).unwrap();
    let zulip = store
        .posts(&q.id)
        .unwrap()
        .into_iter()
        .find(|p| p.channel == "zulip")
        .unwrap();
    assert_eq!(zulip.external_ref, advanced);
    let err = store
        .update_post_ref(&q.id, "slack", &json!({}))
        .unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err:?}");
}

#[test]
fn topic_numbers_count_per_stream() {
    let store = memory_store();
    let taken: Vec<_> = ["a", "a", "b", "a", "b"]
        .iter()
        .map(|s| store.next_topic_number(s).unwrap())
        .collect();
    assert_eq!(taken, [1, 2, 1, 3, 2]);
}

#[test]
fn topic_numbers_are_unique_across_connections() {
    let (_dir, db) = temp_db();
    drop(Store::open(&db).unwrap());
    let handles: Vec<_> = (0..3)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let store = Store::open(&db).unwrap();
                (0..30)
                    .map(|_| store.next_topic_number("repo").unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let all: BTreeSet<u64> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(all, (1..=90).collect());
}

fn ask_with_options(store: &Store, options: &[&str]) -> tether_store::Question {
    store
        .insert_question(&NewQuestion {
            question: "Which database?".into(),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
            ..NewQuestion::default()
        })
        .unwrap()
}

#[test]
fn a_choice_is_stored_as_its_label_and_index_whichever_way_it_was_given() {
    let store = memory_store();
    for (given, text, choice) in [
        ("2", "SQLite", Some(1)),
        ("#1", "Postgres", Some(0)),
        ("  sqlite ", "SQLite", Some(1)),
        ("Neither, use files", "Neither, use files", None),
        ("4", "4", None),
    ] {
        let q = ask_with_options(&store, &["Postgres", "SQLite", "MySQL"]);
        assert_eq!(q.options.len(), 3);
        let AnswerOutcome::Answered(a) = store.answer_question(&q.id, given, "cli", "ana").unwrap()
        else {
            panic!("not answered")
        };
        assert_eq!(
            (a.answer.as_deref(), a.choice),
            (Some(text), choice),
            "{given}"
        );
        assert_eq!(store.question(&q.id).unwrap(), *a);
    }
    let plain = ask_with_options(&store, &[]);
    let AnswerOutcome::Answered(a) = store.answer_question(&plain.id, "2", "cli", "ana").unwrap()
    else {
        panic!("not answered")
    };
    assert_eq!((a.answer.as_deref(), a.choice), (Some("2"), None));
}

#[test]
fn a_label_that_is_a_number_wins_over_the_position() {
    let options = ["3".to_owned(), "5".to_owned()];
    assert_eq!(tether_store::read_choice(&options, "3"), Some(0));
    assert_eq!(tether_store::read_choice(&options, "2"), Some(1));
    assert_eq!(tether_store::read_choice(&options, "0"), None);
    assert_eq!(tether_store::read_choice(&options, ""), None);
}

proptest::proptest! {
    #[test]
    fn reading_a_choice_never_panics_and_stays_in_range(
        options in proptest::collection::vec(".{0,12}", 0..7),
        answer in ".{0,16}",
    ) {
        if let Some(i) = tether_store::read_choice(&options, &answer) {
            proptest::prop_assert!(i < options.len());
        }
    }
}

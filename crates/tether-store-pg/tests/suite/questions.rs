//! Questions: the first answer wins across connections, choices, withdrawal, posts, topics.

use tether_store::{AnswerOutcome, QuestionStatus, Seq};
use tether_store_pg::PgStoreError;

use super::common::{question, run, store};

#[tokio::test]
async fn the_first_of_twenty_concurrent_answers_wins() {
    let (store, _db) = store().await;
    let run = run(&store).await;
    let asked = store
        .insert_question(&question(&run, "which way?"))
        .await
        .unwrap();
    assert_eq!(asked.status, QuestionStatus::Pending);
    let mut tasks = Vec::new();
    for i in 0..20 {
        let store = store.clone();
        let id = asked.id.clone();
        tasks.push(tokio::spawn(async move {
            let answer = format!("answer {i}");
            store
                .answer_question(&id, &answer, "web", &format!("person{i}"))
                .await
                .unwrap()
        }));
    }
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    let winners: Vec<_> = outcomes
        .iter()
        .filter_map(|o| match o {
            AnswerOutcome::Answered(q) => Some(q.answer.clone().unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(winners.len(), 1, "{outcomes:?}");
    for outcome in &outcomes {
        if let AnswerOutcome::AlreadyAnswered { answer, .. } = outcome {
            assert_eq!(answer, &winners[0]);
        }
    }
    let stored = store.question(&asked.id).await.unwrap();
    assert_eq!(stored.answer.as_ref(), Some(&winners[0]));
    let answered = store
        .events(&run, Seq::START, 100)
        .await
        .unwrap()
        .iter()
        .filter(|e| e.kind == "question_answered")
        .count();
    assert_eq!(answered, 1);
}

#[tokio::test]
async fn an_answer_is_read_against_the_choices_offered() {
    let (store, _db) = store().await;
    let run = run(&store).await;
    let mut new = question(&run, "which database?");
    new.options = vec!["SQLite".into(), "PostgreSQL".into()];
    new.confidence = Some(40);
    let asked = store.insert_question(&new).await.unwrap();
    assert_eq!(asked.options, new.options);
    let AnswerOutcome::Answered(answered) = store
        .answer_question(&asked.id, "2", "cli", "ana")
        .await
        .unwrap()
    else {
        panic!("the first answer must win");
    };
    assert_eq!(
        (answered.answer.as_deref(), answered.choice),
        (Some("PostgreSQL"), Some(1))
    );
    assert_eq!(answered.confidence, Some(40));
    assert_eq!(store.questions_for_run(&run).await.unwrap(), [*answered]);
}

#[tokio::test]
async fn a_withdrawn_question_takes_no_answer() {
    let (store, _db) = store().await;
    let run = run(&store).await;
    let asked = store
        .insert_question(&question(&run, "still there?"))
        .await
        .unwrap();
    assert_eq!(
        store.pending_questions().await.unwrap(),
        std::slice::from_ref(&asked)
    );
    assert!(store.cancel_question(&asked.id).await.unwrap());
    assert!(!store.cancel_question(&asked.id).await.unwrap());
    let outcome = store
        .answer_question(&asked.id, "yes", "cli", "ana")
        .await
        .unwrap();
    assert_eq!(outcome, AnswerOutcome::Cancelled);
    assert!(store.pending_questions().await.unwrap().is_empty());
    assert_eq!(store.question_history(10).await.unwrap().len(), 1);
}

#[tokio::test]
async fn a_question_for_an_unknown_run_is_refused() {
    let (store, _db) = store().await;
    let unknown = "r-unknown1".parse().unwrap();
    let err = store
        .insert_question(&question(&unknown, "?"))
        .await
        .unwrap_err();
    assert!(
        matches!(err, PgStoreError::NotFound { what: "run", .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_question_is_posted_once_per_channel() {
    let (store, _db) = store().await;
    let run = run(&store).await;
    let asked = store.insert_question(&question(&run, "?")).await.unwrap();
    let first = serde_json::json!({"stream": "agents", "message_id": 7});
    assert!(store.record_post(&asked.id, "zulip", &first).await.unwrap());
    assert!(
        !store
            .record_post(&asked.id, "zulip", &serde_json::json!({}))
            .await
            .unwrap()
    );
    let moved = serde_json::json!({"stream": "agents", "message_id": 7, "last_seen": 9});
    store
        .update_post_ref(&asked.id, "zulip", &moved)
        .await
        .unwrap();
    let posts = store.posts(&asked.id).await.unwrap();
    assert_eq!(posts.len(), 1);
    assert_eq!(
        (posts[0].channel.as_str(), &posts[0].external_ref),
        ("zulip", &moved)
    );
    let err = store
        .update_post_ref(&asked.id, "web", &moved)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            PgStoreError::NotFound {
                what: "question post",
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn topic_numbers_are_never_taken_twice() {
    let (store, _db) = store().await;
    assert_eq!(store.next_topic_number("agents").await.unwrap(), 1);
    assert_eq!(store.next_topic_number("other").await.unwrap(), 1);
    let mut tasks = Vec::new();
    for _ in 0..20 {
        let store = store.clone();
        tasks.push(tokio::spawn(async move {
            store.next_topic_number("agents").await.unwrap()
        }));
    }
    let mut taken = Vec::new();
    for task in tasks {
        taken.push(task.await.unwrap());
    }
    taken.sort_unstable();
    assert_eq!(taken, (2..=21).collect::<Vec<u64>>());
}

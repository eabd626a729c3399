use proptest::prelude::*;
use serde_json::json;
use tether_store::{Event, NewQuestion, QuestionId, RunId, RunKind, Seq, Store, StoredEvent};

use super::*;

fn store_with_run() -> (Store, RunId) {
    let store = Store::open_in_memory().unwrap();
    let run = store
        .create_run(RunKind::Goal, std::path::Path::new("/ws"), &json!({}))
        .unwrap();
    (store, run)
}

fn ask(run: &RunId) -> NewQuestion {
    NewQuestion {
        run_id: Some(run.clone()),
        question: "Which name?".into(),
        context: "naming the module".into(),
        confidence: Some(10),
        thread_id: None,
        options: vec!["alpha".into(), "beta".into()],
    }
}

fn event(store: &Store, run: &RunId, event: Event) {
    store.append(Some(run), &event).unwrap();
}

fn started(store: &Store, run: &RunId, n: u32) {
    event(store, run, Event::IterationStarted { n });
}

fn completed(store: &Store, run: &RunId, n: u32) {
    let summary = String::new();
    event(store, run, Event::IterationCompleted { n, summary });
}

#[test]
fn a_question_answered_in_an_iteration_a_crash_cut_short_is_given_back_once() {
    let (store, run) = store_with_run();
    started(&store, &run, 1);
    let q = store.insert_question(&ask(&run)).unwrap();
    store.answer_question(&q.id, "2", "cli", "ana").unwrap();
    // Killed: iteration 1 never ends; the resumed run starts the agent's turn over.
    started(&store, &run, 1);
    let again = earlier(&store, &ask(&run)).unwrap().expect("given back");
    assert_eq!(again.id, q.id);
    assert_eq!(again.answer.as_deref(), Some("beta"));
    // The confidence does not make it another question.
    let surer = NewQuestion {
        confidence: Some(90),
        ..ask(&run)
    };
    assert_eq!(
        earlier(&store, &surer).unwrap().map(|q| q.id),
        Some(q.id.clone())
    );
    // Given back in the resumed iteration, which completes: its answer reached a completed turn,
    // and asking again later is a new question.
    event(&store, &run, Event::QuestionRepeated { question_id: q.id });
    completed(&store, &run, 1);
    started(&store, &run, 2);
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
}

#[test]
fn a_repeat_cut_short_again_is_given_back_again() {
    let (store, run) = store_with_run();
    started(&store, &run, 1);
    let q = store.insert_question(&ask(&run)).unwrap();
    store.answer_question(&q.id, "alpha", "cli", "ana").unwrap();
    started(&store, &run, 1);
    event(
        &store,
        &run,
        Event::QuestionRepeated {
            question_id: q.id.clone(),
        },
    );
    // Killed again before this attempt ended.
    started(&store, &run, 1);
    assert_eq!(
        earlier(&store, &ask(&run)).unwrap().map(|q| q.id),
        Some(q.id)
    );
}

#[test]
fn asking_again_in_a_healthy_iteration_or_after_one_ended_asks_anew() {
    let (store, run) = store_with_run();
    started(&store, &run, 1);
    let q = store.insert_question(&ask(&run)).unwrap();
    store.answer_question(&q.id, "alpha", "cli", "ana").unwrap();
    // The same iteration, deliberately again.
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
    completed(&store, &run, 1);
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
    started(&store, &run, 2);
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
    // A failed iteration ended too: the agent had the answer.
    let failed = |n| Event::IterationFailed {
        n,
        error: "exit 1".into(),
    };
    let q2 = store.insert_question(&ask(&run)).unwrap();
    store.answer_question(&q2.id, "beta", "cli", "ana").unwrap();
    event(&store, &run, failed(2));
    started(&store, &run, 3);
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
}

#[test]
fn a_pending_question_is_waited_for_whenever_it_was_asked() {
    let (store, run) = store_with_run();
    started(&store, &run, 1);
    let q = store.insert_question(&ask(&run)).unwrap();
    assert_eq!(
        earlier(&store, &ask(&run)).unwrap().map(|q| q.id),
        Some(q.id.clone())
    );
    completed(&store, &run, 1);
    started(&store, &run, 2);
    assert_eq!(
        earlier(&store, &ask(&run)).unwrap().map(|q| q.id),
        Some(q.id.clone())
    );
    // Withdrawn: asked anew.
    store.cancel_question(&q.id).unwrap();
    assert_eq!(earlier(&store, &ask(&run)).unwrap(), None);
}

#[test]
fn another_question_another_run_or_no_run_is_asked_anew() {
    let (store, run) = store_with_run();
    let other = store
        .create_run(RunKind::Goal, std::path::Path::new("/ws"), &json!({}))
        .unwrap();
    started(&store, &run, 1);
    store.insert_question(&ask(&run)).unwrap();
    let variants = [
        NewQuestion {
            question: "Which other name?".into(),
            ..ask(&run)
        },
        NewQuestion {
            context: "another context".into(),
            ..ask(&run)
        },
        NewQuestion {
            options: vec!["alpha".into(), "gamma".into()],
            ..ask(&run)
        },
        NewQuestion {
            thread_id: Some("q-abc123".into()),
            ..ask(&run)
        },
        ask(&other),
        NewQuestion {
            run_id: None,
            ..ask(&run)
        },
    ];
    for v in variants {
        assert_eq!(earlier(&store, &v).unwrap(), None, "{v:?}");
    }
}

/// One step of a generated journal.
#[derive(Debug, Clone)]
enum Step {
    Started,
    Completed,
    Failed,
    Asked(usize),
    Repeated(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => Just(Step::Started),
        1 => Just(Step::Completed),
        1 => Just(Step::Failed),
        3 => (0..4usize).prop_map(Step::Asked),
        2 => (0..4usize).prop_map(Step::Repeated),
    ]
}

fn id(i: usize) -> QuestionId {
    format!("q-{i:06}").parse().unwrap()
}

fn stored(steps: &[Step]) -> Vec<StoredEvent> {
    steps
        .iter()
        .enumerate()
        .map(|(seq, s)| {
            let event = match s {
                Step::Started => Event::IterationStarted { n: 1 },
                Step::Completed => Event::IterationCompleted {
                    n: 1,
                    summary: String::new(),
                },
                Step::Failed => Event::IterationFailed {
                    n: 1,
                    error: String::new(),
                },
                Step::Asked(i) => Event::QuestionAsked {
                    question_id: id(*i),
                },
                Step::Repeated(i) => Event::QuestionRepeated {
                    question_id: id(*i),
                },
            };
            StoredEvent {
                seq: Seq(i64::try_from(seq).unwrap() + 1),
                run_id: None,
                at_ms: 0,
                kind: event.kind().to_owned(),
                payload: serde_json::to_value(&event).unwrap(),
                event: Some(event),
            }
        })
        .collect()
}

/// The rule read off the journal around the question's last ask: the `iteration_started` before
/// it (none: asked before any iteration, nothing was cut short), the one after it (none: it is in
/// the iteration in progress), and no end of that iteration in between.
fn by_hand(steps: &[Step], q: usize) -> bool {
    let Some(at) = steps
        .iter()
        .rposition(|s| matches!(s, Step::Asked(i) | Step::Repeated(i) if *i == q))
    else {
        return false;
    };
    let is_start = |s: &Step| matches!(s, Step::Started);
    let (Some(start), Some(next)) = (
        steps[..at].iter().rposition(is_start),
        steps[at..].iter().position(is_start).map(|n| at + n),
    ) else {
        return false;
    };
    !steps[start..next]
        .iter()
        .any(|s| matches!(s, Step::Completed | Step::Failed))
}

proptest! {
    #[test]
    fn given_back_only_when_last_asked_in_an_iteration_cut_short_and_not_in_progress(
        steps in proptest::collection::vec(step(), 0..40)
    ) {
        let iterations = Iterations::of(&stored(&steps));
        for q in 0..4 {
            prop_assert_eq!(
                iterations.asked_in_an_unended_one(&id(q)),
                by_hand(&steps, q),
                "question {} in {:?}",
                q,
                steps
            );
        }
    }
}

//! Who answered, told to a one-way sink once: the process waiting for the question and the
//! `tether answer` of a question nobody waits for may both try (two processes, two store
//! connections), and the sink hears it once; a sink the question never reached hears nothing.

use std::sync::{Arc, Mutex};

use tether_config::Workspace;
use tether_human::channels::BoxFuture;
use tether_human::sink_body::{BodyKind, SinkBody};
use tether_human::sinks::{Deliver, OneWay, SentLog};
use tether_human::{Answer, Channel};
use tether_store::{Journal, NewQuestion, Question, Store};

/// A sink keeping the kind of each body it is handed.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<BodyKind>>>);

impl Deliver for Recorder {
    fn name(&self) -> &'static str {
        "webhook"
    }

    fn deliver(&self, body: SinkBody) -> BoxFuture<'_, ()> {
        self.0.lock().unwrap().push(body.kind);
        Box::pin(async {})
    }
}

/// One process's connection to the workspace's store in `dir`.
fn journal(dir: &std::path::Path) -> Journal {
    Journal::new(
        Store::open(Workspace::at(dir).db_path()).unwrap(),
        Vec::new(),
    )
    .unwrap()
}

fn question(journal: &Journal) -> Question {
    journal
        .store()
        .insert_question(&NewQuestion {
            question: "Ship it?".into(),
            ..NewQuestion::default()
        })
        .unwrap()
}

fn answer(q: &Question) -> Answer {
    Answer {
        question_id: q.id.clone(),
        text: "yes".into(),
        channel: "cli".into(),
        responder: "alice".into(),
        thread_id: q.id.to_string(),
        choice: None,
        options_offered: 0,
    }
}

#[tokio::test]
async fn a_sink_is_told_an_answer_once_whichever_process_tells_it() {
    let dir = tempfile::tempdir().unwrap();
    let (asker, answerer) = (journal(dir.path()), journal(dir.path()));
    let q = question(&asker);
    // The asker handed the question over.
    assert!(SentLog::new(asker.clone(), "webhook").first_time(&q));
    let (heard_by_asker, heard_by_answerer) = (Recorder::default(), Recorder::default());
    let waiting = OneWay::new(heard_by_asker.clone()).with_sent_log(SentLog::new(asker, "webhook"));
    let late =
        OneWay::new(heard_by_answerer.clone()).with_sent_log(SentLog::new(answerer, "webhook"));
    let a = answer(&q);
    late.answered_elsewhere(&q, &a).await;
    waiting.answered_elsewhere(&q, &a).await;
    assert_eq!(*heard_by_answerer.0.lock().unwrap(), [BodyKind::Answered]);
    assert!(heard_by_asker.0.lock().unwrap().is_empty(), "told twice");
}

#[tokio::test]
async fn a_sink_the_question_never_reached_is_not_told_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let journal = journal(dir.path());
    let q = question(&journal);
    let heard = Recorder::default();
    // Another sink (the escalation's) was handed it; this one was not.
    assert!(SentLog::new(journal.clone(), "webhook:escalation").first_time(&q));
    let sink = OneWay::new(heard.clone()).with_sent_log(SentLog::new(journal, "webhook"));
    sink.answered_elsewhere(&q, &answer(&q)).await;
    assert!(heard.0.lock().unwrap().is_empty());
}

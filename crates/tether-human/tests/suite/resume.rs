//! Waiting again for a question a killed process left pending (what `tether resume` does): the
//! deadline counts from when it was asked, Zulip waits in the topic it was posted in without
//! posting again, and the desk tells every channel when a run ends.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tether_config::{Config, Workspace};
use tether_human::{AskPolicy, Broker, Channel, ChannelAnswer, Console, Desk, Timeout};
use tether_store::{Journal, NewQuestion, Outcome, Question, RunId, RunKind, Store, StoreOptions};
use tether_testkit::zulip_server::{Endpoint, FakeZulipServer};
use tokio_util::sync::CancellationToken;

use crate::common::zulip_broker;

const DEADLINE: Duration = Duration::from_secs(10);

fn question(text: &str) -> NewQuestion {
    NewQuestion {
        question: text.into(),
        context: "ctx".into(),
        confidence: Some(10),
        ..NewQuestion::default()
    }
}

/// A minute ago, as a store clock.
fn a_minute_ago() -> i64 {
    tether_store::now_ms() - 60_000
}

#[tokio::test]
async fn the_deadline_counts_from_when_the_question_was_asked() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let past = StoreOptions {
        clock: a_minute_ago,
        ..StoreOptions::default()
    };
    let asked = Store::open_with(ws.db_path(), &past)
        .unwrap()
        .insert_question(&question("Still there?"))
        .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let broker = Broker::new(journal, ws.state_dir(), Vec::new()).with_timeout(Some(Timeout {
        after: Duration::from_secs(30),
        answer: "Go ahead.".into(),
    }));
    let started = Instant::now();
    let got = tokio::time::timeout(DEADLINE, broker.wait(&asked.id, CancellationToken::new()))
        .await
        .expect("asked a minute ago with 30 s to answer: due at once")
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Go ahead.", "timeout")
    );
    assert!(started.elapsed() < DEADLINE);
}

async fn zulip_server() -> FakeZulipServer {
    FakeZulipServer::builder()
        .longpoll_timeout(Duration::from_millis(200))
        .start()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_question_waited_for_again_stays_in_its_zulip_topic_and_is_not_posted_again() {
    let server = zulip_server().await;
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());

    // The first process posts the question, then stops waiting (as if killed).
    let (_, first) = zulip_broker(&server, &ws);
    let stop = CancellationToken::new();
    let asking = {
        let stop = stop.clone();
        tokio::spawn(async move { first.ask(question("Merge it?"), stop).await })
    };
    server.wait_for_messages(1, DEADLINE).await.unwrap();
    let store = Store::open(ws.db_path()).unwrap();
    let id = tokio::time::timeout(DEADLINE, async {
        loop {
            if let Some(q) = store.pending_questions().unwrap().into_iter().next()
                && !store.posts(&q.id).unwrap().is_empty()
            {
                return q.id;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .unwrap();
    stop.cancel();
    assert!(asking.await.unwrap().is_err(), "the wait was cancelled");
    let topic = server.bot_messages()[0].topic.clone();
    let registered = server.count(Endpoint::Register);

    // A second process waits for the same question.
    let (_, second) = zulip_broker(&server, &ws);
    let waiting = {
        let id = id.clone();
        tokio::spawn(async move { second.wait(&id, CancellationToken::new()).await })
    };
    server
        .wait_for_count(Endpoint::Register, registered + 1, DEADLINE)
        .await
        .unwrap();
    server.post_as_human(&topic, "Yes, merge it.");
    let got = tokio::time::timeout(DEADLINE, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        (got.question_id, got.text.as_str(), got.channel.as_str()),
        (id, "Yes, merge it.", "zulip")
    );
    assert_eq!(
        server.count(Endpoint::SendMessage),
        1,
        "posted once: {:?}",
        server.bot_messages()
    );
}

/// A channel that only records the runs it was told ended.
#[derive(Default)]
struct Listener {
    ended: Mutex<Vec<(RunId, Outcome)>>,
}

impl Channel for Listener {
    fn name(&self) -> &'static str {
        "listener"
    }

    async fn offer(&self, _question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        stop.cancelled().await;
        None
    }

    async fn run_ended(&self, run: &RunId, outcome: Outcome) {
        self.ended.lock().unwrap().push((run.clone(), outcome))
    }
}

#[tokio::test]
async fn the_desk_tells_every_channel_that_a_run_ended() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let store = Store::open(ws.db_path()).unwrap();
    let run = store
        .create_run(RunKind::Ralph, dir.path(), &serde_json::json!({}))
        .unwrap();
    let journal = Journal::new(store, Vec::new()).unwrap();
    let listener = Arc::new(Listener::default());
    let desk = Desk::from_config(
        &Config::default(),
        &ws,
        journal,
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    )
    .with_channel(listener.clone());
    assert_eq!(
        desk.policy(),
        &AskPolicy {
            threshold: 2,
            problems: Vec::new()
        }
    );
    desk.run_ended(&run, Outcome::Completed).await;
    assert_eq!(
        *listener.ended.lock().unwrap(),
        vec![(run, Outcome::Completed)]
    );
}

//! Control characters from the agent (question, context) and from whoever answers (answer,
//! responder, channel) reach the terminal only as visible escapes; and the journal's sinks learn
//! of a question as soon as it is stored, before its answer.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_config::Workspace;
use tether_human::broker::answer;
use tether_human::terminal::Terminal;
use tether_human::{Broker, Channel, ChannelAnswer};
use tether_store::{EventSink, Journal, NewQuestion, Question, RunKind, Store, StoredEvent};
use tether_testkit::{Captured, wait_until_async};
use tokio_util::sync::CancellationToken;

const HOSTILE: &str = "Deploy?\x1b[2J\x1b[H\rAll tests passed\x1b]52;c;ZXZpbA==\x07";

#[tokio::test]
async fn the_card_shows_escape_sequences_and_carriage_returns_as_escapes() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let screen = Captured::default();
    let terminal = Arc::new(Terminal::new(rx, Box::new(screen.clone()), "you".into()));
    let broker = Broker::new(journal, ws.state_dir(), vec![terminal]);
    tx.send("no\n".into()).unwrap();
    let question = NewQuestion {
        question: HOSTILE.into(),
        context: "log:\n\x1b[31mFAIL\x1b[0m\r\u{9b}2J ok\u{202e}txt.exe".into(),
        confidence: Some(10),
        ..NewQuestion::default()
    };
    let got = broker
        .ask(question, CancellationToken::new())
        .await
        .unwrap();
    let shown = screen.text();
    assert!(
        !shown.contains(['\x1b', '\r', '\x07', '\u{9b}', '\u{202e}']),
        "{shown:?}"
    );
    insta::assert_snapshot!(shown.replace(got.question_id.as_str(), "q-ID"));
}

#[tokio::test]
async fn an_answer_given_elsewhere_is_shown_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let screen = Captured::default();
    let terminal = Arc::new(Terminal::new(rx, Box::new(screen.clone()), "you".into()));
    let broker = Broker::new(journal, ws.state_dir(), vec![terminal]);
    let question = NewQuestion {
        question: "Ship?".into(),
        ..NewQuestion::default()
    };
    let waiting = tokio::spawn(async move { broker.ask(question, CancellationToken::new()).await });
    let other = Store::open(ws.db_path()).unwrap();
    let q = wait_until_async("a pending question", Duration::from_secs(10), || {
        other.pending_questions().unwrap().into_iter().next()
    })
    .await
    .unwrap();
    answer(
        &other,
        &ws.state_dir(),
        &q.id,
        "yes\x1b[2K\rno",
        "cli",
        "eve\x1b[8m",
    )
    .unwrap();
    waiting.await.unwrap().unwrap();
    let shown = screen.text();
    assert!(
        shown.ends_with("\n(answered on cli by eve\\x1b[8m: yes\\x1b[2K\\rno)\n"),
        "{shown:?}"
    );
}

/// Records the kinds of the events it is handed.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

impl EventSink for Seen {
    fn event(&self, event: &StoredEvent) {
        self.0.lock().unwrap().push(event.kind.clone());
    }
}

/// A channel that answers only once the sink has seen the question.
struct AnswersAfterTheSinkSawIt(Arc<Seen>);

impl Channel for AnswersAfterTheSinkSawIt {
    fn name(&self) -> &'static str {
        "test"
    }

    async fn offer(&self, _question: &Question, _stop: CancellationToken) -> Option<ChannelAnswer> {
        wait_until_async(
            "the sink to see the question",
            Duration::from_secs(10),
            || {
                let seen = self.0.0.lock().unwrap();
                seen.iter().any(|k| k == "question_asked").then_some(())
            },
        )
        .await
        .ok()?;
        Some(ChannelAnswer::text("go", "tester".to_owned()))
    }
}

#[tokio::test]
async fn the_sinks_see_a_runs_question_before_its_answer() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let store = Store::open(ws.db_path()).unwrap();
    let run = store
        .create_run(RunKind::Goal, dir.path(), &serde_json::json!({}))
        .unwrap();
    let seen = Arc::new(Seen::default());
    let journal = Journal::new(store, vec![seen.clone()]).unwrap();
    let channel = Arc::new(AnswersAfterTheSinkSawIt(seen.clone()));
    let broker = Broker::new(journal, ws.state_dir(), vec![channel]);
    let question = NewQuestion {
        run_id: Some(run),
        question: "Go?".into(),
        ..NewQuestion::default()
    };
    let got = tokio::time::timeout(
        Duration::from_secs(20),
        broker.ask(question, CancellationToken::new()),
    )
    .await
    .unwrap()
    .unwrap();
    assert_eq!(got.text, "go");
    assert_eq!(
        *seen.0.lock().unwrap(),
        ["question_asked", "question_answered"]
    );
}

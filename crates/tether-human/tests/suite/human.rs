//! The broker and `ask_human`: first answer wins across channels and processes, cancellation
//! leaves the question pending, the threshold answers over-confident questions.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tether_config::Workspace;
use tether_human::broker::answer;
use tether_human::tool::AskHuman;
use tether_human::{
    Answer, AskPolicy, Broker, BrokerError, Channel, ChannelAnswer, Desk, DynChannel, Timeout,
};
use tether_store::Journal;
use tether_store::NewQuestion;
use tether_store::{AnswerOutcome, Question, QuestionStatus, Store};
use tether_testkit::{Captured, wait_until_async};
use tether_tools::{Tool, ToolContext};
use tokio_util::sync::CancellationToken;

fn setup() -> (tempfile::TempDir, Workspace, Journal) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    (dir, ws, journal)
}

fn ask(q: &str) -> NewQuestion {
    NewQuestion {
        question: q.into(),
        context: "ctx".into(),
        confidence: Some(10),
        ..NewQuestion::default()
    }
}

/// Waits (with a deadline) until the store holds a pending question, and returns it.
async fn pending(ws: &Workspace) -> Question {
    let store = Store::open(ws.db_path()).unwrap();
    wait_until_async("a pending question", Duration::from_secs(10), || {
        store.pending_questions().unwrap().into_iter().next()
    })
    .await
    .unwrap()
}

#[tokio::test]
async fn an_answer_from_another_connection_wakes_the_waiter_and_the_first_wins() {
    let (_d, ws, journal) = setup();
    let broker = Broker::new(journal, ws.state_dir(), Vec::new());
    let waiting = tokio::spawn(async move {
        broker
            .ask(ask("Postgres or SQLite?"), CancellationToken::new())
            .await
    });
    let q = pending(&ws).await;
    let other = Store::open(ws.db_path()).unwrap();
    let first = answer(&other, &ws.state_dir(), &q.id, "SQLite", "cli", "alice").unwrap();
    assert!(matches!(first, AnswerOutcome::Answered(_)));
    let second = answer(&other, &ws.state_dir(), &q.id, "Postgres", "cli", "bob").unwrap();
    assert!(
        matches!(second, AnswerOutcome::AlreadyAnswered { ref responder, .. } if responder == "alice")
    );
    let got = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(
        got,
        Answer {
            question_id: q.id.clone(),
            text: "SQLite".into(),
            channel: "cli".into(),
            responder: "alice".into(),
            thread_id: q.id.to_string(),
            choice: None,
            options_offered: 0,
        }
    );
}

/// A channel that answers after being offered a question, or only listens.
struct Scripted {
    name: &'static str,
    answer: Option<&'static str>,
    told: Arc<Mutex<Vec<String>>>,
}

impl Channel for Scripted {
    fn name(&self) -> &'static str {
        self.name
    }
    async fn offer(&self, _q: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        match self.answer {
            Some(a) => Some(ChannelAnswer::text(a, "carol")),
            None => {
                stop.cancelled().await;
                None
            }
        }
    }
    async fn answered_elsewhere(&self, _q: &Question, a: &Answer) {
        self.told
            .lock()
            .unwrap()
            .push(format!("answered on {} by {}", a.channel, a.responder));
    }
}

#[tokio::test]
async fn a_channel_answer_is_stored_and_the_other_channels_are_told() {
    let (_d, ws, journal) = setup();
    let told = Arc::new(Mutex::new(Vec::new()));
    let channels: Vec<Arc<dyn DynChannel>> = vec![
        Arc::new(Scripted {
            name: "zulip",
            answer: None,
            told: told.clone(),
        }),
        Arc::new(Scripted {
            name: "terminal",
            answer: Some("yes"),
            told: told.clone(),
        }),
    ];
    let broker = Broker::new(journal.clone(), ws.state_dir(), channels);
    let got = broker
        .ask(ask("Ship it?"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (
            got.text.as_str(),
            got.channel.as_str(),
            got.responder.as_str()
        ),
        ("yes", "terminal", "carol")
    );
    assert_eq!(*told.lock().unwrap(), ["answered on terminal by carol"]);
    let stored = journal.store().question(&got.question_id).unwrap();
    assert_eq!(stored.status, QuestionStatus::Answered);
}

#[tokio::test]
async fn cancelling_leaves_the_question_pending_and_a_later_wait_gets_the_answer() {
    let (_d, ws, journal) = setup();
    let broker = Broker::new(journal.clone(), ws.state_dir(), Vec::new());
    let cancel = CancellationToken::new();
    let b = broker.clone();
    let c = cancel.clone();
    let waiting = tokio::spawn(async move { b.ask(ask("Which port?"), c).await });
    let q = pending(&ws).await;
    cancel.cancel();
    let err = waiting.await.unwrap().unwrap_err();
    assert!(matches!(err, BrokerError::Cancelled(ref id) if *id == q.id));
    assert_eq!(
        journal.store().question(&q.id).unwrap().status,
        QuestionStatus::Pending
    );

    let b = broker.clone();
    let id = q.id.clone();
    let waiting = tokio::spawn(async move { b.wait(&id, CancellationToken::new()).await });
    answer(
        &Store::open(ws.db_path()).unwrap(),
        &ws.state_dir(),
        &q.id,
        "8080",
        "cli",
        "dan",
    )
    .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.text, "8080");
}

#[tokio::test]
async fn a_configured_timeout_answers_for_the_human() {
    let (_d, ws, journal) = setup();
    let broker = Broker::new(journal, ws.state_dir(), Vec::new()).with_timeout(Some(Timeout {
        after: Duration::from_millis(50),
        answer: "Proceed with your best judgement.".into(),
    }));
    let got = broker
        .ask(ask("Anyone?"), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Proceed with your best judgement.", "timeout")
    );
}

#[tokio::test]
async fn ask_human_applies_the_threshold_and_formats_the_reply() {
    let (_d, ws, journal) = setup();
    let broker = Broker::new(journal.clone(), ws.state_dir(), Vec::new());
    let policy = AskPolicy {
        threshold: 2,
        problems: Vec::new(),
    };
    let tool = AskHuman::new(Desk::new(broker, policy), Arc::new(Mutex::new(None)));
    let ctx = ToolContext::default();
    let sure = tool
        .call(
            json!({"question": "Rename it?", "context": "", "confidence": 40}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(
        sure.content
            .starts_with("Proceed without asking: your confidence 40"),
        "{}",
        sure.content
    );
    assert!(
        journal.store().pending_questions().unwrap().is_empty(),
        "nothing reached a human"
    );

    let tool = Arc::new(tool);
    let t = tool.clone();
    let asking = tokio::spawn(async move {
        t.call(json!({"question": "Delete the old API?", "context": "v1 still used", "confidence": 10}), &ToolContext::default())
            .await
    });
    let q = pending(&ws).await;
    assert_eq!(
        (q.question.as_str(), q.context.as_str(), q.confidence),
        ("Delete the old API?", "v1 still used", Some(10))
    );
    answer(
        &Store::open(ws.db_path()).unwrap(),
        &ws.state_dir(),
        &q.id,
        "Keep it one more release.",
        "cli",
        "erin",
    )
    .unwrap();
    let out = asking.await.unwrap().unwrap();
    assert_eq!(
        out.content,
        format!(
            "Human replied: Keep it one more release.\n\nthread_id: {}\nresponder: erin (via cli)",
            q.id
        )
    );
}

#[tokio::test]
async fn the_terminal_shows_a_card_and_takes_the_typed_answer() {
    use tether_human::terminal::Terminal;
    let (_d, ws, journal) = setup();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let screen = Captured::default();
    let terminal = Arc::new(Terminal::new(rx, Box::new(screen.clone()), "you".into()));
    let broker = Broker::new(journal, ws.state_dir(), vec![terminal]);
    tx.send("\n".into()).unwrap(); // an empty line asks again
    tx.send("Blue, please.\n".into()).unwrap();
    let mut a = ask("Which colour?\nThe logo needs one.");
    a.context = "brand.md says nothing".into();
    let got = broker.ask(a, CancellationToken::new()).await.unwrap();
    assert_eq!(
        (
            got.text.as_str(),
            got.channel.as_str(),
            got.responder.as_str()
        ),
        ("Blue, please.", "terminal", "you")
    );
    let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    insta::assert_snapshot!(shown.replace(got.question_id.as_str(), "q-ID"));
}

#[tokio::test]
async fn the_terminal_lists_the_choices_and_a_typed_number_is_that_choice() {
    use tether_human::terminal::Terminal;
    let (_d, ws, journal) = setup();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let screen = Captured::default();
    let terminal = Arc::new(Terminal::new(rx, Box::new(screen.clone()), "you".into()));
    let broker = Broker::new(journal, ws.state_dir(), vec![terminal]);
    tx.send("2\n".into()).unwrap();
    let mut a = ask("Which database? I suggest Postgres (1).");
    a.options = vec!["Postgres".into(), "SQLite".into(), "Both".into()];
    let got = broker.ask(a, CancellationToken::new()).await.unwrap();
    assert_eq!(
        (got.text.as_str(), got.choice, got.options_offered),
        ("SQLite", Some(1), 3)
    );
    let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    insta::assert_snapshot!(shown.replace(got.question_id.as_str(), "q-ID"));
}

#[tokio::test]
async fn the_terminal_prompt_closes_when_another_channel_answers_first() {
    use tether_human::terminal::Terminal;
    let (_d, ws, journal) = setup();
    let (_tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let screen = Captured::default();
    let terminal = Arc::new(Terminal::new(rx, Box::new(screen.clone()), "you".into()));
    let broker = Broker::new(journal, ws.state_dir(), vec![terminal]);
    let b = broker.clone();
    let waiting = tokio::spawn(async move { b.ask(ask("Ship?"), CancellationToken::new()).await });
    let q = pending(&ws).await;
    answer(
        &Store::open(ws.db_path()).unwrap(),
        &ws.state_dir(),
        &q.id,
        "Yes",
        "cli",
        "zoe",
    )
    .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.channel, "cli");
    let shown = String::from_utf8(screen.0.lock().unwrap().clone()).unwrap();
    assert!(
        shown.ends_with("\n(answered on cli by zoe: Yes)\n"),
        "{shown}"
    );
}

//! Reminders and escalation of a question still waiting, on tokio's paused clock: a reminder
//! after `remind_after`, the escalation sinks offered after `escalate_after`, an answer there
//! winning with the original channels told, and no expiry without a timeout, even after days.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tether_config::Workspace;
use tether_human::{Answer, Broker, Channel, ChannelAnswer, DynChannel, Escalation};
use tether_store::{Journal, NewQuestion, Question, QuestionStatus, Store, StoreOptions};
use tether_testkit::wait_until_async;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// Real time a wait may take (the store works on blocking threads, slow on a loaded machine).
const LIMIT: Duration = Duration::from_secs(30);
const MINUTE: Duration = Duration::from_secs(60);

/// A channel that records what it is told and answers when the test says.
struct Recorder {
    name: &'static str,
    offers: AtomicUsize,
    reminders: AtomicUsize,
    told: Mutex<Vec<String>>,
    answer: watch::Sender<Option<ChannelAnswer>>,
}

impl Recorder {
    fn new(name: &'static str) -> Arc<Self> {
        Arc::new(Recorder {
            name,
            offers: AtomicUsize::new(0),
            reminders: AtomicUsize::new(0),
            told: Mutex::new(Vec::new()),
            answer: watch::Sender::new(None),
        })
    }
    fn offers(&self) -> usize {
        self.offers.load(Ordering::SeqCst)
    }
    fn reminders(&self) -> usize {
        self.reminders.load(Ordering::SeqCst)
    }
    fn told(&self) -> Vec<String> {
        self.told.lock().unwrap().clone()
    }
}

impl Channel for Recorder {
    fn name(&self) -> &'static str {
        self.name
    }
    async fn offer(&self, _question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        self.offers.fetch_add(1, Ordering::SeqCst);
        let mut rx = self.answer.subscribe();
        Box::pin(async move {
            tokio::select! {
                got = rx.wait_for(Option::is_some) => got.ok().and_then(|a| a.clone()),
                () = stop.cancelled() => None,
            }
        })
        .await
    }
    async fn answered_elsewhere(&self, _q: &Question, answer: &Answer) {
        self.told
            .lock()
            .unwrap()
            .push(format!("{} by {}", answer.channel, answer.responder));
        Box::pin(async {}).await
    }
    async fn remind(&self, _question: &Question) {
        self.reminders.fetch_add(1, Ordering::SeqCst);
        Box::pin(async {}).await
    }
}

fn question() -> NewQuestion {
    NewQuestion {
        question: "Deploy on Friday?".into(),
        context: "ctx".into(),
        confidence: Some(20),
        options: vec!["yes".into(), "no".into()],
        ..NewQuestion::default()
    }
}

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    journal: Journal,
    chat: Arc<Recorder>,
    oncall: Arc<Recorder>,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    Setup {
        _dir: dir,
        ws,
        journal,
        chat: Recorder::new("chat"),
        oncall: Recorder::new("oncall"),
    }
}

fn broker(s: &Setup) -> Broker {
    let chat: Arc<dyn DynChannel> = s.chat.clone();
    let oncall: Arc<dyn DynChannel> = s.oncall.clone();
    Broker::new(s.journal.clone(), s.ws.state_dir(), vec![chat]).with_escalation(Escalation {
        remind_after: Some(30 * MINUTE),
        escalate_after: Some(120 * MINUTE),
        channels: vec![oncall],
    })
}

/// Lets the broker's tasks run without moving the clock on.
async fn settle() {
    for _ in 0..50 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn a_waiting_question_is_reminded_then_escalated_and_an_answer_there_wins() {
    let s = setup();
    let b = broker(&s);
    let asking = tokio::spawn(async move { b.ask(question(), CancellationToken::new()).await });
    let chat = Arc::clone(&s.chat);
    wait_until_async("the chat's offer", LIMIT, || {
        (chat.offers() == 1).then_some(())
    })
    .await
    .unwrap();

    tokio::time::advance(29 * MINUTE).await;
    settle().await;
    assert_eq!(s.chat.reminders(), 0, "too early for a reminder");

    tokio::time::advance(2 * MINUTE).await;
    let chat = Arc::clone(&s.chat);
    wait_until_async("the reminder", LIMIT, || {
        (chat.reminders() == 1).then_some(())
    })
    .await
    .unwrap();
    assert_eq!(s.oncall.offers(), 0, "too early to escalate");

    tokio::time::advance(87 * MINUTE).await;
    settle().await;
    assert_eq!(s.oncall.offers(), 0, "still too early to escalate");
    tokio::time::advance(3 * MINUTE).await;
    let oncall = Arc::clone(&s.oncall);
    wait_until_async("the escalation", LIMIT, || {
        (oncall.offers() == 1).then_some(())
    })
    .await
    .unwrap();
    assert_eq!(s.chat.reminders(), 1, "reminded once");
    assert_eq!(s.oncall.reminders(), 0, "offered after the reminder");

    s.oncall
        .answer
        .send_replace(Some(ChannelAnswer::text("no", "lead")));
    let got = asking.await.unwrap().unwrap();
    assert_eq!(
        (
            got.text.as_str(),
            got.channel.as_str(),
            got.responder.as_str()
        ),
        ("no", "oncall", "lead")
    );
    assert_eq!(
        s.chat.told(),
        ["oncall by lead"],
        "the original channel is told"
    );
    assert!(s.oncall.told().is_empty(), "the winner is not told");
}

#[tokio::test(start_paused = true)]
async fn an_answer_on_an_original_channel_is_told_to_the_escalation_sinks() {
    let s = setup();
    let b = broker(&s);
    let asking = tokio::spawn(async move { b.ask(question(), CancellationToken::new()).await });
    tokio::time::advance(121 * MINUTE).await;
    let oncall = Arc::clone(&s.oncall);
    wait_until_async("the escalation", LIMIT, || {
        (oncall.offers() == 1).then_some(())
    })
    .await
    .unwrap();
    s.chat
        .answer
        .send_replace(Some(ChannelAnswer::text("yes", "alice")));
    let got = asking.await.unwrap().unwrap();
    assert_eq!(got.channel, "chat");
    assert_eq!(s.oncall.told(), ["chat by alice"]);
    assert!(s.chat.told().is_empty());
}

#[tokio::test(start_paused = true)]
async fn without_a_timeout_a_question_waits_for_days() {
    let s = setup();
    let b = broker(&s);
    let asking = tokio::spawn(async move { b.ask(question(), CancellationToken::new()).await });
    for _ in 0..3 {
        tokio::time::advance(Duration::from_secs(86_400)).await;
        settle().await;
    }
    assert!(!asking.is_finished(), "the question expired");
    let store = Store::open(s.ws.db_path()).unwrap();
    let pending = store.pending_questions().unwrap();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].status, QuestionStatus::Pending);
    assert_eq!(s.chat.reminders(), 1, "one reminder, not one per recheck");
    assert_eq!(s.oncall.offers(), 1, "escalated once");
    asking.abort();
}

fn an_hour_ago() -> i64 {
    tether_store::now_ms() - 3_600_000
}

#[tokio::test(start_paused = true)]
async fn a_question_waited_for_again_counts_from_when_it_was_asked() {
    let s = setup();
    let past = StoreOptions {
        clock: an_hour_ago,
        ..StoreOptions::default()
    };
    let asked = Store::open_with(s.ws.db_path(), &past)
        .unwrap()
        .insert_question(&question())
        .unwrap();
    let b = broker(&s);
    let started = tokio::time::Instant::now();
    let id = asked.id.clone();
    let waiting = tokio::spawn(async move { b.wait(&id, CancellationToken::new()).await });
    let chat = Arc::clone(&s.chat);
    wait_until_async("the reminder", LIMIT, || {
        (chat.reminders() == 1).then_some(())
    })
    .await
    .unwrap();
    assert!(
        started.elapsed() < 30 * MINUTE,
        "asked an hour ago: the reminder is due at once"
    );
    assert_eq!(s.oncall.offers(), 0);
    tokio::time::advance(61 * MINUTE).await;
    let oncall = Arc::clone(&s.oncall);
    wait_until_async("the escalation", LIMIT, || {
        (oncall.offers() == 1).then_some(())
    })
    .await
    .unwrap();
    assert!(
        started.elapsed() < 62 * MINUTE,
        "escalated two hours after it was asked"
    );
    waiting.abort();
}

//! Reminders and escalation end to end: a desk built from a `tether.toml` text, its question
//! posted to a real webhook receiver, reminded there after `remind_after`, pushed with its
//! buttons to the fake ntfy server only after `escalate_after`, and answered by a press there,
//! the webhook being told.
//!
//! The broker's timers run on tokio's paused clock, moved on only by the test. Everything that
//! waits for HTTP waits in real time inside a blocking task, during which tokio does not
//! auto-advance the clock: so a timer fires exactly when the test moves the clock past it, and
//! no request in flight sees its timeout pass while the test waits for it.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;
use tether_config::{MapEnv, Workspace};
use tether_human::{AskFailed, Console, Desk, Reply};
use tether_store::{Journal, NewQuestion, QuestionStatus, Store};
use tether_testkit::{FakeNtfyServer, WaitTimeout, wait_until};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// The longest real-time wait for something that must happen.
const LIMIT: Duration = Duration::from_secs(15);
/// The real time given to something that must not happen to show up.
const QUIET: Duration = Duration::from_millis(500);
const MINUTE: Duration = Duration::from_secs(60);

/// A webhook receiver recording each POSTed body with the (paused) clock's time it arrived.
#[derive(Default)]
struct Hook {
    bodies: Mutex<Vec<(Instant, Value)>>,
}

impl Hook {
    fn bodies(&self) -> Vec<Value> {
        self.bodies
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.clone())
            .collect()
    }
    fn kinds(&self) -> Vec<String> {
        self.bodies()
            .iter()
            .map(|b| b["kind"].as_str().unwrap_or("?").to_owned())
            .collect()
    }
    fn arrived(&self, i: usize) -> Instant {
        self.bodies.lock().unwrap()[i].0
    }
}

async fn receive(State(hook): State<Arc<Hook>>, body: axum::body::Bytes) -> StatusCode {
    let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    hook.bodies.lock().unwrap().push((Instant::now(), value));
    StatusCode::OK
}

async fn receiver(hook: Arc<Hook>) -> String {
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(hook);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/hook")
}

/// Waits up to `limit` of real time for `cond`, the paused clock held still meanwhile (tokio
/// does not auto-advance it while a blocking task runs).
async fn until<T: Send + 'static>(
    what: &'static str,
    limit: Duration,
    cond: impl FnMut() -> Option<T> + Send + 'static,
) -> Result<T, WaitTimeout> {
    tokio::task::spawn_blocking(move || wait_until(what, limit, cond))
        .await
        .unwrap()
}

/// Fails if `unexpected` reports something within [`QUIET`] of real time, the clock held still.
async fn quiet(what: &'static str, unexpected: impl FnMut() -> Option<String> + Send + 'static) {
    if let Ok(seen) = until(what, QUIET, unexpected).await {
        panic!("{what}: {seen}");
    }
}

/// What the ask returned, once it has.
type Asked = Arc<Mutex<Option<Result<Reply, AskFailed>>>>;

fn question() -> NewQuestion {
    NewQuestion {
        question: "Which database?".into(),
        context: "ctx".into(),
        confidence: Some(20),
        options: vec!["Postgres".into(), "SQLite".into(), "Neither".into()],
        ..NewQuestion::default()
    }
}

#[tokio::test(start_paused = true)]
async fn a_question_reminded_on_the_webhook_is_escalated_to_ntfy_and_answered_there() {
    let hook = Arc::new(Hook::default());
    let hook_url = receiver(Arc::clone(&hook)).await;
    let ntfy = Arc::new(
        FakeNtfyServer::builder()
            .token("tk_pub")
            .token("tk_reply")
            .start()
            .await
            .unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let text = format!(
        r#"
[human]
channels = ["webhook"]
remind_after = "30m"
escalate_after = "2h"
escalate_to = ["ntfy"]

[webhook]
url_env = "HOOK_URL"

[ntfy]
server = "{}"
topic = "oncall"
token_env = "NTFY_TOKEN"
reply_token_env = "NTFY_REPLY_TOKEN"
"#,
        ntfy.url()
    );
    let env = MapEnv::new()
        .with("HOOK_URL", hook_url.as_str())
        .with("NTFY_TOKEN", "tk_pub")
        .with("NTFY_REPLY_TOKEN", "tk_reply");
    let config = tether_config::parse(
        &tether_human::registry::schema(),
        &text,
        Path::new("tether.toml"),
        &env,
    )
    .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let desk = Desk::from_config(
        &config,
        &ws,
        journal,
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    );
    assert!(
        desk.policy().problems.is_empty(),
        "{:?}",
        desk.policy().problems
    );
    let names: Vec<&str> = desk.broker().channels().iter().map(|c| c.name()).collect();
    assert_eq!(names, ["webhook"], "ntfy is only an escalation sink");

    let asked: Asked = Arc::default();
    let slot = Arc::clone(&asked);
    let d = desk.clone();
    let start = Instant::now();
    tokio::spawn(async move {
        let reply = d.ask_human(question(), CancellationToken::new()).await;
        *slot.lock().unwrap() = Some(reply);
    });

    // The question is posted to the webhook at once, and nothing else happens.
    let h = Arc::clone(&hook);
    until("the question on the webhook", LIMIT, move || {
        (!h.bodies().is_empty()).then_some(())
    })
    .await
    .unwrap();
    let first = hook.bodies().remove(0);
    assert_eq!(first["kind"], "question");
    assert_eq!(first["text"], "Which database?");
    assert_eq!(
        first["options"],
        serde_json::json!(["Postgres", "SQLite", "Neither"])
    );
    let id = first["question_id"].as_str().unwrap().to_owned();
    let nothing_more = |hook_kinds: &'static [&'static str]| {
        let (h, n, a) = (Arc::clone(&hook), Arc::clone(&ntfy), Arc::clone(&asked));
        move || {
            let kinds = h.kinds();
            if kinds != hook_kinds {
                return Some(format!("the webhook got {kinds:?}"));
            }
            let pushed = n.messages("oncall");
            if !pushed.is_empty() {
                return Some(format!("ntfy got {pushed:?}"));
            }
            if !n.subscriptions().is_empty() {
                return Some("the ntfy reply topic is followed".to_owned());
            }
            a.lock()
                .unwrap()
                .as_ref()
                .map(|r| format!("the ask returned {r:?}"))
        }
    };
    quiet(
        "nothing but the question at first",
        nothing_more(&["question"]),
    )
    .await;

    // 29 minutes: not reminded yet.
    tokio::time::advance(29 * MINUTE).await;
    quiet("no reminder before 30 minutes", nothing_more(&["question"])).await;

    // 31 minutes: reminded on the webhook, once, and not escalated.
    tokio::time::advance(2 * MINUTE).await;
    let h = Arc::clone(&hook);
    until("the reminder on the webhook", LIMIT, move || {
        (h.bodies().len() >= 2).then_some(())
    })
    .await
    .unwrap();
    let reminded_after = hook.arrived(1) - start;
    assert!(
        reminded_after > 29 * MINUTE && reminded_after <= 31 * MINUTE,
        "reminded after {reminded_after:?}"
    );
    let reminder = &hook.bodies()[1];
    assert_eq!(reminder["kind"], "reminder");
    assert_eq!(reminder["question_id"], id.as_str());
    assert_eq!(
        reminder["text"],
        "Still waiting for an answer: Which database?"
    );
    quiet(
        "one reminder, no escalation at 31 minutes",
        nothing_more(&["question", "reminder"]),
    )
    .await;

    // 1 h 59: still not escalated.
    tokio::time::advance(88 * MINUTE).await;
    quiet(
        "no escalation before 2 hours",
        nothing_more(&["question", "reminder"]),
    )
    .await;

    // 2 h 01: pushed to ntfy with its buttons, the reply topic followed; the webhook gets
    // nothing more.
    tokio::time::advance(2 * MINUTE).await;
    let n = Arc::clone(&ntfy);
    let push = until("the question pushed to ntfy", LIMIT, move || {
        n.messages("oncall").into_iter().next()
    })
    .await
    .unwrap();
    assert_eq!(push["title"], "tether: a question");
    assert!(
        push["message"]
            .as_str()
            .unwrap()
            .starts_with("Which database?\n1. Postgres\n2. SQLite\n3. Neither"),
        "{push}"
    );
    let actions = push["actions"].as_array().cloned().unwrap_or_default();
    let labels: Vec<&str> = actions
        .iter()
        .map(|a| a["label"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["Postgres", "SQLite", "Neither"]);
    let reply_url = format!("{}/oncall-reply", ntfy.url());
    for action in &actions {
        assert_eq!(action["action"], "http");
        assert_eq!(action["url"], reply_url.as_str());
        assert_eq!(action["headers"]["Authorization"], "Bearer tk_reply");
        let press: Value = serde_json::from_str(action["body"].as_str().unwrap()).unwrap();
        assert_eq!(press["q"], id.as_str());
    }
    let n = Arc::clone(&ntfy);
    until("the reply topic followed", LIMIT, move || {
        (n.open_streams() == 1).then_some(())
    })
    .await
    .unwrap();
    assert!(
        ntfy.subscriptions()
            .iter()
            .all(|s| s.topic == "oncall-reply"),
        "{:?}",
        ntfy.subscriptions()
    );
    let (n, a) = (Arc::clone(&ntfy), Arc::clone(&asked));
    quiet("pushed once, still waiting", move || {
        let pushed = n.messages("oncall").len();
        if pushed != 1 {
            return Some(format!("{pushed} pushes to ntfy"));
        }
        a.lock()
            .unwrap()
            .as_ref()
            .map(|r| format!("the ask returned {r:?}"))
    })
    .await;
    assert_eq!(hook.kinds(), ["question", "reminder"]);

    // The on-call person presses "SQLite" on the phone.
    let (n, action) = (Arc::clone(&ntfy), actions[1].clone());
    let status = tokio::task::spawn_blocking(move || {
        tokio::runtime::Handle::current().block_on(n.press(&action))
    })
    .await
    .unwrap()
    .unwrap();
    assert_eq!(status, 200);
    let a = Arc::clone(&asked);
    let reply = until("the ask to return", LIMIT, move || a.lock().unwrap().take())
        .await
        .unwrap()
        .unwrap();
    let Reply::Answered {
        answer: Some(answer),
        ..
    } = reply
    else {
        panic!("not a human's answer: {reply:?}");
    };
    assert_eq!(
        (
            answer.text.as_str(),
            answer.channel.as_str(),
            answer.choice,
            answer.options_offered
        ),
        ("SQLite", "ntfy", Some(1), 3)
    );
    assert_eq!(answer.question_id.as_str(), id);
    let stored = Store::open(ws.db_path()).unwrap();
    let q = stored.question(&answer.question_id).unwrap();
    assert_eq!(q.status, QuestionStatus::Answered);
    assert_eq!(q.channel.as_deref(), Some("ntfy"));

    // The webhook is told who answered; ntfy, where it was answered, is not.
    let h = Arc::clone(&hook);
    until("the webhook told of the answer", LIMIT, move || {
        (h.bodies().len() >= 3).then_some(())
    })
    .await
    .unwrap();
    let told = &hook.bodies()[2];
    assert_eq!(told["kind"], "answered");
    assert_eq!(told["question_id"], id.as_str());
    assert_eq!(told["text"], "Answered on ntfy by ntfy: SQLite");
    let (h, n) = (Arc::clone(&hook), Arc::clone(&ntfy));
    quiet("nothing after the answer", move || {
        let kinds = h.kinds();
        if kinds != ["question", "reminder", "answered"] {
            return Some(format!("the webhook got {kinds:?}"));
        }
        let pushed = n.messages("oncall").len();
        (pushed != 1).then(|| format!("{pushed} pushes to ntfy"))
    })
    .await;
}

//! The ntfy sink through the desk, against the fake ntfy server: notices filtered and pushed,
//! questions pushed with answer buttons, a press answering the waiting question, presses made
//! while the stream is down or while nobody follows delivered once, forged presses ignored, a
//! rate limit waited out.

use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tether_config::{MapEnv, NoticeKind, Workspace};
use tether_human::{Answer, BrokerError, Console, Desk, Notice};
use tether_store::{Journal, NewQuestion, QuestionId, RunId, Store};
use tether_testkit::{FakeNtfyServer, NtfyFault, NtfyRoute, wait_until_async};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const LIMIT: Duration = Duration::from_secs(15);

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    desk: Desk,
    server: FakeNtfyServer,
}

async fn setup(extra: &str) -> Setup {
    let server = FakeNtfyServer::builder()
        .token("tk_abc")
        .token("tk_reply")
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let text = format!(
        "[human]\nchannels = [\"ntfy\"]\n[ntfy]\nserver = \"{}\"\ntopic = \"t1\"\n\
         token_env = \"NTFY_TOKEN\"\nreply_token_env = \"NTFY_REPLY\"\npriority = 4\n{extra}",
        server.url()
    );
    let env = MapEnv::new()
        .with("NTFY_TOKEN", "tk_abc")
        .with("NTFY_REPLY", "tk_reply");
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
    Setup {
        _dir: dir,
        ws,
        desk,
        server,
    }
}

fn question() -> NewQuestion {
    NewQuestion {
        question: "Which database?".into(),
        context: "ctx".into(),
        confidence: Some(20),
        options: vec!["Postgres".into(), "SQLite".into(), "Neither".into()],
        ..NewQuestion::default()
    }
}

fn notice(kind: NoticeKind) -> Notice {
    Notice {
        kind,
        run_id: Some("r-abc123".parse::<RunId>().unwrap()),
        text: "Run r-abc123 failed: the build broke.".into(),
        resume: None,
    }
}

fn ask(s: &Setup, cancel: CancellationToken) -> JoinHandle<Result<Answer, BrokerError>> {
    let desk = s.desk.clone();
    tokio::spawn(async move { desk.broker().ask(question(), cancel).await })
}

/// The question's push, once it is there, and its buttons.
async fn pushed(s: &Setup) -> (Value, Vec<Value>) {
    s.server
        .wait_for("the question's push", LIMIT, |srv| {
            !srv.messages("t1").is_empty()
        })
        .await
        .unwrap();
    let push = s.server.messages("t1").remove(0);
    let actions = push["actions"].as_array().cloned().unwrap_or_default();
    (push, actions)
}

async fn following(s: &Setup) {
    s.server
        .wait_for("the reply topic followed", LIMIT, |srv| {
            srv.open_streams() == 1
        })
        .await
        .unwrap();
}

async fn answered(waiting: JoinHandle<Result<Answer, BrokerError>>) -> Answer {
    tokio::time::timeout(LIMIT, waiting)
        .await
        .expect("answered in time")
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_notice_is_pushed_when_the_sinks_filter_lets_it() {
    let s = setup("notify = [\"failed\"]\n").await;
    s.desk.notify(&notice(NoticeKind::Done)).await;
    assert!(
        s.server.messages("t1").is_empty(),
        "done is not in [ntfy] notify"
    );
    s.desk.notify(&notice(NoticeKind::Failed)).await;
    let pushed = s.server.messages("t1");
    assert_eq!(pushed.len(), 1);
    assert_eq!(pushed[0]["title"], "tether: run failed (r-abc123)");
    assert_eq!(
        pushed[0]["message"],
        "Run r-abc123 failed: the build broke."
    );
    assert_eq!(pushed[0]["priority"], 4);
    assert!(pushed[0].get("actions").is_none());
    assert!(
        s.server
            .authorizations()
            .iter()
            .all(|a| a.as_deref() == Some("Bearer tk_abc")),
        "tether's own requests carry its token"
    );
}

#[tokio::test]
async fn a_pressed_button_answers_the_question() {
    let s = setup("").await;
    let waiting = ask(&s, CancellationToken::new());
    let (push, actions) = pushed(&s).await;
    assert_eq!(push["title"], "tether: a question");
    assert!(
        push["message"]
            .as_str()
            .unwrap()
            .starts_with("Which database?\n1. Postgres")
    );
    assert_eq!(actions.len(), 3);
    let reply_url = format!("{}/t1-reply", s.server.url());
    for (i, (action, label)) in actions
        .iter()
        .zip(["Postgres", "SQLite", "Neither"])
        .enumerate()
    {
        assert_eq!(action["action"], "http");
        assert_eq!(action["label"], label);
        assert_eq!(action["url"], reply_url.as_str());
        assert_eq!(action["method"], "POST");
        assert_eq!(action["headers"]["Authorization"], "Bearer tk_reply");
        let body: Value = serde_json::from_str(action["body"].as_str().unwrap()).unwrap();
        assert_eq!(body["o"], i);
        assert_eq!(body["n"].as_str().unwrap().len(), 24);
    }
    following(&s).await;
    assert_eq!(s.server.press(&actions[1]).await.unwrap(), 200);
    let got = answered(waiting).await;
    assert_eq!(
        (got.text.as_str(), got.channel.as_str(), got.choice),
        ("SQLite", "ntfy", Some(1))
    );
}

#[tokio::test]
async fn a_forged_press_is_ignored() {
    let s = setup("").await;
    let waiting = ask(&s, CancellationToken::new());
    let (_, actions) = pushed(&s).await;
    following(&s).await;
    let mut forged = actions[0].clone();
    let mut body: Value = serde_json::from_str(forged["body"].as_str().unwrap()).unwrap();
    body["n"] = "not-the-nonce".into();
    forged["body"] = body.to_string().into();
    s.server.press(&forged).await.unwrap();
    let mut unknown = actions[0].clone();
    body["q"] = "q-000000000000".into();
    unknown["body"] = body.to_string().into();
    s.server.press(&unknown).await.unwrap();
    s.server.publish("t1-reply", "not even json");
    s.server.press(&actions[2]).await.unwrap();
    let got = answered(waiting).await;
    assert_eq!(got.text, "Neither", "only the real press counts");
}

#[tokio::test]
async fn a_press_while_the_stream_is_down_is_delivered_once_after_reconnecting() {
    let s = setup("").await;
    let waiting = ask(&s, CancellationToken::new());
    let (_, actions) = pushed(&s).await;
    following(&s).await;
    // Something handled first, so the reconnect has a last id to resume from.
    let noise = s.server.publish("t1-reply", "noise");
    let noise_id = noise["id"].as_str().unwrap().to_owned();
    let last_id = s.ws.state_dir().join("ntfy").join("t1-reply.last-id");
    wait_until_async("the noise handled", LIMIT, || {
        (std::fs::read_to_string(&last_id).ok()? == noise_id).then_some(())
    })
    .await
    .unwrap();

    s.server.hold_subscriptions();
    s.server.drop_streams();
    s.server
        .wait_for("the reconnect", LIMIT, |srv| srv.held_subscriptions() == 1)
        .await
        .unwrap();
    s.server.press(&actions[0]).await.unwrap();
    s.server.release_subscriptions();
    let got = answered(waiting).await;
    assert_eq!(got.text, "Postgres");
    let subs: Vec<_> = s
        .server
        .subscriptions()
        .into_iter()
        .filter(|sub| sub.topic == "t1-reply")
        .collect();
    assert_eq!(subs.len(), 2);
    assert_eq!(subs[1].since.as_deref(), Some(noise_id.as_str()));
    let press_id = s.server.messages("t1-reply")[1]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(std::fs::read_to_string(&last_id).unwrap(), press_id);
}

#[tokio::test]
async fn a_press_made_while_nobody_follows_is_delivered_on_the_next_wait() {
    let s = setup("").await;
    let cancel = CancellationToken::new();
    let waiting = ask(&s, cancel.clone());
    let (_, actions) = pushed(&s).await;
    following(&s).await;
    cancel.cancel();
    assert!(matches!(
        waiting.await.unwrap(),
        Err(BrokerError::Cancelled(_))
    ));
    s.server
        .wait_for("the follower gone", LIMIT, |srv| srv.open_streams() == 0)
        .await
        .unwrap();
    s.server.press(&actions[2]).await.unwrap();

    let id: QuestionId = Store::open(s.ws.db_path())
        .unwrap()
        .pending_questions()
        .unwrap()[0]
        .id
        .clone();
    let got = tokio::time::timeout(LIMIT, s.desk.wait(&id, CancellationToken::new()))
        .await
        .expect("answered in time")
        .unwrap();
    assert_eq!(
        (got.text.as_str(), got.channel.as_str()),
        ("Neither", "ntfy")
    );
    let questions = s
        .server
        .messages("t1")
        .into_iter()
        .filter(|m| m.get("actions").is_some())
        .count();
    assert_eq!(
        questions, 1,
        "the question was pushed once, not again on the second wait"
    );
}

#[tokio::test]
async fn a_rate_limited_push_is_retried_after_the_servers_wait() {
    let s = setup("notify = [\"failed\"]\n").await;
    s.server.fail_next(
        NtfyRoute::Publish,
        NtfyFault::RateLimited { retry_after: 1 },
    );
    let started = std::time::Instant::now();
    s.desk.notify(&notice(NoticeKind::Failed)).await;
    assert_eq!(s.server.rate_limited(), 1);
    assert_eq!(s.server.messages("t1").len(), 1);
    assert!(started.elapsed() >= Duration::from_secs(1));
}

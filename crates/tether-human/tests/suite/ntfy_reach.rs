//! ntfy when the agent could press the buttons itself: with the topic written in tether.toml and
//! the network open, a question is pushed without buttons, no reply topic is followed, and a
//! press — even one carrying the question's real nonce — answers nothing; the question waits for
//! an answer given elsewhere. With the topic from a variable the agent never gets, or without the
//! network, the buttons answer as before.

use std::path::Path;
use std::time::Duration;

use tether_config::{MapEnv, Workspace};
use tether_human::registry::Reach;
use tether_human::{Answer, BrokerError, Console, Desk};
use tether_store::{Journal, NewQuestion, Store};
use tether_testkit::{FakeNtfyServer, wait_until_async};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const LIMIT: Duration = Duration::from_secs(15);

struct Setup {
    _dir: tempfile::TempDir,
    ws: Workspace,
    desk: Desk,
    server: FakeNtfyServer,
    topic: &'static str,
}

/// A desk with ntfy, its topic `topic` written in tether.toml or (`from_env`) in a variable,
/// for an agent that reaches what `reach` says.
async fn setup(from_env: bool, reach: Reach) -> Setup {
    let server = FakeNtfyServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let topic = "tq7";
    let where_ = if from_env {
        "topic_env = \"NTFY_TOPIC\"".to_owned()
    } else {
        format!("topic = \"{topic}\"")
    };
    let text = format!(
        "[human]\nchannels = [\"ntfy\"]\n[ntfy]\nserver = \"{}\"\n{where_}\n",
        server.url()
    );
    let env = MapEnv::new().with("NTFY_TOPIC", topic);
    let config = tether_config::parse(
        &tether_human::registry::schema(),
        &text,
        Path::new("tether.toml"),
        &env,
    )
    .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let desk = Desk::from_config(&config, &ws, journal, (Console::Absent, reach));
    assert!(desk.policy().problems.is_empty());
    Setup {
        _dir: dir,
        ws,
        desk,
        server,
        topic,
    }
}

fn ask(s: &Setup) -> JoinHandle<Result<Answer, BrokerError>> {
    let desk = s.desk.clone();
    let question = NewQuestion {
        question: "run `git push`? yes/no".into(),
        options: vec!["yes".into(), "no".into()],
        ..NewQuestion::default()
    };
    tokio::spawn(async move { desk.broker().ask(question, CancellationToken::new()).await })
}

async fn pushed(s: &Setup) -> serde_json::Value {
    s.server
        .wait_for("the question's push", LIMIT, |srv| {
            !srv.messages(s.topic).is_empty()
        })
        .await
        .unwrap();
    s.server.messages(s.topic).remove(0)
}

async fn answered(waiting: JoinHandle<Result<Answer, BrokerError>>) -> Answer {
    tokio::time::timeout(LIMIT, waiting)
        .await
        .expect("answered in time")
        .unwrap()
        .unwrap()
}

#[tokio::test]
async fn a_topic_the_agent_reads_with_the_network_only_tells() {
    let s = setup(false, Reach::ANYTHING).await;
    let waiting = ask(&s);
    let push = pushed(&s).await;
    assert!(push.get("actions").is_none(), "no buttons: {push}");
    let text = push["message"].as_str().unwrap();
    assert!(
        text.starts_with("run `git push`? yes/no\n1. yes\n2. no\nTo answer: tether answer q-"),
        "{text}"
    );
    // The agent presses "yes" with the question's real nonce (as if it had learnt it): nobody
    // follows the reply topic, so it answers nothing.
    let journal = s.desk.broker().journal().clone();
    let (id, nonce) = wait_until_async("the push recorded", LIMIT, || {
        let store = journal.store();
        let id = store.pending_questions().ok()?.first()?.id.clone();
        let posts = store.posts(&id).ok()?;
        let nonce = posts.first()?.external_ref["nonce"].as_str()?.to_owned();
        Some((id, nonce))
    })
    .await
    .unwrap();
    let press = serde_json::json!({"q": id.to_string(), "o": 0, "n": nonce}).to_string();
    s.server.publish(&format!("{}-reply", s.topic), &press);
    // A person answers elsewhere.
    {
        let store = s.desk.broker().journal().store();
        tether_human::broker::answer(&store, &s.ws.state_dir(), &id, "no", "cli", "ana").unwrap();
    }
    let got = answered(waiting).await;
    assert_eq!((got.text.as_str(), got.channel.as_str()), ("no", "cli"));
    assert!(
        s.server
            .subscriptions()
            .iter()
            .all(|sub| sub.topic != format!("{}-reply", s.topic)),
        "the reply topic was never followed: {:?}",
        s.server.subscriptions()
    );
}

#[tokio::test]
async fn a_topic_from_a_variable_answers_with_its_buttons() {
    let s = setup(true, Reach::ANYTHING).await;
    let waiting = ask(&s);
    let push = pushed(&s).await;
    let actions = push["actions"].as_array().cloned().unwrap_or_default();
    assert_eq!(actions.len(), 2, "{push}");
    s.server
        .wait_for("the reply topic followed", LIMIT, |srv| {
            srv.open_streams() == 1
        })
        .await
        .unwrap();
    assert_eq!(s.server.press(&actions[0]).await.unwrap(), 200);
    let got = answered(waiting).await;
    assert_eq!((got.text.as_str(), got.channel.as_str()), ("yes", "ntfy"));
}

#[tokio::test]
async fn without_the_network_the_topic_in_the_file_answers_with_its_buttons() {
    let s = setup(false, Reach { network: false }).await;
    let waiting = ask(&s);
    let push = pushed(&s).await;
    let actions = push["actions"].as_array().cloned().unwrap_or_default();
    assert_eq!(actions.len(), 2, "{push}");
    s.server
        .wait_for("the reply topic followed", LIMIT, |srv| {
            srv.open_streams() == 1
        })
        .await
        .unwrap();
    assert_eq!(s.server.press(&actions[1]).await.unwrap(), 200);
    let got = answered(waiting).await;
    assert_eq!((got.text.as_str(), got.channel.as_str()), ("no", "ntfy"));
}

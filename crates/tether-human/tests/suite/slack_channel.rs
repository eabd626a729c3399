//! The broker's Slack channel against the fake Slack: a reply in the thread or a button answers
//! the question (and the buttons are replaced by who answered); an answer from another channel
//! is noted in the thread; a follow-up goes to the same thread; a resumed wait never posts
//! again and finds the reply given meanwhile; two brokers with their own sockets on one app —
//! in one workspace or two — each get their answer once, whichever socket Slack picks; a notice
//! lands in the run's thread; misconfiguration names the missing variables.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tether_config::{Secret, Workspace};
use tether_human::broker::answer;
use tether_human::chat::Chat;
use tether_human::notices::Notice;
use tether_human::slack::Slack;
use tether_human::{Broker, Channel, Console, Desk, DynChannel};
use tether_slack::{RawSlackSettings, SlackClient, SlackSettings, option_action_id};
use tether_store::{Journal, NewQuestion, Store};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::SlackMethod;
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);
const HUMAN: &str = FakeSlackServer::HUMAN;

struct Side {
    _dir: Option<tempfile::TempDir>,
    ws: Workspace,
    journal: Journal,
    broker: Broker,
    channel: Arc<Chat<Slack>>,
}

fn client(server: &FakeSlackServer) -> SlackClient {
    let settings = SlackSettings::new(&RawSlackSettings {
        api_url: Some(server.api_url()),
        bot_token: Some(Secret::new(server.bot_token())),
        app_token: Some(Secret::new(server.app_token())),
        channel: Some(FakeSlackServer::CHANNEL.into()),
        ..RawSlackSettings::with_default_envs()
    })
    .unwrap();
    SlackClient::new(&settings).unwrap()
}

/// A broker with a Slack channel (its own client, so its own socket) over the store of the
/// workspace at `root` — what one tether process has.
fn side_at(server: &FakeSlackServer, root: &Path, registry: &Path) -> Side {
    let ws = Workspace::at(root);
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel = Arc::new(tether_human::slack::channel_with_registry_dir(
        client(server),
        journal.clone(),
        ws.state_dir(),
        registry.to_path_buf(),
    ));
    let as_channel: Arc<dyn DynChannel> = channel.clone();
    let broker = Broker::new(journal.clone(), ws.state_dir(), vec![as_channel]);
    Side {
        _dir: None,
        ws,
        journal,
        broker,
        channel,
    }
}

fn side(server: &FakeSlackServer, registry: &Path) -> Side {
    let dir = tempfile::tempdir().unwrap();
    let side = side_at(server, dir.path(), registry);
    Side {
        _dir: Some(dir),
        ..side
    }
}

fn question(text: &str, options: &[&str]) -> NewQuestion {
    NewQuestion {
        question: text.into(),
        context: "all tests pass".into(),
        confidence: Some(20),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
        ..NewQuestion::default()
    }
}

async fn within<T>(future: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, future).await.expect("timed out")
}

#[tokio::test]
async fn a_reply_in_the_thread_answers_and_the_question_shows_who_answered() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let s = side(&server, registry.path());
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move {
        b.ask(question("Merge now?", &[]), CancellationToken::new())
            .await
    });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    assert!(posted[0].blocks.to_string().contains("all tests pass"));
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.reply(&posted[0].ts, HUMAN, "Yes, merge it.");
    let got = within(waiting).await.unwrap().unwrap();
    assert_eq!(
        (
            got.text.as_str(),
            got.channel.as_str(),
            got.responder.as_str()
        ),
        ("Yes, merge it.", "slack", "Ada"),
        "the responder is named by users.info"
    );
    let posts = s.journal.store().posts(&got.question_id).unwrap();
    assert_eq!(posts[0].external_ref["ts"], posted[0].ts.as_str());
    assert_eq!(posts[0].external_ref["thread_ts"], posted[0].ts.as_str());
    tether_testkit::wait_until_async("the question marked answered", WAIT, || {
        (server.questions()[0].edits == 1).then_some(())
    })
    .await
    .unwrap();
    assert!(
        server.questions()[0]
            .blocks
            .to_string()
            .contains("Answered on slack")
    );
}

#[tokio::test]
async fn a_button_is_that_choice() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let s = side(&server, registry.path());
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move {
        b.ask(
            question("Which?", &["Merge now", "Wait for review"]),
            CancellationToken::new(),
        )
        .await
    });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.press_button(&posted[0].ts, HUMAN, &option_action_id(1));
    let got = within(waiting).await.unwrap().unwrap();
    assert_eq!(
        (got.text.as_str(), got.choice, got.channel.as_str()),
        ("Wait for review", Some(1), "slack")
    );
    assert_eq!(
        s.journal.store().question(&got.question_id).unwrap().choice,
        Some(1)
    );
}

#[tokio::test]
async fn an_answer_elsewhere_is_noted_in_the_thread_and_the_buttons_go() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let s = side(&server, registry.path());
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move {
        b.ask(question("Which?", &["A", "B"]), CancellationToken::new())
            .await
    });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    let store = Store::open(s.ws.db_path()).unwrap();
    let q = store.pending_questions().unwrap().remove(0);
    answer(&store, &s.ws.state_dir(), &q.id, "Not yet.", "cli", "alice").unwrap();
    let got = within(waiting).await.unwrap().unwrap();
    assert_eq!(got.channel, "cli");
    let notes = server.notes_in(&posted[0].ts);
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].text.contains("Answered on cli by alice"),
        "{}",
        notes[0].text
    );
    tether_testkit::wait_until_async("the buttons replaced", WAIT, || {
        (!server.questions()[0]
            .blocks
            .to_string()
            .contains("tether_option_"))
        .then_some(())
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_follow_up_with_the_thread_id_goes_to_the_same_thread() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let s = side(&server, registry.path());
    let b = s.broker.clone();
    let first = tokio::spawn(async move {
        b.ask(question("First?", &[]), CancellationToken::new())
            .await
    });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.reply(&posted[0].ts, HUMAN, "one");
    let got = within(first).await.unwrap().unwrap();
    let mut follow_up = question("Second?", &[]);
    follow_up.thread_id = Some(got.thread_id.clone());
    let b = s.broker.clone();
    let second = tokio::spawn(async move { b.ask(follow_up, CancellationToken::new()).await });
    let posted = server.wait_for_questions(2, WAIT).await.unwrap();
    assert_eq!(posted[1].thread_ts.as_deref(), Some(posted[0].ts.as_str()));
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.reply(&posted[0].ts, HUMAN, "two");
    let got = within(second).await.unwrap().unwrap();
    assert_eq!(got.text, "two");
}

#[tokio::test]
async fn a_resumed_wait_never_posts_again_and_gets_the_reply_given_meanwhile() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = side_at(&server, dir.path(), registry.path());
    let cancel = CancellationToken::new();
    let b = s.broker.clone();
    let stop = cancel.clone();
    let waiting = tokio::spawn(async move { b.ask(question("Survive?", &[]), stop).await });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    cancel.cancel();
    assert!(within(waiting).await.unwrap().is_err(), "left pending");
    let id = s.journal.store().pending_questions().unwrap().remove(0).id;
    drop(s);
    server.reply(&posted[0].ts, HUMAN, "given while nobody waited");
    // The same workspace, as a new process sees it: a new store connection, a new client.
    let resumed = side_at(&server, dir.path(), registry.path());
    let got = within(resumed.broker.wait(&id, CancellationToken::new()))
        .await
        .unwrap();
    assert_eq!(got.text, "given while nobody waited");
    assert_eq!(server.questions().len(), 1, "never posted twice");
}

/// Two brokers with their own sockets wait at once; answers are given to both, and each gets
/// its own exactly once whichever socket Slack hands each event to.
async fn two_waiters(same_workspace: bool) {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let a = side(&server, registry.path());
    let b = if same_workspace {
        side_at(&server, a.ws.root(), registry.path())
    } else {
        side(&server, registry.path())
    };
    for round in 0..4 {
        let (ba, bb) = (a.broker.clone(), b.broker.clone());
        let wa = tokio::spawn(async move {
            ba.ask(question("A?", &["yes", "no"]), CancellationToken::new())
                .await
        });
        let posted = server
            .wait_for_questions(2 * round + 1, WAIT)
            .await
            .unwrap();
        let wb = tokio::spawn(async move {
            bb.ask(question("B?", &["yes", "no"]), CancellationToken::new())
                .await
        });
        let posted_b = server
            .wait_for_questions(2 * round + 2, WAIT)
            .await
            .unwrap();
        let (qa, qb) = (
            posted[2 * round].ts.clone(),
            posted_b[2 * round + 1].ts.clone(),
        );
        server.wait_for_sockets(2, WAIT).await.unwrap();
        if round % 2 == 0 {
            server.press_button(&qa, HUMAN, &option_action_id(0));
            server.press_button(&qb, HUMAN, &option_action_id(1));
        } else {
            server.reply(&qa, HUMAN, "yes");
            server.reply(&qb, HUMAN, "no");
        }
        let got_a = within(wa).await.unwrap().unwrap();
        let got_b = within(wb).await.unwrap().unwrap();
        assert_eq!(
            (got_a.text.as_str(), got_a.choice),
            ("yes", Some(0)),
            "round {round}"
        );
        assert_eq!(
            (got_b.text.as_str(), got_b.choice),
            ("no", Some(1)),
            "round {round}"
        );
    }
    assert_eq!(server.questions().len(), 8, "each question posted once");
    drop(b.channel);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_waiters_in_one_workspace_on_one_app_each_get_their_answer() {
    two_waiters(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_waiters_in_two_workspaces_on_one_app_each_get_their_answer() {
    two_waiters(false).await;
}

#[tokio::test]
async fn a_notice_goes_to_the_runs_thread_or_else_the_channel() {
    let server = FakeSlackServer::start().await.unwrap();
    let registry = tempfile::tempdir().unwrap();
    let s = side(&server, registry.path());
    let run = s
        .journal
        .store()
        .create_run(
            tether_store::RunKind::Goal,
            s.ws.root(),
            &serde_json::json!({}),
        )
        .unwrap();
    let notice = Notice {
        kind: tether_config::NoticeKind::Paused,
        run_id: Some(run.clone()),
        text: format!("Run {run} paused: the budget is spent."),
        resume: Some(format!("tether resume {run}")),
    };
    within(Channel::notice(&*s.channel, &notice)).await;
    let top = server.messages();
    assert_eq!(top.len(), 1);
    assert_eq!(top[0].thread_ts, None, "no question yet: in the channel");
    assert!(
        top[0].text.contains("To continue: tether resume"),
        "{}",
        top[0].text
    );
    let mut asked = question("Q?", &[]);
    asked.run_id = Some(run.clone());
    let b = s.broker.clone();
    let waiting = tokio::spawn(async move { b.ask(asked, CancellationToken::new()).await });
    let posted = server.wait_for_questions(1, WAIT).await.unwrap();
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.reply(&posted[0].ts, HUMAN, "ok");
    within(waiting).await.unwrap().unwrap();
    within(Channel::notice(&*s.channel, &notice)).await;
    let notes = server.notes_in(&posted[0].ts);
    assert!(notes.iter().any(|n| n.text.contains("paused")), "{notes:?}");
    assert!(server.requests(SlackMethod::PostMessage) >= 3);
}

#[tokio::test]
async fn a_listed_slack_without_tokens_is_a_problem_naming_the_variables() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let config = tether_config::parse(
        &tether_human::registry::schema(),
        "[human]\nchannels = [\"slack\"]\n[slack]\nchannel = \"C0TETHER001\"\n\
         bot_token_env = \"MY_SLACK_BOT\"\n",
        std::path::Path::new("tether.toml"),
        &tether_config::MapEnv::new(),
    )
    .unwrap();
    let desk = Desk::from_config(
        &config,
        &ws,
        journal,
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    );
    let problems = desk.policy().problems.join("\n");
    assert!(
        problems.contains("MY_SLACK_BOT") && problems.contains("SLACK_APP_TOKEN"),
        "{problems}"
    );
}

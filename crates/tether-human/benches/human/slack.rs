//! Reply in the Slack thread (or a button press) → `ask` returns, with the broker's Slack
//! channel against the fake Slack on loopback; and the HTTP requests made while waiting once the
//! socket is up and the thread caught up (bar: none).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tether_config::{Secret, Workspace};
use tether_human::{Broker, DynChannel};
use tether_slack::{RawSlackSettings, SlackClient, SlackSettings, option_action_id};
use tether_store::{Journal, NewQuestion, Store};
use tether_testkit::FakeSlackServer;
use tether_testkit::slack_server::SlackMethod;
use tokio_util::sync::CancellationToken;

use crate::Stats;

pub const QUESTIONS: usize = 200;
const WAIT: Duration = Duration::from_secs(30);

pub struct Report {
    pub latency: Stats,
    /// Requests of any kind between the first catch-up and the human's answer, over all waits.
    pub requests: usize,
}

pub fn run(n: usize) -> Report {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(measure(n))
}

fn broker(server: &FakeSlackServer, ws: &Workspace, registry: &Path) -> Broker {
    let settings = SlackSettings::new(&RawSlackSettings {
        api_url: Some(server.api_url()),
        bot_token: Some(Secret::new(server.bot_token())),
        app_token: Some(Secret::new(server.app_token())),
        channel: Some(FakeSlackServer::CHANNEL.into()),
        ..RawSlackSettings::with_default_envs()
    })
    .unwrap();
    std::fs::create_dir_all(ws.state_dir()).unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let channel: Arc<dyn DynChannel> = Arc::new(tether_human::slack::channel_with_registry_dir(
        SlackClient::new(&settings).unwrap(),
        journal.clone(),
        ws.state_dir(),
        registry.to_path_buf(),
    ));
    Broker::new(journal, ws.state_dir(), vec![channel])
}

async fn measure(n: usize) -> Report {
    let server = FakeSlackServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let registry = tempfile::tempdir().unwrap();
    let broker = broker(&server, &ws, registry.path());
    let (mut latencies, mut requests) = (Vec::new(), 0);
    for i in 0..n {
        let replies = server.requests(SlackMethod::Replies);
        let b = broker.clone();
        let asking = tokio::spawn(async move {
            let ask = NewQuestion {
                question: format!("Merge migration {i}?"),
                context: "all tests pass".into(),
                confidence: Some(20),
                options: vec!["Merge".into(), "Wait".into()],
                ..NewQuestion::default()
            };
            let got = b.ask(ask, CancellationToken::new()).await;
            (got, Instant::now())
        });
        let question = server
            .wait_for_questions(i + 1, WAIT)
            .await
            .unwrap()
            .pop()
            .unwrap();
        server.wait_for_sockets(1, WAIT).await.unwrap();
        tether_testkit::wait_until_async("the wait's first catch-up", WAIT, || {
            (server.requests(SlackMethod::Replies) > replies).then_some(())
        })
        .await
        .unwrap();
        let since = Instant::now();
        tokio::time::sleep(Duration::from_millis(2)).await;
        let answered = Instant::now();
        if i % 2 == 0 {
            server.reply(&question.ts, FakeSlackServer::HUMAN, "Merge");
        } else {
            server.press_button(&question.ts, FakeSlackServer::HUMAN, &option_action_id(0));
        }
        let (got, returned) = asking.await.unwrap();
        let got = got.unwrap();
        assert_eq!((got.channel.as_str(), got.choice), ("slack", Some(0)));
        // After the answer: naming the responder (once) and marking the question answered.
        let after = [SlackMethod::Update, SlackMethod::UsersInfo]
            .map(|m| server.requests_since(m, Some(since)))
            .iter()
            .sum::<usize>();
        requests += server.all_requests_since(since).saturating_sub(after);
        latencies.push(returned - answered);
    }
    Report {
        latency: Stats::of(latencies),
        requests,
    }
}

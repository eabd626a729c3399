//! The web channel: an answer given on the dashboard goes through the broker's first-answer
//! path, the waiting asker gets it at once, and the other channels are told.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tether_human::{Answer, Broker, Channel, ChannelAnswer, DynChannel};
use tether_store::{Journal, NewQuestion, Question, Store};
use tokio_util::sync::CancellationToken;

use crate::common::Web;

/// A channel that never answers and records what it is told.
#[derive(Default)]
struct Watcher {
    offered: Mutex<bool>,
    told: Mutex<Vec<(String, String)>>,
}

impl Channel for Watcher {
    fn name(&self) -> &'static str {
        "zulip"
    }

    async fn offer(&self, _q: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        *self.offered.lock().unwrap() = true;
        stop.cancelled().await;
        None
    }

    async fn answered_elsewhere(&self, _q: &Question, a: &Answer) {
        self.told
            .lock()
            .unwrap()
            .push((a.channel.clone(), a.responder.clone()));
    }
}

#[test]
fn an_answer_on_the_page_reaches_the_waiting_asker_and_the_other_channels_hear_of_it() {
    let web = Web::start();
    let watcher = Arc::new(Watcher::default());
    let journal = Journal::new(Store::open(web.ws.db_path()).unwrap(), Vec::new()).unwrap();
    let broker = Broker::new(
        journal,
        web.ws.state_dir(),
        vec![watcher.clone() as Arc<dyn DynChannel>],
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let asked = rt.spawn(async move {
        broker
            .ask(
                NewQuestion {
                    question: "Ship it?".into(),
                    ..NewQuestion::default()
                },
                CancellationToken::new(),
            )
            .await
    });
    let id = tether_testkit::wait_until("the question is stored", Duration::from_secs(10), || {
        let pending = web.get("/api/questions").json();
        pending[0]["id"].as_str().map(str::to_owned)
    })
    .unwrap();
    // Only a channel the question was offered on has anything to be told; answer once it was.
    tether_testkit::wait_until(
        "the other channel is offered the question",
        Duration::from_secs(10),
        || (*watcher.offered.lock().unwrap()).then_some(()),
    )
    .unwrap();
    let r = web.post_json(
        &format!("/api/questions/{id}/answer"),
        &json!({"text": "yes", "responder": "ana"}),
    );
    assert_eq!(r.status, 200);
    let answer = rt
        .block_on(async { tokio::time::timeout(Duration::from_secs(10), asked).await })
        .expect("the asker got the answer in time")
        .unwrap()
        .unwrap();
    assert_eq!(
        (
            answer.text.as_str(),
            answer.channel.as_str(),
            answer.responder.as_str()
        ),
        ("yes", "web", "ana")
    );
    // The other channels hear of it just after the asker does.
    tether_testkit::wait_until(
        "the other channel to hear of the answer",
        Duration::from_secs(10),
        || (!watcher.told.lock().unwrap().is_empty()).then_some(()),
    )
    .unwrap();
    assert_eq!(
        *watcher.told.lock().unwrap(),
        [("web".to_owned(), "ana".to_owned())]
    );
}

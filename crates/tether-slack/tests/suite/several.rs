//! Several tether processes on one Slack app: Slack hands each event to only one of the app's
//! sockets, so a process receives events for threads another process waits on. Those reach
//! the unclaimed handler (which the channel uses to store the answer for the other waiter);
//! nothing is lost and nothing is delivered twice.

use std::sync::{Arc, Mutex};

use tether_slack::{Incoming, ReplyBody, option_action_id};
use tether_testkit::FakeSlackServer;
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, ask, client, labels, server, within};

const HUMAN: &str = FakeSlackServer::HUMAN;

#[tokio::test]
async fn two_clients_on_one_app_each_get_every_event_once_directly_or_unclaimed() {
    let server = server().await;
    let (a, b) = (client(&server), client(&server));
    let unclaimed: Arc<Mutex<Vec<(char, Incoming)>>> = Arc::default();
    for (name, client) in [('a', &a), ('b', &b)] {
        let seen = Arc::clone(&unclaimed);
        client.on_unclaimed(Arc::new(move |incoming| {
            seen.lock().unwrap().push((name, incoming));
        }));
    }
    let options = labels(&["Yes", "No"]);
    let qa = ask(&a, "A's question", &options, None).await;
    let qb = ask(&b, "B's question", &options, None).await;
    let (ta, tb) = (qa.question_ts().clone(), qb.question_ts().clone());
    let wa = tokio::spawn(async move { qa.wait(&CancellationToken::new()).await });
    let wb = tokio::spawn(async move { qb.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(2, WAIT).await.unwrap();
    // Round robin: the first press goes to one socket, the second to the other, so (whichever
    // socket is whose) at most one press reaches its own waiter directly.
    server.press_button(ta.as_str(), HUMAN, &option_action_id(0));
    server.press_button(tb.as_str(), HUMAN, &option_action_id(1));
    tether_testkit::wait_until_async("both presses acknowledged", WAIT, || {
        (server.acks().len() >= 2).then_some(())
    })
    .await
    .unwrap();
    let routed = unclaimed.lock().unwrap().clone();
    let direct_a = routed
        .iter()
        .all(|(_, i)| !matches!(i, Incoming::Button(p) if p.message_ts == ta));
    let direct_b = routed
        .iter()
        .all(|(_, i)| !matches!(i, Incoming::Button(p) if p.message_ts == tb));
    assert_eq!(
        routed.len() + usize::from(direct_a) + usize::from(direct_b),
        2,
        "{routed:?}"
    );
    for (who, incoming) in &routed {
        let Incoming::Button(press) = incoming else {
            panic!("{incoming:?}")
        };
        let waiter = if press.message_ts == ta { 'a' } else { 'b' };
        assert_ne!(*who, waiter, "only the other process gets it unclaimed");
    }
    if direct_a {
        assert_eq!(
            within(wa).await.unwrap().unwrap().body,
            ReplyBody::Choice(0)
        );
    }
    if direct_b {
        assert_eq!(
            within(wb).await.unwrap().unwrap().body,
            ReplyBody::Choice(1)
        );
    }
}

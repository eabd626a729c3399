//! The API key never leaves the Authorization header: not in errors, not in `Debug`, not in
//! logs, whatever goes wrong.

use tether_config::Secret;
use tether_testkit::Captured;
use tether_testkit::zulip_server::{Endpoint, Moment, ZulipFault};
use tether_zulip::{ZulipClient, ZulipError};
use tokio_util::sync::CancellationToken;

use super::common::{TOPIC, fast_options, server, settings, within};

#[tokio::test]
async fn the_api_key_appears_in_no_error_debug_or_log_line() {
    let logs = Captured::default();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_writer({
            let logs = logs.clone();
            move || logs.clone()
        })
        .finish();
    // The test runtime is single-threaded: every task logs through this subscriber.
    let _guard = tracing::subscriber::set_default(subscriber);

    let server = server(20).await;
    let key = server.api_key().to_owned();
    let mut seen = Vec::new();

    // Everything that can go wrong and be logged, with the right key…
    server.fault_at(
        Endpoint::UsersMe,
        0,
        ZulipFault::RateLimited { retry_after: 0.01 },
    );
    server.fault_at(Endpoint::Register, 0, ZulipFault::ServerError(502));
    server.fault_at(Endpoint::SendMessage, 0, ZulipFault::ConnectionReset);
    server.fault_at(Endpoint::GetEvents, 1, ZulipFault::BadEventQueue);
    server.fault_at(Endpoint::GetEvents, 2, ZulipFault::ServerError(503));
    server.on(
        Endpoint::GetEvents,
        4,
        Moment::OnArrival,
        server.human_reply(TOPIC, "ok"),
    );
    let client = ZulipClient::with_options(&settings(&server), fast_options()).unwrap();
    seen.push(format!("{client:?} {:?}", settings(&server)));
    let reply = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap();
    seen.push(format!("{reply:?}"));
    let low_level = client
        .api()
        .get_events("no-such-queue", -1, true)
        .await
        .unwrap_err();
    seen.push(format!("{low_level} {low_level:?}"));

    // …and a wrong key.
    let mut wrong = settings(&server);
    wrong.api_key = Secret::new("wrong-key-9876");
    let client = ZulipClient::with_options(&wrong, fast_options()).unwrap();
    let err = within(client.ask(TOPIC, "q?", &CancellationToken::new()))
        .await
        .unwrap_err();
    assert!(matches!(err, ZulipError::Auth { .. }));
    seen.push(format!("{err} {err:?} {client:?}"));

    // And a server that cannot be reached at all.
    let mut unreachable = settings(&server);
    unreachable.server_url = "http://127.0.0.1:9".into();
    let client = ZulipClient::with_options(&unreachable, fast_options()).unwrap();
    let err = client
        .note(TOPIC, "n", &CancellationToken::new())
        .await
        .unwrap_err();
    assert!(matches!(err, ZulipError::Transport { .. }), "{err:?}");
    seen.push(format!("{err} {err:?}"));

    let logs = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(
        logs.contains("zulip"),
        "nothing was logged: the test would prove nothing"
    );
    assert!(logs.contains("retrying"), "{logs}");
    for text in seen.iter().chain([&logs]) {
        for secret in [key.as_str(), "wrong-key-9876", "Basic "] {
            assert!(!text.contains(secret), "{secret:?} leaked into: {text}");
        }
    }
}

//! Tokens never appear in errors, `Debug` output or logs, whatever fails.

use std::sync::{Arc, Mutex};

use tether_slack::SlackClient;
use tether_testkit::slack_server::{SlackFault, SlackMethod};
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, ask, fast_options, question, server, settings};

#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn no_token_or_ticket_reaches_an_error_debug_or_log() {
    let logs = Logs::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let server = server().await;
    let settings = settings(&server);
    let client = SlackClient::with_options(&settings, fast_options()).unwrap();
    let mut shown = vec![format!("{settings:?}"), format!("{client:?}")];
    server.fault(SlackMethod::PostMessage, 2, SlackFault::ServerError(500));
    server.fault(
        SlackMethod::PostMessage,
        1,
        SlackFault::Error("invalid_auth".into()),
    );
    let (text, blocks) = question("Q?", &[], false);
    let err = client
        .post_question(&text, blocks, 0, None, &CancellationToken::new())
        .await
        .unwrap_err();
    shown.push(err.to_string());
    shown.push(format!("{err:?}"));
    let pending = ask(&client, "Q?", &[], None).await;
    server.fault(
        SlackMethod::ConnectionsOpen,
        1,
        SlackFault::ServerError(503),
    );
    let waiting = tokio::spawn(async move { pending.wait(&CancellationToken::new()).await });
    server.wait_for_sockets(1, WAIT).await.unwrap();
    server.drop_sockets();
    server.wait_for_sockets(1, WAIT).await.unwrap();
    waiting.abort();
    shown.push(String::from_utf8_lossy(&logs.0.lock().unwrap()).into_owned());
    let all = shown.join("\n");
    assert!(all.contains("slack"), "logs were captured: {all}");
    for secret in [server.bot_token(), server.app_token(), "ticket="] {
        assert!(!all.contains(secret), "{secret} leaked:\n{all}");
    }
}

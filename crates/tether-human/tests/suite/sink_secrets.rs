//! No sink's secret — an ntfy token, a webhook URL, an SMTP password — reaches a log line, an
//! error or a `Debug`, while every sink fails and says so.

use std::time::Duration;

use axum::http::StatusCode;
use tether_config::{NoticeKind, Secret, Workspace};
use tether_human::email::Email;
use tether_human::ntfy::Ntfy;
use tether_human::sinks::OneWay;
use tether_human::tables::email::{EmailConfig, EmailTls};
use tether_human::tables::ntfy::NtfyConfig;
use tether_human::tables::webhook::WebhookFormat;
use tether_human::webhook::{Webhook, WebhookRetry};
use tether_human::{Channel, Notice};
use tether_store::{Journal, RunId, Store};
use tether_testkit::{Captured, FakeNtfyServer, wait_until_async};

const LIMIT: Duration = Duration::from_secs(15);

fn notice() -> Notice {
    Notice {
        kind: NoticeKind::Failed,
        run_id: Some("r-7k2m9x".parse::<RunId>().unwrap()),
        text: "Run r-7k2m9x failed.".into(),
        resume: None,
    }
}

fn closed_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn no_secret_reaches_a_log_line_while_every_sink_fails() {
    let logs = Captured::default();
    let writer = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::DEBUG)
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    // A webhook nobody listens on, and one that always fails.
    let retry = WebhookRetry {
        initial: Duration::from_millis(5),
        max: Duration::from_millis(20),
        attempts: 3,
        timeout: Duration::from_secs(5),
    };
    let refused = format!("http://127.0.0.1:{}/hooks/secret-path-1111", closed_port());
    let hook = OneWay::new(
        Webhook::new(Secret::new(refused), WebhookFormat::Json)
            .unwrap()
            .with_retry(retry.clone()),
    );
    hook.notice(&notice()).await;
    let app = axum::Router::new().route(
        "/{*path}",
        axum::routing::post(|| async { StatusCode::INTERNAL_SERVER_ERROR }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let failing = format!("http://{addr}/hooks/secret-path-2222");
    let hook2 = OneWay::new(
        Webhook::new(Secret::new(failing), WebhookFormat::Slack)
            .unwrap()
            .with_retry(retry),
    );
    hook2.notice(&notice()).await;

    // ntfy with a token the server refuses.
    let server = FakeNtfyServer::builder()
        .token("right")
        .start()
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let config = NtfyConfig {
        server: server.url(),
        topic: Some("t".into()),
        token_env: Some("NTFY_TOKEN".into()),
        token: Some(Secret::new("tk-secret-3333")),
        ..NtfyConfig::default()
    };
    let ntfy = Ntfy::from_config(&config, None, journal, ws.state_dir()).unwrap();
    ntfy.notice(&notice()).await;

    // Email with a login to a server that is not there.
    let email = EmailConfig {
        smtp_host: Some("127.0.0.1".into()),
        smtp_port: closed_port(),
        from: Some("tether@example.com".into()),
        to: vec!["me@example.com".into()],
        username: Some(Secret::new("user-secret-4444")),
        password: Some(Secret::new("pw-secret-5555")),
        tls: EmailTls::None,
        ..EmailConfig::default()
    };
    let mail = OneWay::new(Email::from_config(&email, None, None).unwrap());
    mail.notice(&notice()).await;

    wait_until_async("both webhooks given up on", LIMIT, || {
        (logs
            .text()
            .matches("giving up on a webhook message")
            .count()
            == 2)
            .then_some(())
    })
    .await
    .unwrap();
    let text = logs.text();
    assert!(text.contains("could not push to ntfy"), "{text}");
    assert!(text.contains("an email was not sent"), "{text}");
    let shown = format!("{text}\n{config:?}\n{email:?}");
    for secret in [
        "secret-path-1111",
        "secret-path-2222",
        "tk-secret-3333",
        "user-secret-4444",
        "pw-secret-5555",
    ] {
        assert!(!shown.contains(secret), "{secret} shown in:\n{shown}");
    }
}

//! The API key never appears in an error's text, a `Debug` print, or a log line — even when
//! the server echoes it back.

use tether_config::{Api, Secret};
use tether_model::scripted::{Script, Turn};
use tether_model::{Endpoint, HttpModel, Message, ModelClient, ModelError, Request};
use tether_testkit::FakeModelServer;
use tokio_util::sync::CancellationToken;

use super::common::{client_with_key, fast_retry, options, per_api};

const KEY: &str = "sk-super-secret-0123456789";

fn assert_no_key(err: &ModelError) {
    for text in [err.to_string(), format!("{err:?}")] {
        assert!(!text.contains(KEY), "the key leaked: {text}");
    }
}

async fn an_echoed_key_is_scrubbed_from_auth_errors(api: Api) {
    let server = FakeModelServer::builder(Script::turns([Turn::text("no")]))
        .require_key("sk-other")
        .start()
        .await
        .unwrap();
    let err = client_with_key(&server, api, KEY)
        .complete(
            &Request::new(vec![Message::user("hi")]),
            CancellationToken::new(),
        )
        .await
        .unwrap_err();
    match &err {
        ModelError::Auth { message, .. } => {
            assert!(
                message.contains("Incorrect API key provided: [redacted]"),
                "{message}"
            );
        }
        other => panic!("expected Auth, got {other:?}"),
    }
    assert_no_key(&err);
}
per_api!(an_echoed_key_is_scrubbed_from_auth_errors);

#[tokio::test]
async fn transport_errors_and_debug_output_hold_no_key() {
    // A port that was just free: connecting fails.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    for api in [Api::OpenAiChat, Api::OpenAiResponses, Api::Anthropic] {
        let endpoint =
            Endpoint::new(api, format!("http://{addr}/v1"), "m").with_api_key(Secret::new(KEY));
        let model = HttpModel::with_options(endpoint, options(fast_retry(2))).unwrap();
        assert!(!format!("{model:?}").contains(KEY));
        let err = model
            .complete(
                &Request::new(vec![Message::user("hi")]),
                CancellationToken::new(),
            )
            .await
            .unwrap_err();
        assert!(matches!(err, ModelError::Transport { .. }), "{err:?}");
        assert_no_key(&err);
    }
}

#[test]
fn invalid_endpoints_are_config_errors() {
    for base in ["ftp://host/v1", "not a url", "localhost:8080/v1"] {
        let err = HttpModel::new(Endpoint::new(Api::OpenAiChat, base, "m")).unwrap_err();
        assert!(matches!(err, ModelError::Config { .. }), "{base}: {err:?}");
    }
    let bad_key = Endpoint::new(Api::OpenAiChat, "http://127.0.0.1:1/v1", "m")
        .with_api_key(Secret::new("sk-line\nbreak"));
    let err = HttpModel::new(bad_key).unwrap_err();
    assert!(matches!(err, ModelError::Config { .. }), "{err:?}");
    assert!(!err.to_string().contains("sk-line"));
}

#[test]
fn https_endpoints_build_without_a_global_crypto_provider() {
    // Uses the ring provider explicitly and the platform's roots; no install_default anywhere.
    let model = HttpModel::new(Endpoint::new(
        Api::Anthropic,
        "https://api.anthropic.com",
        "m",
    ));
    assert!(model.is_ok(), "{model:?}");
}

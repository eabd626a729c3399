//! Every injected fault, for each wire format: what is retried, what is not, and what the
//! caller sees.

use std::time::{Duration, Instant};

use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{
    HttpModel, Message, ModelClient, ModelError, Request, RetryPolicy, StreamEvent,
};
use tether_testkit::{FakeModelServer, Fault};
use tokio_util::sync::CancellationToken;

use super::common::{
    client, drain, endpoint, frames_through_first_text, options, per_api, text_of,
};

fn request() -> Request {
    Request::new(vec![Message::user("hi")])
}

/// A server with two text turns: if a client wrongly retried, the retry would succeed.
async fn two_turn_server() -> FakeModelServer {
    FakeModelServer::start(Script::turns([
        Turn::text("first answer here"),
        Turn::text("second answer"),
    ]))
    .await
    .unwrap()
}

async fn rate_limit_then_success_honours_fractional_retry_after(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(1, Fault::rate_limited("0.15"));
    let started = Instant::now();
    let response = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.text, "first answer here",
        "a 429 does not use up a turn"
    );
    assert_eq!(server.request_count(), 2);
    // The policy's own backoff is ~1 ms; only retry-after explains a 150 ms wait.
    assert!(
        started.elapsed() >= Duration::from_millis(150),
        "{:?}",
        started.elapsed()
    );
}
per_api!(rate_limit_then_success_honours_fractional_retry_after);

async fn integer_retry_after_is_capped_by_the_policy(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(1, Fault::rate_limited("30"));
    let policy = RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_millis(100),
    };
    let model = HttpModel::with_options(endpoint(&server, api), options(policy)).unwrap();
    let started = Instant::now();
    let response = model
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "first answer here");
    let waited = started.elapsed();
    assert!(waited >= Duration::from_millis(100), "{waited:?}");
    assert!(
        waited < Duration::from_secs(20),
        "capped, not 30 s: {waited:?}"
    );
}
per_api!(integer_retry_after_is_capped_by_the_policy);

async fn rate_limits_beyond_the_policy_reach_the_caller(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(5, Fault::rate_limited("0"));
    let err = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::RateLimited {
            retry_after: Some(Duration::ZERO)
        }
    );
    assert_eq!(server.request_count(), 3, "three attempts, as configured");
}
per_api!(rate_limits_beyond_the_policy_reach_the_caller);

async fn server_errors_then_success(api: Api) {
    let server = two_turn_server().await;
    server.fault_on(0, Fault::Status(500));
    server.fault_on(1, Fault::Status(503));
    let response = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "first answer here");
    assert_eq!(server.request_count(), 3);
}
per_api!(server_errors_then_success);

async fn persistent_server_errors_are_typed(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(3, Fault::Status(502));
    let err = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ModelError::Server {
                status: Some(502),
                ..
            }
        ),
        "{err:?}"
    );
    assert_eq!(server.request_count(), 3);
}
per_api!(persistent_server_errors_are_typed);

async fn auth_failures_are_not_retried(api: Api) {
    let server = FakeModelServer::builder(Script::turns([Turn::text("never")]))
        .require_key("sk-right")
        .start()
        .await
        .unwrap();
    for model in [
        client(&server, api),
        super::common::client_with_key(&server, api, "sk-wrong"),
    ] {
        let err = model
            .complete(&request(), CancellationToken::new())
            .await
            .unwrap_err();
        assert!(
            matches!(err, ModelError::Auth { status: 401, .. }),
            "{err:?}"
        );
        assert!(!err.is_retryable());
    }
    assert_eq!(
        server.request_count(),
        2,
        "one request per client, no retries"
    );
    assert_eq!(server.script().served(), 0);
}
per_api!(auth_failures_are_not_retried);

async fn the_right_key_is_sent_and_redacted_in_the_record(api: Api) {
    let server = FakeModelServer::builder(Script::turns([Turn::text("welcome")]))
        .require_key("sk-right")
        .start()
        .await
        .unwrap();
    let model = super::common::client_with_key(&server, api, "sk-right");
    let response = model
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(response.text, "welcome");
    let recorded = &server.requests()[0];
    let header = if api == Api::Anthropic {
        "x-api-key"
    } else {
        "authorization"
    };
    assert_eq!(recorded.header(header), Some("<redacted>"));
    assert!(!format!("{recorded:?}").contains("sk-right"));
}
per_api!(the_right_key_is_sent_and_redacted_in_the_record);

async fn a_cut_after_output_fails_without_retry(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(1, Fault::CutAfter(frames_through_first_text(api)));
    let model = client(&server, api);
    let (events, error) = drain(model.stream(&request(), CancellationToken::new())).await;
    assert_eq!(
        text_of(&events),
        "first ",
        "the delta before the cut was delivered"
    );
    let error = error.unwrap();
    assert!(
        matches!(
            error,
            ModelError::Transport { .. } | ModelError::MalformedStream { .. }
        ),
        "{error:?}"
    );
    assert_eq!(
        server.request_count(),
        1,
        "no retry once output was delivered"
    );
}
per_api!(a_cut_after_output_fails_without_retry);

async fn a_cut_before_any_output_is_retried(api: Api) {
    let server = two_turn_server().await;
    // One frame in, nothing the caller can see has been produced yet.
    server.fault_next(1, Fault::CutAfter(1));
    let response = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        response.text, "second answer",
        "the cut stream used up the first turn"
    );
    assert_eq!(server.request_count(), 2);
}
per_api!(a_cut_before_any_output_is_retried);

async fn malformed_json_is_a_malformed_stream(api: Api) {
    let server = two_turn_server().await;
    server.fault_next(1, Fault::MalformedAfter(frames_through_first_text(api)));
    let (events, error) =
        drain(client(&server, api).stream(&request(), CancellationToken::new())).await;
    assert_eq!(text_of(&events), "first ");
    let error = error.unwrap();
    assert!(
        matches!(error, ModelError::MalformedStream { .. }),
        "{error:?}"
    );
    assert!(error.to_string().contains("not valid JSON"), "{error}");

    // Malformed from the very first frame: still not retried (it is not transient).
    server.fault_next(1, Fault::MalformedAfter(0));
    let error = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    assert!(
        matches!(error, ModelError::MalformedStream { .. }),
        "{error:?}"
    );
    assert_eq!(server.request_count(), 2);
}
per_api!(malformed_json_is_a_malformed_stream);

async fn an_exhausted_script_is_a_clear_bad_request(api: Api) {
    let server = FakeModelServer::start(Script::turns([])).await.unwrap();
    let err = client(&server, api)
        .complete(&request(), CancellationToken::new())
        .await
        .unwrap_err();
    match &err {
        ModelError::BadRequest {
            status: 400,
            message,
        } => {
            assert!(message.contains("used up"), "{message}");
        }
        other => panic!("expected BadRequest, got {other:?}"),
    }
    assert_eq!(server.request_count(), 1);
}
per_api!(an_exhausted_script_is_a_clear_bad_request);

#[tokio::test]
async fn stream_events_are_well_formed_for_tool_turns() {
    let server = FakeModelServer::start(Script::turns([Turn::tool(
        "write",
        serde_json::json!({"path": "p", "content": "c"}),
    )]))
    .await
    .unwrap();
    let (events, error) = drain(client(&server, Api::Anthropic).stream(
        &request().with_tools(super::common::tools()),
        CancellationToken::new(),
    ))
    .await;
    assert_eq!(error, None);
    let kinds: Vec<&str> = events
        .iter()
        .map(|event| match event {
            StreamEvent::TextDelta(_) => "text",
            StreamEvent::ToolCallStarted { .. } => "started",
            StreamEvent::ToolCallArgumentsDelta { .. } => "args",
            StreamEvent::ToolCallFinished { .. } => "finished",
            StreamEvent::Usage(_) => "usage",
            StreamEvent::Done { .. } => "done",
        })
        .collect();
    assert_eq!(
        kinds,
        ["started", "args", "args", "finished", "usage", "done"]
    );
}

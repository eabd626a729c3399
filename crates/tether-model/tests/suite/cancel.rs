//! Cancellation mid-stream and before the response headers, for each wire format: the caller
//! gets `Cancelled` promptly and the server sees the connection go.

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Message, ModelClient, ModelError, Request, StreamEvent};
use tether_testkit::{FakeModelServer, Fault};
use tokio_util::sync::CancellationToken;

use super::common::{WAIT, client, frames_through_first_text, per_api};

/// "Promptly": generous for a loaded 2-core machine, far below any hold.
const PROMPT: Duration = Duration::from_secs(2);

fn request() -> Request {
    Request::new(vec![Message::user("hi")])
}

async fn cancelling_mid_stream(api: Api) {
    let server = FakeModelServer::start(Script::turns([Turn::text("held forever")]))
        .await
        .unwrap();
    server.fault_next(1, Fault::HoldAfter(frames_through_first_text(api)));
    let cancel = CancellationToken::new();
    let mut stream = client(&server, api).stream(&request(), cancel.clone());
    let first = tokio::time::timeout(WAIT, stream.next()).await.unwrap();
    assert_eq!(first, Some(Ok(StreamEvent::TextDelta("held ".to_owned()))));

    let started = Instant::now();
    cancel.cancel();
    let next = tokio::time::timeout(WAIT, stream.next()).await.unwrap();
    assert_eq!(next, Some(Err(ModelError::Cancelled)));
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    assert_eq!(
        tokio::time::timeout(WAIT, stream.next()).await.unwrap(),
        None
    );
    // The stream is still alive here, so the server saw the connection drop because the
    // client closed it on cancellation, not because the stream was dropped.
    server.wait_for_disconnects(1, WAIT).await.unwrap();
    drop(stream);
    assert_eq!(server.request_count(), 1);
}
per_api!(cancelling_mid_stream);

async fn cancelling_before_the_headers(api: Api) {
    let server = FakeModelServer::start(Script::turns([Turn::text("never")]))
        .await
        .unwrap();
    server.fault_next(1, Fault::HoldBeforeHeaders);
    let cancel = CancellationToken::new();
    let model = client(&server, api);
    let call = tokio::spawn(model.complete(&request(), cancel.clone()));
    server.wait_for_request(0, WAIT).await.unwrap();
    let started = Instant::now();
    cancel.cancel();
    let result = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert_eq!(result, Err(ModelError::Cancelled));
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    server.wait_for_disconnects(1, WAIT).await.unwrap();
}
per_api!(cancelling_before_the_headers);

#[tokio::test]
async fn a_cancelled_token_never_sends_a_request() {
    let server = FakeModelServer::start(Script::turns([Turn::text("x")]))
        .await
        .unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = client(&server, Api::OpenAiChat)
        .complete(&request(), cancel)
        .await;
    assert_eq!(result, Err(ModelError::Cancelled));
    assert_eq!(server.request_count(), 0);
}

#[tokio::test]
async fn cancelling_during_a_retry_wait() {
    let server = FakeModelServer::start(Script::turns([Turn::text("x")]))
        .await
        .unwrap();
    server.fault_next(1, Fault::rate_limited("60"));
    let policy = tether_model::RetryPolicy {
        max_attempts: 3,
        base_delay: Duration::from_millis(1),
        max_delay: Duration::from_secs(60),
    };
    let model = tether_model::HttpModel::with_options(
        super::common::endpoint(&server, Api::Anthropic),
        super::common::options(policy),
    )
    .unwrap();
    let cancel = CancellationToken::new();
    let call = tokio::spawn(model.complete(&request(), cancel.clone()));
    server.wait_for_request(0, WAIT).await.unwrap();
    cancel.cancel();
    let result = tokio::time::timeout(WAIT, call).await.unwrap().unwrap();
    assert_eq!(result, Err(ModelError::Cancelled));
    assert_eq!(server.request_count(), 1);
}

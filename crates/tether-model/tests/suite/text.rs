//! A plain text turn and usage accounting, for each wire format.

use std::sync::Arc;

use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Message, ModelClient, Request, StopReason, StreamEvent, Usage, connect};
use tether_testkit::FakeModelServer;
use tokio_util::sync::CancellationToken;

use super::common::{MODEL, WAIT, client, drain, endpoint, fast_retry, options, per_api, text_of};

async fn plain_text_turn(api: Api) {
    let server = FakeModelServer::start(Script::turns([
        Turn::text("Hello there, world").with_usage(11, 7)
    ]))
    .await
    .unwrap();
    let model = client(&server, api);
    let request = Request::new(vec![Message::user("Say hello")]).with_system("Be brief.");
    let (events, error) = drain(model.stream(&request, CancellationToken::new())).await;
    assert_eq!(error, None);
    assert_eq!(text_of(&events), "Hello there, world");
    let deltas = events
        .iter()
        .filter(|event| matches!(event, StreamEvent::TextDelta(_)))
        .count();
    assert!(deltas > 1, "text arrives in several deltas: {events:?}");
    let tail = &events[events.len() - 2..];
    assert_eq!(
        tail,
        [
            StreamEvent::Usage(Usage {
                input_tokens: 11,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 7
            }),
            StreamEvent::Done {
                stop_reason: StopReason::EndTurn
            },
        ]
    );

    let recorded = server.wait_for_request(0, WAIT).await.unwrap();
    let expected_path = match api {
        Api::OpenAiChat => "/v1/chat/completions",
        Api::OpenAiResponses => "/v1/responses",
        Api::Anthropic => "/v1/messages",
    };
    assert_eq!(recorded.path, expected_path);
    assert_eq!(recorded.header("accept"), Some("text/event-stream"));
    assert_eq!(recorded.header("content-type"), Some("application/json"));
    assert_eq!(recorded.body["model"], MODEL);
    assert_eq!(recorded.body["stream"], true);
    if api == Api::Anthropic {
        assert_eq!(recorded.header("anthropic-version"), Some("2023-06-01"));
    }
}
per_api!(plain_text_turn);

async fn usage_is_accounted_on_every_response(api: Api) {
    let server = FakeModelServer::start(Script::turns([
        Turn::text("one").with_usage(100, 5),
        Turn::tool("write", serde_json::json!({"path": "x", "content": ""})).with_usage(120, 9),
        Turn::text("three"),
    ]))
    .await
    .unwrap();
    // Through the trait object executors hold.
    let model: Arc<dyn ModelClient> =
        connect(endpoint(&server, api), options(fast_retry(1))).unwrap();
    let request = Request::new(vec![Message::user("count")]).with_tools(super::common::tools());
    let first = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let second = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    let third = model
        .complete(&request, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 100,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 5
        }
    );
    assert_eq!(
        second.usage,
        Usage {
            input_tokens: 120,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 9
        }
    );
    assert_eq!(second.stop_reason, StopReason::ToolUse);
    assert!(
        third.usage.input_tokens > 0 && third.usage.output_tokens > 0,
        "an estimate is reported when the script gives none: {:?}",
        third.usage
    );
}
per_api!(usage_is_accounted_on_every_response);

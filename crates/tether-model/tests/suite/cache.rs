//! Prompt caching end to end: the client's requests against the fake server playing each
//! provider's cache. A conversation that grows reads what it sent before; Anthropic's reads
//! and writes follow the client's breakpoints.

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_model::{Message, ModelClient, Request, ToolCall, Usage};
use tether_testkit::FakeModelServer;
use tokio_util::sync::CancellationToken;

use super::common::{client, per_api, tools};

/// A system prompt long enough to be cached (about 1250 tokens).
fn system() -> String {
    "Follow the house rules. ".repeat(210)
}

async fn call(model: &dyn ModelClient, request: &Request) -> Usage {
    model
        .complete(request, CancellationToken::new())
        .await
        .unwrap()
        .usage
}

async fn a_growing_conversation_reads_what_it_sent_before(api: Api) {
    let script = Script::turns([
        Turn::tool("write", json!({"path": "a.txt", "content": "hi"})),
        Turn::text("done"),
        Turn::text("continue"),
    ]);
    let server = FakeModelServer::builder(script)
        .prompt_cache()
        .start()
        .await
        .unwrap();
    let model = client(&server, api);
    let mut request = Request::new(vec![Message::user("Write a.txt")])
        .with_system(system())
        .with_tools(tools());
    let first = call(&model, &request).await;
    assert_eq!(first.cached_input_tokens, 0, "{api:?}: a cold cache");
    request.messages.push(Message::assistant_tool_calls(
        "",
        vec![ToolCall::new(
            "call_1",
            "write",
            json!({"path": "a.txt", "content": "hi"}),
        )],
    ));
    request
        .messages
        .push(Message::tool_result("call_1", "wrote 2 bytes"));
    let second = call(&model, &request).await;
    assert!(second.input_tokens > first.input_tokens);
    match api {
        Api::Anthropic => {
            // Everything up to the newest block was written, then read back by the next call.
            assert_eq!(first.cache_write_input_tokens, first.input_tokens);
            assert_eq!(second.cached_input_tokens, first.input_tokens);
            assert_eq!(
                second.cache_write_input_tokens,
                second.input_tokens - first.input_tokens
            );
        }
        Api::OpenAiChat | Api::OpenAiResponses => {
            // The longest 128-token step of the first call's prompt; writes are not reported.
            assert!(second.cached_input_tokens >= 1024, "{second:?}");
            assert!(second.cached_input_tokens <= first.input_tokens);
            assert_eq!(second.cached_input_tokens % 128, 0);
            assert_eq!(
                first.cache_write_input_tokens + second.cache_write_input_tokens,
                0
            );
        }
    }
    // A one-shot call with the same system prompt and tools reads them, and writes nothing.
    let one_shot = Request::new(vec![Message::user("Something else")])
        .with_system(system())
        .with_tools(tools())
        .with_conversation_cache(false);
    let third = call(&model, &one_shot).await;
    assert!(third.cached_input_tokens >= 1024, "{api:?}: {third:?}");
    assert_eq!(third.cache_write_input_tokens, 0, "{api:?}");
    assert!(third.cached_input_tokens < third.input_tokens);
}
per_api!(a_growing_conversation_reads_what_it_sent_before);

async fn a_turns_own_usage_is_reported_as_given(api: Api) {
    let script = Script::turns([
        Turn::text("one"),
        Turn::text("two").with_cache_usage(5000, 3000, 1000, 7),
    ]);
    let server = FakeModelServer::builder(script)
        .prompt_cache()
        .start()
        .await
        .unwrap();
    let model = client(&server, api);
    let request = Request::new(vec![Message::user("go")]).with_system(system());
    call(&model, &request).await;
    let given = call(&model, &request).await;
    let expected_write = if api == Api::Anthropic { 1000 } else { 0 };
    assert_eq!(
        given,
        Usage {
            input_tokens: 5000,
            cached_input_tokens: 3000,
            cache_write_input_tokens: expected_write,
            output_tokens: 7,
        },
        "{api:?}: the OpenAI formats carry no writes"
    );
}
per_api!(a_turns_own_usage_is_reported_as_given);

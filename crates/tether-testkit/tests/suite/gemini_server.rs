//! The fake model server's Gemini API over raw HTTP, as Gemini CLI calls it: the streamed answer
//! under `/v1beta/models/{model}:streamGenerateContent?alt=sse`, the whole one under
//! `:generateContent`, the key in `x-goog-api-key`, a call the model makes answered by name.

use serde_json::{Value, json};
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_model::sse::SseDecoder;
use tether_testkit::FakeModelServer;

use super::model_server::raw_http;

async fn post(url: String, key: Option<&str>, body: &Value) -> (u16, String) {
    let mut request = raw_http().post(url).json(body);
    if let Some(key) = key {
        request = request.header("x-goog-api-key", key);
    }
    let response = request.send().await.unwrap();
    (response.status().as_u16(), response.text().await.unwrap())
}

fn chunks(text: &str) -> Vec<Value> {
    let mut decoder = SseDecoder::new();
    let mut frames = Vec::new();
    decoder.push(text.as_bytes(), &mut frames);
    decoder.finish(&mut frames);
    frames
        .iter()
        .map(|frame| serde_json::from_str(&frame.data).unwrap())
        .collect()
}

fn body(contents: Value) -> Value {
    json!({
        "contents": contents,
        "systemInstruction": {"parts": [{"text": "You are an agent."}]},
        "tools": [{"functionDeclarations": [
            {"name": "ask_human", "parametersJsonSchema": {"type": "object"}},
        ]}],
    })
}

#[tokio::test]
async fn a_streamed_conversation_with_a_call_and_its_response() {
    let server = FakeModelServer::builder(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("ask_human", json!({"question": "Which?"})),
            Some((name, result)) => Turn::text(format!("{} said {result}", name.unwrap_or("?"))),
        }
    }))
    .require_key("g-key")
    .start()
    .await
    .unwrap();
    let base = server.gemini_base_url();
    let url = format!("{base}/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse");
    let first = body(json!([{"role": "user", "parts": [{"text": "Go."}]}]));
    let (status, text) = post(url.clone(), Some("wrong"), &first).await;
    assert_eq!(status, 401, "{text}");
    assert!(text.contains("UNAUTHENTICATED"), "{text}");
    let (status, text) = post(url.clone(), Some("g-key"), &first).await;
    assert_eq!(status, 200, "{text}");
    let got = chunks(&text);
    let call = &got[0]["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "ask_human");
    assert_eq!(call["args"]["question"], "Which?");
    assert_eq!(got.last().unwrap()["candidates"][0]["finishReason"], "STOP");
    assert!(got.last().unwrap()["usageMetadata"]["promptTokenCount"].as_u64() > Some(0));
    let second = body(json!([
        {"role": "user", "parts": [{"text": "Go."}]},
        {"role": "model", "parts": [{"functionCall": call.clone()}]},
        {"role": "user", "parts": [{"functionResponse": {
            "id": call["id"], "name": "ask_human", "response": {"output": "Blue."}}}]},
    ]));
    let (status, text) = post(url, Some("g-key"), &second).await;
    assert_eq!(status, 200, "{text}");
    let said: String = chunks(&text)
        .iter()
        .filter_map(|c| c["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(said, "ask_human said Blue.");
    let recorded = server.requests();
    assert_eq!(
        recorded[1].path,
        "/v1beta/models/gemini-2.5-pro:streamGenerateContent"
    );
}

#[tokio::test]
async fn generate_content_answers_one_json_body_and_other_methods_are_not_found() {
    let server = FakeModelServer::start(Script::from_fn(|_: &Request| Turn::text("a b")))
        .await
        .unwrap();
    let base = server.gemini_base_url();
    let one = body(json!([{"role": "user", "parts": [{"text": "Hi."}]}]));
    let (status, text) = post(
        format!("{base}/v1beta/models/flash:generateContent"),
        None,
        &one,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    let whole: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(whole["candidates"][0]["content"]["parts"][1]["text"], "b");
    assert_eq!(whole["modelVersion"], "flash");
    let (status, _) = post(
        format!("{base}/v1beta/models/flash:embedContent"),
        None,
        &one,
    )
    .await;
    assert_eq!(status, 404);
    // Without `alt=sse` the stream is a JSON array of its chunks.
    let (status, text) = post(
        format!("{base}/v1beta/models/flash:streamGenerateContent"),
        None,
        &one,
    )
    .await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap()[1]["candidates"][0]["finishReason"],
        "STOP"
    );
}

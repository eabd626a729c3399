use super::*;

/// A recorded pi 1.5.2 turn: the model asks a human over MCP, waits 70 s for the answer (two
/// progress updates), then answers.
const ASK_HUMAN: &str = include_str!("testdata/ask-human.jsonl");

/// A recorded pi 1.5.2 turn whose model calls all got HTTP 429: pi retried three times, then
/// gave up (and exited 0).
const USAGE_LIMIT: &str = include_str!("testdata/usage-limit.jsonl");

/// A shell command that failed, then a final message.
const BASH: &str = r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"bash","arguments":{"command":"cargo   test"}}],"usage":{"input":30,"output":4},"stopReason":"toolUse"}}
{"type":"tool_execution_start","toolCallId":"c1","toolName":"bash","args":{"command":"cargo   test"}}
{"type":"tool_execution_update","toolCallId":"c1","toolName":"bash","args":{"command":"cargo   test"},"partialResult":{"content":[]}}
{"type":"tool_execution_end","toolCallId":"c1","toolName":"bash","result":{"content":[{"type":"text","text":"exit 101"}]},"isError":true}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Tests fail."},{"type":"text","text":"Stopping here."}],"usage":{"input":40,"output":6},"stopReason":"stop"}}
{"type":"agent_settled","aborted":false}"#;

crate::cli::test_support::feed_fn!(StreamParser::new);

#[test]
fn the_recorded_stream_becomes_a_tool_call_model_calls_and_the_final_message() {
    for chunk in [1, 13, 1 << 16] {
        let (seen, events, raw) = feed(ASK_HUMAN, chunk);
        assert_eq!(
            raw,
            ASK_HUMAN.as_bytes(),
            "the transcript is the raw stream"
        );
        assert_eq!(seen.tool_calls, 1);
        assert_eq!((seen.input_tokens, seen.output_tokens), (20, 10));
        assert_eq!(seen.settled, Some(false));
        let last = seen.last.unwrap();
        assert!(!last.failed());
        assert_eq!(last.stop_reason, "stop");
        assert!(
            last.text
                .starts_with("The human answered: Human replied: Use the LRU cache")
        );
        insta::assert_json_snapshot!("ask_human_events", events);
    }
}

#[test]
fn a_failed_call_and_text_in_several_blocks() {
    let (seen, events, _) = feed(BASH, 7);
    assert_eq!(seen.last.unwrap().text, "Tests fail.\n\nStopping here.");
    assert_eq!((seen.input_tokens, seen.output_tokens), (70, 10));
    insta::assert_json_snapshot!("bash_events", events);
}

#[test]
fn cache_reads_and_writes_are_counted_in_the_input_and_apart() {
    let calls = r#"{"type":"message_end","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"ls","arguments":{}}],"usage":{"input":12,"output":4,"cacheRead":0,"cacheWrite":2048,"totalTokens":2064},"stopReason":"toolUse"}}
{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"usage":{"input":30,"output":6,"cacheRead":2048,"cacheWrite":16,"totalTokens":2100},"stopReason":"stop"}}"#;
    let (seen, events, _) = feed(calls, 4096);
    assert_eq!(
        (
            seen.input_tokens,
            seen.cached_input_tokens,
            seen.cache_write_input_tokens,
            seen.output_tokens
        ),
        (12 + 2048 + 30 + 2048 + 16, 2048, 2048 + 16, 10)
    );
    assert_eq!(
        events,
        [
            AgentEvent::ModelCall {
                input_tokens: 2060,
                output_tokens: 4
            },
            AgentEvent::ModelCall {
                input_tokens: 2094,
                output_tokens: 6
            },
        ]
    );
}

#[test]
fn a_turn_whose_model_calls_failed_ends_with_the_error() {
    let (seen, events, _) = feed(USAGE_LIMIT, 4096);
    assert!(events.is_empty(), "failed calls used no tokens: {events:?}");
    let last = seen.last.unwrap();
    assert!(last.failed());
    assert_eq!(last.stop_reason, "error");
    let error = last.error.unwrap();
    assert!(error.starts_with("429: "), "{error}");
    let limit = crate::cli::limits::recognise(&error, 0).unwrap();
    assert_eq!(
        limit.retry_after,
        Some(std::time::Duration::from_secs(2 * 3600))
    );
}

#[test]
fn a_tool_end_without_its_start_is_still_counted() {
    let line = r#"{"type":"tool_execution_end","toolCallId":"x","toolName":"mcp__tether__plan_status","isError":false}"#;
    let (seen, events, _) = feed(line, 4096);
    assert_eq!(seen.tool_calls, 1);
    assert_eq!(
        events,
        vec![AgentEvent::ToolCall {
            tool: "plan_status".into(),
            summary: "plan_status".into(),
            is_error: false
        }]
    );
    assert_eq!(seen.last, None);
}

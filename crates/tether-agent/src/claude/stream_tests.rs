use super::*;
use crate::cli::summary::SUMMARY_CHARS;
use crate::cli::test_support::{Events, feed as feed_to};

const SAMPLE: &str = r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"tether","status":"connected"}]}
{"type":"assistant","message":{"content":[{"type":"text","text":"I need a decision."}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t1","name":"mcp__tether__ask_human","input":{"question":"LRU or LFU?"}}]}}
{"type":"tool_progress","tool_name":"mcp__tether__ask_human","elapsed_time_seconds":30}
{"type":"user","message":{"content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"LRU"}]}]}}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Bash","input":{"command":"cargo   test"}}]}}
{"type":"user","message":{"content":[{"tool_use_id":"t2","type":"tool_result","is_error":true,"content":"denied"}]}}
{"type":"result","subtype":"success","is_error":false,"result":"Done. DONE","total_cost_usd":0.0125,"usage":{"input_tokens":20,"output_tokens":10}}"#;

fn feed(text: &str, chunk: usize) -> (Seen, Vec<AgentEvent>, Vec<u8>, bool) {
    let events = Events::default();
    let stop = CancellationToken::new();
    let (parser, raw) = feed_to(text, chunk, StreamParser::new(&events, stop.clone()));
    let seen = parser.seen;
    (seen, events.taken(), raw, stop.is_cancelled())
}

#[test]
fn a_stream_becomes_tool_calls_and_a_final_message_whatever_the_chunks() {
    for chunk in [1, 7, 4096] {
        let (seen, events, raw, stopped) = feed(SAMPLE, chunk);
        assert_eq!(raw, SAMPLE.as_bytes(), "the transcript is the raw stream");
        assert!(!stopped);
        assert_eq!(seen.mcp_status.as_deref(), Some("connected"));
        assert_eq!(seen.tool_calls, 2);
        let finish = seen.finish.unwrap();
        assert_eq!(finish.message, "Done. DONE");
        assert!(!finish.is_error);
        assert_eq!((finish.input_tokens, finish.output_tokens), (20, 10));
        assert_eq!(finish.cost_usd, Some(0.0125));
        assert_eq!(
            events,
            vec![
                AgentEvent::ToolCall {
                    tool: "ask_human".into(),
                    summary: "ask_human LRU or LFU?".into(),
                    is_error: false
                },
                AgentEvent::ToolCall {
                    tool: "Bash".into(),
                    summary: "Bash cargo test".into(),
                    is_error: true
                },
            ]
        );
    }
}

#[test]
fn an_mcp_server_that_did_not_connect_stops_the_turn() {
    let failed = r#"{"type":"system","subtype":"init","mcp_servers":[{"name":"tether","status":"failed"}]}
"#;
    let (seen, _, _, stopped) = feed(failed, 4096);
    assert!(stopped);
    assert_eq!(seen.mcp_status.as_deref(), Some("failed"));
    let missing = r#"{"type":"system","subtype":"init","mcp_servers":[]}"#;
    let (seen, _, _, stopped) = feed(missing, 4096);
    assert!(stopped);
    assert_eq!(seen.mcp_status.as_deref(), Some("missing"));
}

#[test]
fn long_arguments_are_cut_to_one_line() {
    let long = "x".repeat(200);
    let s = summary("Write", &serde_json::json!({"file_path": long}));
    assert_eq!(s.chars().count(), "Write ".len() + SUMMARY_CHARS + 1);
    assert!(s.ends_with('…'));
    assert_eq!(summary("TodoWrite", &serde_json::json!({})), "TodoWrite");
}

#[test]
fn a_result_splits_its_input_into_fresh_cache_reads_and_cache_writes() {
    let line = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","total_cost_usd":0.02,"usage":{"input_tokens":6,"cache_creation_input_tokens":2400,"cache_read_input_tokens":18000,"output_tokens":300}}"#;
    let finish = feed(&format!("{line}\n"), 64).0.finish.unwrap();
    assert_eq!(
        (
            finish.input_tokens,
            finish.cached_input_tokens,
            finish.cache_write_input_tokens,
            finish.output_tokens
        ),
        (20_406, 18_000, 2400, 300)
    );
}

#[test]
fn a_result_without_a_cost_has_none() {
    let line = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok"}"#;
    let (seen, ..) = feed(&format!("{line}\n"), 64);
    assert_eq!(seen.finish.map(|f| f.cost_usd), Some(None));
}

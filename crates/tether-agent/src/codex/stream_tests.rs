use super::*;

/// A turn as `codex exec --json` printed it: a harmless error item, a question over MCP answered
/// by a human, a command that failed, a file change, the final message and the usage.
const SAMPLE: &str = r#"{"type":"thread.started","thread_id":"01a203cc-a909-72e2-9b75-8faa2861b0f3"}
{"type":"item.completed","item":{"id":"item_0","type":"error","message":"Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues."}}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"I need a decision."}}
{"type":"item.started","item":{"id":"item_2","type":"mcp_tool_call","server":"tether","tool":"ask_human","arguments":{"question":"Which cache policy should the loader use, LRU or LFU?","context":"loader.rs:10, both are viable","confidence":20},"result":null,"error":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"mcp_tool_call","server":"tether","tool":"ask_human","arguments":{"question":"Which cache policy should the loader use, LRU or LFU?","context":"loader.rs:10, both are viable","confidence":20},"result":{"content":[{"type":"text","text":"Human replied: Use the LRU cache\n\nthread_id: q-zwvwj9\nresponder: cli (via cli)"}],"structured_content":null},"error":null,"status":"completed"}}
{"type":"item.started","item":{"id":"item_3","type":"command_execution","command":"/bin/bash -lc 'cargo   test'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_3","type":"command_execution","command":"/bin/bash -lc 'cargo   test'","aggregated_output":"error: could not compile\n","exit_code":101,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_4","type":"file_change","changes":[{"path":"/ws/src/loader.rs","kind":"update"},{"path":"/ws/src/lru.rs","kind":"add"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_5","type":"mcp_tool_call","server":"tether","tool":"complete_goal","arguments":{"id":"cache"},"result":null,"error":{"message":"tool call failed"},"status":"failed"}}
{"type":"item.completed","item":{"id":"item_6","type":"agent_message","text":"Using LRU. <promise>DONE</promise>"}}
{"type":"turn.completed","usage":{"input_tokens":20,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":10,"reasoning_output_tokens":0}}"#;

crate::cli::test_support::feed_fn!(StreamParser::new);

#[test]
fn a_stream_becomes_tool_calls_usage_and_the_last_message_whatever_the_chunks() {
    let (seen, events, raw) = feed(SAMPLE, 4096);
    assert_eq!(raw, SAMPLE.as_bytes(), "the transcript is the raw stream");
    insta::assert_json_snapshot!(events);
    assert_eq!(
        seen,
        Seen {
            final_message: "Using LRU. <promise>DONE</promise>".into(),
            completed: true,
            failure: None,
            tool_calls: 4,
            input_tokens: 20,
            cached_input_tokens: 0,
            output_tokens: 10,
        }
    );
    for chunk in [1, 7] {
        let (again, again_events, _) = feed(SAMPLE, chunk);
        assert_eq!(
            (again, again_events),
            (feed(SAMPLE, 4096).0, events.clone())
        );
    }
}

#[test]
fn a_command_is_shown_without_codexs_shell_wrapper() {
    assert_eq!(unwrap_shell("/bin/bash -lc 'cargo test'"), "cargo test");
    assert_eq!(unwrap_shell("bash -lc \"echo 'hi'\""), "echo 'hi'");
    assert_eq!(unwrap_shell("/usr/bin/zsh -c ls"), "ls");
    assert_eq!(unwrap_shell("cargo test"), "cargo test");
    assert_eq!(unwrap_shell("mybash -lc x"), "mybash -lc x");
}

#[test]
fn a_failed_turn_says_why() {
    let failed = r#"{"type":"turn.started"}
{"type":"error","message":"stream error: exceeded retry limit, last status: 429 Too Many Requests"}
{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}
"#;
    let (seen, events, _) = feed(failed, 4096);
    assert!(events.is_empty());
    assert!(!seen.completed);
    assert_eq!(
        seen.failure.as_deref(),
        Some("exceeded retry limit, last status: 429 Too Many Requests")
    );
}

#[test]
fn another_servers_tool_keeps_its_server_in_the_name() {
    let line = r#"{"type":"item.completed","item":{"type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"pattern":"lru"},"result":{"content":[]},"error":null,"status":"completed"}}"#;
    let (_, events, _) = feed(line, 4096);
    assert_eq!(
        events,
        [AgentEvent::ToolCall {
            tool: "docs.search".into(),
            summary: "docs.search lru".into(),
            is_error: false,
        }]
    );
}

fn watch(stderr: &str) -> (Option<String>, bool) {
    let stop = CancellationToken::new();
    let mut log = Vec::new();
    let failed = {
        let mut watch = StderrWatch::new(Box::new(&mut log), stop.clone());
        for part in stderr.as_bytes().chunks(5) {
            watch.write_all(part).unwrap();
        }
        watch.flush().unwrap();
        watch.mcp_failed
    };
    assert_eq!(log, stderr.as_bytes(), "stderr is kept as it came");
    (failed, stop.is_cancelled())
}

#[test]
fn tethers_mcp_server_not_starting_stops_the_turn() {
    let stderr = "Reading additional input from stdin...\n\u{1b}[2m2026-11-22T10:00:00Z\u{1b}[0m \
                  \u{1b}[33m WARN\u{1b}[0m codex_mcp::rmcp_client: MCP server startup failed \
                  server_name=\"tether\" error=connection closed\n";
    let (line, stopped) = watch(stderr);
    assert!(stopped);
    assert_eq!(
        line.as_deref(),
        Some("MCP server startup failed server_name=\"tether\" error=connection closed")
    );
}

#[test]
fn another_servers_failure_or_plain_stderr_does_not_stop_the_turn() {
    let stderr = "Reading additional input from stdin...\n\
                  WARN codex_mcp::rmcp_client: MCP server startup failed server_name=\"docs\"\n";
    assert_eq!(watch(stderr), (None, false));
}

use agent_client_protocol::v1::schema::RequestPermissionRequest;

use super::{ChoiceKind, ask_of};

fn request(json: serde_json::Value) -> RequestPermissionRequest {
    serde_json::from_value(json).unwrap()
}

#[test]
fn a_claude_shell_call_reads_its_command_and_options() {
    let ask = ask_of(&request(serde_json::json!({
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "git push origin main", "kind": "execute",
                      "rawInput": {"command": "git push origin main", "description": "push"}},
        "options": [
            {"optionId": "allow_always", "name": "Always Allow", "kind": "allow_always"},
            {"optionId": "allow", "name": "Allow", "kind": "allow_once"},
            {"optionId": "reject", "name": "Reject", "kind": "reject_once"}
        ]
    })));
    assert_eq!(ask.command.as_deref(), Some("git push origin main"));
    assert_eq!(ask.kind, "execute");
    assert_eq!(ask.option(ChoiceKind::RejectOnce).unwrap().id, "reject");
    assert_eq!(ask.describe(), "run `git push origin main`");
}

#[test]
fn a_codex_argv_gives_its_script() {
    let ask = ask_of(&request(serde_json::json!({
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "/bin/bash -lc 'rm -rf build'", "kind": "execute",
                      "rawInput": {"command": ["/bin/bash", "-lc", "rm -rf build"], "cwd": "/w"}},
        "options": [
            {"optionId": "approved", "name": "Yes, proceed", "kind": "allow_once"},
            {"optionId": "abort", "name": "No, and tell Codex what to do differently", "kind": "reject_once"}
        ]
    })));
    assert_eq!(ask.command.as_deref(), Some("rm -rf build"));
}

#[test]
fn an_edit_names_its_files() {
    let ask = ask_of(&request(serde_json::json!({
        "sessionId": "s1",
        "toolCall": {"toolCallId": "t1", "title": "Write /etc/passwd", "kind": "edit",
                      "locations": [{"path": "/etc/passwd"}],
                      "rawInput": {"file_path": "/etc/shadow", "content": "x"}},
        "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]
    })));
    assert_eq!(ask.command, None);
    assert_eq!(
        ask.paths,
        [
            std::path::PathBuf::from("/etc/passwd"),
            "/etc/shadow".into()
        ]
    );
    assert!(!ask.only_reads());
}

#[test]
fn only_tethers_own_tools_named_exactly_are_tethers() {
    let ask = |title: &str, kind: &str, raw: serde_json::Value| {
        ask_of(&request(serde_json::json!({
            "sessionId": "s1",
            "toolCall": {"toolCallId": "t1", "title": title, "kind": kind, "rawInput": raw},
            "options": [{"optionId": "a", "name": "Allow", "kind": "allow_once"}]
        })))
        .tether_tool
    };
    assert!(ask(
        "mcp__tether__complete_goal",
        "other",
        serde_json::json!({})
    ));
    assert!(ask(
        "Approve MCP tool call",
        "other",
        serde_json::json!({"server_name": "tether", "tool_name": "ask_human"})
    ));
    assert!(!ask("mcp__tether__rm_rf", "other", serde_json::json!({})));
    assert!(!ask(
        "mcp__tether__ask_human && git push",
        "execute",
        serde_json::json!({})
    ));
    assert!(!ask(
        "mcp__other__ask_human",
        "other",
        serde_json::json!({})
    ));
    assert!(!ask(
        "Approve MCP tool call",
        "other",
        serde_json::json!({"server_name": "evil", "tool_name": "ask_human"})
    ));
}

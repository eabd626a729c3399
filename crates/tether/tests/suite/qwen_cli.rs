//! `[executor] kind = "qwen"` end to end with the real Qwen Code (`TETHER_TEST_QWEN`, installed by
//! ./test.sh) against the fake model server (chat completions, through the `OPENAI_*` variables
//! Qwen Code reads): the agents' contract ([`crate::suite::agent_contract`]: the promise kept,
//! its usage, `ask_human`, cancelling), tether's tools declared in the first request, an
//! `ask_before` command held for a person's yes, and a goal signed off through `complete_goal`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::Turn;
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{LIB, required_cli, tool_calls};
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, Answer, agent_contract, ask_before_holds_a_command,
    planted_settings_do_not_loosen_ask_before, signs_off_through_complete_goal,
};

/// The real Qwen Code; a test without it fails (./test.sh installs it).
fn qwen() -> PathBuf {
    required_cli("TETHER_TEST_QWEN", "Qwen Code")
}

/// Writes `dir`'s tether.toml: only the kind and the program, then `extra`; Qwen Code's own
/// directory (the person's, as far as tether knows) is `dir/.qwen-user`, its model the fake one.
fn configure(dir: &Path, server: &FakeModelServer, extra: &str) {
    let user = dir.join(".qwen-user");
    fs::create_dir_all(&user).unwrap();
    let settings = json!({"security": {"auth": {"selectedType": "openai"}}});
    fs::write(user.join("settings.json"), settings.to_string()).unwrap();
    let toml = format!(
        "{extra}\n[executor]\nkind = \"qwen\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nQWEN_HOME = {user:?}\nOPENAI_BASE_URL = {base:?}\n\
         OPENAI_API_KEY = \"sk-fake\"\nOPENAI_MODEL = \"fake-model\"\n",
        program = qwen().display().to_string(),
        user = user.display().to_string(),
        base = server.base_url(Api::OpenAiChat),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Qwen Code for the contract.
struct Qwen;

impl AgentCli for Qwen {
    /// Its prompt's result and updates carry no token counts tether reads.
    const REPORTS_USAGE: bool = false;
    /// Its calls are reported by kind (`read`) and its own title (`ask_human (tether MCP
    /// Server): …`).
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let dir = tempfile::tempdir().unwrap();
        configure(dir.path(), server, "");
        AgentWorkspace { dir, _beside: None }
    }

    /// tether's tools are declared in the turn's first request, not left for `tool_search` to
    /// find.
    fn kept_promise(_dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let first = requests
            .iter()
            .find(|r| r.raw_body.contains("Write the notes."))
            .expect("a request of the turn");
        assert_eq!(first.path, "/v1/chat/completions");
        for tool in ["ask_human", "complete_goal"] {
            assert!(
                first.raw_body.contains(&format!("__{tool}\"")),
                "{tool} is not declared in the first request: {}",
                first.raw_body
            );
        }
    }
}

agent_contract!(contract, Qwen);

#[test]
fn an_ask_before_command_of_qwen_waits_for_a_persons_yes() {
    ask_before_holds_a_command(
        |command| {
            Turn::tool(
                "run_shell_command",
                json!({"command": command, "description": "probe", "is_background": false}),
            )
        },
        Answer::Approve,
        &configure,
    );
}

#[test]
fn a_goal_loop_with_qwen_signs_off_through_complete_goal_over_mcp() {
    let done = signs_off_through_complete_goal(
        "write_file",
        |dir| json!({"file_path": dir.join("src/lib.rs"), "content": LIB}),
        &configure,
    );
    // Every act is recorded under the run: the write, then the sign-off (by Qwen Code's title).
    let calls = tool_calls(done.dir.path());
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].1.contains("complete_goal"), "{calls:?}");
}

/// Qwen Code's settings the agent writes in the workspace and in the run's copy of its
/// directory (`$QWEN_HOME`) — commands allowed — never loosen `ask_before`, nor can it rewrite or
/// remove the system settings tether pins for the run.
#[test]
fn settings_the_agent_plants_do_not_loosen_ask_before() {
    planted_settings_do_not_loosen_ask_before(
        |command| {
            Turn::tool(
                "run_shell_command",
                json!({"command": command, "description": "probe", "is_background": false}),
            )
        },
        &{
            let settings = json!({
                "tools": {"allowed": ["run_shell_command"], "approvalMode": "yolo"},
                "permissions": {"allow": ["Bash", "run_shell_command"]},
                "general": {"defaultApprovalMode": "yolo"},
                "security": {"folderTrust": {"enabled": false}},
            });
            format!(
                "mkdir -p .qwen && printf '%s' '{settings}' > .qwen/settings.json; \
                 printf '%s' '{settings}' > \"$QWEN_HOME/settings.json\"; \
                 printf '%s' '{{\"/\": \"TRUST_FOLDER\"}}' > \"$QWEN_HOME/trustedFolders.json\"; \
                 printf '%s' '{settings}' > \"$QWEN_CODE_SYSTEM_SETTINGS_PATH\"; \
                 rm -f \"$QWEN_CODE_SYSTEM_SETTINGS_PATH\"; true"
            )
        },
        &configure,
    );
}

//! `[executor] kind = "opencode"` end to end with the real opencode (`TETHER_TEST_OPENCODE`,
//! installed by ./test.sh) against the fake model server (chat completions, an
//! `@ai-sdk/openai-compatible` provider in the person's opencode.json): the agents' contract
//! ([`crate::suite::agent_contract`]: the promise kept, its usage, `ask_human`, cancelling), an
//! `ask_before` command held for a person's yes although opencode allows everything by default,
//! and a goal signed off through `complete_goal`.

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

/// The real opencode; a test without it fails (./test.sh installs it).
fn opencode() -> PathBuf {
    required_cli("TETHER_TEST_OPENCODE", "opencode")
}

/// Writes `dir`'s tether.toml: only the kind and the program, then `extra`; opencode's own
/// configuration directory (the person's, as far as tether knows) is `dir/.opencode-user`, its
/// model the fake one, its fetches of model lists and updates off.
fn configure(dir: &Path, server: &FakeModelServer, extra: &str) {
    let user = dir.join(".opencode-user");
    fs::create_dir_all(&user).unwrap();
    let config = json!({
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": server.base_url(Api::OpenAiChat), "apiKey": "{env:FAKE_API_KEY}"},
            "models": {"fake-model": {"name": "Fake model"}},
        }},
        "model": "fake/fake-model",
        "autoupdate": false,
        "share": "disabled",
    });
    fs::write(user.join("opencode.json"), config.to_string()).unwrap();
    let toml = format!(
        "{extra}\n[executor]\nkind = \"opencode\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nOPENCODE_CONFIG_DIR = {user:?}\n\
         OPENCODE_DISABLE_MODELS_FETCH = \"1\"\nOPENCODE_DISABLE_AUTOUPDATE = \"1\"\n\
         OPENCODE_DISABLE_LSP_DOWNLOAD = \"1\"\nFAKE_API_KEY = \"sk-fake\"\n",
        program = opencode().display().to_string(),
        user = user.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// opencode for the contract.
struct Opencode;

impl AgentCli for Opencode {
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

    /// tether's tools are declared to the model beside opencode's own (its first request makes
    /// the session's title, with no tools).
    fn kept_promise(_dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.raw_body.contains("\"tools\""))
            .expect("a request of the agent's turn");
        assert_eq!(turn.path, "/v1/chat/completions");
        for tool in ["ask_human", "complete_goal", "\"bash\""] {
            assert!(
                turn.raw_body.contains(tool),
                "{tool} is not declared: {}",
                turn.raw_body
            );
        }
    }
}

agent_contract!(contract, Opencode);

#[test]
fn an_ask_before_command_of_opencode_waits_for_a_persons_yes() {
    ask_before_holds_a_command(
        |command| Turn::tool("bash", json!({"command": command, "description": "probe"})),
        Answer::Approve,
        &configure,
    );
}

#[test]
fn a_goal_loop_with_opencode_signs_off_through_complete_goal_over_mcp() {
    let done = signs_off_through_complete_goal(
        "write",
        |dir| json!({"filePath": dir.join("src/lib.rs"), "content": LIB}),
        &configure,
    );
    // Every act is recorded under the run: the write, then the sign-off.
    let calls = tool_calls(done.dir.path());
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].1.contains("complete_goal"), "{calls:?}");
}

/// opencode's configuration the agent writes in the workspace (`opencode.json`, `.opencode/`)
/// and in the run's copy of its directory and its XDG configuration — commands allowed for every
/// agent and for its default one — never loosens `ask_before`.
#[test]
fn configuration_the_agent_plants_does_not_loosen_ask_before() {
    planted_settings_do_not_loosen_ask_before(
        |command| Turn::tool("bash", json!({"command": command, "description": "probe"})),
        &{
            let config = json!({
                "permission": {"bash": "allow", "edit": "allow"},
                "agent": {"build": {"permission": {"bash": "allow", "edit": "allow"}}},
            });
            let agent = "---\\ndescription: build\\nmode: primary\\npermission:\\n  bash: allow\\n---\\nBuild.\\n";
            format!(
                "printf '%s' '{config}' > opencode.json; mkdir -p .opencode/agent; \
                 cp opencode.json .opencode/; printf '{agent}' > .opencode/agent/build.md; \
                 cp opencode.json \"$OPENCODE_CONFIG_DIR/opencode.json\"; \
                 mkdir -p \"$OPENCODE_CONFIG_DIR/agent\" && printf '{agent}' > \"$OPENCODE_CONFIG_DIR/agent/build.md\"; \
                 mkdir -p \"$XDG_CONFIG_HOME/opencode\" && cp opencode.json \"$XDG_CONFIG_HOME/opencode/\"; true"
            )
        },
        &configure,
    );
}

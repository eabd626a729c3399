//! `[executor] kind = "copilot"` end to end with the real Copilot CLI (its path in
//! `TETHER_TEST_COPILOT`, installed by ./test.sh) on its own provider, the fake model server's
//! chat completions (`COPILOT_PROVIDER_BASE_URL`, offline: no GitHub at all): with
//! only its kind and program in tether.toml, the agents' contract
//! ([`crate::suite::agent_contract`]: a Ralph loop keeps its promise and reports its usage,
//! `ask_human` answered, cancelling leaves no process behind), a goal whose new file Copilot CLI
//! writes itself signs off through `complete_goal`, and an `ask_before` command waits for
//! `tether answer`; tether's server reached it through its command line, with the run's id.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::Turn;
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{LIB, required_cli};
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, Answer, agent_contract, ask_before_holds_a_command,
    planted_settings_do_not_loosen_ask_before, signs_off_through_complete_goal,
};

/// The real Copilot CLI; a test without it fails (./test.sh installs it).
fn copilot() -> PathBuf {
    required_cli("TETHER_TEST_COPILOT", "Copilot CLI")
}

/// A workspace whose tether.toml runs Copilot CLI on `server` (`extra` first), and Copilot CLI's
/// home (the person's, as far as tether knows: its settings choose the API key) beside it.
fn workspace(server: &FakeModelServer, extra: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    configure(dir.path(), home.path(), server, extra);
    (dir, home)
}

fn configure(dir: &Path, home: &Path, server: &FakeModelServer, extra: &str) {
    let toml = format!(
        "{extra}\n[executor]\nkind = \"copilot\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nCOPILOT_PROVIDER_BASE_URL = {base:?}\nCOPILOT_PROVIDER_API_KEY = \"sk-fake\"\n\
         COPILOT_MODEL = \"gpt-4.1\"\nCOPILOT_OFFLINE = \"true\"\nCOPILOT_HOME = {home:?}\n",
        program = copilot().display().to_string(),
        base = server.base_url(Api::OpenAiChat),
        home = home.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Copilot CLI for the contract.
struct Copilot;

impl AgentCli for Copilot {
    /// Its calls are reported by its own titles.
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let (dir, home) = workspace(server, "");
        AgentWorkspace {
            dir,
            _beside: Some(home),
        }
    }

    /// The model was asked over chat completions with tether's tools declared.
    fn kept_promise(_dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.raw_body.contains("Write the notes."))
            .unwrap();
        assert!(turn.path == "/v1/chat/completions", "{}", turn.path);
        for tool in ["ask_human", "complete_goal"] {
            assert!(
                turn.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
    }
}

agent_contract!(contract, Copilot);

#[test]
fn a_goal_copilot_writes_a_new_file_for_signs_off_through_complete_goal() {
    let home = tempfile::tempdir().unwrap();
    signs_off_through_complete_goal(
        "create",
        |dir| json!({"path": dir.join("src/lib.rs"), "file_text": LIB}),
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

#[test]
fn an_ask_before_command_of_copilot_waits_and_a_reject_reaches_the_model() {
    // Copilot CLI ends its turn on a refusal: the next iteration's prompt carries tether's
    // note of it.
    let home = tempfile::tempdir().unwrap();
    ask_before_holds_a_command(
        |command| Turn::tool("bash", json!({"command": command, "description": "probe"})),
        Answer::Reject,
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

/// Copilot CLI's settings the agent writes in the workspace (`.github/copilot/`) and in the run's
/// copy of its directory (`$COPILOT_HOME`) — every tool allowed — never loosen `ask_before`.
#[test]
fn settings_the_agent_plants_do_not_loosen_ask_before() {
    let home = tempfile::tempdir().unwrap();
    planted_settings_do_not_loosen_ask_before(
        |command| Turn::tool("bash", json!({"command": command, "description": "probe"})),
        &{
            let settings = json!({
                "allowAllMode": "on",
                "allow_all": true,
                "permissions": {"allow": ["shell"], "allowAll": true},
            });
            format!(
                "mkdir -p .github/copilot && printf '%s' '{settings}' > .github/copilot/settings.json; \
                 cp .github/copilot/settings.json .github/copilot/settings.local.json; \
                 for f in config.json settings.json; do printf '%s' '{settings}' > \"$COPILOT_HOME/$f\"; done; true"
            )
        },
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

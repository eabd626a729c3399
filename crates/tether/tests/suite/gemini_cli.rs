//! `[executor] kind = "gemini"` end to end with the real Gemini CLI (its path in
//! `TETHER_TEST_GEMINI`, installed by ./test.sh) against the fake model server's Gemini API: with
//! only its kind and program in tether.toml, the agents' contract
//! ([`crate::suite::agent_contract`]: a Ralph loop keeps its promise and reports its usage,
//! `ask_human` answered, cancelling leaves no process behind), a goal whose new file Gemini CLI
//! writes itself signs off through `complete_goal`, and an `ask_before` command waits for
//! `tether answer`.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_model::scripted::Turn;
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{LIB, required_cli};
use crate::suite::agent_contract::{
    AgentCli, AgentWorkspace, Answer, agent_contract, ask_before_holds_a_command,
    planted_settings_do_not_loosen_ask_before, signs_off_through_complete_goal,
};

/// The real Gemini CLI; a test without it fails (./test.sh installs it).
fn gemini() -> PathBuf {
    required_cli("TETHER_TEST_GEMINI", "Gemini CLI")
}

/// A workspace whose tether.toml runs Gemini CLI on `server` (`extra` first), and Gemini CLI's
/// home (the person's, as far as tether knows: its settings choose the API key) beside it.
fn workspace(server: &FakeModelServer, extra: &str) -> (tempfile::TempDir, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    configure(dir.path(), home.path(), server, extra);
    (dir, home)
}

fn configure(dir: &Path, home: &Path, server: &FakeModelServer, extra: &str) {
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
        "privacy": {"usageStatisticsEnabled": false},
        "telemetry": {"enabled": false},
        "model": {"name": "gemini-2.5-flash"},
    });
    fs::create_dir_all(home.join(".gemini")).unwrap();
    fs::write(home.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let toml = format!(
        "{extra}\n[executor]\nkind = \"gemini\"\nprogram = {program:?}\nturn_timeout_secs = 600\n\
         [executor.env]\nGOOGLE_GEMINI_BASE_URL = {base:?}\nGEMINI_API_KEY = \"g-fake\"\n\
         GEMINI_CLI_HOME = {home:?}\n",
        program = gemini().display().to_string(),
        base = server.gemini_base_url(),
        home = home.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// Gemini CLI for the contract.
struct Gemini;

impl AgentCli for Gemini {
    /// Its calls are reported by its own titles.
    const NAMES_TOOL_CALLS: bool = false;

    fn workspace(server: &FakeModelServer) -> AgentWorkspace {
        let (dir, home) = workspace(server, "");
        AgentWorkspace {
            dir,
            _beside: Some(home),
        }
    }

    /// The model was asked over Gemini's streamed API with tether's tools declared.
    fn kept_promise(_dir: &Path, server: &FakeModelServer) {
        let requests = server.requests();
        let turn = requests
            .iter()
            .find(|r| r.raw_body.contains("Write the notes."))
            .unwrap();
        assert!(
            turn.path.ends_with(":streamGenerateContent"),
            "{}",
            turn.path
        );
        for tool in ["ask_human", "complete_goal"] {
            assert!(
                turn.raw_body.contains(tool),
                "{tool} missing from the request"
            );
        }
    }
}

agent_contract!(contract, Gemini);

#[test]
fn a_goal_gemini_writes_a_new_file_for_signs_off_through_complete_goal() {
    // Its write_file reads the target first: a new file must not stop it (no fs/* offered).
    let home = tempfile::tempdir().unwrap();
    signs_off_through_complete_goal(
        "write_file",
        |_| json!({"file_path": "src/lib.rs", "content": LIB}),
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

#[test]
fn an_ask_before_command_of_gemini_waits_and_a_reject_reaches_the_model() {
    let home = tempfile::tempdir().unwrap();
    ask_before_holds_a_command(
        |command| Turn::tool("run_shell_command", json!({"command": command})),
        Answer::Reject,
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

/// Gemini CLI's settings the agent writes in the workspace (`.gemini/`) and in the run's copy of
/// its directory — commands allowed — never loosen `ask_before`.
#[test]
fn settings_the_agent_plants_do_not_loosen_ask_before() {
    let home = tempfile::tempdir().unwrap();
    planted_settings_do_not_loosen_ask_before(
        |command| Turn::tool("run_shell_command", json!({"command": command})),
        &{
            let settings = json!({
                "tools": {"allowed": ["run_shell_command"], "autoAccept": true},
                "general": {"defaultApprovalMode": "yolo"},
                "security": {"folderTrust": {"enabled": false}},
            });
            format!(
                "mkdir -p .gemini && printf '%s' '{settings}' > .gemini/settings.json; \
                 printf '%s' '{settings}' > \"$GEMINI_CLI_HOME/.gemini/settings.json\"; true"
            )
        },
        &|dir, server, extra| configure(dir, home.path(), server, extra),
    );
}

//! An agent CLI whose provider reads its key from a variable of its own (Codex's `env_key =
//! "OPENROUTER_API_KEY"`, not `OPENAI_*`) gets exactly that variable through the sandbox's
//! allow-list, and no other secret of tether's environment: the real Codex CLI
//! (`TETHER_TEST_CODEX`) and Codex's ACP adapter (`TETHER_TEST_CODEX_ACP`), installed by
//! ./test.sh, and pi (`TETHER_TEST_PI`) with `"apiKey": "$ROUTER_KEY"` in its models.json,
//! against the fake model server playing the provider, which refuses any other key.

use std::fs;
use std::path::Path;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{diagnose, required_cli, status};
use crate::common::{cmd, model_table, runtime};

/// The provider's key, in tether's environment only.
const ROUTER_KEY: &str = "sk-or-agent-key-5150";
/// A secret of tether's environment nothing names for the agent.
const UNRELATED: &str = "unrelated-secret-8086";
/// tether's own judge key.
const JUDGE_KEY: &str = "sk-judge-own-key-2718";

/// A runtime, the fake provider playing `script` and accepting only [`ROUTER_KEY`], and a
/// judge's server.
fn servers(script: Script) -> (tokio::runtime::Runtime, FakeModelServer, FakeModelServer) {
    let rt = runtime();
    let provider = rt
        .block_on(
            FakeModelServer::builder(script)
                .require_key(ROUTER_KEY)
                .start(),
        )
        .unwrap();
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns([])))
        .unwrap();
    (rt, provider, judge)
}

/// Codex's config.toml: the fake server as provider `router`, its key in `env_key`, and Codex's
/// shell given Codex's whole environment (by default it drops `*KEY*` variables), so what the
/// agent's commands see is what Codex got.
fn codex_home(server: &FakeModelServer, env_key: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let config = format!(
        "model = \"fake-model\"\nmodel_provider = \"router\"\n\
         check_for_update_on_startup = false\n\
         [shell_environment_policy]\ninherit = \"all\"\nignore_default_excludes = true\n\
         [model_providers.router]\nname = \"Router\"\nbase_url = {base:?}\n\
         env_key = {env_key:?}\nwire_api = \"responses\"\n\
         request_max_retries = 0\nstream_max_retries = 0\n",
        base = server.base_url(Api::OpenAiResponses),
    );
    fs::write(home.path().join("config.toml"), config).unwrap();
    home
}

/// tether.toml: `executor` (its kind, program and args), Codex's home, and a judge whose key is
/// tether's own.
fn tether_toml(dir: &Path, executor: &str, home: &Path, judge: &FakeModelServer) {
    let toml = format!(
        "{judge}api_key_env = \"AGENT_KEYS_JUDGE_KEY\"\n\
         [executor]\n{executor}\nturn_timeout_secs = 600\n\
         [executor.env]\nCODEX_HOME = {home:?}\nHOME = {home:?}\n",
        judge = model_table("judge", Api::OpenAiChat, judge, "judge-model"),
        home = home.display().to_string(),
    );
    fs::write(dir.join("tether.toml"), toml).unwrap();
}

/// `tether ralph` to its end with the provider's key, an unrelated secret and the judge's key
/// in tether's environment.
fn ralph_with_secrets(dir: &Path) -> std::process::Output {
    cmd(
        dir,
        &[
            "ralph",
            "Record the environment.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "2",
        ],
    )
    .env("OPENROUTER_API_KEY", ROUTER_KEY)
    .env("ROUTER_KEY", ROUTER_KEY)
    .env("UNRELATED_SECRET", UNRELATED)
    .env("AGENT_KEYS_JUDGE_KEY", JUDGE_KEY)
    .output()
    .unwrap()
}

#[test]
fn codex_gets_the_variable_its_provider_names_and_no_other_secret() {
    let (_rt, server, judge) = servers(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("exec_command", json!({"cmd": "env > seen-env.txt"})),
            Some(_) => Turn::text("Recorded. <promise>DONE</promise>"),
        }
    }));
    let dir = tempfile::tempdir().unwrap();
    let home = codex_home(&server, "OPENROUTER_API_KEY");
    let codex = required_cli("TETHER_TEST_CODEX", "the Codex CLI");
    let executor = format!(
        "kind = \"codex\"\nprogram = {:?}",
        codex.display().to_string()
    );
    tether_toml(dir.path(), &executor, home.path(), &judge);
    let out = ralph_with_secrets(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert_eq!(status(dir.path())["status"], "completed");
    let seen = fs::read_to_string(dir.path().join("seen-env.txt")).unwrap();
    assert!(
        seen.contains(&format!("OPENROUTER_API_KEY={ROUTER_KEY}")),
        "the provider's key reached Codex:\n{seen}"
    );
    for secret in [UNRELATED, JUDGE_KEY] {
        assert!(
            !seen.contains(secret),
            "{secret} reached the agent:\n{seen}"
        );
    }
    assert!(
        !seen.contains("ROUTER_KEY="),
        "only the variable the configuration names:\n{seen}"
    );
}

#[test]
fn codexs_acp_adapter_gets_the_variable_an_override_names() {
    let (_rt, server, judge) = servers(Script::from_fn(|_req: &Request| {
        Turn::text("All written. <promise>DONE</promise>")
    }));
    let dir = tempfile::tempdir().unwrap();
    // config.toml names a variable tether does not have; the override names the one it has.
    let home = codex_home(&server, "NOT_SET_ANYWHERE");
    let adapter = required_cli("TETHER_TEST_CODEX_ACP", "Codex's ACP adapter");
    let executor = format!(
        "kind = \"acp\"\nprogram = {:?}\nargs = [\"-c\", \"model_providers.router.env_key=ROUTER_KEY\"]",
        adapter.display().to_string()
    );
    tether_toml(dir.path(), &executor, home.path(), &judge);
    let out = ralph_with_secrets(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    assert_eq!(status(dir.path())["status"], "completed");
    assert!(server.request_count() > 0);
}

#[test]
fn pi_gets_the_variable_its_models_json_names_and_no_other_secret() {
    let (_rt, server, judge) = servers(Script::from_fn(|req: &Request| {
        match req.last_tool_result() {
            None => Turn::tool("bash", json!({"command": "env > seen-env.txt"})),
            Some(_) => Turn::text("Recorded. <promise>DONE</promise>"),
        }
    }));
    let dir = tempfile::tempdir().unwrap();
    let judge_table = format!(
        "{}api_key_env = \"AGENT_KEYS_JUDGE_KEY\"\n",
        model_table("judge", Api::OpenAiChat, &judge, "judge-model")
    );
    crate::suite::pi_cli::configure(dir.path(), &server, &judge_table);
    // The provider's key comes from a variable pi's models.json names.
    let models = dir.path().join(".pi-user/models.json");
    let text = fs::read_to_string(&models).unwrap();
    fs::write(&models, text.replace("\"sk-fake\"", "\"$ROUTER_KEY\"")).unwrap();
    let out = ralph_with_secrets(dir.path());
    assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir.path(), &out));
    let seen = fs::read_to_string(dir.path().join("seen-env.txt")).unwrap();
    assert!(
        seen.contains(&format!("ROUTER_KEY={ROUTER_KEY}")),
        "the provider's key reached pi:\n{seen}"
    );
    for secret in [UNRELATED, JUDGE_KEY] {
        assert!(
            !seen.contains(secret),
            "{secret} reached the agent:\n{seen}"
        );
    }
    assert!(
        !seen.contains("OPENROUTER_API_KEY="),
        "only the variables pi's configuration names:\n{seen}"
    );
}

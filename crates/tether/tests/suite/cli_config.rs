//! An agent CLI cannot change what runs outside the sandbox: the real Claude Code, Codex and pi
//! (installed by ./test.sh) each work in a copy of their configuration directory made for the
//! run. The scripted agent has the CLI's own shell write a hook into `settings.json` (Claude
//! Code), a `notify` program into `config.toml` (Codex), an extension (pi), a command, its
//! instructions, and a file into a directory the CLI only reads — and "refresh" its login. After
//! the run the person's directory is as it was, but for the refreshed login, which flowed back.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::agents::{diagnose, ralph, start};
use crate::common::wait_output;

/// Every file under `dir` (links not followed), with its bytes.
fn files(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                todo.push(path);
            } else {
                let bytes = fs::read(&path).unwrap_or_default();
                out.insert(path.strip_prefix(dir).unwrap().to_owned(), bytes);
            }
        }
    }
    out
}

/// One CLI's attack: its person's directory, the variable naming it, the tool its shell is
/// called with, and the login file with what the run refreshes it to.
struct Attack {
    person: PathBuf,
    var: &'static str,
    tool: &'static str,
    arg: &'static str,
    login: &'static str,
    refreshed: &'static str,
}

impl Attack {
    /// The shell command the agent runs: every write it tries in the CLI's directory, then a
    /// mark in the workspace that it ran.
    fn command(&self, planted: &[&str]) -> String {
        let mut command = String::new();
        for name in planted {
            command.push_str(&format!(
                "mkdir -p \"$(dirname \"${var}/{name}\")\"; printf planted > \"${var}/{name}\"; ",
                var = self.var
            ));
        }
        command.push_str(&format!(
            "printf '%s' '{}' > \"${}/{}\"; touch ran",
            self.refreshed, self.var, self.login
        ));
        command
    }

    /// A model that runs `command` with the CLI's shell once, then keeps its promise.
    fn server(&self, command: String) -> (tokio::runtime::Runtime, FakeModelServer) {
        let (tool, arg) = (self.tool, self.arg);
        start(Script::from_fn(move |req: &Request| {
            match req.last_tool_result() {
                None => {
                    let mut args = json!({arg: command.clone()});
                    if tool == "Bash" {
                        args["description"] = json!("work");
                    }
                    Turn::tool(tool, args)
                }
                Some((_, result)) => Turn::text(format!("{result} <promise>DONE</promise>")),
            }
        }))
    }

    /// Runs the loop in `dir`, then checks the person's directory is as `before` but for the
    /// login, refreshed.
    fn check(&self, dir: &Path, before: BTreeMap<PathBuf, Vec<u8>>) {
        let out = wait_output(ralph(dir, "Work."));
        assert_eq!(out.status.code(), Some(0), "{}", diagnose(dir, &out));
        assert!(dir.join("ran").exists(), "{}", diagnose(dir, &out));
        let mut expected = before;
        expected.insert(
            PathBuf::from(self.login),
            self.refreshed.as_bytes().to_vec(),
        );
        let after = files(&self.person);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "{}",
            diagnose(dir, &out)
        );
        for (name, bytes) in &expected {
            assert_eq!(
                String::from_utf8_lossy(&after[name]),
                String::from_utf8_lossy(bytes),
                "{}",
                name.display()
            );
        }
    }
}

#[test]
fn claude_codes_settings_hooks_and_commands_stay_in_the_run_and_its_refreshed_login_flows_back() {
    let person = tempfile::tempdir().unwrap();
    let attack = Attack {
        person: person.path().to_owned(),
        var: "CLAUDE_CONFIG_DIR",
        tool: "Bash",
        arg: "command",
        login: ".credentials.json",
        refreshed: r#"{"mcpOAuth":{"srv":{"accessToken":"new"}}}"#,
    };
    let p = person.path();
    // Its shell may run unattended: the person's own setting, which the run gets a copy of.
    fs::write(
        p.join("settings.json"),
        r#"{"permissions":{"allow":["Bash"]}}"#,
    )
    .unwrap();
    fs::write(
        p.join(".credentials.json"),
        r#"{"mcpOAuth":{"srv":{"accessToken":"old"}}}"#,
    )
    .unwrap();
    fs::create_dir_all(p.join("skills/mine")).unwrap();
    fs::write(p.join("skills/mine/SKILL.md"), "a skill").unwrap();
    let command = attack.command(&[
        "settings.json",
        "CLAUDE.md",
        "commands/evil.md",
        "agents/evil.md",
        "skills/mine/SKILL.md",
        "skills/evil/SKILL.md",
        "plugins/evil/hooks.json",
    ]);
    let (_rt, server) = attack.server(command);
    let dir = tempfile::tempdir().unwrap();
    crate::suite::claude_cli::configure_at(dir.path(), &server, p, "", "");
    let before = files(p);
    attack.check(dir.path(), before);
}

#[test]
fn codexs_config_and_notify_program_stay_in_the_run_and_its_refreshed_login_flows_back() {
    let mut attack = Attack {
        person: PathBuf::new(),
        var: "CODEX_HOME",
        tool: "exec_command",
        arg: "cmd",
        login: "auth.json",
        refreshed: r#"{"OPENAI_API_KEY":"sk-new"}"#,
    };
    let command = attack.command(&[
        "config.toml",
        "AGENTS.md",
        "prompts/evil.md",
        "rules/default.rules",
    ]);
    let (_rt, server) = attack.server(command);
    // Codex's home, outside the workspace, holds the fake provider: the person's.
    let ws = crate::suite::codex_cli::Workspace::new(&server, "");
    attack.person = ws.home.path().to_owned();
    let p = ws.home.path();
    fs::write(p.join("auth.json"), r#"{"OPENAI_API_KEY":"sk-old"}"#).unwrap();
    fs::create_dir_all(p.join("prompts")).unwrap();
    fs::write(p.join("prompts/mine.md"), "a prompt").unwrap();
    let before = files(p);
    attack.check(ws.path(), before);
}

#[test]
fn pis_extensions_and_settings_stay_in_the_run_and_its_refreshed_login_flows_back() {
    let person = tempfile::tempdir().unwrap();
    let attack = Attack {
        person: person.path().to_owned(),
        var: "PI_CODING_AGENT_DIR",
        tool: "bash",
        arg: "command",
        login: "auth.json",
        refreshed: r#"{"someprovider":{"type":"api_key","key":"new"}}"#,
    };
    let p = person.path();
    fs::write(
        p.join("auth.json"),
        r#"{"someprovider":{"type":"api_key","key":"old"}}"#,
    )
    .unwrap();
    fs::create_dir_all(p.join("extensions")).unwrap();
    fs::write(p.join("extensions/mine.ts"), "export default () => {}").unwrap();
    let command = attack.command(&[
        "settings.json",
        "models.json",
        "mcp.json",
        "AGENTS.md",
        "extensions/mine.ts",
        "extensions/evil.ts",
        "skills/evil/SKILL.md",
    ]);
    let (_rt, server) = attack.server(command);
    let dir = tempfile::tempdir().unwrap();
    crate::suite::pi_cli::configure_at(dir.path(), &server, p, "");
    let before = files(p);
    attack.check(dir.path(), before);
}

//! `[executor] kind = "acp"` end to end against a scripted ACP agent (tether-testkit's
//! `acp_agent.py`, a small JSON-RPC agent written for these tests): a Ralph loop keeps its promise, tether's MCP server
//! is in every `session/new`, an `ask_before` command waits for a person's answer and a
//! "Reject" reaches the agent, a call outside the workspace is refused without asking, and the
//! protocol's bad days — a line that is not JSON, an agent that ignores `session/cancel`, an
//! agent that exits mid-turn — end cleanly with nothing left running.

use std::fs;
use std::path::Path;
use tether_testkit::wait_until;

use tether_store::Event;

use crate::common::agents::{events, tool_calls};
use crate::common::{PATIENCE, pending_question, run, spawn, text, wait_exit};

const AGENT: &str = tether_testkit::SCRIPTED_ACP_AGENT;

fn workspace(mode: &str, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.py"), AGENT).unwrap();
    fs::write(dir.path().join("acp-mode"), mode).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"acp\"\nprogram = \"python3\"\nargs = [\"-u\", \"agent.py\"]\n{extra}"
        ),
    )
    .unwrap();
    dir
}

fn read(dir: &Path, name: &str) -> String {
    fs::read_to_string(dir.join(name)).unwrap_or_default()
}

fn alive(pid: &str) -> bool {
    Path::new(&format!("/proc/{}", pid.trim())).exists()
        && !fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .unwrap_or_default()
            .contains(") Z ")
}

#[test]
fn a_ralph_loop_keeps_its_promise_with_tethers_mcp_server_in_each_session() {
    let dir = workspace("promise", "");
    let out = run(
        dir.path(),
        &[
            "ralph",
            "do it",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "3",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("promise kept in iteration 1"));
    let session: serde_json::Value = serde_json::from_str(
        read(dir.path(), "acp-sessions.jsonl")
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let cwd = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(session["cwd"], cwd.display().to_string());
    let server = &session["mcpServers"][0];
    assert_eq!(server["name"], "tether");
    let args: Vec<&str> = server["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[0], "mcp");
    assert!(args.contains(&"--run"), "{args:?}");
    assert_eq!(server["env"][0]["name"], "TETHER_RUN_ID");
    // The tool call was recorded, and the usage the agent reported (its cost from a usage
    // update with `"used": null`, as Claude's adapter sends it).
    assert_eq!(
        tool_calls(dir.path()),
        [("execute".to_owned(), "ls".to_owned())]
    );
    let usage: Vec<(u64, u64, Option<f64>)> = events(dir.path())
        .into_iter()
        .filter_map(|e| match e {
            Event::IterationUsage {
                input_tokens,
                output_tokens,
                cost_usd,
                ..
            } => Some((input_tokens, output_tokens, cost_usd)),
            _ => None,
        })
        .collect();
    assert_eq!(usage, [(20, 10, Some(0.5))]);
    // The agent is gone with the run.
    let pid = read(dir.path(), "acp-agent.pid");
    wait_until("the agent to be gone", PATIENCE, || {
        (!alive(&pid)).then_some(())
    })
    .unwrap();
}

#[test]
fn an_ask_before_command_waits_for_a_person_and_a_reject_reaches_the_agent() {
    let dir = workspace("permission", "[human]\nask_before = [\"git push\"]\n");
    let mut ralph = spawn(
        dir.path(),
        &[
            "ralph",
            "push it",
            "--completion-promise",
            "NEVER",
            "--max-iterations",
            "2",
        ],
    );
    let question = pending_question(dir.path());
    assert_eq!(
        question["question"],
        "Allow the agent to run `git push origin main`?"
    );
    assert_eq!(
        question["options"],
        serde_json::json!(["Always Allow", "Allow", "Reject"])
    );
    assert_eq!(
        read(dir.path(), "acp-decisions.txt"),
        "",
        "held until answered"
    );
    let id = question["id"].as_str().unwrap();
    let out = run(dir.path(), &["answer", id, "Reject", "--as", "ana"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    wait_until("the agent to hear the decision", PATIENCE, || {
        read(dir.path(), "acp-decisions.txt")
            .contains("reject")
            .then_some(())
    })
    .unwrap();
    // The second iteration asks again: allow it this time.
    let second = wait_until("the second question", PATIENCE, || {
        let out = run(dir.path(), &["questions", "--json"]);
        let list: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
        list.as_array()?.iter().find(|q| q["id"] != id).cloned()
    })
    .unwrap();
    let out = run(
        dir.path(),
        &["answer", second["id"].as_str().unwrap(), "Allow"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = wait_exit(&mut ralph);
    assert_eq!(
        status.code(),
        Some(3),
        "the promise is never kept: the iterations run out"
    );
    assert_eq!(
        read(dir.path(), "acp-decisions.txt"),
        "git push origin main: reject\ngit push origin main: allow\n"
    );
    // What was refused is told in the next prompt.
    let prompts = read(dir.path(), "acp-prompts.txt");
    assert!(
        prompts.lines().nth(1).unwrap().contains("tether refused"),
        "{prompts}"
    );
    let decided: Vec<(bool, String, String)> = events(dir.path())
        .into_iter()
        .filter_map(|e| match e {
            Event::PermissionDecided {
                allowed,
                by,
                decision,
                ..
            } => Some((allowed, by, decision)),
            _ => None,
        })
        .collect();
    assert_eq!(
        decided,
        [
            (false, "ana".to_owned(), "Reject".to_owned()),
            (true, "tester".to_owned(), "Allow".to_owned())
        ]
    );
}

#[test]
fn a_call_outside_the_workspace_is_refused_without_asking() {
    let dir = workspace("outside", "permissions = \"allow\"\n");
    let out = run(
        dir.path(),
        &[
            "ralph",
            "edit",
            "--completion-promise",
            "NEVER",
            "--max-iterations",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        read(dir.path(), "acp-decisions.txt"),
        "Write /etc/passwd: reject\n"
    );
    let questions = text(&run(dir.path(), &["history", "--json"]).stdout);
    assert!(
        !questions.contains("passwd"),
        "nobody was asked: {questions}"
    );
}

#[test]
fn lines_that_are_not_json_rpc_are_skipped() {
    let dir = workspace("malformed", "");
    let out = run(
        dir.path(),
        &[
            "ralph",
            "do it",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn an_agent_that_ignores_cancel_is_killed_with_its_group() {
    let dir = workspace("ignore", "");
    let mut ralph = spawn(
        dir.path(),
        &[
            "ralph",
            "wait",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "1",
        ],
    );
    wait_until("the prompt to arrive", PATIENCE, || {
        (!read(dir.path(), "acp-prompts.txt").is_empty()).then_some(())
    })
    .unwrap();
    let pid = read(dir.path(), "acp-agent.pid");
    let out = run(dir.path(), &["cancel"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let status = wait_exit(&mut ralph);
    assert_ne!(status.code(), Some(0));
    wait_until("the agent to be gone", PATIENCE, || {
        (!alive(&pid)).then_some(())
    })
    .unwrap();
}

#[test]
fn an_agent_that_exits_mid_turn_fails_the_iteration_with_its_words() {
    let dir = workspace("exit", "");
    let child = spawn(
        dir.path(),
        &[
            "ralph",
            "go",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "2",
        ],
    );
    let out = child.wait_with_output().unwrap();
    assert_ne!(out.status.code(), Some(0));
    let failed = events(dir.path())
        .into_iter()
        .filter_map(|e| match e {
            Event::IterationFailed { error, .. } => Some(error),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert!(
        failed
            .first()
            .is_some_and(|e| e.contains("exited during its turn")),
        "{failed:?}"
    );
}

#[test]
fn doctor_starts_the_agent_and_reads_its_answer_to_initialize() {
    let dir = workspace("promise", "");
    let out = run(dir.path(), &["doctor"]);
    let said = text(&out.stdout);
    assert!(
        said.contains("executor: ACP agent scripted-acp 1.0.0 (python3)"),
        "{said}"
    );
    fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"acp\"\nprogram = \"true\"\n",
    )
    .unwrap();
    let out = run(dir.path(), &["doctor"]);
    let said = text(&out.stdout);
    assert!(said.contains("did not answer ACP's initialize"), "{said}");
    assert_eq!(out.status.code(), Some(1));
}

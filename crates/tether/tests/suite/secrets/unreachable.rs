//! Keys out of the agent's reach by the side doors: its bash reading tether's own
//! `/proc/<pid>/environ` (tether marks itself non-dumpable), and a verify command — code the
//! agent wrote — printing its environment (verify runs without the key variables).

use std::fs;
use std::path::Path;
use std::process::Command;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use super::support::{Running, hits_in, needles, scan_tree};
use super::{MODEL_KEY, MODEL_VAR, ZULIP_KEY, ZULIP_VAR, model_toml};
use crate::common::{model_table, runtime, text, unprivileged};

/// `tether -vv <args>` in `dir` with the keys in its environment — as an unprivileged user
/// when the tests run as root: root (with `CAP_SYS_PTRACE`) reads any process's environ,
/// non-dumpable or not, so only a run as an ordinary user shows what the mark protects.
fn tether_unprivileged(dir: &Path, args: &[&str]) -> Command {
    let mut c = unprivileged::tether(dir);
    c.arg("-vv")
        .args(args)
        .env("TETHER_LOG", "trace")
        .env(MODEL_VAR, MODEL_KEY)
        .env(ZULIP_VAR, ZULIP_KEY);
    c
}

/// Every key hit in the model requests, the workspace and the output.
fn leaks(server: &FakeModelServer, dir: &Path, out: &std::process::Output) -> Vec<String> {
    let needles = needles("bot@example.com");
    let mut hits: Vec<String> = server
        .requests()
        .iter()
        .flat_map(|r| {
            hits_in(
                &format!("model request {}", r.index),
                r.raw_body.as_bytes(),
                &needles,
            )
        })
        .collect();
    hits.extend(scan_tree(dir, &needles).0);
    hits.extend(hits_in("stdout", &out.stdout, &needles));
    hits.extend(hits_in("stderr", &out.stderr, &needles));
    hits
}

/// Item: the agent's bash reads `/proc/$PPID/environ` (its parent is tether): the key must not
/// reach the transcript nor the next model request.
#[test]
fn the_agents_shell_cannot_read_tethers_environ() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "bash",
            json!({"command": "read -r _ _ _ pp _ < /proc/self/stat; echo \"parent=$pp\"; \
                   tr '\\0' '\\n' < /proc/$pp/environ; echo \"read=$?\""}),
        ),
        Some(_) => Turn::text("<promise>DONE</promise>"),
    });
    let server = rt
        .block_on(
            FakeModelServer::builder(script)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n[zulip]\napi_key_env = \"{ZULIP_VAR}\"\n",
            model_toml(Api::OpenAiChat, &server)
        ),
    )
    .unwrap();
    let out = Running::start(tether_unprivileged(
        dir.path(),
        &["ralph", "Look around.", "--completion-promise", "DONE"],
    ))
    .wait();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let requests = server.requests();
    let seen = &requests.last().unwrap().raw_body;
    assert!(seen.contains("parent="), "the shell ran: {seen}");
    assert!(
        seen.contains("Permission denied") && !seen.contains("read=0"),
        "the read was refused: {seen}"
    );
    let hits = leaks(&server, dir.path(), &out);
    assert!(hits.is_empty(), "the key leaked: {hits:#?}");
}

/// Item: a verify command that prints its environment (the agent wrote it) puts no key into
/// the verify log, the `complete_goal` result, the judge's brief or the next model request.
#[test]
fn verify_printing_its_environment_shows_no_key() {
    let rt = runtime();
    let agent = Script::turns([
        Turn::tool(
            "complete_goal",
            json!({"id": "env", "evidence": "sh check.sh prints its environment", "paths": ["check.sh"]}),
        ),
        Turn::text("Tried to sign off."),
    ]);
    let judge = Script::turns([Turn::text(
        "```json\n{\"verdict\":\"reject\",\"summary\":\"no\",\"checks\":[],\"missing\":[\"more\"]}\n```",
    )]);
    let agent = rt
        .block_on(
            FakeModelServer::builder(agent)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap();
    let judge = rt
        .block_on(
            FakeModelServer::builder(judge)
                .require_key(MODEL_KEY)
                .start(),
        )
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}{}api_key_env = \"{MODEL_VAR}\"\n\n[zulip]\napi_key_env = \"{ZULIP_VAR}\"\n",
            model_toml(Api::OpenAiChat, &agent),
            model_table("judge", Api::OpenAiChat, &judge, "judge-model"),
        ),
    )
    .unwrap();
    fs::write(
        dir.path().join("plan.md"),
        "# Plan: env\n\n## Goal: Print the environment\n<!-- id: env -->\nstatus: active\n\
         done_when: check.sh prints the environment\nverify: sh check.sh\n\n- [ ] print it\n\n\
         ## Log\n",
    )
    .unwrap();
    fs::write(dir.path().join("check.sh"), "env\necho 'env printed'\n").unwrap();
    let out = Running::start(super::tether(
        dir.path(),
        MODEL_KEY,
        &["run", "--approve", "--max-iterations", "1"],
    ))
    .wait();
    let requests = agent.requests();
    assert!(requests.len() >= 2, "{}", text(&out.stderr));
    assert!(
        requests[1].raw_body.contains("NOT signed off"),
        "complete_goal answered: {}",
        requests[1].raw_body
    );
    let brief = &judge.requests()[0].raw_body;
    assert!(
        brief.contains("env printed"),
        "verify's output reached the judge: {brief}"
    );
    let (_, files) = scan_tree(dir.path(), &[]);
    let log = files
        .iter()
        .find(|f| f.to_string_lossy().ends_with("verify-env-1.log"))
        .expect("the verify log");
    let log = fs::read_to_string(log).unwrap();
    assert!(
        log.contains("\nPATH="),
        "verify printed its environment: {log}"
    );
    let mut hits = leaks(&agent, dir.path(), &out);
    hits.extend(leaks(&judge, dir.path(), &out));
    assert!(hits.is_empty(), "the key leaked: {hits:#?}");
}

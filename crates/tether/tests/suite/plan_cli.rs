//! Plan mode with an agent CLI as the drafting agent (the real Claude Code and pi, installed by
//! ./test.sh): it runs read-only, writes the plan only through `write_plan` served by
//! `tether mcp --drafting`, and its draft is checked and locked as the built-in agent's is.

use std::fs;
use std::path::Path;

use serde_json::json;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};

use crate::common::agents::start;
use crate::common::{run, text};
use crate::suite::claude_cli::configure;

pub(crate) const EXISTING: &str = "# Plan: greet\n\n## Goal: Keep it working\n<!-- id: keep -->\n\
status: active\ndone_when: sh test.sh exits 0\n\n## Log\n- plan started\n";

const NEW_GOAL: &str = "## Goal: Verbose flag\n<!-- id: verbose -->\nstatus: active\n\
done_when: `sh greet.sh -v bob` prints `debug: name=bob` then the greeting\n\
verify: sh test.sh\nfailure_modes:\n\
- the flag is parsed but never changes the output\n\
- verify passes because test.sh never calls greet.sh with -v\n\n\
- [ ] parse -v\n- [ ] print the debug line\n\n";

pub(crate) fn drafted() -> String {
    EXISTING.replace("## Log\n", &format!("{NEW_GOAL}## Log\n"))
}

fn workspace(dir: &Path, server: &tether_testkit::model_server::FakeModelServer) {
    configure(dir, server, "");
    files(dir);
}

fn files(dir: &Path) {
    fs::write(dir.join("greet.sh"), "echo \"Hello, $1!\"\n").unwrap();
    fs::write(dir.join("plan.md"), EXISTING).unwrap();
}

/// How many tool results the request carries.
pub(crate) fn results(req: &Request) -> usize {
    req.messages
        .iter()
        .filter(|m| matches!(m, tether_model::Message::Tool { .. }))
        .count()
}

#[test]
fn claude_code_drafts_read_only_and_writes_the_plan_through_tether() {
    let plan = drafted();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| match results(req) {
        // An attempt to write another file, then the plan through tether's tool.
        0 => Turn::tool(
            "Write",
            json!({"file_path": "src/evil.rs", "content": "fn main() {}"}),
        ),
        1 => Turn::tool("mcp__tether__write_plan", json!({"content": plan.clone()})),
        _ => Turn::text("Drafted `verbose`."),
    }));
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &server);
    let out = run(
        dir.path(),
        &[
            "plan",
            "new",
            "Add a --verbose flag to greet.sh",
            "--approve",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        drafted()
    );
    assert!(!dir.path().join("src/evil.rs").exists(), "{stderr}");
    let approved = run(dir.path(), &["plan"]);
    assert_eq!(
        text(&approved.stdout).matches("not approved yet").count(),
        1,
        "only the old goal is unapproved: {}",
        text(&approved.stdout)
    );
    // The drafting agent saw tether's plan tools and none of Claude Code's editing tools.
    let first = server.requests()[0].raw_body.clone();
    assert!(first.contains("mcp__tether__write_plan"), "{first}");
    assert!(first.contains("mcp__tether__edit_plan"), "{first}");
    for editing in ["\"Write\"", "\"Edit\"", "\"Bash\""] {
        assert!(!first.contains(editing), "{editing} offered: {first}");
    }
    assert!(first.contains("write goals into the plan file with tether's"));
}

#[test]
fn a_draft_that_drops_a_goal_is_refused_by_tethers_tool() {
    let broken = "# Plan: greet\n\n".to_owned() + NEW_GOAL + "## Log\n- plan started\n";
    let good = drafted();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| match results(req) {
        0 => Turn::tool(
            "mcp__tether__write_plan",
            json!({"content": broken.clone()}),
        ),
        1 => Turn::tool("mcp__tether__write_plan", json!({"content": good.clone()})),
        _ => Turn::text("Drafted `verbose`."),
    }));
    let dir = tempfile::tempdir().unwrap();
    workspace(dir.path(), &server);
    let out = run(
        dir.path(),
        &["plan", "new", "Add a --verbose flag", "--approve"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        drafted()
    );
    let second = server.requests()[1].raw_body.clone();
    assert!(
        second.contains("drops what the plan had before: goal `keep`"),
        "{second}"
    );
}

#[test]
fn pi_drafts_read_only_and_writes_the_plan_through_tether() {
    let plan = drafted();
    let (_rt, server) = start(Script::from_fn(move |req: &Request| match results(req) {
        // An attempt to write another file, then the plan through tether's tool.
        0 => Turn::tool(
            "write",
            json!({"path": "src/evil.rs", "content": "fn main() {}"}),
        ),
        1 => Turn::tool("mcp__tether__write_plan", json!({"content": plan.clone()})),
        _ => Turn::text("Drafted `verbose`."),
    }));
    let dir = tempfile::tempdir().unwrap();
    crate::suite::pi_cli::configure(dir.path(), &server, "");
    files(dir.path());
    let out = run(
        dir.path(),
        &[
            "plan",
            "new",
            "Add a --verbose flag to greet.sh",
            "--approve",
        ],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_eq!(
        fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        drafted()
    );
    assert!(!dir.path().join("src/evil.rs").exists(), "{stderr}");
    // pi offered its reading tools and tether's plan tools, none of its editing tools.
    let first = &server.requests()[0].body;
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    for tool in [
        "read",
        "grep",
        "mcp__tether__write_plan",
        "mcp__tether__edit_plan",
    ] {
        assert!(tools.contains(&tool), "{tool} missing: {tools:?}");
    }
    for editing in ["write", "edit", "bash"] {
        assert!(!tools.contains(&editing), "{editing} offered: {tools:?}");
    }
}

//! Plan mode and contract approval as a user runs them: `tether plan new` as a process with the
//! built-in agent talking to the fake model server, `tether plan approve`, and the flags of
//! `tether plan`. The review menu is driven through a pseudo-terminal (`script`).

use std::fs;
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{Out, isolate, model_table, runtime};

const EXISTING: &str = "# Plan: greet\n\n## Goal: Keep it working\n<!-- id: keep -->\n\
status: active\ndone_when: sh test.sh exits 0\n\n## Log\n- plan started\n";

fn goal(id: &str, title: &str) -> String {
    format!(
        "## Goal: {title}\n<!-- id: {id} -->\nstatus: active\n\
         done_when: `sh greet.sh -v bob` prints `debug: name=bob` then the greeting\n\
         verify: sh test.sh\nfailure_modes:\n\
         - the flag is parsed but never changes the output\n\
         - verify passes because test.sh never calls greet.sh with -v\n\n\
         - [ ] parse -v\n- [ ] print the debug line\n\n"
    )
}

fn with_goals(goals: &str) -> String {
    EXISTING.replace("## Log\n", &format!("{goals}## Log\n"))
}

struct Env {
    dir: tempfile::TempDir,
    server: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

fn env(script: Script) -> Env {
    let (dir, server, rt) = crate::common::model_workspace(script);
    fs::write(dir.path().join("greet.sh"), "echo \"Hello, $1!\"\n").unwrap();
    fs::write(dir.path().join("plan.md"), EXISTING).unwrap();
    Env {
        dir,
        server,
        _rt: rt,
    }
}

/// `tether <args>` as a snapshot shows it, times redacted.
fn tether(dir: &Path, args: &[&str]) -> Out {
    crate::common::tether(dir, args).times()
}

impl Env {
    fn path(&self) -> &Path {
        self.dir.path()
    }
    fn run(&self, args: &[&str]) -> Out {
        tether(self.path(), args)
    }
    fn plan(&self) -> String {
        fs::read_to_string(self.path().join("plan.md")).unwrap()
    }
    fn approvals(&self) -> Vec<String> {
        let store = tether_store::Store::open(self.path().join(".tether/tether.db")).unwrap();
        ["keep", "verbose", "docs"]
            .iter()
            .filter(|id| store.approval("plan.md", id).unwrap().is_some())
            .map(|id| (*id).to_owned())
            .collect()
    }
    /// The tool results the agent was sent, from the recorded requests.
    fn tool_results(&self) -> Vec<String> {
        self.server
            .requests()
            .iter()
            .filter_map(|r| {
                let last = r.body["messages"].as_array()?.last()?.clone();
                (last["role"] == "tool").then(|| last["content"].as_str().unwrap().to_owned())
            })
            .collect()
    }
}

fn drafting_script(plan: String) -> Script {
    Script::turns([
        Turn::tool("ls", json!({})),
        Turn::tool("read", json!({"path": "greet.sh"})),
        Turn::tool("write_plan", json!({"content": plan})),
        Turn::text("Drafted `verbose`."),
    ])
}

#[test]
fn plan_new_with_approve_drafts_and_locks() {
    let e = env(drafting_script(with_goals(&goal(
        "verbose",
        "Verbose flag",
    ))));
    let out = e.run(&[
        "plan",
        "new",
        "Add a --verbose flag to greet.sh",
        "--approve",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    insta::assert_snapshot!(out.stdout);
    assert!(out.stderr.contains("· read greet.sh"), "{}", out.stderr);
    assert!(
        out.stderr.contains("· write_plan plan.md"),
        "{}",
        out.stderr
    );
    assert_eq!(e.plan(), with_goals(&goal("verbose", "Verbose flag")));
    assert_eq!(e.approvals(), ["verbose"]);
    // The agent read the file it asked for.
    assert!(e.tool_results()[1].contains("Hello, $1!"));
    // Approved: `tether plan` has no note for the new goal, only for the old unapproved one.
    let plan = e.run(&["plan"]);
    assert!(
        plan.stdout
            .contains("· contract not approved yet: tether plan approve keep")
    );
    assert_eq!(
        plan.stdout.matches("not approved yet").count(),
        1,
        "{}",
        plan.stdout
    );
}

#[test]
fn a_broken_plan_is_refused_by_the_tool_and_fixed() {
    let good = with_goals(&goal("verbose", "Verbose flag"));
    let broken = good.replace(
        "status: active\ndone_when: `sh",
        "status: begun\ndone_when: `sh",
    );
    let e = env(Script::turns([
        Turn::tool("read", json!({"path": "plan.md"})),
        Turn::tool("write_plan", json!({"content": broken})),
        Turn::tool("write_plan", json!({"content": good})),
        Turn::text("Fixed."),
    ]));
    let out = e.run(&["plan", "new", "Add a --verbose flag", "--approve", "--json"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(v["outcome"], "approved");
    assert_eq!(v["approved"], json!(["verbose"]));
    assert_eq!(v["goals"][0]["id"], "verbose");
    assert!(
        v["goals"][0]["contract_hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    let results = e.tool_results();
    assert!(
        results[1].starts_with("nothing was written: the new plan.md would not parse:\n- line 10: `begun` is not a status"),
        "{}",
        results[1]
    );
    assert_eq!(e.plan(), good);
}

#[test]
fn writing_another_file_is_refused() {
    let e = env(Script::turns([
        Turn::tool(
            "write",
            json!({"path": "greet.sh", "content": "echo hacked\n"}),
        ),
        Turn::tool(
            "write_plan",
            json!({"content": with_goals(&goal("verbose", "Verbose flag"))}),
        ),
        Turn::text("Drafted."),
    ]));
    let out = e.run(&["plan", "new", "Add a --verbose flag"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        fs::read_to_string(e.path().join("greet.sh")).unwrap(),
        "echo \"Hello, $1!\"\n"
    );
    assert!(
        out.stderr
            .contains("✗ write: refused (plan mode is read-only)"),
        "{}",
        out.stderr
    );
    assert!(e.tool_results()[0].starts_with("`write` is not available while goals are drafted"));
}

#[test]
fn without_a_terminal_or_approve_the_draft_stays_unapproved() {
    let e = env(drafting_script(with_goals(&goal(
        "verbose",
        "Verbose flag",
    ))));
    let out = e.run(&["plan", "new", "Add a --verbose flag"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.ends_with(
        "\nThe draft is in plan.md, not approved yet. Review it with `tether plan`, then lock it \
         with `tether plan approve verbose` (or start with `tether run --approve`).\n"
    ), "{}", out.stdout);
    assert!(e.approvals().is_empty());
    let plan = e.run(&["plan"]);
    assert!(
        plan.stdout
            .contains("· contract not approved yet: tether plan approve verbose")
    );
}

#[test]
fn a_draft_short_of_the_format_is_sent_back_once_then_fails() {
    let short = with_goals(&goal("verbose", "Verbose flag")).replace(
        "- verify passes because test.sh never calls greet.sh with -v\n",
        "",
    );
    let e = env(
        Script::turns([Turn::tool("write_plan", json!({"content": short}))])
            .then_repeat(Turn::text("Done, I think.")),
    );
    let out = e.run(&["plan", "new", "Add a --verbose flag", "--approve"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stdout.contains(
        "The draft is short of the format:\n  - goal `verbose` (line 8) has 1 failure mode; give 2 \
         or 3 under `failure_modes:`\n"
    ), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("the draft is still short of the format after it was sent back once")
    );
    // Two turns: the draft, and the send-back.
    let prompts = e
        .server
        .requests()
        .iter()
        .filter(|r| r.body["messages"].as_array().unwrap().len() == 2)
        .count();
    assert_eq!(prompts, 2);
    assert_eq!(e.plan(), short);
    assert!(e.approvals().is_empty());
}

#[test]
fn a_model_failure_restores_the_plan_and_no_model_is_a_usage_error() {
    let e = env(Script::turns([Turn::tool(
        "write_plan",
        json!({"content": with_goals(&goal("verbose", "Verbose flag"))}),
    )]));
    e.server
        .fault_on(1, tether_testkit::model_server::Fault::Status(400));
    let out = e.run(&["plan", "new", "Add a --verbose flag", "--approve"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("drafting failed; plan.md was restored as it was"),
        "{}",
        out.stderr
    );
    assert_eq!(e.plan(), EXISTING);

    fs::write(e.path().join("tether.toml"), "").unwrap();
    let out = e.run(&["plan", "new", "Add a --verbose flag"]);
    assert_eq!(out.code, 2);
    insta::assert_snapshot!(out.stderr, @"error: plan mode drafts goals with the built-in agent, which needs a model: add a [model] (or [planning]) table to tether.toml (api, base_url, model, api_key_env); or write goals into the plan by hand and lock them with `tether plan approve`");
}

/// Runs `tether <args>` under a pseudo-terminal (`script`), typing `input` into it.
fn on_a_terminal(dir: &Path, args: &str, input: &str, editor: &str) -> (i32, String) {
    let cmd = format!("{} {args}", env!("CARGO_BIN_EXE_tether"));
    let mut script = Command::new("script");
    let mut child = isolate(&mut script)
        .args(["-qec", &cmd, "/dev/null"])
        .current_dir(dir)
        .env_remove("VISUAL")
        .env("EDITOR", editor)
        .env("TERM", "dumb")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let pid = child.id();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(60)) else {
        let _ = Command::new("kill").arg(pid.to_string()).status();
        panic!("tether under a pseudo-terminal did not finish within 60 s");
    };
    let out = Out::new(dir, &out.unwrap()).times();
    (out.code, out.stdout.replace("\r\n", "\n"))
}

#[test]
fn the_review_menu_edit_then_ready() {
    let v1 = with_goals(&goal("verbose", "Verbose flag"));
    let v2 = with_goals(&(goal("verbose", "Verbose flag") + &goal("docs", "Document the flag")));
    let e = env(Script::turns([
        Turn::tool("write_plan", json!({"content": v1})),
        Turn::text("Drafted `verbose`."),
        Turn::tool("write_plan", json!({"content": v2})),
        Turn::text("Split out `docs`."),
    ]));
    let (code, out) = on_a_terminal(
        e.path(),
        "plan new 'Add a --verbose flag'",
        "e\nPut the README work in its own goal.\nr\n",
        "false",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Review the draft: [r] Ready"), "{out}");
    assert!(out.contains("What should change? "), "{out}");
    assert!(out.contains("Drafted 2 goals in plan.md:"), "{out}");
    assert!(out.contains("Locked 2 contracts"), "{out}");
    assert_eq!(e.plan(), v2);
    assert_eq!(e.approvals(), ["verbose", "docs"]);
    // The revision request reached the agent.
    let requests = e.server.requests();
    assert!(
        requests[2]
            .raw_body
            .contains("Put the README work in its own goal.")
    );
}

#[test]
fn the_review_menu_editor_then_cancel_restores() {
    let e = env(drafting_script(with_goals(&goal(
        "verbose",
        "Verbose flag",
    ))));
    let (code, out) = on_a_terminal(
        e.path(),
        "plan new 'Add a --verbose flag'",
        "o\nc\n",
        "sed -i 's/- the flag is parsed/- the flag is read/'",
    );
    assert_eq!(code, 0, "{out}");
    // The hand edit was re-read and shown before the menu came back.
    assert!(
        out.contains("failure modes: - the flag is read but never changes"),
        "{out}"
    );
    assert!(out.contains("cancelled; plan.md restored"), "{out}");
    assert_eq!(e.plan(), EXISTING);
    assert!(e.approvals().is_empty());
}

#[test]
fn planning_drafts_on_its_own_model_and_plan_new_model_overrides_the_name() {
    let rt = runtime();
    let planner = rt
        .block_on(FakeModelServer::start(drafting_script(with_goals(&goal(
            "verbose",
            "Verbose flag",
        )))))
        .unwrap();
    // The working model's server scripts nothing: a call to it would fail the draft.
    let e = env(Script::turns([]));
    let planning = model_table("planning", Api::OpenAiChat, &planner, "planner-model");
    let config = fs::read_to_string(e.path().join("tether.toml")).unwrap();
    fs::write(
        e.path().join("tether.toml"),
        format!("{config}\n{planning}"),
    )
    .unwrap();
    let out = e.run(&[
        "plan",
        "new",
        "Add a --verbose flag",
        "--approve",
        "--model",
        "big-planner",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        e.server.request_count(),
        0,
        "the working model was not asked"
    );
    let requests = planner.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].body["model"], "big-planner");
    assert!(
        out.stderr.contains("openai-chat big-planner"),
        "{}",
        out.stderr
    );
    assert_eq!(e.approvals(), ["verbose"]);
}

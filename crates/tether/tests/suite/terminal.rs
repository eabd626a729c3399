//! The loops on a terminal, the way a person runs them: `tether run`, `ralph`, `resume` and
//! `plan new` under a pseudo-terminal whose stdin, stdout and stderr are all the terminal. The
//! contract question, the progress line, the question card, typed answers and Ctrl+C, each
//! seen on the screen. (Every other test gives tether a pipe or /dev/null for stdin, which is
//! how `tether run` once hung on a terminal unnoticed: two readers of one stdin.)

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::QuestionStatus;
use tether_testkit::model_server::{FakeModelServer, Fault};

use super::goal_run::support::{PLAN, accepting_judge, complete, env, fix_add};
use crate::common::pty::Pty;

const QUESTION: &str = "Should add wrap on overflow?";
const ANSWER: &str = "no, keep i32 semantics";

/// An agent that asks a person first, then fixes `add` and signs it off once the answer came.
fn asking_agent() -> Script {
    Script::from_fn(|req: &Request| {
        let seen = serde_json::to_string(req).unwrap();
        if !seen.contains(ANSWER) {
            return Turn::tool(
                "ask_human",
                json!({"question": QUESTION, "context": "src/lib.rs", "confidence": 10}),
            );
        }
        match req.last_tool_result() {
            Some((Some("edit"), _)) => complete("add"),
            Some((Some("complete_goal"), _)) => Turn::text("Fixed add; signed off."),
            _ => fix_add(),
        }
    })
}

#[test]
fn run_asks_for_the_contracts_shows_progress_and_takes_the_answer_typed_on_its_card() {
    let e = env(PLAN, asking_agent(), Script::turns(accepting_judge()), "");
    let mut t = Pty::start(e.path(), "run --max-iterations 5");
    t.wait_for("Approve these contracts? [y/N]");
    t.type_line("y");
    t.wait_for("⟳ run · iteration 1/5");
    t.wait_for("Your answer: ");
    t.type_line(ANSWER);
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    for shown in [
        "Approving add (never approved):",
        "Locked 1 contract",
        QUESTION,
        "all goals done",
        "signed off: add",
    ] {
        assert!(
            screen.contains(shown),
            "the screen shows {shown:?}:\n{screen}"
        );
    }
    assert_eq!(e.status_of("add"), "done");
    let q = &e.store().question_history(10).unwrap()[0];
    assert_eq!(q.answer.as_deref(), Some(ANSWER));
    assert_eq!(q.channel.as_deref(), Some("terminal"));
}

#[test]
fn run_with_approved_contracts_starts_at_once_without_a_key_pressed() {
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")]),
        Script::turns(accepting_judge()),
        "",
    );
    let approved = e.run(&["plan", "approve", "--all"]);
    assert_eq!(approved.status.code(), Some(0));
    let t = Pty::start(e.path(), "run --max-iterations 5");
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("all goals done"), "{screen}");
    assert!(
        !screen.contains("[y/N]"),
        "nothing to approve, nothing asked: {screen}"
    );
}

#[test]
fn ctrl_c_on_the_card_keeps_the_question_and_resume_on_a_terminal_asks_it_again() {
    let e = env(PLAN, asking_agent(), Script::turns(accepting_judge()), "");
    assert_eq!(e.run(&["plan", "approve", "--all"]).status.code(), Some(0));
    let mut t = Pty::start(e.path(), "run --max-iterations 5");
    t.wait_for("Your answer: ");
    t.ctrl_c();
    let (code, screen) = t.wait();
    assert_eq!(code, 130, "{screen}");
    let pending = e.store().question_history(10).unwrap();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].status, QuestionStatus::Pending, "{screen}");
    let card = format!("a question for you ({})", pending[0].id);

    let mut t = Pty::start(e.path(), "resume");
    t.wait_for("⟳ run · iteration 0/5");
    t.wait_for(&card);
    t.wait_for("Your answer: ");
    t.type_line(ANSWER);
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("all goals done"), "{screen}");
    let q = e.store().question(&pending[0].id).unwrap();
    assert_eq!(q.answer.as_deref(), Some(ANSWER));
    assert_eq!(e.status_of("add"), "done");
    assert_eq!(
        e.store().question_history(10).unwrap().len(),
        1,
        "the question was asked again, not anew"
    );
}

#[test]
fn ralph_shows_progress_and_takes_the_answer_typed_on_its_card() {
    let e = env(
        PLAN,
        Script::from_fn(|req: &Request| {
            if serde_json::to_string(req).unwrap().contains(ANSWER) {
                Turn::text("Done as told. <promise>DONE</promise>")
            } else {
                Turn::tool(
                    "ask_human",
                    json!({"question": QUESTION, "context": "", "confidence": 10}),
                )
            }
        }),
        Script::turns([]),
        "",
    );
    let mut t = Pty::start(
        e.path(),
        "ralph 'Fix add.' --completion-promise DONE --max-iterations 3",
    );
    t.wait_for("⟳ ralph · iteration 1/3");
    t.wait_for("Your answer: ");
    t.type_line(ANSWER);
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("promise kept"), "{screen}");
}

#[test]
fn ctrl_c_at_the_contract_question_approves_nothing_and_starts_nothing() {
    let e = env(PLAN, asking_agent(), Script::turns(accepting_judge()), "");
    let mut t = Pty::start(e.path(), "run --max-iterations 5");
    t.wait_for("Approve these contracts? [y/N]");
    t.ctrl_c();
    let (code, screen) = t.wait();
    assert_ne!(code, 0, "{screen}");
    assert_eq!(e.agent.request_count(), 0, "no model call: {screen}");
    let refused = e.run(&["run", "--max-iterations", "5"]);
    assert_eq!(
        refused.status.code(),
        Some(2),
        "still not approved: {}",
        crate::common::text(&refused.stderr)
    );
}

/// A workspace for `tether plan new`: the built-in agent on its own fake server, an empty plan.
fn planning(script: Script) -> (tempfile::TempDir, FakeModelServer, tokio::runtime::Runtime) {
    let rt = crate::common::runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        crate::common::model_table("model", Api::OpenAiChat, &server, "planner"),
    )
    .unwrap();
    std::fs::write(dir.path().join("plan.md"), "# Plan: numbers\n\n## Log\n").unwrap();
    (dir, server, rt)
}

const DRAFT: &str = "# Plan: numbers\n\n## Goal: Add numbers\n<!-- id: add -->\nstatus: active\n\
done_when: `add` returns the sum of its arguments\nverify: sh check.sh\nfailure_modes:\n\
- check.sh greps for the wrong thing\n- the function is right but never called\n\n\
- [ ] fix add\n\n## Log\n";

#[test]
fn plan_new_reviews_on_the_terminal_and_the_locked_plan_runs_without_a_question() {
    let (dir, _server, _rt) = planning(Script::turns([
        Turn::tool("write_plan", json!({"content": DRAFT})),
        Turn::text("Drafted `add`."),
    ]));
    let mut t = Pty::start(dir.path(), "plan new 'Make add add'");
    t.wait_for("Review the draft: [r] Ready");
    t.type_line("r");
    let (code, screen) = t.wait();
    assert_eq!(code, 0, "{screen}");
    assert!(screen.contains("Locked 1 contract"), "{screen}");
    let store = tether_store::Store::open(dir.path().join(".tether/tether.db")).unwrap();
    assert!(store.approval("plan.md", "add").unwrap().is_some());
}

#[test]
fn ctrl_c_while_plan_new_drafts_restores_the_plan() {
    let (dir, server, _rt) = planning(Script::turns([
        Turn::tool("ls", json!({})),
        Turn::text("never reached"),
    ]));
    server.fault_on(1, Fault::HoldBeforeHeaders);
    let mut t = Pty::start(dir.path(), "plan new 'Make add add'");
    t.wait_for("· ls");
    tether_testkit::wait_until("the held request", crate::common::PATIENCE, || {
        (server.request_count() >= 2).then_some(())
    })
    .unwrap();
    t.ctrl_c();
    let (code, screen) = t.wait();
    assert_eq!(code, 130, "{screen}");
    assert!(screen.contains("interrupted; plan.md restored"), "{screen}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("plan.md")).unwrap(),
        "# Plan: numbers\n\n## Log\n"
    );
}

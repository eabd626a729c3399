//! `tether run` as a process: the built-in agent and the judge each talk to their own fake model
//! server over real HTTP. Sign-off, verify failing, invented quotes, a judge that answers
//! garbage or times out, a contract changed after approval, the budget and resume, each rule,
//! and kill -9 followed by resume.

mod panel;
mod stopped;
pub(super) mod support;

use tether_model::scripted::{Script, Turn};
use tether_store::Verdict;
use tether_testkit::model_server::Fault;
use tether_testkit::wait_until;

use crate::common::{PATIENCE, text};
use support::{PLAN, SECOND_GOAL, accepting_judge, complete, env, fix_add, touch, verdict};

#[test]
fn a_goal_is_signed_off_by_verify_and_the_judge() {
    let e = env(
        PLAN,
        Script::turns([
            fix_add(),
            complete("add"),
            Turn::text("Fixed add and signed it off."),
        ]),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("all goals done")
            && text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(e.status_of("add"), "done");
    let verdicts = e.verdicts("add");
    assert_eq!(verdicts.len(), 1);
    assert_eq!(verdicts[0].decision.verdict, Verdict::Accept);
    assert_eq!(
        verdicts[0].decision.judge_model.as_deref(),
        Some("judge-model")
    );
    assert!(verdicts[0].decision.run_id.is_some());
    // One judge session: it read the file, then gave its verdict.
    assert_eq!(e.judge.request_count(), 2);
    assert!(e.plan().contains("add signed off:"));
}

#[test]
fn failing_verify_never_reaches_the_judge_then_budget_spent_and_resume_continues() {
    let e = env(
        PLAN,
        Script::turns([
            // Iteration 1: claims done without fixing anything.
            complete("add"),
            Turn::text("I think add is done."),
            // Iteration 2 (after resume): fixes it and signs off.
            fix_add(),
            complete("add"),
            Turn::text("Fixed add."),
        ]),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let run = e.store().latest_run().unwrap().unwrap().id;
    assert!(
        stdout.contains(&format!("continue with: tether resume {run}")),
        "{stdout}"
    );
    assert_eq!(
        e.judge.request_count(),
        0,
        "no judge call when verify fails"
    );
    let rejected = e.verdicts("add");
    assert_eq!(rejected.len(), 1);
    assert!(rejected[0].decision.reason.starts_with("verify failed"));
    assert_eq!(rejected[0].decision.verify_exit, Some(1));

    let out = e.run(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
    // The rejection was owed to the next prompt.
    let second_prompt = &e.agent.requests()[2];
    assert!(
        second_prompt
            .body
            .to_string()
            .contains("Signing off `add` was rejected: verify failed"),
        "{}",
        second_prompt.body
    );
}

#[test]
fn a_verdict_quoting_text_that_is_not_in_the_file_is_a_reject() {
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Done.")]),
        Script::turns([verdict(
            "accept",
            "src/lib.rs",
            "    a * b // multiplies the numbers",
            &[],
        )]),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "active");
    let v = &e.verdicts("add")[0].decision;
    assert_eq!(v.verdict, Verdict::Reject);
    assert!(
        v.reason
            .contains("\"a * b // multiplies the numbers\" is not a run of whole lines"),
        "{}",
        v.reason
    );
}

#[test]
fn garbage_verdicts_and_a_judge_timeout_are_rejects_and_three_pause_the_run() {
    let agent_turns = Script::turns([
        fix_add(),
        complete("add"),
        Turn::text("Asked for the sign-off."),
        complete("add"),
        Turn::text("Asked again."),
        complete("add"),
        Turn::text("And again."),
    ]);
    let judge = Script::turns([
        Turn::text("Looks fine to me!"),
        Turn::text("{\"verdict\": \"maybe\"}"),
    ])
    .then_repeat(Turn::text("never sent"));
    let e = env(PLAN, agent_turns, judge, "timeout_secs = 1\n");
    // The third judge session never answers.
    e.judge.fault_on(2, Fault::HoldBeforeHeaders);
    let out = e.run(&["run", "--approve", "--max-iterations", "10"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("judge failed 3 times in a row"));
    let verdicts = e.verdicts("add");
    let reasons: Vec<&str> = verdicts
        .iter()
        .map(|v| v.decision.reason.as_str())
        .collect();
    assert_eq!(reasons.len(), 3, "{reasons:?}");
    assert!(
        reasons.iter().all(|r| r.starts_with("judge unavailable")),
        "{reasons:?}"
    );
    assert!(reasons[2].contains("no verdict within 1 s"), "{reasons:?}");
    assert!(
        verdicts
            .iter()
            .all(|v| v.decision.verdict == Verdict::Reject)
    );
    assert_eq!(e.status_of("add"), "active");
    assert!(e.rules().contains(&"judge_unavailable".to_owned()));
    // The human is told: a question waits in `tether questions`.
    let questions = e.store().pending_questions().unwrap();
    assert_eq!(questions.len(), 1);
    assert!(
        questions[0]
            .question
            .contains("judge failed 3 times in a row")
    );
}

#[test]
fn a_contract_edited_after_approval_is_refused_until_approved_again() {
    let e = env(
        PLAN,
        Script::turns([
            // Iteration 1: weakens the contract, then asks for the sign-off.
            Turn::tool(
                "edit",
                serde_json::json!({"path": "plan.md", "old_text": "verify: sh check.sh", "new_text": "verify: true"}),
            ),
            fix_add(),
            complete("add"),
            Turn::text("Signed off?"),
            // Iteration 2, after a human approved the new contract.
            complete("add"),
            Turn::text("Signed off."),
        ]),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "active");
    assert!(e.verdicts("add").is_empty(), "a refusal is not a verdict");
    assert_eq!(e.judge.request_count(), 0);
    let refusal = e.agent.requests()[3].body.to_string();
    assert!(refusal.contains("tether plan approve add"), "{refusal}");

    // A human approves the new contract; the resumed run signs the goal off.
    let out = e.run(&["plan", "approve", "add"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = e.run(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
}

#[test]
fn a_new_run_with_a_changed_contract_needs_approval() {
    let e = env(PLAN, Script::turns([]), Script::turns([]), "");
    let out = e.run(&["plan", "approve", "add"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::fs::write(
        e.path().join("plan.md"),
        e.plan().replace("verify: sh check.sh", "verify: true"),
    )
    .unwrap();
    let out = e.run(&["run"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stdout));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("add"), "{stderr}");
    assert!(stderr.contains("tether plan approve"), "{stderr}");
}

#[test]
fn idle_iterations_are_stopped_by_the_spin_guard() {
    let e = env(
        PLAN,
        Script::turns([]).then_repeat(Turn::text("Let me think about it.")),
        Script::turns([]),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "10"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("blocked (spin_guard)"));
    assert_eq!(e.rules(), ["spin_guard"]);
}

/// The prompts the agent got at the start of each iteration (requests with no tool result).
fn iteration_prompts(e: &support::Env) -> Vec<String> {
    e.agent
        .requests()
        .iter()
        .map(|r| r.body.to_string())
        .filter(|b| !b.contains("\"role\":\"tool\""))
        .collect()
}

#[test]
fn the_same_failing_verify_output_three_times_brings_the_nudge() {
    let agent = Script::from_fn({
        let mut n = 0u32;
        move |req| match req.last_tool_result() {
            Some((Some("complete_goal"), _)) => Turn::text("Verify still fails."),
            Some(_) => complete("add"),
            None => {
                n += 1;
                touch(&format!("attempt-{n}.txt"))
            }
        }
    });
    // The circuit breaker would ask a person after the third rejection; this is the nudge.
    let e = env(
        PLAN,
        agent,
        Script::turns([]),
        "[loop]\nescalate_after_rejects = 0\n",
    );
    let out = e.run(&[
        "run",
        "--approve",
        "--max-iterations",
        "4",
        "--events",
        "jsonl",
    ]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(e.judge.request_count(), 0);
    assert!(
        e.rules().contains(&"oscillation".to_owned()),
        "{:?}",
        e.rules()
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("\"rule\":\"oscillation\""), "{stdout}");
    let prompts = iteration_prompts(&e);
    assert_eq!(prompts.len(), 4);
    assert!(!prompts[2].contains("You appear stuck"));
    assert!(
        prompts[3].contains("You appear stuck in a loop"),
        "{}",
        prompts[3]
    );
}

#[test]
fn edits_that_leave_the_plan_alone_bring_the_reminder() {
    let agent = Script::from_fn({
        let mut n = 0u32;
        move |req| match req.last_tool_result() {
            Some(_) => Turn::text("Wrote another file."),
            None => {
                n += 1;
                touch(&format!("file-{n}.txt"))
            }
        }
    });
    let e = env(PLAN, agent, Script::turns([]), "");
    let out = e.run(&["run", "--approve", "--max-iterations", "4"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(e.rules(), ["reminder"]);
    let prompts = iteration_prompts(&e);
    assert!(!prompts[2].contains("Reminder: you have changed files"));
    assert!(
        prompts[3].contains("Reminder: you have changed files"),
        "{}",
        prompts[3]
    );
}

#[test]
fn ticked_subtasks_without_a_sign_off_remind_twice_then_pause() {
    let plan = PLAN.replace("- [ ] fix add", "- [x] fix add");
    let agent = Script::from_fn({
        let mut n = 0u32;
        move |req| match req.last_tool_result() {
            Some(_) => Turn::text("Tidied up."),
            None => {
                n += 1;
                touch(&format!("note-{n}.txt"))
            }
        }
    });
    let e = env(&plan, agent, Script::turns([]), "");
    let out = e.run(&["run", "--approve", "--max-iterations", "10"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("still not signed off after 2 reminders"));
    let clean_ends = e.rules().iter().filter(|r| *r == "clean_end").count();
    assert_eq!(clean_ends, 3);
}

#[test]
fn kill_9_mid_run_then_resume_neither_loses_nor_repeats_a_sign_off() {
    let plan = PLAN.replace("## Log\n", &format!("{SECOND_GOAL}## Log\n"));
    let agent = Script::turns([
        // Iteration 1: signs `add` off.
        fix_add(),
        complete("add"),
        Turn::text("add is signed off; double next."),
        // Iteration 2 hangs (request 3 is faulted below: no turn is used) until the process is
        // killed; after resume it writes double and signs it off.
        Turn::tool(
            "edit",
            serde_json::json!({"path": "src/lib.rs", "old_text": "a + b\n}\n", "new_text": "a + b\n}\n\npub fn double(x: i32) -> i32 {\n    x * 2\n}\n"}),
        ),
        complete("double"),
        Turn::text("double is signed off."),
    ]);
    let judge = Script::turns([
        Turn::tool("read", serde_json::json!({"path": "src/lib.rs"})),
        verdict(
            "accept",
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a + b",
            &[],
        ),
        verdict(
            "accept",
            "src/lib.rs",
            "pub fn double(x: i32) -> i32 {\n    x * 2",
            &[],
        ),
    ]);
    let e = env(&plan, agent, judge, "");
    e.agent.fault_on(3, Fault::HoldBeforeHeaders);
    let mut child = e.spawn(&["run", "--approve", "--max-iterations", "10"]);
    e.wait_for("iteration 2 to start after add's sign-off", |store| {
        store
            .has_accepted_signoff("plan.md", "add")
            .unwrap_or(false)
            && store
                .latest_run()
                .ok()
                .flatten()
                .is_some_and(|r| r.state.in_progress == Some(2))
    });
    wait_until("the agent's request of iteration 2", PATIENCE, || {
        (e.agent.request_count() >= 4).then_some(())
    })
    .unwrap();
    child.kill().unwrap();
    child.wait().unwrap();

    let out = e.run(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
    assert_eq!(e.status_of("double"), "done");
    let accepted = |goal: &str| {
        e.verdicts(goal)
            .iter()
            .filter(|v| v.decision.verdict == Verdict::Accept)
            .count()
    };
    assert_eq!((accepted("add"), accepted("double")), (1, 1));
    assert_eq!(e.plan().matches("add signed off:").count(), 1);
}

#[test]
fn a_plan_without_an_active_goal_is_refused_before_anything_starts() {
    let open = PLAN.replace("status: active", "status: open");
    let e = env(&open, Script::turns([]), Script::turns([]), "");
    assert_eq!(e.run(&["plan", "approve", "add"]).status.code(), Some(0));
    let out = e.run(&["run", "--max-iterations", "3"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    // Only the reason, with the open goals named: no sandbox, no dashboard, no run.
    assert_eq!(
        said,
        "error: plan.md has no active goal; set `status: active` on the goals to work on \
         (open: add)\n"
    );
    assert!(!e.path().join(".tether/runs").exists());
}

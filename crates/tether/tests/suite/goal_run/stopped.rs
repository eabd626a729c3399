//! How a goal run that stops on an error says why: the agent breaking `plan.md` mid-run stops
//! the run (exit 2) recorded as paused with the reason, not left "running" with no process.

use serde_json::json;
use tether_model::scripted::{Script, Turn};

use super::support::{PLAN, accepting_judge, env};
use crate::common::text;

#[test]
fn a_plan_the_agent_breaks_mid_run_stops_the_run_and_status_says_why() {
    let broken = PLAN.replace("status: active", "status: sideways");
    let e = env(
        PLAN,
        Script::turns([
            Turn::tool("write", json!({"path": "plan.md", "content": broken})),
            Turn::text("I rewrote the plan."),
        ]),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("`sideways` is not a status"),
        "{}",
        text(&out.stderr)
    );
    let status = text(&e.run(&["status"]).stdout);
    assert!(!status.contains("killed"), "{status}");
    assert!(status.contains(" · paused · "), "{status}");
    assert!(
        status.contains("last event: paused: stopped: the plan no longer parses: "),
        "{status}"
    );
    assert!(
        status.contains("plan.md:5: `sideways` is not a status"),
        "{status}"
    );
    assert!(status.contains("continue with: tether resume"), "{status}");
}

#[test]
fn a_goal_the_judge_rules_blocked_pauses_the_run_and_asks_a_person_with_its_reason() {
    use super::support::{complete, fix_add};
    let judge = Script::turns([Turn::text(
        "```json\n{\"verdict\": \"blocked\", \"summary\": \"check.sh needs the production \
         database, which only a person can grant\"}\n```",
    )]);
    // The agent would sign off again and again if the run went on: it does not.
    let e = env(
        PLAN,
        Script::turns([fix_add(), complete("add"), Turn::text("Asked.")])
            .then_repeat(complete("add")),
        judge,
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "5"]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{said}");
    assert_eq!(e.status_of("add"), "active");
    assert_eq!(e.rules(), ["judge_ruled_out"]);
    let verdicts = e.verdicts("add");
    assert_eq!(verdicts.len(), 1, "tried once");
    assert_eq!(
        verdicts[0].decision.kind,
        tether_store::VerdictKind::JudgeBlocked
    );
    let q = crate::common::pending_question(e.path());
    let question = q["question"].as_str().unwrap();
    assert!(
        question.contains(
            "paused: `add`: the judge ruled the goal blocked: check.sh needs the production \
             database, which only a person can grant"
        ) && question.contains("tether resume"),
        "{question}"
    );
}

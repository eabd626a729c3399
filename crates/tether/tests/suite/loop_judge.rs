//! The loop judge, end to end against a third fake model server: "blocked" asks a person and
//! no iteration runs until they answer (the answer reaching the agent as a message); a loop
//! judge that answers 500s (or garbage) never stops the run, and three failures in a row switch
//! it off for the run.

use std::fs;

use serde_json::json;
use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, JudgeRole, Seq, Store};
use tether_testkit::model_server::{FakeModelServer, Fault};

use super::goal_run::support::{Env, PLAN, accepting_judge, complete, env, fix_add, touch};
use crate::common::{model_table, run, runtime, text, wait_output};

struct Judged {
    e: Env,
    loop_judge: FakeModelServer,
    _rt: tokio::runtime::Runtime,
}

fn with_loop_judge(agent: Vec<Turn>, loop_judge: Script) -> Judged {
    let e = env(
        PLAN,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let rt = runtime();
    let loop_judge = rt.block_on(FakeModelServer::start(loop_judge)).unwrap();
    let config = fs::read_to_string(e.path().join("tether.toml")).unwrap();
    fs::write(
        e.path().join("tether.toml"),
        format!(
            "{config}\n{}timeout_secs = 10\n",
            model_table("loop_judge", Api::OpenAiChat, &loop_judge, "small-model")
        ),
    )
    .unwrap();
    Judged {
        e,
        loop_judge,
        _rt: rt,
    }
}

fn says(verdict: &str, reason: &str) -> Turn {
    Turn::text(json!({"verdict": verdict, "reason": reason}).to_string()).with_usage(300, 20)
}

fn finishing() -> Vec<Turn> {
    vec![fix_add(), complete("add"), Turn::text("Fixed add.")]
}

fn events(s: &Store) -> Vec<Event> {
    let run = s.latest_run().unwrap().unwrap();
    s.events(&run.id, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect()
}

#[test]
fn blocked_asks_a_person_and_no_iteration_runs_until_they_answer() {
    let mut agent = vec![
        touch("a.txt"),
        Turn::text("I need the staging password to go on."),
    ];
    agent.extend(finishing());
    let j = with_loop_judge(
        agent,
        Script::turns([
            says(
                "blocked",
                "The agent waits for a password only a person has.",
            ),
            says("continue", "fine"),
        ]),
    );
    let e = &j.e;
    let child = e.spawn(&["run", "--approve"]);
    e.wait_for("the loop judge's question", |s| {
        !s.pending_questions().unwrap().is_empty()
    });
    let q = e.store().pending_questions().unwrap().remove(0);
    assert!(
        q.question
            .contains("thinks the agent is stuck: The agent waits for a password"),
        "{}",
        q.question
    );
    assert_eq!(
        e.agent.request_count(),
        2,
        "no iteration while the question waits"
    );
    let request = &j.loop_judge.requests()[0].raw_body;
    assert!(
        request.contains("add: Add numbers") && request.contains("staging password"),
        "{request}"
    );
    let out = run(
        e.path(),
        &["answer", q.id.as_str(), "use the one in .env.example"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let prompt = &e.agent.requests()[2].raw_body;
    assert!(prompt.contains("use the one in .env.example"), "{prompt}");
    let store = e.store();
    let state = store.latest_run().unwrap().unwrap().state;
    assert_eq!(
        state.loop_judge_usage.tokens(),
        640,
        "two readings of 320 tokens"
    );
    assert!(events(&store).iter().any(|ev| matches!(
        ev,
        Event::JudgeUsage {
            judge: JudgeRole::Loop,
            ..
        }
    )));
}

#[test]
fn a_failing_loop_judge_never_stops_the_run_and_is_switched_off_after_three() {
    let mut agent = Vec::new();
    for f in ["a", "b", "c", "d"] {
        agent.extend([touch(f), Turn::text("working")]);
    }
    agent.extend(finishing());
    let j = with_loop_judge(agent, Script::turns([Turn::text("garbage, not JSON")]));
    j.loop_judge.fault_next(2, Fault::Status(500));
    let e = &j.e;
    let out = e.run(&["run", "--approve"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
    // Two 500s and one garbage answer: off after the third; the later iterations ask nothing.
    assert_eq!(j.loop_judge.request_count(), 3);
    assert!(
        e.rules().contains(&"loop_judge_off".to_owned()),
        "{:?}",
        e.rules()
    );
    assert!(
        text(&out.stderr).contains("the loop judge failed 3 times in a row"),
        "{}",
        text(&out.stderr)
    );
}

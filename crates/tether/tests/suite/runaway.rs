//! The cost of a runaway, side by side: a goal the agent can never finish (it changes a file
//! and asks for a sign-off every iteration), an always-rejecting judge, `max_iterations = 50`.
//! Without the circuit breaker (`escalate_after_rejects = 0`, today's behaviour before it)
//! every iteration costs a judge session until the budget is gone; with the defaults a person
//! is asked after three rejections. The figures are printed (`-- --nocapture`) and the bar is
//! checked: at most 3 judge calls and 5 agent iterations before the question.

use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Seq, Store};

use super::goal_run::support::{Env, PLAN, complete, env, fix_add, touch, verdict};
use crate::common::{run, text, wait_output};

/// Agent tokens per model call and judge tokens per session, as the fakes report them.
const AGENT: (u64, u64) = (8000, 400);
const JUDGE: (u64, u64) = (12000, 300);

fn runaway(extra: &str) -> Env {
    let mut agent = vec![
        fix_add().with_usage(AGENT.0, AGENT.1),
        complete("add").with_usage(AGENT.0, AGENT.1),
        Turn::text("done").with_usage(AGENT.0, AGENT.1),
    ];
    for i in 1..50 {
        agent.extend([
            touch(&format!("f{i}.txt")).with_usage(AGENT.0, AGENT.1),
            complete("add").with_usage(AGENT.0, AGENT.1),
            Turn::text("done now").with_usage(AGENT.0, AGENT.1),
        ]);
    }
    let judge: Vec<Turn> = (0..50)
        .map(|_| {
            verdict("reject", "src/lib.rs", "a + b", &["a real test"]).with_usage(JUDGE.0, JUDGE.1)
        })
        .collect();
    env(
        PLAN,
        Script::turns(agent),
        Script::turns(judge),
        &format!("[loop]\nmax_iterations = 50\n{extra}"),
    )
}

/// Iterations, judge sessions and tokens the run spent.
fn spent(store: &Store) -> (u32, usize, u64) {
    let run = store.latest_run().unwrap().unwrap();
    let judged = store
        .events(&run.id, Seq(0), usize::MAX)
        .unwrap()
        .iter()
        .filter(|e| matches!(e.event, Some(Event::GoalVerdict { .. })))
        .count();
    (
        run.state.iteration,
        judged,
        run.state.total_usage().tokens(),
    )
}

#[test]
fn the_breaker_asks_after_three_judge_calls_where_the_old_loop_ran_to_its_budget() {
    let old = runaway("escalate_after_rejects = 0\n");
    let out = old.run(&["run", "--approve"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let (old_iterations, old_judged, old_tokens) = spent(&old.store());

    let new = runaway("");
    let child = new.spawn(&["run", "--approve"]);
    new.wait_for("the breaker's question", |s| {
        !s.pending_questions().unwrap().is_empty()
    });
    let (iterations, judged, tokens) = spent(&new.store());
    let q = new.store().pending_questions().unwrap().remove(0);
    let out = run(new.path(), &["answer", q.id.as_str(), "pause"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    wait_output(child);

    println!(
        "runaway, max_iterations = 50, always-reject judge: without the breaker {old_iterations} \
         iterations, {old_judged} judge calls, {old_tokens} tokens; with the defaults \
         {iterations} iterations, {judged} judge calls, {tokens} tokens before a person is asked"
    );
    assert_eq!((old_iterations, old_judged), (50, 50));
    assert!(
        judged <= 3 && iterations <= 5,
        "{iterations} iterations, {judged} judge calls"
    );
    assert!(tokens * 10 < old_tokens, "{tokens} vs {old_tokens}");
}

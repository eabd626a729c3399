//! `[loop] context`: a goal run whose iterations continue the agent's session asks the executor
//! to, with the plan and what is owed as the continuing prompt and a whole prompt framed for it;
//! a fresh run asks for a fresh context every time; an executor that started fresh instead is
//! recorded with why.

use tether_agent::Context;
use tether_config::IterationContext;
use tether_core::goal::GoalSpec;
use tether_store::{Event, Seq};

use super::goal::{Fixture, PLAN, scripted, spec, start};
use crate::common::Step;

fn continuing(max: u32) -> GoalSpec {
    GoalSpec {
        context: IterationContext::Continue,
        ..spec(Some(max))
    }
}

#[tokio::test]
async fn a_continuing_run_asks_to_continue_with_the_plan_and_what_is_owed() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![Step::Say("wrote the notes"), Step::Say("more notes")]);
    start(&f.deps(exec.clone()), continuing(2)).await;
    let contexts = exec.contexts.lock().unwrap().clone();
    assert_eq!(contexts.len(), 2);
    let Context::Continue(second) = &contexts[1] else {
        panic!("a fresh context asked for: {contexts:?}");
    };
    assert!(second.starts_with("Next iteration"), "{second}");
    assert!(second.contains("## greet — Greeting"), "the plan: {second}");
    assert!(
        second.contains("wrote the notes"),
        "what iteration 1 said: {second}"
    );
    assert!(
        !second.contains("You work in a loop"),
        "no framing again: {second}"
    );
    let whole = exec.prompt(2);
    assert!(whole.contains("in one conversation"), "{whole}");
    assert!(whole.contains("wrote the notes"), "{whole}");
}

#[tokio::test]
async fn a_fresh_run_asks_for_a_fresh_context_every_time() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![Step::Say("wrote the notes"), Step::Say("more notes")]);
    start(&f.deps(exec.clone()), spec(Some(2))).await;
    let contexts = exec.contexts.lock().unwrap().clone();
    assert_eq!(contexts, [Context::Fresh, Context::Fresh]);
    assert!(exec.prompt(2).contains("in a fresh context"));
}

#[tokio::test]
async fn a_turn_that_started_fresh_instead_is_recorded_with_why() {
    let f = Fixture::new(PLAN);
    let exec = scripted(vec![
        Step::Say("wrote the notes"),
        Step::Fresh(
            "the agent's last session could not be resumed",
            "more notes",
        ),
    ]);
    let (run, _) = start(&f.deps(exec), continuing(2)).await;
    let fresh: Vec<(u32, String)> = f
        .store()
        .events(&run, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            Some(Event::FreshContext { n, reason }) => Some((n, reason)),
            _ => None,
        })
        .collect();
    assert_eq!(
        fresh,
        [(
            2,
            "the agent's last session could not be resumed".to_owned()
        )]
    );
}

//! The circuit breaker, end to end: a judge that always rejects is called exactly
//! `escalate_after_rejects` times, then one question with the choices reaches a person
//! (answered here with `tether answer`), and each choice does what it says. A second
//! `complete_goal` on an unchanged tree makes no judge request and still counts.

use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Question, Seq, Store};

use super::goal_run::support::{
    Env, PLAN, accepting_judge, complete, env, fix_add, touch, verdict,
};
use crate::common::{run, text, wait_output};

/// An iteration that changes a file and asks for a sign-off of `add`.
fn attempt(file: &str) -> [Turn; 3] {
    [touch(file), complete("add"), Turn::text("done, I think")]
}

/// The first iteration: fixes `add` (so verify passes and the judge is asked) and asks.
fn first_attempt() -> [Turn; 3] {
    [fix_add(), complete("add"), Turn::text("fixed, I think")]
}

fn reject() -> Turn {
    verdict(
        "reject",
        "src/lib.rs",
        "a - b",
        &["add still subtracts", "no test"],
    )
}

/// A run whose three attempts are rejected, then `after` for the agent's next iterations,
/// and `judge_after` for the judge's next sessions.
fn rejected_thrice(after: Vec<Turn>, judge_after: Vec<Turn>, extra: &str) -> Env {
    let mut agent: Vec<Turn> = first_attempt().into();
    agent.extend(["b", "c"].iter().flat_map(|f| attempt(f)));
    agent.extend(after);
    let mut judge = vec![reject(), reject(), reject()];
    judge.extend(judge_after);
    env(PLAN, Script::turns(agent), Script::turns(judge), extra)
}

fn wait_for_question(e: &Env) -> Question {
    e.wait_for("the breaker's question", |s: &Store| {
        !s.pending_questions().unwrap().is_empty()
    });
    e.store().pending_questions().unwrap().remove(0)
}

fn answer(e: &Env, q: &Question, text_: &str) {
    let out = run(e.path(), &["answer", q.id.as_str(), text_]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn three_rejects_ask_a_person_with_the_choices_and_pause_pauses() {
    let e = rejected_thrice(Vec::new(), Vec::new(), "");
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    assert_eq!(e.judge.request_count(), 3, "exactly three judge sessions");
    assert_eq!(
        q.options,
        [
            "continue",
            "change the contract",
            "cancel the goal",
            "pause"
        ]
    );
    assert!(
        q.question.contains("`add` was rejected 3 times in a row"),
        "{}",
        q.question
    );
    assert!(
        q.context.contains("- add still subtracts") && q.context.contains("- no test"),
        "{}",
        q.context
    );
    answer(&e, &q, "4");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("after goal `add` was rejected 3 times in a row"),
        "{}",
        text(&out.stdout)
    );
    assert!(e.rules().contains(&"circuit_breaker".to_owned()));
    assert_eq!(
        e.agent.request_count(),
        9,
        "no iteration after the question"
    );
}

#[test]
fn continue_goes_on_with_the_persons_word_and_can_still_sign_off() {
    let after = attempt("d").to_vec();
    let e = rejected_thrice(after, accepting_judge(), "");
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    answer(&e, &q, "continue");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
    let prompt = e.agent.requests()[9].raw_body.clone();
    assert!(prompt.contains("Keep working on goal `add`"), "{prompt}");
}

#[test]
fn free_text_is_passed_to_the_agent() {
    let e = rejected_thrice(
        vec![Turn::text("ok")],
        Vec::new(),
        "[loop]\nmax_iterations = 4\n",
    );
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    answer(&e, &q, "use a lookup table instead");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let prompt = e.agent.requests()[9].raw_body.clone();
    assert!(
        prompt.contains("About goal `add`: use a lookup table instead"),
        "{prompt}"
    );
}

#[test]
fn cancel_the_goal_cancels_it_as_the_person() {
    let e = rejected_thrice(Vec::new(), Vec::new(), "");
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    answer(&e, &q, "3");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "cancelled");
    let cancel = e
        .store()
        .latest_cancellation("plan.md", "add")
        .unwrap()
        .unwrap();
    assert!(cancel.cancel.by_person);
    assert!(e.plan().contains("add cancelled by"), "{}", e.plan());
}

#[test]
fn change_the_contract_pauses_for_an_approval() {
    let e = rejected_thrice(Vec::new(), Vec::new(), "");
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    answer(&e, &q, "change the contract");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("chose to change the contract of goal `add`")
            && text(&out.stdout).contains("tether plan approve"),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn nobody_to_ask_pauses_with_the_reason() {
    let e = rejected_thrice(Vec::new(), Vec::new(), "[human]\nthreshold = 0\n");
    let out = e.run(&["run", "--approve"]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("goal `add` was rejected 3 times in a row; nobody can be asked"),
        "{stdout}"
    );
}

#[test]
fn an_unchanged_tree_is_not_judged_again_but_counts() {
    // One real attempt, then two on the same tree.
    let mut agent: Vec<Turn> = first_attempt().into();
    for _ in 0..2 {
        agent.extend([complete("add"), Turn::text("please check again")]);
    }
    let e = env(PLAN, Script::turns(agent), Script::turns([reject()]), "");
    let child = e.spawn(&["run", "--approve"]);
    let q = wait_for_question(&e);
    assert_eq!(
        e.judge.request_count(),
        1,
        "the unchanged tree was not judged again"
    );
    let store = e.store();
    let run = store.latest_run().unwrap().unwrap();
    let refused = store
        .events(&run.id, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter(|ev| matches!(ev.event, Some(Event::NothingChanged { .. })))
        .count();
    assert_eq!(refused, 2);
    answer(&e, &q, "pause");
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
}

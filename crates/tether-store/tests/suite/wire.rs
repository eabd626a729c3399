//! The JSON shape of events, which `tether run --events jsonl` prints for other programs.
//!
//! A snapshot of one event of every type pins the wire format: a rename shows up as a diff.

use serde_json::json;
use tether_store::{
    Event, JudgeRole, Outcome, Rule, RunKind, Seq, Store, StoreOptions, Unit, Verdict,
};

use super::common::frozen;

fn one_of_each(question_id: tether_store::QuestionId) -> Vec<Event> {
    vec![
        Event::IterationStarted { n: 1 },
        Event::ToolCalled {
            n: 1,
            tool: "bash".into(),
            summary: "cargo test".into(),
        },
        Event::IterationUsage {
            n: 1,
            input_tokens: 1200,
            cached_input_tokens: 800,
            cache_write_input_tokens: 200,
            output_tokens: 340,
            cost_usd: Some(0.0125),
            goals: vec!["g1".into()],
            duration_ms: 4200,
        },
        Event::JudgeUsage {
            judge: JudgeRole::SignOff,
            goal_id: Some("g1".into()),
            calls: 2,
            input_tokens: 3000,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 120,
            cost_usd: Some(0.0105),
        },
        Event::BudgetSpent {
            unit: Unit::Tokens,
            used: 512_340.0,
            limit: 500_000.0,
            goal_id: None,
            shared: true,
        },
        Event::BudgetRaised {
            unit: Unit::Tokens,
            amount: 500_000.0,
            goal_id: None,
            by: "alice".into(),
        },
        Event::IterationCompleted {
            n: 1,
            summary: "tests pass".into(),
        },
        Event::IterationFailed {
            n: 2,
            error: "model timed out".into(),
        },
        Event::PauseRequested {
            by: "cli".into(),
            author: tether_store::Author::Person,
        },
        Event::Paused {
            reason: "requested by cli".into(),
        },
        Event::Resumed {
            by: "web".into(),
            reset_budget: true,
            settings: None,
        },
        Event::MessageQueued {
            text: "use sqlite".into(),
            by: "cli".into(),
            author: tether_store::Author::Person,
        },
        Event::MessageQueued {
            text: "the parser is done".into(),
            by: "the agent".into(),
            author: tether_store::Author::Agent,
        },
        Event::SideQuestion {
            question: "why the new table?".into(),
            answer: "The plan's goal g2 asks for it.".into(),
            by: "ana".into(),
            model: "openai-chat small".into(),
            calls: 2,
            input_tokens: 1500,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 40,
            cost_usd: None,
        },
        Event::PauseRequested {
            by: "the agent".into(),
            author: tether_store::Author::Agent,
        },
        Event::MessageDelivered { n: 3 },
        Event::FreshContext {
            n: 3,
            reason: "the agent's last turn failed (the agent's model failed)".into(),
        },
        Event::QuestionAsked {
            question_id: question_id.clone(),
        },
        Event::QuestionAnswered {
            question_id: question_id.clone(),
            channel: "zulip".into(),
            responder: "alice".into(),
        },
        Event::QuestionRepeated {
            question_id: question_id.clone(),
        },
        Event::QuestionCancelled { question_id },
        Event::RuleFired {
            rule: Rule::SpinGuard,
            reason: "2 iterations without a tool call".into(),
        },
        Event::GoalVerdict {
            goal_id: "cache-layer".into(),
            verdict: Verdict::Reject,
            reason: "p95 not measured".into(),
        },
        Event::ContractApproved {
            plan_path: "plan.md".into(),
            goal_id: "cache-layer".into(),
            contract_hash: "sha256:abc".into(),
            by: "alice".into(),
        },
        Event::WaitingForUsageLimit {
            n: 4,
            message: "Claude AI usage limit reached|1767225600".into(),
            until_ms: 1_767_225_630_000,
        },
        Event::CancelRequested { by: "web".into() },
        Event::RunFinished {
            outcome: Outcome::Cancelled,
        },
    ]
}

#[test]
fn events_jsonl_has_a_stable_shape() {
    let store = Store::open_in_memory_with(&StoreOptions {
        clock: frozen,
        ..StoreOptions::default()
    })
    .unwrap();
    let run = store
        .create_run(
            RunKind::Goal,
            "/work".as_ref(),
            &json!({ "plan": "plan.md", "max_iterations": 20 }),
        )
        .unwrap();
    let question_id: tether_store::QuestionId = "q-7k2m9x".parse().unwrap();
    let events = one_of_each(question_id);
    store.append_all(Some(&run), &events).unwrap();

    let mut lines = Vec::new();
    for stored in store.events_all_after(Seq::START, usize::MAX).unwrap() {
        let event = stored.event.as_ref().unwrap();
        assert_eq!(
            stored.payload["type"],
            event.kind(),
            "kind() matches the tag"
        );
        assert_eq!(stored.kind, event.kind());
        lines.push(serde_json::to_string(&stored).unwrap());
    }
    let jsonl = lines.join("\n").replace(run.as_str(), "r-RUNID");
    insta::assert_snapshot!(jsonl);
}

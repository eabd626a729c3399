//! The projection kept during appends always equals a fresh fold of the journal.
//!
//! Random event sequences (including ones no real loop would produce: restarts, interleaved
//! questions, finishing twice) are appended one by one or in batches; after each batch the
//! stored `runs` row and `iterations` rows must equal what rebuilding from the journal gives.

use proptest::prelude::*;
use serde_json::json;
use tether_store::{Event, JudgeRole, Outcome, QuestionId, Rule, RunKind, Unit, Verdict};

use super::common::{assert_projection_matches_journal, memory_store, ralph_run};

fn text() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["", "a", "some words", "ünïcode ✓"]).prop_map(str::to_owned)
}

fn question() -> impl Strategy<Value = QuestionId> {
    prop::sample::select(vec!["q-aaaaaa", "q-bbbbbb", "q-cccccc"])
        .prop_map(|id| id.parse().unwrap())
}

fn event() -> impl Strategy<Value = Event> {
    let n = 1u32..6;
    prop_oneof![
        1 => (prop::sample::select(RunKind::ALL.to_vec()), 0u64..30).prop_map(|(kind, max)| {
            Event::RunStarted { kind, spec: json!({ "max_iterations": max }) }
        }),
        6 => n.clone().prop_map(|n| Event::IterationStarted { n }),
        5 => (n.clone(), text()).prop_map(|(n, summary)| Event::IterationCompleted { n, summary }),
        3 => (n.clone(), text()).prop_map(|(n, error)| Event::IterationFailed { n, error }),
        2 => (n.clone(), text(), text())
            .prop_map(|(n, tool, summary)| Event::ToolCalled { n, tool, summary }),
        2 => (n.clone(), 0u64..5000, 0u64..5000, prop::option::of(0u8..8)).prop_map(
            // Quarter dollars, so the sums are exact however they are stored.
            |(n, input_tokens, output_tokens, quarters)| Event::IterationUsage {
                n, input_tokens, cached_input_tokens: input_tokens / 2,
                cache_write_input_tokens: input_tokens / 4, output_tokens,
                cost_usd: quarters.map(|q| f64::from(q) / 4.0), goals: vec!["g1".into()],
                duration_ms: u64::from(n) * 10,
            }
        ),
        1 => (0u64..5000, prop::option::of(0u8..8), any::<bool>()).prop_map(
            |(input_tokens, quarters, signoff)| Event::JudgeUsage {
                judge: if signoff { JudgeRole::SignOff } else { JudgeRole::Loop },
                goal_id: signoff.then(|| "g1".to_owned()), calls: 2,
                input_tokens, cached_input_tokens: 0, cache_write_input_tokens: input_tokens / 3,
                output_tokens: 10,
                cost_usd: quarters.map(|q| f64::from(q) / 4.0),
            }
        ),
        1 => (0u8..4, 0u32..100, any::<bool>()).prop_map(|(unit, amount, shared)| {
            Event::BudgetSpent {
                unit: Unit::ALL[usize::from(unit)], used: f64::from(amount), limit: 10.0,
                goal_id: None, shared,
            }
        }),
        1 => (0u8..4, 0u32..100, any::<bool>()).prop_map(|(unit, amount, goal)| {
            Event::BudgetRaised {
                unit: Unit::ALL[usize::from(unit)], amount: f64::from(amount),
                goal_id: goal.then(|| "g1".to_owned()), by: "cli".into(),
            }
        }),
        1 => (text(), prop::sample::select(tether_store::Author::ALL.to_vec()))
            .prop_map(|(by, author)| Event::PauseRequested { by, author }),
        1 => text().prop_map(|reason| Event::Paused { reason }),
        1 => (text(), any::<bool>(), any::<bool>()).prop_map(|(by, reset_budget, accepted)| {
            let settings = accepted.then(|| json!({ "accepted_by": by }));
            Event::Resumed { by, reset_budget, settings }
        }),
        1 => text().prop_map(|by| Event::CancelRequested { by }),
        2 => (text(), text(), prop::sample::select(tether_store::Author::ALL.to_vec()))
            .prop_map(|(text, by, author)| Event::MessageQueued { text, by, author }),
        1 => question().prop_map(|question_id| Event::QuestionRepeated { question_id }),
        1 => n.clone().prop_map(|n| Event::MessageDelivered { n }),
        2 => question().prop_map(|question_id| Event::QuestionAsked { question_id }),
        2 => (question(), text(), text()).prop_map(|(question_id, channel, responder)| {
            Event::QuestionAnswered { question_id, channel, responder }
        }),
        1 => question().prop_map(|question_id| Event::QuestionCancelled { question_id }),
        1 => (prop::sample::select(Rule::ALL.to_vec()), text())
            .prop_map(|(rule, reason)| Event::RuleFired { rule, reason }),
        1 => (text(), prop::sample::select(Verdict::ALL.to_vec()), text())
            .prop_map(|(goal_id, verdict, reason)| Event::GoalVerdict { goal_id, verdict, reason }),
        1 => (n, text(), 0i64..1_000_000).prop_map(|(n, message, until_ms)| {
            Event::WaitingForUsageLimit { n, message, until_ms }
        }),
        1 => prop::sample::select(Outcome::ALL.to_vec())
            .prop_map(|outcome| Event::RunFinished { outcome }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn projection_after_appends_equals_a_rebuild_from_the_journal(
        batches in prop::collection::vec(prop::collection::vec(event(), 1..4), 0..25)
    ) {
        let store = memory_store();
        let run = ralph_run(&store);
        for batch in &batches {
            if let [single] = batch.as_slice() {
                store.append(Some(&run), single).unwrap();
            } else {
                store.append_all(Some(&run), batch).unwrap();
            }
            assert_projection_matches_journal(&store, &run);
        }
        let journal: Vec<Event> = store
            .events(&run, tether_store::Seq::START, usize::MAX)
            .unwrap()
            .into_iter()
            .skip(1)
            .map(|e| e.event.unwrap())
            .collect();
        prop_assert_eq!(journal, batches.concat());
    }
}

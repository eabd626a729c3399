use serde_json::json;

use super::*;
use crate::vocab::Outcome;

/// Folds events with seqs 1, 2, 3, ... and at_ms 1000, 2000, ...
fn fold(events: &[Event]) -> RunState {
    let mut state = RunState::default();
    for (i, event) in (1..).zip(events) {
        state.apply(Seq(i), i * 1000, event);
    }
    state
}

fn started(max: u64) -> Event {
    Event::RunStarted {
        kind: RunKind::Ralph,
        spec: json!({ "prompt": "p", "max_iterations": max }),
    }
}

fn qid(s: &str) -> QuestionId {
    s.parse().unwrap()
}

#[test]
fn run_started_takes_kind_and_budget_from_the_spec() {
    let state = fold(&[started(7)]);
    assert_eq!(state.kind, Some(RunKind::Ralph));
    assert_eq!(state.max_iterations, Some(7));
    assert_eq!(state.status, RunStatus::Running);
    assert_eq!(state.last_event_seq, Seq(1));
    assert_eq!(state.last_event_kind.as_deref(), Some("run_started"));
    assert_eq!(state.last_event_at_ms, Some(1000));
}

#[test]
fn a_crash_mid_iteration_leaves_only_ended_iterations_counted() {
    let state = fold(&[
        started(5),
        Event::IterationStarted { n: 1 },
        Event::IterationCompleted {
            n: 1,
            summary: "ok".into(),
        },
        Event::IterationStarted { n: 2 },
    ]);
    assert_eq!(state.iteration, 1);
    assert_eq!(state.in_progress, Some(2));
}

#[test]
fn failures_count_consecutively_and_reset_on_success() {
    let fail = |n| Event::IterationFailed {
        n,
        error: "boom".into(),
    };
    let state = fold(&[started(5), fail(1), fail(2)]);
    assert_eq!((state.iteration, state.consecutive_failures), (2, 2));
    let state = fold(&[
        started(5),
        fail(1),
        Event::IterationCompleted {
            n: 2,
            summary: "ok".into(),
        },
    ]);
    assert_eq!(state.consecutive_failures, 0);
}

#[test]
fn pause_request_then_pause_then_resume_with_budget_reset() {
    let mut events = vec![
        started(2),
        Event::IterationCompleted {
            n: 2,
            summary: "s".into(),
        },
        Event::PauseRequested { by: "cli".into() },
    ];
    assert_eq!(fold(&events).pause_requested.as_deref(), Some("cli"));
    events.push(Event::Paused {
        reason: "asked".into(),
    });
    let paused = fold(&events);
    assert_eq!(paused.status, RunStatus::Paused);
    assert_eq!(paused.pause_requested, None);
    assert_eq!(paused.budget_used(), 2);
    events.push(Event::Resumed {
        by: "cli".into(),
        reset_budget: true,
    });
    let resumed = fold(&events);
    assert_eq!(resumed.status, RunStatus::Running);
    assert_eq!(resumed.budget_used(), 0);
}

#[test]
fn messages_queue_until_delivered() {
    let queue = |text: &str| Event::MessageQueued {
        text: text.into(),
        by: "me".into(),
    };
    let state = fold(&[started(5), queue("a"), queue("b")]);
    let texts: Vec<_> = state
        .queued_messages
        .iter()
        .map(|m| m.text.as_str())
        .collect();
    assert_eq!(texts, ["a", "b"]);
    assert_eq!(state.queued_messages[1].seq, Seq(3));
    let state = fold(&[
        started(5),
        queue("a"),
        Event::MessageDelivered { n: 1 },
        queue("c"),
    ]);
    assert_eq!(state.queued_messages.len(), 1);
    assert_eq!(state.queued_messages[0].text, "c");
}

#[test]
fn a_pending_question_means_waiting_until_every_one_is_answered() {
    let asked = |id: &str| Event::QuestionAsked {
        question_id: qid(id),
    };
    let answered = |id: &str| Event::QuestionAnswered {
        question_id: qid(id),
        channel: "cli".into(),
        responder: "me".into(),
    };
    let mut events = vec![started(5), asked("q-aaaaaa"), asked("q-bbbbbb")];
    assert_eq!(fold(&events).status, RunStatus::WaitingForInput);
    events.push(answered("q-aaaaaa"));
    assert_eq!(fold(&events).status, RunStatus::WaitingForInput);
    events.push(Event::QuestionCancelled {
        question_id: qid("q-bbbbbb"),
    });
    let state = fold(&events);
    assert_eq!(state.status, RunStatus::Running);
    assert!(state.pending_questions.is_empty());
}

#[test]
fn interrupted_with_a_pending_question_waits_for_input_and_resume_keeps_waiting() {
    let mut events = vec![
        started(5),
        Event::IterationStarted { n: 1 },
        Event::QuestionAsked {
            question_id: qid("q-aaaaaa"),
        },
        Event::RunFinished {
            outcome: Outcome::Interrupted,
        },
    ];
    let state = fold(&events);
    assert_eq!(state.status, RunStatus::WaitingForInput);
    assert_eq!(state.in_progress, None);
    events.push(Event::Resumed {
        by: "cli".into(),
        reset_budget: false,
    });
    assert_eq!(fold(&events).status, RunStatus::WaitingForInput);
}

#[test]
fn finishing_maps_each_outcome_to_a_status_and_clears_requests() {
    for outcome in Outcome::ALL {
        let state = fold(&[
            started(5),
            Event::CancelRequested { by: "web".into() },
            Event::RunFinished { outcome: *outcome },
        ]);
        assert_eq!(state.outcome, Some(*outcome));
        assert_eq!(state.cancel_requested, None);
        assert_eq!(
            state.status.as_str(),
            match outcome {
                Outcome::Interrupted => "paused",
                other => other.as_str(),
            }
        );
    }
}

#[test]
fn state_survives_a_json_round_trip_and_old_rows_default_missing_fields() {
    let state = fold(&[started(3), Event::IterationStarted { n: 1 }]);
    let json = serde_json::to_string(&state).unwrap();
    assert_eq!(serde_json::from_str::<RunState>(&json).unwrap(), state);
    let old: RunState = serde_json::from_str(r#"{"status":"paused"}"#).unwrap();
    assert_eq!(old.status, RunStatus::Paused);
    assert_eq!(old.iteration, 0);
}

#[test]
fn a_usage_limit_wait_shows_until_the_iteration_runs_again_and_is_no_failure() {
    let wait = Event::WaitingForUsageLimit {
        n: 1,
        message: "usage limit reached".into(),
        until_ms: 90_000,
    };
    let state = fold(&[started(5), Event::IterationStarted { n: 1 }, wait.clone()]);
    let expected = UsageLimitWait {
        n: 1,
        message: "usage limit reached".into(),
        until_ms: 90_000,
    };
    assert_eq!(state.usage_limit, Some(expected));
    assert_eq!((state.iteration, state.in_progress), (0, Some(1)));
    assert_eq!(state.consecutive_failures, 0);
    assert_eq!(state.status, RunStatus::Running);
    let again = fold(&[
        started(5),
        Event::IterationStarted { n: 1 },
        wait.clone(),
        Event::IterationStarted { n: 1 },
    ]);
    assert_eq!(again.usage_limit, None);
    let cancelled = fold(&[
        started(5),
        Event::IterationStarted { n: 1 },
        wait,
        Event::RunFinished {
            outcome: Outcome::Cancelled,
        },
    ]);
    assert_eq!(cancelled.usage_limit, None);
}

#[test]
fn a_usage_limit_wait_says_until_when_in_utc() {
    let wait = UsageLimitWait {
        n: 2,
        message: "rate limit".into(),
        until_ms: 1_767_225_600_000 + (14 * 3600 + 5 * 60 + 9) * 1000,
    };
    assert_eq!(
        wait.describe(),
        "waiting for usage limit until 14:05:09 UTC (rate limit)"
    );
}

#[test]
fn usage_sums_tokens_and_the_cost_of_the_turns_that_report_it() {
    let usage = |n, input_tokens, output_tokens, cost_usd| Event::IterationUsage {
        n,
        input_tokens,
        output_tokens,
        cost_usd,
    };
    let state = fold(&[started(5), usage(1, 1000, 200, None)]);
    assert_eq!(state.usage.cost_usd, None);
    assert_eq!(state.usage.describe(), "1000 in / 200 out tokens");
    let state = fold(&[
        started(5),
        usage(1, 1000, 200, None),
        usage(2, 500, 50, Some(0.25)),
        usage(3, 0, 0, Some(0.5)),
    ]);
    let expected = Usage {
        input_tokens: 1500,
        output_tokens: 250,
        cost_usd: Some(0.75),
    };
    assert_eq!(state.usage, expected);
    assert_eq!(
        state.usage.describe(),
        "1500 in / 250 out tokens (≈ $0.7500)"
    );
    assert!(!RunState::default().usage.is_known());
    let json = r#"{"kind":"ralph","status":"running"}"#;
    let old: RunState = serde_json::from_str(json).unwrap();
    assert_eq!(old.usage, Usage::default());
}

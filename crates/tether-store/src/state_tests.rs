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
        Event::PauseRequested {
            by: "cli".into(),
            author: crate::Author::Person,
        },
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
        settings: None,
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
        author: crate::Author::Person,
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
        settings: None,
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
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens,
        cost_usd,
        goals: Vec::new(),
        duration_ms: 0,
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
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
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

#[test]
fn running_time_counts_only_while_running() {
    // Events a second apart: started(1s) → iteration(2s) → paused(3s) → resumed(4s) → asked(5s)
    // → answered(6s) → completed(7s).
    let state = fold(&[
        started(5),
        Event::IterationStarted { n: 1 },
        Event::Paused { reason: "p".into() },
        Event::Resumed {
            by: "cli".into(),
            reset_budget: false,
            settings: None,
        },
        Event::QuestionAsked {
            question_id: qid("q-1"),
        },
        Event::QuestionAnswered {
            question_id: qid("q-1"),
            channel: "cli".into(),
            responder: "me".into(),
        },
        Event::IterationCompleted {
            n: 1,
            summary: String::new(),
        },
    ]);
    // Running 1→2→3 (2s), paused 3→4, running 4→5 (1s), waiting 5→6, running 6→7 (1s).
    assert_eq!(state.running_ms, 4000);
    assert_eq!(state.running_ms_at(7500), 4500);
    assert_eq!(state.spending(7500).duration_secs, 4);
}

#[test]
fn usage_is_charged_to_the_run_each_judge_and_the_goals() {
    let agent = Event::IterationUsage {
        n: 1,
        input_tokens: 1000,
        cached_input_tokens: 400,
        cache_write_input_tokens: 200,
        output_tokens: 100,
        cost_usd: Some(0.5),
        goals: vec!["g1".into(), "g2".into()],
        duration_ms: 2500,
    };
    let judge = |role, goal: Option<&str>| Event::JudgeUsage {
        judge: role,
        goal_id: goal.map(Into::into),
        calls: 1,
        input_tokens: 300,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: 20,
        cost_usd: Some(0.1),
    };
    let state = fold(&[
        started(5),
        agent,
        judge(JudgeRole::SignOff, Some("g1")),
        judge(JudgeRole::Loop, None),
    ]);
    assert_eq!(state.usage.tokens(), 1100);
    assert_eq!(state.judge_usage.tokens(), 320);
    assert_eq!(state.loop_judge_usage.tokens(), 320);
    assert_eq!(state.total_usage().tokens(), 1740);
    let g1 = state.goal_usage["g1"].spending();
    assert_eq!((g1.tokens, g1.iterations, g1.duration_secs), (1420, 1, 2));
    assert!((g1.cost_usd - 0.6).abs() < 1e-9);
    assert_eq!(state.goal_usage["g2"].usage.tokens(), 1100);
    assert_eq!(
        state.usage.describe(),
        "1000 in (400 cache read, 200 cache write) / 100 out tokens (≈ $0.5000)"
    );
    assert_eq!(state.goal_usage["g1"].usage.cache_write_input_tokens, 200);
    assert_eq!(
        state.judge_usage.describe(),
        "300 in / 20 out tokens (≈ $0.1000)"
    );
}

#[test]
fn describe_names_only_the_cache_parts_there_are() {
    let usage = |read, write| Usage {
        input_tokens: 1200,
        cached_input_tokens: read,
        cache_write_input_tokens: write,
        output_tokens: 340,
        cost_usd: Some(0.0123),
    };
    assert_eq!(
        usage(800, 200).describe(),
        "1200 in (800 cache read, 200 cache write) / 340 out tokens (≈ $0.0123)"
    );
    assert_eq!(
        usage(800, 0).describe(),
        "1200 in (800 cache read) / 340 out tokens (≈ $0.0123)"
    );
    assert_eq!(
        usage(0, 1000).describe(),
        "1200 in (1000 cache write) / 340 out tokens (≈ $0.0123)"
    );
}

#[test]
fn usage_events_recorded_before_cache_writes_were_counted_still_read() {
    let old = r#"{"type":"iteration_usage","n":1,"input_tokens":1000,"cached_input_tokens":400,"output_tokens":100}"#;
    let event: Event = serde_json::from_str(old).unwrap();
    let usage = Usage::of(&event);
    assert_eq!(
        (
            usage.input_tokens,
            usage.cached_input_tokens,
            usage.cache_write_input_tokens
        ),
        (1000, 400, 0)
    );
    let judge = r#"{"type":"judge_usage","judge":"loop","input_tokens":30,"output_tokens":5}"#;
    let event: Event = serde_json::from_str(judge).unwrap();
    assert_eq!(Usage::of(&event).cache_write_input_tokens, 0);
    // A new event round-trips its writes; a zero is left out, as old readers expect.
    let new = Event::JudgeUsage {
        judge: JudgeRole::SignOff,
        goal_id: None,
        calls: 1,
        input_tokens: 3000,
        cached_input_tokens: 2000,
        cache_write_input_tokens: 900,
        output_tokens: 10,
        cost_usd: None,
    };
    let text = serde_json::to_string(&new).unwrap();
    assert!(text.contains(r#""cache_write_input_tokens":900"#), "{text}");
    assert_eq!(serde_json::from_str::<Event>(&text).unwrap(), new);
}

#[test]
fn a_spent_budget_is_kept_until_resumed_and_raises_add_up() {
    let spent = Event::BudgetSpent {
        unit: Unit::Tokens,
        used: 1200.0,
        limit: 1000.0,
        goal_id: None,
        shared: false,
    };
    let raise = |unit, amount, goal: Option<&str>| Event::BudgetRaised {
        unit,
        amount,
        goal_id: goal.map(Into::into),
        by: "cli".into(),
    };
    let state = fold(&[
        started(5),
        spent,
        Event::RunFinished {
            outcome: Outcome::BudgetExhausted,
        },
        raise(Unit::Tokens, 500.0, None),
        raise(Unit::Tokens, 500.0, None),
        raise(Unit::CostUsd, 2.0, Some("g1")),
    ]);
    let budget = state.budget_spent.clone().unwrap();
    assert_eq!(
        budget.describe(),
        "the run's token budget spent: 1.2k tokens of 1k tokens"
    );
    assert_eq!(
        budget.raise_hint("r-1"),
        "tether resume r-1 --add-tokens 500k"
    );
    let base = Budget {
        tokens: Some(1000),
        ..Budget::default()
    };
    assert_eq!(state.limits(&base).tokens, Some(2000));
    let goal_base = Budget {
        cost_usd: Some(1.0),
        ..Budget::default()
    };
    assert_eq!(state.goal_limits("g1", &goal_base).cost_usd, Some(3.0));
    assert_eq!(state.goal_limits("g2", &goal_base).cost_usd, Some(1.0));
    let mut resumed = state;
    resumed.apply(
        Seq(99),
        99_000,
        &Event::Resumed {
            by: "cli".into(),
            reset_budget: false,
            settings: None,
        },
    );
    assert_eq!(resumed.budget_spent, None);
}

#[test]
fn settings_a_person_accepted_on_a_resume_are_the_runs_until_the_next_accept() {
    let accepted = json!({"sandbox": {"mode": "off"}});
    let resumed = |settings: Option<serde_json::Value>| Event::Resumed {
        by: "cli".into(),
        reset_budget: false,
        settings,
    };
    let state = fold(&[started(5), Event::Paused { reason: "p".into() }]);
    assert_eq!(state.settings, None);
    let state = fold(&[
        started(5),
        Event::Paused { reason: "p".into() },
        resumed(Some(accepted.clone())),
        Event::Paused { reason: "p".into() },
        resumed(None),
    ]);
    assert_eq!(state.settings, Some(accepted));
    // Not written when there are none, so older readers see the state they know.
    let stored = serde_json::to_value(fold(&[started(5)])).unwrap();
    assert!(stored.get("settings").is_none(), "{stored}");
}

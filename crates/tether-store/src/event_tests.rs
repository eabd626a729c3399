use super::*;

/// One event of each kind a usage series is made of, in [`USAGE_KINDS`]' order.
fn usage_events() -> [Event; 5] {
    [
        Event::IterationStarted { n: 1 },
        Event::IterationUsage {
            n: 1,
            input_tokens: 10,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 1,
            cost_usd: None,
            goals: Vec::new(),
            duration_ms: 0,
        },
        Event::JudgeUsage {
            judge: JudgeRole::SignOff,
            goal_id: None,
            calls: 1,
            input_tokens: 10,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 1,
            cost_usd: None,
        },
        Event::IterationCompleted {
            n: 1,
            summary: "done".into(),
        },
        Event::IterationFailed {
            n: 1,
            error: "boom".into(),
        },
    ]
}

#[test]
fn each_usage_kind_is_the_kind_of_its_event_as_stored_and_as_json() {
    for (kind, event) in USAGE_KINDS.iter().zip(usage_events()) {
        assert_eq!(*kind, event.kind());
        assert_eq!(serde_json::to_value(&event).unwrap()["type"], *kind);
    }
}

#[test]
fn the_usage_kinds_are_plain_words_so_they_are_quoted_as_they_are_in_sql() {
    for kind in USAGE_KINDS {
        assert!(
            !kind.is_empty() && kind.chars().all(|c| c.is_ascii_lowercase() || c == '_'),
            "{kind}"
        );
    }
    assert_eq!(
        usage_kinds_sql(),
        "'iteration_started', 'iteration_usage', 'judge_usage', 'iteration_completed', \
         'iteration_failed'"
    );
}

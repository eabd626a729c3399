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

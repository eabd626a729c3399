//! The events a run's usage series is made of, read alone from a journal that holds many
//! others, on both backends.

use tether_store::{Event, JudgeRole, Seq, Store, StoredEvent};

use super::{Backend, on_both_backends, run};

on_both_backends!(
    usage_events_are_read_alone_newest_first_and_paged_back,
    usage_events_of_an_unknown_run_or_a_run_without_them_are_none,
);

/// Iteration `n` of a chatty run: tool calls and a message around its usage, then its end (a
/// failure when `n` is even).
fn iteration(n: u32) -> Vec<Event> {
    let tool = |k: u32| Event::ToolCalled {
        n,
        tool: "bash".into(),
        summary: format!("bash: step {k} of iteration {n}"),
    };
    vec![
        Event::IterationStarted { n },
        tool(1),
        tool(2),
        Event::MessageQueued {
            text: "keep going".into(),
            by: "ana".into(),
            author: tether_store::Author::Person,
        },
        tool(3),
        Event::IterationUsage {
            n,
            input_tokens: u64::from(n) * 1_000,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 10,
            cost_usd: Some(0.01),
            goals: Vec::new(),
            duration_ms: 500,
        },
        tool(4),
        Event::JudgeUsage {
            judge: JudgeRole::Loop,
            goal_id: None,
            calls: 1,
            input_tokens: 100,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            output_tokens: 1,
            cost_usd: None,
        },
        if n.is_multiple_of(2) {
            Event::IterationFailed {
                n,
                error: "the agent crashed".into(),
            }
        } else {
            Event::IterationCompleted {
                n,
                summary: "done".into(),
            }
        },
    ]
}

/// Whether a usage series is made of `event`, said by its variant.
fn is_usage(event: &StoredEvent) -> bool {
    matches!(
        event.event,
        Some(
            Event::IterationStarted { .. }
                | Event::IterationUsage { .. }
                | Event::JudgeUsage { .. }
                | Event::IterationCompleted { .. }
                | Event::IterationFailed { .. }
        )
    )
}

/// Every event of `run`'s journal.
fn journal(store: &Store, run: &tether_store::RunId) -> Vec<StoredEvent> {
    store.events(run, Seq::START, 1_000).unwrap()
}

fn usage_events_are_read_alone_newest_first_and_paged_back(b: &Backend) {
    let store = &b.store;
    let (one, two) = (run(store), run(store));
    for n in 1..=4 {
        store.append_all(Some(&one), &iteration(n)).unwrap();
        store.append_all(Some(&two), &iteration(n)).unwrap();
    }
    let whole = journal(store, &one);
    assert_eq!(whole.len(), 1 + 4 * 9);
    let usage: Vec<StoredEvent> = whole.into_iter().filter(is_usage).collect();
    assert_eq!(usage.len(), 4 * 4);

    // All of them, oldest first, of this run alone.
    assert_eq!(store.usage_events_before(&one, None, 100).unwrap(), usage);
    // The newest `limit`.
    let newest = store.usage_events_before(&one, None, 7).unwrap();
    assert_eq!(newest, usage[9..]);
    // Paged back from the first one shown, to the start.
    let older = store
        .usage_events_before(&one, Some(newest[0].seq), 7)
        .unwrap();
    assert_eq!(older, usage[2..9]);
    let oldest = store
        .usage_events_before(&one, Some(older[0].seq), 7)
        .unwrap();
    assert_eq!(oldest, usage[..2]);
    assert!(
        store
            .usage_events_before(&one, Some(oldest[0].seq), 7)
            .unwrap()
            .is_empty()
    );
    // `before` need not be a usage event's seq: below iteration 4's last tool call, which
    // came after its start and its agent's usage.
    let tool_call = journal(store, &one)
        .into_iter()
        .rfind(|e| e.kind == "tool_called")
        .unwrap();
    let below = store
        .usage_events_before(&one, Some(tool_call.seq), 3)
        .unwrap();
    assert_eq!(below, usage[11..14]);
    // The other run's own, none of the first's.
    let theirs = store.usage_events_before(&two, None, 100).unwrap();
    assert_eq!(
        theirs,
        journal(store, &two)
            .into_iter()
            .filter(is_usage)
            .collect::<Vec<_>>()
    );
    assert!(theirs.iter().all(|e| e.run_id.as_ref() == Some(&two)));
}

fn usage_events_of_an_unknown_run_or_a_run_without_them_are_none(b: &Backend) {
    let store = &b.store;
    let unknown = "r-zzzzzz".parse().unwrap();
    // As `events_before`: an unknown run has no events, not an error.
    assert!(store.events_before(&unknown, None, 10).unwrap().is_empty());
    assert!(
        store
            .usage_events_before(&unknown, None, 10)
            .unwrap()
            .is_empty()
    );
    let quiet = run(store);
    let chatty = run(store);
    store
        .append_all(
            Some(&chatty),
            &iteration(1)
                .into_iter()
                .filter(|e| matches!(e, Event::ToolCalled { .. } | Event::MessageQueued { .. }))
                .collect::<Vec<_>>(),
        )
        .unwrap();
    for id in [&quiet, &chatty] {
        assert!(!store.events_before(id, None, 10).unwrap().is_empty());
        assert!(store.usage_events_before(id, None, 10).unwrap().is_empty());
    }
}

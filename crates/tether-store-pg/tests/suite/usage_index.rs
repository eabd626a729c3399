//! The index of the events a usage series is made of: it names the usage kinds, and the
//! statement the store reads them with is planned through it even in the generic plan
//! PostgreSQL keeps for a statement it runs often (which, without it, walks the whole journal
//! backwards by seq in a store of few runs) — asked of PostgreSQL with `EXPLAIN`, not read from
//! its statistics, which a busy server publishes late.

use tether_store::{Event, USAGE_KINDS};

use super::common::{raw, run, store};

#[tokio::test]
async fn usage_events_are_read_through_their_own_index_in_a_generic_plan() {
    let (store, db) = store().await;
    let client = raw(&db).await;
    let def: String = client
        .query_one(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'events_usage_by_run'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let kinds: Vec<String> = USAGE_KINDS.iter().map(|k| format!("'{k}'::text")).collect();
    assert!(
        def.ends_with(&format!(
            "(run_id, seq) WHERE (kind = ANY (ARRAY[{}]))",
            kinds.join(", ")
        )),
        "{def}"
    );

    // A few chatty runs: many tool calls between each iteration's start, usage and end.
    let mut runs = Vec::new();
    for _ in 0..3 {
        let id = run(&store).await;
        for n in 1..=20 {
            store.append_all(Some(&id), &iteration(n)).await.unwrap();
        }
        runs.push(id);
    }
    client.batch_execute("ANALYZE events").await.unwrap();
    // The plan PostgreSQL keeps for a statement it runs often: one for any parameters.
    client
        .batch_execute(&format!(
            "SET plan_cache_mode = force_generic_plan; \
             PREPARE usage_page(text, bigint, bigint) AS {}",
            tether_store_pg::usage_events_sql()
        ))
        .await
        .unwrap();
    let plan: Vec<String> = client
        .query(
            "EXPLAIN EXECUTE usage_page('r-1', 9223372036854775807, 9)",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert!(
        plan.iter().any(|line| line.contains("events_usage_by_run")),
        "the generic plan does not read the index of usage events: {plan:#?}"
    );

    // And the store reads the usage events alone, newest first, through it.
    let page = store.usage_events_before(&runs[0], None, 9).await.unwrap();
    assert_eq!(page.len(), 9);
    assert!(page.iter().all(|e| USAGE_KINDS.contains(&e.kind.as_str())));
}

/// Iteration `n`: its start, 30 tool calls, its agent's usage, its end.
fn iteration(n: u32) -> Vec<Event> {
    let mut events = vec![Event::IterationStarted { n }];
    events.extend((0..30).map(|k| Event::ToolCalled {
        n,
        tool: "bash".into(),
        summary: format!("bash: step {k} of iteration {n}: {}", "x".repeat(200)),
    }));
    events.push(Event::IterationUsage {
        n,
        input_tokens: 1_000,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: 10,
        cost_usd: None,
        goals: Vec::new(),
        duration_ms: 0,
    });
    events.push(Event::IterationCompleted {
        n,
        summary: "done".into(),
    });
    events
}

//! The index of the events a usage series is made of: it names the usage kinds, and the store
//! reads it even in the generic plan PostgreSQL keeps for a statement it runs often (which,
//! without it, walks the whole journal backwards by seq in a store of few runs).

use std::time::Duration;

use tether_store::{Event, USAGE_KINDS};
use tether_store_pg::PgStore;

use super::common::{DEADLINE, config, raw, run, store};

const SCANS: &str = "SELECT idx_scan FROM pg_stat_user_indexes \
                     WHERE indexrelname = 'events_usage_by_run'";

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
    client
        .batch_execute(&format!(
            "ALTER DATABASE \"{}\" SET plan_cache_mode = force_generic_plan",
            db.dbname
        ))
        .await
        .unwrap();
    let before: i64 = client.query_one(SCANS, &[]).await.unwrap().get(0);
    assert_eq!(before, 0);

    // New sessions plan the statement once for any parameters.
    let generic = PgStore::connect(config(&db)).await.unwrap();
    let page = generic
        .usage_events_before(&runs[0], None, 9)
        .await
        .unwrap();
    assert_eq!(page.len(), 9);
    assert!(page.iter().all(|e| USAGE_KINDS.contains(&e.kind.as_str())));
    // Its sessions end: a backend's index statistics are published when it exits (otherwise
    // only once it has idled for a while, which a busy machine stretches).
    drop(generic);
    let scans = tokio::time::timeout(DEADLINE, async {
        loop {
            let scans: i64 = client.query_one(SCANS, &[]).await.unwrap().get(0);
            if scans > 0 {
                break scans;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(scans.is_ok(), "the index of usage events was never read");
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

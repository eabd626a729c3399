//! Server-sent events: the journal's events in order with their seqs as ids, live as they are
//! appended by another connection, and resumed after a dropped connection with
//! `Last-Event-ID`, missing nothing and repeating nothing.

use std::time::Duration;

use tether_store::{Event, RunKind, Store};

use crate::common::Web;

const WITHIN: Duration = Duration::from_secs(10);

fn tool(store: &Store, run: &tether_store::RunId, i: u32) {
    store
        .append(
            Some(run),
            &Event::ToolCalled {
                n: 1,
                tool: "ls".into(),
                summary: format!("call {i}"),
            },
        )
        .unwrap();
}

fn summary(m: &crate::common::Msg) -> String {
    let v: serde_json::Value = serde_json::from_str(&m.data).unwrap();
    v["event"]["summary"]
        .as_str()
        .unwrap_or(v["event"]["type"].as_str().unwrap())
        .to_owned()
}

#[test]
fn a_runs_events_come_in_order_then_live_and_resume_after_a_drop() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": "p"}),
        )
        .unwrap();
    let other = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": "q"}),
        )
        .unwrap();
    for i in 0..3 {
        tool(&store, &run, i);
    }
    let mut sse = web.sse(&format!("/api/runs/{run}/events"), &[]);
    assert_eq!(sse.status, 200);
    let first = sse.take(4, WITHIN);
    let got: Vec<String> = first.iter().map(summary).collect();
    assert_eq!(got, ["run_started", "call 0", "call 1", "call 2"]);
    let ids: Vec<i64> = first
        .iter()
        .map(|m| m.id.as_ref().unwrap().parse().unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]), "{ids:?}");

    // Live: appended by another connection after the stream caught up.
    tool(&store, &other, 99);
    tool(&store, &run, 3);
    let live = sse.next(WITHIN).expect("the live event");
    assert_eq!(
        summary(&live),
        "call 3",
        "the other run's event is not in this stream"
    );
    let last_id = live.id.unwrap();

    // The connection drops; events are appended meanwhile; the client resumes.
    drop(sse);
    for i in 4..7 {
        tool(&store, &run, i);
    }
    let mut resumed = web.sse(
        &format!("/api/runs/{run}/events"),
        &[("Last-Event-ID", &last_id)],
    );
    let again: Vec<String> = resumed.take(3, WITHIN).iter().map(summary).collect();
    assert_eq!(again, ["call 4", "call 5", "call 6"]);
    assert!(
        resumed.next(Duration::from_millis(300)).is_none(),
        "nothing repeated"
    );
    tool(&store, &run, 7);
    assert_eq!(summary(&resumed.next(WITHIN).unwrap()), "call 7");
}

#[test]
fn the_workspace_stream_starts_now_or_after_a_given_seq() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": "p"}),
        )
        .unwrap();
    tool(&store, &run, 0);
    let mut now = web.sse("/api/events", &[]);
    let mut all = web.sse("/api/events?after=0", &[]);
    assert_eq!(summary(&all.next(WITHIN).unwrap()), "run_started");
    assert_eq!(summary(&all.next(WITHIN).unwrap()), "call 0");
    tool(&store, &run, 1);
    assert_eq!(summary(&now.next(WITHIN).unwrap()), "call 1");
    assert_eq!(summary(&all.next(WITHIN).unwrap()), "call 1");
}

#[test]
fn many_clients_get_every_event() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": "p"}),
        )
        .unwrap();
    let after = store.last_seq().unwrap().0;
    let mut clients: Vec<_> = (0..20)
        .map(|_| web.sse(&format!("/api/events?after={after}"), &[]))
        .collect();
    for i in 0..50 {
        tool(&store, &run, i);
    }
    for c in &mut clients {
        let got: Vec<String> = c.take(50, WITHIN).iter().map(summary).collect();
        let want: Vec<String> = (0..50).map(|i| format!("call {i}")).collect();
        assert_eq!(got, want);
    }
}

#[test]
fn a_pages_card_says_where_and_by_whom_once_answered_anywhere() {
    let web = Web::start();
    let store = web.store();
    let after = store.last_seq().unwrap().0;
    let mut live = web.sse(&format!("/live?page=runs&after={after}"), &[]);
    let q = crate::common::question(&store, None, "Merge now?");
    let added = live.next(WITHIN).unwrap();
    assert!(added.data.contains(r#""op":"append""#), "{}", added.data);
    // Answered from a shell, as `tether answer` does.
    tether_human::broker::answer(&store, &web.ws.state_dir(), &q.id, "not yet", "cli", "bo")
        .unwrap();
    let replaced = live.next(WITHIN).unwrap();
    let ops: serde_json::Value = serde_json::from_str(&replaced.data).unwrap();
    assert_eq!(ops[0]["op"], "replace");
    assert_eq!(ops[0]["target"], format!("q-{}", q.id));
    let html = ops[0]["html"].as_str().unwrap();
    assert!(
        html.contains("Answered on <strong>cli</strong> by <strong>bo</strong>"),
        "{html}"
    );
    assert!(html.contains("not yet"), "{html}");
    assert!(!html.contains("<textarea"), "no form once answered: {html}");
}

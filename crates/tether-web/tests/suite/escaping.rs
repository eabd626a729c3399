//! Hostile text — markup, ANSI escapes, 100 KB — is shown as text on every page and fragment,
//! and kept exact in the API.

use std::time::Duration;

use tether_store::{Event, RunKind};

use crate::common::{self, Web};

const HOSTILE: &str =
    "<script>alert(1)</script><img src=x onerror=alert(2)> \x1b[31mred\x1b[0m \u{202e}evil\r";

#[test]
fn a_hostile_question_is_text_on_every_page_and_exact_in_the_api() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": HOSTILE}),
        )
        .unwrap();
    let big = format!("{HOSTILE}{}", "x".repeat(100 * 1024));
    let q = common::question(&store, Some(&run), &big);
    store
        .append(
            Some(&run),
            &Event::ToolCalled {
                n: 1,
                tool: "bash".into(),
                summary: HOSTILE.into(),
            },
        )
        .unwrap();
    store
        .append(
            Some(&run),
            &Event::MessageQueued {
                text: HOSTILE.into(),
                by: HOSTILE.into(),
                author: tether_store::Author::Person,
            },
        )
        .unwrap();
    store
        .answer_question(&q.id, HOSTILE, "cli", HOSTILE)
        .unwrap();
    let pending = common::question(&store, None, HOSTILE);

    for path in [
        "/".to_owned(),
        format!("/runs/{run}"),
        "/history".to_owned(),
    ] {
        let page = web.get(&path);
        assert_eq!(page.status, 200, "{path}");
        let body = &page.body;
        assert!(!body.contains("<script>alert"), "{path}: raw markup");
        assert!(!body.contains("<img src=x"), "{path}: raw markup");
        assert!(!body.contains('\x1b'), "{path}: a raw ESC");
        assert!(
            !body.contains('\u{202e}'),
            "{path}: a raw direction override"
        );
        assert!(
            body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
            "{path}"
        );
        assert!(
            body.contains(r"\x1b[31mred\x1b[0m"),
            "{path}: the escape shown"
        );
        assert!(body.contains(r"\u{202e}evil"), "{path}");
        assert!(
            body.contains(&format!("q-{}", pending.id)),
            "{path}: the pending card"
        );
    }
    let run_page = web.get(&format!("/runs/{run}"));
    assert!(
        run_page.body.contains(&"x".repeat(100 * 1024)),
        "all 100 KB shown"
    );

    let history = web.get("/api/history").json();
    let asked: Vec<&str> = history
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["question"].as_str().unwrap())
        .collect();
    assert!(
        asked.contains(&big.as_str()),
        "the API keeps the exact text"
    );
    assert_eq!(history[1]["answer"], HOSTILE);
}

#[test]
fn a_hostile_question_is_escaped_in_the_live_fragments_too() {
    let web = Web::start();
    let mut live = web.sse(
        &format!(
            "/live?page=runs&after={}",
            web.store().last_seq().unwrap().0
        ),
        &[],
    );
    assert_eq!(live.status, 200);
    common::question(&web.store(), None, HOSTILE);
    let msg = live.next(Duration::from_secs(10)).expect("a live update");
    assert_eq!(msg.event.as_deref(), Some("ops"));
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    let html = ops[0]["html"].as_str().unwrap();
    assert_eq!(ops[0]["op"], "append");
    assert_eq!(ops[0]["target"], "questions");
    assert!(html.contains("&lt;script&gt;"), "{html}");
    assert!(
        !html.contains("<script>") && !html.contains('\x1b'),
        "{html}"
    );
    assert!(
        html.contains("Your answer") && html.contains("Send answer"),
        "{html}"
    );
}

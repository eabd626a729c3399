//! The charts: the run page draws tokens and cost per iteration and the sign-off verdicts over
//! time as inline SVG, redrawn live; the runs list shows each run's sparkline; the API gives the
//! series.

use std::time::Duration;

use tether_store::{Event, RunKind};

use crate::common::{self, Web};

const WITHIN: Duration = Duration::from_secs(10);

/// The `<svg …>…</svg>` with `id` in `html`.
fn svg<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html
        .find(&format!("<svg class=\"chart-svg\" id=\"{id}\""))
        .unwrap_or_else(|| panic!("no chart {id} in {html}"));
    let len = html[start..].find("</svg>").unwrap();
    &html[start..start + len + "</svg>".len()]
}

#[test]
fn the_run_page_draws_a_bar_per_iteration_and_a_mark_per_verdict() {
    let web = Web::start();
    let store = web.store();
    let run = common::goal_run(&store, &web.ws);
    common::usage(&store, &run, 1, 40_000, 2_000, 0.42, 0);
    common::usage(&store, &run, 2, 10_000, 500, 0.11, 5_000);

    let page = web.get(&format!("/runs/{run}"));
    assert_eq!(page.status, 200);
    let body = &page.body;
    assert!(body.contains("id=\"run-charts\""), "{body}");

    let tokens = svg(body, "chart-tokens");
    assert_eq!(
        tokens.matches("<rect class=\"agent\"").count(),
        2,
        "{tokens}"
    );
    assert_eq!(
        tokens.matches("<rect class=\"judge\"").count(),
        2,
        "{tokens}"
    );
    assert!(tokens.contains("role=\"img\""), "{tokens}");
    assert!(
        tokens.contains("Tokens per iteration: 2 iterations, most 42k at iteration 1"),
        "{tokens}"
    );
    assert!(
        tokens.contains("iteration 2: 15.5k tokens (agent 10.5k, judges 5k)"),
        "{tokens}"
    );

    let cost = svg(body, "chart-cost");
    assert_eq!(cost.matches("<rect class=\"cost\"").count(), 2, "{cost}");
    assert!(cost.contains("most $0.42 at iteration 1"), "{cost}");

    let verdicts = svg(body, "chart-verdicts");
    assert_eq!(
        verdicts.matches("class=\"mark reject\"").count(),
        1,
        "{verdicts}"
    );
    assert_eq!(
        verdicts.matches("class=\"mark accept\"").count(),
        1,
        "{verdicts}"
    );
    assert!(
        verdicts.contains("greet, attempt 1: rejected: verify failed"),
        "{verdicts}"
    );
    assert!(
        verdicts.contains("greet, attempt 2: accepted"),
        "{verdicts}"
    );
    assert!(
        !body.contains("style=\""),
        "no inline style: the CSP forbids it"
    );

    let api = web.get(&format!("/api/runs/{run}")).json();
    let series = api["usage_series"].as_array().unwrap();
    assert_eq!(series.len(), 2);
    assert_eq!(series[0]["n"], 1);
    assert_eq!(series[0]["agent_tokens"], 42_000);
    assert_eq!(series[1]["judge_tokens"], 5_000);
    assert_eq!(series[1]["agent_cost_usd"], 0.11);
    assert_eq!(api["run"]["id"], run.as_str(), "the rest as before");
}

#[test]
fn a_run_with_no_iteration_yet_says_so_instead_of_a_chart() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": "work"}),
        )
        .unwrap();
    let page = web.get(&format!("/runs/{run}"));
    assert!(page.body.contains("No iterations yet"), "{}", page.body);
    assert!(!page.body.contains("<svg"), "{}", page.body);
    assert!(
        !page.body.contains("No sign-off attempts yet"),
        "a Ralph loop has no sign-offs"
    );
    let runs = web.get("/");
    assert!(!runs.body.contains("class=\"spark\""), "{}", runs.body);
}

#[test]
fn the_runs_list_shows_each_runs_usage_as_a_sparkline() {
    let web = Web::start();
    let store = web.store();
    let run = common::goal_run(&store, &web.ws);
    common::usage(&store, &run, 1, 40_000, 2_000, 0.42, 0);
    common::usage(&store, &run, 2, 10_000, 500, 0.11, 5_000);
    let page = web.get("/");
    let body = &page.body;
    let row = &body[body.find(&format!("id=\"run-{run}\"")).unwrap()..];
    let row = &row[..row.find("</li>").unwrap()];
    let start = row
        .find("<svg class=\"spark\"")
        .unwrap_or_else(|| panic!("{row}"));
    let spark = &row[start..start + row[start..].find("</svg>").unwrap()];
    assert_eq!(spark.matches("<rect").count(), 2, "{spark}");
    assert!(
        spark.contains(
            "aria-label=\"Tokens per iteration, iterations 1–2: 57.5k in all, most 42k at iteration 1\""
        ),
        "{spark}"
    );

    // Its journal grows: the sparkline read before is not the one shown.
    store
        .append(Some(&run), &Event::IterationStarted { n: 3 })
        .unwrap();
    common::usage(&store, &run, 3, 1_000, 0, 0.01, 0);
    let again = web.get("/").body;
    let row = &again[again.find(&format!("id=\"run-{run}\"")).unwrap()..];
    let start = row.find("<svg class=\"spark\"").unwrap();
    let spark = &row[start..start + row[start..].find("</svg>").unwrap()];
    assert_eq!(spark.matches("<rect").count(), 3, "{spark}");
}

#[test]
fn the_charts_are_redrawn_live_when_an_iteration_uses_tokens() {
    let web = Web::start();
    let store = web.store();
    let run = common::goal_run(&store, &web.ws);
    let after = store.last_seq().unwrap().0;
    let mut live = web.sse(&format!("/live?page=run&run={run}&after={after}"), &[]);
    common::usage(&store, &run, 2, 10_000, 500, 0.11, 0);
    let msg = live.next(WITHIN).expect("an update");
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    let charts = ops
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["target"] == "run-charts")
        .unwrap_or_else(|| panic!("no chart in {ops}"));
    assert_eq!(charts["op"], "replace");
    let html = charts["html"].as_str().unwrap();
    assert!(
        html.contains("most 10.5k at iteration 2"),
        "the new usage is drawn: {html}"
    );

    // An event that changes no usage leaves the charts alone.
    store
        .append(
            Some(&run),
            &Event::ToolCalled {
                n: 2,
                tool: "bash".into(),
                summary: "ls".into(),
            },
        )
        .unwrap();
    let msg = live.next(WITHIN).expect("an update");
    assert!(!msg.data.contains("run-charts"), "{}", msg.data);
}

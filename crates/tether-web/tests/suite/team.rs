//! The team dashboard: every run shows its machine and workspace, the runs page, its live
//! stream and the API filter by machine, workspace and state, and a store with no local file
//! to watch is followed through the outside wake-up.

use std::sync::Arc;
use std::time::Duration;

use tether_store::{Event, Outcome, RunId, RunKind, Store};
use tokio::sync::Notify;

use crate::common::{Options, TeamLike, Web, place};

const WITHIN: Duration = Duration::from_secs(10);

fn ralph(web: &Web, store: &Store, prompt: &str) -> RunId {
    store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({ "prompt": prompt }),
        )
        .unwrap()
}

/// Three runs of two machines: ana's laptop (running), and a CI runner with two workspaces
/// (one running, one completed).
fn three_runs(web: &Web) -> (RunId, RunId, RunId) {
    let store = web.store();
    let ana = ralph(web, &store, "ana's run");
    let ci_app = ralph(web, &store, "ci app run");
    let ci_lib = ralph(web, &store, "ci lib run");
    store
        .append(
            Some(&ci_lib),
            &Event::RunFinished {
                outcome: Outcome::Completed,
            },
        )
        .unwrap();
    let db = web.ws.db_path();
    place(&db, &ana, "laptop-ana", "/home/ana/app");
    place(&db, &ci_app, "ci-runner-1", "/builds/app");
    place(&db, &ci_lib, "ci-runner-1", "/builds/lib");
    (ana, ci_app, ci_lib)
}

fn ids(runs: &serde_json::Value) -> Vec<String> {
    runs.as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_runs_page_filters_by_machine_workspace_and_state() {
    let web = Web::start();
    let (ana, ci_app, ci_lib) = three_runs(&web);
    let shown = |path: &str| {
        let r = web.get(path);
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        [&ana, &ci_app, &ci_lib]
            .iter()
            .filter(|id| r.body.contains(&format!("id=\"run-{id}\"")))
            .map(|id| id.to_string())
            .collect::<Vec<_>>()
    };
    let s = |ids: &[&RunId]| ids.iter().map(|i| i.to_string()).collect::<Vec<_>>();
    assert_eq!(shown("/"), s(&[&ana, &ci_app, &ci_lib]));
    assert_eq!(shown("/?machine=ci-runner-1"), s(&[&ci_app, &ci_lib]));
    assert_eq!(
        shown("/?machine=ci-runner-1&workspace=%2Fbuilds%2Flib"),
        s(&[&ci_lib])
    );
    assert_eq!(shown("/?state=running"), s(&[&ana, &ci_app]));
    assert_eq!(shown("/?state=completed&machine=laptop-ana"), s(&[]));
    // Empty fields, as the form sends them, filter nothing.
    assert_eq!(
        shown("/?machine=&workspace=&state="),
        s(&[&ana, &ci_app, &ci_lib])
    );

    let none = web.get("/?machine=nowhere");
    assert!(
        none.body.contains("No runs match this filter."),
        "{}",
        none.body
    );
    let bad = web.get("/?state=sleeping");
    assert_eq!(bad.status, 400);
    assert!(bad.body.contains("no run state `sleeping`"), "{}", bad.body);
}

#[test]
fn every_run_shows_its_machine_and_workspace_as_links_to_their_runs() {
    let web = Web::start();
    let (ana, _, _) = three_runs(&web);
    let body = web.get("/").body;
    assert!(
        body.contains(r#"<a class="machine" href="/?machine=ci-runner-1">ci-runner-1</a>"#),
        "{body}"
    );
    assert!(
        body.contains(
            r#"<a class="workspace" href="/?workspace=/home/ana/app"><code>/home/ana/app</code></a>"#
        ),
        "{body}"
    );
    // A running run of another machine has no lock file here: it is not called killed.
    let row = body
        .split(&format!("id=\"run-{ana}\""))
        .nth(1)
        .unwrap()
        .split("</li>")
        .next()
        .unwrap();
    assert!(row.contains("badge running"), "{row}");
    assert!(!row.contains("killed"), "{row}");
}

#[test]
fn a_goal_run_of_another_machine_shows_no_plan_read_from_here() {
    let web = Web::start();
    let store = web.store();
    std::fs::write(
        web.ws.root().join("plan.md"),
        "# Plan\n\n## Goal: Local goal\n",
    )
    .unwrap();
    let mine = store
        .create_run(
            RunKind::Goal,
            web.ws.root(),
            &serde_json::json!({"plan": "plan.md"}),
        )
        .unwrap();
    let theirs = crate::common::goal_run(&store, &web.ws);
    place(&web.ws.db_path(), &theirs, "build-box", "/srv/app");
    let page = |id: &RunId| {
        let r = web.get(&format!("/runs/{id}"));
        assert_eq!(r.status, 200, "{}", r.body);
        r.body
    };
    assert!(page(&mine).contains("id=\"plan\""));
    let body = page(&theirs);
    assert!(!body.contains("id=\"plan\""), "{body}");
    assert!(body.contains("driven on its machine"), "{body}");
    assert!(!body.contains("no process drives it"), "{body}");
    assert!(body.contains(r#"href="/?machine=build-box""#), "{body}");
    // Its verdicts are in the store, so they are shown all the same.
    assert!(body.contains("greet.sh prints the greeting"), "{body}");
}

#[test]
fn the_api_takes_the_same_filters_and_pages_through_them() {
    let web = Web::start();
    let (ana, ci_app, ci_lib) = three_runs(&web);
    let r = web.get("/api/runs?machine=laptop-ana");
    assert_eq!(r.status, 200, "{}", r.body);
    let runs = r.json();
    assert_eq!(ids(&runs), [ana.to_string()]);
    assert_eq!(runs[0]["machine"], "laptop-ana");
    assert_eq!(runs[0]["workspace"], "/home/ana/app");
    assert_eq!(runs[0]["here"], false);
    assert_eq!(
        ids(&web.get("/api/runs?state=completed").json()),
        [ci_lib.to_string()]
    );

    // One at a time: the header says where the next page starts, with the same filter.
    let first = web.get("/api/runs?machine=ci-runner-1&limit=1");
    assert_eq!(ids(&first.json()), [ci_lib.to_string()]);
    let next = first.header("x-tether-next-after").unwrap().to_owned();
    let second = web.get(&format!(
        "/api/runs?machine=ci-runner-1&limit=1&after={next}"
    ));
    assert_eq!(ids(&second.json()), [ci_app.to_string()]);

    let bad = web.get("/api/runs?state=sleeping");
    assert_eq!(bad.status, 400, "{}", bad.body);
}

#[test]
fn hostile_machine_and_workspace_names_are_text_and_stay_in_their_links() {
    let web = Web::start();
    let store = web.store();
    let run = ralph(&web, &store, "p");
    let machine = "box<script>alert(1)</script>\u{1b}[31m\"&x=1";
    let workspace = "/w/\"><img src=x onerror=alert(2)>?state=failed#";
    place(&web.ws.db_path(), &run, machine, workspace);
    let body = web.get("/").body;
    assert!(!body.contains("<script>alert"), "{body}");
    assert!(!body.contains("<img src=x"), "{body}");
    assert!(!body.contains('\u{1b}'), "{body}");
    assert!(
        body.contains(
            "href=\"/?machine=box%3Cscript%3Ealert%281%29%3C/script%3E%1B%5B31m%22%26x%3D1\""
        ),
        "{body}"
    );
    let place_line = between(&body, "<p class=\"place\">", "</p>");
    insta::assert_snapshot!(place_line);

    // The link leads to exactly this run.
    let api = web.get(&format!("/api/runs?machine={}", encode(machine)));
    assert_eq!(ids(&api.json()), [run.to_string()]);
}

#[test]
fn the_filter_form_keeps_what_was_asked() {
    let web = Web::start();
    three_runs(&web);
    let body = web
        .get("/?machine=ci-runner-1&workspace=%3Cb%3E&state=waiting_for_input")
        .body;
    let form = between(&body, "<form class=\"filters\"", "</form>");
    insta::assert_snapshot!(form);
    let unfiltered = web.get("/").body;
    let form = between(&unfiltered, "<form class=\"filters\"", "</form>");
    insta::assert_snapshot!("the_filter_form_unfiltered", form);
}

#[test]
fn a_filtered_live_stream_carries_only_matching_runs() {
    let web = Web::start();
    let (ana, ci_app, _) = three_runs(&web);
    let store = web.store();
    let after = store.last_seq().unwrap().0;
    let mut sse = web.sse(
        &format!("/live?page=runs&after={after}&machine=ci-runner-1"),
        &[],
    );
    assert_eq!(sse.status, 200);
    let step = |run: &RunId| {
        store
            .append(Some(run), &Event::IterationStarted { n: 1 })
            .unwrap()
    };
    step(&ana);
    let last = step(&ci_app);
    let mut seen = Vec::new();
    while let Some(m) = sse.next(WITHIN) {
        seen.push(m.data.clone());
        if m.id.as_deref() == Some(&last.0.to_string()) {
            break;
        }
    }
    let ops: Vec<serde_json::Value> = seen
        .iter()
        .flat_map(|d| serde_json::from_str::<Vec<serde_json::Value>>(d).unwrap())
        .collect();
    let about = |id: &RunId| {
        let tag = format!("run-{id}");
        ops.iter()
            .filter(|op| op["id"] == tag.as_str() || op["target"] == tag.as_str())
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(about(&ci_app)[0]["op"], "upsert", "{ops:?}");
    // The other machine's run is never added; it is only taken off, should it be shown.
    let other = about(&ana);
    assert!(
        other
            .iter()
            .all(|op| op["op"] == "replace" && op["html"] == ""),
        "{other:?}"
    );
}

#[test]
fn without_a_file_to_watch_the_outside_wake_up_delivers_new_events() {
    let elsewhere = tempfile::tempdir().unwrap();
    let wake = Arc::new(Notify::new());
    let web = Web::start_with(Options {
        store: Some(Arc::new(TeamLike::new(elsewhere.path().join("team.db")))),
        wake: Some(Arc::clone(&wake)),
        // Longer than the test: only a wake-up can deliver the event.
        recheck: Some(Duration::from_secs(3600)),
        ..Options::default()
    });
    let store = web.store();
    assert_eq!(store.kind(), tether_store::BackendKind::Team);
    let before = store.last_seq().unwrap().0;
    let run = ralph(&web, &store, "remote run");
    // The stream's backlog (read from the store once) holds the run's start: once that came,
    // the backlog has been read, and only the hub can deliver what follows.
    let mut sse = web.sse(&format!("/api/events?after={before}"), &[]);
    assert_eq!(sse.status, 200);
    let started = sse.next(WITHIN).expect("the backlog");
    assert!(started.data.contains("run_started"), "{}", started.data);
    store
        .append(
            Some(&run),
            &Event::ToolCalled {
                n: 1,
                tool: "ls".into(),
                summary: "from another machine".into(),
            },
        )
        .unwrap();
    // Nothing watches that file: the event waits for the wake-up.
    assert!(
        sse.next(Duration::from_millis(500)).is_none(),
        "an event arrived with no wake-up"
    );
    wake.notify_one();
    let got = sse.next(WITHIN).expect("the event, after the wake-up");
    assert!(got.data.contains("from another machine"), "{}", got.data);
}

/// The text from `start` (included) to the first `end` after it (included).
fn between(body: &str, start: &str, end: &str) -> String {
    let from = body
        .find(start)
        .unwrap_or_else(|| panic!("no {start} in {body}"));
    let len = body[from..].find(end).unwrap() + end.len();
    body[from..from + len].to_owned()
}

/// Percent-encodes a query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() {
                char::from(b).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

#[test]
fn a_team_stores_feed_of_changes_wakes_the_dashboard() {
    let elsewhere = tempfile::tempdir().unwrap();
    let team = TeamLike::new(elsewhere.path().join("team.db"));
    let web = Web::start_with(Options {
        store: Some(Arc::new(team.clone())),
        wake: None,
        recheck: Some(Duration::from_secs(3600)),
        ..Options::default()
    });
    let store = web.store();
    let before = store.last_seq().unwrap().0;
    let run = ralph(&web, &store, "remote run");
    let mut sse = web.sse(&format!("/api/events?after={before}"), &[]);
    assert_eq!(sse.status, 200);
    sse.next(WITHIN).expect("the backlog");
    assert_eq!(
        team.followers(),
        1,
        "the dashboard follows the store's feed"
    );
    store
        .append(
            Some(&run),
            &Event::ToolCalled {
                n: 1,
                tool: "ls".into(),
                summary: "notified".into(),
            },
        )
        .unwrap();
    assert!(
        sse.next(Duration::from_millis(500)).is_none(),
        "an event arrived with no notification"
    );
    team.poke();
    let got = sse.next(WITHIN).expect("the event, after the notification");
    assert!(got.data.contains("notified"), "{}", got.data);
}

//! Runs of many goals on the dashboard: the runs page lists the newest, a page of its own shows
//! every goal with where it stands (waiting on which goals, working on which machine and in
//! which goal run, merged), both follow the store live, and the JSON API gives the same.

use std::time::Duration;

use tether_store::{GoalState, NewFleet, RunId, RunKind};

use crate::common::Web;

const WITHIN: Duration = Duration::from_secs(10);

fn begin(web: &Web) -> RunId {
    let id = RunId::generate();
    web.store()
        .begin_fleet(&NewFleet {
            id: id.clone(),
            workspace: web.ws.root().to_path_buf(),
            plan_path: "plan.md".into(),
            branch: format!("tether/{id}"),
            remote: None,
            budget: None,
            parallel: 2,
            goals: vec![
                ("base".into(), Vec::new()),
                ("<b>top</b>".into(), vec!["base".into()]),
            ],
        })
        .unwrap();
    id
}

#[test]
fn a_run_of_many_goals_is_shown_goal_by_goal_and_followed_live() {
    let web = Web::start();
    let id = begin(&web);
    let store = web.store();
    let goal_run = store
        .create_run(RunKind::Goal, web.ws.root(), &serde_json::json!({}))
        .unwrap();
    store
        .set_fleet_goal(&id, "base", GoalState::Working, Some(&goal_run))
        .unwrap();

    let runs = web.get("/").body;
    assert!(
        runs.contains(&format!("href=\"/fleets/{id}\""))
            && runs.contains("0 of 2 goals merged, 1 working"),
        "{runs}"
    );
    let page = web.get(&format!("/fleets/{id}"));
    assert_eq!(page.status, 200);
    let machine = tether_store::this_machine();
    assert!(
        page.body.contains(&format!("working</span> on {machine}"))
            && page.body.contains(&format!("href=\"/runs/{goal_run}\"")),
        "{}",
        page.body
    );
    // A goal id is the plan's text: escaped.
    assert!(
        page.body.contains("&lt;b&gt;top&lt;/b&gt;")
            && page.body.contains("waiting</span> on base"),
        "{}",
        page.body
    );
    assert!(!page.body.contains("<b>top</b>"));

    // The page follows the store: `base` merged, `top` waits on nothing.
    let mut live = web.sse(
        &format!(
            "/live?page=fleet&run={id}&after={}",
            store.last_seq().unwrap().0
        ),
        &[],
    );
    store
        .set_fleet_goal(&id, "base", GoalState::Merged, None)
        .unwrap();
    let msg = live.next(WITHIN).expect("a live update");
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    assert_eq!(
        (&ops[0]["op"], &ops[0]["target"]),
        (&"replace".into(), &"fleet".into())
    );
    let html = ops[0]["html"].as_str().unwrap();
    assert!(html.contains("1 of 2 goals merged"), "{html}");
    assert!(!html.contains("waiting</span> on base"), "{html}");

    // The JSON API says the same.
    let api = web.get(&format!("/api/fleets/{id}")).json();
    assert_eq!(api["branch"], format!("tether/{id}"));
    assert_eq!(api["goals"][0]["state"], "merged");
    assert_eq!(api["goals"][0]["run_id"], goal_run.as_str());
    assert_eq!(api["goals"][1]["after"], serde_json::json!(["base"]));
    assert_eq!(web.get("/api/fleets").json()[0]["id"], id.as_str());
    assert_eq!(web.get("/api/fleets/r-nothere").status, 404);
    assert_eq!(web.get("/fleets/r-nothere").status, 404);
}

#[test]
fn the_runs_page_hears_of_a_run_of_many_goals_live() {
    let web = Web::start();
    let mut live = web.sse(
        &format!(
            "/live?page=runs&after={}",
            web.store().last_seq().unwrap().0
        ),
        &[],
    );
    let id = begin(&web);
    let msg = live.next(WITHIN).expect("a live update");
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    assert_eq!(ops[0]["target"], "fleets");
    assert!(
        ops[0]["html"]
            .as_str()
            .unwrap()
            .contains(&format!("/fleets/{id}")),
        "{ops}"
    );
}

#[test]
fn the_workers_of_a_run_of_many_goals_are_shown_with_their_heartbeat() {
    let web = Web::start();
    let store = web.store();
    let id = RunId::generate();
    store
        .begin_fleet(&NewFleet {
            id: id.clone(),
            workspace: web.ws.root().to_path_buf(),
            plan_path: "plan.md".into(),
            branch: format!("tether/{id}"),
            remote: Some("/srv/git/shop.git".into()),
            budget: None,
            parallel: 2,
            goals: vec![("base".into(), Vec::new()), ("docs".into(), Vec::new())],
        })
        .unwrap();
    for goal in ["base", "docs"] {
        store
            .set_fleet_goal(&id, goal, GoalState::Ready, None)
            .unwrap();
    }
    let holder = tether_store::Holder {
        machine: "build-7".into(),
        pid: 42,
        workspace: "/srv/tether".into(),
    };
    store.claim_fleet_goal(&holder, 60_000).unwrap().unwrap();
    let page = web.get(&format!("/fleets/{id}")).body;
    assert!(
        page.contains("id=\"fleet-workers\"") && page.contains("build-7 · heartbeat "),
        "{page}"
    );
    assert!(
        page.contains("working</span> on build-7 · heartbeat "),
        "{page}"
    );
    assert!(
        page.contains("ready</span> for a worker to claim it"),
        "{page}"
    );
    let api = web.get(&format!("/api/fleets/{id}")).json();
    assert_eq!(api["remote"], "/srv/git/shop.git");
    assert!(api["goals"][0]["lease"]["renewed_at_ms"].is_i64(), "{api}");
    assert!(api["goals"][1]["lease"].is_null(), "{api}");
}

//! Runs started and resumed from the dashboard: `POST /api/runs` and `POST
//! /api/runs/{id}/resume` hand a checked request to the serving process's launcher (here one
//! that records what it was asked and stores a run, as the real one does), behind the same
//! token, Host and Origin rules as every change; the page's "New run" form and "Resume" button.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::json;
use tether_store::launch::Resume;
use tether_store::{RunId, RunKind, Store};
use tether_web::{LaunchError, Launcher, NewRun, Started};

use crate::common::{Options, Web};

/// Records what it is asked; starts a run in the store (so its page exists), or refuses.
#[derive(Default)]
struct Recorder {
    asked: Mutex<Vec<String>>,
    store: Mutex<Option<Store>>,
    refuse: Option<LaunchError>,
}

impl Launcher for Recorder {
    fn start(&self, run: NewRun) -> BoxFuture<'_, Result<Started, LaunchError>> {
        Box::pin(async move {
            self.asked.lock().unwrap().push(format!("start {run:?}"));
            if let Some(refused) = &self.refuse {
                return Err(refused.clone());
            }
            let store = self.store.lock().unwrap();
            let store = store.as_ref().unwrap();
            let kind = match run {
                NewRun::Ralph { .. } => RunKind::Ralph,
                // Many goals at once: a run of many goals, recorded as the real one is.
                NewRun::Goal {
                    parallel: Some(parallel),
                    ..
                } => {
                    let id = RunId::generate();
                    store
                        .begin_fleet(&tether_store::NewFleet {
                            id: id.clone(),
                            workspace: "/tmp".into(),
                            plan_path: "plan.md".into(),
                            branch: format!("tether/{id}"),
                            remote: None,
                            budget: None,
                            parallel,
                            goals: vec![("g1".into(), Vec::new())],
                        })
                        .unwrap();
                    return Ok(Started::Fleet(id));
                }
                NewRun::Goal { .. } => RunKind::Goal,
            };
            Ok(Started::Run(
                store
                    .create_run(kind, std::path::Path::new("/tmp"), &json!({}))
                    .unwrap(),
            ))
        })
    }

    fn resume(&self, id: RunId, how: Resume) -> BoxFuture<'_, Result<(), LaunchError>> {
        Box::pin(async move {
            let accepting = if how.accept_config { " accepting" } else { "" };
            let adding = if how.add.is_unlimited() {
                String::new()
            } else {
                format!(" adding {} by {}", how.add.describe(), how.by)
            };
            self.asked
                .lock()
                .unwrap()
                .push(format!("resume {id}{accepting}{adding}"));
            match &self.refuse {
                Some(refused) => Err(refused.clone()),
                None => Ok(()),
            }
        })
    }
}

fn web_with(recorder: Arc<Recorder>) -> Web {
    let web = Web::start_with(Options {
        launcher: Some(recorder.clone()),
        ..Options::default()
    });
    *recorder.store.lock().unwrap() = Some(web.store());
    web
}

#[test]
fn a_ralph_run_and_a_goal_run_are_started_and_a_run_resumed() {
    let recorder = Arc::new(Recorder::default());
    let web = web_with(recorder.clone());
    let r = web.post_json(
        "/api/runs",
        &json!({"kind": "ralph", "prompt": "Fix the build.", "completion_promise": "DONE", "max_iterations": 5}),
    );
    assert_eq!(r.status, 201, "{}", r.body);
    let id = r.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(r.json()["url"], format!("/runs/{id}"));
    let r = web.post_json("/api/runs", &json!({"kind": "goal"}));
    assert_eq!(r.status, 201, "{}", r.body);
    // Many goals at once: the run of many goals' id and page.
    let r = web.post_json("/api/runs", &json!({"kind": "goal", "parallel": 3}));
    assert_eq!(r.status, 201, "{}", r.body);
    let fleet = r.json()["id"].as_str().unwrap().to_owned();
    assert_eq!(r.json()["url"], format!("/fleets/{fleet}"));
    assert_eq!(web.get(&format!("/fleets/{fleet}")).status, 200);
    let r = web.post_json(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(r.status, 202, "{}", r.body);
    assert_eq!(
        *recorder.asked.lock().unwrap(),
        [
            "start Ralph { prompt: \"Fix the build.\", completion_promise: Some(\"DONE\"), max_iterations: Some(5), worktree: false }".to_owned(),
            "start Goal { max_iterations: None, worktree: false, parallel: None }".to_owned(),
            "start Goal { max_iterations: None, worktree: false, parallel: Some(3) }".to_owned(),
            format!("resume {id}"),
        ]
    );
}

#[test]
fn a_bad_request_never_reaches_the_launcher_and_a_refusal_says_why() {
    let recorder = Arc::new(Recorder::default());
    let web = web_with(recorder.clone());
    // Each is answered in JSON, naming what to fix.
    for (body, status, names) in [
        (
            json!({"kind": "ralph", "prompt": " "}),
            400,
            "prompt is empty",
        ),
        (
            json!({"kind": "goal", "max_iterations": 0}),
            400,
            "max_iterations 0",
        ),
        (
            json!({"kind": "goal", "max_iterations": 99999}),
            400,
            "ceiling",
        ),
        (
            json!({"kind": "fleet"}),
            422,
            "kind: unknown variant `fleet`",
        ),
        (
            json!({"kind": "goal", "approve": true}),
            422,
            "unknown field `approve`",
        ),
        (
            json!({"kind": "ralph", "prompt": "x", "max_iterations": "5"}),
            422,
            "max_iterations: invalid type",
        ),
        (json!({"kind": "ralph"}), 422, "needs its `prompt`"),
        (json!({"kind": "goal", "prompt": "x"}), 422, "a ralph run's"),
        (json!({"kind": "goal", "parallel": 0}), 400, "parallel 0"),
        (
            json!({"kind": "goal", "parallel": 65}),
            400,
            "ceiling of 64",
        ),
        (
            json!({"kind": "ralph", "prompt": "x", "parallel": 2}),
            422,
            "a goal run's",
        ),
    ] {
        let r = web.post_json("/api/runs", &body);
        assert_eq!(r.status, status, "{body}: {}", r.body);
        let said = r.json()["error"].as_str().unwrap_or_default().to_owned();
        assert!(said.contains(names), "{body}: {said}");
    }
    let bearer = web.bearer();
    let auth = [("Authorization", bearer.as_str())];
    for (content, status, names) in [
        (
            Some(("application/json", "{\"kind\": ")),
            400,
            "the body is not JSON",
        ),
        (
            Some(("text/plain", "{}")),
            415,
            "Content-Type: application/json",
        ),
        (None, 415, "Content-Type: application/json"),
    ] {
        let r = web.request("POST", "/api/runs", &auth, content);
        assert_eq!(r.status, status, "{content:?}: {}", r.body);
        let said = r.json()["error"].as_str().unwrap_or_default().to_owned();
        assert!(said.contains(names), "{content:?}: {said}");
    }
    assert!(recorder.asked.lock().unwrap().is_empty());
    let refusing = Arc::new(Recorder {
        refuse: Some(LaunchError::Refused(
            "the contract of goal `add` (never approved) is not approved".to_owned(),
        )),
        ..Recorder::default()
    });
    let web = web_with(refusing);
    let r = web.post_json("/api/runs", &json!({"kind": "goal"}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert!(r.json()["error"].as_str().unwrap().contains("not approved"));
}

#[test]
fn starting_a_run_is_a_change_like_any_other() {
    let recorder = Arc::new(Recorder::default());
    let web = web_with(recorder.clone());
    let body = json!({"kind": "ralph", "prompt": "x"}).to_string();
    let json = Some(("application/json", body.as_str()));
    let bearer = web.bearer();
    // No token; another site's page with the token; a wrong Host.
    let no_token = web.request("POST", "/api/runs", &[], json);
    assert_eq!(no_token.status, 401);
    let cross = web.request(
        "POST",
        "/api/runs",
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        json,
    );
    assert_eq!(cross.status, 403, "{}", cross.body);
    let host = web.request(
        "POST",
        "/api/runs",
        &[("Authorization", &bearer), ("Host", "evil.example")],
        json,
    );
    assert!(host.status == 403 || host.status == 421, "{}", host.status);
    assert!(recorder.asked.lock().unwrap().is_empty());
}

#[test]
fn a_dashboard_without_a_launcher_starts_nothing_and_shows_no_form() {
    let web = Web::start();
    let r = web.post_json("/api/runs", &json!({"kind": "goal"}));
    assert_eq!(r.status, 501, "{}", r.body);
    assert!(!web.get("/").body.contains("New run"));
}

#[test]
fn the_new_run_form_starts_a_run_and_leads_to_its_page() {
    let recorder = Arc::new(Recorder::default());
    let web = web_with(recorder.clone());
    let page = web.get("/");
    assert!(page.body.contains("New run"), "{}", page.body);
    let form = "kind=ralph&prompt=Fix+it.&completion_promise=DONE&max_iterations=3";
    let r = web.request(
        "POST",
        "/runs",
        &[("Authorization", &web.bearer()), ("Origin", &web.origin())],
        Some(("application/x-www-form-urlencoded", form)),
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let to = r.header("location").unwrap().to_owned();
    assert!(
        to.starts_with("/runs/r-") && to.ends_with("?notice=started"),
        "{to}"
    );
    let run = web.get(&to);
    assert!(run.body.contains("The run started"), "{}", run.body);
    assert_eq!(recorder.asked.lock().unwrap().len(), 1);
}

/// A resume whose tether.toml differs from the run's record: the API answers 409 with the
/// differences until the request accepts them; the Resume button leads to a page showing them
/// with a button that applies them.
#[test]
fn a_changed_configuration_is_shown_and_applied_only_when_accepted() {
    let changed = LaunchError::ConfigChanged {
        message: "tether.toml differs from the configuration run r-1 recorded".to_owned(),
        changes: vec!["[notify_command] program: (absent) → \"sh\"".to_owned()],
    };
    let recorder = Arc::new(Recorder {
        refuse: Some(changed),
        ..Recorder::default()
    });
    let web = web_with(recorder.clone());
    let id = web
        .store()
        .create_run(RunKind::Goal, std::path::Path::new("/tmp"), &json!({}))
        .unwrap();
    let r = web.post_json(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(r.status, 409, "{}", r.body);
    assert_eq!(
        r.json()["changes"],
        json!(["[notify_command] program: (absent) → \"sh\""])
    );
    assert!(r.json()["error"].as_str().unwrap().contains("differs"));
    let bearer = web.bearer();
    let none = web.request(
        "POST",
        &format!("/api/runs/{id}/resume"),
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(none.status, 409, "{}", none.body);
    let odd = web.post_json(&format!("/api/runs/{id}/resume"), &json!({"accept": true}));
    assert_eq!(odd.status, 422, "{}", odd.body);
    web.post_json(
        &format!("/api/runs/{id}/resume"),
        &json!({"accept_config": true}),
    );

    let form = |body: &str| {
        web.request(
            "POST",
            &format!("/runs/{id}/resume"),
            &[("Authorization", &web.bearer()), ("Origin", &web.origin())],
            Some(("application/x-www-form-urlencoded", body)),
        )
    };
    let page = form("");
    assert_eq!(page.status, 409, "{}", page.body);
    assert!(
        page.body
            .contains("[notify_command] program: (absent) → &quot;sh&quot;"),
        "{}",
        page.body
    );
    assert!(
        page.body.contains("name=\"accept_config\""),
        "{}",
        page.body
    );
    form("accept_config=yes");
    assert_eq!(
        *recorder.asked.lock().unwrap(),
        [
            format!("resume {id}"),
            format!("resume {id}"),
            format!("resume {id} accepting"),
            format!("resume {id}"),
            format!("resume {id} accepting"),
        ]
    );
}

#[test]
fn a_resume_adds_to_a_budget_first_from_the_api_and_from_the_form() {
    let recorder = Arc::new(Recorder::default());
    let web = web_with(recorder.clone());
    let id = web
        .store()
        .create_run(RunKind::Ralph, web.ws.root(), &json!({"prompt": "p"}))
        .unwrap();
    // A run its cost budget stopped: its page says so and offers to add to that budget.
    web.store()
        .append(
            Some(&id),
            &tether_store::Event::BudgetSpent {
                unit: tether_store::Unit::CostUsd,
                used: 5.2,
                limit: 5.0,
                goal_id: None,
                shared: false,
            },
        )
        .unwrap();
    let page = web.get(&format!("/runs/{id}")).body;
    assert!(page.contains("Add and resume"), "{page}");
    assert!(
        page.contains("<option value=\"cost_usd\" selected>cost budget</option>"),
        "the unit that stopped it is chosen: {page}"
    );
    let r = web.post_json(
        &format!("/api/runs/{id}/resume"),
        &json!({"add": {"iterations": 5, "cost_usd": 2.5}, "by": "ana"}),
    );
    assert_eq!(r.status, 202, "{}", r.body);
    let form = |body: &str| {
        web.request(
            "POST",
            &format!("/runs/{id}/resume"),
            &[("Authorization", &web.bearer()), ("Origin", &web.origin())],
            Some(("application/x-www-form-urlencoded", body)),
        )
    };
    assert_eq!(form("add=200k&unit=tokens&by=bo").status, 303);
    // An amount that is no amount of its unit never reaches the launcher.
    let bad = form("add=lots&unit=cost_usd");
    assert_eq!(bad.status, 400, "{}", bad.body);
    assert!(bad.body.contains("lots"), "{}", bad.body);
    assert_eq!(form("add=5&unit=apples").status, 400);
    assert_eq!(
        *recorder.asked.lock().unwrap(),
        [
            format!("resume {id} adding 5 iterations, $2.50 by web:ana"),
            format!("resume {id} adding 200k tokens by web:bo"),
        ]
    );
}

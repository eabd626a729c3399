//! Every route of the JSON API against the real server.

use serde_json::json;
use tether_store::{Event, RunKind};

use crate::common::{self, Web};

#[test]
fn runs_one_run_its_timeline_and_the_plan() {
    let web = Web::start();
    std::fs::write(
        web.ws.root().join("plan.md"),
        "# Plan: t\n\n## Goal: Greet by name\n<!-- id: greet -->\nstatus: active\ndone_when: it greets\nverify: sh test.sh\n\n- [ ] write greet.sh\n",
    )
    .unwrap();
    let store = web.store();
    let run = common::goal_run(&store, &web.ws);

    let runs = web.get("/api/runs").json();
    assert_eq!(runs[0]["id"], run.as_str());
    assert_eq!(runs[0]["kind"], "goal");
    assert_eq!(runs[0]["status"], "running");
    assert_eq!(runs[0]["goals"], json!(["greet"]));
    assert_eq!(runs[0]["max_iterations"], 5);
    assert_eq!(runs[0]["orphaned"], true, "no process holds its lock");

    let one = web.get(&format!("/api/runs/{run}")).json();
    assert_eq!(one["run"]["id"], run.as_str());
    let verdicts = one["verdicts"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    assert_eq!(verdicts[1]["checks"][0]["path"], "greet.sh");
    assert_eq!(verdicts[0]["missing"][0], "the verify command must pass");
    assert_eq!(one["plan"]["goals"][0]["id"], "greet");
    assert_eq!(
        one["plan"]["goals"][0]["subtasks"][0],
        json!(["write greet.sh", false])
    );

    let page = web.get(&format!("/api/runs/{run}/timeline?limit=3")).json();
    let kinds: Vec<&str> = page
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"]["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        ["iteration_completed", "iteration_started", "goal_verdict"]
    );
    let first = page[0]["seq"].as_i64().unwrap();
    let before = web
        .get(&format!("/api/runs/{run}/timeline?before={first}"))
        .json();
    assert_eq!(before.as_array().unwrap().len(), 4, "{before}");

    assert_eq!(
        web.get("/api/plan").json()["goals"][0]["title"],
        "Greet by name"
    );
    assert_eq!(web.get("/api/runs/r-nothere").status, 404);
    assert_eq!(web.get("/api/runs/not-an-id").status, 404);
}

#[test]
fn questions_answers_and_history() {
    let web = Web::start();
    let store = web.store();
    let q = common::question(&store, None, "Left or right?");
    let pending = web.get("/api/questions").json();
    assert_eq!(pending[0]["id"], q.id.as_str());
    assert_eq!(pending[0]["question"], "Left or right?");
    assert_eq!(pending[0]["abandoned"], json!(null));

    let path = format!("/api/questions/{}/answer", q.id);
    let empty = web.post_json(&path, &json!({"text": "  "}));
    assert_eq!(empty.status, 400);
    let first = web.post_json(&path, &json!({"text": "left", "responder": "ana"}));
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.json()["question"]["channel"], "web");
    let second = web.post_json(&path, &json!({"text": "right", "responder": "bo"}));
    assert_eq!(second.status, 409);
    assert_eq!(second.json()["answer"], "left");
    assert_eq!(second.json()["responder"], "ana");
    assert_eq!(
        web.post_json("/api/questions/q-zzzzzz/answer", &json!({"text": "x"}))
            .status,
        404
    );

    let withdrawn = common::question(&store, None, "Never mind");
    store.cancel_question(&withdrawn.id).unwrap();
    let gone = web.post_json(
        &format!("/api/questions/{}/answer", withdrawn.id),
        &json!({"text": "x"}),
    );
    assert_eq!(gone.status, 410);

    assert_eq!(web.get("/api/questions").json(), json!([]));
    let history = web.get("/api/history").json();
    assert_eq!(history.as_array().unwrap().len(), 2);
    assert_eq!(history[1]["answer"], "left");
}

#[test]
fn pause_cancel_and_say() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &json!({"prompt": "p", "max_iterations": 3}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();

    let said = web.post_json(
        &format!("/api/runs/{run}/say"),
        &json!({"text": "use an LRU", "by": "ana"}),
    );
    assert_eq!(said.status, 200, "{}", said.body);
    assert_eq!(said.json()["result"], "requested");
    let state = store.run(&run).unwrap().state;
    assert_eq!(state.queued_messages[0].text, "use an LRU");
    assert_eq!(state.queued_messages[0].by, "web:ana");

    // Nobody drives it (no lock), so the pause is applied directly.
    let paused = web.post_json(&format!("/api/runs/{run}/pause"), &json!({}));
    assert_eq!(paused.json()["result"], "applied");
    assert_eq!(store.run(&run).unwrap().state.status.as_str(), "paused");
    let again = web.post_json(&format!("/api/runs/{run}/pause"), &json!({}));
    assert_eq!(again.json()["result"], "unchanged");

    let cancelled = web.post_json(&format!("/api/runs/{run}/cancel"), &json!({"by": "bo"}));
    assert_eq!(cancelled.json()["result"], "applied");
    assert_eq!(store.run(&run).unwrap().state.status.as_str(), "cancelled");
    let late = web.post_json(&format!("/api/runs/{run}/say"), &json!({"text": "hello?"}));
    assert_eq!(late.status, 410);
    assert_eq!(
        web.post_json("/api/runs/r-nothere/pause", &json!({}))
            .status,
        404
    );
}

#[test]
fn a_live_loop_is_asked_not_changed() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(RunKind::Ralph, web.ws.root(), &json!({"prompt": "p"}))
        .unwrap();
    let _lock = tether_store::run_lock::RunLock::acquire(&web.ws.run_lock(run.as_str())).unwrap();
    let paused = web.post_json(&format!("/api/runs/{run}/pause"), &json!({"by": "ana"}));
    assert_eq!(paused.json()["result"], "requested");
    let state = store.run(&run).unwrap().state;
    assert_eq!(state.pause_requested.as_deref(), Some("web:ana"));
    assert_eq!(state.status.as_str(), "running");
    let r = web.get("/api/runs").json();
    assert_eq!(r[0]["pid"], std::process::id());
}

/// The runs page shows 200 runs and links to the next page, which starts right after the last
/// one shown, also when many runs were created in the same millisecond.
#[test]
fn the_runs_page_pages_through_every_run_once() {
    let web = Web::start();
    let store = web.store();
    let mut made = Vec::new();
    for i in 0..205 {
        let spec = json!({"prompt": format!("p{i}")});
        made.push(
            store
                .create_run(RunKind::Ralph, web.ws.root(), &spec)
                .unwrap()
                .to_string(),
        );
    }
    let ids_on = |body: &str| -> Vec<String> {
        body.split("id=\"run-")
            .skip(1)
            .map(|rest| rest.split('"').next().unwrap().to_owned())
            .collect()
    };
    let first = web.get("/");
    assert_eq!(first.status, 200);
    let mut seen = ids_on(&first.body);
    assert_eq!(seen.len(), 200);
    let link = first
        .body
        .split("href=\"/?after=")
        .nth(1)
        .expect("a link to older runs")
        .split('"')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(link, seen[199]);
    let second = web.get(&format!("/?after={link}"));
    assert_eq!(second.status, 200);
    assert!(
        !second.body.contains("?after="),
        "the last page links nowhere"
    );
    seen.extend(ids_on(&second.body));
    made.reverse();
    assert_eq!(seen, made, "every run once, newest first");
    assert!(ids_on(&web.get("/?after=r-nothere").body).is_empty());
}

/// The plan shows what only the store can tell: each contract against its approval, and a
/// `done` goal nobody signed off.
#[test]
fn the_plan_shows_contract_states_and_a_done_goal_without_a_sign_off() {
    let web = Web::start();
    let plan = |done_when: &str| {
        format!(
            "# Plan: t\n\n## Goal: Greet\n<!-- id: greet -->\nstatus: done\ndone_when: {done_when}\n\n\
             ## Goal: Wave\n<!-- id: wave -->\nstatus: active\ndone_when: it waves\n"
        )
    };
    std::fs::write(web.ws.root().join("plan.md"), plan("it greets")).unwrap();
    let view = web.get("/api/plan").json();
    assert_eq!(view["goals"][0]["contract"], "not approved yet");
    assert_eq!(
        view["goals"][0]["flag"],
        "done, but no sign-off is recorded"
    );
    assert_eq!(view["goals"][1]["flag"], serde_json::Value::Null);

    let doc = tether_plan::PlanDoc::parse("plan.md", plan("it greets"));
    let hash = doc.plan().goals[0].contract_hash();
    web.store()
        .approve_contract("plan.md", "greet", &hash, "ana")
        .unwrap();
    let view = web.get("/api/plan").json();
    assert_eq!(view["goals"][0]["contract"], "approved");

    std::fs::write(web.ws.root().join("plan.md"), plan("it greets loudly")).unwrap();
    let view = web.get("/api/plan").json();
    let changed = view["goals"][0]["contract"].as_str().unwrap();
    assert!(
        changed.starts_with("changed since ana approved it on "),
        "{changed}"
    );
}

#[test]
fn the_run_page_shows_the_runs_usage_once_any_is_known() {
    let web = Web::start();
    let store = web.store();
    let root = web.ws.root();
    let run = store
        .create_run(RunKind::Ralph, root, &json!({"max_iterations": 3}))
        .unwrap();
    let before = web.get(&format!("/runs/{run}"));
    assert_eq!(before.status, 200);
    assert!(!before.body.contains("usage:"), "{}", before.body);
    let usage = |n, cost_usd| Event::IterationUsage {
        n,
        input_tokens: 600,
        cached_input_tokens: 500,
        cache_write_input_tokens: 50,
        output_tokens: 170,
        cost_usd,
        goals: Vec::new(),
        duration_ms: 0,
    };
    store
        .append_all(Some(&run), &[usage(1, Some(0.5)), usage(2, Some(0.25))])
        .unwrap();
    let page = web.get(&format!("/runs/{run}"));
    assert!(
        page.body.contains(
            "usage: 1200 in (1000 cache read, 100 cache write) / 340 out tokens (≈ $0.7500)"
        ),
        "{}",
        page.body
    );
    let one = web.get(&format!("/api/runs/{run}")).json();
    assert_eq!(one["run"]["usage"]["input_tokens"], 1200);
    assert_eq!(one["run"]["usage"]["cached_input_tokens"], 1000);
    assert_eq!(one["run"]["usage"]["cache_write_input_tokens"], 100);
}

#[test]
fn the_run_page_shows_the_runs_report_escaped_once_there_is_one() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(RunKind::Goal, web.ws.root(), &json!({"plan": "plan.md"}))
        .unwrap();
    let before = web.get(&format!("/runs/{run}"));
    assert!(!before.body.contains("id=\"report\""), "{}", before.body);
    let dir = web.ws.runs_dir().join(run.as_str());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("report.md"),
        "# Run report\n\n- cited `a.rs:2`: \"<script>alert(1)</script>\"\n",
    )
    .unwrap();
    let page = web.get(&format!("/runs/{run}"));
    assert!(page.body.contains("id=\"report\""), "{}", page.body);
    assert!(
        page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;")
            && !page.body.contains("<script>alert(1)"),
        "{}",
        page.body
    );
    let one = web.get(&format!("/api/runs/{run}")).json();
    assert!(one["report"].as_str().unwrap().starts_with("# Run report"));
}

#[test]
fn a_run_in_a_worktree_of_its_own_shows_its_branch() {
    let web = Web::start();
    let store = web.store();
    let in_place = store
        .create_run(RunKind::Goal, web.ws.root(), &json!({"plan": "plan.md"}))
        .unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let worktree = store
        .create_run(RunKind::Goal, elsewhere.path(), &json!({"plan": "plan.md"}))
        .unwrap();
    let page = web.get(&format!("/runs/{worktree}"));
    assert!(
        page.body
            .contains(&format!("on branch <code>tether/{worktree}</code>")),
        "{}",
        page.body
    );
    assert_eq!(
        web.get(&format!("/api/runs/{worktree}")).json()["run"]["branch"],
        format!("tether/{worktree}")
    );
    assert!(
        !web.get(&format!("/runs/{in_place}"))
            .body
            .contains("on branch")
    );
    assert!(web.get(&format!("/api/runs/{in_place}")).json()["run"]["branch"].is_null());
}

#[test]
fn a_query_or_body_that_does_not_fit_is_answered_naming_the_field() {
    let web = Web::start();
    let run = web
        .store()
        .create_run(RunKind::Ralph, std::path::Path::new("/tmp"), &json!({}))
        .unwrap();
    for path in [
        "/api/runs?limit=x".to_owned(),
        format!("/api/runs/{run}/timeline?limit=-1"),
        "/api/history?limit=many".to_owned(),
    ] {
        let r = web.get(&path);
        assert_eq!(r.status, 400, "{path}: {}", r.body);
        let said = r.json()["error"].as_str().unwrap_or_default().to_owned();
        assert!(
            said.starts_with("the query does not fit this request: limit: "),
            "{path}: {said}"
        );
    }
    // A page gets the error page, naming the parameter.
    let page = web.get("/history?before=yesterday");
    assert_eq!(page.status, 400, "{}", page.body);
    assert!(page.body.contains("<!DOCTYPE html>"), "{}", page.body);
    assert!(page.body.contains("before: invalid digit"), "{}", page.body);
    let r = web.post_json(&format!("/api/runs/{run}/say"), &json!({"text": 5}));
    assert_eq!(r.status, 422, "{}", r.body);
    assert!(
        r.json()["error"]
            .as_str()
            .unwrap()
            .contains("text: invalid type"),
        "{}",
        r.body
    );
}

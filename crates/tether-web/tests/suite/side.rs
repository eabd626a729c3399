//! Side questions from the dashboard: `POST /api/runs/{id}/side` and the run page's "Ask about
//! this run" hand the question to the serving process's side asker (here one that records it
//! in the journal as the real one does, with a fixed answer), behind the same token, Host and
//! Origin rules as every change; the answer is shown in the page, escaped, and the run is left
//! as it was.

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::json;
use tether_store::control::SideAnswered;
use tether_store::{Event, RunId, RunKind, Seq, Store};
use tether_web::{LaunchError, SideAsker, SideReply};

use crate::common::{Options, Web};

/// Answers every question with `answer`, recording it as the runtime's asker does.
struct Fixed {
    answer: String,
    asked: Mutex<Vec<(String, String, String)>>,
    store: Mutex<Option<Store>>,
}

impl Fixed {
    fn new(answer: &str) -> Arc<Fixed> {
        Arc::new(Fixed {
            answer: answer.to_owned(),
            asked: Mutex::new(Vec::new()),
            store: Mutex::new(None),
        })
    }
}

impl SideAsker for Fixed {
    fn ask(
        &self,
        id: RunId,
        question: String,
        by: String,
    ) -> BoxFuture<'_, Result<SideReply, LaunchError>> {
        Box::pin(async move {
            self.asked
                .lock()
                .unwrap()
                .push((id.to_string(), question.clone(), by.clone()));
            let store = self.store.lock().unwrap();
            let store = store.as_ref().unwrap();
            let run = store
                .run(&id)
                .map_err(|e| LaunchError::NotFound(e.to_string()))?;
            let seq = tether_store::control::side_question(
                store,
                &run,
                SideAnswered {
                    question,
                    answer: self.answer.clone(),
                    by,
                    model: "fake side".into(),
                    calls: 1,
                    ..SideAnswered::default()
                },
            )
            .map_err(|e| LaunchError::Failed(e.to_string()))?;
            Ok(SideReply {
                answer: self.answer.clone(),
                model: "fake side".into(),
                seq,
            })
        })
    }
}

fn web_with(side: Arc<Fixed>) -> Web {
    let web = Web::start_with(Options {
        side: Some(side.clone()),
        ..Options::default()
    });
    *side.store.lock().unwrap() = Some(web.store());
    web
}

/// A Ralph run in its first iteration.
fn running(web: &Web) -> RunId {
    let store = web.store();
    let id = store
        .create_run(
            RunKind::Ralph,
            std::path::Path::new("/tmp"),
            &json!({"prompt": "Fix it."}),
        )
        .unwrap();
    store
        .append(Some(&id), &Event::IterationStarted { n: 1 })
        .unwrap();
    id
}

#[test]
fn the_api_answers_records_and_leaves_the_run_alone() {
    let side = Fixed::new("It is fixing the parser.");
    let web = web_with(side.clone());
    let id = running(&web);
    let before = web.store().run(&id).unwrap();
    let r = web.post_json(
        &format!("/api/runs/{id}/side"),
        &json!({"question": "What is it doing?", "by": "ana"}),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let body = r.json();
    assert_eq!(body["run"], id.as_str());
    assert_eq!(body["question"], "What is it doing?");
    assert_eq!(body["answer"], "It is fixing the parser.");
    assert_eq!(body["model"], "fake side");
    assert_eq!(
        *side.asked.lock().unwrap(),
        [(
            id.to_string(),
            "What is it doing?".to_owned(),
            "web:ana".to_owned()
        )]
    );
    let after = web.store().run(&id).unwrap();
    assert_eq!(
        (after.status, after.state.in_progress),
        (before.status, before.state.in_progress)
    );
    assert!(after.state.queued_messages.is_empty());
    let events = web.store().events(&id, Seq(0), 100).unwrap();
    let last = events.last().unwrap();
    assert_eq!(last.kind, "side_question");
    assert_eq!(last.seq.0, body["seq"].as_i64().unwrap());
    // The timeline shows it, as a side question.
    let timeline = web.get(&format!("/runs/{id}"));
    assert!(
        timeline.body.contains("Side question from web:ana"),
        "{}",
        timeline.body
    );
}

#[test]
fn a_side_question_is_a_change_like_any_other() {
    let side = Fixed::new("x");
    let web = web_with(side.clone());
    let id = running(&web);
    let path = format!("/api/runs/{id}/side");
    let body = json!({"question": "why?"}).to_string();
    let json = Some(("application/json", body.as_str()));
    let bearer = web.bearer();
    assert_eq!(web.request("POST", &path, &[], json).status, 401);
    let cross = web.request(
        "POST",
        &path,
        &[
            ("Authorization", &bearer),
            ("Origin", "http://evil.example"),
        ],
        json,
    );
    assert_eq!(cross.status, 403, "{}", cross.body);
    let empty = web.post_json(&path, &json!({"question": "  "}));
    assert_eq!(empty.status, 400, "{}", empty.body);
    let odd = web.post_json(&path, &json!({"text": "why?"}));
    assert_eq!(odd.status, 422, "{}", odd.body);
    assert!(odd.json()["error"].as_str().unwrap().contains("question"));
    let unknown = web.post_json("/api/runs/r-zzzzzz/side", &json!({"question": "why?"}));
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(
        side.asked.lock().unwrap().len(),
        1,
        "only the question about the unknown run reached it"
    );
    assert!(
        !web.store()
            .events(&id, Seq(0), 100)
            .unwrap()
            .iter()
            .any(|e| e.kind == "side_question")
    );
}

#[test]
fn a_dashboard_without_a_side_asker_answers_none_and_shows_no_form() {
    let web = Web::start();
    let id = running(&web);
    let r = web.post_json(
        &format!("/api/runs/{id}/side"),
        &json!({"question": "why?"}),
    );
    assert_eq!(r.status, 501, "{}", r.body);
    let page = web.get(&format!("/runs/{id}"));
    assert!(page.body.contains("Ask about this run"), "{}", page.body);
    assert!(!page.body.contains(&format!("action=\"/runs/{id}/side\"")));
    assert!(page.body.contains(&format!("tether side --run {id}")));
}

#[test]
fn the_form_shows_the_answer_in_the_page_escaped() {
    let side = Fixed::new("Use <b>care</b>\u{1b}[2J & read src/lib.rs");
    let web = web_with(side.clone());
    let id = running(&web);
    let page = web.get(&format!("/runs/{id}"));
    assert!(page.body.contains("Ask about this run"), "{}", page.body);
    assert!(page.body.contains(&format!("action=\"/runs/{id}/side\"")));
    let r = web.request(
        "POST",
        &format!("/runs/{id}/side"),
        &[("Authorization", &web.bearer()), ("Origin", &web.origin())],
        Some((
            "application/x-www-form-urlencoded",
            "text=What+next%3F&by=bo",
        )),
    );
    assert_eq!(r.status, 303, "{}", r.body);
    let to = r.header("location").unwrap().to_owned();
    assert!(
        to.starts_with(&format!("/runs/{id}?side=")) && to.ends_with("#side-answer"),
        "{to}"
    );
    let shown = web.get(&to);
    assert_eq!(shown.status, 200, "{}", shown.body);
    let answer = shown
        .body
        .split("id=\"side-answer\"")
        .nth(1)
        .expect("the answer is shown")
        .split("</div>")
        .next()
        .unwrap()
        .to_owned();
    assert!(answer.contains("What next?"), "{answer}");
    assert!(answer.contains("fake side"), "{answer}");
    assert!(answer.contains("Use &lt;b&gt;care&lt;/b&gt;"), "{answer}");
    assert!(!answer.contains('\u{1b}'), "{answer}");
    assert_eq!(side.asked.lock().unwrap()[0].2, "web:bo");
    // Another run's side question is not shown on this page.
    let other = running(&web);
    let elsewhere = web.get(&format!("/runs/{other}{}", &to[to.find('?').unwrap()..]));
    assert!(!elsewhere.body.contains("id=\"side-answer\""));
}

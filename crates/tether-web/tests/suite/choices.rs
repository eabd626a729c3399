//! Questions with choices on the dashboard: a button per option beside the free-text form
//! (a plain form post, no script needed), the JSON API taking `{"choice": i}`, the live
//! fragments carrying the buttons, labels escaped everywhere, and the choice shown once made.

use std::time::Duration;

use serde_json::json;
use tether_store::{NewQuestion, Question, Store};

use crate::common::Web;

fn with_options(store: &Store, options: &[&str]) -> Question {
    store
        .insert_question(&NewQuestion {
            question: "Which database? I suggest Postgres.".into(),
            context: "a small app".into(),
            confidence: Some(20),
            options: options.iter().map(|o| (*o).to_owned()).collect(),
            ..NewQuestion::default()
        })
        .unwrap()
}

/// The `<article>` of question `id` in `page`.
fn card<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<article class=\"card question\" id=\"q-{id}\""))
        .unwrap_or_else(|| panic!("no card for {id}: {page}"));
    let end = start + page[start..].find("</article>").unwrap() + "</article>".len();
    &page[start..end]
}

/// Posts the answer form of `id` as the page does.
fn post_form(web: &Web, id: &str, body: &str) -> crate::common::Resp {
    web.request(
        "POST",
        &format!("/questions/{id}/answer"),
        &[
            ("Authorization", &web.bearer()),
            ("Origin", &web.origin()),
            ("Sec-Fetch-Site", "same-origin"),
        ],
        Some(("application/x-www-form-urlencoded", body)),
    )
}

#[test]
fn the_card_offers_a_button_per_option_beside_the_free_text_form() {
    let web = Web::start();
    let q = with_options(&web.store(), &["Postgres", "<b>SQLite</b> & \"friends\""]);
    let page = web.get("/");
    assert_eq!(page.status, 200);
    let mut html = card(&page.body, q.id.as_str()).replace(q.id.as_str(), "q-ID");
    assert!(!html.contains("<b>SQLite"), "labels are text: {html}");
    // When it was asked changes from run to run.
    let meta = html.find("<p class=\"meta\">").unwrap();
    let end = meta + html[meta..].find("</p>").unwrap();
    html.replace_range(meta..end, "<p class=\"meta\">…");
    insta::assert_snapshot!(html.replace("><", ">\n<"));
}

#[test]
fn a_choice_button_answers_with_that_option_without_any_script() {
    let web = Web::start();
    let store = web.store();
    let q = with_options(&store, &["Postgres", "SQLite"]);
    // The button sends its `choice` with the (empty) text field and the name.
    let r = post_form(&web, q.id.as_str(), "text=&responder=ana&choice=1");
    assert_eq!(r.status, 303, "{}", r.body);
    assert_eq!(r.header("location"), Some("/?notice=answered"));
    let answered = store.question(&q.id).unwrap();
    assert_eq!(
        (
            answered.answer.as_deref(),
            answered.choice,
            answered.channel.as_deref()
        ),
        (Some("SQLite"), Some(1), Some("web"))
    );
    let history = web.get("/history").body;
    assert!(history.contains("(option 2 of 2)"), "{history}");

    // Free text in the same form is free text (or a choice, when it names one).
    let q = with_options(&store, &["Postgres", "SQLite"]);
    let r = post_form(
        &web,
        q.id.as_str(),
        "text=Neither%2C+use+files&responder=ana",
    );
    assert_eq!(r.status, 303);
    let answered = store.question(&q.id).unwrap();
    assert_eq!(
        (answered.answer.as_deref(), answered.choice),
        (Some("Neither, use files"), None)
    );
}

#[test]
fn the_api_takes_a_choice_by_index() {
    let web = Web::start();
    let store = web.store();
    let q = with_options(&store, &["Postgres", "SQLite"]);
    let pending = web.get("/api/questions").json();
    assert_eq!(pending[0]["options"], json!(["Postgres", "SQLite"]));
    let path = format!("/api/questions/{}/answer", q.id);
    let wrong = web.post_json(&path, &json!({"choice": 2}));
    assert_eq!(wrong.status, 400, "{}", wrong.body);
    assert!(wrong.body.contains("no option 2"), "{}", wrong.body);
    let r = web.post_json(&path, &json!({"choice": 0, "responder": "bo"}));
    assert_eq!(r.status, 200, "{}", r.body);
    let answered = r.json();
    assert_eq!(
        (
            &answered["question"]["answer"],
            &answered["question"]["choice"]
        ),
        (&json!("Postgres"), &json!(0))
    );
    let plain = crate::common::question(&store, None, "Ship it?");
    let r = web.post_json(
        &format!("/api/questions/{}/answer", plain.id),
        &json!({"choice": 0}),
    );
    assert_eq!(r.status, 400, "a plain question has no options: {}", r.body);
}

#[test]
fn the_live_card_carries_the_buttons_escaped() {
    let web = Web::start();
    let mut live = web.sse(
        &format!(
            "/live?page=runs&after={}",
            web.store().last_seq().unwrap().0
        ),
        &[],
    );
    with_options(&web.store(), &["Postgres", "<script>x</script>"]);
    let msg = live.next(Duration::from_secs(10)).expect("a live update");
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    let html = ops[0]["html"].as_str().unwrap();
    assert!(
        html.contains("name=\"choice\" value=\"0\"") && html.contains(">Postgres<"),
        "{html}"
    );
    assert!(html.contains("&lt;script&gt;x&lt;/script&gt;"), "{html}");
    assert!(!html.contains("<script>"), "{html}");
}

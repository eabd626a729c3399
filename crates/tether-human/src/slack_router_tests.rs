//! The router's second look: a press that arrives before its question's wait is registered is
//! still stored once the registration lands.

use std::time::Duration;

use tether_slack::{ApiOptions, ButtonPress, RawSlackSettings, SlackSettings};
use tether_store::{NewQuestion, Store};

use super::*;

fn router(registry: Registry) -> Router {
    let settings = SlackSettings::new(&RawSlackSettings {
        api_url: Some("http://127.0.0.1:9/api".into()),
        bot_token: Some(tether_config::Secret::new("xoxb-test")),
        app_token: Some(tether_config::Secret::new("xapp-test")),
        channel: Some("C0TETHER001".into()),
        ..RawSlackSettings::with_default_envs()
    })
    .unwrap();
    Router::new(
        registry,
        Arc::default(),
        SlackApi::new(&settings, &ApiOptions::default()).unwrap(),
        // This process's own store and workspace: another workspace's, here.
        Journal::new(Store::open_in_memory().unwrap(), Vec::new()).unwrap(),
        PathBuf::from("/nonexistent/other-workspace/.tether"),
    )
}

#[tokio::test]
async fn a_press_before_the_wait_is_registered_is_stored_when_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let state_dir = dir.path().join(".tether");
    std::fs::create_dir_all(&state_dir).unwrap();
    let store = Store::open(state_dir.join("tether.db")).unwrap();
    let q = store
        .insert_question(&NewQuestion {
            question: "Merge?".into(),
            options: vec!["yes".into(), "no".into()],
            ..NewQuestion::default()
        })
        .unwrap();
    let registry = Registry::at(dir.path().join("registry"));
    let press = Incoming::Button(ButtonPress {
        channel: "C0TETHER001".into(),
        message_ts: Ts::parse("1700000000.000100").unwrap(),
        thread_ts: Ts::parse("1700000000.000100").unwrap(),
        user: "U0HUMAN0001".into(),
        user_name: Some("Ada".into()),
        action_id: tether_slack::option_action_id(1),
    });
    router(registry.clone()).route(&press);
    assert_eq!(
        store.question(&q.id).unwrap().status,
        QuestionStatus::Pending
    );
    registry.add(&Entry {
        state_dir: state_dir.clone(),
        question_id: q.id.to_string(),
        channel: "C0TETHER001".into(),
        thread_ts: "1700000000.000100".into(),
        ts: "1700000000.000100".into(),
    });
    let answered =
        tether_testkit::wait_until_async("the late press stored", Duration::from_secs(10), || {
            let q = store.question(&q.id).ok()?;
            (q.status == QuestionStatus::Answered).then_some(q)
        })
        .await
        .unwrap();
    assert_eq!(
        (
            answered.answer.as_deref(),
            answered.choice,
            answered.responder.as_deref()
        ),
        (Some("no"), Some(1), Some("Ada"))
    );
}

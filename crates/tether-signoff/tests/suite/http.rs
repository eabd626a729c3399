//! The judge over real HTTP (the fake model server): an accept, a 400, silence past the
//! timeout; and building a judge from `[judge]` (same-model refusal, the key).

use std::time::Duration;

use serde_json::json;
use tether_config::{Api, JudgeConfig, MapEnv, ModelConfig};
use tether_model::scripted::Script;
use tether_model::{Endpoint, HttpOptions};
use tether_signoff::{Judge, JudgeSetupError};
use tether_testkit::model_server::{FakeModelServer, Fault};

use crate::common::{Fx, check, verdict};

fn http_judge(server: &FakeModelServer, api: Api, timeout: Duration) -> Judge {
    let endpoint = Endpoint::new(api, server.base_url(api), "judge-model");
    Judge::new(
        tether_model::connect(endpoint, HttpOptions::default()).unwrap(),
        "judge-model",
        timeout,
    )
}

#[tokio::test]
async fn a_judge_over_http_accepts_and_its_errors_and_silence_are_rejects() {
    let fx = Fx::new();
    let server = FakeModelServer::start(Script::turns([
        verdict(
            "accept",
            json!([check("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {")]),
            &[],
        ),
        verdict(
            "accept",
            json!([check("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {")]),
            &[],
        ),
    ]))
    .await
    .unwrap();
    let config = JudgeConfig {
        endpoint: ModelConfig {
            api: Api::Anthropic,
            base_url: server.base_url(Api::Anthropic),
            model: "judge-model".into(),
            api_key_env: None,
            price: None,
        },
        same_model: false,
        timeout_secs: 30,
        agree: tether_config::Agree::All,
        panel: Vec::new(),
    };

    server.fault_next(1, Fault::Status(400));
    let judge = Judge::from_config(&config, None, &MapEnv::new()).unwrap();
    let outcome = fx.complete(Some(judge.clone())).await;
    assert!(outcome.judge_unavailable(), "{outcome:?}");
    assert!(outcome.reason().starts_with("judge unavailable: the model call failed: the model endpoint rejected the request (HTTP 400)"), "{}", outcome.reason());
    assert_eq!(server.request_count(), 1, "a 400 is not retried");

    server.fault_next(1, Fault::HoldBeforeHeaders);
    let outcome = fx
        .complete(Some(http_judge(
            &server,
            Api::Anthropic,
            Duration::from_millis(300),
        )))
        .await;
    assert_eq!(
        outcome.reason(),
        "judge unavailable: no verdict within 0.30 s (judge.timeout_secs)"
    );
    server
        .wait_for_disconnects(1, Duration::from_secs(10))
        .await
        .unwrap();

    let outcome = fx.complete(Some(judge)).await;
    assert!(outcome.is_accepted(), "{outcome:?}");
    let last = server.requests().pop().unwrap();
    assert_eq!(last.path, "/v1/messages");
    assert!(last.body["system"].to_string().contains("sign-off judge"));
    let attempts: Vec<u32> = fx.verdicts().iter().map(|v| v.decision.attempt).collect();
    assert_eq!(attempts, [1, 2, 3]);
}

#[test]
fn a_judge_that_is_the_executors_model_is_refused_unless_allowed() {
    let model = ModelConfig {
        api: Api::OpenAiChat,
        base_url: "http://127.0.0.1:9/v1".into(),
        model: "m".into(),
        api_key_env: None,
        price: None,
    };
    let mut judge = JudgeConfig {
        endpoint: ModelConfig {
            base_url: "http://127.0.0.1:9/v1/".into(),
            ..model.clone()
        },
        same_model: false,
        timeout_secs: 5,
        agree: tether_config::Agree::All,
        panel: Vec::new(),
    };
    let err = Judge::from_config(&judge, Some(&model), &MapEnv::new()).unwrap_err();
    assert!(matches!(err, JudgeSetupError::SameModel { .. }));
    assert!(
        err.to_string().contains("set `judge.same_model = true`"),
        "{err}"
    );
    judge.same_model = true;
    assert_eq!(
        Judge::from_config(&judge, Some(&model), &MapEnv::new())
            .unwrap()
            .model_name(),
        "m"
    );
    judge.same_model = false;
    judge.endpoint.model = "other".into();
    judge.endpoint.api_key_env = Some("JUDGE_KEY".into());
    let err = Judge::from_config(&judge, Some(&model), &MapEnv::new()).unwrap_err();
    assert!(err.to_string().contains("JUDGE_KEY"), "{err}");
    let env = MapEnv::new().with("JUDGE_KEY", "k");
    assert_eq!(
        Judge::from_config(&judge, Some(&model), &env)
            .unwrap()
            .timeout(),
        Duration::from_secs(5)
    );
}

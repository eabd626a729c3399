//! `tether doctor` with Slack among the channels, against the fake Slack: the tokens taken, a
//! Socket Mode connection possible, the channel readable — and every failure names what to fix
//! without printing a token.

use std::fs;
use std::path::Path;

use serde_json::Value;
use tether_testkit::FakeSlackServer;

use crate::common::{cmd, runtime, text};

/// `tether doctor --json`'s slack check with these tokens and this channel.
fn doctor(
    dir: &Path,
    slack: &FakeSlackServer,
    tokens: (&str, &str),
    channel: &str,
) -> (Value, String) {
    fs::write(
        dir.join("tether.toml"),
        format!(
            "[human]\nchannels = [\"cli\", \"slack\"]\n\n[slack]\nchannel = \"{channel}\"\napi_url = \"{}\"\n",
            slack.api_url()
        ),
    )
    .unwrap();
    let out = cmd(dir, &["doctor", "--json"])
        .env("SLACK_BOT_TOKEN", tokens.0)
        .env("SLACK_APP_TOKEN", tokens.1)
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "slack")
        .unwrap()
        .clone();
    (check, all)
}

#[test]
fn doctor_checks_both_tokens_and_the_channel() {
    let rt = runtime();
    let slack = rt.block_on(FakeSlackServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let good = (slack.bot_token().to_owned(), slack.app_token().to_owned());

    let (ok, _) = doctor(
        dir.path(),
        &slack,
        (&good.0, &good.1),
        FakeSlackServer::CHANNEL,
    );
    assert_eq!(ok["status"], "pass", "{ok}");
    assert!(
        ok["detail"]
            .as_str()
            .unwrap()
            .contains("Socket Mode connects"),
        "{ok}"
    );

    let (bad_bot, all) = doctor(
        dir.path(),
        &slack,
        ("xoxb-wrong", &good.1),
        FakeSlackServer::CHANNEL,
    );
    assert_eq!(bad_bot["status"], "fail", "{bad_bot}");
    assert!(
        bad_bot["fix"].as_str().unwrap().contains("SLACK_BOT_TOKEN"),
        "{bad_bot}"
    );
    assert!(!all.contains("xoxb-wrong"), "a token was printed: {all}");

    let (bad_app, all) = doctor(
        dir.path(),
        &slack,
        (&good.0, "xapp-wrong"),
        FakeSlackServer::CHANNEL,
    );
    assert_eq!(bad_app["status"], "fail", "{bad_app}");
    assert!(
        bad_app["fix"].as_str().unwrap().contains("SLACK_APP_TOKEN"),
        "{bad_app}"
    );
    assert!(!all.contains("xapp-wrong"), "a token was printed: {all}");

    let (elsewhere, _) = doctor(dir.path(), &slack, (&good.0, &good.1), "C0NOWHERE01");
    assert_eq!(elsewhere["status"], "fail", "{elsewhere}");
    assert!(
        elsewhere["fix"].as_str().unwrap().contains("/invite"),
        "{elsewhere}"
    );
}

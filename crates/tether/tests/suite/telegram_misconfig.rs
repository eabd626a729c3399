//! Telegram set up wrong: listed in `human.channels` without its token, `tether ask` exits 2
//! naming the variable to set (and only what is missing), as for Zulip; `tether doctor` checks
//! the token and the chat against the fake Bot API, names the fix, and never prints the token.

use std::fs;
use std::path::Path;

use serde_json::Value;
use tether_testkit::FakeTelegramServer;

use crate::common::{cmd, runtime, text};

#[test]
fn tether_ask_exits_2_naming_the_missing_token_variable() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[human]\nchannels = [\"cli\", \"telegram\"]\n\n[telegram]\nchat_id = \"-1001234567890\"\nbot_token_env = \"MY_BOT_TOKEN\"\n",
    )
    .unwrap();
    let out = cmd(dir.path(), &["ask", "Which colour?"])
        .env_remove("MY_BOT_TOKEN")
        .env_remove("TELEGRAM_CHAT_ID")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("MY_BOT_TOKEN"), "{err}");
    assert!(!err.contains("chat_id"), "only what is missing: {err}");
}

/// `tether doctor --json`'s telegram check, the bot's token being `token` and its chat `chat`.
fn doctor(dir: &Path, server: &FakeTelegramServer, token: &str, chat: i64) -> (Value, String) {
    fs::write(
        dir.join("tether.toml"),
        format!(
            "[human]\nchannels = [\"cli\", \"telegram\"]\n\n[telegram]\nchat_id = \"{chat}\"\napi_url = \"{}\"\n",
            server.api_url()
        ),
    )
    .unwrap();
    let out = cmd(dir, &["doctor", "--json"])
        .env("TELEGRAM_BOT_TOKEN", token)
        .env_remove("TELEGRAM_CHAT_ID")
        .output()
        .unwrap();
    let all = format!("{}{}", text(&out.stdout), text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "telegram")
        .unwrap()
        .clone();
    (check, all)
}

#[test]
fn doctor_checks_the_token_and_the_chat() {
    let rt = runtime();
    let server = rt.block_on(FakeTelegramServer::start()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token = server.token().to_owned();

    let (ok, _) = doctor(dir.path(), &server, &token, FakeTelegramServer::GROUP);
    assert_eq!(ok["status"], "pass", "{ok}");
    assert_eq!(
        ok["detail"],
        "bot Tether (@tether_bot) in chat -1001 (supergroup): questions go as reply chains"
    );
    let (forum, _) = doctor(dir.path(), &server, &token, FakeTelegramServer::FORUM);
    assert!(
        forum["detail"]
            .as_str()
            .unwrap()
            .ends_with("a topic per conversation"),
        "{forum}"
    );

    let (missing, _) = doctor(dir.path(), &server, &token, 42);
    assert_eq!(missing["status"], "fail");
    assert!(
        missing["detail"]
            .as_str()
            .unwrap()
            .contains("chat not found"),
        "{missing}"
    );
    assert!(
        missing["fix"]
            .as_str()
            .unwrap()
            .contains("telegram.chat_id"),
        "{missing}"
    );

    let wrong = "7001:AAWrongToken-should-never-be-printed";
    let (refused, all) = doctor(dir.path(), &server, wrong, FakeTelegramServer::GROUP);
    assert_eq!(refused["status"], "fail");
    assert!(
        refused["fix"]
            .as_str()
            .unwrap()
            .contains("TELEGRAM_BOT_TOKEN"),
        "{refused}"
    );
    assert!(
        !all.contains("AAWrongToken"),
        "the token was printed: {all}"
    );
}

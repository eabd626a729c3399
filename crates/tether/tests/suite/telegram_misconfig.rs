//! Telegram listed in `human.channels` without its token: `tether ask` exits 2 naming the
//! variable to set (and only what is missing), as for Zulip.

use std::fs;

use crate::common::{cmd, text};

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

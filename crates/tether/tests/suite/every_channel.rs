//! One question offered on every chat at once — Zulip, Slack and Telegram, each played by its
//! fake server, beside the CLI — with the real `tether ask`: it is posted once on each, the
//! first answer wins (a Slack button here, a Telegram reply there), the others are told who
//! answered where, and a late answer on another chat changes nothing.

use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use tether_store::{AnswerOutcome, QuestionId, Store};
use tether_testkit::telegram_server::Method;
use tether_testkit::zulip_server::FakeZulipServer;
use tether_testkit::{FakeSlackServer, FakeTelegramServer, wait_until};

use crate::common::{PATIENCE, cmd, runtime, wait_output};

const CHAT: i64 = FakeTelegramServer::GROUP;

/// The three fakes.
struct Chats {
    zulip: FakeZulipServer,
    slack: FakeSlackServer,
    telegram: FakeTelegramServer,
}

/// A workspace whose questions go to every chat of `chats` (and the CLI).
fn workspace(chats: &Chats) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[human]\nchannels = [\"cli\", \"zulip\", \"slack\", \"telegram\"]\n\n\
             [slack]\nchannel = \"{}\"\napi_url = \"{}\"\n\n[telegram]\napi_url = \"{}\"\n",
            FakeSlackServer::CHANNEL,
            chats.slack.api_url(),
            chats.telegram.api_url()
        ),
    )
    .unwrap();
    dir
}

/// `tether ask --json` with two options, reaching every chat.
fn ask(dir: &Path, chats: &Chats, question: &str) -> Child {
    let mut c: Command = cmd(
        dir,
        &[
            "ask", "--json", question, "--option", "Teal", "--option", "Navy",
        ],
    );
    c.env("ZULIP_SERVER_URL", chats.zulip.server_url())
        .env("ZULIP_BOT_EMAIL", chats.zulip.bot_email())
        .env("ZULIP_BOT_API_KEY", chats.zulip.api_key())
        .env("ZULIP_STREAM", chats.zulip.stream())
        .env("SLACK_BOT_TOKEN", chats.slack.bot_token())
        .env("SLACK_APP_TOKEN", chats.slack.app_token())
        .env("TETHER_SLACK_REGISTRY", dir.join(".slack-waits"))
        .env("TELEGRAM_BOT_TOKEN", chats.telegram.token())
        .env("TELEGRAM_CHAT_ID", CHAT.to_string())
        .env("XDG_RUNTIME_DIR", dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

fn store(dir: &Path) -> Store {
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

/// Where the pending question was posted, once it is on all three chats: its id, the Zulip
/// topic, the Slack message and the Telegram message.
fn posted_everywhere(dir: &Path) -> (QuestionId, String, String, i64) {
    wait_until("the question to be posted on every chat", PATIENCE, || {
        let store = store(dir);
        let q = store.pending_questions().ok()?.into_iter().next()?;
        let posts = store.posts(&q.id).ok()?;
        let on = |name: &str| {
            posts
                .iter()
                .find(|p| p.channel == name)
                .map(|p| p.external_ref.clone())
        };
        let (zulip, slack, telegram) = (on("zulip")?, on("slack")?, on("telegram")?);
        Some((
            q.id,
            zulip["topic"].as_str()?.to_owned(),
            slack["ts"].as_str()?.to_owned(),
            telegram["message_id"].as_i64()?,
        ))
    })
    .unwrap()
}

/// The answer `tether ask --json` printed.
fn answered(child: Child) -> Value {
    let out = wait_output(child);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_question_on_every_chat_is_answered_once_and_the_others_are_told() {
    let rt = runtime();
    let chats = Chats {
        zulip: rt.block_on(FakeZulipServer::start()).unwrap(),
        slack: rt.block_on(FakeSlackServer::start()).unwrap(),
        telegram: rt
            .block_on(
                FakeTelegramServer::builder()
                    .longpoll_timeout(Duration::from_millis(300))
                    .start(),
            )
            .unwrap(),
    };
    let ws = workspace(&chats);
    let dir = ws.path();

    // A button on Slack wins.
    let child = ask(dir, &chats, "Which colour should the logo be?");
    let (id, topic, slack_ts, tg_message) = posted_everywhere(dir);
    rt.block_on(chats.slack.wait_for_sockets(1, PATIENCE))
        .unwrap();
    rt.block_on(
        chats
            .telegram
            .wait_for_count(Method::GetUpdates, 1, PATIENCE),
    )
    .unwrap();
    chats.slack.press_button(
        &slack_ts,
        FakeSlackServer::HUMAN,
        &tether_slack::option_action_id(1),
    );
    let a = answered(child);
    assert_eq!(
        (&a["text"], &a["channel"], &a["choice"]),
        (&Value::from("Navy"), &Value::from("slack"), &Value::from(1)),
        "{a}"
    );
    // Posted once on each chat; Zulip and Telegram say it was answered on Slack.
    assert_eq!(chats.slack.questions().len(), 1);
    assert_eq!(
        chats.telegram.bot_messages(CHAT).len(),
        2,
        "the question and the note"
    );
    let zulip_said = wait_until("Zulip to be told", PATIENCE, || {
        let notes: Vec<String> = chats
            .zulip
            .messages_in(&topic)
            .into_iter()
            .map(|m| m.content)
            .filter(|c| c.contains("slack"))
            .collect();
        notes.into_iter().next()
    })
    .unwrap();
    assert!(
        zulip_said.to_lowercase().contains("answered"),
        "{zulip_said}"
    );
    let telegram_said = chats.telegram.bot_messages(CHAT)[1].clone();
    assert_eq!(
        telegram_said.reply_to,
        Some(tg_message),
        "{telegram_said:?}"
    );
    assert!(
        telegram_said.text.contains("slack"),
        "{}",
        telegram_said.text
    );

    // A late reply on another chat is not a second answer.
    chats
        .telegram
        .reply(&chats.telegram.alice(), CHAT, tg_message, "Teal");
    chats.zulip.post_as_human(&topic, "1");
    let store = store(dir);
    assert!(matches!(
        store.answer_question(&id, "Teal", "cli", "late").unwrap(),
        AnswerOutcome::AlreadyAnswered { ref by_channel, .. } if by_channel == "slack"
    ));
    let q = store.question(&id).unwrap();
    assert_eq!((q.answer.as_deref(), q.choice), (Some("Navy"), Some(1)));

    // Next time a typed reply on Telegram wins, and Slack's thread is told.
    let child = ask(dir, &chats, "And the font?");
    let (_, _, slack_ts, tg_message) = wait_until("the second question", PATIENCE, || {
        let p = posted_everywhere(dir);
        (p.0 != id).then_some(p)
    })
    .unwrap();
    chats
        .telegram
        .reply(&chats.telegram.alice(), CHAT, tg_message, "1");
    let a = answered(child);
    assert_eq!(
        (&a["text"], &a["channel"], &a["choice"]),
        (
            &Value::from("Teal"),
            &Value::from("telegram"),
            &Value::from(0)
        ),
        "{a}"
    );
    let slack_said = wait_until("Slack's thread to be told", PATIENCE, || {
        chats
            .slack
            .notes_in(&slack_ts)
            .into_iter()
            .map(|m| m.text)
            .find(|t| t.contains("telegram"))
    })
    .unwrap();
    assert!(
        slack_said.to_lowercase().contains("answered"),
        "{slack_said}"
    );
    assert_eq!(chats.slack.questions().len(), 2);
}

//! An agent's question reaches a Slack or Discord webhook as text, not markup: through the real
//! binary (`tether ask`, as an agent calls it), a question that tries to ping the whole channel
//! and to show a link whose text hides its target arrives escaped for that chat, while a plain
//! URL, code with `<` and `>` and an email address read as written.

use std::fs;
use std::process::Stdio;

use serde_json::Value;

use crate::common::webhook::Webhook;
use crate::common::{PATIENCE, cmd, pending_question, run, text, wait_output};

const QUESTION: &str = "<!channel> @everyone @here <@U0123> <https://evil.example|https://docs.example> \
     [the docs](https://evil.example) || a < b && c > d, see https://example.com/a_b or ana@example.com";

/// The `question` body a webhook in `format` received for [`QUESTION`].
fn asked_in(format: &str) -> Value {
    let hook = Webhook::start();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!("{}format = {format:?}\n", hook.toml()),
    )
    .unwrap();
    let asking = cmd(dir.path(), &["ask", QUESTION])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = pending_question(dir.path())["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Answered only once the webhook has the question: an answer first cancels the offer.
    let body = tether_testkit::wait_until("the question at the webhook", PATIENCE, || {
        hook.bodies().into_iter().next()
    })
    .unwrap();
    let answered = run(dir.path(), &["answer", &id, "no"]);
    assert_eq!(
        answered.status.code(),
        Some(0),
        "{}",
        text(&answered.stderr)
    );
    let asked = wait_output(asking);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    body
}

#[test]
fn a_slack_webhook_gets_the_question_escaped() {
    let body = asked_in("slack");
    let shown = body["text"].as_str().unwrap();
    assert!(
        !shown.contains('<'),
        "no mention or link can start: {shown}"
    );
    for escaped in [
        "&lt;!channel&gt;",
        "&lt;@U0123&gt;",
        "&lt;https://evil.example|https://docs.example&gt;",
        "a &lt; b &amp;&amp; c &gt; d",
        "see https://example.com/a_b or ana@example.com",
    ] {
        assert!(shown.contains(escaped), "{escaped} in {shown}");
    }
}

#[test]
fn a_discord_webhook_gets_the_question_escaped_and_pings_nobody() {
    let body = asked_in("discord");
    assert_eq!(body["allowed_mentions"], serde_json::json!({"parse": []}));
    let shown = body["content"].as_str().unwrap();
    assert!(
        !shown.contains("@everyone") && !shown.contains("@here"),
        "{shown}"
    );
    for escaped in [
        "\\<!channel\\>",
        "@\u{200b}everyone @\u{200b}here",
        "\\<@U0123\\>",
        "\\<https://evil.example|https://docs.example\\>",
        "\\[the docs\\](https://evil.example)",
        "\\|\\| a \\< b && c \\> d, see https://example.com/a_b or ana@example.com",
    ] {
        assert!(shown.contains(escaped), "{escaped} in {shown}");
    }
}

//! The webhook, command and email sinks, and what the desk says when a sink is misconfigured:
//! a webhook that fails twice delivered once after retries without blocking the run, Slack's and
//! Discord's shapes, a command given the JSON on stdin and killed at its timeout, a real SMTP
//! server (aiosmtpd, with STARTTLS) receiving the mail, errors naming the setting and never a
//! secret.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use serde_json::Value;
use tether_config::{MapEnv, NoticeKind, Secret, Workspace};
use tether_human::notify_command::NotifyCommand;
use tether_human::sink_body::{BodyKind, SinkBody};
use tether_human::sinks::OneWay;
use tether_human::tables::notify_command::NotifyCommandConfig;
use tether_human::tables::webhook::WebhookFormat;
use tether_human::webhook::{Webhook, WebhookRetry, render};
use tether_human::{Channel, Console, Desk, Notice};
use tether_store::{Journal, NewQuestion, Question, RunId, Store};
use tether_testkit::wait_until_async;
use tether_tools::ShellEnd;
use tokio::sync::Notify;

const LIMIT: Duration = Duration::from_secs(15);

fn notice() -> Notice {
    Notice {
        kind: NoticeKind::Paused,
        run_id: Some("r-7k2m9x".parse::<RunId>().unwrap()),
        text: "Run r-7k2m9x paused: the judge is unavailable.".into(),
        resume: Some("tether resume r-7k2m9x".into()),
    }
}

fn stored_question(dir: &Path) -> Question {
    let store = Store::open(Workspace::at(dir).db_path()).unwrap();
    store
        .insert_question(&NewQuestion {
            question: "Ship on Friday?".into(),
            context: "ctx".into(),
            confidence: Some(30),
            options: vec!["yes".into(), "no".into()],
            ..NewQuestion::default()
        })
        .unwrap()
}

/// A webhook receiver: answers each request with the next planned status (then 200), the first
/// request held until `release`.
#[derive(Default)]
struct Receiver {
    plan: Mutex<Vec<(u16, Option<u64>)>>,
    bodies: Mutex<Vec<(Instant, u16, Value)>>,
    release: Notify,
    hold_first: bool,
}

async fn receive(State(r): State<Arc<Receiver>>, body: axum::body::Bytes) -> impl IntoResponse {
    let first = r.bodies.lock().unwrap().is_empty();
    if first && r.hold_first {
        r.release.notified().await;
    }
    let (status, retry_after) = {
        let mut plan = r.plan.lock().unwrap();
        if plan.is_empty() {
            (200, None)
        } else {
            plan.remove(0)
        }
    };
    let value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    r.bodies
        .lock()
        .unwrap()
        .push((Instant::now(), status, value));
    let mut response = StatusCode::from_u16(status).unwrap().into_response();
    if let Some(secs) = retry_after {
        response
            .headers_mut()
            .insert("retry-after", secs.to_string().parse().unwrap());
    }
    response
}

async fn receiver(r: Arc<Receiver>) -> String {
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(receive))
        .with_state(r);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}/hook")
}

fn fast() -> WebhookRetry {
    WebhookRetry {
        initial: Duration::from_millis(10),
        max: Duration::from_millis(100),
        attempts: 5,
        timeout: Duration::from_secs(10),
    }
}

#[tokio::test]
async fn a_failing_webhook_gets_the_notice_once_after_retries_without_blocking() {
    let r = Arc::new(Receiver {
        plan: Mutex::new(vec![(500, None), (503, Some(1))]),
        hold_first: true,
        ..Receiver::default()
    });
    let url = receiver(Arc::clone(&r)).await;
    let hook = OneWay::new(
        Webhook::new(Secret::new(url), WebhookFormat::Json)
            .unwrap()
            .with_retry(fast()),
    );
    // Returns while the receiver still holds the first request: the run never waits.
    hook.notice(&notice()).await;
    assert!(
        r.bodies.lock().unwrap().is_empty(),
        "delivered before the receiver answered"
    );
    r.release.notify_one();
    wait_until_async("the delivery", LIMIT, || {
        let bodies = r.bodies.lock().unwrap();
        (bodies.iter().any(|(_, s, _)| *s == 200)).then_some(())
    })
    .await
    .unwrap();
    let bodies = r.bodies.lock().unwrap().clone();
    let statuses: Vec<u16> = bodies.iter().map(|(_, s, _)| *s).collect();
    assert_eq!(statuses, [500, 503, 200], "one delivery, after two retries");
    assert!(
        bodies[2].0 - bodies[1].0 >= Duration::from_secs(1),
        "Retry-After honoured"
    );
    let body = &bodies[2].2;
    assert_eq!(body["kind"], "notice");
    assert_eq!(body["notice"], "paused");
    assert_eq!(body["run_id"], "r-7k2m9x");
    assert_eq!(body["resume"], "tether resume r-7k2m9x");
}

#[tokio::test]
async fn a_webhook_refusing_with_4xx_is_not_retried() {
    let r = Arc::new(Receiver {
        plan: Mutex::new(vec![(404, None)]),
        ..Receiver::default()
    });
    let url = receiver(Arc::clone(&r)).await;
    let hook = OneWay::new(
        Webhook::new(Secret::new(url), WebhookFormat::Json)
            .unwrap()
            .with_retry(fast()),
    );
    hook.notice(&notice()).await;
    hook.notice(&notice()).await;
    wait_until_async("both handled", LIMIT, || {
        (r.bodies.lock().unwrap().len() == 2).then_some(())
    })
    .await
    .unwrap();
    let statuses: Vec<u16> = r
        .bodies
        .lock()
        .unwrap()
        .iter()
        .map(|(_, s, _)| *s)
        .collect();
    assert_eq!(statuses, [404, 200], "the 404 dropped, the next one sent");
}

#[test]
fn the_webhook_bodies_in_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let question = stored_question(dir.path());
    let id = question.id.to_string();
    let notice = SinkBody::notice(&notice());
    let asked = SinkBody::question(&question, BodyKind::Question);
    for format in [
        WebhookFormat::Json,
        WebhookFormat::Slack,
        WebhookFormat::Discord,
    ] {
        let shown = format!(
            "{}\n{}",
            serde_json::to_string_pretty(&render(&notice, format)).unwrap(),
            serde_json::to_string_pretty(&render(&asked, format)).unwrap()
        )
        .replace(&id, "<question id>");
        insta::assert_snapshot!(format!("webhook_{format:?}").to_lowercase(), shown);
    }
}

/// An agent's question that tries to ping everyone and disguise a link, with honest text beside
/// it (code with `<` and `>`, a plain URL, an email address) that must still read well.
const HOSTILE: &str = "<!channel> @everyone @here <@U123> <@&42> look: \
     <https://evil.example|https://docs.example> [the docs](https://evil.example) ||hidden|| \
     **loud** | honest: if a < b && c > d see https://example.com/a_b?x=1&y=2 or mail ana@example.com";

/// Whether `json` (a rendered body) holds a character that would start a mention or a link:
/// in Slack any `<` (Slack's links and mentions all start with one); in Discord a `<`, `[` or
/// `]` without the backslash that escapes it.
fn unescaped_markup(json: &str, format: WebhookFormat) -> bool {
    let value: Value = serde_json::from_str(json).unwrap();
    match format {
        WebhookFormat::Slack => value["text"].as_str().unwrap().contains('<'),
        WebhookFormat::Discord => {
            let content = value["content"].as_str().unwrap();
            let mut escaped = false;
            content.chars().any(|c| {
                let live = !escaped && matches!(c, '<' | '[' | ']');
                escaped = !escaped && c == '\\';
                live
            })
        }
        WebhookFormat::Json => false,
    }
}

#[test]
fn agent_text_is_escaped_for_each_chat_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(Workspace::at(dir.path()).db_path()).unwrap();
    let question = store
        .insert_question(&NewQuestion {
            question: HOSTILE.into(),
            options: vec!["<!here> yes".into(), "[no](https://evil.example)".into()],
            ..NewQuestion::default()
        })
        .unwrap();
    let id = question.id.to_string();
    let asked = SinkBody::question(&question, BodyKind::Question);
    let answer = tether_human::broker::Answer {
        question_id: question.id.clone(),
        text: "@everyone <https://evil.example|fine>".into(),
        channel: "zulip".into(),
        responder: "<!channel> [ana](https://evil.example)".into(),
        thread_id: String::new(),
        choice: None,
        options_offered: 2,
    };
    let answered = SinkBody::answered(&question, &answer);
    for format in [WebhookFormat::Slack, WebhookFormat::Discord] {
        let shown = format!(
            "{}\n{}",
            serde_json::to_string_pretty(&render(&asked, format)).unwrap(),
            serde_json::to_string_pretty(&render(&answered, format)).unwrap()
        )
        .replace(&id, "<question id>")
        .replace('\u{200b}', "{ZWSP}");
        for body in [&asked, &answered] {
            let rendered = render(body, format).to_string();
            assert!(
                !unescaped_markup(&rendered, format),
                "{format:?}: {rendered}"
            );
        }
        insta::assert_snapshot!(format!("hostile_{format:?}").to_lowercase(), shown);
    }
    let discord = render(&asked, WebhookFormat::Discord);
    assert_eq!(
        discord["allowed_mentions"],
        serde_json::json!({"parse": []})
    );
    let content = discord["content"].as_str().unwrap();
    assert!(
        !content.contains("@everyone") && !content.contains("@here"),
        "{content}"
    );
    assert!(
        content.contains("https://example.com/a_b?x=1&y=2 "),
        "{content}"
    );
    assert!(content.contains("ana@example.com"), "{content}");
}

fn command(dir: &Path, script: &str, timeout_secs: u64) -> NotifyCommand {
    let config = NotifyCommandConfig {
        program: Some("/bin/sh".into()),
        args: vec!["-c".into(), script.into()],
        timeout_secs,
        notify: None,
    };
    NotifyCommand::from_config(&config, dir.to_path_buf(), vec!["SECRET_KEY".into()]).unwrap()
}

#[tokio::test]
async fn the_command_gets_the_json_on_stdin() {
    let dir = tempfile::tempdir().unwrap();
    let sink = OneWay::new(command(dir.path(), "cat > got.json", 10));
    sink.notice(&notice()).await;
    let got: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("got.json")).unwrap())
            .unwrap();
    assert_eq!(got, SinkBody::notice(&notice()).json());
}

#[tokio::test]
async fn a_command_running_past_its_timeout_is_killed_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let sink = command(dir.path(), "sleep 60 & echo $! > child; wait", 1);
    let run = sink.run(&SinkBody::notice(&notice())).await.unwrap();
    assert_eq!(run.end, ShellEnd::TimedOut);
    let child: i32 = std::fs::read_to_string(dir.path().join("child"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    wait_until_async("the background child killed too", LIMIT, || {
        let alive = std::fs::read_to_string(format!("/proc/{child}/stat"))
            .is_ok_and(|stat| !stat.contains(") Z "));
        (!alive).then_some(())
    })
    .await
    .unwrap();
}

/// The problems the desk reports for `text` under `env`.
fn desk_problems(text: &str, env: &MapEnv) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let (config, _) = tether_config::parse_with_warnings(
        &tether_human::registry::schema(),
        text,
        Path::new("tether.toml"),
        env,
    )
    .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let desk = Desk::from_config(
        &config,
        &ws,
        journal,
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    );
    desk.policy().problems.clone()
}

#[tokio::test]
async fn a_misconfigured_sink_is_left_out_with_an_error_naming_the_setting() {
    let text = r#"
[human]
channels = ["ntfy", "webhook", "email", "notify_command"]
escalate_after = "2h"
escalate_to = ["email:lead@example.com", "ntfy:oncall"]
[ntfy]
token_env = "NTFY_TOKEN"
[webhook]
url_env = "HOOK_URL"
[email]
smtp_host = "smtp.example.com"
from = "tether@example.com"
to = ["me@example.com"]
tls = "none"
password_env = "SMTP_PASSWORD"
"#;
    let env = MapEnv::new()
        .with("HOOK_URL", "ftp://secret-host.example/abc123")
        .with("SMTP_PASSWORD", "hunter2-pw");
    let problems = desk_problems(text, &env).join("\n");
    for secret in ["secret-host", "abc123", "hunter2"] {
        assert!(!problems.contains(secret), "{secret} in {problems}");
    }
    insta::assert_snapshot!(problems);
}

#[tokio::test]
async fn the_desk_hands_a_question_to_the_sinks_once_and_tells_them_the_answer() {
    let r = Arc::new(Receiver::default());
    let url = receiver(Arc::clone(&r)).await;
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let text = "[human]\nchannels = [\"cli\", \"webhook\", \"notify_command\"]\n\
                [webhook]\nurl_env = \"HOOK\"\nnotify = [\"failed\"]\n\
                [notify_command]\nprogram = \"/bin/sh\"\nargs = [\"-c\", \"cat >> got.jsonl\"]\n";
    let env = MapEnv::new().with("HOOK", url.as_str());
    let config = tether_config::parse(
        &tether_human::registry::schema(),
        text,
        Path::new("tether.toml"),
        &env,
    )
    .unwrap();
    let journal = Journal::new(Store::open(ws.db_path()).unwrap(), Vec::new()).unwrap();
    let desk = Desk::from_config(
        &config,
        &ws,
        journal,
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    );
    assert!(
        desk.policy().problems.is_empty(),
        "{:?}",
        desk.policy().problems
    );

    // The notice filter: [webhook] notify lets "failed" through only; the command follows
    // [notify] on (done, paused).
    desk.notify(&notice()).await; // paused
    let cancel = tokio_util::sync::CancellationToken::new();
    let d = desk.clone();
    let c = cancel.clone();
    let first = tokio::spawn(async move {
        let q = NewQuestion {
            question: "Ship on Friday?".into(),
            context: "ctx".into(),
            confidence: Some(30),
            options: vec!["yes".into(), "no".into()],
            ..NewQuestion::default()
        };
        d.broker().ask(q, c).await
    });
    wait_until_async("the question's webhook", LIMIT, || {
        (!r.bodies.lock().unwrap().is_empty()).then_some(())
    })
    .await
    .unwrap();
    let lines = |ws: &Path| {
        std::fs::read_to_string(ws.join("got.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<_>>()
    };
    wait_until_async("the question's command run", LIMIT, || {
        (lines(dir.path()).len() == 2).then_some(())
    })
    .await
    .unwrap();
    cancel.cancel();
    assert!(first.await.unwrap().is_err());

    // Waited for again (a resume): not handed over twice; answered from the CLI.
    let store = Store::open(ws.db_path()).unwrap();
    let id = store.pending_questions().unwrap()[0].id.clone();
    let d = desk.clone();
    let wid = id.clone();
    let again = tokio::spawn(async move {
        d.wait(&wid, tokio_util::sync::CancellationToken::new())
            .await
    });
    tokio::task::yield_now().await;
    tether_human::broker::answer(&store, &ws.state_dir(), &id, "no", "cli", "alice").unwrap();
    let got = tokio::time::timeout(LIMIT, again)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(got.channel, "cli");
    wait_until_async("the webhook told", LIMIT, || {
        (r.bodies.lock().unwrap().len() == 2).then_some(())
    })
    .await
    .unwrap();
    wait_until_async("the command told", LIMIT, || {
        (lines(dir.path()).len() == 3).then_some(())
    })
    .await
    .unwrap();
    let hooks: Vec<Value> = r
        .bodies
        .lock()
        .unwrap()
        .iter()
        .map(|(_, _, b)| b.clone())
        .collect();
    let kinds: Vec<&str> = hooks.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["question", "answered"],
        "the paused notice filtered out, the question once"
    );
    assert_eq!(hooks[1]["text"], "Answered on cli by alice: no");
    let ran = lines(dir.path());
    let kinds: Vec<&str> = ran.iter().map(|b| b["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["notice", "question", "answered"]);
    assert_eq!(ran[1]["options"], serde_json::json!(["yes", "no"]));
}

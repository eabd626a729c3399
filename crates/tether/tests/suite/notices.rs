//! Notices end to end: a real `tether ralph` on the fake model server tells the fake Zulip
//! when it is done (in the topic of its question) or paused (in the run's own topic, with the
//! `tether resume` command), each channel's own `notify` list filters what it gets, and the
//! desktop notification runs a `notify-send` found on `PATH` (a script recording its
//! arguments) without the keys tether reads — or, when there is none, nothing breaks. A goal
//! run rejected, paused on its budget, resumed, signed off and done tells Zulip each in turn; a
//! webhook has the run's last notice before tether exits.

use std::fs;
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::Store;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;
use tether_testkit::zulip_server::FakeZulipServer;

use crate::common::webhook::Webhook;
use crate::common::{PATIENCE, cmd, model_table, runtime, wait_exit};
use crate::suite::goal_run::support::{PLAN, accepting_judge, complete, env, fix_add};

const QUESTION: &str = "Which colour should the logo be?";
const ANSWER: &str = "Teal, please.";

/// Asks its question until the answer is in a request, then keeps the promise.
fn asking_agent() -> Script {
    Script::from_fn(|req: &Request| {
        if serde_json::to_string(req).unwrap().contains(ANSWER) {
            Turn::text("Teal it is. <promise>DONE</promise>")
        } else {
            Turn::tool(
                "ask_human",
                json!({"question": QUESTION, "context": "the logo", "confidence": 10}),
            )
        }
    })
}

/// Never keeps its promise.
pub(super) fn busy_agent() -> Script {
    Script::from_fn(|_: &Request| Turn::text("Still working on it."))
}

/// A workspace on `model` with Zulip as a channel and `extra` appended to `tether.toml`.
pub(super) fn workspace(model: &FakeModelServer, extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let toml = model_table("model", Api::OpenAiChat, model, "fake");
    fs::write(
        dir.path().join("tether.toml"),
        format!("{toml}\n[human]\nchannels = [\"cli\", \"zulip\"]\n{extra}"),
    )
    .unwrap();
    dir
}

/// A directory holding a `notify-send` that appends its arguments (one a line) and whether
/// it saw the Zulip key to `log`, then a `---` line.
fn fake_notify_send(bin: &Path, log: &Path) {
    fs::create_dir_all(bin).unwrap();
    let script = bin.join("notify-send");
    fs::write(
        &script,
        format!(
            "#!/bin/sh\n{{ printf '%s\\n' \"$@\"; echo \"key=${{ZULIP_BOT_API_KEY:-none}}\"; \
             echo ---; }} >> '{}'\n",
            log.display()
        ),
    )
    .unwrap();
    fs::set_permissions(&script, fs::Permissions::from_mode(0o755)).unwrap();
}

/// `c` with the Zulip bot of `zulip` in its environment.
pub(super) fn with_zulip<'a>(c: &'a mut Command, zulip: &FakeZulipServer) -> &'a mut Command {
    c.env("ZULIP_SERVER_URL", zulip.server_url())
        .env("ZULIP_BOT_EMAIL", zulip.bot_email())
        .env("ZULIP_BOT_API_KEY", zulip.api_key())
        .env("ZULIP_STREAM", zulip.stream())
}

/// `tether ralph` in `dir` with the Zulip bot of `zulip`, a session bus and `path` as `PATH`.
pub(super) fn ralph(dir: &Path, zulip: &FakeZulipServer, path: &str, max: &str) -> Command {
    let mut c = cmd(
        dir,
        &[
            "ralph",
            "Choose the logo's colour.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            max,
        ],
    );
    with_zulip(&mut c, zulip)
        .env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
        .env("PATH", path)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// `bin` first on a `PATH` that still finds `sh`.
pub(super) fn path_with(bin: &Path) -> String {
    format!("{}:/usr/bin:/bin", bin.display())
}

pub(super) fn run_id(dir: &Path) -> String {
    let store = Store::open(dir.join(".tether/tether.db")).unwrap();
    store.runs(10).unwrap()[0].id.to_string()
}

pub(super) fn finish(c: &mut Command) -> Output {
    let mut child = c.spawn().unwrap();
    wait_exit(&mut child);
    child.wait_with_output().unwrap()
}

#[test]
fn done_goes_to_the_questions_topic_and_the_desktop() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(asking_agent())).unwrap();
    let zulip = rt
        .block_on(
            FakeZulipServer::builder()
                .longpoll_timeout(Duration::from_millis(300))
                .start(),
        )
        .unwrap();
    let dir = workspace(&model, "");
    let dir = dir.path();
    let bin = dir.join("bin");
    let log = dir.join("notify.log");
    fake_notify_send(&bin, &log);

    let mut child = ralph(dir, &zulip, &path_with(&bin), "3").spawn().unwrap();
    let question = wait_until("the question to be posted on Zulip", PATIENCE, || {
        zulip
            .bot_messages()
            .into_iter()
            .find(|m| m.content.contains(QUESTION))
    })
    .unwrap();
    zulip.post_as_human(&question.topic, ANSWER);
    let status = wait_exit(&mut child);
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(status.success(), "{stderr}");

    let run = run_id(dir);
    let done = format!("Run {run} is done.");
    let in_topic: Vec<String> = zulip
        .messages_in(&question.topic)
        .into_iter()
        .map(|m| m.content)
        .collect();
    assert_eq!(in_topic.last(), Some(&done), "{in_topic:#?}");
    assert_eq!(zulip.bot_messages().len(), 2, "the question and the notice");

    let recorded = fs::read_to_string(&log).unwrap();
    assert_eq!(
        recorded,
        format!(
            "--app-name=tether\n--urgency=low\ntether: run {run} is done\n{done}\nkey=none\n---\n"
        )
    );
}

#[test]
fn paused_goes_to_the_runs_topic_with_the_resume_command_even_without_notify_send() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(busy_agent())).unwrap();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = workspace(&model, "");
    let dir = dir.path();
    // A PATH with no notify-send on it.
    let empty = dir.join("empty-bin");
    fs::create_dir_all(&empty).unwrap();

    let output = finish(&mut ralph(dir, &zulip, &path_with(&empty), "1"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "budget spent: {stderr}");

    let run = run_id(dir);
    let notices: Vec<_> = zulip.bot_messages();
    assert_eq!(notices.len(), 1, "{notices:#?}");
    assert_eq!(notices[0].topic, format!("Run {run}"));
    assert_eq!(
        notices[0].content,
        format!(
            "Run {run} paused: its iteration budget is spent.\n\
             To continue: `tether resume {run}`"
        )
    );
}

#[test]
fn each_channel_gets_only_the_kinds_it_asks_for() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(busy_agent())).unwrap();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    // Zulip wants failures only; the desktop follows [notify] on, which has paused.
    let dir = workspace(
        &model,
        "[zulip]\nnotify = [\"failed\"]\n[notify]\non = [\"paused\"]\n",
    );
    let dir = dir.path();
    let bin = dir.join("bin");
    let log = dir.join("notify.log");
    fake_notify_send(&bin, &log);

    let output = finish(&mut ralph(dir, &zulip, &path_with(&bin), "1"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "budget spent: {stderr}");

    assert!(
        zulip.bot_messages().is_empty(),
        "{:#?}",
        zulip.bot_messages()
    );
    let recorded = fs::read_to_string(&log).unwrap();
    assert!(recorded.contains("--urgency=normal\n"), "{recorded}");
    assert!(
        recorded.contains(&format!("tether resume {}", run_id(dir))),
        "{recorded}"
    );
    assert_eq!(recorded.matches("---\n").count(), 1, "{recorded}");
}

#[test]
fn a_goal_run_tells_zulip_each_rejection_pause_sign_off_and_its_end() {
    let e = env(
        PLAN,
        Script::turns([
            // Iteration 1: claims done without fixing anything (verify rejects it).
            complete("add"),
            Turn::text("I think add is done."),
            // Iteration 2 (after resume): fixes it and signs off.
            fix_add(),
            complete("add"),
            Turn::text("Fixed add."),
        ]),
        Script::turns(accepting_judge()),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n[notify]\n\
         on = [\"done\", \"paused\", \"failed\", \"signed_off\", \"rejected\"]\n\
         rejected_after = 1\n",
    );
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let tether = |args: &[&str]| {
        let mut c = cmd(e.path(), args);
        with_zulip(&mut c, &zulip)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        finish(&mut c)
    };
    let out = tether(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tether(&["resume"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let run = run_id(e.path());
    let posted: Vec<(String, String)> = zulip
        .bot_messages()
        .into_iter()
        .map(|m| (m.topic, m.content))
        .collect();
    let topic = format!("Run {run}");
    assert!(posted.iter().all(|(t, _)| *t == topic), "{posted:#?}");
    let contents: Vec<&str> = posted.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(contents.len(), 4, "{contents:#?}");
    assert!(
        contents[0].starts_with(&format!(
            "Run {run}: the sign-off of goal add was rejected. Last reason: verify failed"
        )),
        "{contents:#?}"
    );
    assert_eq!(
        contents[1],
        format!(
            "Run {run} paused: its iteration budget is spent.\nTo continue: `tether resume {run}`"
        )
    );
    assert_eq!(contents[2], format!("Run {run} signed off goal add."));
    assert_eq!(contents[3], format!("Run {run} is done."));
}

#[test]
fn the_terminal_shows_a_notice_on_a_line_of_its_own() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(busy_agent())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let toml = model_table("model", Api::OpenAiChat, &model, "fake");
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let ralph = format!(
        "{} ralph Work. --completion-promise DONE --max-iterations 1",
        env!("CARGO_BIN_EXE_tether")
    );
    let mut script = Command::new("script");
    crate::common::isolate(&mut script)
        .args(["-qfec", &ralph, "/dev/null"])
        .current_dir(dir.path())
        .env("TERM", "dumb")
        // Held open while it runs: the terminal channel reads it.
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let output = finish(&mut script);
    let out = String::from_utf8_lossy(&output.stdout).replace("\r\n", "\n");
    assert_eq!(output.status.code(), Some(3), "{out}");
    let run = run_id(dir.path());
    let line =
        format!("\n» Run {run} paused: its iteration budget is spent. · tether resume {run}\n");
    assert!(out.contains(&line), "{out}");
}

#[test]
fn a_webhook_gets_the_runs_last_notice_before_tether_exits() {
    let hook = Webhook::start();
    let url = &hook.url;
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", \"echo '<promise>DONE</promise>'\"]\n\
             [human]\nchannels = [\"cli\", \"webhook\"]\n[webhook]\nurl = {url:?}\n\
             [notify]\non = [\"done\"]\n"
        ),
    )
    .unwrap();
    let out = cmd(
        dir.path(),
        &[
            "ralph",
            "go",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "2",
        ],
    )
    .output()
    .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Already there when tether has exited: delivered, not left in a queue.
    let bodies = hook.bodies();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    let body = &bodies[0];
    assert_eq!(
        (body["kind"].as_str(), body["notice"].as_str()),
        (Some("notice"), Some("done"))
    );
}

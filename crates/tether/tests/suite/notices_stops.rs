//! Notices of the runs that stop short, end to end on the fake model servers and the fake
//! Zulip: a Ralph loop whose model keeps failing says it failed (quoting the error, with no
//! command to go on), a goal run stopped by the spin guard says it is blocked and how to go on,
//! and one whose judge keeps failing says it paused and how to go on.

use std::process::Stdio;

use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::{FakeModelServer, Fault};
use tether_testkit::zulip_server::FakeZulipServer;

use super::goal_run::support::{Env, PLAN, complete, env, fix_add};
use super::notices::{busy_agent, finish, path_with, ralph, run_id, with_zulip, workspace};
use crate::common::{cmd, runtime};

/// What the bot posted, as (topic, content).
fn posted(zulip: &FakeZulipServer) -> Vec<(String, String)> {
    zulip
        .bot_messages()
        .into_iter()
        .map(|m| (m.topic, m.content))
        .collect()
}

/// `tether run --approve --max-iterations 10` in `e` with the bot of `zulip`; its exit code.
fn goal_run(e: &Env, zulip: &FakeZulipServer) -> Option<i32> {
    let mut c = cmd(e.path(), &["run", "--approve", "--max-iterations", "10"]);
    with_zulip(&mut c, zulip)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let out = finish(&mut c);
    let code = out.status.code();
    assert!(
        matches!(code, Some(1..=4)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    code
}

#[test]
fn a_failed_run_says_so_with_its_last_error_and_no_command() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(busy_agent())).unwrap();
    // Three failed iterations in a row (the default limit) end the run.
    model.fault_next(3, Fault::Status(400));
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = workspace(
        &model,
        "[notify]\non = [\"done\", \"paused\", \"failed\"]\n",
    );
    let dir = dir.path();
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();

    let output = finish(&mut ralph(dir, &zulip, &path_with(&empty), "5"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "failed: {stderr}");

    let run = run_id(dir);
    let posted = posted(&zulip);
    assert_eq!(posted.len(), 1, "{posted:#?}");
    let (topic, content) = &posted[0];
    assert_eq!(*topic, format!("Run {run}"));
    assert!(
        content.starts_with(&format!("Run {run} failed: ")),
        "{content}"
    );
    assert!(
        content.contains("400"),
        "the last error is quoted: {content}"
    );
    assert!(!content.contains("tether resume"), "{content}");
}

#[test]
fn a_failed_run_sends_nothing_to_chat_by_default() {
    let rt = runtime();
    let model = rt.block_on(FakeModelServer::start(busy_agent())).unwrap();
    model.fault_next(3, Fault::Status(400));
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    let dir = workspace(&model, "");
    let dir = dir.path();
    let empty = dir.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();

    let output = finish(&mut ralph(dir, &zulip, &path_with(&empty), "5"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "failed: {stderr}");
    assert_eq!(posted(&zulip), Vec::new());
}

#[test]
fn a_run_the_spin_guard_blocks_says_why_and_how_to_go_on() {
    let e = env(
        PLAN,
        Script::turns([]).then_repeat(Turn::text("Let me think about it.")),
        Script::turns([]),
        "[human]\nchannels = [\"cli\", \"zulip\"]\n",
    );
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    assert_eq!(goal_run(&e, &zulip), Some(4));

    let run = run_id(e.path());
    let posted = posted(&zulip);
    assert_eq!(posted.len(), 1, "{posted:#?}");
    let (topic, content) = &posted[0];
    assert_eq!(*topic, format!("Run {run}"));
    assert!(
        content.starts_with(&format!("Run {run} is blocked: spin_guard: ")),
        "{content}"
    );
    assert!(
        content.ends_with(&format!("\nTo continue: `tether resume {run}`")),
        "{content}"
    );
}

#[test]
fn a_run_whose_judge_keeps_failing_pauses_and_says_how_to_go_on() {
    let agent = Script::turns([
        fix_add(),
        complete("add"),
        Turn::text("Asked for the sign-off."),
        complete("add"),
        Turn::text("Asked again."),
        complete("add"),
        Turn::text("And again."),
    ]);
    let judge = Script::turns([]).then_repeat(Turn::text("Looks fine to me!"));
    let e = env(
        PLAN,
        agent,
        judge,
        "[human]\nchannels = [\"cli\", \"zulip\"]\n",
    );
    let rt = runtime();
    let zulip = rt.block_on(FakeZulipServer::start()).unwrap();
    assert_eq!(goal_run(&e, &zulip), Some(4));

    let run = run_id(e.path());
    let posted = posted(&zulip);
    // Rejections are off by default: only the pause reaches the chat.
    assert_eq!(posted.len(), 1, "{posted:#?}");
    let (topic, content) = &posted[0];
    assert_eq!(*topic, format!("Run {run}"));
    assert!(
        content.starts_with(&format!("Run {run} paused: ")),
        "{content}"
    );
    assert!(
        content.contains("judge failed 3 times in a row"),
        "{content}"
    );
    assert!(
        content.ends_with(&format!("\nTo continue: `tether resume {run}`")),
        "{content}"
    );
}

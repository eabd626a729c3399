//! What the tests of the `tether` binary share: the one way to run the real binary (in a clean
//! environment, so the developer's own `TETHER_*` and `ZULIP_*` settings never leak in), its
//! output as text or redacted for snapshots, waiting for a child to exit or for the first
//! pending question with a deadline, and a runtime for the fake servers. [`agents`] is what the
//! tests of the real agent CLIs share; [`mcp`] is a minimal MCP client over the real `tether
//! mcp`; [`pty`] runs tether on a pseudo-terminal, as a person does; [`unprivileged`] runs
//! tether as an ordinary user when the tests run as root; [`webhook`] is a webhook that keeps
//! what it is sent.

pub mod agents;
pub mod fleet;
pub mod mcp;
pub mod pty;
pub mod unprivileged;
pub mod webhook;

use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::Duration;

use serde_json::Value;
use tether_config::Api;
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

/// How long any single wait of these tests may take before it fails.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// The variables of tether's own that a test must set itself, if it wants them (and the
/// session bus, so no test shows a desktop notification unless it sets one up).
const TETHER_VARS: [&str; 21] = [
    "TETHER_AGENT",
    "TETHER_NOTICE_GRACE_MS",
    "TETHER_STORE_URL",
    "TETHER_MACHINE",
    "PGPASSWORD",
    "PGPASSFILE",
    "PGUSER",
    "TETHER_CONFIG",
    "TETHER_RUN_ID",
    "TETHER_LOG",
    "ZULIP_SERVER_URL",
    "ZULIP_BOT_EMAIL",
    "ZULIP_STREAM",
    "ZULIP_BOT_API_KEY",
    "SLACK_CHANNEL",
    "SLACK_BOT_TOKEN",
    "SLACK_APP_TOKEN",
    "TETHER_SLACK_REGISTRY",
    "TELEGRAM_CHAT_ID",
    "TELEGRAM_BOT_TOKEN",
    "DBUS_SESSION_BUS_ADDRESS",
];

/// Clears tether's own variables from `c`'s environment, fixes `USER` (with no global git
/// configuration, so that is the person's name) and `NO_COLOR`, and
/// gives it a null stdin. Variables a test sets afterwards win.
pub fn isolate(c: &mut Command) -> &mut Command {
    for var in TETHER_VARS {
        c.env_remove(var);
    }
    c.env("USER", "tester")
        // Not the machine's git identity: a person's acts are recorded as `tester`.
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("NO_COLOR", "1")
        .stdin(Stdio::null())
}

/// `tether <args>` in `dir`, isolated.
pub fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tether"));
    isolate(&mut c).args(args).current_dir(dir);
    c
}

/// Runs `tether <args>` in `dir` to its end.
pub fn run(dir: &Path, args: &[&str]) -> Output {
    cmd(dir, args).output().unwrap()
}

/// Starts `tether <args>` in `dir` with stdout and stderr piped; end it with [`wait_output`].
pub fn spawn(dir: &Path, args: &[&str]) -> Child {
    cmd(dir, args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Output bytes as text.
/// `sh -c script` in `dir` as the test's user, with no git configuration but the repository's
/// (no global or system file): a person's shell setting up a workspace. Its stdout; fails the
/// test when the script fails.
pub fn sh(dir: &Path, script: &str) -> String {
    let out = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(out.status.success(), "{script}: {}", text(&out.stderr));
    text(&out.stdout)
}

pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A finished command as a snapshot shows it: the exit code (-1 for a signal) and its output
/// with the workspace path replaced by `[WS]`.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Out {
    /// `out` of a command run in `dir`.
    pub fn new(dir: &Path, out: &Output) -> Out {
        let ws = dir.display().to_string();
        let clean = |b: &[u8]| text(b).replace(&ws, "[WS]");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: clean(&out.stdout),
            stderr: clean(&out.stderr),
        }
    }

    /// Replaces every match of `pattern` in stdout and stderr by `with`.
    pub fn redact(self, pattern: &str, with: &str) -> Out {
        let re = regex_lite::Regex::new(pattern).unwrap();
        let clean = |s: &str| re.replace_all(s, with).into_owned();
        Out {
            code: self.code,
            stdout: clean(&self.stdout),
            stderr: clean(&self.stderr),
        }
    }

    /// Wall-clock times (`2026-01-01 12:00 UTC`) as `[TIME]`.
    pub fn times(self) -> Out {
        self.redact(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "[TIME]")
    }

    /// Durations (`in 1.2 s`) as `in [duration]`.
    pub fn durations(self) -> Out {
        self.redact(r"in \d+\.\d s", "in [duration]")
    }
}

/// Runs `tether <args>` in `dir` to its end, as a snapshot shows it.
pub fn tether(dir: &Path, args: &[&str]) -> Out {
    Out::new(dir, &run(dir, args))
}

/// Waits (up to [`PATIENCE`]) for `child` to exit; kills it and fails if it does not.
pub fn wait_exit(child: &mut Child) -> ExitStatus {
    wait_exit_within(child, PATIENCE)
}

/// [`wait_exit`] with its own deadline (a wait that includes a lease lapsing).
pub fn wait_exit_within(child: &mut Child, patience: Duration) -> ExitStatus {
    match wait_until("the process to exit", patience, || {
        child.try_wait().unwrap()
    }) {
        Ok(status) => status,
        Err(e) => {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{e}")
        }
    }
}

/// Waits (up to [`PATIENCE`]) for `child` to exit, then collects what it printed.
pub fn wait_output(mut child: Child) -> Output {
    wait_exit(&mut child);
    child.wait_with_output().unwrap()
}

/// The first pending question of the workspace in `dir`, waited for.
pub fn pending_question(dir: &Path) -> Value {
    pending_question_by(|args| run(dir, args))
}

/// The first pending question, listed by `tether` run as `tether(args)` does it.
pub fn pending_question_by(mut tether: impl FnMut(&[&str]) -> Output) -> Value {
    wait_until("a pending question", PATIENCE, || {
        let out = tether(&["questions", "--json"]);
        let list: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        list.as_array().and_then(|l| l.first()).cloned()
    })
    .unwrap()
}

/// A `[table]` of tether.toml (`model` or `judge`) pointing `model` at the fake `server`
/// speaking `api`.
pub fn model_table(table: &str, api: Api, server: &FakeModelServer, model: &str) -> String {
    format!(
        "[{table}]\napi = \"{}\"\nbase_url = \"{}\"\nmodel = \"{model}\"\n",
        api.as_str(),
        server.base_url(api)
    )
}

/// A workspace whose built-in agent's model is a fake server answering with `script`; the
/// caller keeps the server and its runtime alive as long as the workspace is used.
pub fn model_workspace(
    script: tether_model::scripted::Script,
) -> (tempfile::TempDir, FakeModelServer, tokio::runtime::Runtime) {
    let rt = runtime();
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake-model"),
    )
    .unwrap();
    (dir, server, rt)
}

/// A runtime for the fake servers a test starts (one worker: they are light).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

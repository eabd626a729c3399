//! The `pi` executor around a stand-in for pi (a shell script answering `--version`, `mcp list`
//! and a turn): what a turn is given (the prompt on stdin, the run's own agent directory with
//! copies of the user's files and tether's MCP server, the ask_before extension, the read-only tools), what its stream becomes (a final message, a usage
//! limit), a server that does not connect stopping the run with the fix, and a cancelled or
//! timed-out turn taking everything pi started with it. The real pi is driven end to end by
//! the `tether` binary's tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tether_agent::{
    Access, AgentEvent, CliSettings, ExecError, Executor, PiExecutor, TurnObserver, TurnOutcome,
    TurnRequest,
};
use tether_testkit::wait_until;
use tokio_util::sync::CancellationToken;

struct Ignore;

impl TurnObserver for Ignore {
    fn event(&self, _event: AgentEvent) {}
}

/// A stand-in for pi: `--version` prints 1.5.2, `mcp list` runs `mcp`, a turn runs `turn`
/// (shell code; `$OUT` is the directory the test reads).
fn stand_in(dir: &Path, mcp: &str, turn: &str) -> PathBuf {
    let path = dir.join("pi");
    let script = format!(
        "#!/bin/sh\nOUT={out}\n\
         [ \"$1\" = --version ] && {{ echo 1.5.2; exit 0; }}\n\
         if [ \"$1\" = mcp ]; then\n{mcp}\nfi\n{turn}\n",
        out = dir.display(),
    );
    std::fs::write(&path, script).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

fn executor(dir: &Path, program: &Path, timeout: Duration, user_dir: &Path) -> PiExecutor {
    let settings = CliSettings {
        program: program.display().to_string(),
        args: vec!["--model".into(), "fake/m".into()],
        env: vec![("PI_CODING_AGENT_DIR".into(), user_dir.display().to_string())],
        turn_timeout: timeout,
        workspace: dir.to_owned(),
        tether: PathBuf::from("/opt/tether"),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
        sandbox: None,
        read_only_sandbox: None,
        scratch: None,
        bridge: None,
        config_dir: None,
    };
    PiExecutor::new(settings, Arc::new(|| Some("r-1".to_owned())))
}

fn request(dir: &Path, access: Access) -> TurnRequest {
    TurnRequest {
        iteration: 1,
        prompt: "Do the task.".into(),
        transcript: dir.join(".tether/runs/r-1/iteration-0001.jsonl"),
        access,
        context: tether_agent::Context::Fresh,
    }
}

async fn turn(
    dir: &Path,
    mcp: &str,
    body: &str,
    timeout: Duration,
    access: Access,
    cancel: CancellationToken,
) -> Result<TurnOutcome, ExecError> {
    let user = dir.join("user-agent");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("models.json"), "{}").unwrap();
    let pi = stand_in(dir, mcp, body);
    executor(dir, &pi, timeout, &user)
        .run_turn(request(dir, access), &Ignore, cancel)
        .await
}

const CONNECTED: &str = "echo 'tether: connected, 4 tools'; exit 0";

const DONE: &str = r#"echo '{"type":"message_end","message":{"role":"assistant","content":[{"type":"text","text":"Done."}],"usage":{"input":3,"output":2},"stopReason":"stop"}}'"#;

#[tokio::test]
async fn a_turn_gets_the_prompt_on_stdin_and_the_runs_own_agent_directory() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!(
        "cat > $OUT/stdin; echo \"$@\" > $OUT/argv; echo \"$PI_CODING_AGENT_DIR\" > $OUT/dir\n\
         cp \"$PI_CODING_AGENT_DIR/models.json\" $OUT/models.seen\n\
         cp \"$PI_CODING_AGENT_DIR/mcp.json\" $OUT/mcp.seen\n\
         if [ -L \"$PI_CODING_AGENT_DIR/models.json\" ]; then echo link; else echo copy; fi > $OUT/kind\n\
         {DONE}"
    );
    let out = turn(
        dir.path(),
        CONNECTED,
        &body,
        Duration::from_secs(60),
        Access::ReadOnly,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    assert_eq!(out.final_message, "Done.");
    assert_eq!((out.input_tokens, out.output_tokens), (3, 2));
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("stdin"), "Do the task.");
    let gate = dir.path().join(".tether/runs/r-1/pi-ask-before.mjs");
    assert_eq!(
        read("argv").trim(),
        format!(
            "--mode json -p --no-session -e {} --tools read,grep,find,ls,mcp__tether__* --model \
             fake/m",
            gate.display()
        )
    );
    let extension = read(".tether/runs/r-1/pi-ask-before.mjs");
    let expected = format!(
        r#"const GATE = ["/opt/tether","gate","--run","r-1","-C","{}"];"#,
        dir.path().display()
    );
    assert!(extension.contains(&expected), "{extension}");
    let agent_dir = dir.path().join(".tether/runs/r-1/pi-agent");
    assert_eq!(read("dir").trim(), agent_dir.display().to_string());
    // A copy of the user's file, not a link to it; the run's directory is gone with the run,
    // its MCP configuration kept beside the transcript.
    assert_eq!(
        (read("kind").trim(), read("models.seen").as_str()),
        ("copy", "{}")
    );
    assert!(!agent_dir.exists());
    assert_eq!(read("mcp.seen"), read(".tether/runs/r-1/pi-mcp.json"));
    let mcp: Value = serde_json::from_str(&read("mcp.seen")).unwrap();
    let tether = &mcp["mcpServers"]["tether"];
    assert_eq!(tether["command"], "/opt/tether");
    assert_eq!(tether["exposure"], "direct");
    assert_eq!(tether["timeout"], 7 * 24 * 3600);
    let args: Vec<String> = serde_json::from_value(tether["args"].clone()).unwrap();
    assert_eq!(args[..3], ["mcp", "--run", "r-1"]);
    assert!(read(".tether/runs/r-1/iteration-0001.jsonl").contains("\"Done.\""));
}

#[tokio::test]
async fn a_working_turn_has_pis_default_tools() {
    let dir = tempfile::tempdir().unwrap();
    let body = format!("cat >/dev/null; echo \"$@\" > $OUT/argv\n{DONE}");
    let limit = Duration::from_secs(60);
    turn(
        dir.path(),
        CONNECTED,
        &body,
        limit,
        Access::Work,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let argv = std::fs::read_to_string(dir.path().join("argv")).unwrap();
    let gate = dir.path().join(".tether/runs/r-1/pi-ask-before.mjs");
    assert_eq!(
        argv.trim(),
        format!(
            "--mode json -p --no-session -e {} --model fake/m",
            gate.display()
        )
    );
}

#[tokio::test]
async fn a_server_that_does_not_connect_stops_the_run_with_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let mcp = "echo 'tether: failed (direct, global)'; echo '  error: no such run'; exit 1";
    let body = "touch $OUT/turn-ran";
    let limit = Duration::from_secs(60);
    let err = turn(
        dir.path(),
        mcp,
        body,
        limit,
        Access::Work,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::Setup(inner) = err else {
        panic!("expected a setup error, got {err:?}")
    };
    assert_eq!(
        inner.to_string(),
        "pi could not start tether's MCP server (`pi mcp list`: tether: failed (direct, \
         global); error: no such run); check that `/opt/tether mcp --run <run>` runs in this \
         workspace (`tether doctor` tries it)"
    );
    assert!(!dir.path().join("turn-ran").exists());
}

#[tokio::test]
async fn a_usage_limit_in_the_stream_is_waited_out_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let body = r#"cat >/dev/null; echo '{"type":"message_end","message":{"role":"assistant","content":[],"usage":{"input":0,"output":0},"stopReason":"error","errorMessage":"429: You have hit your usage limit. Try again in 2 hours."}}'"#;
    let limit = Duration::from_secs(60);
    let err = turn(
        dir.path(),
        CONNECTED,
        body,
        limit,
        Access::Work,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::UsageLimit(limit) = err else {
        panic!("expected a usage limit, got {err:?}")
    };
    assert_eq!(limit.retry_after, Some(Duration::from_secs(7200)));
    let other = r#"cat >/dev/null; echo '{"type":"message_end","message":{"role":"assistant","content":[],"stopReason":"error","errorMessage":"500: boom"}}'"#;
    let err = turn(
        dir.path(),
        CONNECTED,
        other,
        Duration::from_secs(60),
        Access::Work,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::Model(inner) = err else {
        panic!("expected a failed turn, got {err:?}")
    };
    assert_eq!(
        inner.to_string(),
        "pi failed (exit status 0): the model call failed: 500: boom"
    );
}

/// A turn that starts a background process (as pi starts tether's MCP server), records its pid
/// and waits.
const LINGERS: &str = "cat >/dev/null; sleep 600 & echo $! > $OUT/child.pid; wait";

fn child_pid(dir: &Path) -> u32 {
    wait_until(
        "the stand-in to start its child",
        Duration::from_secs(30),
        || {
            std::fs::read_to_string(dir.join("child.pid"))
                .ok()
                .and_then(|s| s.trim().parse().ok())
        },
    )
    .unwrap()
}

fn wait_gone(pid: u32) {
    wait_until("the child to be gone", Duration::from_secs(30), || {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        (stat.is_empty() || stat.contains(") Z ")).then_some(())
    })
    .unwrap();
}

#[tokio::test]
async fn cancelling_a_turn_kills_everything_pi_started() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let path = dir.path().to_owned();
    let stop = cancel.clone();
    let canceller = tokio::task::spawn_blocking(move || {
        let pid = child_pid(&path);
        stop.cancel();
        pid
    });
    let limit = Duration::from_secs(600);
    let err = turn(dir.path(), CONNECTED, LINGERS, limit, Access::Work, cancel)
        .await
        .unwrap_err();
    assert!(matches!(err, ExecError::Cancelled), "{err:?}");
    wait_gone(canceller.await.unwrap());
}

#[tokio::test]
async fn a_turn_past_its_timeout_is_killed_with_everything_pi_started() {
    let dir = tempfile::tempdir().unwrap();
    let limit = Duration::from_secs(1);
    let err = turn(
        dir.path(),
        CONNECTED,
        LINGERS,
        limit,
        Access::Work,
        CancellationToken::new(),
    )
    .await
    .unwrap_err();
    let ExecError::Model(inner) = err else {
        panic!("expected a timeout, got {err:?}")
    };
    assert_eq!(inner.to_string(), "pi ran longer than 1 s and was killed");
    wait_gone(child_pid(dir.path()));
}

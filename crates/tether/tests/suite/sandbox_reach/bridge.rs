//! The tether commands a sandboxed agent runs reach the run through its driver (the bridge),
//! which reuses what it has: thirty `tether goal complete` calls leave the driver's threads and
//! the temporary directory as they were (no sandbox built per call, no directory kept, no thread
//! left). And the verify such a call runs — code the agent wrote — runs in the run's sandbox,
//! whether the agent asks with `tether goal complete` or over its `tether mcp` session.

use std::fs;
use std::path::Path;
use std::process::Stdio;

use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::{PATIENCE, cmd, model_table, runtime, text, wait_output};
use crate::suite::goal_run::support::{PLAN, write_add_project};

/// A workspace with the `add` plan approved, a judge that rejects, and `agent.sh` as a command
/// executor.
fn workspace(agent: &str) -> (tempfile::TempDir, FakeModelServer, tokio::runtime::Runtime) {
    let rt = runtime();
    let judge = rt
        .block_on(FakeModelServer::start(Script::turns([]).then_repeat(
            Turn::text(
                "```json\n{\"verdict\":\"reject\",\"summary\":\"no\",\"checks\":[],\"missing\":[\"add\"]}\n```",
            ),
        )))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("tether.toml"),
        format!(
            "{}\n[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n",
            model_table("judge", Api::OpenAiChat, &judge, "judge-model")
        ),
    )
    .unwrap();
    write_add_project(root, PLAN);
    fs::write(root.join("agent.sh"), agent).unwrap();
    let out = std::process::Command::new("sh")
        .args([
            "-c",
            "git init -q && git -c user.name=a -c user.email=a@b commit -q --allow-empty -m start",
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let approved = cmd(root, &["plan", "approve", "--all"]).output().unwrap();
    assert_eq!(
        approved.status.code(),
        Some(0),
        "{}",
        text(&approved.stderr)
    );
    (dir, judge, rt)
}

/// The name tokio gives the threads of the driving loop's runtime, its workers and its pool of
/// blocking threads; the pool grows and shrinks with the loop's own work (a thread idles 10 s
/// before it ends), so it is counted apart.
const RUNTIME_THREAD: &str = "tokio-rt-worker";

/// How many more threads that pool may hold after the calls than before: what the loop's own
/// work while they ran can leave (the calls themselves ran on threads of their own).
const RUNTIME_SLACK: usize = 2;

/// The names of `pid`'s threads (but the loop's runtime's), and how many the runtime has.
fn threads(pid: u32) -> (Vec<String>, usize) {
    let mut names: Vec<String> = fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
        .filter_map(|t| fs::read_to_string(t.path().join("comm")).ok())
        .map(|n| n.trim().to_owned())
        .collect();
    let runtime = names.iter().filter(|n| *n == RUNTIME_THREAD).count();
    names.retain(|n| n != RUNTIME_THREAD);
    names.sort();
    (names, runtime)
}

/// What `dir` holds.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Waits for `name` to appear in `dir`.
fn wait_file(dir: &Path, name: &str) {
    wait_until(&format!("{name} to appear"), PATIENCE, || {
        dir.join(name).exists().then_some(())
    })
    .unwrap();
}

#[test]
fn thirty_bridge_calls_leave_the_drivers_threads_and_tmp_as_they_were() {
    let bin = env!("CARGO_BIN_EXE_tether");
    let agent = format!(
        "T='{bin}'\n\
         wait_for() {{ for i in $(seq 600); do [ -e \"$1\" ] && return 0; sleep 0.05; done; return 1; }}\n\
         \"$T\" goal complete add > first.out 2>&1\n\
         touch baseline.ready\n\
         wait_for go\n\
         n=0; for i in $(seq 30); do \"$T\" goal complete add > call-$i.out 2>&1; grep -q 'add does not add' call-$i.out && n=$((n+1)); done\n\
         echo $n > calls.done\n\
         wait_for end\n"
    );
    let (dir, _judge, _rt) = workspace(&agent);
    let root = dir.path();
    let tmp = tempfile::tempdir().unwrap();
    let run = cmd(root, &["ralph", "go", "--max-iterations", "1"])
        .env("TMPDIR", tmp.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = run.id();
    wait_file(root, "baseline.ready");
    // The call ran verify, in the sandbox.
    let first = fs::read_to_string(root.join("first.out")).unwrap();
    assert!(first.contains("add does not add"), "{first}");
    let before = (threads(pid), listing(tmp.path()));
    let runs = before
        .1
        .iter()
        .filter(|n| n.starts_with("tether-run-"))
        .count();
    assert_eq!(runs, 1, "the run's own directory alone: {before:?}");
    fs::write(root.join("go"), "").unwrap();
    wait_file(root, "calls.done");
    // Each of the thirty ran verify.
    let calls = wait_until("the calls' count", PATIENCE, || {
        fs::read_to_string(root.join("calls.done"))
            .ok()
            .filter(|s| s.ends_with('\n'))
    })
    .unwrap();
    assert_eq!(calls.trim(), "30");
    let settled = wait_until("the driver to settle", PATIENCE, || {
        let ((names, runtime), tmp) = (threads(pid), listing(tmp.path()));
        (names == before.0.0 && runtime <= before.0.1 + RUNTIME_SLACK && tmp == before.1)
            .then_some(())
    });
    let after = (threads(pid), listing(tmp.path()));
    fs::write(root.join("end"), "").unwrap();
    let out = wait_output(run);
    assert!(
        settled.is_ok(),
        "threads and tmp before: {before:?}\nafter: {after:?}\n{}",
        text(&out.stderr)
    );
}

/// The verify the agent's sign-off runs tries to leave the sandbox: read the store, plant a git
/// hook, read a key in the home directory.
const ESCAPING_CHECK: &str = "cat .tether/tether.db > stolen.db 2>/dev/null\n\
    echo 'touch pwned' > .git/hooks/post-checkout\n\
    cat \"$HOME/.ssh/id_ed25519\" > key.txt 2>/dev/null\n\
    echo 'add does not add'; exit 1\n";

/// A raw MCP client: initializes the agent's `tether mcp` (through the bridge) and calls
/// `complete_goal`, writing the answer to `mcp.out`.
const MCP_CLIENT: &str = r#"import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def wait(i):
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == i:
            return m
send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "agent", "version": "1"}}})
wait(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "complete_goal", "arguments": {"id": "add", "evidence": "it adds", "paths": ["src/lib.rs"]}}})
open("mcp.out", "w").write(json.dumps(wait(2)))
p.stdin.close(); p.wait()
"#;

#[test]
fn the_verify_a_bridged_sign_off_runs_stays_in_the_sandbox() {
    let bin = env!("CARGO_BIN_EXE_tether");
    for how in ["goal complete", "mcp"] {
        let ask = match how {
            "mcp" => format!("python3 mcp_client.py '{bin}'\n"),
            _ => format!("'{bin}' goal complete add > complete.out 2>&1\n"),
        };
        let agent = format!("cat > check.sh <<'EOF'\n{ESCAPING_CHECK}EOF\n{ask}");
        let (dir, _judge, _rt) = workspace(&agent);
        let root = dir.path();
        fs::write(root.join("mcp_client.py"), MCP_CLIENT).unwrap();
        let home = tempfile::tempdir().unwrap();
        fs::create_dir(home.path().join(".ssh")).unwrap();
        fs::write(home.path().join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
        let out = cmd(root, &["ralph", "go", "--max-iterations", "1"])
            .env("HOME", home.path())
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(3), "{how}: {}", text(&out.stderr));
        let read = |name: &str| fs::read_to_string(root.join(name)).unwrap_or_default();
        let answer = read("mcp.out") + &read("complete.out");
        assert!(
            answer.contains("add does not add"),
            "{how}: verify ran: {answer}"
        );
        assert_eq!(read("stolen.db"), "", "{how}: the store was read");
        assert_eq!(read("key.txt"), "", "{how}: the key was read");
        assert!(
            !root.join(".git/hooks/post-checkout").exists(),
            "{how}: a hook was planted"
        );
    }
}

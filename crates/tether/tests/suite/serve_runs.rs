//! Runs started and resumed from `tether serve`'s dashboard over its JSON API, as the book's
//! curl examples do: the serving process drives them, so they go on after the request's
//! connection is closed; what stays a person's act at a terminal (approving contracts) is
//! refused; stopping the server interrupts its runs so they can be resumed.

use std::fs;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use super::goal_run::support::{self, PLAN, accepting_judge, complete, fix_add};
use crate::common::{PATIENCE, cmd, run, text};

/// `tether serve` in a workspace, killed when the test ends.
pub(crate) struct Served {
    child: Child,
    addr: String,
    token: String,
    stderr: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(dir: &Path) -> Served {
    serve_with(dir, &[])
}

/// [`serve`] with `env` set too.
fn serve_with(dir: &Path, env: &[(&str, &Path)]) -> Served {
    let mut command = cmd(dir, &["serve"]);
    for (name, value) in env {
        command.env(name, value);
    }
    spawn(command)
}

/// `command` (a `tether serve`) started, once it printed its address.
pub(crate) fn spawn(mut command: std::process::Command) -> Served {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    let url = first.trim().strip_prefix("http://").unwrap().to_owned();
    let (addr, token) = url.split_once("/?token=").unwrap();
    let (tx, stderr) = mpsc::channel();
    let err = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(err).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Served {
        child,
        addr: addr.to_owned(),
        token: token.to_owned(),
        stderr,
    }
}

impl Served {
    /// One request on its own connection, closed once answered: `(status, body)`.
    pub(crate) fn request(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let body = body.map(Value::to_string).unwrap_or_default();
        let req = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: \
             close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            self.addr,
            self.token,
            body.len()
        );
        let mut stream = TcpStream::connect(&self.addr).unwrap();
        stream.set_read_timeout(Some(PATIENCE)).unwrap();
        stream.write_all(req.as_bytes()).unwrap();
        let mut raw = String::new();
        stream.read_to_string(&mut raw).unwrap();
        drop(stream);
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }

    pub(crate) fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.request("POST", path, Some(body))
    }

    /// Waits until the server printed a line containing `what` on stderr.
    fn said(&self, what: &str) {
        wait_until(what, PATIENCE, || {
            let line = self.stderr.recv_timeout(Duration::from_millis(100)).ok()?;
            line.contains(what).then_some(())
        })
        .unwrap();
    }
}

/// The status `tether status <run> --json` reports, once it is `want`.
pub(super) fn wait_status(dir: &Path, run: &str, want: &str) {
    wait_until(&format!("run {run} {want}"), PATIENCE, || {
        let out = run_status(dir, run);
        (out == want).then_some(())
    })
    .unwrap_or_else(|_| panic!("run {run} is {}, not {want}", run_status(dir, run)));
}

fn run_status(dir: &Path, run_id: &str) -> String {
    let out = run(dir, &["status", run_id, "--json"]);
    let status: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    status["status"].as_str().unwrap_or("?").to_owned()
}

/// A workspace whose built-in agent waits for a file `go` (its first turn), then says `then`
/// in turn 2 and `<promise>DONE</promise>` in turn 3.
pub(super) fn waiting_workspace(
    then: &str,
) -> (tempfile::TempDir, FakeModelServer, tokio::runtime::Runtime) {
    crate::common::model_workspace(Script::turns([
        Turn::tool(
            "bash",
            json!({"command": "until [ -e go ]; do sleep 0.05; done; echo went"}),
        ),
        Turn::text(then.to_owned()),
        Turn::text("all done <promise>DONE</promise>"),
    ]))
}

fn ralph() -> Value {
    json!({"kind": "ralph", "prompt": "Wait for go.", "completion_promise": "DONE", "max_iterations": 3})
}

#[test]
fn a_ralph_run_started_over_the_api_goes_on_after_the_request_and_keeps_its_promise() {
    let (dir, _server, _rt) = waiting_workspace("<promise>DONE</promise>");
    let served = serve(dir.path());
    let (status, started) = served.post("/api/runs", &ralph());
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    assert_eq!(started["url"], format!("/runs/{id}"));
    // The request's connection is closed; the run waits for `go` in the serving process.
    assert_eq!(run_status(dir.path(), &id), "running");
    let (status, shown) = served.request("GET", &format!("/api/runs/{id}"), None);
    assert_eq!(status, 200, "{shown}");
    fs::write(dir.path().join("go"), "").unwrap();
    wait_status(dir.path(), &id, "completed");
    let (_, shown) = served.request("GET", &format!("/api/runs/{id}"), None);
    assert_eq!(shown["run"]["kind"], "ralph", "{shown}");

    // A run that ended is not resumed; an unknown one is not found; a bad request says why.
    let (status, body) = served.post(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("already ended"), "{body}");
    let (status, _) = served.post("/api/runs/01JZZZZZZZZZZZZZZZZZZZZZZZ/resume", &json!({}));
    assert_eq!(status, 404);
    let (status, body) = served.post("/api/runs", &json!({"kind": "ralph", "prompt": " "}));
    assert_eq!(status, 400, "{body}");
}

#[test]
fn a_paused_run_is_resumed_over_the_api_and_a_stopped_server_leaves_its_run_resumable() {
    let (dir, _server, _rt) = waiting_workspace("one done");
    let served = serve(dir.path());
    let (status, started) = served.post("/api/runs", &ralph());
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    let (status, body) = served.post(&format!("/api/runs/{id}/pause"), &json!({}));
    assert!(status < 300, "{status} {body}");
    fs::write(dir.path().join("go"), "").unwrap();
    wait_status(dir.path(), &id, "paused");
    // Taken up again by the server, it keeps its promise in iteration 2.
    let (status, resumed) = served.post(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(status, 202, "{resumed}");
    assert_eq!(resumed["id"], id.as_str());
    wait_status(dir.path(), &id, "completed");
    let history = text(&run(dir.path(), &["status", &id]).stdout);
    assert!(history.contains("completed"), "{history}");
    drop(served);

    // A run under way when the server is told to stop is interrupted after its step, not lost.
    let (dir, _server, _rt) = waiting_workspace("<promise>DONE</promise>");
    let mut served = serve(dir.path());
    let (status, started) = served.post("/api/runs", &ralph());
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(served.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    served.said("stopping the runs after their current step");
    fs::write(dir.path().join("go"), "").unwrap();
    let code = crate::common::wait_exit(&mut served.child);
    assert_eq!(code.code(), Some(0));
    let status = run_status(dir.path(), &id);
    assert!(
        status == "paused" || status == "completed",
        "run {id} is {status} after the server stopped"
    );
}

#[test]
fn a_goal_run_waits_for_a_persons_approval_then_signs_its_goal_off() {
    let mut agent = vec![fix_add(), complete("add")];
    agent.push(Turn::text("Done."));
    let e = support::env(
        PLAN,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let served = serve(e.path());
    let goal = json!({"kind": "goal", "max_iterations": 3});
    let (status, body) = served.post("/api/runs", &goal);
    assert_eq!(status, 409, "{body}");
    let said = body.to_string();
    assert!(
        said.contains("add") && said.contains("tether plan approve"),
        "{said}"
    );
    let out = e.run(&["plan", "approve", "--all"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (status, started) = served.post("/api/runs", &goal);
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    wait_status(e.path(), &id, "completed");
    assert_eq!(e.status_of("add"), "done");
    // Nothing left to work on: a request to fix, in the loop's words.
    let (status, body) = served.post("/api/runs", &goal);
    assert_eq!(status, 400, "{body}");
    assert!(body.to_string().contains("no active goal"), "{body}");
}

#[test]
fn a_run_driven_by_another_process_is_not_resumed_over_the_api() {
    let (dir, _server, _rt) = waiting_workspace("<promise>DONE</promise>");
    // `tether ralph` in a shell drives the run; the server only shows it.
    let mut ralph = crate::common::spawn(
        dir.path(),
        &[
            "ralph",
            "Wait for go.",
            "--completion-promise",
            "DONE",
            "--max-iterations",
            "3",
        ],
    );
    let id = wait_until("the run to start", PATIENCE, || {
        let out = run(dir.path(), &["status", "--json"]);
        let status: Value = serde_json::from_slice(&out.stdout).ok()?;
        status["id"].as_str().map(str::to_owned)
    })
    .unwrap();
    let served = serve(dir.path());
    let (status, body) = served.post(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(status, 409, "{body}");
    assert!(
        body.to_string()
            .contains("driven by another tether process"),
        "{body}"
    );
    // `tether resume` at a terminal says so before anything starts (no sandbox, no dashboard).
    let out = run(dir.path(), &["resume", &id]);
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("driven by another tether process"), "{said}");
    assert!(!said.contains("dashboard"), "{said}");
    fs::write(dir.path().join("go"), "").unwrap();
    assert_eq!(crate::common::wait_exit(&mut ralph).code(), Some(0));
    wait_status(dir.path(), &id, "completed");
}

#[test]
fn a_run_started_over_the_api_in_a_worktree_leaves_the_checkout_as_it_was() {
    let (dir, _model, _rt) = crate::common::model_workspace(Script::turns([
        Turn::tool(
            "write",
            json!({"path": "notes.md", "content": "from the run\n"}),
        ),
        Turn::text("written <promise>DONE</promise>"),
    ]));
    let git = |script: &str| {
        let out = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{script}: {}", text(&out.stderr));
        text(&out.stdout)
    };
    git(
        "git init -q -b main && git config user.name Ana && git config user.email ana@example.com \
         && printf '.tether/\\n' > .gitignore && git add -A && git commit -q -m start",
    );
    let state = tempfile::tempdir().unwrap();
    let served = serve_with(dir.path(), &[("XDG_STATE_HOME", state.path())]);
    let mut body = ralph();
    body["worktree"] = json!(true);
    let (status, started) = served.post("/api/runs", &body);
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    wait_status(dir.path(), &id, "completed");
    // The work is on the run's branch, committed as the run kept its promise — before it was
    // recorded completed, so whoever sees it completed finds the commit; the checkout is clean.
    assert_eq!(
        git(&format!("git show tether/{id}:notes.md")),
        "from the run\n"
    );
    assert!(!dir.path().join("notes.md").exists());
    assert_eq!(git("git status --porcelain"), "");
}

#[test]
fn a_run_its_token_budget_stopped_is_given_more_and_resumed_over_the_api() {
    let (dir, _server, _rt) = waiting_workspace("one done");
    // A token budget the first iteration spends.
    let mut toml = fs::read_to_string(dir.path().join("tether.toml")).unwrap();
    toml.push_str("\n[loop]\nmax_tokens = 10\n");
    fs::write(dir.path().join("tether.toml"), toml).unwrap();
    let served = serve(dir.path());
    let (status, started) = served.post("/api/runs", &ralph());
    assert_eq!(status, 201, "{started}");
    let id = started["id"].as_str().unwrap().to_owned();
    fs::write(dir.path().join("go"), "").unwrap();
    wait_status(dir.path(), &id, "budget_exhausted");
    // Without more tokens it stays stopped, the answer naming what to add.
    let (status, body) = served.post(&format!("/api/runs/{id}/resume"), &json!({}));
    assert_eq!(status, 409, "{body}");
    assert!(body.to_string().contains("--add-tokens"), "{body}");
    // More of another unit is not what it needs.
    let (status, body) = served.post(
        &format!("/api/runs/{id}/resume"),
        &json!({"add": {"iterations": 5}}),
    );
    assert_eq!(status, 409, "{body}");
    let (status, body) = served.post(
        &format!("/api/runs/{id}/resume"),
        &json!({"add": {"tokens": 1_000_000}, "by": "ana"}),
    );
    assert_eq!(status, 202, "{body}");
    wait_status(dir.path(), &id, "completed");
    let shown = text(&run(dir.path(), &["status", &id, "--json"]).stdout);
    let shown: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(shown["limits"]["tokens"], 1_000_010, "{shown}");
    let report = text(&run(dir.path(), &["report", &id]).stdout);
    assert!(
        report.contains("completed after 2 iteration(s)"),
        "{report}"
    );
}

//! The MCP server check: starts `<tether> mcp -C <workspace>` as an agent CLI would, speaks the
//! protocol to it over stdio (`initialize`, `notifications/initialized`, `tools/list`) and checks
//! that tether's four tools are listed.
//!
//! The server is a supervised child: its own process group (killed as a whole when the check
//! ends, however it ends), a time limit, no keys of tether's in its environment, and its stderr
//! kept (the tail) to say why it failed. Stdin stays open until the answers are in, so the
//! server never sees end-of-file before it has answered.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tether_agent::cli::TOOL_NAMES;
use tokio::io::{
    AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWriteExt as _, BufReader,
};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::Check;

const NAME: &str = "mcp";

/// How long the server may take to start and answer both requests.
const TIMEOUT: Duration = Duration::from_secs(10);

/// How long the server gets to exit by itself once stdin is closed.
const EXIT_GRACE: Duration = Duration::from_millis(500);

/// How much of the server's stderr is kept.
const MAX_STDERR: usize = 2000;

/// What went wrong talking to the server.
enum Failure {
    Spawn(std::io::Error),
    TimedOut,
    Closed,
    Io(std::io::Error),
    NotJson(String),
    Error(Value),
}

/// Starts `tether` as the MCP server of `root` and checks its tool list.
pub async fn check(tether: &Path, root: &Path, key_vars: &[String]) -> Check {
    let started = Instant::now();
    let shown = format!("{} mcp -C {}", tether.display(), root.display());
    let mut server = match Server::start(tether, root, key_vars) {
        Ok(server) => server,
        Err(e) => return failed(&shown, &Failure::Spawn(e), None, ""),
    };
    let listed = tokio::time::timeout(TIMEOUT, server.tools()).await;
    let elapsed = started.elapsed();
    let tools = match listed {
        Ok(Ok(tools)) => tools,
        Ok(Err(failure)) => {
            let (ended, stderr) = server.stop().await;
            return failed(&shown, &failure, ended, &stderr);
        }
        Err(_) => {
            let (ended, stderr) = server.stop().await;
            return failed(&shown, &Failure::TimedOut, ended, &stderr);
        }
    };
    server.stop().await;
    let missing: Vec<&str> = TOOL_NAMES
        .iter()
        .copied()
        .filter(|t| !tools.iter().any(|have| have == t))
        .collect();
    if missing.is_empty() {
        Check::pass(
            NAME,
            format!(
                "tether's MCP server answers with {} ({} ms)",
                TOOL_NAMES.join(", "),
                elapsed.as_millis()
            ),
        )
    } else {
        Check::fail(
            NAME,
            format!(
                "`{shown}` lists {} but not {}",
                list_or_none(&tools),
                missing.join(", ")
            ),
            format!(
                "{} is not this tether's MCP server (an older build?): install this tether \
                 there, or pass the right one with --tether",
                tether.display()
            ),
        )
    }
}

fn list_or_none(tools: &[String]) -> String {
    if tools.is_empty() {
        "no tools".to_owned()
    } else {
        tools.join(", ")
    }
}

fn failed(shown: &str, failure: &Failure, ended: Option<ExitStatus>, stderr: &str) -> Check {
    let what = match failure {
        Failure::Spawn(e) => format!("could not start: {e}"),
        Failure::TimedOut => format!("did not answer within {} s", TIMEOUT.as_secs()),
        Failure::Closed => match ended {
            Some(status) => format!("exited before answering ({status})"),
            None => "closed its output before answering".to_owned(),
        },
        Failure::Io(e) => format!("broke the connection: {e}"),
        Failure::NotJson(line) => format!("wrote something other than JSON-RPC: {line:?}"),
        Failure::Error(e) => format!("answered with an error: {e}"),
    };
    let mut detail = format!("`{shown}` {what}");
    let stderr = stderr.trim();
    if !stderr.is_empty() {
        detail.push_str(&format!("\nits stderr: {stderr}"));
    }
    Check::fail(
        NAME,
        detail,
        format!(
            "run `{shown}` yourself to see why it fails; agent CLIs start tether's tools this \
             way, so they would run without ask_human and complete_goal"
        ),
    )
}

/// The running server: its pipes and its process group.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: tokio::task::JoinHandle<String>,
}

impl Server {
    fn start(tether: &Path, root: &Path, key_vars: &[String]) -> std::io::Result<Server> {
        let mut command = Command::new(tether);
        command
            .arg("mcp")
            .arg("-C")
            .arg(root)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for var in key_vars {
            command.env_remove(var);
        }
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the server's pipes are missing"));
        };
        Ok(Server {
            child,
            stdin: Some(stdin),
            stdout: BufReader::new(stdout),
            stderr: tokio::spawn(tail(stderr)),
        })
    }

    /// `initialize`, then `tools/list`: the names of the tools listed.
    async fn tools(&mut self) -> Result<Vec<String>, Failure> {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "tether-doctor", "version": env!("CARGO_PKG_VERSION")},
            }}),
        )
        .await?;
        self.response(1).await?;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await?;
        self.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
            .await?;
        let listed = self.response(2).await?;
        Ok(listed["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect())
    }

    async fn send(&mut self, message: Value) -> Result<(), Failure> {
        let stdin = self.stdin.as_mut().ok_or(Failure::Closed)?;
        let mut line = message.to_string();
        line.push('\n');
        let written = match stdin.write_all(line.as_bytes()).await {
            Ok(()) => stdin.flush().await,
            Err(e) => Err(e),
        };
        // A server that exited has closed its stdin: that is how it ended, not a broken pipe.
        written.map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::Closed,
            _ => Failure::Io(e),
        })
    }

    /// The result of request `id`, skipping notifications and other messages.
    async fn response(&mut self, id: u64) -> Result<Value, Failure> {
        loop {
            let mut line = String::new();
            let read = self
                .stdout
                .read_line(&mut line)
                .await
                .map_err(Failure::Io)?;
            if read == 0 {
                return Err(Failure::Closed);
            }
            let message: Value = serde_json::from_str(line.trim())
                .map_err(|_| Failure::NotJson(line.trim().chars().take(200).collect()))?;
            if message["id"] != json!(id) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(Failure::Error(error.clone()));
            }
            return Ok(message["result"].clone());
        }
    }

    /// Ends the server: stdin closed, a moment to exit on its own, then its whole process
    /// group killed. How it ended (when it ended on its own) and its stderr's tail.
    async fn stop(mut self) -> (Option<ExitStatus>, String) {
        self.stdin = None;
        let ended = tokio::time::timeout(EXIT_GRACE, self.child.wait())
            .await
            .ok()
            .and_then(Result::ok);
        kill_group(&self.child);
        let _ = self.child.wait().await;
        let stderr = tokio::time::timeout(EXIT_GRACE, &mut self.stderr)
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default();
        (ended, stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        kill_group(&self.child);
        self.stderr.abort();
    }
}

/// SIGKILL to the child's process group (it leads its own), if it is still there.
fn kill_group(child: &Child) {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// The last [`MAX_STDERR`] bytes of `reader`, as text.
async fn tail(mut reader: impl AsyncRead + Unpin) -> String {
    let mut kept: Vec<u8> = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = reader.read(&mut buf).await {
        if n == 0 {
            break;
        }
        kept.extend_from_slice(&buf[..n]);
        if kept.len() > MAX_STDERR {
            kept.drain(..kept.len() - MAX_STDERR);
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

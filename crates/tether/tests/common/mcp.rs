//! A minimal MCP client for the tests: spawns the real `tether mcp`, writes JSON-RPC lines to
//! its stdin and reads its stdout line by line, keeping every line so a test can check that
//! nothing but protocol was written there.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::{PATIENCE, cmd, wait_exit};

/// A running `tether mcp`.
pub struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    next_id: u64,
    /// Messages read while waiting for something else, oldest first.
    pub seen: Vec<Value>,
}

impl Server {
    /// Starts `tether mcp` with `args` in `dir`, configured by `setup`.
    pub fn start(dir: &Path, args: &[&str], setup: impl FnOnce(&mut Command)) -> Server {
        let mut cmd = cmd(dir, &["mcp"]);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        setup(&mut cmd);
        let mut child = cmd.spawn().unwrap();
        let stdin = child.stdin.take();
        let (tx, lines) = channel();
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let all = stdout.clone();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                all.lock().unwrap().push(line.clone());
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let err = stderr.clone();
        let mut pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                err.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Server {
            child,
            stdin,
            lines,
            stdout,
            stderr,
            next_id: 1,
            seen: Vec::new(),
        }
    }

    /// Writes one message.
    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns its id.
    pub fn request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The next message from the server.
    pub fn next(&mut self) -> Value {
        match self.lines.recv_timeout(PATIENCE) {
            Ok(line) => serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}")),
            Err(RecvTimeoutError::Timeout) => {
                panic!("no message from tether mcp; stderr:\n{}", self.stderr())
            }
            Err(RecvTimeoutError::Disconnected) => {
                panic!("tether mcp closed stdout; stderr:\n{}", self.stderr())
            }
        }
    }

    /// The response to request `id`; other messages read meanwhile go to `seen`.
    pub fn response(&mut self, id: u64) -> Value {
        loop {
            let message = self.next();
            if message.get("id") == Some(&json!(id)) && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// The next request the server sends with `method` (it has an `id`); other messages read
    /// meanwhile go to `seen`.
    pub fn server_request(&mut self, method: &str) -> Value {
        loop {
            let message = self.next();
            if message["method"] == method && message.get("id").is_some() {
                return message;
            }
            self.seen.push(message);
        }
    }

    /// Answers the server's request `request` (as read by [`Server::server_request`]).
    pub fn reply(&mut self, request: &Value, result: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": result}));
    }

    /// Sends a request and returns its response's `result` (panics on an error response).
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params);
        let response = self.response(id);
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// The `initialize` handshake; returns the server's result.
    pub fn initialize(&mut self) -> Value {
        self.initialize_with(json!({}))
    }

    /// The `initialize` handshake declaring the client's `capabilities`; returns the server's
    /// result.
    pub fn initialize_with(&mut self, capabilities: Value) -> Value {
        let result = self.call(
            "initialize",
            json!({
                "protocolVersion": "2025-06-18",
                "capabilities": capabilities,
                "clientInfo": {"name": "tether-tests", "version": "1"}
            }),
        );
        self.notify("notifications/initialized", json!({}));
        result
    }

    /// Starts a `tools/call` of `name`, asking for progress with `token`; returns the id.
    pub fn call_tool(&mut self, name: &str, arguments: Value, token: Option<&str>) -> u64 {
        let mut params = json!({"name": name, "arguments": arguments});
        if let Some(token) = token {
            params["_meta"] = json!({"progressToken": token});
        }
        self.request("tools/call", params)
    }

    /// What the server wrote on stderr so far.
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.stderr.lock().unwrap()).into_owned()
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to end (stdin stays open); returns its exit code.
    pub fn wait_exit(&mut self) -> Option<i32> {
        wait_exit(&mut self.child).code()
    }

    /// Whether the process has ended.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Closes stdin (the client is gone) without waiting for the process to end.
    pub fn close_input(&mut self) {
        drop(self.stdin.take());
    }

    /// Closes stdin and waits for the process to end; returns its exit code and every line it
    /// wrote on stdout.
    pub fn close(mut self) -> (Option<i32>, Vec<String>) {
        drop(self.stdin.take());
        let code = self.wait_exit();
        // The reader thread has seen everything once stdout is closed.
        while self.lines.recv_timeout(Duration::from_secs(5)).is_ok() {}
        let lines = self.stdout.lock().unwrap().clone();
        (code, lines)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Asserts that every stdout line is a JSON-RPC 2.0 message.
pub fn assert_only_protocol(lines: &[String]) {
    assert!(!lines.is_empty(), "nothing on stdout");
    for line in lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "not JSON-RPC: {line}");
    }
}

/// The text of a tool result's first content block.
pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

//! How a sandboxed agent still reaches tether: `tether goal complete`, `tether ask`, `tether
//! status`… run inside the sandbox cannot open the store (it is out of sight there), so they
//! hand their command line to the process driving the run, over a Unix socket in the run's
//! private temporary directory (`TETHER_BRIDGE` names it), and print what it answers.
//!
//! The driving process runs the command as the agent: the agent mark is always set for it,
//! whatever the request says, so every human-only act is refused exactly as it is in the
//! agent's own process tree; it belongs to the run the bridge serves ([`for_run`]), whatever run
//! the request names, so what it records (a question, a sign-off, a message) is that run's; and
//! with the run's configuration as the driving process holds it (the one the run recorded: its
//! sandbox, its judge, its store…), not tether.toml as
//! the agent may have left it. Commands that start loops, serve, or change the setup are not
//! run for the agent at all. One request per connection: a JSON line with the arguments (and,
//! for `tether gate`, the stdin it read), then a JSON line back with the exit code and the
//! output — or, for `tether mcp`, the MCP session itself, both ways, until the agent closes it.
//!
//! This module is the socket, the protocol and the limits; what a command line means is the
//! [`Handler`]'s, which the binary provides (it parses the command line and runs the command).

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};
use tether_config::{Config, Env, ProcessEnv, Workspace};
use tether_store::{RunCell, RunId};

use crate::compose::sandbox::RunSandbox;
use crate::error::{Error, Result};

/// The variable naming the socket, set in the sandbox's environment.
pub const BRIDGE_VAR: &str = "TETHER_BRIDGE";

/// The variable that files the questions under a run (set by a run that launches `tether mcp`
/// for an external agent).
pub const RUN_ENV: &str = "TETHER_RUN_ID";

/// The largest request read.
pub const MAX_REQUEST: u64 = 256 * 1024;

/// The exit code of a command that could not be heard or was refused as used.
const USAGE: u8 = 2;

/// A command line handed over.
#[derive(Serialize, Deserialize)]
struct Request {
    argv: Vec<String>,
    /// The run the agent's `tether mcp` / `ask` files questions under (`TETHER_RUN_ID`).
    run_id: Option<String>,
    /// What the command's stdin held, for a command that reads it whole (`tether gate`).
    stdin: Option<String>,
}

/// What the driving process answers: the exit code and what the command printed.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Reply {
    /// The exit code.
    pub code: u8,
    /// What it printed on stdout.
    pub stdout: String,
    /// What it printed on stderr.
    pub stderr: String,
}

impl Reply {
    /// A refusal: exit 2 with `message` on stderr.
    pub fn refused(message: &str) -> Self {
        Reply {
            code: USAGE,
            stdout: String::new(),
            stderr: message.to_owned(),
        }
    }
}

/// Why a handed-over MCP session could not be served.
pub type HandlerError = Box<dyn std::error::Error + Send + Sync>;

/// A command handed over, as the driving process runs it: as the agent ([`AgentEnv`]), in the
/// run's workspace, with the run's configuration and sandbox.
pub struct Call<'a> {
    /// The command line (`tether goal complete …`).
    pub argv: &'a [String],
    /// What the command's stdin held, when it reads it whole (`tether gate`).
    pub stdin: Option<&'a str>,
    /// The run's workspace.
    pub ws: &'a Workspace,
    /// The agent's environment as the driving process sees it.
    pub env: &'a AgentEnv,
    /// The run's configuration as the driving process holds it (not tether.toml, which the
    /// agent may have edited).
    pub config: &'a Arc<Config>,
    /// The run's sandbox: what the command runs for the agent (a sign-off's verify) runs there.
    pub sandbox: &'a RunSandbox,
    /// The run this bridge serves, when it serves one ([`for_run`]): what the command records —
    /// a question, a sign-off, a message, a pause — belongs to that run, whatever run the agent
    /// names.
    pub run: Option<&'a RunId>,
}

/// What a command line handed over means, and running it: the binary's (its command-line
/// parser and commands).
pub trait Handler: Send + Sync {
    /// Whether `argv` opens an MCP session (`tether mcp`) rather than a command with one reply.
    fn is_session(&self, argv: &[String]) -> bool;
    /// The MCP server of the session `call` opens.
    fn session(&self, call: &Call<'_>) -> Result<tether_mcp::TetherMcp, HandlerError>;
    /// Runs the command `call` hands over, as the agent: refused when the agent may not have it
    /// run (loops, servers, the setup).
    fn command(&self, call: &Call<'_>) -> Reply;
    /// The run whose agent this handler serves, once it exists (see [`for_run`]); `None` for a
    /// bridge of no run (the sandbox of a person's `tether goal complete`).
    fn serves(&self) -> Option<RunId> {
        None
    }
}

/// `handler`, serving the agent of the run `run` holds once the run exists: every call is the
/// run's ([`Call::run`], and `TETHER_RUN_ID` as the command reads it), whatever run the agent's
/// request names.
pub fn for_run(handler: Arc<dyn Handler>, run: RunCell) -> Arc<dyn Handler> {
    Arc::new(ForRun { handler, run })
}

/// A handler whose calls belong to one run.
struct ForRun {
    handler: Arc<dyn Handler>,
    run: RunCell,
}

impl Handler for ForRun {
    fn is_session(&self, argv: &[String]) -> bool {
        self.handler.is_session(argv)
    }

    fn session(&self, call: &Call<'_>) -> Result<tether_mcp::TetherMcp, HandlerError> {
        self.handler.session(call)
    }

    fn command(&self, call: &Call<'_>) -> Reply {
        self.handler.command(call)
    }

    fn serves(&self) -> Option<RunId> {
        self.run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// The most calls served at once (an MCP session lasts as long as the agent's turn); a
/// connection beyond them is closed unanswered, so an agent cannot pile up threads in the
/// driving process.
const MAX_CALLS: usize = 32;

/// The bridge's socket, bound and not served yet: its path goes into the sandbox the calls
/// will reuse.
pub struct Listener {
    listener: UnixListener,
    path: PathBuf,
}

/// Binds the bridge's socket in `dir` (the run's private temporary directory).
pub fn bind(dir: &Path) -> Result<Listener> {
    let path = dir.join("tether.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| {
        Error::io(
            format!("listening on {} for the sandbox's tether", path.display()),
            e,
        )
    })?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
        .map_err(|e| Error::io(format!("restricting {}", path.display()), e))?;
    Ok(Listener { listener, path })
}

impl Listener {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Serves the bridge for `ws`, for as long as the process lives, on one thread; each call
    /// on a thread of its own that ends with it (at most [`MAX_CALLS`] at once). The commands
    /// `handler` runs use `config`, the run's configuration as this process holds it (not
    /// tether.toml, which the agent may have edited: its sandbox, its judge…), and what a call
    /// runs for the agent runs in `sandbox`, the run's.
    pub fn serve(
        self,
        ws: &Workspace,
        config: Config,
        sandbox: RunSandbox,
        handler: Arc<dyn Handler>,
    ) -> Result<()> {
        let ws = ws.clone();
        let config = Arc::new(config);
        let calls = Arc::new(AtomicUsize::new(0));
        std::thread::Builder::new()
            .name("tether-bridge".into())
            .spawn(move || {
                for stream in self.listener.incoming().flatten() {
                    if calls.fetch_add(1, Ordering::SeqCst) >= MAX_CALLS {
                        calls.fetch_sub(1, Ordering::SeqCst);
                        tracing::warn!(
                            "a sandboxed tether command was refused: {MAX_CALLS} are running"
                        );
                        continue;
                    }
                    let call = Served {
                        ws: ws.clone(),
                        config: config.clone(),
                        sandbox: sandbox.clone(),
                        handler: handler.clone(),
                        calls: calls.clone(),
                    };
                    let spawned = std::thread::Builder::new()
                        .name("tether-bridge-call".into())
                        .spawn(move || call.answer(stream));
                    if spawned.is_err() {
                        calls.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })
            .map_err(|e| Error::io("starting the bridge's thread", e))?;
        Ok(())
    }
}

/// One call being answered; counted among the running ones until it is dropped.
struct Served {
    ws: Workspace,
    config: Arc<Config>,
    sandbox: RunSandbox,
    handler: Arc<dyn Handler>,
    calls: Arc<AtomicUsize>,
}

impl Served {
    fn answer(self, stream: UnixStream) {
        if let Err(e) = self.answer_on(stream) {
            tracing::debug!("a sandboxed tether command failed to be heard: {e}");
        }
    }

    /// Reads one request, has the handler run it as the agent with the run's configuration
    /// (its store included, whatever tether.toml names now) and sandbox, writes the reply (or
    /// serves the MCP session).
    fn answer_on(&self, stream: UnixStream) -> Result<(), HandlerError> {
        let line = header(&stream)?;
        let request: Request = serde_json::from_str(&line)?;
        // The run this bridge serves, not the one the agent's request names.
        let served = self.handler.serves();
        let env = AgentEnv {
            run_id: match &served {
                Some(run) => Some(run.to_string()),
                None => request.run_id.clone(),
            },
        };
        let call = Call {
            argv: &request.argv,
            stdin: request.stdin.as_deref(),
            ws: &self.ws,
            env: &env,
            config: &self.config,
            sandbox: &self.sandbox,
            run: served.as_ref(),
        };
        if self.handler.is_session(&request.argv) {
            return serve_mcp(self.handler.session(&call)?, stream);
        }
        let reply = self.handler.command(&call);
        let mut out = serde_json::to_vec(&reply)?;
        out.push(b'\n');
        (&stream).write_all(&out)?;
        Ok(())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The request's line, read a byte at a time: what follows it (an MCP session) is not
/// consumed.
fn header(stream: &UnixStream) -> Result<String, HandlerError> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut reader = stream.take(MAX_REQUEST);
    while reader.read(&mut byte)? == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    Ok(String::from_utf8(line)?)
}

/// Serves the agent's `tether mcp` session with `server` on `stream` until it closes.
fn serve_mcp(server: tether_mcp::TetherMcp, stream: UnixStream) -> Result<(), HandlerError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        stream.set_nonblocking(true)?;
        let stream = tokio::net::UnixStream::from_std(stream)?;
        let (read, write) = stream.into_split();
        tether_mcp::serve_io(server, read, write, std::future::pending()).await?;
        Ok::<_, HandlerError>(())
    })?;
    runtime.shutdown_background();
    Ok(())
}

/// The agent's environment as the driving process sees it for a handed-over command: its own,
/// with the agent mark always set and the run the bridge serves (for a bridge of no run, the one
/// the agent named).
pub struct AgentEnv {
    run_id: Option<String>,
}

impl Env for AgentEnv {
    fn var(&self, name: &str) -> Option<String> {
        match name {
            tether_tools::process::AGENT_MARK => Some(std::process::id().to_string()),
            RUN_ENV => self.run_id.clone(),
            _ => ProcessEnv.var(name),
        }
    }
}

/// What a command run inside the sandbox hands over besides its command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Forward {
    /// Only the command line.
    Plain,
    /// Its stdin too, read whole (`tether gate`).
    Stdin,
    /// Its stdin and stdout as an MCP session, both ways until either side ends it (`tether
    /// mcp`).
    Session,
}

/// In a sandboxed child: hands the command line `argv` to the process driving the run and
/// prints its answer, or relays the MCP session both ways; the exit code to end with.
pub fn forward(socket: &Path, argv: Vec<String>, what: Forward) -> u8 {
    match call(socket, argv, what) {
        Ok(Some(reply)) => {
            let _ = std::io::stdout().write_all(reply.stdout.as_bytes());
            let _ = std::io::stderr().write_all(reply.stderr.as_bytes());
            reply.code
        }
        Ok(None) => 0,
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: could not reach the tether driving this run through {}: {e}",
                socket.display()
            );
            1
        }
    }
}

fn call(socket: &Path, argv: Vec<String>, what: Forward) -> Result<Option<Reply>, HandlerError> {
    let stdin = if what == Forward::Stdin {
        let mut text = String::new();
        std::io::stdin()
            .take(MAX_REQUEST)
            .read_to_string(&mut text)?;
        Some(text)
    } else {
        None
    };
    let stream = UnixStream::connect(socket)?;
    let request = Request {
        argv,
        run_id: std::env::var(RUN_ENV).ok(),
        stdin,
    };
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    (&stream).write_all(&line)?;
    if what == Forward::Session {
        relay(stream)?;
        return Ok(None);
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer)?;
    Ok(Some(serde_json::from_str(&answer)?))
}

/// Copies stdin to `stream` and `stream` to stdout until the session ends on either side.
fn relay(stream: UnixStream) -> std::io::Result<()> {
    let mut to_driver = stream.try_clone()?;
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut std::io::stdin().lock(), &mut to_driver);
        let _ = to_driver.shutdown(std::net::Shutdown::Write);
    });
    let mut from_driver = stream;
    let mut out = std::io::stdout().lock();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = from_driver.read(&mut buf)?;
        if n == 0 {
            return Ok(());
        }
        out.write_all(&buf[..n])?;
        out.flush()?;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    /// Records the run each call is handed and what `TETHER_RUN_ID` says to the command.
    #[derive(Default)]
    struct Recorder {
        seen: Mutex<Vec<(Option<String>, Option<String>)>>,
    }

    impl Handler for Recorder {
        fn is_session(&self, _argv: &[String]) -> bool {
            false
        }

        fn session(&self, _call: &Call<'_>) -> Result<tether_mcp::TetherMcp, HandlerError> {
            Err("no sessions here".into())
        }

        fn command(&self, call: &Call<'_>) -> Reply {
            let run = call.run.map(ToString::to_string);
            let named = call.env.var(RUN_ENV);
            self.seen
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .push((run, named));
            Reply::default()
        }
    }

    /// Hands `request` to the bridge at `socket` and reads the reply.
    fn send(socket: &Path, request: &serde_json::Value) -> Reply {
        let stream = UnixStream::connect(socket).unwrap();
        let mut line = serde_json::to_vec(request).unwrap();
        line.push(b'\n');
        (&stream).write_all(&line).unwrap();
        stream.shutdown(std::net::Shutdown::Write).unwrap();
        let mut answer = String::new();
        BufReader::new(&stream).read_line(&mut answer).unwrap();
        serde_json::from_str(&answer).unwrap()
    }

    #[test]
    fn a_call_belongs_to_the_run_the_bridge_serves_whatever_run_the_agent_names() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let recorder = Arc::new(Recorder::default());
        let served: RunId = "r-served0001".parse().unwrap();
        let cell: RunCell = Arc::new(std::sync::Mutex::new(Some(served.clone())));
        let handler = for_run(recorder.clone(), cell);
        let listener = bind(dir.path()).unwrap();
        let socket = listener.path().to_owned();
        listener
            .serve(&ws, Config::default(), RunSandbox::default(), handler)
            .unwrap();
        let request = serde_json::json!({
            "argv": ["tether", "ask", "Which name?"],
            "run_id": "r-another0002",
            "stdin": null,
        });
        send(&socket, &request);
        let seen = recorder
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let served = Some(served.to_string());
        assert_eq!(seen, [(served.clone(), served)]);
    }

    #[test]
    fn a_bridge_of_no_run_keeps_the_run_the_agent_named() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let recorder = Arc::new(Recorder::default());
        let listener = bind(dir.path()).unwrap();
        let socket = listener.path().to_owned();
        listener
            .serve(
                &ws,
                Config::default(),
                RunSandbox::default(),
                recorder.clone(),
            )
            .unwrap();
        let request = serde_json::json!({
            "argv": ["tether", "status"],
            "run_id": "r-named000003",
            "stdin": null,
        });
        send(&socket, &request);
        let seen = recorder
            .seen
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        assert_eq!(seen, [(None, Some("r-named000003".to_owned()))]);
    }
}

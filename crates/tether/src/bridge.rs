//! How a sandboxed agent still reaches tether: `tether goal complete`, `tether ask`, `tether
//! status`… run inside the sandbox cannot open the store (it is out of sight there), so they
//! hand their command line to the process driving the run, over a Unix socket in the run's
//! private temporary directory (`TETHER_BRIDGE` names it), and print what it answers.
//!
//! The driving process runs the command as the agent: the agent mark is always set for it,
//! whatever the request says, so every human-only act is refused exactly as it is in the
//! agent's own process tree; and with the run's configuration as the driving process holds it
//! (the settings that bound the agent as the run keeps them, its judge…), not tether.toml as
//! the agent may have left it. Commands that start loops, serve, or change the setup are not
//! run for the agent at all. One request per connection: a JSON line with the arguments (and,
//! for `tether gate`, the stdin it read), then a JSON line back with the exit code and the
//! output — or, for `tether mcp`, the MCP session itself, both ways, until the agent closes it.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::{Context as _, Result};
use clap::Parser as _;
use serde::{Deserialize, Serialize};
use tether_config::{Config, Env, ProcessEnv, Workspace};

use crate::cli::{Cli, Command, PlanCommand};
use crate::exit::Exit;
use crate::sandbox::RunSandbox;

/// The variable naming the socket, set in the sandbox's environment.
pub const BRIDGE_VAR: &str = "TETHER_BRIDGE";

/// The largest request read.
const MAX_REQUEST: u64 = 256 * 1024;

/// A command line handed over.
#[derive(Serialize, Deserialize)]
struct Request {
    argv: Vec<String>,
    /// The run the agent's `tether mcp` / `ask` files questions under (`TETHER_RUN_ID`).
    run_id: Option<String>,
    /// What the command's stdin held, for a command that reads it whole (`tether gate`).
    stdin: Option<String>,
}

/// What the driving process answers.
#[derive(Serialize, Deserialize)]
struct Response {
    code: u8,
    stdout: String,
    stderr: String,
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
    let listener = UnixListener::bind(&path)
        .with_context(|| format!("listening on {} for the sandbox's tether", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    Ok(Listener { listener, path })
}

impl Listener {
    /// The socket's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Serves the bridge for `ws`, for as long as the process lives, on one thread; each call
    /// on a thread of its own that ends with it (at most [`MAX_CALLS`] at once). The commands
    /// it runs use `config`, the run's configuration as this process holds it (not tether.toml,
    /// which the agent may have edited: its sandbox, its judge…), and what a call runs for the
    /// agent runs in `sandbox`, the run's.
    pub fn serve(self, ws: &Workspace, config: Config, sandbox: RunSandbox) -> Result<()> {
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
                    let call = Call {
                        ws: ws.clone(),
                        config: config.clone(),
                        sandbox: sandbox.clone(),
                        calls: calls.clone(),
                    };
                    let spawned = std::thread::Builder::new()
                        .name("tether-bridge-call".into())
                        .spawn(move || call.answer(stream));
                    if spawned.is_err() {
                        calls.fetch_sub(1, Ordering::SeqCst);
                    }
                }
            })?;
        Ok(())
    }
}

/// One call being answered; counted among the running ones until it is dropped.
struct Call {
    ws: Workspace,
    config: Arc<Config>,
    sandbox: RunSandbox,
    calls: Arc<AtomicUsize>,
}

impl Call {
    fn answer(self, stream: UnixStream) {
        if let Err(e) = answer(&self.ws, &self.config, &self.sandbox, stream) {
            tracing::debug!("a sandboxed tether command failed to be heard: {e:#}");
        }
    }
}

impl Drop for Call {
    fn drop(&mut self) {
        self.calls.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The team store tether.toml (or `TETHER_STORE_URL`) names for `ws`, if any.
fn store_url(ws: &Workspace) -> Option<String> {
    tether_config::load_store(ws.root(), &ProcessEnv)
        .ok()
        .and_then(|s| s.url)
}

/// Reads one request, runs it as the agent with the run's configuration and sandbox, writes the
/// response (or serves the MCP session). Refused when tether.toml names another store than the
/// run's (the store is found from the file): the agent could otherwise have this process
/// connect anywhere.
fn answer(
    ws: &Workspace,
    config: &Arc<Config>,
    sandbox: &RunSandbox,
    stream: UnixStream,
) -> Result<()> {
    let line = header(&stream)?;
    let request: Request = serde_json::from_str(&line).context("reading the request")?;
    let elsewhere = store_url(ws) != config.store.url;
    if let Ok(Cli {
        command: Command::Mcp(args),
        ..
    }) = Cli::try_parse_from(&request.argv)
    {
        if elsewhere {
            anyhow::bail!("tether.toml's [store] changed during the run");
        }
        return serve_mcp(ws, config, sandbox, &request, &args, stream);
    }
    let response = if elsewhere {
        Response {
            code: Exit::Usage.code(),
            stdout: String::new(),
            stderr: "error: tether.toml's [store] changed during the run: the sandbox's tether \
                     commands keep to the run's store\n"
                .to_owned(),
        }
    } else {
        run_as_agent(ws, config, sandbox, &request)
    };
    let mut out = serde_json::to_vec(&response)?;
    out.push(b'\n');
    (&stream).write_all(&out)?;
    Ok(())
}

/// The request's line, read a byte at a time: what follows it (an MCP session) is not
/// consumed.
fn header(stream: &UnixStream) -> Result<String> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    let mut reader = stream.take(MAX_REQUEST);
    while reader.read(&mut byte)? == 1 && byte[0] != b'\n' {
        line.push(byte[0]);
    }
    Ok(String::from_utf8(line)?)
}

/// Serves the agent's `tether mcp` session on `stream`, as the agent, until it closes.
fn serve_mcp(
    ws: &Workspace,
    config: &Arc<Config>,
    sandbox: &RunSandbox,
    request: &Request,
    args: &crate::cli::McpArgs,
    stream: UnixStream,
) -> Result<()> {
    let env = AgentEnv {
        run_id: request.run_id.clone(),
    };
    let mut sink = std::io::sink();
    let ctx = crate::cmd::Ctx {
        ws: ws.clone(),
        env: &env,
        out: &mut sink,
        bridged: true,
        input: None,
        run_config: Some(config.clone()),
        run_sandbox: Some(sandbox.clone()),
    };
    let server = crate::cmd::mcp::server(&ctx, args)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        stream.set_nonblocking(true)?;
        let stream = tokio::net::UnixStream::from_std(stream)?;
        let (read, write) = stream.into_split();
        tether_mcp::serve_io(server, read, write, std::future::pending()).await?;
        anyhow::Ok(())
    })?;
    runtime.shutdown_background();
    Ok(())
}

/// The agent's environment as the driving process sees it for a handed-over command: its own,
/// with the agent mark always set and the run the agent named.
struct AgentEnv {
    run_id: Option<String>,
}

impl Env for AgentEnv {
    fn var(&self, name: &str) -> Option<String> {
        match name {
            tether_tools::process::AGENT_MARK => Some(std::process::id().to_string()),
            crate::cmd::mcp::RUN_ENV => self.run_id.clone(),
            _ => ProcessEnv.var(name),
        }
    }
}

fn run_as_agent(
    ws: &Workspace,
    config: &Arc<Config>,
    sandbox: &RunSandbox,
    request: &Request,
) -> Response {
    let cli = match Cli::try_parse_from(&request.argv) {
        Ok(cli) => cli,
        Err(e) => {
            return Response {
                code: if e.use_stderr() { 2 } else { 0 },
                stdout: if e.use_stderr() {
                    String::new()
                } else {
                    e.to_string()
                },
                stderr: if e.use_stderr() {
                    e.to_string()
                } else {
                    String::new()
                },
            };
        }
    };
    if !allowed(&cli.command) {
        return Response {
            code: Exit::Usage.code(),
            stdout: String::new(),
            stderr: "error: this tether command is not available inside the sandbox: run it \
                     from your own shell\n"
                .to_owned(),
        };
    }
    let env = AgentEnv {
        run_id: request.run_id.clone(),
    };
    let mut out = Vec::new();
    let mut ctx = crate::cmd::Ctx {
        ws: ws.clone(),
        env: &env,
        out: &mut out,
        bridged: true,
        input: request.stdin.clone(),
        run_config: Some(config.clone()),
        run_sandbox: Some(sandbox.clone()),
    };
    let (code, stderr) = match crate::dispatch(&cli, &mut ctx) {
        Ok(exit) => (exit.code(), String::new()),
        Err(e) => crate::failed(&e),
    };
    Response {
        code,
        stdout: String::from_utf8_lossy(&out).into_owned(),
        stderr,
    }
}

/// The commands the agent may have run for it: those that ask, sign off, read, or are
/// refused anyway as human acts, and `tether gate` (Claude Code's hook). Not loops (plan mode
/// included), servers or the setup. (`tether mcp` is served as a session of its own.)
fn allowed(command: &Command) -> bool {
    matches!(
        command,
        Command::Goal(_)
            | Command::Gate(_)
            | Command::Ask(_)
            | Command::Answer(_)
            | Command::Questions(_)
            | Command::History(_)
            | Command::Status(_)
            | Command::Plan(crate::cli::PlanArgs {
                command: None | Some(PlanCommand::Approve(_) | PlanCommand::Archive(_)),
                ..
            })
            | Command::Validate(_)
            | Command::Say(_)
            | Command::Pause(_)
            | Command::Cancel(_)
            | Command::Resume(_)
    )
}

/// In a sandboxed child: hands this command line to the process driving the run and prints
/// its answer, or (`tether mcp`) relays the MCP session both ways; the exit code to end with.
pub fn forward(socket: &Path) -> u8 {
    match call(socket) {
        Ok(Some(response)) => {
            let _ = std::io::stdout().write_all(response.stdout.as_bytes());
            let _ = std::io::stderr().write_all(response.stderr.as_bytes());
            response.code
        }
        Ok(None) => Exit::Done.code(),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "error: could not reach the tether driving this run through {}: {e:#}",
                socket.display()
            );
            Exit::Error.code()
        }
    }
}

fn call(socket: &Path) -> Result<Option<Response>> {
    let argv: Vec<String> = std::env::args().collect();
    let command = Cli::try_parse_from(&argv).ok().map(|cli| cli.command);
    let session = matches!(command, Some(Command::Mcp(_)));
    let stdin = if matches!(command, Some(Command::Gate(_))) {
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
        run_id: std::env::var(crate::cmd::mcp::RUN_ENV).ok(),
        stdin,
    };
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    (&stream).write_all(&line)?;
    if session {
        relay(stream)?;
        return Ok(None);
    }
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer)?;
    Ok(Some(serde_json::from_str(&answer)?))
}

/// Copies stdin to `stream` and `stream` to stdout until the session ends on either side.
fn relay(stream: UnixStream) -> Result<()> {
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

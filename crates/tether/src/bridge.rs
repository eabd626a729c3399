//! How a sandboxed agent still reaches tether: `tether goal complete`, `tether ask`, `tether
//! status`… run inside the sandbox cannot open the store (it is out of sight there), so they
//! hand their command line to the process driving the run, over a Unix socket in the run's
//! private temporary directory (`TETHER_BRIDGE` names it), and print what it answers.
//!
//! The driving process runs the command as the agent: the agent mark is always set for it,
//! whatever the request says, so every human-only act is refused exactly as it is in the
//! agent's own process tree. Commands that start loops, serve, or change the setup are not
//! run for the agent at all. One request per connection: a JSON line with the arguments, then
//! a JSON line back with the exit code and the output.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Parser as _;
use serde::{Deserialize, Serialize};
use tether_config::{Env, ProcessEnv, Workspace};

use crate::cli::{Cli, Command, PlanCommand};
use crate::exit::Exit;

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
}

/// What the driving process answers.
#[derive(Serialize, Deserialize)]
struct Response {
    code: u8,
    stdout: String,
    stderr: String,
}

/// Serves the bridge for `ws` on a socket in `dir`; returns the socket's path. It lives as long
/// as the process.
pub fn serve(ws: &Workspace, dir: &Path) -> Result<PathBuf> {
    let path = dir.join("tether.sock");
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path)
        .with_context(|| format!("listening on {} for the sandbox's tether", path.display()))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
    let ws = ws.clone();
    std::thread::Builder::new()
        .name("tether-bridge".into())
        .spawn(move || {
            for stream in listener.incoming().flatten() {
                let ws = ws.clone();
                let _ = std::thread::Builder::new()
                    .name("tether-bridge-call".into())
                    .spawn(move || {
                        if let Err(e) = answer(&ws, stream) {
                            tracing::debug!("a sandboxed tether command failed to be heard: {e:#}");
                        }
                    });
            }
        })?;
    Ok(path)
}

/// Reads one request, runs it as the agent, writes the response.
fn answer(ws: &Workspace, stream: UnixStream) -> Result<()> {
    let mut line = String::new();
    BufReader::new((&stream).take(MAX_REQUEST)).read_line(&mut line)?;
    let request: Request = serde_json::from_str(&line).context("reading the request")?;
    let response = run_as_agent(ws, &request);
    let mut out = serde_json::to_vec(&response)?;
    out.push(b'\n');
    (&stream).write_all(&out)?;
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

fn run_as_agent(ws: &Workspace, request: &Request) -> Response {
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
/// refused anyway as human acts. Not loops (plan mode included), servers, the setup or the MCP
/// server.
fn allowed(command: &Command) -> bool {
    matches!(
        command,
        Command::Goal(_)
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
/// its answer; the exit code to end with.
pub fn forward(socket: &Path) -> u8 {
    match call(socket) {
        Ok(response) => {
            let _ = std::io::stdout().write_all(response.stdout.as_bytes());
            let _ = std::io::stderr().write_all(response.stderr.as_bytes());
            response.code
        }
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

fn call(socket: &Path) -> Result<Response> {
    let stream = UnixStream::connect(socket)?;
    let request = Request {
        argv: std::env::args().collect(),
        run_id: std::env::var(crate::cmd::mcp::RUN_ENV).ok(),
    };
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    (&stream).write_all(&line)?;
    stream.shutdown(std::net::Shutdown::Write)?;
    let mut answer = String::new();
    BufReader::new(&stream).read_line(&mut answer)?;
    Ok(serde_json::from_str(&answer)?)
}

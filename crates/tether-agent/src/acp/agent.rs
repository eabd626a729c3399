//! One ACP agent process and tether's connection to it: spawned like every child of tether
//! (own process group, sandbox, keys removed; the whole group killed when it is dropped, since
//! closing stdin stops no known adapter), its stdout read as bounded JSON-RPC lines, and what it
//! sends routed to the turn in progress: `session/update` notifications and permission requests
//! of that turn's session, and file reads and writes, answered here inside the workspace.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, FileSystemCapabilities, Implementation, InitializeRequest,
    InitializeResponse, ReadTextFileRequest, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionNotification, SessionUpdate, WriteTextFileRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, Lines};
use futures_util::{SinkExt, StreamExt as _};
use tether_tools::{LiveProgram, ProgramCommand, Workspace};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, FramedWrite, LinesCodec, LinesCodecError};

use super::fs;

/// The longest JSON-RPC line read from an agent; a longer one is dropped (and logged).
const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// Something the agent sent for the turn in progress.
pub(crate) enum Inbound {
    /// A `session/update`.
    Update(Box<SessionUpdate>),
    /// A `session/request_permission`, to be answered through the responder.
    Permission(
        Box<(
            RequestPermissionRequest,
            Responder<RequestPermissionResponse>,
        )>,
    ),
}

/// Where the agent's messages for a session go.
#[derive(Default)]
pub(crate) struct Routes {
    turn: Mutex<Option<(String, mpsc::UnboundedSender<Inbound>)>>,
}

impl Routes {
    /// Routes `session`'s messages to a new receiver (replacing any earlier turn's).
    pub(crate) fn open(&self, session: String) -> mpsc::UnboundedReceiver<Inbound> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = Some((session, tx));
        rx
    }

    /// Stops routing: later messages of the session are dropped (permission requests refused).
    pub(crate) fn close(&self) {
        *self.turn.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Hands `message` to the turn of `session`; gives it back when no such turn is open.
    fn route(&self, session: &str, message: Inbound) -> Result<(), Inbound> {
        let turn = self.turn.lock().unwrap_or_else(PoisonError::into_inner);
        match &*turn {
            Some((open, tx)) if open == session => tx.send(message).map_err(|e| e.0),
            _ => Err(message),
        }
    }

    fn is_open(&self, session: &str) -> bool {
        matches!(&*self.turn.lock().unwrap_or_else(PoisonError::into_inner), Some((open, _)) if open == session)
    }
}

/// `line`, with a known adapter's departure from the schema mended: Claude's adapter sends
/// `usage_update` with `"used": null` (the schema wants a number), which would drop the whole
/// update and the session cost it carries. Every other line passes untouched.
pub(crate) fn lenient(line: String) -> String {
    if !line.contains("usage_update") || !line.contains("null") {
        return line;
    }
    let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&line) else {
        return line;
    };
    let update = value.pointer_mut("/params/update");
    match update {
        Some(update) if update.get("used").is_some_and(serde_json::Value::is_null) => {
            update["used"] = serde_json::Value::from(0);
            value.to_string()
        }
        _ => line,
    }
}

/// A running agent with its connection.
pub(crate) struct AgentProcess {
    pub(crate) program: LiveProgram,
    pub(crate) cx: ConnectionTo<Agent>,
    pub(crate) routes: Arc<Routes>,
    pub(crate) init: InitializeResponse,
    /// The command it was started with (a different one means a new process).
    pub(crate) argv: Vec<String>,
    driver: tokio::task::JoinHandle<()>,
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

/// Why the agent could not be started or initialised.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The program could not be started.
    #[error("`{program}` could not be started")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// It started but did not answer `initialize` as an ACP agent.
    #[error("`{program}` did not answer ACP's initialize ({detail}){}", stderr_note(.stderr))]
    Initialize {
        /// The program.
        program: String,
        /// What went wrong.
        detail: String,
        /// The end of its stderr.
        stderr: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    if stderr.trim().is_empty() {
        String::new()
    } else {
        format!("; its stderr ends: {}", stderr.trim())
    }
}

impl AgentProcess {
    /// Starts `command` and initialises it (within `timeout`), offering file reads and writes
    /// inside `workspace` when `fs`.
    pub(crate) async fn start(
        command: &ProgramCommand,
        workspace: Workspace,
        fs: bool,
        timeout: Duration,
    ) -> Result<Self, StartError> {
        let program_name = command.argv.first().cloned().unwrap_or_default();
        let mut program = LiveProgram::spawn(command).map_err(|source| StartError::Spawn {
            program: program_name.clone(),
            source,
        })?;
        let (Some(stdin), Some(stdout)) = (program.take_stdin(), program.take_stdout()) else {
            return Err(StartError::Spawn {
                program: program_name,
                source: std::io::Error::other("its stdin or stdout is not a pipe"),
            });
        };
        let incoming = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE_BYTES))
            .filter_map(|line| async move {
                match line {
                    Ok(line) => Some(Ok(lenient(line))),
                    Err(LinesCodecError::MaxLineLengthExceeded) => {
                        tracing::warn!(
                            "an ACP agent sent a line longer than {MAX_LINE_BYTES} bytes; dropped"
                        );
                        None
                    }
                    Err(LinesCodecError::Io(e)) => Some(Err(e)),
                }
            });
        let outgoing = SinkExt::<String>::sink_map_err(
            FramedWrite::new(stdin, LinesCodec::new()),
            |e| match e {
                LinesCodecError::Io(e) => e,
                LinesCodecError::MaxLineLengthExceeded => std::io::Error::other(e),
            },
        );
        let transport = Lines::new(outgoing, Box::pin(incoming));
        let routes = Arc::new(Routes::default());
        let (cx_tx, cx_rx) = tokio::sync::oneshot::channel();
        let builder = {
            let routes = routes.clone();
            let updates = routes.clone();
            let permissions = routes.clone();
            let reads = routes.clone();
            let writes = routes;
            let read_ws = workspace.clone();
            let write_ws = workspace;
            Client
            .v1()
            .name("tether")
            .on_receive_notification(
                async move |n: SessionNotification, _cx| {
                    let _ = updates.route(&n.session_id.to_string(), Inbound::Update(Box::new(n.update)));
                    Ok(())
                },
                agent_client_protocol::on_receive_notification!(),
            )
            .on_receive_request(
                async move |request: RequestPermissionRequest,
                            responder: Responder<RequestPermissionResponse>,
                            _cx| {
                    let session = request.session_id.to_string();
                    match permissions.route(&session, Inbound::Permission(Box::new((request, responder)))) {
                        Ok(()) => Ok(()),
                        // No turn of that session is open: nobody can be asked.
                        Err(Inbound::Permission(held)) => held.1.respond(
                            RequestPermissionResponse::new(RequestPermissionOutcome::Cancelled),
                        ),
                        Err(Inbound::Update(_)) => Ok(()),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: ReadTextFileRequest, responder, _cx| {
                    if !reads.is_open(&request.session_id.to_string()) {
                        return responder.respond_with_error(agent_client_protocol::Error::invalid_params());
                    }
                    match fs::read(&read_ws, &request) {
                        Ok(r) => responder.respond(r),
                        Err(why) => responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params().data(why),
                        ),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
            .on_receive_request(
                async move |request: WriteTextFileRequest, responder, _cx| {
                    if !writes.is_open(&request.session_id.to_string()) {
                        return responder.respond_with_error(agent_client_protocol::Error::invalid_params());
                    }
                    match fs::write(&write_ws, &request) {
                        Ok(r) => responder.respond(r),
                        Err(why) => responder.respond_with_error(
                            agent_client_protocol::Error::invalid_params().data(why),
                        ),
                    }
                },
                agent_client_protocol::on_receive_request!(),
            )
        };
        let driver = tokio::spawn(async move {
            let run = builder.connect_with(transport, async move |cx: ConnectionTo<Agent>| {
                let _ = cx_tx.send(cx.clone());
                cx.incoming_closed().await;
                Ok(())
            });
            if let Err(e) = run.await {
                tracing::debug!(error = %e, "the ACP connection ended");
            }
        });
        let failed = |program: &mut LiveProgram, detail: String| StartError::Initialize {
            program: program_name.clone(),
            detail,
            stderr: program.stderr_tail(),
        };
        let cx = match tokio::time::timeout(timeout, cx_rx).await {
            Ok(Ok(cx)) => cx,
            _ => {
                driver.abort();
                return Err(failed(&mut program, "the connection did not open".into()));
            }
        };
        let request = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(
                ClientCapabilities::new().fs(FileSystemCapabilities::new()
                    .read_text_file(fs)
                    .write_text_file(fs)),
            )
            .client_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")));
        let init = match tokio::time::timeout(timeout, cx.send_request(request).block_task()).await
        {
            Ok(Ok(init)) => init,
            Ok(Err(e)) => {
                driver.abort();
                return Err(failed(&mut program, e.to_string()));
            }
            Err(_) => {
                driver.abort();
                let detail = format!("no answer within {} s", timeout.as_secs());
                return Err(failed(&mut program, detail));
            }
        };
        Ok(AgentProcess {
            program,
            cx,
            routes,
            init,
            argv: command.argv.clone(),
            driver,
        })
    }

    /// Whether the process and its connection are still there.
    pub(crate) fn alive(&mut self) -> bool {
        !self.driver.is_finished() && self.program.exited().is_none()
    }
}

//! The session an ACP turn prompts: a new one (`session/new`, with tether's MCP server in it), or
//! — when the turn continues the last one ([`Context::Continue`](crate::Context::Continue)) —
//! that session again: prompted as it is while the agent process that opened it runs, loaded
//! into a new process (`session/load`) when the agent offers that (`loadSession`), and otherwise
//! a new one, which the run's log says once.

use std::sync::atomic::Ordering;

use agent_client_protocol::v1::schema::{
    EnvVariable, LoadSessionRequest, McpServer, McpServerStdio, NewSessionRequest, SessionId,
};
use tokio_util::sync::CancellationToken;

use super::agent::AgentProcess;
use super::{AcpExecutor, START_TIMEOUT};
use crate::cli::SERVER;
use crate::session::Start;
use crate::{AgentEvent, ExecError, Turn};

/// The session a turn prompts, and what it tells it.
pub(super) struct Prompted {
    /// The session.
    pub(super) id: SessionId,
    /// The turn's prompt: the whole one in a new session, what is new in a continued one.
    pub(super) prompt: String,
}

impl AcpExecutor {
    /// tether's MCP server as a session gets it (none when it goes through the agent's command
    /// line instead).
    fn mcp_servers(&self) -> Vec<McpServer> {
        if !self.route.in_session() {
            return Vec::new();
        }
        let mut env = Vec::new();
        if let Some(run) = (self.run)() {
            env.push(EnvVariable::new("TETHER_RUN_ID", run));
        }
        let server = McpServerStdio::new(SERVER, self.settings.tether.clone())
            .args(self.mcp_args())
            .env(env);
        vec![McpServer::Stdio(server)]
    }

    /// The session `turn` prompts in `agent`, the process of `generation`.
    pub(super) async fn session_for(
        &self,
        agent: &AgentProcess,
        generation: u64,
        turn: &Turn<'_>,
    ) -> Result<Prompted, ExecError> {
        let fresh = |why: String| {
            turn.observer
                .event(AgentEvent::FreshContext { reason: why });
        };
        match self.kept.start(&turn.request.context) {
            Start::Continue {
                session: (id, opened_in),
                prompt,
            } => {
                if opened_in == generation {
                    return Ok(Prompted { id, prompt });
                }
                match self.load(agent, &id, &turn.cancel).await {
                    Ok(()) => return Ok(Prompted { id, prompt }),
                    Err(Unloaded::Cancelled) => return Err(ExecError::Cancelled),
                    Err(Unloaded::Unoffered(why)) => {
                        if !self.said_unloadable.swap(true, Ordering::Relaxed) {
                            tracing::warn!("{why}");
                            fresh(why);
                        }
                    }
                    Err(Unloaded::Failed(why)) => fresh(why),
                }
            }
            Start::Fresh { why } => {
                if let Some(why) = why {
                    fresh(why);
                }
            }
        }
        let id = self.open_session(agent, &turn.cancel).await?;
        Ok(Prompted {
            id,
            prompt: turn.request.prompt.clone(),
        })
    }

    /// A fresh session for the turn (`session/new`).
    pub(super) async fn open_session(
        &self,
        agent: &AgentProcess,
        cancel: &CancellationToken,
    ) -> Result<SessionId, ExecError> {
        let request =
            NewSessionRequest::new(self.settings.workspace.clone()).mcp_servers(self.mcp_servers());
        let opened = tokio::select! {
            s = tokio::time::timeout(START_TIMEOUT, agent.cx.send_request(request).block_task()) => s,
            () = cancel.cancelled() => return Err(ExecError::Cancelled),
        };
        match opened {
            Ok(Ok(s)) => Ok(s.session_id),
            Ok(Err(e)) => Err(ExecError::Setup(
                format!("session/new failed: {e}{}", self.stderr(agent)).into(),
            )),
            Err(_) => Err(ExecError::Setup(
                format!("session/new got no answer{}", self.stderr(agent)).into(),
            )),
        }
    }

    /// Session `id` of an earlier process of the agent, loaded into `agent` (`session/load`).
    async fn load(
        &self,
        agent: &AgentProcess,
        id: &SessionId,
        cancel: &CancellationToken,
    ) -> Result<(), Unloaded> {
        if !agent.init.agent_capabilities.load_session {
            return Err(Unloaded::Unoffered(format!(
                "the ACP agent was started again and does not offer session/load: its \
                 session {id} cannot be continued, so turns after a restart start fresh"
            )));
        }
        let request = LoadSessionRequest::new(id.clone(), self.settings.workspace.clone())
            .mcp_servers(self.mcp_servers());
        let loaded = tokio::select! {
            l = tokio::time::timeout(START_TIMEOUT, agent.cx.send_request(request).block_task()) => l,
            () = cancel.cancelled() => return Err(Unloaded::Cancelled),
        };
        match loaded {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(Unloaded::Failed(format!(
                "the ACP agent could not load its session {id} (session/load: {e})"
            ))),
            Err(_) => Err(Unloaded::Failed(format!(
                "the ACP agent did not answer session/load of its session {id} within {} s",
                START_TIMEOUT.as_secs()
            ))),
        }
    }
}

/// Why an earlier session was not loaded.
enum Unloaded {
    /// The turn was cancelled meanwhile.
    Cancelled,
    /// The agent does not offer `session/load`.
    Unoffered(String),
    /// It offers it, and it failed.
    Failed(String),
}

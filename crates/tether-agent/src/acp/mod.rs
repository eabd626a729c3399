//! [`AcpExecutor`]: any agent that speaks the Agent Client Protocol (JSON-RPC over stdio) as
//! tether's executor — Claude Code through `claude-agent-acp`, Codex through `codex-acp`,
//! Gemini CLI and Copilot CLI with `--acp`, pi through `pi-acp`, and the next one.
//!
//! tether is the client. The agent process is started once per run and kept; every iteration
//! opens a fresh session (`session/new`, the workspace as `cwd`) with tether's own MCP server
//! in it, so `ask_human`, `complete_goal`, `cancel_goal` and `plan_status` reach the agent
//! without touching its configuration — or, when it continues the last one, prompts that
//! session again ([`sessions`]). An agent known to time its MCP tools out (Codex's adapter
//! stops waiting after 120 s, and a person may answer days later) gets the server through its
//! configuration overrides instead, with a tool timeout of a week; one that refuses a stdio
//! server in `session/new` (Copilot CLI) gets it in an argument of its command line, and an
//! agent CLI whose session servers lack what tether's needs (Qwen Code's defer their tools and
//! time out in ten minutes) in arguments its module makes ([`McpRoute`]). An agent CLI tether
//! knows by name may be offered no `fs/*` ([`AcpExecutor::without_fs`]) and have its version
//! checked before it starts ([`AcpExecutor::checking_version`]).
//!
//! Every `session/request_permission` is decided by the [`PermissionDesk`] the executor is
//! given (the run's `ask_before` rules and the human desk); a call that would change something
//! outside the workspace, or anything but a read in a read-only turn, is refused here first. A
//! refusal the agent cannot hear (its only reject option ends the turn, as Codex's `abort`
//! does) is told in the next prompt. Cancelling a turn sends `session/cancel`, answers pending
//! permission requests as cancelled, and kills the process group if the agent does not stop
//! within a grace period; the next turn starts a new session, or a new process.

mod agent;
mod decide;
mod fs;
pub mod permission;
mod route;
mod sessions;
mod updates;
mod usage;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, PromptRequest, PromptResponse, SessionId, StopReason,
    TextContent,
};
use futures_util::future::BoxFuture;
use futures_util::stream::{FuturesUnordered, StreamExt as _};
use tether_tools::{ProgramCommand, Workspace};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

pub use self::agent::StartError;
use self::agent::{AgentProcess, Inbound};
use self::decide::Decided;
pub use self::permission::{
    AllowReads, Choice, ChoiceKind, PermissionAsk, PermissionDesk, PermissionVerdict, RefuseAll,
};
pub use self::route::{McpRoute, ServerSpec};
use self::updates::TurnState;
use crate::cli::{Agent, Cli, CliSettings, RunId};
use crate::session::Kept;
use crate::{ExecError, Turn, TurnObserver, TurnOutcome, TurnRequest, Turns};

/// How long starting the agent, `initialize` and `session/new` may take.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// How long a cancelled turn may take to end before the agent's process group is killed.
const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// How long an agent whose output closed mid-turn is given to exit before it is stopped.
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// How many characters of the agent's stderr an error quotes.
const STDERR_CHARS: usize = 2000;

/// An ACP agent as tether's executor.
pub struct AcpExecutor {
    settings: CliSettings,
    run: RunId,
    desk: Arc<dyn PermissionDesk>,
    route: McpRoute,
    /// Whether the agent is offered file reads and writes through tether (`fs/*`).
    fs: bool,
    /// The agent CLI whose version is checked before the agent first starts.
    version: Option<Cli>,
    agent: tokio::sync::Mutex<Option<AgentProcess>>,
    /// How many agent processes were started: which one opened a kept session.
    generation: AtomicU64,
    /// The session the next turn may continue, and the process that opened it.
    kept: Kept<(SessionId, u64)>,
    /// Whether the run's log said the agent cannot load a session into a new process.
    said_unloadable: AtomicBool,
    /// What was refused in the last turn, told to the agent in the next prompt.
    refusals: Mutex<Vec<String>>,
}

impl AcpExecutor {
    /// The agent `settings.program` with `settings.args`, its permission requests decided by
    /// `desk`; `run` names the run once it exists.
    pub fn new(settings: CliSettings, run: RunId, desk: Arc<dyn PermissionDesk>) -> Self {
        let route = McpRoute::for_program(&settings.program);
        AcpExecutor {
            settings,
            run,
            desk,
            route,
            fs: true,
            version: None,
            agent: tokio::sync::Mutex::new(None),
            generation: AtomicU64::new(0),
            kept: Kept::default(),
            said_unloadable: AtomicBool::new(false),
            refusals: Mutex::new(Vec::new()),
        }
    }

    /// Passes tether's MCP server by `route` instead of the one chosen from the program's name.
    pub fn with_mcp_route(mut self, route: McpRoute) -> Self {
        self.route = route;
        self
    }

    /// Offers the agent no file reads and writes (ACP's `fs` capabilities false): it reads and
    /// writes the workspace itself, inside tether's sandbox. For an agent that mistakes tether's
    /// answer for a missing file (an error) for a failure, and so cannot create one.
    pub fn without_fs(mut self) -> Self {
        self.fs = false;
        self
    }

    /// Checks the version of the agent CLI `agent` (`<program> --version` against its oldest
    /// supported one) before the agent first starts.
    pub fn checking_version(mut self, agent: Agent) -> Self {
        self.version = Some(Cli::new(agent, self.settings.clone(), self.run.clone()));
        self
    }

    /// Starts the agent and initialises it, then stops it: whether it runs and speaks ACP
    /// (`tether doctor`). Returns the agent's name and version as it reports them.
    pub async fn check(&self) -> Result<String, StartError> {
        let mut agent = self.start().await?;
        let info = agent.init.agent_info.as_ref().map_or_else(
            || "an ACP agent".to_owned(),
            |i| format!("{} {}", i.name, i.version),
        );
        agent.program.stop().await;
        Ok(info)
    }

    /// tether's MCP server arguments for this run.
    fn mcp_args(&self) -> Vec<String> {
        self.settings.mcp_args((self.run)())
    }

    /// The command that starts the agent: its program and arguments, then tether's MCP server
    /// when the route passes it on the command line.
    fn command(&self) -> ProgramCommand {
        let mut argv = vec![self.settings.program.clone()];
        argv.extend(self.settings.args.iter().cloned());
        argv.extend(
            self.route
                .argv(&self.settings.tether, &self.mcp_args(), (self.run)()),
        );
        // The agent runs as long as the run: each turn's own deadline is kept by the turn.
        self.settings
            .command(argv, None, self.settings.turn_timeout, Vec::new())
    }

    async fn start(&self) -> Result<AgentProcess, StartError> {
        let workspace =
            Workspace::new(&self.settings.workspace).map_err(|e| StartError::Spawn {
                program: self.settings.program.clone(),
                source: std::io::Error::other(e.to_string()),
            })?;
        AgentProcess::start(&self.command(), workspace, self.fs, START_TIMEOUT).await
    }

    /// The turn's prompt, after what was refused in the last turn.
    fn prompt_text(&self, prompt: &str) -> String {
        let refused: Vec<String> =
            std::mem::take(&mut *self.refusals.lock().unwrap_or_else(PoisonError::into_inner));
        if refused.is_empty() {
            return prompt.to_owned();
        }
        format!(
            "Before this turn, tether refused these requests of yours (do not try them another \
             way; if one is still needed, say why in your summary or ask with ask_human):\n- {}\n\n{prompt}",
            refused.join("\n- ")
        )
    }

    /// A running, initialised agent started with today's command in `guard`: the one there, or
    /// a new one when it is gone, dead, or was started for another MCP server.
    async fn ready(
        &self,
        guard: &mut Option<AgentProcess>,
        cancel: &CancellationToken,
    ) -> Result<(), ExecError> {
        let wanted = self.command().argv;
        if guard
            .as_mut()
            .is_some_and(|agent| !agent.alive() || agent.argv != wanted)
        {
            self.discard(guard).await;
        }
        if guard.is_none() {
            if let Some(cli) = &self.version {
                cli.check_version(cancel).await?;
            }
            let started = tokio::select! {
                started = self.start() => started,
                () = cancel.cancelled() => return Err(ExecError::Cancelled),
            };
            *guard = Some(started.map_err(|e| ExecError::Setup(Box::new(e)))?);
            self.generation.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }

    /// Stops the agent in `guard` with its whole process group.
    async fn discard(&self, guard: &mut Option<AgentProcess>) {
        if let Some(mut gone) = guard.take() {
            gone.program.stop().await;
        }
    }

    /// Sends the prompt and handles what the agent sends until it answers: its updates become
    /// events, its permission requests are decided (several at once, while the turn goes on).
    /// A cancel or the turn's deadline sends `session/cancel` and waits a grace period for the
    /// answer.
    async fn drive(
        &self,
        agent: &AgentProcess,
        (session, text): (SessionId, &str),
        request: &TurnRequest,
        observer: &dyn TurnObserver,
        cancel: &CancellationToken,
    ) -> Driven {
        let mut inbound = agent.routes.open(session.to_string());
        let prompt = PromptRequest::new(
            session.clone(),
            vec![ContentBlock::Text(TextContent::new(self.prompt_text(text)))],
        );
        let mut answer = std::pin::pin!(agent.cx.send_request(prompt).block_task());
        let mut state = TurnState::default();
        let mut pending: FuturesUnordered<BoxFuture<'_, Decided>> = FuturesUnordered::new();
        let turn_cancel = cancel.child_token();
        let deadline = Instant::now() + self.settings.turn_timeout;
        let mut stopping: Option<(Instant, ExecError)> = None;
        let result = loop {
            let stop_at = stopping.as_ref().map_or(deadline, |(at, _)| *at);
            tokio::select! {
                biased;
                got = &mut answer => break got,
                Some(message) = inbound.recv() => match message {
                    Inbound::Update(update) => {
                        for event in state.apply(*update) {
                            observer.event(event);
                        }
                    }
                    Inbound::Permission(held) => {
                        let (req, responder) = *held;
                        let ask = permission::ask_of(&req);
                        pending.push(Box::pin(self.decide(ask, request.access, responder, turn_cancel.clone())));
                    }
                },
                Some(decided) = pending.next(), if !pending.is_empty() => {
                    self.answer(decided, stopping.is_some(), observer);
                }
                () = cancel.cancelled(), if stopping.is_none() => {
                    stopping = Some((Instant::now() + CANCEL_GRACE, ExecError::Cancelled));
                    turn_cancel.cancel();
                    let _ = agent.cx.send_notification(CancelNotification::new(session.clone()));
                }
                () = sleep_until(deadline), if stopping.is_none() => {
                    stopping = Some((Instant::now() + CANCEL_GRACE, self.timed_out()));
                    turn_cancel.cancel();
                    let _ = agent.cx.send_notification(CancelNotification::new(session.clone()));
                }
                () = sleep_until(stop_at), if stopping.is_some() => {
                    let (_, error) = stopping.take().unwrap_or((deadline, ExecError::Cancelled));
                    return Driven::Unresponsive(error);
                }
            }
        };
        // Whatever was routed before the answer is already queued: fold it in.
        while let Ok(message) = inbound.try_recv() {
            if let Inbound::Update(update) = message {
                for event in state.apply(*update) {
                    observer.event(event);
                }
            }
        }
        turn_cancel.cancel();
        while let Some(decided) = pending.next().await {
            self.answer(decided, true, observer);
        }
        match stopping {
            Some((_, error)) => Driven::Stopped(error),
            None => Driven::Answered(Box::new((result, state))),
        }
    }

    fn timed_out(&self) -> ExecError {
        ExecError::Model(
            format!(
                "the agent ran longer than {} s (turn_timeout_secs) and was stopped",
                self.settings.turn_timeout.as_secs()
            )
            .into(),
        )
    }

    fn stderr(&self, agent: &AgentProcess) -> String {
        let tail = agent.program.stderr_tail();
        let tail = tail.trim();
        if tail.is_empty() {
            return String::new();
        }
        let start = tail
            .char_indices()
            .rev()
            .nth(STDERR_CHARS)
            .map_or(0, |(i, _)| i);
        format!("; its stderr ends: {}", &tail[start..])
    }

    fn outcome(&self, state: &TurnState, response: &PromptResponse) -> TurnOutcome {
        let mut outcome = TurnOutcome {
            final_message: state.final_message(),
            tool_calls: state.tool_calls,
            cost_usd: state.cost_usd,
            ..TurnOutcome::default()
        };
        match (&response.usage, &response.meta) {
            (Some(used), _) => usage::apply(used, &mut outcome),
            (None, Some(meta)) => usage::apply_meta(meta, &mut outcome),
            (None, None) => {}
        }
        if response.stop_reason == StopReason::Cancelled && outcome.final_message.is_empty() {
            outcome.final_message = "(the agent ended its turn as cancelled)".into();
        }
        outcome
    }
}

/// How a prompt ended.
enum Driven {
    /// The agent answered it (or the connection failed first).
    Answered(
        Box<(
            Result<PromptResponse, agent_client_protocol::Error>,
            TurnState,
        )>,
    ),
    /// It was cancelled or ran out of time, and the agent ended the turn when asked.
    Stopped(ExecError),
    /// It was cancelled or ran out of time, and the agent did not end the turn in time.
    Unresponsive(ExecError),
}

/// `s` on one line (each run of whitespace one space), at most `max` characters.
fn one_line(s: &str, max: usize) -> String {
    clip(&s.split_whitespace().collect::<Vec<_>>().join(" "), max)
}

/// `s`, cut to `max` characters with `…` when longer.
fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        None => s.to_owned(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

impl Turns for AcpExecutor {
    fn label(&self) -> String {
        format!("acp · {}", self.settings.program)
    }

    async fn turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let outcome = self.run_turn(turn).await;
        // An adapter of an agent CLI works in the run's copy of its configuration directory:
        // the logins it refreshed flow back.
        if let Some(dir) = &self.settings.config_dir {
            dir.keep_credentials();
        }
        outcome
    }
}

impl AcpExecutor {
    async fn run_turn(&self, turn: Turn<'_>) -> Result<TurnOutcome, ExecError> {
        let mut guard = self.agent.lock().await;
        self.ready(&mut guard, &turn.cancel).await?;
        let Some(agent) = guard.as_mut() else {
            return Err(ExecError::Cancelled);
        };
        let generation = self.generation.load(Ordering::Relaxed);
        let prompted = self.session_for(agent, generation, &turn).await?;
        let session = (prompted.id.clone(), prompted.prompt.as_str());
        let driven = self
            .drive(agent, session, &turn.request, turn.observer, &turn.cancel)
            .await;
        agent.routes.close();
        let result = match driven {
            Driven::Answered(answered) => match *answered {
                (Ok(response), state) => Ok(self.outcome(&state, &response)),
                (Err(e), _) if agent_client_protocol::is_incoming_transport_closed(&e) => {
                    // Its stdout closed: it is exiting, or it closed its output and is no use.
                    let status = agent.program.wait_exit(EXIT_WAIT).await;
                    let detail = format!(
                        "the agent exited during its turn ({}){}",
                        status.as_deref().unwrap_or("its output closed"),
                        self.stderr(agent)
                    );
                    self.discard(&mut guard).await;
                    Err(ExecError::Model(detail.into()))
                }
                (Err(e), _) => Err(ExecError::Model(
                    format!("{e}{}", self.stderr(agent)).into(),
                )),
            },
            Driven::Stopped(error) => Err(error),
            Driven::Unresponsive(error) => {
                // It did not stop when asked: take the whole process group down.
                self.discard(&mut guard).await;
                Err(error)
            }
        };
        self.kept
            .settle(&result, Some((prompted.id, generation)), String::new);
        result
    }
}

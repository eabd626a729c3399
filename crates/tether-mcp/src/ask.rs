//! The `ask_human` tool over MCP: the same behaviour as the built-in agent's (it calls
//! [`tether_human::asking`]), plus what a long MCP call needs — progress notifications
//! while it waits, and `notifications/cancelled` stopping the wait with the question left
//! pending, recorded as abandoned (nobody waits for it now; a run it belongs to gets its answer
//! in the next prompt), and no response sent. When the client can show a form (the
//! `elicitation` capability), the question is also asked there ([`crate::elicit`]).

use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolResponse, CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken, Tool,
    ToolAnnotations, object,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tether_human::asking::{self, AskFailed, Reply};
use tether_human::registry::Reach;
use tether_human::{Console, Desk, prompts};
use tether_store::{NewQuestion, QuestionId};
use tokio_util::sync::CancellationToken;

use crate::elicit::{self, Elicitation, Prompt};
use crate::server::{Options, TetherMcp, ToolFuture};

/// The tool's definition: the built-in agent's description and schema.
pub(crate) fn definition(options: &Options) -> Tool {
    Tool::new(
        asking::NAME,
        prompts::ask_human_description(options.threshold()),
        object(asking::parameters()),
    )
    // Read-only as far as the client's files go: it asks a person and returns the answer
    // (clients such as Codex run read-only tools without asking for approval). Open world:
    // it reaches people, on Zulip too.
    .annotate(
        ToolAnnotations::new()
            .read_only(true)
            .destructive(false)
            .idempotent(false)
            .open_world(true),
    )
}

/// The tool's handler: a new question, or the next round of one asked in the client's prompt
/// (the retry carrying `requestState`).
pub(crate) fn call(ctx: ToolCallContext<'_, TetherMcp>) -> ToolFuture<'_> {
    Box::pin(async move {
        if let Some(state) = ctx.request_state {
            return Ok(ctx
                .service
                .next_round(&state, ctx.input_responses, ctx.request_context)
                .await);
        }
        let args = Value::Object(ctx.arguments.unwrap_or_default());
        Ok(ctx
            .service
            .ask_human(asking::question_from_args(&args), ctx.request_context)
            .await)
    })
}

pub(crate) fn refused(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

pub(crate) fn reply(reply: Reply) -> CallToolResult {
    match reply {
        Reply::Answered { text, .. } => CallToolResult::success(vec![ContentBlock::text(text)]),
        Reply::Refused(text) => refused(text),
    }
}

impl TetherMcp {
    /// The human desk, built on the first question.
    pub(crate) async fn the_desk(&self) -> Result<&Desk, CallToolResult> {
        self.inner
            .desk
            .get_or_try_init(|| async { self.desk() })
            .await
            .map_err(|e| refused(format!("ask_human cannot reach a human: {e}")))
    }

    async fn ask_human(
        &self,
        mut question: NewQuestion,
        rc: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let _busy = self.inner.in_flight.enter();
        let options = &self.inner.options;
        let desk = match self.the_desk().await {
            Ok(d) => d,
            Err(e) => return e.into(),
        };
        match options.run() {
            Ok(run) => question.run_id = run.cloned(),
            Err(e) => return refused(format!("ask_human cannot reach a human: {e}")).into(),
        }
        // The client's own prompt races the desk's channels when it can show one.
        let in_run = question.run_id.is_some();
        let desk = match elicit::prompt(&rc, in_run) {
            Prompt::Absent => desk.clone(),
            Prompt::Request => desk
                .clone()
                .with_channel(Arc::new(Elicitation::new(&rc, &options.human()))),
            Prompt::InputRequired => return self.first_round(desk, question).await,
        };
        let cancel = self.inner.shutdown.child_token();
        let asked = std::sync::OnceLock::new();
        let waiting = desk.ask_human_with(question, cancel.clone(), |q| {
            let id = &q.id;
            tracing::info!(question = %id, "waiting for a human; answer with `tether answer {id} \"…\"`");
            let _ = asked.set(id.clone());
        });
        self.reply_when_answered(waiting, &rc, &cancel, &asked)
            .await
            .into()
    }

    /// Waits for `waiting` with progress notifications, turning the client's cancellation into
    /// a question left pending (and recorded as abandoned); the tool's result.
    pub(crate) async fn reply_when_answered<F>(
        &self,
        waiting: F,
        rc: &RequestContext<RoleServer>,
        cancel: &CancellationToken,
        asked: &std::sync::OnceLock<QuestionId>,
    ) -> CallToolResult
    where
        F: Future<Output = Result<Reply, AskFailed>>,
    {
        let progress = Progress {
            token: rc.meta.get_progress_token(),
            peer: rc.peer.clone(),
            every: self.inner.options.progress_every,
        };
        let outcome = progress.while_waiting(waiting, &rc.ct, cancel, asked).await;
        match outcome {
            Ok(r) => reply(r),
            Err(AskFailed::Cancelled(id)) => {
                let reason = if rc.ct.is_cancelled() {
                    tracing::info!(question = %id, "the client cancelled; the question stays pending");
                    "the asking client gave up (it cancelled the call, e.g. on its tool timeout)"
                } else {
                    "tether mcp stopped while the client waited"
                };
                self.abandon(&id, reason);
                refused(format!(
                    "tether stopped waiting for an answer to {id}; the question stays pending"
                ))
            }
            Err(AskFailed::Store(e)) => refused(format!("ask_human failed: {e}")),
        }
    }

    /// Records that nobody waits for `id` any more, so `tether questions` says so and a run it
    /// belongs to gets the answer in its next prompt instead.
    fn abandon(&self, id: &QuestionId, reason: &str) {
        let recorded = self.journal().and_then(|j| {
            j.store()
                .abandon_question(id, reason)
                .map_err(|e| e.to_string())
        });
        if let Err(e) = recorded {
            tracing::warn!(question = %id, error = %e, "could not record that nobody waits");
        }
    }

    /// The human desk: the shared store, the run checked, and the channels set up — no
    /// terminal, since stdin and stdout are the protocol. Misconfigured channels become the
    /// policy's problems.
    fn desk(&self) -> Result<Desk, String> {
        let options = &self.inner.options;
        let config = options.config.as_ref().map_err(Clone::clone)?;
        let journal = self.journal()?;
        if let Some(run) = options.run()? {
            journal
                .store()
                .run(run)
                .map_err(|e| format!("the run {run} is not in this workspace's store: {e}"))?;
        }
        // The client is an agent that reaches the network: one tether does not sandbox, or an
        // agent CLI or ACP agent of a run, whose sandbox keeps the network open for its model.
        Ok(Desk::from_config(
            config,
            &options.workspace,
            journal,
            (Console::Absent, Reach::ANYTHING),
        ))
    }
}

/// Progress notifications for one waiting call.
struct Progress {
    token: Option<ProgressToken>,
    peer: Peer<RoleServer>,
    every: Duration,
}

impl Progress {
    /// Drives `waiting` to its end, notifying progress every `self.every` while it runs, and
    /// turning the request's cancellation (`request`) into `cancel`, so the broker stops its
    /// channels and leaves the question pending.
    async fn while_waiting<F>(
        &self,
        waiting: F,
        request: &CancellationToken,
        cancel: &CancellationToken,
        asked: &std::sync::OnceLock<QuestionId>,
    ) -> Result<Reply, AskFailed>
    where
        F: Future<Output = Result<Reply, AskFailed>>,
    {
        tokio::pin!(waiting);
        let start = tokio::time::Instant::now();
        let mut ticks = tokio::time::interval_at(start + self.every, self.every);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                outcome = &mut waiting => return outcome,
                () = request.cancelled(), if !cancel.is_cancelled() => cancel.cancel(),
                _ = ticks.tick(), if self.token.is_some() && !cancel.is_cancelled() => {
                    self.notify(start.elapsed(), asked.get()).await;
                }
            }
        }
    }

    async fn notify(&self, waited: Duration, question: Option<&QuestionId>) {
        let Some(token) = &self.token else { return };
        let secs = waited.as_secs();
        let message = match question {
            Some(id) => {
                format!("waiting {secs} s for a human to answer {id} (tether answer {id} \"…\")")
            }
            None => format!("waiting {secs} s for a human"),
        };
        let param = ProgressNotificationParam::new(token.clone(), waited.as_secs_f64())
            .with_message(message);
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!(error = %e, "could not send a progress notification");
        }
    }
}

//! `complete_goal` and `cancel_goal` over MCP: an external agent (Claude Code, Codex, pi) signs
//! a goal off through the same check as the built-in agent — the contract must be the approved
//! one, verify runs, then the judge of `[judge]` reads the repository — and the result, accept or
//! reject with what is missing, is the tool's text. Cancelling the request stops verify and the
//! judge (killing verify's process group); nothing is recorded then.

use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations, object};
use serde_json::Value;
use tether_config::ProcessEnv;
use tether_signoff::prompts::{CANCEL_GOAL_DESCRIPTION, COMPLETE_GOAL_DESCRIPTION};
use tether_signoff::tool::{
    CancelArgs, CompleteArgs, cancel_goal_parameters, complete_goal_parameters,
};
use tether_signoff::{Signoff, SignoffError, SignoffOutcome};

use crate::server::{TetherMcp, ToolFuture};

/// `complete_goal`'s definition.
pub(crate) fn complete_definition() -> Tool {
    Tool::new(
        "complete_goal",
        COMPLETE_GOAL_DESCRIPTION,
        object(complete_goal_parameters()),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(false)
            .open_world(true),
    )
}

/// `cancel_goal`'s definition.
pub(crate) fn cancel_definition() -> Tool {
    Tool::new(
        "cancel_goal",
        CANCEL_GOAL_DESCRIPTION,
        object(cancel_goal_parameters()),
    )
    .annotate(
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .open_world(false),
    )
}

fn error(text: impl Into<String>) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(text.into())])
}

/// The sign-off machinery for this workspace — with the judge of `[judge]` when `judged` — or
/// why it cannot be built (a tool error).
fn signoff(server: &TetherMcp, judged: bool) -> Result<Signoff, String> {
    let options = &server.inner.options;
    let run = options.run()?.cloned();
    let config = options.config.as_ref().map_err(Clone::clone)?;
    let ws = &options.workspace;
    let journal = server.journal()?;
    let signoff = if judged {
        // The verify command is code the agent wrote: it runs in the run's sandbox.
        let sandboxes = options.verify_sandbox.get()?;
        Signoff::from_config(ws.clone(), journal, config, &ProcessEnv, false)
            .map_err(|e| e.to_string())?
            .sandboxed(sandboxes.shell)
            .with_network_sandbox(sandboxes.network)
    } else {
        Signoff::new(ws.clone(), journal, &config.plan)
    };
    Ok(signoff.with_run(run).without_env(config.key_vars()))
}

/// `complete_goal`'s handler.
pub(crate) fn complete(ctx: ToolCallContext<'_, TetherMcp>) -> ToolFuture<'_> {
    Box::pin(async move { Ok(complete_goal(ctx).await.into()) })
}

async fn complete_goal(ctx: ToolCallContext<'_, TetherMcp>) -> CallToolResult {
    let _busy = ctx.service.inner.in_flight.enter();
    let args = match CompleteArgs::from_json(&Value::Object(ctx.arguments.unwrap_or_default())) {
        Ok(a) => a,
        Err(e) => return error(e),
    };
    let signoff = match signoff(ctx.service, true) {
        Ok(s) => s,
        Err(e) => return error(format!("complete_goal cannot run: {e}")),
    };
    // The request's own token (notifications/cancelled) and the server's shutdown both stop
    // the check.
    let cancel = ctx.service.inner.shutdown.child_token();
    let request = ctx.request_context.ct.clone();
    let stop = cancel.clone();
    let watcher = tokio::spawn(async move {
        request.cancelled().await;
        stop.cancel();
    });
    let outcome = signoff
        .complete(&args.id, &args.evidence, &args.paths, &cancel)
        .await;
    watcher.abort();
    match outcome {
        // As for the built-in agent: a refusal is an error result; an accept or a reject is the
        // answer the agent reads and acts on.
        Ok(o @ SignoffOutcome::Refused { .. }) => error(o.tool_text()),
        Ok(o) => CallToolResult::success(vec![ContentBlock::text(o.tool_text())]),
        Err(SignoffError::Cancelled) => error("the sign-off was cancelled; nothing recorded"),
        Err(e) => error(format!("complete_goal failed: {e}")),
    }
}

/// `cancel_goal`'s handler.
pub(crate) fn cancel(ctx: ToolCallContext<'_, TetherMcp>) -> ToolFuture<'_> {
    Box::pin(async move { Ok(cancel_goal(&ctx).into()) })
}

fn cancel_goal(ctx: &ToolCallContext<'_, TetherMcp>) -> CallToolResult {
    let args = Value::Object(ctx.arguments.clone().unwrap_or_default());
    let signoff = match signoff(ctx.service, false) {
        Ok(s) => s,
        Err(e) => return error(format!("cancel_goal cannot run: {e}")),
    };
    let args = CancelArgs::from_json(&args);
    match signoff.cancel_goal(&args.id, &args.reason) {
        Ok(o) => CallToolResult::success(vec![ContentBlock::text(o.tool_text())]),
        Err(e) => error(format!("cancel_goal failed: {e}")),
    }
}

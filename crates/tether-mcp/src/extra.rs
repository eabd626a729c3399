//! Tools from `tether-tools` served over MCP beside tether's own, as they are: plan mode gives an
//! external agent (Claude Code, Codex, pi) the same `write_plan` and `edit_plan` the built-in
//! drafting agent has, so a draft is checked the same way whoever writes it.

use std::fmt;
use std::sync::Arc;

use rmcp::handler::server::tool::{ToolCallContext, ToolRoute};
use rmcp::model::{CallToolResult, ContentBlock, Tool, ToolAnnotations, object};
use serde_json::Value;
use tether_tools::ToolContext;

use crate::server::{TetherMcp, ToolFuture};

/// Tools served beside tether's own (none by default).
#[derive(Clone, Default)]
pub struct ExtraTools(pub Vec<Arc<dyn tether_tools::Tool>>);

impl fmt::Debug for ExtraTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.0.iter().map(|t| t.spec().name.as_str()).collect();
        f.debug_tuple("ExtraTools").field(&names).finish()
    }
}

/// The MCP route of `tool`.
pub(crate) fn route(tool: Arc<dyn tether_tools::Tool>) -> ToolRoute<TetherMcp> {
    let spec = tool.spec();
    let definition = Tool::new(
        spec.name.clone(),
        spec.description.clone(),
        object(spec.parameters.clone()),
    )
    .annotate(ToolAnnotations::new().destructive(false).open_world(false));
    ToolRoute::new_dyn(definition, move |ctx| call(Arc::clone(&tool), ctx))
}

fn call(tool: Arc<dyn tether_tools::Tool>, ctx: ToolCallContext<'_, TetherMcp>) -> ToolFuture<'_> {
    Box::pin(async move {
        let _busy = ctx.service.inner.in_flight.enter();
        let args = Value::Object(ctx.arguments.clone().unwrap_or_default());
        let cancel = ctx.service.inner.shutdown.child_token();
        let tool_ctx = ToolContext::new(cancel);
        let result = match tool.call(args, &tool_ctx).await {
            Ok(out) if out.is_error => CallToolResult::error(vec![ContentBlock::text(out.content)]),
            Ok(out) => CallToolResult::success(vec![ContentBlock::text(out.content)]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
                "{} failed: {e}",
                tool.spec().name
            ))]),
        };
        Ok(result.into())
    })
}

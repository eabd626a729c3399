//! The workspace tools (`tether-tools`) as the built-in agent's [`ToolBox`].

use serde_json::Value;
use tether_model::ToolSpec;
use tether_tools::{ToolContext, ToolSet};
use tokio_util::sync::CancellationToken;

use crate::executor::BoxFuture;
use crate::toolbox::{ToolBox, ToolResult};

/// A [`ToolSet`] serving the agent.
pub struct WorkspaceTools {
    set: ToolSet,
}

impl WorkspaceTools {
    /// Serves `set`.
    pub fn new(set: ToolSet) -> Self {
        WorkspaceTools { set }
    }
}

impl ToolBox for WorkspaceTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.set
            .specs()
            .into_iter()
            .map(|s| ToolSpec::new(s.name, s.description, s.parameters))
            .collect()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Value,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let ctx = ToolContext::new(cancel);
            match self.set.call(name, arguments, &ctx).await {
                // The output's note (timings, counts) is already in the summary; it stays out of
                // the model's view so prompts remain stable.
                Ok(done) => ToolResult {
                    content: done.output.content,
                    is_error: done.output.is_error,
                    summary: done.summary,
                },
                Err(fatal) => ToolResult {
                    content: format!("the tool `{name}` failed: {fatal}"),
                    is_error: true,
                    summary: format!("{name}: failed"),
                },
            }
        })
    }
}

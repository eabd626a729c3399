//! Builds the executor a loop uses from `[executor]` (and `[model]`) in tether.toml.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Result, anyhow};
use tether_agent::{CommandExecutor, Executor};
use tether_config::{Config, ExecutorKind};
use tether_core::Workspace;

use crate::failure::Failure;

/// How long one turn of an external command may take.
const COMMAND_TURN_TIMEOUT: Duration = Duration::from_secs(3600);

/// The executor configured for this workspace.
pub fn from_config(config: &Config, ws: &Workspace) -> Result<Arc<dyn Executor>> {
    match config.executor.kind {
        ExecutorKind::Command => Ok(Arc::new(CommandExecutor::new(
            config.executor.command.clone(),
            ws.root().to_owned(),
            COMMAND_TURN_TIMEOUT,
        ))),
        other => Err(Failure::usage(anyhow!(
            "executor kind `{}` is not available in this build yet; set `[executor] kind = \
             \"command\"` with a `command = [...]`",
            other.as_str()
        ))),
    }
}

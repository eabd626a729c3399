//! The limits of the built-in tools, in one place so the agent can set them from `tether.toml`.
//!
//! Every limit exists to keep a model's context small and a turn bounded; the defaults suit a
//! model with a context window of 100k tokens or more.

use std::sync::Arc;
use std::time::Duration;

use crate::gate::CommandGate;

/// Limits and settings of the built-in tools.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// `bash`: the timeout when the model gives none.
    pub bash_default_timeout: Duration,
    /// `bash`: the longest timeout a model may ask for; longer requests are lowered to it.
    pub bash_max_timeout: Duration,
    /// `bash`: after a timeout or cancellation the process group gets SIGTERM, then SIGKILL once
    /// the shell has exited or this much time has passed.
    pub bash_kill_grace: Duration,
    /// `bash`: how many bytes of combined output are kept (the tail).
    pub bash_output_cap: usize,
    /// `bash`: environment variables removed from the command's environment (API keys the
    /// agent's model client uses, which must never end up in a transcript).
    pub bash_env_remove: Vec<String>,
    /// The sandbox `bash` commands run in (`None`: unsandboxed).
    pub bash_sandbox: Option<std::sync::Arc<tether_sandbox::Sandbox>>,
    /// The same sandbox with the network open, and when a command gets it (while a goal that
    /// opens the network is active).
    pub bash_network: Option<NetworkSwitch>,
    /// `bash`: asked before each command runs (tether's `ask_before` rule); a refusal is the
    /// tool's result. `None` runs every command.
    pub bash_gate: Option<Arc<dyn CommandGate>>,
    /// `read`: how many lines are shown when the model gives no `limit`.
    pub read_default_lines: usize,
    /// `read`: how many bytes of text one call returns at most.
    pub read_max_bytes: usize,
    /// `grep`: how many matching lines are shown when the model gives no `max_results`.
    pub grep_default_results: usize,
    /// `grep`: the largest `max_results` a model may ask for.
    pub grep_max_results: usize,
    /// `grep`: files larger than this are skipped.
    pub grep_max_file_bytes: u64,
    /// `ls`: how many entries one listing shows at most.
    pub ls_max_entries: usize,
    /// `ls`: the deepest `depth` a model may ask for.
    pub ls_max_depth: usize,
}

impl Default for ToolOptions {
    fn default() -> Self {
        Self {
            bash_default_timeout: Duration::from_secs(120),
            bash_max_timeout: Duration::from_secs(600),
            bash_kill_grace: Duration::from_secs(2),
            bash_output_cap: 30_000,
            bash_env_remove: Vec::new(),
            bash_sandbox: None,
            bash_network: None,
            bash_gate: None,
            read_default_lines: 2000,
            read_max_bytes: 50_000,
            grep_default_results: 100,
            grep_max_results: 1000,
            grep_max_file_bytes: 10 * 1024 * 1024,
            ls_max_entries: 500,
            ls_max_depth: 5,
        }
    }
}

/// A sandbox with the network open, used for a command while `wanted` says so.
#[derive(Clone)]
pub struct NetworkSwitch {
    /// The sandbox with the network open.
    pub open: std::sync::Arc<tether_sandbox::Sandbox>,
    /// Asked before each command.
    pub wanted: std::sync::Arc<dyn Fn() -> bool + Send + Sync>,
}

impl std::fmt::Debug for NetworkSwitch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetworkSwitch").finish_non_exhaustive()
    }
}

//! What the runtime's tests share: the bridge handler their agents never call, and how long
//! they wait.

use std::time::Duration;

use tether_runtime::bridge::{Call, Handler, HandlerError, Reply};

mod launch;
mod scheduler;

/// Refuses every command an agent hands over (the agents of these tests hand none over).
pub(crate) struct Refuse;

impl Handler for Refuse {
    fn is_session(&self, _: &[String]) -> bool {
        false
    }

    fn session(&self, _: &Call<'_>) -> Result<tether_mcp::TetherMcp, HandlerError> {
        Err("no sessions here".into())
    }

    fn command(&self, _: &Call<'_>) -> Reply {
        Reply::refused("not here\n")
    }
}

/// How long a test waits for what it expects.
pub(crate) const DEADLINE: Duration = Duration::from_secs(60);

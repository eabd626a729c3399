//! Where `complete_goal` runs the goal's verify command: code the agent wrote, so in the
//! sandbox of the run the server serves (the one the agent's own commands run in), never in the
//! serving process's own rights.

use std::sync::Arc;

use tether_sandbox::Sandbox;

/// The sandboxes a verify runs in: `shell` for a goal that keeps the network off, `network`
/// for one whose contract opens it (`network: on`). Both `None`: no sandbox (`[sandbox] mode =
/// "off"`).
#[derive(Clone, Default)]
pub struct Sandboxes {
    /// For a goal that keeps the network off.
    pub shell: Option<Arc<Sandbox>>,
    /// For a goal with `network: on`.
    pub network: Option<Arc<Sandbox>>,
}

/// Finds the [`Sandboxes`] when a `complete_goal` call needs them, or says why there are none
/// (a tool error: verify never runs outside the sandbox the configuration asks for).
#[derive(Clone)]
pub struct VerifySandbox(Arc<dyn Fn() -> Result<Sandboxes, String> + Send + Sync>);

impl VerifySandbox {
    /// The sandboxes `find` gives (called at each `complete_goal`; cache in it what is costly).
    pub fn new(find: impl Fn() -> Result<Sandboxes, String> + Send + Sync + 'static) -> Self {
        VerifySandbox(Arc::new(find))
    }

    /// Always `sandboxes`.
    pub fn fixed(sandboxes: Sandboxes) -> Self {
        VerifySandbox::new(move || Ok(sandboxes.clone()))
    }

    pub(crate) fn get(&self) -> Result<Sandboxes, String> {
        (self.0)()
    }
}

impl std::fmt::Debug for VerifySandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("VerifySandbox")
    }
}

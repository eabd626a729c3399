//! After each merge, the verify command of every goal merged so far runs again on the
//! integration branch, in a sandbox of the run's (as a sign-off's verify runs): a goal's work can
//! pass alone and break another's once merged. The first merge after which one fails stops
//! the run, naming the merge and the goals whose verify fails.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tether_tools::{ShellCommand, ShellEnd, run_shell};
use tokio_util::sync::CancellationToken;

use crate::compose::launch::Launch;
use crate::compose::lifetime::RunLifetime;
use crate::compose::worktree::Placement;
use crate::error::Result;

/// How much of a failing verify's output is kept (its tail).
const TAIL_BYTES: usize = 2048;

/// Between SIGTERM and SIGKILL of a verify that ran out of time.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// A merge after which the verify of goals merged before fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regression {
    /// The goal whose merge came last.
    pub merged: String,
    /// Each goal whose verify fails now, with the end of its output.
    pub failing: Vec<(String, String)>,
}

/// Running the merged goals' verify commands on the integration branch.
pub(super) struct Recheck {
    /// Each goal's verify command, as the plan said when the run began.
    verifies: HashMap<String, String>,
    /// Where they run: the integration worktree's workspace.
    root: PathBuf,
    sandbox: Option<Arc<tether_sandbox::Sandbox>>,
    env_remove: Vec<String>,
    timeout: Duration,
    /// Ends what the commands started when the run ends.
    _lifetime: Arc<RunLifetime>,
}

impl Recheck {
    /// The checks of the run `launch` describes, on the worktree `integration`, of the goals
    /// of `plan`.
    pub(super) fn new(
        launch: &Launch,
        integration: &Placement,
        plan: &tether_plan::Plan,
    ) -> Result<Recheck> {
        let lifetime = RunLifetime::begin();
        let host = launch.host.for_run(&lifetime);
        let made = integration.made();
        let sandboxes =
            crate::compose::sandbox::for_run(&launch.config, &integration.ws, &made, &host)?;
        let verifies = plan
            .goals
            .iter()
            .filter_map(|g| Some((g.id()?.to_owned(), g.verify.as_ref()?.value.clone())))
            .collect();
        Ok(Recheck {
            verifies,
            root: integration.ws.root().to_path_buf(),
            sandbox: sandboxes.shell,
            env_remove: launch.config.key_vars(),
            timeout: Duration::from_secs(launch.config.r#loop.verify_timeout_secs),
            _lifetime: lifetime,
        })
    }

    /// After `goal`'s merge: the verify of every goal `merged` so far, again; the regression,
    /// when one fails.
    pub(super) async fn after(&self, goal: &str, merged: &[String]) -> Option<Regression> {
        let mut failing = Vec::new();
        for id in merged {
            let Some(command) = self.verifies.get(id) else {
                continue;
            };
            if let Some(ending) = self.fails(command).await {
                failing.push((id.clone(), ending));
            }
        }
        (!failing.is_empty()).then(|| Regression {
            merged: goal.to_owned(),
            failing,
        })
    }

    /// How `command` failed, or `None` when it passed.
    async fn fails(&self, command: &str) -> Option<String> {
        let spec = ShellCommand {
            command: command.to_owned(),
            cwd: self.root.clone(),
            timeout: self.timeout,
            kill_grace: KILL_GRACE,
            output_cap: TAIL_BYTES,
            env_remove: self.env_remove.clone(),
            sandbox: self.sandbox.clone(),
        };
        match run_shell(&spec, &CancellationToken::new()).await {
            Ok(run) if run.end == ShellEnd::Exited(0) => None,
            Ok(run) => Some(format!("{:?}: {}", run.end, run.output.trim())),
            Err(e) => Some(format!("could not run it: {e}")),
        }
    }
}

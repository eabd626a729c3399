//! A goal signed off with `tether goal complete` — by a person, or by a run's agent through the
//! bridge — through the same path the built-in agent's `complete_goal` takes: verify in the
//! sandbox — the run's, for a command its agent handed over, else one of its own — then the
//! judge `[judge]` names (unless `--no-judge`), recorded in the workspace's store (under the
//! run, for its agent's); and, once accepted, a `signed_off` notice.

use std::time::Duration;

use tether_config::{Config, Env, Workspace};
use tether_human::registry::Reach;
use tether_human::{Console, Desk, Notice};
use tether_signoff::{Signoff, SignoffError, SignoffOutcome};
use tether_store::{Journal, RunId, Store};
use tokio_util::sync::CancellationToken;

use crate::Host;
use crate::compose::sandbox::RunSandbox;
use crate::error::Result;

/// A sign-off by a person, composed.
pub struct ByPerson {
    signoff: Signoff,
    ws: Workspace,
    config: Config,
    journal: Journal,
}

impl ByPerson {
    /// The sign-off of `config`'s plan in `ws`, recording in `store`, filed under `run` when it
    /// belongs to one (a run's agent claimed it through the bridge); verify runs in `sandbox`
    /// (a run's), else in one `host` builds.
    pub fn new(
        (ws, config, env): (&Workspace, &Config, &dyn Env),
        store: Store,
        no_judge: bool,
        (sandbox, run): (Option<RunSandbox>, Option<RunId>),
        host: &Host,
    ) -> Result<Self> {
        let journal = Journal::new(store, Vec::new())?;
        let signoff =
            Signoff::from_config(ws.clone(), journal.clone(), config, env, no_judge)?.with_run(run);
        // The verify command is code the agent wrote.
        let sandbox = match sandbox {
            Some(sandbox) => sandbox,
            None => crate::compose::sandbox::for_run(
                config,
                ws,
                &crate::compose::sandbox::Made::default(),
                host,
            )?,
        };
        let signoff = signoff
            .sandboxed(sandbox.shell)
            .with_network_sandbox(sandbox.shell_network);
        Ok(ByPerson {
            signoff,
            ws: ws.clone(),
            config: config.clone(),
            journal,
        })
    }

    /// Who judges, for people: `judge <model>`, `judges <a> and <b> (all must accept)`, or
    /// `no judge`.
    pub fn judge(&self) -> String {
        match self.signoff.panel() {
            None => "no judge".to_owned(),
            Some(panel) if panel.is_panel() => format!("judges {}", panel.describe()),
            Some(panel) => format!("judge {}", panel.describe()),
        }
    }

    /// Verify, then the judge, on goal `id` with the person's `evidence` and `paths`.
    pub async fn complete(
        &self,
        id: &str,
        evidence: &str,
        paths: &[String],
        cancel: &CancellationToken,
    ) -> Result<SignoffOutcome, SignoffError> {
        self.signoff.complete(id, evidence, paths, cancel).await
    }

    /// Tells the channels `who` signed goal `id` off, and waits (at most `grace`) for it to be
    /// delivered before the process exits (at once when nothing was queued).
    pub async fn announce(&self, id: &str, who: &str, grace: Duration) {
        // Notices only: no question is offered here.
        let desk = Desk::from_config(
            &self.config,
            &self.ws,
            self.journal.clone(),
            (Console::Absent, Reach::ANYTHING),
        );
        desk.notify(&Notice::signed_off_by_person(id, who)).await;
        desk.flush_within(grace).await;
    }
}

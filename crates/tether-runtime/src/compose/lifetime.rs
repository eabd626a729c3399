//! Nothing a run started outlives it.
//!
//! A run's sandboxes share one PID namespace ([`tether_sandbox::RunNamespace`]): every process
//! the agent starts runs in it, and all of them are killed when it ends. A [`RunLifetime`] is
//! made as a run is composed ([`crate::compose::launch`]), the namespaces its sandboxes are built with
//! are registered with it (`sandbox::for_run`, through the run's [`Host`]), and it ends them as
//! the run's loop ends ([`RunLifetime::end`]), or when the run is dropped unfinished.
//! (Sandboxes outlive the run — the bridge keeps the run's for as long as the process lives — so
//! their being dropped cannot be what ends it.)
//!
//! A run with the sandbox off has no namespace: its driver is a child subreaper instead
//! (`tether_core::subreaper`), so what the agent left running became the driver's child, and
//! the run's lifetime, dropped once its notices are out and its report written, kills every
//! descendant of the process ([`tether_sandbox::kill_descendants`]). That cannot tell one run's
//! processes from another's (nor from a notice command of another run), so it happens only as
//! the last run the process composes or drives ends: with the sandbox off, `tether serve` ends
//! the agents' leftovers of overlapping runs once none of them is going.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tether_sandbox::RunNamespace;

use crate::Host;
use crate::error::Result;

/// How many runs this process is composing or driving.
static RUNS: Mutex<usize> = Mutex::new(0);

fn runs() -> MutexGuard<'static, usize> {
    match RUNS.lock() {
        Ok(runs) => runs,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// What ends with one run: its PID namespaces, or with the sandbox off, what it left running.
#[derive(Debug)]
pub struct RunLifetime {
    namespaces: Mutex<Vec<Arc<RunNamespace>>>,
    /// A child of the run ran outside any namespace (the sandbox off).
    unconfined: AtomicBool,
}

impl RunLifetime {
    /// The lifetime of a run being composed: counted among the process's runs until it ends.
    pub(crate) fn begin() -> Arc<Self> {
        *runs() += 1;
        Arc::new(RunLifetime {
            namespaces: Mutex::new(Vec::new()),
            unconfined: AtomicBool::new(false),
        })
    }

    /// Ends the run's PID namespaces: every process in them is killed, and nothing starts in
    /// them any more. Call it as the loop ends; doing it again does nothing.
    pub fn end(&self) {
        let namespaces = std::mem::take(&mut *match self.namespaces.lock() {
            Ok(n) => n,
            Err(poisoned) => poisoned.into_inner(),
        });
        for namespace in &namespaces {
            namespace.end();
        }
    }

    /// The run is over in this process (its lifetime dropped, after its notices and report):
    /// when its children ran unconfined and no other run of the process is going, every
    /// descendant of the process is killed.
    fn leave(&self) {
        let mut runs = runs();
        *runs = runs.saturating_sub(1);
        // Held while sweeping: no run starts its processes meanwhile.
        if *runs == 0 && self.unconfined.load(Ordering::SeqCst) {
            let swept = tether_sandbox::kill_descendants();
            if swept.killed > 0 || swept.left > 0 {
                tracing::info!(
                    killed = swept.killed,
                    left = swept.left,
                    "ended what the agent left running"
                );
            }
        }
    }

    fn keep(&self, namespace: &Arc<RunNamespace>) {
        match self.namespaces.lock() {
            Ok(mut n) => n.push(namespace.clone()),
            Err(poisoned) => poisoned.into_inner().push(namespace.clone()),
        }
    }
}

impl Drop for RunLifetime {
    fn drop(&mut self) {
        self.end();
        self.leave();
    }
}

impl Host {
    /// This host for one run: the namespaces its sandboxes are built with end with `run`.
    pub(crate) fn for_run(&self, run: &Arc<RunLifetime>) -> Host {
        Host {
            run: Some(run.clone()),
            ..self.clone()
        }
    }

    /// A PID namespace for the run's sandboxes, ending with the run this host composes (with
    /// the namespace's last sandbox when it composes none).
    pub(crate) fn run_namespace(&self) -> Result<Arc<RunNamespace>> {
        let namespace = Arc::new(RunNamespace::start()?);
        if let Some(run) = &self.run {
            run.keep(&namespace);
        }
        Ok(namespace)
    }

    /// The run this host composes runs its children unconfined (the sandbox off): what they
    /// leave is swept at its end.
    pub(crate) fn run_unconfined(&self) {
        if let Some(run) = &self.run {
            run.unconfined.store(true, Ordering::SeqCst);
        }
    }
}

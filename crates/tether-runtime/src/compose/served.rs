//! Runs started and resumed by a long-lived server: the dashboard's `POST /api/runs` and
//! `POST /api/runs/{id}/resume` in `tether serve`. [`Runs`] is the dashboard's
//! [`Launcher`] (the trait is the store crate's, so the runtime does not link the dashboard):
//! each request is composed exactly as the command line composes `tether ralph`,
//! `tether run` and `tether resume` ([`Launch`]), and driven as a task of the serving
//! process's Tokio runtime, so the run goes on when the page that started it is closed. The
//! request is answered once the run is under way (the loop holds it under its lock) or
//! refused, with the loop's own words.
//!
//! What stays a person's act at a terminal stays so here: a goal run whose contracts are not
//! approved is refused (approving them is `tether plan approve`). A resumed run keeps the
//! configuration it recorded: when tether.toml differs, the resume is refused with the
//! differences ([`LaunchError::ConfigChanged`]), and only a request that accepts them after
//! they were shown (`accept_config`, the person serving the dashboard answering) applies the
//! file's, as `tether resume --accept-config` does. There is no `--no-judge` and no unlimited
//! budget from the dashboard.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};

use tether_config::{Config, Env, Workspace};
use tether_core::looping::LoopError;
use tether_core::planning::PlanRef;
use tether_core::planning::approve::{self, Selection};
use tether_human::Console;
use tether_store::RunId;
use tether_store::control::{self, ControlError};
use tether_store::launch::{BoxFuture, LaunchError, Launcher, NewRun, Resume, Started};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use crate::compose::bounds::Resumed;
use crate::compose::launch::{Begun, End, Launch, Log, Place, RunSpec};
use crate::error::chain;
use crate::{Error, Host};

/// Tells a caller how a run ended: its end, or why its driving failed.
type Tell = oneshot::Sender<std::result::Result<End, String>>;

/// A run started for a caller that waits for its end ([`Runs::start_watched`]).
pub struct Watched {
    /// The run.
    pub id: RunId,
    /// How it ended, once it has: its end, or why its driving failed (closed when the process
    /// stops driving it).
    pub ended: oneshot::Receiver<std::result::Result<End, String>>,
    /// Stops the run after its current step (it can be resumed), as [`Runs::stop`] does.
    pub interrupt: CancellationToken,
}

/// Who a run taken up from the dashboard is recorded as resumed by.
const BY: &str = "dashboard";

/// The runs a server drives: it starts and resumes them, and stops them when it stops.
pub struct Runs {
    ws: Workspace,
    env: Arc<dyn Env + Send + Sync>,
    host: Host,
    runtime: tokio::runtime::Handle,
    driven: Mutex<Vec<Driven>>,
}

/// A run this server drives.
struct Driven {
    interrupt: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl Runs {
    /// Runs of workspace `ws` (its configuration and store, `env` holding the keys), driven on
    /// the current Tokio runtime; `host` runs the tether commands their agents hand over.
    /// Call it inside the runtime.
    pub fn new(ws: Workspace, env: Arc<dyn Env + Send + Sync>, host: Host) -> Self {
        // Its runs wait for children of their own side by side.
        tether_core::subreaper::share_process();
        Runs {
            ws,
            env,
            host,
            runtime: tokio::runtime::Handle::current(),
            driven: Mutex::new(Vec::new()),
        }
    }

    /// Starts `run`: what it started, once it is under way. A goal run asked for `parallel`
    /// goals at once (or with `[run] parallel` above 1) is a run of many goals.
    pub async fn start(&self, run: NewRun) -> Result<Started, LaunchError> {
        let loaded = self.loaded()?;
        let many = match &run {
            NewRun::Goal {
                parallel: Some(n), ..
            } => Some(*n),
            NewRun::Goal { parallel: None, .. } if loaded.config.run.parallel > 1 => {
                Some(loaded.config.run.parallel)
            }
            NewRun::Goal { .. } | NewRun::Ralph { .. } => None,
        };
        let launch = self.new_launch(loaded, run, many.is_some(), None).await?;
        match many {
            Some(parallel) => self.drive_fleet(launch, parallel).await.map(Started::Fleet),
            None => self
                .drive(launch, None)
                .await
                .map(|(id, _)| Started::Run(id)),
        }
    }

    /// Starts `run` as one run (never a run of many goals) — a goal run on the goals `scope`
    /// names alone, when it names some — for a caller that waits for its end (a schedule's
    /// fire): its id once it is under way, and its end to come.
    pub async fn start_watched(
        &self,
        run: NewRun,
        scope: Option<BTreeSet<String>>,
    ) -> Result<Watched, LaunchError> {
        let loaded = self.loaded()?;
        let launch = self.new_launch(loaded, run, false, scope).await?;
        let (tell, ended) = oneshot::channel();
        let (id, interrupt) = self.drive(launch, Some(tell)).await?;
        Ok(Watched {
            id,
            ended,
            interrupt,
        })
    }

    /// The launch of a new run `run` with the configuration `loaded` (`many`: a run of many
    /// goals; `scope`: a goal run's goals, when not every active one).
    async fn new_launch(
        &self,
        loaded: tether_config::Loaded,
        run: NewRun,
        many: bool,
        scope: Option<BTreeSet<String>>,
    ) -> Result<Launch, LaunchError> {
        let config = loaded.config.clone();
        let (NewRun::Ralph {
            max_iterations,
            worktree,
            ..
        }
        | NewRun::Goal {
            max_iterations,
            worktree,
            ..
        }) = &run;
        let place = Place {
            worktree: *worktree,
            commit: true,
        };
        let max = max_iterations.unwrap_or(config.r#loop.max_iterations);
        if max == 0 {
            return Err(LaunchError::Invalid(
                "[loop] max_iterations is 0 (no limit), which the dashboard does not start; give \
                 max_iterations"
                    .to_owned(),
            ));
        }
        let spec = match run {
            NewRun::Ralph {
                prompt,
                completion_promise,
                ..
            } => RunSpec::ralph(
                &config,
                prompt,
                completion_promise,
                Some(max),
                crate::compose::launch::loop_budget(&config),
            ),
            NewRun::Goal { .. } => {
                if many {
                    crate::compose::fleet::ready(&self.ws, &config)
                        .await
                        .map_err(refusal)?;
                }
                self.ensure_approved(&config)?;
                let mut goal = RunSpec::goal_spec(
                    &config,
                    Some(max),
                    crate::compose::launch::loop_budget(&config),
                    false,
                );
                goal.scope = scope;
                RunSpec::Goal(goal)
            }
        };
        let bounds = crate::compose::bounds::for_new_run(&self.ws, &loaded);
        Ok(self.launch(config, bounds, spec, place))
    }

    /// Resumes the stopped run `id` with the configuration it recorded; when tether.toml
    /// differs, refused with the differences unless `accept_config` (a person saw them and
    /// accepts the file's).
    pub async fn resume(&self, id: RunId, how: Resume) -> Result<(), LaunchError> {
        let store = crate::compose::store::open(&self.ws, &*self.env).map_err(refusal)?;
        let run = control::find_run(&store, Some(&id.to_string())).map_err(|e| match e {
            ControlError::UnknownRun(_) => LaunchError::NotFound(format!("no run {id}")),
            e => LaunchError::Failed(chain(&e)),
        })?;
        crate::compose::launch::resumable_here(&self.ws, &*self.env, &store, &run)
            .map_err(refusal)?;
        // The raises the person gave, as `tether resume --add-…` records them; a run a budget
        // stopped that needs a raise goes on only with one of its unit.
        let raises = crate::compose::budget::raises_of(&how.add);
        if raises.is_empty() {
            crate::compose::budget::resumable(&run).map_err(refusal)?;
        } else {
            crate::compose::budget::raise_fits(&run, &raises).map_err(refusal)?;
        }
        let loaded = self.loaded()?;
        let settled =
            match crate::compose::bounds::for_resumed_run(&self.ws, &run, &loaded, &*self.env) {
                Resumed::Settled(settled) => *settled,
                Resumed::Changed(changed) if how.accept_config => changed.accept(),
                Resumed::Changed(changed) => return Err(config_changed(&run.id, &changed)),
            };
        // Recorded only once nothing refuses the resume: a request sent again after a refusal
        // (accepting the configuration) raises once.
        if !raises.is_empty() {
            crate::compose::budget::raise(&store, &run, &raises, &how.by).map_err(refusal)?;
        }
        drop(store);
        let (config, bounds) = (settled.config, settled.pinned);
        let launch = self.launch(config, bounds, RunSpec::Resume(run.id), Place::RESUMED);
        self.drive(launch, None).await.map(drop)
    }

    /// Stops every run this server drives after its current step (each can be resumed), and
    /// waits for them, or until `now` fires.
    pub async fn stop(&self, now: CancellationToken) {
        let driven = match self.driven.lock() {
            Ok(mut driven) => std::mem::take(&mut *driven),
            Err(_) => return,
        };
        for run in &driven {
            run.interrupt.cancel();
        }
        let all = futures_util::future::join_all(driven.into_iter().map(|run| run.task));
        tokio::select! {
            _ = all => {}
            () = now.cancelled() => {}
        }
    }

    /// How many runs this server drives now.
    pub fn driving(&self) -> usize {
        self.driven
            .lock()
            .map(|mut driven| {
                driven.retain(|run| !run.task.is_finished());
                driven.len()
            })
            .unwrap_or(0)
    }

    fn loaded(&self) -> Result<tether_config::Loaded, LaunchError> {
        tether_config::load(crate::schema(), self.ws.root(), &*self.env)
            .map_err(|e| LaunchError::Invalid(chain(&e)))
    }

    /// Refuses a goal run while any contract waits for a person's approval.
    fn ensure_approved(&self, config: &Config) -> Result<(), LaunchError> {
        let store = crate::compose::store::open(&self.ws, &*self.env).map_err(refusal)?;
        let plan = PlanRef::new(&self.ws, config);
        let prepared = approve::prepare(&store, &plan, &Selection::Pending)
            .map_err(|e| LaunchError::Invalid(chain(&e)))?;
        if prepared.goals.is_empty() {
            return Ok(());
        }
        let ids: Vec<&str> = prepared.goals.iter().map(|g| g.id.as_str()).collect();
        Err(LaunchError::Refused(format!(
            "the contracts of {} are not approved, so no goal run starts: a person approves \
             them with `tether plan approve` at a terminal, then starts the run again",
            ids.join(", ")
        )))
    }

    fn launch(
        &self,
        config: Config,
        bounds: tether_core::bounds::Pinned,
        spec: RunSpec,
        place: Place,
    ) -> Launch {
        Launch {
            ws: self.ws.clone(),
            config,
            bounds,
            spec,
            place,
            placement: None,
            sinks: Vec::new(),
            console: Console::Absent,
            by: BY.to_owned(),
            notice_grace: crate::compose::process::notice_grace(&*self.env),
            observer: Arc::new(Log),
            host: self.host.clone(),
            pool: None,
        }
    }

    /// Begins `launch` as a run of many goals, `parallel` at once, and drives it as a task of
    /// its own; its id once it is recorded, or why it was refused.
    async fn drive_fleet(&self, launch: Launch, parallel: u32) -> Result<RunId, LaunchError> {
        let fleet = crate::compose::fleet::Fleet {
            id: RunId::generate(),
            launch,
            parallel: usize::try_from(parallel).unwrap_or(1),
            remote: None,
        };
        let going = fleet.begin(&*self.env).await.map_err(refusal)?;
        let id = going.id().clone();
        let interrupt = CancellationToken::new();
        let (env, runtime, stop) = (
            Arc::clone(&self.env),
            self.runtime.clone(),
            interrupt.clone(),
        );
        let task = self.runtime.spawn(async move {
            match going.drive(&*env, &runtime, stop).await {
                Ok(end) => tracing::info!(fleet = %end.run, finish = ?end.finish, "run of many goals ended"),
                Err(e) => tracing::warn!(error = %chain(&e), "a run of many goals failed"),
            }
        });
        if let Ok(mut driven) = self.driven.lock() {
            driven.retain(|run| !run.task.is_finished());
            driven.push(Driven { interrupt, task });
        }
        Ok(id)
    }

    /// Composes `launch`, starts it and waits until it is under way (its id, and the token that
    /// interrupts it) or refused; `tell` hears how it ended.
    async fn drive(
        &self,
        launch: Launch,
        tell: Option<Tell>,
    ) -> Result<(RunId, CancellationToken), LaunchError> {
        let prepared = launch.prepare(&*self.env).await.map_err(refusal)?;
        let handle = prepared.start(&self.runtime);
        let (id, handle) = match handle.begun().await.map_err(refusal)? {
            Begun::Going(id, handle) => (id, handle),
            Begun::Over(finished) => {
                tracing::info!(run = %finished.run, end = ?finished.end, "run ended");
                if let Some(tell) = tell {
                    let _ = tell.send(Ok(finished.end));
                }
                // Over already: nothing is left to interrupt.
                return Ok((finished.run, CancellationToken::new()));
            }
        };
        let interrupt = handle.interrupter();
        let task = self.runtime.spawn(async move {
            let ended = match handle.finished().await {
                Ok(finished) => {
                    tracing::info!(run = %finished.run, end = ?finished.end, "run ended");
                    Ok(finished.end)
                }
                Err(e) => {
                    tracing::warn!(error = %chain(&e), "a run failed");
                    Err(chain(&e))
                }
            };
            if let Some(tell) = tell {
                // Nobody waiting any more is fine.
                let _ = tell.send(ended);
            }
        });
        if let Ok(mut driven) = self.driven.lock() {
            driven.retain(|run| !run.task.is_finished());
            driven.push(Driven {
                interrupt: interrupt.clone(),
                task,
            });
        }
        Ok((id, interrupt))
    }
}

impl Launcher for Runs {
    fn start(&self, run: NewRun) -> BoxFuture<'_, Result<Started, LaunchError>> {
        Box::pin(Runs::start(self, run))
    }

    fn resume(&self, id: RunId, how: Resume) -> BoxFuture<'_, Result<(), LaunchError>> {
        Box::pin(Runs::resume(self, id, how))
    }
}

/// The refusal of a resume whose tether.toml differs from the run's record: the differences,
/// and how a person applies them.
fn config_changed(run: &RunId, changed: &crate::compose::bounds::Changed) -> LaunchError {
    LaunchError::ConfigChanged {
        message: format!(
            "tether.toml differs from the configuration run {run} recorded: resume it again \
             accepting the difference (`\"accept_config\": true`) to apply tether.toml's, or put \
             tether.toml back"
        ),
        changes: changed.changes.iter().map(ToString::to_string).collect(),
    }
}

/// What the dashboard answers for a runtime error: a run that cannot be taken up now (another
/// process drives it, it ended, it works elsewhere, its configuration changed) is refused; a request
/// a person must fix (no model, no active goal) is invalid; anything else failed.
fn refusal(e: Error) -> LaunchError {
    let text = chain(&e);
    match &e {
        Error::Loop(
            LoopError::Lock(_) | LoopError::Ended { .. } | LoopError::NotThisKind { .. },
        )
        | Error::OtherMachine { .. }
        | Error::OtherWorkspace { .. }
        | Error::ConfigChanged { .. }
        | Error::NeedsRaise { .. }
        | Error::RaiseOtherUnit { .. } => LaunchError::Refused(text),
        Error::Loop(
            LoopError::NoActiveGoals { .. }
            | LoopError::ScopeNotInPlan { .. }
            | LoopError::ScopeInactive { .. }
            | LoopError::PlanInvalid(_),
        ) => LaunchError::Invalid(text),
        e if e.is_usage() => LaunchError::Invalid(text),
        _ => LaunchError::Failed(text),
    }
}

//! Goals on a schedule (`tether schedule`): what each fire starts ([`Work`]), the schedules a
//! person adds, lists, pauses, resumes and removes, and the scheduler (`tether schedule run`),
//! a long-lived host beside the dashboard's server: it starts each fire's run through the same
//! [`Runs`] that `tether serve` drives the dashboard's runs with, so a scheduled run is composed
//! exactly as `tether ralph` and `tether run` compose theirs (its report, its notices, the
//! dashboard) and driven as a task of the scheduler's process.
//!
//! When a schedule fires is `tether_core::schedule`'s (pure); where it stands is the store's
//! (`tether_store::Schedule`): a scheduler claims each fire with a conditional write, so two
//! schedulers on one store — on one machine, or on many sharing a team store — never fire one
//! schedule twice, and holds the fire's lease while its run works, renewing it. A run that
//! does not end done is a failure; the `[schedule] pause_after_failures`th in a row pauses the
//! schedule, and a `schedule_paused` notice says so with the command that resumes it. A
//! schedule not fired a grace past its due time makes one `overdue` notice per overdue spell.
//! Fires missed while no scheduler ran give one catch-up fire.
//!
//! A scheduler stopped (Ctrl+C, SIGTERM) interrupts the runs it started (each can be resumed)
//! and leaves their fires unended: their leases lapse and nothing is counted against the
//! schedules.
//!
//! A scheduler holds a fire from its claim on: it renews the lease while the run is being
//! started (a worktree made, the agent checked) as while it works, and it never fires again a
//! schedule whose fire of its own goes on, whatever its lease says (a machine back from a
//! suspend looks at its schedules before its heartbeat renews). Told by a renewal that another
//! scheduler took the schedule over — its lease lapsed meanwhile, and two clocks that disagree
//! by more than the lease make one lapse early — it stops renewing and interrupts its run
//! (which can be resumed), so one schedule's runs never work side by side for long. A schedule
//! removed while its fire goes on (and perhaps added again under its name) leaves that run to
//! its end.
//!
//! A fire's run is recorded as soon as it started, so a fire left unended — its scheduler
//! stopped, or killed mid-run (SIGKILL, a crash) — keeps its run named: the next scheduler to
//! find its lease lapsed records it abandoned (no failure counted), with the run to resume.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tether_config::{Config, Env, ScheduleConfig, Workspace};
use tether_core::goal::GoalEnd;
use tether_core::ralph::RalphEnd;
use tether_core::schedule::{self, Standing, Timing, TimingError};
use tether_human::registry::Reach;
use tether_human::{Console, Desk, Notice};
use tether_store::launch::NewRun;
use tether_store::{FireClaim, FireEnd, Holder, Journal, Lapse, NewSchedule, Schedule, StoreError};
use tokio_util::sync::CancellationToken;

mod install;

pub use install::{Unwritable, crontab_line, systemd_unit};

use crate::Host;
use crate::compose::launch::End;
use crate::compose::served::{Runs, Watched};
use crate::error::{Result, chain};

/// How long a scheduler's hold on a fire lasts unless renewed.
pub const FIRE_LEASE: Duration = Duration::from_secs(60);

/// How often a scheduler renews its hold on a fire while its run works: a quarter of the
/// lease, so a scheduler that misses three renewals still holds its fire.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

/// The longest name a schedule may have.
const MAX_NAME: usize = 64;

/// What a fire starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Work {
    /// A Ralph run of `prompt`, done when the agent keeps `completion_promise`.
    Ralph {
        /// The prompt.
        prompt: String,
        /// The promise that ends it done.
        completion_promise: String,
        /// The iteration budget (default: `[loop] max_iterations`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_iterations: Option<u32>,
        /// Work in a git worktree of its own.
        #[serde(default)]
        worktree: bool,
    },
    /// A goal run on one goal of the plan, done when it is signed off.
    Goal {
        /// The goal's id.
        goal: String,
        /// The iteration budget (default: `[loop] max_iterations`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_iterations: Option<u32>,
        /// Work in a git worktree of its own.
        #[serde(default)]
        worktree: bool,
    },
}

impl Work {
    /// The run it starts, and a goal run's scope.
    fn run(&self) -> (NewRun, Option<BTreeSet<String>>) {
        match self.clone() {
            Work::Ralph {
                prompt,
                completion_promise,
                max_iterations,
                worktree,
            } => (
                NewRun::Ralph {
                    prompt,
                    completion_promise: Some(completion_promise),
                    max_iterations,
                    worktree,
                },
                None,
            ),
            Work::Goal {
                goal,
                max_iterations,
                worktree,
            } => (
                NewRun::Goal {
                    max_iterations,
                    worktree,
                    parallel: None,
                },
                Some(BTreeSet::from([goal])),
            ),
        }
    }

    /// For people: `ralph "tidy up" until DONE`, `goal g1`.
    pub fn describe(&self) -> String {
        match self {
            Work::Ralph {
                prompt,
                completion_promise,
                ..
            } => format!(
                "ralph {:?} until {completion_promise}",
                tether_human::visible::one_line(prompt)
            ),
            Work::Goal { goal, .. } => format!("goal {goal}"),
        }
    }
}

/// Why a schedule cannot be added, found or changed: each says what to give instead.
#[derive(Debug, thiserror::Error)]
pub enum ScheduleError {
    /// The name is not one a schedule may have.
    #[error(
        "--name {0:?}: a schedule's name is 1 to 64 letters, digits, `-` and `_` (such as \
         `nightly-tests`)"
    )]
    BadName(String),
    /// The workspace has a schedule of that name.
    #[error(
        "--name {0}: a schedule named {0} exists already; choose another name, or remove it \
         first (`tether schedule remove {0}`)"
    )]
    Exists(String),
    /// `--every` or `--cron` cannot be read.
    #[error("{flag}: {problem}")]
    Timing {
        /// The flag.
        flag: &'static str,
        /// Why (in the message, so not also a `source`).
        problem: TimingError,
    },
    /// `--goal` names no goal of the plan.
    #[error("--goal {goal}: the plan {plan} has no goal {goal} (`tether plan` lists its goals)")]
    UnknownGoal {
        /// The id given.
        goal: String,
        /// The plan file.
        plan: String,
    },
    /// `--ralph` with an empty prompt.
    #[error("--ralph: the prompt is empty; give what each fire's agent is asked to do")]
    EmptyPrompt,
    /// `--ralph` without its promise, or an empty one.
    #[error(
        "--completion-promise: a scheduled Ralph run needs the word that ends it done (such as \
         --completion-promise DONE); without it no fire could end done"
    )]
    NoPromise,
    /// No schedule of that name.
    #[error("no schedule named {0} here (`tether schedule list` lists them)")]
    NotFound(String),
}

impl ScheduleError {
    /// Whether a person fixes it by giving other arguments (all of them are).
    pub fn is_usage(&self) -> bool {
        true
    }
}

/// A schedule as `tether schedule list` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listed {
    /// Its name.
    pub name: String,
    /// When it fires, for people (`every 1h`, `cron 0 9 * * 1-5 (UTC)`).
    pub timing: String,
    /// What each fire starts.
    pub work: serde_json::Value,
    /// Whether it is paused.
    pub paused: bool,
    /// When it fires next (ms since the Unix epoch), unless paused; in the past when it is
    /// due now.
    pub next_fire_ms: Option<i64>,
    /// [`Listed::next_fire_ms`] for people.
    pub next_fire: Option<String>,
    /// Whether a fire of it goes on.
    pub firing: bool,
    /// Whether it is late past its grace.
    pub overdue: bool,
    /// When it last fired.
    pub last_fire_ms: Option<i64>,
    /// The run its last fire started.
    pub last_run: Option<String>,
    /// How its last fire ended (`done`, or what went wrong).
    pub last_outcome: Option<String>,
    /// Its fires in a row that did not end done.
    pub consecutive_failures: u32,
}

/// The workspace as schedules are keyed in the store: its root, made absolute.
pub fn key_of(ws: &Workspace) -> PathBuf {
    std::fs::canonicalize(ws.root()).unwrap_or_else(|_| ws.root().to_owned())
}

/// Adds schedule `name` to `ws`: `timing` starting `work` (a goal checked against the plan).
pub fn add(ws: &Workspace, env: &dyn Env, name: &str, timing: &Timing, work: &Work) -> Result<()> {
    let valid = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    if name.is_empty() || name.len() > MAX_NAME || !name.chars().all(valid) {
        return Err(ScheduleError::BadName(name.to_owned()).into());
    }
    let loaded = tether_config::load(crate::schema(), ws.root(), env)?;
    match work {
        Work::Goal { goal, .. } => {
            let path = ws.root().join(&loaded.config.plan);
            let unknown = || ScheduleError::UnknownGoal {
                goal: goal.clone(),
                plan: loaded.config.plan.display().to_string(),
            };
            let doc = tether_plan::file::read(&path).map_err(|_| unknown())?;
            if doc.plan().goal(goal).is_none() {
                return Err(unknown().into());
            }
        }
        Work::Ralph { prompt, .. } if prompt.trim().is_empty() => {
            return Err(ScheduleError::EmptyPrompt.into());
        }
        Work::Ralph {
            completion_promise, ..
        } if completion_promise.trim().is_empty() => {
            return Err(ScheduleError::NoPromise.into());
        }
        Work::Ralph { .. } => {}
    }
    let store = crate::compose::store::open(ws, env)?;
    let new = NewSchedule {
        workspace: key_of(ws),
        name: name.to_owned(),
        timing: timing.stored(),
        work: serde_json::to_value(work).map_err(tether_store::StoreError::Json)?,
    };
    if !store.add_schedule(&new)? {
        return Err(ScheduleError::Exists(name.to_owned()).into());
    }
    Ok(())
}

/// Removes schedule `name` of `ws` (a fire going on goes on to its end).
pub fn remove(ws: &Workspace, env: &dyn Env, name: &str) -> Result<()> {
    let store = crate::compose::store::open(ws, env)?;
    if !store.remove_schedule(&key_of(ws), name)? {
        return Err(ScheduleError::NotFound(name.to_owned()).into());
    }
    Ok(())
}

/// Pauses schedule `name` of `ws`, or resumes it (its failures forgotten).
pub fn set_paused(ws: &Workspace, env: &dyn Env, name: &str, paused: bool) -> Result<()> {
    let store = crate::compose::store::open(ws, env)?;
    if !store.pause_schedule(&key_of(ws), name, paused)? {
        return Err(ScheduleError::NotFound(name.to_owned()).into());
    }
    Ok(())
}

/// The schedules of `ws` as they stand at `now_ms`.
pub fn list(ws: &Workspace, env: &dyn Env, now_ms: i64) -> Result<Vec<Listed>> {
    let loaded = tether_config::load(crate::schema(), ws.root(), env)?;
    let grace = grace_ms(&loaded.config.schedule);
    let store = crate::compose::store::for_reading(ws, env)?;
    let schedules = store.schedules(&key_of(ws))?;
    Ok(schedules
        .into_iter()
        .map(|s| {
            let timing = Timing::read(&s.timing);
            let look = timing
                .as_ref()
                .ok()
                .map(|t| schedule::look(t, &standing(&s, now_ms, false), now_ms, grace));
            let next = look.and_then(|l| l.due_ms);
            Listed {
                timing: timing.map_or_else(|e| e.to_string(), |t| t.describe()),
                work: s.work.clone(),
                paused: s.paused,
                next_fire_ms: next,
                next_fire: next.map(schedule::when),
                firing: s.firing(now_ms),
                overdue: look.is_some_and(|l| l.late),
                last_fire_ms: s.last_fire_ms,
                last_run: s.last_run.as_ref().map(ToString::to_string),
                last_outcome: s.last_outcome.clone(),
                consecutive_failures: s.failures,
                name: s.name,
            }
        })
        .collect())
}

/// Where `s` stands at `now_ms`, as the schedule's rules read it; `live`: a fire of it this
/// process drives goes on, whatever its lease says.
fn standing(s: &Schedule, now_ms: i64, live: bool) -> Standing {
    Standing {
        created_at_ms: s.created_at_ms,
        last_fire_ms: s.last_fire_ms,
        paused: s.paused,
        firing: live || s.firing(now_ms),
        overdue_told: s.overdue_at_ms.is_some(),
        resumed_at_ms: s.resumed_at_ms,
    }
}

fn grace_ms(config: &ScheduleConfig) -> i64 {
    i64::try_from(config.overdue_grace_secs.saturating_mul(1000)).unwrap_or(i64::MAX)
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

/// The scheduler of a workspace (`tether schedule run`): fires its schedules as they fall
/// due, each fire a run driven by its [`Runs`].
pub struct Scheduler {
    inner: Arc<Inner>,
}

/// Hears, one line each, what a scheduler does (a schedule fired, how its run ended, paused,
/// overdue): a foreground scheduler prints it for the person who started it.
pub type Said = Arc<dyn Fn(&str) + Send + Sync>;

/// What the scheduler and its fires share.
struct Inner {
    said: Said,
    /// The store's place, connected once (a team store's pool is shared by every store of it).
    connector: Arc<dyn tether_store::Connector>,
    ws: Workspace,
    env: Arc<dyn Env + Send + Sync>,
    runs: Runs,
    key: PathBuf,
    holder: Holder,
    /// How long its hold on a fire lasts unless renewed; it renews every quarter of it.
    lease: Duration,
    /// The fires this scheduler drives.
    fires: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// The names of the schedules whose fire this scheduler drives, from its claim to its end.
    live: Mutex<BTreeSet<String>>,
}

impl Scheduler {
    /// The scheduler of `ws` (`env` holding the keys), its runs driven on the current Tokio
    /// runtime; `host` runs the tether commands their agents hand over. Call it inside the
    /// runtime.
    /// `said` hears what it does. Refused when the store tether.toml names cannot be reached.
    pub fn new(
        ws: Workspace,
        env: Arc<dyn Env + Send + Sync>,
        host: Host,
        said: Said,
    ) -> Result<Scheduler> {
        Scheduler::leasing(ws, env, host, said, FIRE_LEASE)
    }

    /// [`Scheduler::new`], holding each fire for `lease` unless renewed ([`FIRE_LEASE`] there),
    /// renewed every quarter of it.
    pub fn leasing(
        ws: Workspace,
        env: Arc<dyn Env + Send + Sync>,
        host: Host,
        said: Said,
        lease: Duration,
    ) -> Result<Scheduler> {
        let key = key_of(&ws);
        let connector = crate::compose::store::connector(&ws, &*env)?;
        let runs = Runs::new(ws.clone(), env.clone(), host);
        Ok(Scheduler {
            inner: Arc::new(Inner {
                said,
                connector,
                holder: Holder::this_process(&key),
                ws,
                env,
                runs,
                key,
                lease,
                fires: Mutex::new(Vec::new()),
                live: Mutex::new(BTreeSet::new()),
            }),
        })
    }

    /// Fires the schedules as they fall due until `stop` fires, then interrupts the runs it
    /// started and waits for them (until `now` fires).
    pub async fn run(&self, stop: CancellationToken, now: CancellationToken) {
        while !stop.is_cancelled() {
            let wait = match self.tick(tether_store::now_ms()).await {
                Ok(wait) => wait,
                Err(e) => {
                    tracing::warn!(error = %chain(&e), "could not look at the schedules");
                    Duration::from_secs(ScheduleConfig::default().poll_secs)
                }
            };
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = stop.cancelled() => {}
            }
        }
        self.inner.runs.stop(now.clone()).await;
        let fires = match self.inner.fires.lock() {
            Ok(mut fires) => std::mem::take(&mut *fires),
            Err(_) => Vec::new(),
        };
        let all = futures_util::future::join_all(fires);
        tokio::select! {
            _ = all => {}
            () = now.cancelled() => {}
        }
    }

    /// Looks at every schedule at `now_ms`: tells people of those overdue, fires those due.
    /// How long to wait before looking again.
    pub async fn tick(&self, now_ms: i64) -> Result<Duration> {
        let inner = &self.inner;
        let loaded = tether_config::load(crate::schema(), inner.ws.root(), &*inner.env)?;
        let config = loaded.config;
        let settings = config.schedule;
        let poll = Duration::from_secs(settings.poll_secs.max(1));
        let grace = grace_ms(&settings);
        let store = inner.store()?;
        let mut wait = poll;
        for s in store.schedules(&inner.key)? {
            let timing = match Timing::read(&s.timing) {
                Ok(timing) => timing,
                Err(e) => {
                    tracing::warn!(schedule = s.name, error = %e, "a schedule cannot be read");
                    continue;
                }
            };
            let live = inner.is_live(&s.name);
            if !live {
                inner.abandon_lapsed(&store, &s, now_ms)?;
            }
            let look = schedule::look(&timing, &standing(&s, now_ms, live), now_ms, grace);
            if look.tell_overdue
                && store.mark_schedule_overdue(&inner.key, &s.name, s.fire, now_ms)?
            {
                let due = look.due_ms.unwrap_or(now_ms);
                let notice =
                    Notice::overdue(&s.name, &schedule::when(due), &schedule::span(now_ms - due));
                (inner.said)(&notice.text);
                inner.notify(&config, &notice).await?;
            }
            if look.fire {
                let claimed = store.claim_schedule_fire(
                    &inner.key,
                    &s.name,
                    s.fire,
                    now_ms,
                    &inner.holder,
                    millis(inner.lease),
                )?;
                if let Some(claim) = claimed {
                    let missed = look
                        .due_ms
                        .map_or(1, |due| schedule::missed(&timing, due, now_ms));
                    if missed > 1 {
                        (inner.said)(&format!(
                            "schedule {}: one catch-up fire for {missed} missed times",
                            s.name
                        ));
                    }
                    self.fire(s, claim, settings);
                }
                continue;
            }
            if let Some(wake) = look.wake_ms {
                let until = u64::try_from(wake.saturating_sub(now_ms)).unwrap_or(0);
                wait = wait.min(Duration::from_millis(until.max(50)));
            }
        }
        Ok(wait)
    }

    /// Starts the fire `claim` of `s` as a task of its own: its run, its lease renewed from
    /// now until the run ends, its end recorded. The schedule is this scheduler's live fire
    /// until the task ends.
    fn fire(&self, s: Schedule, claim: FireClaim, settings: ScheduleConfig) {
        let inner = self.inner.clone();
        tracing::info!(schedule = s.name, fire = claim.token, "firing");
        let live = LiveFire::begin(inner.clone(), &s.name);
        let task = tokio::spawn(async move {
            let _live = live;
            if let Err(e) = inner.drive_fire(&s, claim, settings).await {
                tracing::warn!(schedule = s.name, error = %chain(&e), "a fire's end was not recorded");
            }
        });
        if let Ok(mut fires) = self.inner.fires.lock() {
            fires.retain(|t| !t.is_finished());
            fires.push(task);
        }
    }
}

impl Inner {
    /// A store of the scheduler's place.
    fn store(&self) -> Result<tether_store::Store> {
        self.connector
            .connect()
            .map_err(|cause| crate::Error::OpenStore {
                place: self.connector.describe(),
                cause,
            })
    }

    /// Whether this scheduler drives a fire of schedule `name` now.
    fn is_live(&self, name: &str) -> bool {
        self.live.lock().is_ok_and(|live| live.contains(name))
    }

    /// Drives one fire of `s` to its end and records it, renewing its lease all along; a fire
    /// whose lease another scheduler took over is left unended, its run interrupted.
    async fn drive_fire(
        &self,
        s: &Schedule,
        claim: FireClaim,
        settings: ScheduleConfig,
    ) -> Result<()> {
        let lost = CancellationToken::new();
        let going = self.run_fire(s, claim, &lost);
        let renewing = self.renew(s, claim, &lost);
        tokio::pin!(going, renewing);
        let end = tokio::select! {
            end = &mut going => end,
            // No longer this scheduler's: the run, told by `lost`, stops and is left unended.
            () = &mut renewing => going.await,
        };
        match end {
            Some(end) if !lost.is_cancelled() => self.end_fire(s, claim, &end, settings).await,
            _ => Ok(()),
        }
    }

    /// Starts the run of `s`'s fire and waits for its end: `None` when it was interrupted (the
    /// scheduler is stopping, or `lost` said the fire is another's) and is left unended.
    async fn run_fire(
        &self,
        s: &Schedule,
        claim: FireClaim,
        lost: &CancellationToken,
    ) -> Option<FireEnd> {
        let work = match serde_json::from_value::<Work>(s.work.clone()) {
            Ok(work) => work,
            Err(e) => {
                return Some(FireEnd {
                    run: None,
                    outcome: format!("not started: its work cannot be read ({e})"),
                    done: false,
                });
            }
        };
        let (run, scope) = work.run();
        let watched = match self.runs.start_watched(run, scope).await {
            Ok(watched) => watched,
            Err(refused) => {
                return Some(FireEnd {
                    run: None,
                    outcome: format!("not started: {refused}"),
                    done: false,
                });
            }
        };
        let id = watched.id.clone();
        self.started(&s.name, claim, &id);
        (self.said)(&format!("schedule {} fired: run {id}", s.name));
        let ended = self.watch(&s.name, watched, lost).await?;
        let (done, outcome) = outcome(&ended);
        Some(FireEnd {
            run: Some(id.clone()),
            outcome: format!("run {id} {outcome}"),
            done,
        })
    }

    /// Records `run` as the run of `name`'s fire `claim`, so a fire whose scheduler dies leaves
    /// its run named (a fire no longer this scheduler's is told so by its next renewal).
    fn started(&self, name: &str, claim: FireClaim, run: &tether_store::RunId) {
        let recorded = self.store().map_err(|e| chain(&e)).and_then(|store| {
            store
                .start_schedule_fire(&self.key, name, claim.token, run)
                .map_err(|e| chain(&e))
        });
        if let Err(e) = recorded {
            tracing::warn!(schedule = name, run = %run, error = e, "a fire's run was not recorded");
        }
    }

    /// Records `s`'s fire as abandoned when its lease lapsed at `now_ms` and it never ended (its
    /// scheduler was killed or stopped mid-run, and no fire of it goes on here), so the
    /// schedule says what became of it and of its run.
    fn abandon_lapsed(&self, store: &tether_store::Store, s: &Schedule, now_ms: i64) -> Result<()> {
        if s.expires_at_ms == 0 || s.firing(now_ms) {
            return Ok(());
        }
        let outcome = match &s.last_run {
            Some(run) => format!(
                "abandoned: its scheduler stopped while run {run} worked (`tether resume {run}` \
                 takes it up)"
            ),
            None => "abandoned: its scheduler stopped before its run started".to_owned(),
        };
        if store.abandon_schedule_fire(&self.key, &s.name, s.fire, s.last_run.as_ref(), &outcome)? {
            (self.said)(&format!("schedule {}: {outcome}", s.name));
        }
        Ok(())
    }

    /// Records the end of `s`'s fire `claim`, and tells people when it paused the schedule.
    async fn end_fire(
        &self,
        s: &Schedule,
        claim: FireClaim,
        end: &FireEnd,
        settings: ScheduleConfig,
    ) -> Result<()> {
        let store = self.store()?;
        let ended = store.end_schedule_fire(
            &self.key,
            &s.name,
            claim.token,
            end,
            settings.pause_after_failures,
        )?;
        (self.said)(&format!(
            "schedule {}: {} ({} failure(s) in a row)",
            s.name, end.outcome, ended.failures
        ));
        if ended.paused_now {
            let config = tether_config::load(crate::schema(), self.ws.root(), &*self.env)?.config;
            let notice = Notice::schedule_paused(&s.name, ended.failures, &end.outcome);
            (self.said)(&notice.plain());
            self.notify(&config, &notice).await?;
        }
        Ok(())
    }

    /// Waits for the run's end (`None`: it was interrupted because the scheduler is stopping,
    /// or its driving was dropped); when `lost` says the fire is no longer this scheduler's,
    /// interrupts the run first and leaves it unended.
    async fn watch(
        &self,
        name: &str,
        watched: Watched,
        lost: &CancellationToken,
    ) -> Option<std::result::Result<End, String>> {
        let Watched {
            id,
            mut ended,
            interrupt,
        } = watched;
        tokio::select! {
            end = &mut ended => return ended_on_its_own(end),
            () = lost.cancelled() => {}
        }
        interrupt.cancel();
        (self.said)(&format!(
            "schedule {name}: run {id} interrupted, as its fire is no longer this scheduler's \
             (`tether resume {id}` takes it up)"
        ));
        tracing::warn!(schedule = name, run = %id, "a fire taken over: its run interrupted");
        // It stops after its current step; its end is not this scheduler's to record.
        let _ = ended.await;
        None
    }

    /// Renews the lease of `s`'s fire `claim` every quarter of the lease until another
    /// scheduler took it over, then cancels `lost`; returns only then (a schedule removed
    /// meanwhile stops the renewals but leaves its run be). A store that cannot be reached is
    /// tried again at the next beat: the lease holds for a few.
    async fn renew(&self, s: &Schedule, claim: FireClaim, lost: &CancellationToken) {
        let name = s.name.as_str();
        loop {
            tokio::time::sleep(self.lease / 4).await;
            let renewed = self.store().map(|store| {
                let renewed =
                    store.renew_schedule_fire(&self.key, name, claim.token, millis(self.lease));
                (store, renewed)
            });
            match renewed {
                Ok((_, Ok(_))) => {}
                Ok((store, Err(StoreError::LeaseLost { lapse, .. }))) => {
                    if self.replaced(&store, s) {
                        tracing::info!(schedule = name, "removed while its fire goes on");
                        return std::future::pending().await;
                    }
                    let how = match lapse {
                        Lapse::TakenOver => "another scheduler fired it since",
                        _ => "another scheduler found its lease lapsed and recorded it abandoned",
                    };
                    (self.said)(&format!(
                        "schedule {name}: its fire is no longer this scheduler's ({how}); this \
                         one stops renewing it"
                    ));
                    tracing::warn!(schedule = name, %lapse, "a fire's lease lost");
                    lost.cancel();
                    return;
                }
                Ok((_, Err(StoreError::NotFound { .. }))) => {
                    tracing::info!(schedule = name, "removed while its fire goes on");
                    return std::future::pending().await;
                }
                Ok((_, Err(e))) => {
                    tracing::warn!(schedule = name, error = %e, "could not renew a fire's lease");
                }
                Err(e) => {
                    tracing::warn!(schedule = name, error = %chain(&e), "could not renew a fire's lease");
                }
            }
        }
    }

    /// Whether schedule `s` was removed (and perhaps added again under its name) since it was
    /// read: its fire is then nobody's to take over.
    fn replaced(&self, store: &tether_store::Store, s: &Schedule) -> bool {
        match store.schedule(&self.key, &s.name) {
            Ok(now) => now.created_at_ms != s.created_at_ms,
            Err(StoreError::NotFound { .. }) => true,
            Err(_) => false,
        }
    }

    /// Sends `notice` to the channels `config` names, waiting a little for its delivery.
    async fn notify(&self, config: &Config, notice: &Notice) -> Result<()> {
        let store = self.store()?;
        let journal = Journal::new(store, Vec::new())?;
        let desk = Desk::from_config(
            config,
            &self.ws,
            journal,
            (Console::Absent, Reach::ANYTHING),
        );
        desk.notify(notice).await;
        desk.flush_within(crate::compose::process::notice_grace(&*self.env))
            .await;
        Ok(())
    }
}

/// A run's end as its watcher heard it: `None` when it was interrupted (the scheduler is
/// stopping) or its driving was dropped, so its fire is left unended.
fn ended_on_its_own(
    end: std::result::Result<
        std::result::Result<End, String>,
        tokio::sync::oneshot::error::RecvError,
    >,
) -> Option<std::result::Result<End, String>> {
    use tether_core::looping::Stopped;
    match end {
        Ok(Ok(
            End::Goal(GoalEnd::Stopped(Stopped::Interrupted))
            | End::Ralph(RalphEnd::Stopped(Stopped::Interrupted)),
        ))
        | Err(_) => None,
        Ok(end) => Some(end),
    }
}

/// A schedule this scheduler drives a fire of, from its claim until the fire's task ends
/// (dropped, it is no longer).
struct LiveFire {
    inner: Arc<Inner>,
    name: String,
}

impl LiveFire {
    fn begin(inner: Arc<Inner>, name: &str) -> LiveFire {
        if let Ok(mut live) = inner.live.lock() {
            live.insert(name.to_owned());
        }
        LiveFire {
            inner,
            name: name.to_owned(),
        }
    }
}

impl Drop for LiveFire {
    fn drop(&mut self) {
        if let Ok(mut live) = self.inner.live.lock() {
            live.remove(&self.name);
        }
    }
}

/// Whether a fire's run ended done, and how it ended for people (`done`, `failed: …`).
fn outcome(ended: &std::result::Result<End, String>) -> (bool, String) {
    use tether_core::looping::Stopped;
    let stopped = |s: &Stopped| match s {
        Stopped::Cancelled => "cancelled".to_owned(),
        Stopped::Interrupted => "interrupted".to_owned(),
        Stopped::Paused { reason } => format!("paused: {reason}"),
        Stopped::BudgetSpent { iteration } => {
            format!("spent its budget after {iteration} iteration(s) without ending done")
        }
        Stopped::CannotRun { error, .. } => format!("cannot run: {error}"),
        Stopped::Failed { error, .. } => format!("failed: {error}"),
        Stopped::LeaseLost { detail } => format!("was taken over: {detail}"),
    };
    match ended {
        Ok(End::Goal(GoalEnd::AllDone { .. }) | End::Ralph(RalphEnd::PromiseKept { .. })) => {
            (true, "done".to_owned())
        }
        Ok(End::Goal(GoalEnd::Blocked { rule, reason })) => {
            (false, format!("blocked: {}: {reason}", rule.as_str()))
        }
        Ok(End::Goal(GoalEnd::Stopped(s)) | End::Ralph(RalphEnd::Stopped(s))) => {
            (false, stopped(s))
        }
        Err(e) => (false, format!("failed: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use tether_core::goal::GoalEnd;
    use tether_core::looping::Stopped;
    use tether_core::ralph::RalphEnd;

    use super::{End, Work, outcome};

    #[test]
    fn only_a_run_that_ends_done_is_not_a_failure() {
        let kept = Ok(End::Ralph(RalphEnd::PromiseKept { iteration: 2 }));
        assert_eq!(outcome(&kept), (true, "done".to_owned()));
        let signed = Ok(End::Goal(GoalEnd::AllDone {
            iteration: 3,
            signed_off: vec!["g1".to_owned()],
        }));
        assert!(outcome(&signed).0);
        let spent = Ok(End::Ralph(RalphEnd::Stopped(Stopped::BudgetSpent {
            iteration: 5,
        })));
        assert_eq!(
            outcome(&spent),
            (
                false,
                "spent its budget after 5 iteration(s) without ending done".to_owned()
            )
        );
        let paused = Ok(End::Goal(GoalEnd::paused(
            "the judge is unavailable".to_owned(),
        )));
        assert_eq!(
            outcome(&paused),
            (false, "paused: the judge is unavailable".to_owned())
        );
        assert_eq!(
            outcome(&Err("the run's task ended abnormally".to_owned())),
            (false, "failed: the run's task ended abnormally".to_owned())
        );
    }

    #[test]
    fn work_is_stored_as_json_and_read_back() {
        let work = Work::Goal {
            goal: "g3".to_owned(),
            max_iterations: Some(40),
            worktree: true,
        };
        let json = serde_json::to_value(&work).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"kind": "goal", "goal": "g3", "max_iterations": 40, "worktree": true})
        );
        assert_eq!(serde_json::from_value::<Work>(json).unwrap(), work);
        assert_eq!(work.describe(), "goal g3");
    }
}

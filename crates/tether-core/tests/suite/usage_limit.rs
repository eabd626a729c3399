//! A usage limit of the agent is waited out and the same iteration runs again, never counted
//! as a failure; a limit too long to wait, or `on_usage_limit = "stop"`, pauses the run; and
//! `tether cancel` or Ctrl+C ends a wait at once. The waits are made short (or long, where the
//! test ends them) through `Deps::usage`.

use std::sync::Arc;
use std::time::Duration;

use tether_config::{Config, OnUsageLimit, Workspace};
use tether_core::ralph::{self, Deps, RalphEnd, RalphSpec, Stopped, UsageWaits};
use tether_human::{Console, Desk};
use tether_store::{Event, Journal, RunStatus, Seq, Store};
use tether_testkit::wait_until_async;
use tokio_util::sync::CancellationToken;

use crate::common::{Scripted, Step};

struct Fixture {
    _dir: tempfile::TempDir,
    ws: Workspace,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Fixture {
            ws: Workspace::at(dir.path()),
            _dir: dir,
        }
    }

    fn deps(&self, exec: Arc<Scripted>, usage: UsageWaits) -> Deps {
        let journal = Journal::new(Store::open(self.ws.db_path()).unwrap(), Vec::new()).unwrap();
        Deps {
            ws: self.ws.clone(),
            journal: journal.clone(),
            executor: exec,
            human: Desk::from_config(
                &Config::default(),
                &self.ws,
                journal,
                (Console::Absent, tether_human::registry::Reach::ANYTHING),
            ),
            usage,
            price: None,
            loop_judge: None,
            env_remove: Vec::new(),
            git: tether_git::Confinement::default(),
            isolation: Default::default(),
            bounds: None,
            pool: None,
        }
    }
}

/// Waits of a few milliseconds.
fn short() -> UsageWaits {
    UsageWaits {
        first_backoff: Duration::from_millis(5),
        max_backoff: Duration::from_millis(20),
        slack: Duration::ZERO,
        ..UsageWaits::default()
    }
}

/// Waits no test sits out.
fn long() -> UsageWaits {
    UsageWaits {
        first_backoff: Duration::from_secs(3600),
        ..UsageWaits::default()
    }
}

fn spec() -> RalphSpec {
    RalphSpec {
        prompt: "Do the thing.".into(),
        promise: Some("DONE".into()),
        max_iterations: Some(3),
        budget: tether_store::Budget::default(),
        max_consecutive_failures: 1,
    }
}

fn events(deps: &Deps, run: &tether_store::RunId) -> Vec<Event> {
    deps.journal
        .store()
        .events(run, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect()
}

fn kinds(deps: &Deps, run: &tether_store::RunId) -> Vec<String> {
    events(deps, run)
        .iter()
        .filter(|e| !matches!(e, Event::ToolCalled { .. }))
        .map(|e| match e {
            Event::IterationStarted { n } => format!("start {n}"),
            Event::WaitingForUsageLimit { n, message, .. } => format!("limit {n}: {message}"),
            other => other.kind().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn a_limit_is_waited_out_and_the_same_iteration_runs_again_without_a_failure() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![
        Step::Limit(None),
        Step::Limit(None),
        Step::Say("<promise>DONE</promise>"),
    ]);
    let deps = f.deps(exec.clone(), short());
    let (run, end) = ralph::start(&deps, spec(), CancellationToken::new(), |_| {})
        .await
        .unwrap();
    // One failure in a row would have ended the run (max_consecutive_failures = 1).
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 1 });
    assert_eq!(
        kinds(&deps, &run),
        [
            "run_started",
            "start 1",
            "limit 1: You've hit your usage limit",
            "start 1",
            "limit 1: You've hit your usage limit",
            "start 1",
            "iteration_completed",
            "run_finished"
        ]
    );
    let prompts = exec.prompts.lock().unwrap().clone();
    assert_eq!(prompts.len(), 3);
    assert!(prompts.iter().all(|p| *p == prompts[0]), "{prompts:?}");
    let state = deps.journal.state(&run).unwrap();
    assert_eq!((state.iteration, state.consecutive_failures), (1, 0));
    assert_eq!(state.usage_limit, None);
    let iterations = deps.journal.store().iterations(&run).unwrap();
    assert_eq!(iterations.len(), 1);
}

#[tokio::test]
async fn the_wait_lasts_until_the_reported_reset_plus_slack() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![
        Step::Limit(Some(Duration::from_millis(40))),
        Step::Say("<promise>DONE</promise>"),
    ]);
    // A tenth of the wait, up to `slack`.
    let usage = UsageWaits {
        slack: Duration::from_secs(1),
        ..short()
    };
    let deps = f.deps(exec, usage);
    let (run, end) = ralph::start(&deps, spec(), CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 1 });
    let stored = deps
        .journal
        .store()
        .events(&run, Seq(0), usize::MAX)
        .unwrap();
    let (at, until) = stored
        .iter()
        .find_map(|e| match &e.event {
            Some(Event::WaitingForUsageLimit { until_ms, .. }) => Some((e.at_ms, *until_ms)),
            _ => None,
        })
        .unwrap();
    // `until` is set just before the event is appended: 44 ms after, give or take the append.
    assert!((34..=44).contains(&(until - at)), "{}", until - at);
    let restarted = stored
        .iter()
        .filter(|e| matches!(e.event, Some(Event::IterationStarted { .. })))
        .nth(1)
        .unwrap();
    assert!(restarted.at_ms >= until, "ran again before the reset");
}

#[tokio::test]
async fn a_limit_longer_than_the_max_wait_or_stop_pauses_the_run() {
    for usage in [
        UsageWaits {
            max_wait: Duration::from_secs(60),
            ..long()
        },
        UsageWaits {
            on_limit: OnUsageLimit::Stop,
            ..short()
        },
    ] {
        let f = Fixture::new();
        let exec = Scripted::new(vec![Step::Limit(Some(Duration::from_secs(7200)))]);
        let deps = f.deps(exec.clone(), usage.clone());
        let (run, end) = ralph::start(&deps, spec(), CancellationToken::new(), |_| {})
            .await
            .unwrap();
        assert!(
            matches!(end, RalphEnd::Stopped(Stopped::Paused { .. })),
            "{end:?} {usage:?}"
        );
        let state = deps.journal.state(&run).unwrap();
        assert_eq!(state.status, RunStatus::Paused);
        assert_eq!((state.iteration, state.consecutive_failures), (0, 0));
        let reason = events(&deps, &run)
            .into_iter()
            .find_map(|e| match e {
                Event::Paused { reason } => Some(reason),
                _ => None,
            })
            .unwrap();
        assert!(
            reason.starts_with(
                "stopped: the agent hit a usage limit (You've hit your usage limit); it should \
                 reset around "
            ) && reason.ends_with("continue with `tether resume` then"),
            "{reason}"
        );
        // Resumed after the reset, the same iteration runs.
        exec.steps
            .lock()
            .unwrap()
            .push_back(Step::Say("<promise>DONE</promise>"));
        let end = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
            .await
            .unwrap();
        assert_eq!(end, RalphEnd::PromiseKept { iteration: 1 });
    }
}

/// Starts a run whose first turn hits a limit with a long wait, and returns once the wait is
/// recorded.
async fn waiting_run(
    f: &Fixture,
    interrupt: CancellationToken,
) -> (Deps, tether_store::RunId, tokio::task::JoinHandle<RalphEnd>) {
    let exec = Scripted::new(vec![Step::Limit(None)]);
    let deps = f.deps(exec, long());
    let d = deps.clone();
    let task =
        tokio::spawn(async move { ralph::start(&d, spec(), interrupt, |_| {}).await.unwrap().1 });
    let store = Store::open(f.ws.db_path()).unwrap();
    let run = wait_until_async("the wait is recorded", Duration::from_secs(10), || {
        let run = store.latest_run().ok()??;
        run.state.usage_limit.is_some().then_some(run.id)
    })
    .await
    .unwrap();
    (deps, run, task)
}

#[tokio::test]
async fn cancel_ends_a_wait_at_once() {
    let f = Fixture::new();
    let (deps, run, task) = waiting_run(&f, CancellationToken::new()).await;
    let wait = deps.journal.state(&run).unwrap().usage_limit.unwrap();
    assert_eq!(wait.n, 1);
    assert!(wait.until_ms > tether_store::now_ms() + 1_000_000);
    let other = Store::open(f.ws.db_path()).unwrap();
    other
        .append(Some(&run), &Event::CancelRequested { by: "test".into() })
        .unwrap();
    let end = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end, RalphEnd::Stopped(Stopped::Cancelled));
    let state = other.run(&run).unwrap().state;
    assert_eq!(state.status, RunStatus::Cancelled);
    assert_eq!(state.usage_limit, None);
}

#[tokio::test]
async fn ctrl_c_and_pause_end_a_wait_too() {
    let f = Fixture::new();
    let interrupt = CancellationToken::new();
    let (deps, run, task) = waiting_run(&f, interrupt.clone()).await;
    interrupt.cancel();
    let end = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end, RalphEnd::Stopped(Stopped::Interrupted));
    assert_eq!(deps.journal.state(&run).unwrap().iteration, 0);

    let f = Fixture::new();
    let (_, run, task) = waiting_run(&f, CancellationToken::new()).await;
    let other = Store::open(f.ws.db_path()).unwrap();
    other
        .append(
            Some(&run),
            &Event::PauseRequested {
                by: "test".into(),
                author: tether_store::Author::Person,
            },
        )
        .unwrap();
    let end = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(end, RalphEnd::Stopped(Stopped::Paused { .. })),
        "{end:?}"
    );
}

//! A run composed by `Launch` and driven on the caller's runtime: its id and events reach the
//! caller, it ends on its own whether or not anyone waits for it, and it can be cancelled; a goal
//! run's scope, set on its spec, reaches the loop.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::{DEADLINE, Refuse};
use tether_config::{MapEnv, Workspace};
use tether_core::looping::LoopError;
use tether_core::ralph::{RalphEnd, Stopped};
use tether_human::Console;
use tether_runtime::launch::{Begun, End, Launch, Log, Place, Prepared, RunSpec};
use tether_runtime::{Error, Host};
use tether_store::{Budget, Event};
use tokio::sync::broadcast::Receiver;

/// A workspace whose agent is `script`, run by `sh -c` per turn, with the sandbox off (the
/// machine running the tests may not enforce it).
fn workspace(dir: &Path, script: &str) -> Workspace {
    let toml = format!(
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {script:?}]\n\n\
         [sandbox]\nmode = \"off\"\n"
    );
    std::fs::write(dir.join("tether.toml"), toml).unwrap();
    Workspace::at(dir)
}

/// A Ralph run of `ws` with the promise `DONE`, composed on `runtime`.
fn prepare(ws: &Workspace, runtime: &tokio::runtime::Runtime) -> Prepared {
    let config = tether_config::load(tether_runtime::schema(), ws.root(), &MapEnv::new())
        .unwrap()
        .config;
    let spec = RunSpec::ralph(
        &config,
        "Say the promise.".into(),
        Some("DONE".into()),
        Some(3),
        Budget::default(),
    );
    prepare_spec(ws, runtime, spec)
}

/// Run `spec` of `ws`, composed on `runtime`.
fn prepare_spec(ws: &Workspace, runtime: &tokio::runtime::Runtime, spec: RunSpec) -> Prepared {
    runtime.block_on(compose(ws, spec)).unwrap()
}

/// Run `spec` of `ws`, composed, or why not.
async fn compose(ws: &Workspace, spec: RunSpec) -> tether_runtime::Result<Prepared> {
    let env = MapEnv::new();
    let loaded = tether_config::load(tether_runtime::schema(), ws.root(), &env).unwrap();
    let launch = Launch {
        ws: ws.clone(),
        bounds: tether_runtime::bounds::for_new_run(ws, &loaded),
        config: loaded.config,
        spec,
        place: Place {
            worktree: false,
            commit: false,
        },
        placement: None,
        sinks: Vec::new(),
        console: Console::Absent,
        by: "test".into(),
        notice_grace: Duration::from_secs(1),
        observer: Arc::new(Log),
        host: Host::new(Arc::new(Refuse)),
        pool: None,
    };
    launch.prepare(&env).await
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The events received until the run finished.
async fn until_finished(events: &mut Receiver<tether_store::StoredEvent>) -> Vec<String> {
    let mut kinds = Vec::new();
    loop {
        let event = events.recv().await.unwrap();
        kinds.push(event.kind.clone());
        if matches!(event.event, Some(Event::RunFinished { .. })) {
            return kinds;
        }
    }
}

#[test]
fn a_run_tells_its_id_and_events_and_ends_as_its_loop_does() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), "echo '<promise>DONE</promise>'");
    let runtime = runtime();
    let prepared = prepare(&ws, &runtime);
    let mut events = prepared.events();
    let mut handle = prepared.start(runtime.handle());
    let finished = runtime.block_on(async {
        let id = tokio::time::timeout(DEADLINE, handle.started())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(handle.run_id(), Some(id.clone()));
        let finished = tokio::time::timeout(DEADLINE, handle.finished())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(finished.run, id);
        finished
    });
    assert!(
        matches!(
            finished.end,
            End::Ralph(RalphEnd::PromiseKept { iteration: 1 })
        ),
        "{:?}",
        finished.end
    );
    let kinds = runtime.block_on(until_finished(&mut events));
    assert_eq!(
        kinds.first().map(String::as_str),
        Some("run_started"),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"iteration_started".to_owned()), "{kinds:?}");
    // The run's report is written beside its transcripts.
    let report = finished.report.unwrap();
    assert!(report.starts_with(ws.runs_dir().join(finished.run.as_str())));
    assert!(
        std::fs::read_to_string(report)
            .unwrap()
            .contains(finished.run.as_str())
    );
}

#[test]
fn a_run_goes_on_to_its_end_when_nobody_waits_for_its_handle() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), "sleep 0.2; echo '<promise>DONE</promise>'");
    let runtime = runtime();
    let prepared = prepare(&ws, &runtime);
    let mut events = prepared.events();
    drop(prepared.start(runtime.handle()));
    let kinds = runtime.block_on(async {
        tokio::time::timeout(DEADLINE, until_finished(&mut events))
            .await
            .unwrap()
    });
    assert_eq!(kinds.last().map(String::as_str), Some("run_finished"));
    let store = tether_store::Store::open(ws.db_path()).unwrap();
    let run = store.runs(1).unwrap().remove(0);
    assert_eq!(run.state.status.as_str(), "completed");
}

#[test]
fn a_cancelled_run_stops_its_agent_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), "sleep 300");
    let runtime = runtime();
    let mut handle = prepare(&ws, &runtime).start(runtime.handle());
    let finished = runtime.block_on(async {
        tokio::time::timeout(DEADLINE, handle.started())
            .await
            .unwrap()
            .unwrap();
        handle.cancel("test").unwrap();
        tokio::time::timeout(DEADLINE, handle.finished())
            .await
            .unwrap()
            .unwrap()
    });
    assert!(
        matches!(
            finished.end,
            End::Ralph(RalphEnd::Stopped(Stopped::Cancelled))
        ),
        "{:?}",
        finished.end
    );
}

#[test]
fn resuming_a_run_that_ended_is_refused_every_time_never_reported_under_way() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), "echo '<promise>DONE</promise>'");
    let runtime = runtime();
    let id = runtime
        .block_on(prepare(&ws, &runtime).start(runtime.handle()).finished())
        .unwrap()
        .run;
    // The refusal ends the task as it drops the id it would tell; the order the two are seen
    // in must not matter, so it is tried many times.
    for attempt in 0..100 {
        let prepared = prepare_spec(&ws, &runtime, RunSpec::Resume(id.clone()));
        let handle = prepared.start(runtime.handle());
        let begun = runtime.block_on(async {
            tokio::time::timeout(DEADLINE, handle.begun())
                .await
                .unwrap()
        });
        match begun {
            Err(e) => assert!(e.to_string().contains("already ended"), "{e}"),
            Ok(Begun::Going(..)) => panic!("attempt {attempt}: reported under way"),
            Ok(Begun::Over(finished)) => panic!("attempt {attempt}: ended {:?}", finished.end),
        }
    }
}

#[test]
fn a_goal_run_takes_its_scope_from_its_spec() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path(), "true");
    std::fs::write(
        dir.path().join("plan.md"),
        "# Plan: demo\n\n## Goal: Greeting\n<!-- id: greet -->\nstatus: active\n\
         done_when: hello.txt says hello\n\n## Log\n",
    )
    .unwrap();
    let config = tether_config::load(tether_runtime::schema(), ws.root(), &MapEnv::new())
        .unwrap()
        .config;
    let spec = RunSpec::goal(&config, Some(3), Budget::default(), true);
    let RunSpec::Goal(mut goal) = spec else {
        panic!("{spec:?}")
    };
    assert_eq!(goal.scope, None, "no scope unless asked for");
    goal.scope = Some(["nope".to_owned()].into());
    let refused = runtime().block_on(compose(&ws, RunSpec::Goal(goal)));
    assert!(
        matches!(
            refused,
            Err(Error::Loop(LoopError::ScopeNotInPlan { ref goals, .. })) if goals == &["nope"]
        ),
        "{:?}",
        refused.err()
    );
}

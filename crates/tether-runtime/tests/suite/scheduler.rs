//! The scheduler of `tether schedule run`, driven in the test's process against a real store and
//! real agent processes (a shell script that waits for a file `go`): a fire whose lease another
//! scheduler took over has its run interrupted and is left to the other; a look at the
//! schedules while a fire of its own goes on claims nothing, whatever that fire's lease says;
//! a fire whose scheduler died is recorded abandoned, naming its run.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::{DEADLINE, Refuse};
use tether_config::{MapEnv, Workspace};
use tether_core::schedule::Timing;
use tether_runtime::Host;
use tether_runtime::scheduler::{self, Scheduler, Work};
use tether_store::{Holder, RunId, Store};
use tokio_util::sync::CancellationToken;

/// The agent: waits for `go`, then keeps its promise.
const AGENT: &str = "while [ ! -f go ]; do sleep 0.05; done; echo '<promise>DONE</promise>'";

/// A workspace whose agent is [`AGENT`], with the sandbox off (the machine running the tests
/// may not enforce it), and its schedule `slow` firing every second.
fn workspace(dir: &Path) -> Workspace {
    let toml = format!(
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"-c\", {AGENT:?}]\n\n\
         [sandbox]\nmode = \"off\"\n\n[schedule]\npoll_secs = 1\n"
    );
    std::fs::write(dir.join("tether.toml"), toml).unwrap();
    let ws = Workspace::at(dir);
    let work = Work::Ralph {
        prompt: "wait for go".into(),
        completion_promise: "DONE".into(),
        max_iterations: Some(3),
        worktree: false,
    };
    let timing = Timing::every("1s").unwrap();
    scheduler::add(&ws, &MapEnv::new(), "slow", &timing, &work).unwrap();
    ws
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// What a scheduler said, line by line.
struct Heard(Receiver<String>);

impl Heard {
    /// The first line from now on containing `what`, waited for until the deadline.
    fn until(&self, what: &str) -> String {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.0.recv_timeout(left) {
                Ok(line) if line.contains(what) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("the scheduler never said {what:?}")
                }
            }
        }
    }
}

/// The scheduler of `ws` holding each fire for `lease`, made on `runtime`, and what it says.
fn scheduler(
    ws: &Workspace,
    runtime: &tokio::runtime::Runtime,
    lease: Duration,
) -> (Arc<Scheduler>, Heard) {
    let (tx, rx) = std::sync::mpsc::channel();
    let said: scheduler::Said = Arc::new(move |line: &str| {
        let _ = tx.send(line.to_owned());
    });
    let _entered = runtime.enter();
    let env = Arc::new(MapEnv::new());
    let host = Host::new(Arc::new(Refuse));
    let scheduler = Scheduler::leasing(ws.clone(), env, host, said, lease).unwrap();
    (Arc::new(scheduler), Heard(rx))
}

/// The run a "fired" line names.
fn fired_run(line: &str) -> RunId {
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

fn store(ws: &Workspace) -> (Store, PathBuf) {
    (Store::open(ws.db_path()).unwrap(), scheduler::key_of(ws))
}

#[test]
fn a_fire_another_scheduler_took_over_has_its_run_interrupted_and_left_unended() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let runtime = runtime();
    // A short lease, renewed every 300 ms, so the take-over is learnt soon.
    let (scheduler, heard) = scheduler(&ws, &runtime, Duration::from_millis(1_200));
    let stop = CancellationToken::new();
    let running = {
        let stop = stop.clone();
        runtime.spawn(async move { scheduler.run(stop, CancellationToken::new()).await })
    };
    let run = fired_run(&heard.until("schedule slow fired: run "));

    // Another scheduler takes the fire over once its lease lapsed (made to lapse here, as a
    // suspended machine's would).
    let (store, key) = store(&ws);
    let deadline = Instant::now() + DEADLINE;
    let taken = loop {
        assert!(Instant::now() < deadline, "the fire was never taken over");
        let seen = store.schedule(&key, "slow").unwrap().fire;
        let _ = store.renew_schedule_fire(&key, "slow", seen, -1);
        let elsewhere = Holder::this_process(&key);
        let claim = store
            .claim_schedule_fire(
                &key,
                "slow",
                seen,
                tether_store::now_ms(),
                &elsewhere,
                600_000,
            )
            .unwrap();
        if let Some(claim) = claim {
            break claim;
        }
    };

    heard.until("its fire is no longer this scheduler's (another scheduler fired it since)");
    let said = heard.until("interrupted");
    assert!(said.contains(&format!("run {run} interrupted")), "{said}");
    assert!(said.contains(&format!("tether resume {run}")), "{said}");
    stop.cancel();
    runtime
        .block_on(async { tokio::time::timeout(DEADLINE, running).await })
        .unwrap()
        .unwrap();
    // Interrupted, so it can be resumed: not done, not failed.
    let state = store.run(&run).unwrap().state;
    assert_eq!(
        (state.status.as_str(), state.outcome.map(|o| o.as_str())),
        ("paused", Some("interrupted"))
    );
    // The other's fire stands: this scheduler neither ended it nor fired again over it.
    let slow = store.schedule(&key, "slow").unwrap();
    assert_eq!(slow.fire, taken.token);
    assert!(slow.firing(tether_store::now_ms()));
    assert_eq!(slow.last_outcome, None);
    assert_eq!(store.runs(10).unwrap().len(), 1, "fired again");
}

#[test]
fn a_look_while_a_fire_of_its_own_goes_on_claims_nothing_whatever_its_lease_says() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let runtime = runtime();
    let (scheduler, heard) = scheduler(&ws, &runtime, scheduler::FIRE_LEASE);
    let (store, key) = store(&ws);
    let first = tether_store::now_ms() + 1_000;
    runtime.block_on(scheduler.tick(first)).unwrap();
    let run = fired_run(&heard.until("schedule slow fired: run "));
    let fire = store.schedule(&key, "slow").unwrap().fire;

    // Its lease lapses while its run works (as over a laptop's suspend), and it is due again.
    store.renew_schedule_fire(&key, "slow", fire, -1).unwrap();
    runtime.block_on(scheduler.tick(first + 5_000)).unwrap();
    let slow = store.schedule(&key, "slow").unwrap();
    assert_eq!(slow.fire, fire, "claimed again over its own run");
    assert_eq!(store.runs(10).unwrap().len(), 1);

    // Its run ends done, and its end is recorded under its own token.
    std::fs::write(dir.path().join("go"), "").unwrap();
    let said = heard.until(&format!("run {run} done"));
    assert!(said.contains("0 failure(s) in a row"), "{said}");
    let slow = store.schedule(&key, "slow").unwrap();
    assert_eq!(slow.last_run, Some(run));
    assert_eq!(slow.expires_at_ms, 0);
}

#[test]
fn a_fire_whose_scheduler_died_is_recorded_abandoned_naming_its_run() {
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace(dir.path());
    let (store, key) = store(&ws);
    let run = {
        let runtime = runtime();
        let (scheduler, heard) = scheduler(&ws, &runtime, Duration::from_millis(1_200));
        runtime
            .block_on(scheduler.tick(tether_store::now_ms() + 1_000))
            .unwrap();
        let run = fired_run(&heard.until("schedule slow fired: run "));
        // Its run is named as soon as it started, not only at its end.
        let slow = store.schedule(&key, "slow").unwrap();
        assert_eq!(slow.last_run.as_ref(), Some(&run));
        assert_eq!(slow.last_outcome, None);
        // Paused, so no scheduler fires it again over what is found below.
        store.pause_schedule(&key, "slow", true).unwrap();
        // The scheduler dies with its runtime: nothing renews the fire any more.
        runtime.shutdown_background();
        run
    };
    let deadline = Instant::now() + DEADLINE;
    while store
        .schedule(&key, "slow")
        .unwrap()
        .firing(tether_store::now_ms())
    {
        assert!(Instant::now() < deadline, "the lease never lapsed");
        std::thread::sleep(Duration::from_millis(20));
    }

    let runtime = runtime();
    let (scheduler, heard) = scheduler(&ws, &runtime, scheduler::FIRE_LEASE);
    runtime
        .block_on(scheduler.tick(tether_store::now_ms()))
        .unwrap();
    let said = heard.until("abandoned");
    assert!(
        said.contains(&format!("its scheduler stopped while run {run} worked")),
        "{said}"
    );
    let listed = scheduler::list(&ws, &MapEnv::new(), tether_store::now_ms()).unwrap();
    let outcome = listed[0].last_outcome.as_deref().unwrap();
    assert!(
        outcome.starts_with(&format!(
            "abandoned: its scheduler stopped while run {run} worked"
        )),
        "{outcome}"
    );
    assert_eq!(listed[0].last_run.as_deref(), Some(run.as_str()));
    assert_eq!(
        (listed[0].firing, listed[0].consecutive_failures),
        (false, 0)
    );
}

//! A run of many goals on many machines: `tether run --parallel 3 --workers` offers its goals in
//! the team store and three `tether worker` processes (each a machine of its own, its own
//! clone of the repository from a bare repository standing for the shared remote) claim them,
//! sign them off and push them; the coordinator merges each into the run's branch.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

use tether_store::{GoalState, Store};
use tether_store_pg::TeamStore;

use std::sync::Arc;

use tether_testkit::postgres::PgCluster;
use tether_testkit::wait_until;

use super::database;
use crate::common::fleet::{agent, own, plan_of, settling_agent};
use crate::common::{PATIENCE, cmd, sh, text};
use crate::suite::fleet::{
    Worker, clash_then_later, clashing, prepare_fleet, slow_agent_told, three,
};

/// Eight goals in four layers.
fn eight() -> String {
    plan_of(
        "eight",
        &[
            ("a", &[], "test -f a.txt"),
            ("b", &[], "test -f b.txt"),
            ("c", &[], "test -f c.txt"),
            ("d", &["a"], "test -f a.txt && test -f d.txt"),
            ("e", &["a", "b"], "test -f b.txt && test -f e.txt"),
            ("f", &["c"], "test -f c.txt && test -f f.txt"),
            (
                "g",
                &["d", "e"],
                "test -f d.txt && test -f e.txt && test -f g.txt",
            ),
            (
                "h",
                &["f", "g"],
                "test -f f.txt && test -f g.txt && test -f h.txt",
            ),
        ],
    )
}

/// `tether worker` as machine `name`, in a directory of its own, polling every second.
fn worker(db: &str, name: &str, home: &Path) -> Child {
    let dir = home.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = cmd(&dir, &["worker", "--poll", "1", "--dir"]);
    c.arg(dir.join("work"))
        .env("TETHER_STORE_URL", db)
        .env("TETHER_MACHINE", name)
        .env("XDG_STATE_HOME", dir.join("state"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

/// The coordinator, waited for to its end: many goals through several processes on a loaded
/// machine may take longer than one command.
fn finish(mut coordinator: Child) -> Output {
    crate::common::wait_exit_within(&mut coordinator, 3 * PATIENCE);
    coordinator.wait_with_output().unwrap()
}

fn stop(child: Child) -> String {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let out = child.wait_with_output().unwrap();
    text(&out.stderr)
}

/// A repository of `plan` whose goals `agent` works, with a bare repository standing for its
/// shared remote (`origin`), and the directory the workers live in.
struct Team {
    dir: tempfile::TempDir,
    servers: crate::suite::fleet::Servers,
    bare: std::path::PathBuf,
    _remote: tempfile::TempDir,
    homes: tempfile::TempDir,
}

impl Team {
    fn new(plan: &str, agent: tether_model::scripted::Script) -> Team {
        Team::on(plan, agent, own)
    }

    /// [`Team::new`] judged on the files `file_of` names.
    fn on(
        plan: &str,
        agent: tether_model::scripted::Script,
        file_of: crate::common::fleet::FileOf,
    ) -> Team {
        Team::build(plan, agent, file_of, "")
    }

    /// [`Team::on`] with `toml` added to the configuration.
    fn build(
        plan: &str,
        agent: tether_model::scripted::Script,
        file_of: crate::common::fleet::FileOf,
        toml: &str,
    ) -> Team {
        let (dir, servers) = prepare_fleet(plan, Worker::Model(agent), file_of, toml);
        let remote = tempfile::tempdir().unwrap();
        let bare = remote.path().join("shared.git");
        sh(
            dir.path(),
            &format!(
                "git init -q --bare {bare} && git remote add origin {bare} \
                 && git push -q origin main",
                bare = bare.display()
            ),
        );
        Team {
            dir,
            servers,
            bare,
            _remote: remote,
            homes: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// `tether run --parallel <parallel> --workers --approve`, started.
    fn coordinate(&self, db: &str, parallel: &str) -> Child {
        cmd(
            self.root(),
            &["run", "--parallel", parallel, "--workers", "--approve"],
        )
        .env("TETHER_STORE_URL", db)
        .env("TETHER_MACHINE", "coord")
        .env("XDG_STATE_HOME", self.servers.3.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    }

    fn worker(&self, db: &str, name: &str) -> Child {
        worker(db, name, self.homes.path())
    }

    /// The workers `names` and the coordinator (`parallel` at once), to the coordinator's end:
    /// what it printed, and what each worker said once stopped.
    fn run(&self, db: &str, names: &[&str], parallel: &str) -> (Output, Vec<String>) {
        let workers: Vec<Child> = names.iter().map(|name| self.worker(db, name)).collect();
        let out = finish(self.coordinate(db, parallel));
        (out, workers.into_iter().map(stop).collect())
    }
}

fn team_store(url: &str) -> Store {
    Store::from_backend(Box::new(TeamStore::connect(url.parse().unwrap()).unwrap()))
}

#[test]
fn three_workers_sign_off_eight_goals_that_the_coordinator_merges_each_once() {
    let db = database();
    let team = Team::new(&eight(), agent(own));
    let (root, bare) = (team.root(), &team.bare);
    let (out, said) = team.run(&db.url(), &["w1", "w2", "w3"], "3");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{said:#?}");
    assert!(
        stdout.starts_with("all goals merged into tether/r-"),
        "{stdout}"
    );

    let store = team_store(&db.url());
    let fleet = store.fleets(1).unwrap().remove(0);
    assert_eq!(fleet.outcome.as_deref(), Some("all_merged"));
    assert_eq!(fleet.remote.as_deref(), Some(bare.to_str().unwrap()));
    let mut machines = std::collections::BTreeSet::new();
    for goal in &fleet.goals {
        assert_eq!(goal.state, GoalState::Merged, "{goal:?}");
        let machine = goal.machine.clone().unwrap();
        assert!(["w1", "w2", "w3"].contains(&machine.as_str()), "{goal:?}");
        machines.insert(machine);
        // Signed off once: one accept, by one goal run.
        let run = goal.run_id.clone().unwrap();
        let accepts = store
            .verdicts_for_run(&run)
            .unwrap()
            .iter()
            .filter(|v| v.decision.verdict == tether_store::Verdict::Accept)
            .count();
        assert_eq!(accepts, 1, "{goal:?}");
    }
    assert!(
        machines.len() >= 2,
        "one worker did everything: {machines:?}"
    );
    // The run's branch holds every goal's work, here and on the shared remote.
    for goal in ["a", "b", "c", "d", "e", "f", "g", "h"] {
        assert_eq!(
            sh(root, &format!("git show {}:{goal}.txt", fleet.branch)),
            format!("done {goal}\n")
        );
    }
    assert_eq!(
        sh(root, &format!("git rev-parse {}", fleet.branch)),
        sh(
            root,
            &format!(
                "git ls-remote {} refs/heads/{}",
                bare.display(),
                fleet.branch
            )
        )
        .split('\t')
        .next()
        .unwrap()
        .to_owned()
            + "\n"
    );
}

/// One goal whose agent's first turn is long.
fn one_slow() -> String {
    plan_of("one slow goal", &[("slow", &[], "test -f slow.txt")])
}

#[test]
fn a_worker_killed_mid_goal_has_its_goal_taken_over_by_another_once_its_lease_lapses() {
    let db = database();
    let (agent, told) = slow_agent_told();
    let team = Team::new(&one_slow(), agent);
    let mut first = team.worker(&db.url(), "w1");
    let coordinator = team.coordinate(&db.url(), "1");
    let store = team_store(&db.url());
    // Killed in the middle of its agent's long command.
    let killed = wait_until("w1's agent to be at work", PATIENCE, || {
        let fleet = store.fleets(1).ok()?.into_iter().next()?;
        let goal = fleet.goals.into_iter().next()?;
        let at_work = told.load(std::sync::atomic::Ordering::SeqCst);
        (at_work && goal.machine.as_deref() == Some("w1"))
            .then_some(goal.run_id)
            .flatten()
    })
    .unwrap();
    first.kill().unwrap();
    first.wait().unwrap();
    let second = team.worker(&db.url(), "w2");
    // The lease lapses first (15 s), then w2 works the goal.
    let out = finish(coordinator);
    let said = stop(second);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{said}");
    let fleet = store.fleets(1).unwrap().remove(0);
    let goal = &fleet.goals[0];
    assert_eq!(goal.state, GoalState::Merged);
    // w2 took it over with a run of its own; the killed worker's run signed nothing off.
    assert_eq!(goal.machine.as_deref(), Some("w2"));
    assert_ne!(goal.run_id.as_ref(), Some(&killed));
    assert!(
        store
            .verdicts_for_run(&killed)
            .unwrap()
            .iter()
            .all(|v| v.decision.verdict != tether_store::Verdict::Accept)
    );
    assert_eq!(
        sh(team.root(), &format!("git show {}:slow.txt", fleet.branch)),
        "done slow\n"
    );
}

#[test]
fn the_team_database_restarted_mid_run_loses_nothing_and_does_nothing_twice() {
    // A cluster of its own: restarting the shared one would cut other tests' connections.
    let cluster = Arc::new(PgCluster::start().expect("PostgreSQL for the tests (run ./test.sh)"));
    let db = PgCluster::create_database(&cluster).unwrap();
    let team = Team::new(&three(), agent(own));
    let workers: Vec<Child> = ["w1", "w2"]
        .into_iter()
        .map(|name| team.worker(&db.url(), name))
        .collect();
    let coordinator = team.coordinate(&db.url(), "1");
    let store = team_store(&db.url());
    wait_until("a first goal merged", PATIENCE, || {
        let fleet = store.fleets(1).ok()?.into_iter().next()?;
        fleet
            .goals
            .iter()
            .any(|g| g.state == GoalState::Merged)
            .then_some(())
    })
    .unwrap();
    cluster.restart().unwrap();
    let out = finish(coordinator);
    let said: Vec<String> = workers.into_iter().map(stop).collect();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{said:#?}");
    let store = team_store(&db.url());
    let fleet = store.fleets(1).unwrap().remove(0);
    for goal in &fleet.goals {
        assert_eq!(goal.state, GoalState::Merged, "{goal:?}");
        let accepts = store
            .verdicts_for_run(goal.run_id.as_ref().unwrap())
            .unwrap()
            .iter()
            .filter(|v| v.decision.verdict == tether_store::Verdict::Accept)
            .count();
        assert_eq!(accepts, 1, "{goal:?}");
    }
}

#[test]
fn a_conflicting_merge_is_settled_by_the_goals_agent_on_a_worker() {
    let db = database();
    let settled = "done first, kept\ndone second, kept\n";
    let team = Team::on(
        &clash_then_later(),
        settling_agent(clashing, Some(settled)),
        clashing,
    );
    let (out, said) = team.run(&db.url(), &["w1", "w2"], "2");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}\n{said:#?}");
    assert!(
        stderr.contains(
            "conflicts with the run's branch in plan.md, shared.txt: its agent settles it"
        ),
        "{stderr}"
    );
    let fleet = team_store(&db.url()).fleets(1).unwrap().remove(0);
    assert_eq!(
        sh(
            team.root(),
            &format!("git show {}:shared.txt", fleet.branch)
        ),
        settled
    );
    assert_eq!(
        sh(team.root(), &format!("git show {}:later.txt", fleet.branch)),
        "done later\n"
    );
    // The settling was a worker's: its goal's last run is a worker's, settling.
    assert!(said.iter().any(|s| s.contains(": signed off")), "{said:#?}");
}

#[test]
fn the_goals_on_workers_share_the_runs_budget_and_no_goal_is_offered_once_it_is_spent() {
    let db = database();
    // Two iterations for the whole run, whichever workers spend them.
    let team = Team::build(&three(), agent(own), own, "[loop]\nmax_iterations = 2\n");
    let (out, said) = team.run(&db.url(), &["w1", "w2"], "2");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(4), "{stdout}\n{stderr}\n{said:#?}");
    assert!(
        stdout.contains("stopped with goals not merged: three")
            && stdout.contains("the goals' shared iteration budget spent: 2 iterations of 2"),
        "{stdout}"
    );
    let fleet = team_store(&db.url()).fleets(1).unwrap().remove(0);
    assert_eq!(fleet.budget.and_then(|b| b.iterations), Some(2));
    assert_eq!(fleet.goals[2].run_id, None, "three was never offered");
}

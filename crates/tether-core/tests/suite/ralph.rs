//! The Ralph loop driven by a scripted in-test executor: every ending, and resuming.

use std::sync::Arc;
use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_core::ralph::{self, Deps, LoopError, RalphEnd, RalphSpec, Stopped};
use tether_human::{Console, Desk};
use tether_store::Journal;
use tether_store::{Event, RunStatus, Store};
use tokio_util::sync::CancellationToken;

use crate::common::{Scripted, Step};

struct Fixture {
    _dir: tempfile::TempDir,
    ws: Workspace,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        Fixture { _dir: dir, ws }
    }
    fn deps(&self, exec: Arc<Scripted>) -> Deps {
        let store = Store::open(self.ws.db_path()).unwrap();
        let journal = Journal::new(store, Vec::new()).unwrap();
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
            usage: tether_core::looping::UsageWaits::default(),
            price: None,
            loop_judge: None,
            env_remove: Vec::new(),
            git: tether_git::Confinement::default(),
            isolation: Default::default(),
            bounds: None,
            pool: None,
        }
    }
    fn kinds(&self, deps: &Deps, run: &tether_store::RunId) -> Vec<String> {
        let store = deps.journal.store();
        store
            .events(run, tether_store::Seq(0), usize::MAX)
            .unwrap()
            .into_iter()
            .map(|e| match e.event.unwrap() {
                Event::IterationStarted { n } => format!("start {n}"),
                Event::IterationCompleted { n, summary } => format!("done {n}: {summary}"),
                Event::IterationFailed { n, error } => format!("fail {n}: {error}"),
                Event::ToolCalled { n, summary, .. } => format!("tool {n}: {summary}"),
                Event::RunFinished { outcome } => format!("finished {}", outcome.as_str()),
                other => other.kind().to_owned(),
            })
            .collect()
    }
}

fn spec(promise: Option<&str>, max: Option<u32>) -> RalphSpec {
    RalphSpec {
        prompt: "Do the thing.".into(),
        promise: promise.map(str::to_owned),
        max_iterations: max,
        budget: tether_store::Budget::default(),
        max_consecutive_failures: 3,
    }
}

async fn start(deps: &Deps, spec: RalphSpec) -> (tether_store::RunId, RalphEnd) {
    ralph::start(deps, spec, CancellationToken::new(), |_| {})
        .await
        .unwrap()
}

#[tokio::test]
async fn promise_kept_early_stops_the_loop() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![
        Step::Say("working"),
        Step::Say("done <promise>DONE</promise>"),
    ]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some("DONE"), Some(5))).await;
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 2 });
    insta::assert_debug_snapshot!(f.kinds(&deps, &run));
    let prompts = exec.prompts.lock().unwrap();
    assert_eq!(prompts.len(), 2);
    assert_eq!(
        prompts[0], prompts[1],
        "every iteration gets the same prompt"
    );
    assert_eq!(
        deps.journal.state(&run).unwrap().status,
        RunStatus::Completed
    );
}

#[tokio::test]
async fn a_promise_on_the_last_iteration_is_success() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![Step::Say("a"), Step::Say("<promise> DONE </promise>")]);
    let deps = f.deps(exec);
    let (_, end) = start(&deps, spec(Some("DONE"), Some(2))).await;
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 2 });
}

#[tokio::test]
async fn no_promise_spends_the_budget() {
    let f = Fixture::new();
    let deps = f.deps(Scripted::new(vec![]));
    let (run, end) = start(&deps, spec(Some("DONE"), Some(3))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 3 })
    );
    let kinds = f.kinds(&deps, &run);
    assert_eq!(kinds.last().unwrap(), "finished budget_exhausted");
    assert_eq!(kinds.iter().filter(|k| k.starts_with("start")).count(), 3);
}

#[tokio::test]
async fn only_the_first_tag_counts() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![Step::Say(
        "<promise>NOT YET</promise> <promise>DONE</promise>",
    )]);
    let deps = f.deps(exec);
    let (_, end) = start(&deps, spec(Some("DONE"), Some(1))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 1 })
    );
}

#[tokio::test]
async fn failures_then_recovery_and_the_failure_limit() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![
        Step::Fail("rate limited"),
        Step::Fail("rate limited"),
        Step::Say("<promise>DONE</promise>"),
    ]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(Some("DONE"), Some(10))).await;
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 3 });
    assert!(
        f.kinds(&deps, &run)
            .contains(&"fail 1: the agent's model failed: rate limited".to_owned())
    );

    let f = Fixture::new();
    let exec = Scripted::new(vec![Step::Fail("a"), Step::Fail("b"), Step::Fail("c")]);
    let deps = f.deps(exec);
    let (_, end) = start(&deps, spec(Some("DONE"), Some(10))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::Failed {
            iteration: 3,
            error: "the agent's model failed: c".into()
        })
    );
}

#[tokio::test]
async fn cancel_from_another_connection_stops_a_running_iteration() {
    let f = Fixture::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let exec = Scripted::new(vec![Step::Say("one"), Step::Hang(started.clone())]);
    let deps = f.deps(exec);
    let loop_deps = deps.clone();
    let task = tokio::spawn(async move { start(&loop_deps, spec(None, Some(10))).await });
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    let other = Store::open(f.ws.db_path()).unwrap();
    let run = other.latest_run().unwrap().unwrap().id;
    other
        .append(Some(&run), &Event::CancelRequested { by: "test".into() })
        .unwrap();
    let (_, end) = tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(end, RalphEnd::Stopped(Stopped::Cancelled));
    assert_eq!(other.run(&run).unwrap().state.status, RunStatus::Cancelled);
}

#[tokio::test]
async fn pause_stops_at_the_boundary_and_resume_continues() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![Step::Say("one")]);
    let deps = f.deps(exec.clone());
    // Request a pause before the loop starts its first iteration.
    let store = Store::open(f.ws.db_path()).unwrap();
    let (run, end) = ralph::start(
        &deps,
        spec(Some("DONE"), Some(10)),
        CancellationToken::new(),
        |run| {
            store
                .append(
                    Some(run),
                    &Event::PauseRequested {
                        by: "test".into(),
                        author: tether_store::Author::Person,
                    },
                )
                .unwrap();
        },
    )
    .await
    .unwrap();
    assert!(
        matches!(end, RalphEnd::Stopped(Stopped::Paused { .. })),
        "{end:?}"
    );
    assert_eq!(deps.journal.state(&run).unwrap().iteration, 0);
    exec.steps
        .lock()
        .unwrap()
        .extend([Step::Say("two"), Step::Say("<promise>DONE</promise>")]);
    let end = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    // Iterations 1 ("one") and 2 ("two") run after the resume; 3 keeps the promise.
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 3 });
}

#[tokio::test]
async fn interrupt_then_resume_continues_from_the_last_completed_iteration() {
    let f = Fixture::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let exec = Scripted::new(vec![Step::Say("one"), Step::Hang(started.clone())]);
    let deps = f.deps(exec.clone());
    let interrupt = CancellationToken::new();
    let (d, i) = (deps.clone(), interrupt.clone());
    let task =
        tokio::spawn(
            async move { ralph::start(&d, spec(Some("DONE"), Some(10)), i, |_| {}).await },
        );
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    interrupt.cancel();
    let (run, end) = task.await.unwrap().unwrap();
    assert_eq!(end, RalphEnd::Stopped(Stopped::Interrupted));
    assert_eq!(deps.journal.state(&run).unwrap().iteration, 1);

    exec.steps
        .lock()
        .unwrap()
        .push_back(Step::Say("<promise>DONE</promise>"));
    let end = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 2 });
    let kinds = f.kinds(&deps, &run);
    assert_eq!(
        kinds.iter().filter(|k| *k == "start 2").count(),
        2,
        "{kinds:?}"
    );
}

#[tokio::test]
async fn resume_after_the_budget_resets_it_and_ended_runs_refuse() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(Some("DONE"), Some(2))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 2 })
    );
    let end = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 4 })
    );

    exec.steps
        .lock()
        .unwrap()
        .push_back(Step::Say("<promise>DONE</promise>"));
    let end = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap();
    assert_eq!(end, RalphEnd::PromiseKept { iteration: 5 });
    let err = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            LoopError::Ended {
                status: RunStatus::Completed,
                ..
            }
        ),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_run_driven_elsewhere_cannot_be_resumed() {
    let f = Fixture::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let exec = Scripted::new(vec![Step::Hang(started.clone())]);
    let deps = f.deps(exec);
    let interrupt = CancellationToken::new();
    let (d, i) = (deps.clone(), interrupt.clone());
    let task = tokio::spawn(async move { ralph::start(&d, spec(None, Some(3)), i, |_| {}).await });
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    let run = deps.journal.store().latest_run().unwrap().unwrap().id;
    let lock = tether_core::looping::lock_path(&f.ws, &run);
    assert_eq!(
        tether_core::run_lock::RunLock::holder(&lock),
        Some(std::process::id())
    );
    let err = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err, LoopError::Lock(_)), "{err:?}");
    interrupt.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(tether_core::run_lock::RunLock::holder(&lock), None);
}

/// An external agent's `ask_human` call that its MCP client gave up on (as `tether mcp`
/// records it): the run is not blocked on the question, and the answer a person gives later
/// reaches the next prompt, once.
#[tokio::test]
async fn an_answer_given_after_the_asker_gave_up_reaches_the_next_prompt_once() {
    use tether_store::{NewQuestion, QuestionStatus};
    let f = Fixture::new();
    let exec = Scripted::new(vec![crate::common::work(|root| {
        let store = Store::open(root.join(".tether/tether.db")).unwrap();
        let run = store.latest_run().unwrap().unwrap().id;
        let q = store
            .insert_question(&NewQuestion {
                run_id: Some(run.clone()),
                question: "Which port?".into(),
                ..NewQuestion::default()
            })
            .unwrap();
        assert_eq!(
            store.run(&run).unwrap().state.status,
            RunStatus::WaitingForInput
        );
        assert!(
            store
                .abandon_question(&q.id, "the asking client gave up")
                .unwrap()
        );
        let state = store.run(&run).unwrap().state;
        assert_eq!(state.status, RunStatus::Running);
        assert_eq!(state.abandoned_questions, std::slice::from_ref(&q.id));
        let answered = store.answer_question(&q.id, "8080", "cli", "ana").unwrap();
        assert!(matches!(answered, tether_store::AnswerOutcome::Answered(_)));
        assert_eq!(
            store.question(&q.id).unwrap().status,
            QuestionStatus::Answered
        );
    })]);
    let deps = f.deps(exec.clone());
    let (run, end) = start(&deps, spec(None, Some(3))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 3 })
    );
    let late = "A human has now answered a question you asked earlier, after your ask_human \
                call had stopped waiting for it. Use their answer; do not ask it again.\n\
                Question: Which port?\nAnswer: 8080";
    assert!(!exec.prompt(1).contains("Which port?"));
    assert!(exec.prompt(2).contains(late), "{}", exec.prompt(2));
    assert!(
        !exec.prompt(3).contains("Which port?"),
        "{}",
        exec.prompt(3)
    );
    let state = deps.journal.state(&run).unwrap();
    assert!(state.late_answers.is_empty() && state.abandoned_questions.is_empty());
    assert_eq!(state, deps.journal.store().rebuild_run_state(&run).unwrap());
}

#[tokio::test]
async fn each_turns_usage_is_journalled_and_summed_for_the_run() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![
        Step::Spend(1000, 200, None),
        Step::Say("no usage reported"),
        Step::Spend(500, 50, Some(0.25)),
    ]);
    let deps = f.deps(exec);
    let (run, end) = start(&deps, spec(None, Some(3))).await;
    assert_eq!(
        end,
        RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 3 })
    );
    let usage: Vec<Event> = deps
        .journal
        .store()
        .events(&run, tether_store::Seq(0), 100)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .filter_map(|e| match e {
            // The turn's wall time is whatever it was.
            Event::IterationUsage {
                duration_ms: _,
                n,
                input_tokens,
                cached_input_tokens,
                cache_write_input_tokens,
                output_tokens,
                cost_usd,
                goals,
            } => Some(Event::IterationUsage {
                n,
                input_tokens,
                cached_input_tokens,
                cache_write_input_tokens,
                output_tokens,
                cost_usd,
                goals,
                duration_ms: 0,
            }),
            _ => None,
        })
        .collect();
    let expected = vec![
        Event::IterationUsage {
            n: 1,
            input_tokens: 1000,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            goals: Vec::new(),
            duration_ms: 0,
            output_tokens: 200,
            cost_usd: None,
        },
        Event::IterationUsage {
            n: 3,
            input_tokens: 500,
            cached_input_tokens: 0,
            cache_write_input_tokens: 0,
            goals: Vec::new(),
            duration_ms: 0,
            output_tokens: 50,
            cost_usd: Some(0.25),
        },
    ];
    assert_eq!(usage, expected, "a turn reporting nothing records nothing");
    let state = deps.journal.state(&run).unwrap();
    assert_eq!(
        state.usage.describe(),
        "1500 in / 250 out tokens (≈ $0.2500)"
    );
}

#[tokio::test]
async fn a_priced_turn_costs_its_cache_reads_and_writes_at_their_own_rates() {
    let f = Fixture::new();
    let exec = Scripted::new(vec![Step::Cached(tether_config::TokenCounts {
        input: 1_000_000,
        cache_read: 600_000,
        cache_write: 300_000,
        output: 10_000,
    })]);
    let mut deps = f.deps(exec);
    deps.price = Some(tether_config::Price {
        input: 3.0,
        cache_read: 0.3,
        cache_write: 3.75,
        output: 15.0,
    });
    let (run, _) = start(&deps, spec(None, Some(1))).await;
    let state = deps.journal.state(&run).unwrap();
    // 0.1M fresh × $3 + 0.6M read × $0.3 + 0.3M written × $3.75 + 0.01M out × $15.
    let cost = state.usage.cost_usd.unwrap();
    assert!((cost - (0.3 + 0.18 + 1.125 + 0.15)).abs() < 1e-9, "{cost}");
    assert_eq!(
        state.usage.describe(),
        "1000000 in (600000 cache read, 300000 cache write) / 10000 out tokens (≈ $1.7550)"
    );
}

/// A process whose run another process took over (its lease lapsed while it was paused, or it
/// was cut off from a shared store) learns it at its next heartbeat, stops its agent's turn,
/// writes nothing more, and ends as `LeaseLost`; the new holder keeps the run.
#[tokio::test]
async fn a_process_whose_run_was_taken_over_writes_nothing_more_and_stops() {
    use tether_store::{Claim, Holder, Seq};
    let f = Fixture::new();
    let started = Arc::new(tokio::sync::Notify::new());
    let exec = Scripted::new(vec![Step::Hang(started.clone())]);
    let deps = f.deps(exec);
    let (d, i) = (deps.clone(), CancellationToken::new());
    let task = tokio::spawn(async move { ralph::start(&d, spec(None, Some(3)), i, |_| {}).await });
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .unwrap();
    let other = Store::open(f.ws.db_path()).unwrap();
    let run = other.latest_run().unwrap().unwrap().id;
    let ours = other.run_lease(&run).unwrap().unwrap();
    assert_eq!(ours.holder.pid, std::process::id());
    // Another machine takes the run up (it knows this process is gone).
    let them = Holder {
        machine: "elsewhere".into(),
        pid: 1,
        workspace: "/elsewhere".into(),
    };
    let Claim::Claimed(theirs) = other.claim_run(&run, &them, 60_000, &|_| true).unwrap() else {
        panic!("not claimed")
    };
    let before = other.events(&run, Seq(0), usize::MAX).unwrap().len();
    let (_, end) = tokio::time::timeout(tether_core::looping::HEARTBEAT * 4, task)
        .await
        .expect("the loop stopped within a few heartbeats")
        .unwrap()
        .unwrap();
    assert!(
        matches!(end, RalphEnd::Stopped(Stopped::LeaseLost { .. })),
        "{end:?}"
    );
    assert_eq!(
        other.events(&run, Seq(0), usize::MAX).unwrap().len(),
        before,
        "the process that lost the run wrote after losing it"
    );
    assert_eq!(other.run_lease(&run).unwrap(), Some(theirs.clone()));
    // And this process cannot take it back while their lease is live.
    let err = ralph::resume(&deps, &run, "test", CancellationToken::new(), |_| {})
        .await
        .unwrap_err();
    match err {
        LoopError::Driven { holder, .. } => assert_eq!(holder, them),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn runs_sharing_a_pool_stop_once_they_have_spent_it_together() {
    let f = Fixture::new();
    let mut deps = f.deps(Scripted::new(vec![]));
    let limits = tether_store::Budget {
        iterations: Some(3),
        ..tether_store::Budget::default()
    };
    let pool = tether_core::looping::BudgetPool::new(limits, tether_store::now_ms());
    deps.pool = Some(pool.clone());
    // Each run alone may run ten iterations; together they may run three.
    let mut ends = Vec::new();
    for _ in 0..2 {
        let joined = pool.clone();
        let (run, end) = ralph::start(
            &deps,
            spec(Some("DONE"), Some(10)),
            CancellationToken::new(),
            move |run| joined.join(run),
        )
        .await
        .unwrap();
        let spent = deps.journal.state(&run).unwrap().budget_spent.unwrap();
        assert!(spent.shared && spent.goal_id.is_none(), "{spent:?}");
        ends.push(end);
    }
    assert_eq!(
        ends,
        [
            RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 3 }),
            RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 0 }),
        ]
    );
}

#[tokio::test]
async fn runs_of_a_run_of_many_goals_on_many_machines_share_the_budget_its_record_names() {
    let f = Fixture::new();
    let mut deps = f.deps(Scripted::new(vec![]));
    let fleet = tether_store::RunId::generate();
    deps.journal
        .store()
        .begin_fleet(&tether_store::NewFleet {
            id: fleet.clone(),
            workspace: f.ws.root().to_path_buf(),
            plan_path: "plan.md".into(),
            branch: format!("tether/{fleet}"),
            remote: Some("/srv/git/repo.git".into()),
            budget: None,
            parallel: 2,
            goals: vec![("one".into(), Vec::new()), ("two".into(), Vec::new())],
        })
        .unwrap();
    let limits = tether_store::Budget {
        iterations: Some(3),
        ..tether_store::Budget::default()
    };
    // Each goal's run is in the record as its worker reports it; nothing is joined by hand.
    deps.pool = Some(tether_core::looping::BudgetPool::of_fleet(
        limits,
        tether_store::now_ms(),
        fleet.clone(),
    ));
    let mut ends = Vec::new();
    for goal in ["one", "two"] {
        let store = Store::open(f.ws.db_path()).unwrap();
        let fleet = fleet.clone();
        let (_, end) = ralph::start(
            &deps,
            spec(Some("DONE"), Some(10)),
            CancellationToken::new(),
            move |run| {
                store
                    .set_fleet_goal(&fleet, goal, tether_store::GoalState::Working, Some(run))
                    .unwrap();
            },
        )
        .await
        .unwrap();
        ends.push(end);
    }
    assert_eq!(
        ends,
        [
            RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 3 }),
            RalphEnd::Stopped(Stopped::BudgetSpent { iteration: 0 }),
        ]
    );
}

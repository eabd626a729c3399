//! The read model over a real store: runs grouped as a person looks for them (a run waiting for
//! a person never among the working ones), a run's activity, and what each iteration used.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use tether_config::Workspace;
use tether_read::{Group, RunHeader, grouped, recent_usage_series, usage_series};
use tether_store::{Event, JudgeRole, NewQuestion, Outcome, RunFilter, RunId, RunKind, Store};

struct Fx {
    _dir: tempfile::TempDir,
    ws: Workspace,
    store: Store,
}

fn fx() -> Fx {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let store = Store::open(ws.db_path()).unwrap();
    Fx {
        _dir: dir,
        ws,
        store,
    }
}

impl Fx {
    fn run(&self, prompt: &str, events: &[Event]) -> RunId {
        let run = self
            .store
            .create_run(
                RunKind::Ralph,
                self.ws.root(),
                &serde_json::json!({"prompt": prompt}),
            )
            .unwrap();
        for e in events {
            self.store.append(Some(&run), e).unwrap();
        }
        run
    }

    fn header(&self, run: &RunId) -> RunHeader {
        RunHeader::of(
            &self.ws,
            &self.store.run(run).unwrap(),
            tether_store::now_ms(),
        )
    }
}

fn usage(n: u32, input: u64, output: u64, cost: f64) -> Event {
    Event::IterationUsage {
        n,
        input_tokens: input,
        cached_input_tokens: 0,
        cache_write_input_tokens: 0,
        output_tokens: output,
        cost_usd: Some(cost),
        goals: Vec::new(),
        duration_ms: 0,
    }
}

#[test]
fn runs_are_grouped_with_the_ones_waiting_for_a_person_first() {
    let f = fx();
    let done = f.run(
        "done",
        &[Event::RunFinished {
            outcome: Outcome::Completed,
        }],
    );
    let paused = f.run(
        "paused",
        &[Event::Paused {
            reason: "a person asked".into(),
        }],
    );
    // Running by its journal, but no process holds its lock: killed, so it can be taken up.
    let killed = f.run("killed", &[Event::IterationStarted { n: 1 }]);
    let waiting = f.run("waiting", &[Event::IterationStarted { n: 1 }]);
    let q = f
        .store
        .insert_question(&NewQuestion {
            run_id: Some(waiting.clone()),
            thread_id: None,
            question: "Which port?".into(),
            context: String::new(),
            confidence: None,
            options: Vec::new(),
        })
        .unwrap();
    f.store
        .append(Some(&waiting), &Event::QuestionAsked { question_id: q.id })
        .unwrap();
    let blocked = f.run(
        "blocked",
        &[Event::RunFinished {
            outcome: Outcome::Blocked,
        }],
    );

    let headers = tether_read::runs(&f.store, &f.ws, &RunFilter::default(), 50).unwrap();
    assert_eq!(headers.len(), 5);
    let groups: Vec<(Group, Vec<String>)> = grouped(headers)
        .into_iter()
        .map(|(g, runs)| (g, runs.iter().map(|r| r.objective.clone()).collect()))
        .collect();
    assert_eq!(
        groups,
        [
            (
                Group::NeedsInput,
                vec!["blocked".to_owned(), "waiting".to_owned()]
            ),
            (
                Group::Paused,
                vec!["killed".to_owned(), "paused".to_owned()]
            ),
            (Group::Done, vec!["done".to_owned()]),
        ],
    );
    assert!(f.header(&killed).orphaned);
    assert_eq!(f.header(&waiting).pending_questions, 1);
    assert!(f.header(&waiting).waiting_for_input());
    let _ = (done, paused, blocked);
}

#[test]
fn a_run_driven_by_a_live_process_is_running_unless_a_question_waits() {
    let f = fx();
    let run = f.run("live", &[Event::IterationStarted { n: 1 }]);
    let lock = f.ws.run_lock(run.as_str());
    let _held = tether_store::run_lock::RunLock::acquire(&lock).unwrap();
    let header = f.header(&run);
    assert_eq!(header.pid, Some(std::process::id()));
    assert_eq!(Group::of(&header), Group::Running);
}

#[test]
fn each_iteration_has_its_own_usage_time_and_the_judges_share() {
    let f = fx();
    let run = f.run(
        "work",
        &[
            Event::IterationStarted { n: 1 },
            usage(1, 1_000, 100, 0.01),
            Event::IterationCompleted {
                n: 1,
                summary: "one".into(),
            },
            Event::JudgeUsage {
                judge: JudgeRole::SignOff,
                goal_id: Some("g".into()),
                calls: 2,
                input_tokens: 500,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 50,
                cost_usd: Some(0.002),
            },
            Event::IterationStarted { n: 2 },
            usage(2, 3_000, 300, 0.03),
            Event::IterationFailed {
                n: 2,
                error: "the agent crashed".into(),
            },
            // Iteration 2 run again (its usage adds up), and 3 under way.
            Event::IterationStarted { n: 2 },
            usage(2, 1_000, 0, 0.005),
            Event::IterationCompleted {
                n: 2,
                summary: "two".into(),
            },
            Event::IterationStarted { n: 3 },
        ],
    );
    let series = usage_series(&f.store, &run).unwrap();
    let n: Vec<u32> = series.iter().map(|it| it.n).collect();
    assert_eq!(n, [1, 2, 3]);
    assert_eq!(series[0].agent_tokens, 1_100);
    assert_eq!(
        series[0].judge_tokens, 550,
        "the judge's calls after iteration 1"
    );
    assert!((series[0].cost_usd().unwrap() - 0.012).abs() < 1e-9);
    assert_eq!(series[1].agent_tokens, 4_300);
    assert!(series[1].ended && !series[1].failed, "its last end counts");
    assert_eq!(series[2].tokens(), 0);
    assert!(!series[2].ended);
    assert_eq!(series[2].cost_usd(), None);
}

#[test]
fn the_recent_series_reads_only_the_end_of_the_journal_and_drops_a_partial_iteration() {
    let f = fx();
    let mut events = Vec::new();
    for n in 1..=10 {
        events.push(Event::IterationStarted { n });
        events.push(usage(n, u64::from(n) * 1_000, 0, 0.01));
        events.push(Event::IterationCompleted {
            n,
            summary: "done".into(),
        });
    }
    let run = f.run("work", &events);
    let all = usage_series(&f.store, &run).unwrap();
    assert_eq!(all.len(), 10);
    // The last 7 events: iteration 8's usage and end, 9 and 10 whole; 8 is partial.
    let recent = recent_usage_series(&f.store, &run, 7).unwrap();
    let n: Vec<u32> = recent.iter().map(|it| it.n).collect();
    assert_eq!(n, [9, 10]);
    assert_eq!(recent[..], all[8..]);
    // A journal shorter than the bound is read whole.
    assert_eq!(recent_usage_series(&f.store, &run, 1_000).unwrap(), all);
}

#[test]
fn the_recent_series_of_a_chatty_run_still_has_its_recent_iterations() {
    let f = fx();
    let tools = |n: u32| {
        (0..40).map(move |k| Event::ToolCalled {
            n,
            tool: "bash".into(),
            summary: format!("bash: step {k}"),
        })
    };
    let mut events = Vec::new();
    for n in 1..=10 {
        events.push(Event::IterationStarted { n });
        events.extend(tools(n));
        events.push(usage(n, u64::from(n) * 1_000, 0, 0.01));
        events.push(Event::IterationCompleted {
            n,
            summary: "done".into(),
        });
        events.push(Event::MessageQueued {
            text: "and the docs".into(),
            by: "ana".into(),
            author: tether_store::Author::Person,
        });
    }
    // Iteration 11 under way, its tool calls the newest events.
    events.push(Event::IterationStarted { n: 11 });
    events.extend(tools(11));
    let run = f.run("chatty", &[]);
    f.store.append_all(Some(&run), &events).unwrap();
    let all = usage_series(&f.store, &run).unwrap();
    assert_eq!(all.len(), 11);
    // The newest 13 usage events: 11's start and 10 to 7 whole (the oldest left out, as one
    // seen in part would be), though the newest 13 events of the journal are all tool calls.
    let recent = recent_usage_series(&f.store, &run, 13).unwrap();
    let n: Vec<u32> = recent.iter().map(|it| it.n).collect();
    assert_eq!(n, [8, 9, 10, 11]);
    assert_eq!(recent[..3], all[7..10]);
    let under_way = &recent[3];
    assert!(!under_way.ended);
    assert_eq!((under_way.tokens(), under_way.duration_ms), (0, 0));
}

#[test]
fn a_side_question_is_no_step_of_the_run() {
    let f = fx();
    let run = f.run(
        "asked about",
        &[
            Event::ToolCalled {
                n: 1,
                tool: "bash".into(),
                summary: "bash: make".into(),
            },
            Event::SideQuestion {
                question: "what now?".into(),
                answer: "it builds".into(),
                by: "ana".into(),
                model: "m".into(),
                calls: 1,
                input_tokens: 1,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: 1,
                cost_usd: None,
            },
        ],
    );
    let activity = tether_read::activity(&f.store, &f.store.run(&run).unwrap()).unwrap();
    assert_eq!(activity.last_event.unwrap().kind, "tool_called");
    assert_eq!(activity.last_tool_call.as_deref(), Some("bash: make"));
}

#[test]
fn a_header_says_what_each_goal_used_and_its_usage_and_budget_lines() {
    let f = fx();
    let mut first = usage(1, 2_000, 100, 0.02);
    if let Event::IterationUsage { goals, .. } = &mut first {
        goals.push("add".into());
    }
    let run = f.run(
        "work",
        &[
            Event::IterationStarted { n: 1 },
            first,
            Event::IterationCompleted {
                n: 1,
                summary: "one".into(),
            },
        ],
    );
    let h = f.header(&run);
    let add = h.goals["add"].spending();
    assert_eq!((add.iterations, add.tokens), (1, 2_100));
    let line = h.usage_line().unwrap();
    assert!(line.starts_with("agent 2000 in / 100 out tokens"), "{line}");
    assert_eq!(h.budget_line(), None, "nothing but iterations is limited");
}

/// A clock that moves a second at each reading.
fn ticking() -> i64 {
    static NOW: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(1_000_000);
    NOW.fetch_add(1_000, std::sync::atomic::Ordering::SeqCst)
}

#[test]
fn the_whole_series_reads_page_after_page_and_an_iteration_under_way_has_its_time_so_far() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let store = Store::open_with(
        ws.db_path(),
        &tether_store::StoreOptions {
            clock: ticking,
            ..tether_store::StoreOptions::default()
        },
    )
    .unwrap();
    let run = store
        .create_run(
            RunKind::Ralph,
            ws.root(),
            &serde_json::json!({"prompt": "p"}),
        )
        .unwrap();
    // 700 iterations: 2,100 usage events, more than a page, with tool calls between them.
    let mut events = Vec::new();
    for n in 1..=700 {
        events.push(Event::IterationStarted { n });
        events.push(Event::ToolCalled {
            n,
            tool: "bash".into(),
            summary: "cargo test".into(),
        });
        events.push(usage(n, u64::from(n), 0, 0.0));
        events.push(Event::IterationCompleted {
            n,
            summary: format!("did {n}"),
        });
    }
    store.append_all(Some(&run), &events).unwrap();
    // The 701st under way: started, then three tool calls (a second each).
    store
        .append(Some(&run), &Event::IterationStarted { n: 701 })
        .unwrap();
    for _ in 0..3 {
        store
            .append(
                Some(&run),
                &Event::ToolCalled {
                    n: 701,
                    tool: "read".into(),
                    summary: "read".into(),
                },
            )
            .unwrap();
    }
    let series = usage_series(&store, &run).unwrap();
    assert_eq!(series.len(), 701);
    assert!(
        series
            .iter()
            .enumerate()
            .all(|(i, it)| it.n as usize == i + 1)
    );
    assert_eq!(series[699].agent_tokens, 700);
    let last = &series[700];
    assert!(!last.ended);
    assert_eq!(
        last.duration_ms, 3_000,
        "its time up to the run's last event"
    );
}

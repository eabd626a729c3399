//! Runs, the journal and its projections, on both backends.

use tether_store::{Event, IterationOutcome, Outcome, RunStatus, Seq, StoreError};

use super::{Backend, on_both_backends, run};

on_both_backends!(
    runs_are_created_listed_and_paged,
    the_projection_is_the_fold_of_the_journal,
    the_journal_reads_forwards_backwards_and_whole,
    unknown_runs_are_not_found,
    another_handle_sees_a_commit_by_its_data_version,
    messages_are_delivered_once,
    appending_nothing_writes_nothing,
    events_of_no_run_appear_only_in_the_whole_journal,
    a_workspace_path_that_is_not_utf8_is_refused,
    runs_are_filtered_by_machine_workspace_and_state,
    usage_with_the_caches_reads_and_writes_is_kept_and_summed,
    a_side_question_round_trips_and_leaves_the_run_as_it_was,
);

fn runs_are_created_listed_and_paged(b: &Backend) {
    let store = &b.store;
    assert_eq!(store.latest_run().unwrap(), None);
    let runs: Vec<_> = (0..5).map(|_| run(store)).collect();
    let listed: Vec<_> = store.runs(10).unwrap().into_iter().map(|r| r.id).collect();
    let newest_first: Vec<_> = runs.iter().rev().cloned().collect();
    assert_eq!(listed, newest_first);
    let page: Vec<_> = store
        .runs_after(&listed[1], 2)
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(page, &newest_first[2..4]);
    let latest = store.latest_run().unwrap().unwrap();
    assert_eq!(latest.id, runs[4]);
    assert_eq!(latest.workspace, std::path::Path::new("/work"));
    assert_eq!(
        latest.machine.as_deref(),
        Some(tether_store::this_machine().as_str())
    );
    assert_eq!((latest.status, latest.iteration), (RunStatus::Running, 0));
    assert_eq!(latest.spec["max_iterations"], 5);
}

fn the_projection_is_the_fold_of_the_journal(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    store
        .append_all(
            Some(&id),
            &[
                Event::IterationStarted { n: 1 },
                Event::IterationCompleted {
                    n: 1,
                    summary: "one".into(),
                },
                Event::IterationStarted { n: 2 },
            ],
        )
        .unwrap();
    // Interrupted by a restart, run again, then failed; the run ends.
    store
        .append(
            Some(&id),
            &Event::Resumed {
                by: "me".into(),
                reset_budget: false,
                settings: None,
            },
        )
        .unwrap();
    store
        .append(Some(&id), &Event::IterationStarted { n: 2 })
        .unwrap();
    store
        .append(
            Some(&id),
            &Event::IterationFailed {
                n: 2,
                error: "boom".into(),
            },
        )
        .unwrap();
    store
        .append(
            Some(&id),
            &Event::RunFinished {
                outcome: Outcome::Failed,
            },
        )
        .unwrap();
    let shown = store.run(&id).unwrap();
    assert_eq!(shown.state, store.rebuild_run_state(&id).unwrap());
    assert_eq!(shown.status, RunStatus::Failed);
    let rows = store.iterations(&id).unwrap();
    assert_eq!(rows, store.rebuild_iterations(&id).unwrap());
    let outcomes: Vec<_> = rows.iter().map(|r| (r.n, r.outcome)).collect();
    assert_eq!(
        outcomes,
        [
            (1, Some(IterationOutcome::Completed)),
            (2, Some(IterationOutcome::Failed))
        ]
    );
    assert_eq!(rows[1].summary.as_deref(), Some("boom"));
    assert_eq!(store.refresh_projection(&id).unwrap(), shown.state);
    assert_eq!(store.iterations(&id).unwrap(), rows);
    store.check_integrity().unwrap();
}

fn the_journal_reads_forwards_backwards_and_whole(b: &Backend) {
    let store = &b.store;
    let (one, two) = (run(store), run(store));
    for n in 1..=4 {
        store
            .append(Some(&one), &Event::IterationStarted { n })
            .unwrap();
        store
            .append(Some(&two), &Event::IterationStarted { n })
            .unwrap();
    }
    let first = store.events(&one, Seq::START, 100).unwrap();
    assert_eq!(first.len(), 5);
    assert_eq!(first[0].kind, "run_started");
    assert!(first.windows(2).all(|w| w[0].seq < w[1].seq));
    let after = store.events(&one, first[2].seq, 2).unwrap();
    assert_eq!(after, first[3..5]);
    let back = store.events_before(&one, Some(first[4].seq), 2).unwrap();
    assert_eq!(back, first[2..4]);
    assert_eq!(store.events_before(&one, None, 100).unwrap(), first);
    let all = store.events_all_after(Seq::START, 100).unwrap();
    assert_eq!(all.len(), 10);
    assert_eq!(store.last_seq().unwrap(), all[9].seq);
    let tail = store.events_all_after(all[7].seq, 100).unwrap();
    assert_eq!(tail, all[8..]);
}

fn unknown_runs_are_not_found(b: &Backend) {
    let store = &b.store;
    let unknown = "r-zzzzzz".parse().unwrap();
    for err in [
        store.run(&unknown).map(|_| ()).unwrap_err(),
        store
            .append(Some(&unknown), &Event::IterationStarted { n: 1 })
            .map(|_| ())
            .unwrap_err(),
        store.rebuild_run_state(&unknown).map(|_| ()).unwrap_err(),
    ] {
        assert!(
            matches!(err, StoreError::NotFound { what: "run", .. }),
            "{err:?}"
        );
    }
    assert_eq!(store.last_seq().unwrap(), Seq::START);
    assert!(store.events(&unknown, Seq::START, 10).unwrap().is_empty());
}

fn another_handle_sees_a_commit_by_its_data_version(b: &Backend) {
    let watcher = b.other();
    let id = run(&b.store);
    let before = watcher.data_version().unwrap();
    b.store
        .append(Some(&id), &Event::IterationStarted { n: 1 })
        .unwrap();
    assert_ne!(watcher.data_version().unwrap(), before);
    assert_eq!(watcher.run(&id).unwrap().state.in_progress, Some(1));
}

fn messages_are_delivered_once(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    assert_eq!(
        store.deliver(&id, 1).unwrap(),
        tether_store::Delivery::default()
    );
    store
        .append(
            Some(&id),
            &Event::MessageQueued {
                text: "use the cache".into(),
                by: "ana".into(),
                author: tether_store::Author::Person,
            },
        )
        .unwrap();
    let delivered = store.deliver(&id, 2).unwrap();
    let texts: Vec<_> = delivered.messages.iter().map(|m| m.text.as_str()).collect();
    assert_eq!(texts, ["use the cache"]);
    assert_eq!(
        store.deliver(&id, 3).unwrap(),
        tether_store::Delivery::default()
    );
}

fn appending_nothing_writes_nothing(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let before = store.run(&id).unwrap();
    assert_eq!(store.append_all(Some(&id), &[]).unwrap(), vec![]);
    assert_eq!(store.run(&id).unwrap(), before);
    assert_eq!(store.last_seq().unwrap(), before.last_event_seq);
}

fn events_of_no_run_appear_only_in_the_whole_journal(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let started = store.last_seq().unwrap();
    let loose = store
        .append(
            None,
            &Event::RuleFired {
                rule: tether_store::Rule::Reminder,
                reason: "no run".into(),
            },
        )
        .unwrap();
    assert!(store.events(&id, started, 10).unwrap().is_empty());
    let all = store.events_all_after(started, 10).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!((all[0].seq, all[0].run_id.as_ref()), (loose, None));
    assert_eq!(store.last_seq().unwrap(), loose);
}

fn a_workspace_path_that_is_not_utf8_is_refused(b: &Backend) {
    use std::os::unix::ffi::OsStrExt;
    let path = std::path::Path::new(std::ffi::OsStr::from_bytes(b"/tmp/\xff"));
    let err = b
        .store
        .create_run(tether_store::RunKind::Ask, path, &serde_json::json!({}))
        .unwrap_err();
    assert!(matches!(err, StoreError::NonUtf8Path { .. }), "{err:?}");
}

fn runs_are_filtered_by_machine_workspace_and_state(b: &Backend) {
    use tether_store::{RunFilter, RunKind};
    let store = &b.store;
    let spec = serde_json::json!({});
    let mut ids = Vec::new();
    for i in 0..6 {
        let ws = if i % 2 == 0 { "/work/a" } else { "/work/b" };
        let id = store
            .create_run(RunKind::Ralph, ws.as_ref(), &spec)
            .unwrap();
        if i % 3 == 0 {
            store
                .append(
                    Some(&id),
                    &Event::RunFinished {
                        outcome: Outcome::Completed,
                    },
                )
                .unwrap();
        }
        ids.push(id);
    }
    let ids_of = |runs: Vec<tether_store::Run>| runs.into_iter().map(|r| r.id).collect::<Vec<_>>();
    let in_a = RunFilter {
        workspace: Some("/work/a".into()),
        ..RunFilter::default()
    };
    assert_eq!(
        ids_of(store.runs_matching(&in_a, None, 10).unwrap()),
        [ids[4].clone(), ids[2].clone(), ids[0].clone()]
    );
    let page = ids_of(store.runs_matching(&in_a, Some(&ids[4]), 1).unwrap());
    assert_eq!(page, [ids[2].clone()]);
    let done = RunFilter {
        status: Some(RunStatus::Completed),
        ..RunFilter::default()
    };
    assert_eq!(
        ids_of(store.runs_matching(&done, None, 10).unwrap()),
        [ids[3].clone(), ids[0].clone()]
    );
    let here = RunFilter {
        machine: Some(tether_store::this_machine()),
        workspace: Some("/work/b".into()),
        status: Some(RunStatus::Running),
    };
    assert_eq!(
        ids_of(store.runs_matching(&here, None, 10).unwrap()),
        [ids[5].clone(), ids[1].clone()]
    );
    let nowhere = RunFilter {
        machine: Some("nowhere".into()),
        ..RunFilter::default()
    };
    assert!(store.runs_matching(&nowhere, None, 10).unwrap().is_empty());
    assert_eq!(
        ids_of(
            store
                .runs_matching(&RunFilter::default(), None, 100)
                .unwrap()
        ),
        ids_of(store.runs(100).unwrap())
    );
    let unknown = "r-zzzzzz".parse().unwrap();
    assert!(
        store
            .runs_matching(&in_a, Some(&unknown), 10)
            .unwrap()
            .is_empty()
    );
}

fn usage_with_the_caches_reads_and_writes_is_kept_and_summed(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    let used = [
        Event::IterationUsage {
            n: 1,
            input_tokens: 24_000,
            cached_input_tokens: 18_000,
            cache_write_input_tokens: 5000,
            output_tokens: 900,
            cost_usd: Some(0.04),
            goals: vec!["g1".into()],
            duration_ms: 1200,
        },
        Event::JudgeUsage {
            judge: tether_store::JudgeRole::SignOff,
            goal_id: Some("g1".into()),
            calls: 2,
            input_tokens: 6000,
            cached_input_tokens: 2000,
            cache_write_input_tokens: 3000,
            output_tokens: 150,
            cost_usd: None,
        },
    ];
    store.append_all(Some(&id), &used).unwrap();
    let read: Vec<Event> = store
        .events(&id, Seq(0), 100)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .filter(|e| matches!(e, Event::IterationUsage { .. } | Event::JudgeUsage { .. }))
        .collect();
    assert_eq!(read, used);
    let state = store.run(&id).unwrap().state;
    assert_eq!(state, store.rebuild_run_state(&id).unwrap());
    assert_eq!(
        state.usage.describe(),
        "24000 in (18000 cache read, 5000 cache write) / 900 out tokens (≈ $0.0400)"
    );
    assert_eq!(state.judge_usage.cache_write_input_tokens, 3000);
    assert_eq!(state.goal_usage["g1"].usage.cache_write_input_tokens, 8000);
}

fn a_side_question_round_trips_and_leaves_the_run_as_it_was(b: &Backend) {
    let store = &b.store;
    let id = run(store);
    store
        .append(Some(&id), &Event::IterationStarted { n: 1 })
        .unwrap();
    let before = store.run(&id).unwrap().state;
    let asked = Event::SideQuestion {
        question: "what is it doing?".into(),
        answer: "It is writing the parser's tests.".into(),
        by: "ana".into(),
        model: "openai-chat small".into(),
        calls: 2,
        input_tokens: 3000,
        cached_input_tokens: 1000,
        cache_write_input_tokens: 0,
        output_tokens: 80,
        cost_usd: Some(0.002),
    };
    let seq = store.append(Some(&id), &asked).unwrap();
    let read = store.events(&id, Seq::START, 100).unwrap();
    let last = read.last().unwrap();
    assert_eq!((last.seq, last.kind.as_str()), (seq, "side_question"));
    assert_eq!(last.event.as_ref(), Some(&asked));
    let after = store.run(&id).unwrap();
    assert_eq!(after.state, store.rebuild_run_state(&id).unwrap());
    assert_eq!(after.state.last_event_seq, seq);
    let unmoved = tether_store::RunState {
        last_event_seq: seq,
        ..before
    };
    assert_eq!(
        after.state, unmoved,
        "nothing but the journal's position moved"
    );
    assert_eq!(after.status, RunStatus::Running);
    assert!(store.deliver(&id, 2).unwrap().messages.is_empty());
}

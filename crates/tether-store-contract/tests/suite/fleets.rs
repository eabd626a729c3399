//! Runs of many goals: a run recorded with its goals in the plan's order, each goal's state
//! and goal run as it moves, the run's end, the newest first; on both backends.

use tether_store::{GoalState, NewFleet, RunId, StoreError};

use super::{Backend, on_both_backends, run};

on_both_backends!(
    a_run_of_many_goals_is_recorded_goal_by_goal_to_its_end,
    an_unknown_run_of_many_goals_or_goal_is_named,
);

fn new_fleet(id: &RunId) -> NewFleet {
    NewFleet {
        id: id.clone(),
        workspace: "/work".into(),
        plan_path: "plan.md".into(),
        branch: format!("tether/{id}"),
        remote: None,
        budget: None,
        parallel: 2,
        goals: vec![
            ("base".into(), Vec::new()),
            ("left".into(), vec!["base".into()]),
            ("top".into(), vec!["base".into(), "left".into()]),
        ],
    }
}

fn a_run_of_many_goals_is_recorded_goal_by_goal_to_its_end(b: &Backend) {
    let (first, second) = (RunId::generate(), RunId::generate());
    b.store.begin_fleet(&new_fleet(&first)).unwrap();
    b.store.begin_fleet(&new_fleet(&second)).unwrap();
    let fleet = b.other().fleet(&first).unwrap();
    assert_eq!(fleet.branch, format!("tether/{first}"));
    assert_eq!((fleet.parallel, fleet.outcome.as_deref()), (2, None));
    assert_eq!(fleet.machine, tether_store::this_machine());
    let ids: Vec<&str> = fleet.goals.iter().map(|g| g.goal_id.as_str()).collect();
    assert_eq!(ids, ["base", "left", "top"]);
    assert!(fleet.goals.iter().all(|g| g.state == GoalState::Waiting));
    assert_eq!(fleet.waits_on(&fleet.goals[2]), ["base", "left"]);

    // `base` works in a goal run of its own, then is merged; `left` waits on nothing now.
    let goal_run = run(&b.store);
    b.store
        .set_fleet_goal(&first, "base", GoalState::Working, Some(&goal_run))
        .unwrap();
    b.store
        .set_fleet_goal(&first, "base", GoalState::Merged, None)
        .unwrap();
    let fleet = b.other().fleet(&first).unwrap();
    let base = &fleet.goals[0];
    assert_eq!(base.state, GoalState::Merged);
    assert_eq!(base.run_id.as_ref(), Some(&goal_run), "the run is kept");
    assert_eq!(
        base.machine.as_deref(),
        Some(tether_store::this_machine().as_str())
    );
    assert_eq!(fleet.waits_on(&fleet.goals[1]), Vec::<String>::new());
    assert_eq!(fleet.waits_on(&fleet.goals[2]), ["left"]);

    b.store.end_fleet(&first, "all_merged").unwrap();
    let fleet = b.store.fleet(&first).unwrap();
    assert_eq!(fleet.outcome.as_deref(), Some("all_merged"));
    assert!(fleet.ended_at_ms.is_some_and(|t| t >= fleet.started_at_ms));

    // Each change is an event of no run, written with it.
    let kinds: Vec<String> = b
        .other()
        .events_all_after(tether_store::Seq(0), 1000)
        .unwrap()
        .into_iter()
        .filter(|e| e.run_id.is_none())
        .map(|e| e.kind)
        .collect();
    assert_eq!(
        kinds,
        [
            "fleet_started",
            "fleet_started",
            "fleet_goal_moved",
            "fleet_goal_moved",
            "fleet_ended"
        ]
    );
    // The newest first, each with its goals.
    let listed = b.other().fleets(10).unwrap();
    let ids: Vec<&RunId> = listed.iter().map(|f| &f.id).collect();
    assert!(ids.contains(&&first) && ids.contains(&&second), "{ids:?}");
    assert!(listed.iter().all(|f| f.goals.len() == 3));
    assert_eq!(b.store.fleets(1).unwrap().len(), 1);
}

fn an_unknown_run_of_many_goals_or_goal_is_named(b: &Backend) {
    let id = RunId::generate();
    let not_found = |r: Result<(), StoreError>| match r {
        Err(StoreError::NotFound { what, .. }) => what,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        not_found(b.store.end_fleet(&id, "stuck")),
        "run of many goals"
    );
    assert!(matches!(
        b.store.fleet(&id),
        Err(StoreError::NotFound { .. })
    ));
    b.store.begin_fleet(&new_fleet(&id)).unwrap();
    assert_eq!(
        not_found(
            b.store
                .set_fleet_goal(&id, "nope", GoalState::Working, None)
        ),
        "goal of a run of many goals"
    );
}

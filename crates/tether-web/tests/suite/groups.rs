//! The runs page groups runs as `tether watch` does — needs input, running, paused, done — with
//! the runs a person is needed for first, never as running; the API says each run's group; and
//! a run whose group changes while the page is open moves into its new group's list.

use std::time::Duration;

use tether_store::{Event, Outcome, RunId, RunKind, Store};

use crate::common::{Web, question};

const WITHIN: Duration = Duration::from_secs(10);

fn run(store: &Store, web: &Web, prompt: &str, events: &[Event]) -> RunId {
    let id = store
        .create_run(
            RunKind::Ralph,
            web.ws.root(),
            &serde_json::json!({"prompt": prompt}),
        )
        .unwrap();
    for e in events {
        store.append(Some(&id), e).unwrap();
    }
    id
}

/// Where in `page` the element with id `id` begins.
fn at(page: &str, id: &str) -> usize {
    page.find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {page}"))
}

#[test]
fn the_runs_page_lists_runs_in_their_groups_with_those_waiting_first() {
    let web = Web::start();
    let store = web.store();
    let done = run(
        &store,
        &web,
        "tidy",
        &[Event::RunFinished {
            outcome: Outcome::Completed,
        }],
    );
    let paused = run(
        &store,
        &web,
        "fix",
        &[Event::Paused {
            reason: "a person asked".into(),
        }],
    );
    // The journal says it runs, but no process drives it: it was killed, so it waits to be
    // taken up, with the paused ones.
    let killed = run(&store, &web, "build", &[Event::IterationStarted { n: 1 }]);
    let waiting = run(&store, &web, "ship", &[Event::IterationStarted { n: 1 }]);
    question(&store, Some(&waiting), "Which registry?");

    let page = web.get("/").body;
    let lists: Vec<usize> = ["needs_input", "running", "paused", "done"]
        .iter()
        .map(|g| at(&page, &format!("runs-{g}")))
        .collect();
    assert!(lists.windows(2).all(|w| w[0] < w[1]), "groups in order");
    let row = |id: &RunId| at(&page, &format!("run-{id}"));
    assert!(lists[0] < row(&waiting) && row(&waiting) < lists[1]);
    assert!(lists[2] < row(&killed) && row(&killed) < lists[3]);
    assert!(lists[2] < row(&paused) && row(&paused) < lists[3]);
    assert!(lists[3] < row(&done));
    let waiting_row = &page[row(&waiting)..lists[1]];
    assert!(waiting_row.contains("waiting for input"), "{waiting_row}");
    assert!(!waiting_row.contains(">running<"), "{waiting_row}");
    let killed_row = &page[row(&killed)..row(&killed) + 600.min(page.len() - row(&killed))];
    assert!(killed_row.contains("killed (no process)"), "{killed_row}");

    let api = web.get("/api/runs").json();
    let group_of = |id: &RunId| {
        api.as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == id.as_str())
            .map(|r| r["group"].clone())
            .unwrap()
    };
    assert_eq!(group_of(&waiting), "needs_input");
    assert_eq!(group_of(&killed), "paused");
    assert_eq!(group_of(&done), "done");
}

#[test]
fn a_run_that_comes_to_need_a_person_moves_to_that_group_live() {
    let web = Web::start();
    let store = web.store();
    let paused = run(
        &store,
        &web,
        "fix",
        &[Event::Paused {
            reason: "a person asked".into(),
        }],
    );
    let mut live = web.sse(
        &format!("/live?page=runs&after={}", store.last_seq().unwrap().0),
        &[],
    );
    question(&store, Some(&paused), "May I go on?");
    let msg = live.next(WITHIN).expect("a live update");
    let ops: serde_json::Value = serde_json::from_str(&msg.data).unwrap();
    let row = ops
        .as_array()
        .unwrap()
        .iter()
        .find(|op| op["id"] == format!("run-{paused}"))
        .unwrap_or_else(|| panic!("no row of the run in {ops}"));
    assert_eq!(row["op"], "upsert");
    assert_eq!(row["target"], "runs-needs_input", "{ops}");
    assert!(row["html"].as_str().unwrap().contains("waiting for input"));
}

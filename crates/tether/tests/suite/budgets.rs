//! Budgets in every unit, end to end: `tether run` against the fake model servers (which
//! report usage in the wire format), stopped by its token, cost, time or goal budget with exit
//! 3 and a `budget_spent` event naming the unit; a plain `tether resume` refused with the flag
//! that would help; `tether resume --add-…` raising it and the run going on to sign off.

use std::fs;

use serde_json::json;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Seq, Unit};

use super::goal_run::support::{Env, PLAN, accepting_judge, complete, env, fix_add, touch};
use crate::common::text;

/// An iteration that changes a file and says so: 3000 + 1000 input and 500 + 100 output
/// tokens over its two model calls (4.6k in all).
fn busy(name: &str) -> [Turn; 2] {
    [
        touch(name).with_usage(3000, 500),
        Turn::text("still working").with_usage(1000, 100),
    ]
}

/// The iteration that fixes `add` and signs it off.
fn finishing() -> [Turn; 3] {
    [fix_add(), complete("add"), Turn::text("Fixed add.")]
}

fn events(e: &Env) -> Vec<Event> {
    let store = e.store();
    let run = store.latest_run().unwrap().unwrap();
    store
        .events(&run.id, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect()
}

fn spent(e: &Env) -> Vec<(Unit, Option<String>)> {
    events(e)
        .into_iter()
        .filter_map(|ev| match ev {
            Event::BudgetSpent { unit, goal_id, .. } => Some((unit, goal_id)),
            _ => None,
        })
        .collect()
}

fn run_id(e: &Env) -> String {
    e.store().latest_run().unwrap().unwrap().id.to_string()
}

#[test]
fn a_token_budget_stops_the_run_and_resume_add_tokens_goes_on() {
    let mut agent = Vec::new();
    agent.extend(busy("a.txt"));
    agent.extend(busy("b.txt"));
    agent.extend(finishing());
    let e = env(
        PLAN,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-tokens", "5k"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    let run = run_id(&e);
    assert!(
        stdout.contains("the run's token budget spent: 9.2k tokens of 5k tokens")
            && stdout.contains(&format!("tether resume {run} --add-tokens 500k")),
        "{stdout}"
    );
    assert_eq!(spent(&e), [(Unit::Tokens, None)]);
    // Two iterations ran: the budget is checked at each boundary.
    assert_eq!(e.agent.request_count(), 4);

    let status = text(&e.run(&["status"]).stdout);
    assert!(
        status.contains("budget: 9.2k tokens of 5k tokens")
            && status.contains("stopped: the run's token budget spent"),
        "{status}"
    );

    let plain = e.run(&["resume"]);
    assert_eq!(plain.status.code(), Some(2));
    assert!(
        text(&plain.stderr).contains("give it more with: tether resume"),
        "{}",
        text(&plain.stderr)
    );
    let other = e.run(&["resume", "--add-cost", "5"]);
    assert_eq!(other.status.code(), Some(2), "{}", text(&other.stderr));
    assert_eq!(e.agent.request_count(), 4, "a refused resume runs nothing");

    let out = e.run(&["resume", "--add-tokens", "100k"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("raised the run's token budget by 100k tokens"));
    assert_eq!(e.status_of("add"), "done");
    let raised: Vec<_> = events(&e)
        .into_iter()
        .filter_map(|ev| match ev {
            Event::BudgetRaised {
                unit, amount, by, ..
            } => Some((unit, amount, by)),
            _ => None,
        })
        .collect();
    assert_eq!(raised.len(), 1);
    assert_eq!((raised[0].0, raised[0].1), (Unit::Tokens, 100_000.0));
}

#[test]
fn a_cost_budget_counts_the_price_table() {
    let mut agent = Vec::new();
    agent.extend(busy("a.txt"));
    agent.extend(busy("b.txt"));
    let e = env(PLAN, Script::turns(agent), Script::turns([]), "");
    // $1000 per million tokens: each busy iteration (4.6k tokens) costs $4.60.
    let config = fs::read_to_string(e.path().join("tether.toml")).unwrap();
    let priced = config.replacen(
        "model = \"worker-model\"",
        "model = \"worker-model\"\nprice_per_mtok = { input = 1000, output = 1000 }",
        1,
    );
    assert_ne!(config, priced);
    fs::write(e.path().join("tether.toml"), priced).unwrap();
    fs::write(
        e.path().join("tether.toml"),
        format!(
            "{}\n[loop]\nmax_cost_usd = 5\n",
            fs::read_to_string(e.path().join("tether.toml")).unwrap()
        ),
    )
    .unwrap();
    let out = e.run(&["run", "--approve"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("the run's cost budget spent: $9.20 of $5.00")
            && stdout.contains("--add-cost 5"),
        "{stdout}"
    );
    assert_eq!(spent(&e), [(Unit::CostUsd, None)]);
    let state = e.store().latest_run().unwrap().unwrap().state;
    let cost = state.usage.cost_usd.unwrap();
    assert!((cost - 9.2).abs() < 1e-9, "{cost}");
}

#[test]
fn a_time_budget_counts_running_time() {
    let mut agent = vec![
        Turn::tool(
            "bash",
            json!({"command": "sleep 1.5; echo slept > slept.txt"}),
        ),
        Turn::text("slept"),
    ];
    agent.extend(finishing());
    let e = env(
        PLAN,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-duration", "1s"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("the run's time budget spent") && stdout.contains("--add-time 2h"),
        "{stdout}"
    );
    assert_eq!(spent(&e), [(Unit::Duration, None)]);
    let out = e.run(&["resume", "--add-time", "1h"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(e.status_of("add"), "done");
}

#[test]
fn a_goals_budget_line_stops_the_run_and_its_raise_goes_to_the_goal() {
    let plan = PLAN.replace(
        "verify: sh check.sh\n",
        "verify: sh check.sh\nbudget: 5k tokens\n",
    );
    let mut agent = Vec::new();
    agent.extend(busy("a.txt"));
    agent.extend(busy("b.txt"));
    agent.extend(finishing());
    let e = env(
        &plan,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("goal add's token budget spent: 9.2k tokens of 5k tokens"),
        "{stdout}"
    );
    assert_eq!(spent(&e), [(Unit::Tokens, Some("add".to_owned()))]);
    let out = e.run(&["resume", "--add-tokens", "100k"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("raised goal add's token budget by 100k tokens"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(e.status_of("add"), "done");
    let state = e.store().latest_run().unwrap().unwrap().state;
    let add = state.goal_usage["add"];
    assert_eq!(add.iterations, 3);
    assert!(
        add.usage.tokens() > 9200,
        "the judge's tokens count too: {add:?}"
    );
}

#[test]
fn the_iteration_budget_is_renewed_by_a_plain_resume_or_raised() {
    let mut agent = Vec::new();
    agent.extend(busy("a.txt"));
    agent.extend(busy("b.txt"));
    agent.extend(finishing());
    let e = env(
        PLAN,
        Script::turns(agent),
        Script::turns(accepting_judge()),
        "",
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let out = e.run(&["resume", "--add-iterations", "1"]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        e.agent.request_count(),
        4,
        "one more iteration, not a new budget"
    );
    let out = e.run(&["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

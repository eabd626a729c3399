//! `tether run` with a judge panel, each judge on a fake model server of its own: a panel of
//! two where the second rejects does not sign the goal off, and both votes are in the store,
//! the plan's log, the run's report and the dashboard's page of the run; with both accepting,
//! the goal is signed off and every judge's usage counts against the run's budget.

use std::fs;

use tether_config::Api;
use tether_model::scripted::{Script, Turn};
use tether_store::VerdictKind;
use tether_testkit::model_server::FakeModelServer;

use super::support::{PLAN, accepting_judge, complete, env, fix_add, verdict};
use crate::common::{model_table, text};

/// A `[[judge.panel]]` judge on `server` named `model`.
fn panel_judge(server: &FakeModelServer, model: &str) -> String {
    model_table("[judge.panel]", Api::OpenAiChat, server, model)
}

fn agent() -> Script {
    Script::turns([fix_add(), complete("add"), Turn::text("Fixed add.")])
}

#[test]
fn a_panel_of_two_where_the_second_rejects_signs_nothing_off_and_shows_both_votes() {
    let rt = crate::common::runtime();
    let second = rt
        .block_on(FakeModelServer::start(Script::turns([verdict(
            "reject",
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {",
            &["a test that calls add"],
        )
        .with_usage(900, 60)])))
        .unwrap();
    let e = env(
        PLAN,
        agent(),
        Script::turns(accepting_judge()),
        &panel_judge(&second, "second-judge"),
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "1"]);
    assert!(
        !text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(e.status_of("add"), "active");
    let [record] = e.verdicts("add").try_into().unwrap();
    let d = record.decision;
    assert_eq!(d.kind, VerdictKind::JudgeRejected);
    assert_eq!(d.judge_model.as_deref(), Some("judge-model, second-judge"));
    let votes: Vec<_> = d
        .judges
        .iter()
        .map(|v| (v.model.as_str(), v.kind))
        .collect();
    assert_eq!(
        votes,
        [
            ("judge-model", VerdictKind::Accepted),
            ("second-judge", VerdictKind::JudgeRejected)
        ]
    );
    assert_eq!((e.judge.request_count(), second.request_count()), (2, 1));
    assert!(
        e.plan()
            .contains("add sign-off rejected by judges judge-model and second-judge: 1 of 2"),
        "{}",
        e.plan()
    );

    // The run's report names each judge's vote.
    let report = fs::read_dir(e.path().join(".tether/runs"))
        .unwrap()
        .map(|r| r.unwrap().path().join("report.md"))
        .find(|p| p.is_file())
        .map(|p| fs::read_to_string(p).unwrap())
        .unwrap();
    assert!(
        report
            .contains("- judge judge-model: accepted — accepted after reading src/lib.rs (2 calls"),
        "{report}"
    );
    assert!(
        report.contains(
            "- judge second-judge: judge rejected — rejected after reading src/lib.rs (1 calls, \
             900 in / 60 out tokens)"
        ),
        "{report}"
    );
    assert!(
        report.contains("- missing: a test that calls add"),
        "{report}"
    );
}

#[test]
fn a_panel_whose_judges_both_accept_signs_off_and_charges_every_judge() {
    let rt = crate::common::runtime();
    let second = rt
        .block_on(FakeModelServer::start(Script::turns(
            accepting_judge()
                .into_iter()
                .map(|t| t.with_usage(5_000, 500)),
        )))
        .unwrap();
    let e = env(
        PLAN,
        agent(),
        Script::turns(accepting_judge()),
        &format!("agree = \"all\"\n{}", panel_judge(&second, "second-judge")),
    );
    let out = e.run(&["run", "--approve", "--max-iterations", "5"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("signed off: add"),
        "{}",
        text(&out.stdout)
    );
    let [record] = e.verdicts("add").try_into().unwrap();
    assert_eq!(record.decision.judges.len(), 2);
    assert!(
        e.plan()
            .contains("add signed off by judges judge-model and second-judge: 2 of 2")
    );
    // Both judges' tokens are the run's: a judge_usage event each.
    let store = e.store();
    let run = store.latest_run().unwrap().unwrap();
    let usage: Vec<u64> = store
        .events(&run.id, tether_store::Seq::START, 1_000)
        .unwrap()
        .into_iter()
        .filter_map(|e| match e.event {
            Some(tether_store::Event::JudgeUsage { input_tokens, .. }) => Some(input_tokens),
            _ => None,
        })
        .collect();
    assert_eq!(usage.len(), 2, "{usage:?}");
    assert_eq!(usage[1], 10_000, "the second judge's two calls");
}

//! A judge panel's verdict on the run's page and in the API: each judge's vote, model, reason
//! and usage, its text escaped.

use tether_store::{Event, JudgeVote, NewVerdict, RunKind, VerdictKind};

use crate::common::Web;

fn vote(model: &str, kind: VerdictKind, reason: &str, cost_usd: Option<f64>) -> JudgeVote {
    JudgeVote {
        model: model.into(),
        kind,
        reason: reason.into(),
        calls: 2,
        input_tokens: 1_500,
        output_tokens: 90,
        cost_usd,
        transcript_path: None,
    }
}

#[test]
fn each_judges_vote_is_on_the_runs_page_and_in_the_api() {
    let web = Web::start();
    let store = web.store();
    let run = store
        .create_run(
            RunKind::Goal,
            web.ws.root(),
            &serde_json::json!({"plan": "plan.md"}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    store
        .insert_verdict(&NewVerdict {
            run_id: Some(run.clone()),
            goal_id: "greet".into(),
            plan_path: "plan.md".into(),
            attempt: 1,
            verify_exit: Some(0),
            verdict: VerdictKind::JudgeRejected.verdict(),
            kind: VerdictKind::JudgeRejected,
            reason: "1 of 2 judges asked did not accept (all)".into(),
            checks: serde_json::json!([]),
            missing: vec!["a test".into()],
            judge_model: Some("alpha, beta".into()),
            transcript_path: None,
            contract_hash: None,
            judges: vec![
                vote("alpha", VerdictKind::Accepted, "greets", Some(0.0125)),
                vote(
                    "beta",
                    VerdictKind::JudgeRejected,
                    "<script>alert(1)</script> no test",
                    None,
                ),
            ],
        })
        .unwrap();
    let page = web.get(&format!("/runs/{run}")).body;
    let votes = page
        .split("<ul class=\"judges\">")
        .nth(1)
        .and_then(|rest| rest.split("</ul>").next())
        .unwrap_or_else(|| panic!("no votes on the page:\n{page}"));
    assert!(
        votes.contains("badge verdict-accept\">accepted</span> <code>alpha</code>: greets"),
        "{votes}"
    );
    assert!(
        votes.contains("badge verdict-reject\">judge rejected</span> <code>beta</code>"),
        "{votes}"
    );
    assert!(votes.contains("$0.0125"), "{votes}");
    assert!(votes.contains("2 calls · 1500 in / 90 out"), "{votes}");
    assert!(
        votes.contains("&lt;script&gt;alert(1)&lt;/script&gt; no test"),
        "{votes}"
    );
    assert!(!page.contains("<script>alert(1)"));

    let api = web.get(&format!("/api/runs/{run}")).json();
    let judges = &api["verdicts"][0]["judges"];
    assert_eq!(judges[0]["model"], "alpha");
    assert_eq!(judges[0]["kind"], "accepted");
    assert_eq!(judges[1]["kind"], "judge_rejected");
    assert_eq!(judges[1]["reason"], "<script>alert(1)</script> no test");
}

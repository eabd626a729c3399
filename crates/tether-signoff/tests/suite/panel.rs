//! A judge panel: judges asked in turn until the panel is decided, each judge's quotes checked
//! on their own, every vote recorded with its model and usage, the plan's log line naming the
//! judges.

use serde_json::json;
use tether_config::Agree;
use tether_model::scripted::{Script, Turn};
use tether_signoff::{Panel, SignoffOutcome};
use tether_store::{JudgeVote, VerdictKind};

use crate::common::{Fx, check, scripted_as, transcript, verdict};

/// A judge's accept citing a real line of the work.
fn accepts() -> Script {
    Script::turns([verdict(
        "accept",
        json!([check("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {")]),
        &[],
    )
    .with_usage(1_000, 50)])
}

fn rejects(missing: &str) -> Script {
    Script::turns([verdict("reject", json!([]), &[missing]).with_usage(800, 40)])
}

fn panel(scripts: &[(&Script, &str)], agree: Agree) -> Panel {
    let mut judges = scripts.iter().map(|(s, name)| scripted_as(s, name));
    let first = judges.next().unwrap();
    Panel::new(first, judges.collect(), agree)
}

fn votes(fx: &Fx) -> Vec<JudgeVote> {
    fx.verdicts().pop().unwrap().decision.judges
}

fn kinds(votes: &[JudgeVote]) -> Vec<(String, VerdictKind)> {
    votes.iter().map(|v| (v.model.clone(), v.kind)).collect()
}

#[tokio::test]
async fn a_panel_of_two_where_the_second_rejects_does_not_sign_off() {
    let fx = Fx::new();
    let (first, second) = (accepts(), rejects("a test of add"));
    let outcome = fx
        .complete_with(panel(&[(&first, "alpha"), (&second, "beta")], Agree::All))
        .await;
    let SignoffOutcome::Rejected {
        reason,
        missing,
        judge_model,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        reason,
        "1 of 2 judges asked did not accept (all); beta: judged: reject"
    );
    assert_eq!(missing, &["a test of add"]);
    assert_eq!(judge_model.as_deref(), Some("alpha, beta"));
    assert_eq!(fx.status("add"), "active");
    assert!(
        fx.last_log()
            .contains(" add sign-off rejected by judges alpha and beta: 1 of 2 judges"),
        "{}",
        fx.last_log()
    );
    let votes = votes(&fx);
    assert_eq!(
        kinds(&votes),
        [
            ("alpha".to_owned(), VerdictKind::Accepted),
            ("beta".to_owned(), VerdictKind::JudgeRejected)
        ]
    );
    assert_eq!((votes[0].calls, votes[0].input_tokens), (1, 1_000));
    assert_eq!(
        (votes[1].output_tokens, votes[1].reason.as_str()),
        (40, "judged: reject")
    );
    // Each judge has its own transcript.
    for (n, model) in [(1, "alpha"), (2, "beta")] {
        let path = format!(".tether/signoff/judge-add-1-{n}.jsonl");
        assert_eq!(votes[n - 1].transcript_path.as_deref(), Some(path.as_str()));
        assert_eq!(transcript(fx.root(), &path)[0]["model"], model);
    }
    // Both judges' usage is charged (one event each).
    let usage: Vec<_> = fx
        .journal
        .store()
        .events_all_after(tether_store::Seq::START, 100)
        .unwrap()
        .into_iter()
        .filter(|e| e.kind == "judge_usage")
        .collect();
    assert_eq!(usage.len(), 2, "every judge's usage counts");
}

#[tokio::test]
async fn a_panel_whose_judges_all_accept_signs_off_with_every_judges_quotes() {
    let fx = Fx::new();
    let (first, second) = (accepts(), accepts());
    let outcome = fx
        .complete_with(panel(&[(&first, "alpha"), (&second, "beta")], Agree::All))
        .await;
    let SignoffOutcome::Accepted { reason, checks, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    assert_eq!(reason, "2 of 2 judges accepted (all): judged: accept");
    assert_eq!(checks.len(), 2, "each judge's checked quote");
    assert!(checks.iter().all(|c| c.line == Some(1)));
    assert_eq!(fx.status("add"), "done");
    assert!(
        fx.last_log()
            .contains(" add signed off by judges alpha and beta: 2 of 2 judges accepted"),
        "{}",
        fx.last_log()
    );
    assert_eq!(votes(&fx).len(), 2);
}

#[tokio::test]
async fn with_all_no_judge_is_asked_after_the_first_that_does_not_accept() {
    let fx = Fx::new();
    let (first, second) = (rejects("more work"), accepts());
    let outcome = fx
        .complete_with(panel(&[(&first, "alpha"), (&second, "beta")], Agree::All))
        .await;
    assert!(!outcome.is_accepted());
    assert_eq!(second.served(), 0, "the outcome was decided");
    assert_eq!(
        kinds(&votes(&fx)),
        [("alpha".to_owned(), VerdictKind::JudgeRejected)]
    );
}

#[tokio::test]
async fn a_majority_of_three_signs_off_and_stops_once_decided() {
    let fx = Fx::new();
    let (a, b, c) = (accepts(), rejects("docs"), accepts());
    let outcome = fx
        .complete_with(panel(
            &[(&a, "alpha"), (&b, "beta"), (&c, "gamma")],
            Agree::Majority,
        ))
        .await;
    assert!(outcome.is_accepted(), "{outcome:?}");
    assert_eq!(
        outcome.reason(),
        "2 of 3 judges accepted (majority): judged: accept"
    );
    assert_eq!(votes(&fx).len(), 3);

    // Two accepts decide a majority of three: the third judge is not asked.
    let fx = Fx::new();
    let (a, b, c) = (accepts(), accepts(), rejects("docs"));
    let outcome = fx
        .complete_with(panel(
            &[(&a, "alpha"), (&b, "beta"), (&c, "gamma")],
            Agree::Majority,
        ))
        .await;
    assert!(outcome.is_accepted());
    assert_eq!(c.served(), 0);

    // Two rejects decide it the other way.
    let fx = Fx::new();
    let (a, b, c) = (rejects("x"), rejects("y"), accepts());
    let outcome = fx
        .complete_with(panel(
            &[(&a, "alpha"), (&b, "beta"), (&c, "gamma")],
            Agree::Majority,
        ))
        .await;
    assert!(!outcome.is_accepted());
    assert_eq!(c.served(), 0);
    let SignoffOutcome::Rejected { missing, .. } = &outcome else {
        panic!()
    };
    assert_eq!(missing, &["x", "y"], "what every judge found missing");
}

#[tokio::test]
async fn each_judges_quotes_are_checked_on_their_own() {
    let fx = Fx::new();
    let honest = accepts();
    let invented = Script::turns([verdict(
        "accept",
        json!([check(
            "src/lib.rs",
            "pub fn multiply(a: i32, b: i32) -> i32 {"
        )]),
        &[],
    )]);
    let outcome = fx
        .complete_with(panel(
            &[(&honest, "alpha"), (&invented, "beta")],
            Agree::All,
        ))
        .await;
    assert!(!outcome.is_accepted(), "{outcome:?}");
    let votes = votes(&fx);
    assert_eq!(votes[1].kind, VerdictKind::JudgeRejected);
    assert!(
        votes[1]
            .reason
            .starts_with("the judge's accept is not backed by its evidence"),
        "{}",
        votes[1].reason
    );
}

#[tokio::test]
async fn a_failing_panel_judge_is_ruled_as_one_judge_failing_is() {
    // With "all", a judge that cannot judge ends the attempt as judge unavailable (fail
    // closed; the same tree may be asked about again).
    let fx = Fx::new();
    let (broken, second) = (Script::turns([Turn::text("Looks done to me!")]), accepts());
    let outcome = fx
        .complete_with(panel(&[(&broken, "alpha"), (&second, "beta")], Agree::All))
        .await;
    assert!(outcome.judge_unavailable(), "{outcome:?}");
    assert_eq!(second.served(), 0);
    assert_eq!(
        fx.verdicts()[0].decision.kind,
        VerdictKind::JudgeUnavailable
    );

    // With a majority, the others still decide: a failing judge is one vote short.
    let fx = Fx::new();
    let (a, broken, c) = (accepts(), Script::turns([]), accepts());
    let outcome = fx
        .complete_with(panel(
            &[(&a, "alpha"), (&broken, "beta"), (&c, "gamma")],
            Agree::Majority,
        ))
        .await;
    assert!(outcome.is_accepted(), "{outcome:?}");
    assert_eq!(
        kinds(&votes(&fx)),
        [
            ("alpha".to_owned(), VerdictKind::Accepted),
            ("beta".to_owned(), VerdictKind::JudgeUnavailable),
            ("gamma".to_owned(), VerdictKind::Accepted)
        ]
    );
}

#[tokio::test]
async fn a_judge_of_the_panel_ruling_the_goal_blocked_pauses_as_one_judge_does() {
    let fx = Fx::new();
    let (first, blocked) = (
        accepts(),
        Script::turns([Turn::text(
            "```json\n{\"verdict\": \"blocked\", \"summary\": \"needs the production key\"}\n```",
        )]),
    );
    let outcome = fx
        .complete_with(panel(&[(&first, "alpha"), (&blocked, "beta")], Agree::All))
        .await;
    assert!(!outcome.is_accepted());
    let record = fx.verdicts().pop().unwrap().decision;
    assert_eq!(record.kind, VerdictKind::JudgeBlocked);
    assert!(
        record
            .reason
            .ends_with("beta: the judge ruled the goal blocked: needs the production key"),
        "{}",
        record.reason
    );
}

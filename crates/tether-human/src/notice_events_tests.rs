use tether_config::NoticeKind;
use tether_store::{Event, Outcome, Rule, RunId, Seq, StoredEvent, Verdict};

use super::*;

fn run() -> RunId {
    "r-7k2m9x3tq0w2".parse().unwrap()
}

fn stored(event: Event) -> StoredEvent {
    StoredEvent {
        seq: Seq(1),
        run_id: Some(run()),
        at_ms: 0,
        kind: event.kind().to_owned(),
        payload: serde_json::to_value(&event).unwrap(),
        event: Some(event),
    }
}

fn verdict(goal: &str, verdict: Verdict) -> Event {
    Event::GoalVerdict {
        goal_id: goal.to_owned(),
        verdict,
        reason: "cargo test failed: 2 tests".to_owned(),
    }
}

fn finished(outcome: Outcome) -> Event {
    Event::RunFinished { outcome }
}

/// The notices `events` make, as `kind: plain text` lines.
fn notices(rejected_after: u32, events: Vec<Event>) -> String {
    let mut watch = NoticeWatch::new(rejected_after);
    events
        .into_iter()
        .filter_map(|e| watch.notice(&stored(e)))
        .map(|n| format!("{}: {}", n.kind.as_str(), n.plain()))
        .collect::<Vec<_>>()
        .join("\n---\n")
}

#[test]
fn each_kind_has_a_short_text() {
    let texts = [
        notices(3, vec![finished(Outcome::Completed)]),
        notices(
            3,
            vec![
                Event::IterationFailed {
                    n: 4,
                    error: "the model endpoint answered 500\nretry later".to_owned(),
                },
                finished(Outcome::Failed),
            ],
        ),
        notices(3, vec![finished(Outcome::Failed)]),
        notices(3, vec![finished(Outcome::BudgetExhausted)]),
        notices(
            3,
            vec![
                Event::RuleFired {
                    rule: Rule::SpinGuard,
                    reason: "3 iterations without a tool call".to_owned(),
                },
                finished(Outcome::Blocked),
            ],
        ),
        notices(
            3,
            vec![Event::Paused {
                reason: "the judge failed 3 times in a row".to_owned(),
            }],
        ),
        notices(
            3,
            vec![Event::Paused {
                reason: "paused by web:alice".to_owned(),
            }],
        ),
        notices(3, vec![verdict("g1", Verdict::Accept)]),
        notices(
            2,
            vec![
                verdict("g1", Verdict::Reject),
                verdict("g1", Verdict::Reject),
            ],
        ),
    ];
    insta::assert_snapshot!(texts.join("\n===\n"));
}

#[test]
fn cancelled_and_interrupted_runs_make_no_notice() {
    assert_eq!(notices(3, vec![finished(Outcome::Cancelled)]), "");
    assert_eq!(notices(3, vec![finished(Outcome::Interrupted)]), "");
}

#[test]
fn other_events_make_no_notice() {
    let events = vec![
        Event::IterationStarted { n: 1 },
        Event::ToolCalled {
            n: 1,
            tool: "bash".to_owned(),
            summary: "ls".to_owned(),
        },
        Event::Resumed {
            by: "cli".to_owned(),
            reset_budget: false,
            settings: None,
        },
    ];
    assert_eq!(notices(3, events), "");
}

#[test]
fn rejected_every_n_in_a_row_of_one_goal() {
    let kinds = |events: Vec<Event>| -> Vec<NoticeKind> {
        let mut watch = NoticeWatch::new(2);
        events
            .into_iter()
            .filter_map(|e| watch.notice(&stored(e)))
            .map(|n| n.kind)
            .collect()
    };
    let reject = |g: &str| verdict(g, Verdict::Reject);
    // Two in a row: one notice; four: two.
    assert_eq!(kinds(vec![reject("g1")]), vec![]);
    assert_eq!(
        kinds(vec![reject("g1"), reject("g1")]),
        vec![NoticeKind::Rejected]
    );
    assert_eq!(
        kinds(vec![reject("g1"), reject("g1"), reject("g1"), reject("g1")]),
        vec![NoticeKind::Rejected, NoticeKind::Rejected]
    );
    // A sign-off in between resets the count.
    assert_eq!(
        kinds(vec![
            reject("g1"),
            verdict("g2", Verdict::Accept),
            reject("g1")
        ]),
        vec![NoticeKind::SignedOff]
    );
    // So does a verdict on another goal.
    assert_eq!(
        kinds(vec![reject("g1"), reject("g2"), reject("g1")]),
        vec![]
    );
}

#[test]
fn a_run_less_event_makes_no_notice() {
    let mut watch = NoticeWatch::new(1);
    let mut event = stored(finished(Outcome::Completed));
    event.run_id = None;
    assert_eq!(watch.notice(&event), None);
}

#[test]
fn reasons_are_one_line_and_cut() {
    let long = format!("first\x1b[31m line\n{}", "x".repeat(500));
    let text = notices(3, vec![Event::Paused { reason: long }]);
    assert!(!text.contains('\x1b'), "{text}");
    assert!(text.lines().count() == 2, "{text}");
    assert!(text.contains('…'), "{text}");
}

#[test]
fn the_sink_queues_what_the_watch_makes() {
    let (sink, mut queue) = NoticeSink::new(&tether_config::NotifyConfig::default());
    sink.event(&stored(Event::IterationStarted { n: 1 }));
    sink.event(&stored(finished(Outcome::Completed)));
    let n = queue.rx.try_recv().unwrap();
    assert_eq!(n.kind, NoticeKind::Done);
    assert!(queue.rx.try_recv().is_err());
}

//! `complete_goal` and `cancel_goal` as the built-in agent's tools: outcomes are results for the
//! model, attempts are filed under the run.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tether_model::scripted::Script;
use tether_signoff::tool::{CancelGoal, CompleteGoal};
use tether_store::RunCell;
use tether_store::{Event, RunKind, Seq};
use tether_tools::{ToolContext, ToolSet};

use crate::common::{Fx, check, scripted, verdict};

#[tokio::test]
async fn complete_goal_files_the_attempt_under_the_run_and_answers_the_model() {
    let fx = Fx::new();
    let run = fx
        .journal
        .store()
        .create_run(RunKind::Goal, fx.root(), &json!({}))
        .unwrap();
    let cell: RunCell = Arc::new(Mutex::new(None));
    let script = Script::turns([verdict(
        "accept",
        json!([check("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {")]),
        &[],
    )]);
    let signoff = fx.signoff(Some(scripted(&script)));
    let tools = ToolSet::new()
        .with(Arc::new(CompleteGoal::new(signoff.clone(), cell.clone())))
        .unwrap()
        .with(Arc::new(CancelGoal::new(signoff)))
        .unwrap();
    let ctx = ToolContext::default();

    let bad = tools
        .call("complete_goal", json!({"id": "add"}), &ctx)
        .await
        .unwrap();
    assert!(
        bad.output.is_error && bad.output.content.contains("evidence"),
        "{:?}",
        bad.output
    );
    let refused = tools
        .call(
            "complete_goal",
            json!({"id": "nope", "evidence": "x"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(refused.output.is_error);
    assert!(
        refused
            .output
            .content
            .starts_with("complete_goal refused for goal `nope`: no goal")
    );

    *cell.lock().unwrap() = Some(run.clone());
    let done = tools
        .call(
            "complete_goal",
            json!({"id": "add", "evidence": "check.sh passes", "paths": ["src/lib.rs"]}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!done.output.is_error);
    assert!(
        done.output
            .content
            .starts_with("Goal `add` is signed off (attempt 1)"),
        "{}",
        done.output.content
    );
    assert_eq!(done.summary, "complete_goal add (accepted)");
    let dir = fx.root().join(".tether/runs").join(run.to_string());
    assert!(dir.join("verify-add-1.log").is_file());
    assert!(dir.join("judge-add-1.jsonl").is_file());
    let record = &fx.verdicts()[0].decision;
    assert_eq!(record.run_id.as_ref(), Some(&run));
    let events = fx.journal.store().events(&run, Seq(0), usize::MAX).unwrap();
    assert!(
        events.iter().any(
            |e| matches!(&e.event, Some(Event::GoalVerdict { goal_id, .. }) if goal_id == "add")
        ),
        "{events:?}"
    );

    let cancelled = tools
        .call(
            "cancel_goal",
            json!({"id": "later", "reason": "not needed"}),
            &ctx,
        )
        .await
        .unwrap();
    assert!(!cancelled.output.is_error);
    assert_eq!(cancelled.summary, "cancel_goal later (cancelled)");
    assert_eq!(fx.status("later"), "cancelled");
    let again = tools
        .call("cancel_goal", json!({"id": "add", "reason": "x"}), &ctx)
        .await
        .unwrap();
    assert!(again.output.is_error);
    assert_eq!(
        again.output.content,
        "cancel_goal refused for goal `add`: goal `add` is already done"
    );
}

#[tokio::test]
async fn a_failing_file_system_is_fatal_and_not_a_result_for_the_model() {
    let fx = Fx::new();
    // The directory for the verify log cannot be made: a file stands where it should be.
    std::fs::create_dir_all(fx.ws.state_dir()).unwrap();
    std::fs::write(fx.ws.state_dir().join("signoff"), "").unwrap();
    let cell: RunCell = Arc::new(Mutex::new(None));
    let tools = ToolSet::new()
        .with(Arc::new(CompleteGoal::new(fx.signoff(None), cell)))
        .unwrap();
    let fatal = tools
        .call(
            "complete_goal",
            json!({"id": "add", "evidence": "check.sh passes"}),
            &ToolContext::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(fatal.tool(), "complete_goal");
    assert_eq!(
        fatal.to_string(),
        "tool `complete_goal` failed: the store or the file system failed"
    );
    let source = std::error::Error::source(&fatal).unwrap().to_string();
    assert!(source.contains("writing the verify log"), "{source}");
}

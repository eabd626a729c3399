//! Runs, verdicts and questions stored directly, as other processes would have.

use tether_config::Workspace;
use tether_store::Store;

/// Seeds a goal run with two iterations, a tool call, a rejected and an accepted verdict.
pub fn goal_run(store: &Store, ws: &Workspace) -> tether_store::RunId {
    use tether_store::{Event, NewVerdict, RunKind, Verdict, VerdictKind};
    let run = store
        .create_run(
            RunKind::Goal,
            ws.root(),
            &serde_json::json!({"plan": "plan.md", "max_iterations": 5}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    store
        .append(
            Some(&run),
            &Event::ToolCalled {
                n: 1,
                tool: "bash".into(),
                summary: "bash: sh test.sh (exit 1)".into(),
            },
        )
        .unwrap();
    let verdict =
        |attempt, kind: VerdictKind, exit, reason: &str, checks, missing: Vec<String>| NewVerdict {
            run_id: Some(run.clone()),
            goal_id: "greet".into(),
            plan_path: "plan.md".into(),
            attempt,
            verify_exit: Some(exit),
            verdict: kind.verdict(),
            kind,
            reason: reason.into(),
            checks,
            missing,
            judge_model: Some("scripted judge".into()),
            transcript_path: None,
            contract_hash: None,
            judges: Vec::new(),
        };
    store
        .insert_verdict(&verdict(
            1,
            VerdictKind::VerifyFailed,
            1,
            "verify failed: `sh test.sh` exited 1",
            serde_json::json!([]),
            vec!["the verify command must pass".into()],
        ))
        .unwrap();
    store
        .append(
            Some(&run),
            &Event::IterationCompleted {
                n: 1,
                summary: "wrote greet.sh".into(),
            },
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 2 })
        .unwrap();
    store
        .insert_verdict(&verdict(
            2,
            VerdictKind::Accepted,
            0,
            "greet.sh prints the greeting",
            serde_json::json!([{"path": "greet.sh", "quote": "echo \"Hello, $1!\"", "observation": "uses its argument", "line": 1}]),
            vec![],
        ))
        .unwrap();
    let _ = Verdict::Accept;
    run
}

/// Stores a pending question (for `run`, if given).
pub fn question(
    store: &Store,
    run: Option<&tether_store::RunId>,
    text: &str,
) -> tether_store::Question {
    store
        .insert_question(&tether_store::NewQuestion {
            run_id: run.cloned(),
            thread_id: None,
            question: text.into(),
            context: "some context".into(),
            confidence: Some(30),
            options: Vec::new(),
        })
        .unwrap()
}

/// Records that `run` lives on `machine` in `workspace`, as a run created there would: runs
/// created in a test all get this machine, and a team store holds runs of many.
pub fn place(db: &std::path::Path, run: &tether_store::RunId, machine: &str, workspace: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let changed = conn
        .execute(
            "UPDATE runs SET machine = ?1, workspace = ?2 WHERE id = ?3",
            rusqlite::params![machine, workspace, run.as_str()],
        )
        .unwrap();
    assert_eq!(changed, 1);
}

/// Records what iteration `n` of `run` used: its agent's turn (`input` and `output` tokens at
/// `cost` dollars), then a sign-off judge's call of `judge` tokens when not 0.
pub fn usage(
    store: &Store,
    run: &tether_store::RunId,
    n: u32,
    input: u64,
    output: u64,
    cost: f64,
    judge: u64,
) {
    use tether_store::{Event, JudgeRole};
    store
        .append(
            Some(run),
            &Event::IterationUsage {
                n,
                input_tokens: input,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: output,
                cost_usd: Some(cost),
                goals: Vec::new(),
                duration_ms: 1_000,
            },
        )
        .unwrap();
    if judge > 0 {
        store
            .append(
                Some(run),
                &Event::JudgeUsage {
                    judge: JudgeRole::SignOff,
                    goal_id: Some("greet".into()),
                    calls: 1,
                    input_tokens: judge,
                    cached_input_tokens: 0,
                    cache_write_input_tokens: 0,
                    output_tokens: 0,
                    cost_usd: Some(0.001),
                },
            )
            .unwrap();
    }
}

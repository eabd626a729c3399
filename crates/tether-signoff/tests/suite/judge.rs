//! Stage 2: the judge's session, its verdict and the quote check, and every way it can fail —
//! none of which may ever end in an accept.

use serde_json::json;
use tether_model::Message;
use tether_model::scripted::{Script, Turn};
use tether_signoff::SignoffOutcome;
use tether_store::Verdict;

use crate::common::{Fx, check, scripted, transcript, verdict};

#[tokio::test]
async fn an_accept_with_real_quotes_signs_the_goal_off() {
    let fx = Fx::new();
    let script = Script::turns([
        Turn::tool("read", json!({"path": "src/lib.rs"})),
        verdict(
            "accept",
            json!([
                check(
                    "src/lib.rs",
                    "pub fn add(a: i32, b: i32) -> i32 {\n    a + b"
                ),
                check("check.sh", "grep -q 'a + b' src/lib.rs && echo 'check ok'")
            ]),
            &[],
        ),
    ]);
    let outcome = fx.complete(Some(scripted(&script))).await;
    assert_eq!(
        script.served(),
        2,
        "one session: a tool call, then the verdict"
    );
    let SignoffOutcome::Accepted {
        reason,
        checks,
        judge_model,
        transcript: path,
        attempt,
        ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(
        (reason.as_str(), checks.len(), *attempt),
        ("judged: accept", 2, 1)
    );
    assert_eq!(judge_model.as_deref(), Some("judge-model"));

    assert_eq!(fx.status("add"), "done");
    assert!(
        fx.last_log().ends_with(" add signed off: judged: accept"),
        "{}",
        fx.last_log()
    );

    let [record] = fx.verdicts().try_into().unwrap();
    let v = record.decision;
    assert_eq!(
        (v.verdict, v.attempt, v.verify_exit),
        (Verdict::Accept, 1, Some(0))
    );
    assert_eq!(v.judge_model.as_deref(), Some("judge-model"));
    assert_eq!(v.checks[0]["path"], "src/lib.rs");
    assert_eq!(
        v.transcript_path.as_deref(),
        Some(".tether/signoff/judge-add-1.jsonl")
    );
    assert!(v.contract_hash.unwrap().starts_with("sha256:"));

    let lines = transcript(fx.root(), path.as_deref().unwrap());
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        ["judge", "request", "response", "request", "response"]
    );
    let first = &lines[1]["request"];
    assert!(
        first["system"]
            .as_str()
            .unwrap()
            .contains("Look for gaming")
    );
    let tools: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "grep", "ls"], "read-only tools only");
    let prompt = first["messages"][0]["text"].as_str().unwrap();
    for part in [
        "done_when: `add` returns the sum",
        "- the test asserts nothing",
        "it exited 0",
        "check ok",
        "what changed since the run began is not known",
        "add returns a + b; check.sh passes",
        "- src/lib.rs",
    ] {
        assert!(prompt.contains(part), "{part} missing from:\n{prompt}");
    }
    // The read tool really ran for the judge.
    let second: Vec<Message> =
        serde_json::from_value(lines[3]["request"]["messages"].clone()).unwrap();
    let Some(Message::Tool {
        content,
        is_error: false,
        ..
    }) = second.last()
    else {
        panic!("{second:?}")
    };
    assert!(content.contains("a + b"), "{content}");
}

async fn rejected(fx: &Fx, script: &Script) -> (String, Vec<String>, bool) {
    let outcome = fx.complete(Some(scripted(script))).await;
    assert_eq!(fx.status("add"), "active", "{outcome:?}");
    match outcome {
        SignoffOutcome::Rejected {
            reason,
            missing,
            judge_unavailable,
            ..
        } => (reason, missing, judge_unavailable),
        other => panic!("expected a reject, got {other:?}"),
    }
}

#[tokio::test]
async fn an_accept_with_an_invented_quote_is_a_reject_naming_it() {
    let fx = Fx::new();
    let script = Script::turns([verdict(
        "accept",
        json!([
            check("src/lib.rs", "pub fn add(a: i32, b: i32) -> i32 {"),
            check("src/lib.rs", "assert_eq!(add(2, 2), 4);")
        ]),
        &[],
    )]);
    let (reason, missing, unavailable) = rejected(&fx, &script).await;
    assert!(!unavailable);
    assert_eq!(
        reason,
        "the judge's accept is not backed by its evidence: the quote \"assert_eq!(add(2, 2), 4);\" \
         is not a run of whole lines of `src/lib.rs`"
    );
    assert_eq!(
        missing,
        ["the quote \"assert_eq!(add(2, 2), 4);\" is not a run of whole lines of `src/lib.rs`"]
    );
    assert_eq!(fx.verdicts()[0].decision.verdict, Verdict::Reject);
    assert!(
        fx.last_log()
            .contains("add sign-off rejected: the judge's accept is not backed")
    );
}

#[tokio::test]
async fn an_accept_without_checks_or_quoting_outside_the_workspace_is_a_reject() {
    let fx = Fx::new();
    let script = Script::turns([
        verdict("accept", json!([]), &[]),
        verdict(
            "accept",
            json!([check("../outside.txt", "pub fn add")]),
            &[],
        ),
        verdict("accept", json!([check("src/lib.rs", "")]), &[]),
        verdict(
            "accept",
            json!([check(
                "src/missing.rs",
                "pub fn add(a: i32, b: i32) -> i32 {"
            )]),
            &[],
        ),
    ]);
    for why in [
        "cites no checks",
        "is outside the workspace",
        "has an empty quote",
        "cannot be checked",
    ] {
        // Some work between the attempts (an unchanged tree is not checked again).
        fx.write("NOTES.md", why);
        let (reason, _, unavailable) = rejected(&fx, &script).await;
        assert!(reason.contains(why), "{why}: {reason}");
        assert!(!unavailable);
    }
    assert_eq!(fx.verdicts().len(), 4);
}

#[tokio::test]
async fn a_reject_keeps_the_goal_active_and_logs_what_is_missing() {
    let fx = Fx::new();
    let script = Script::turns([verdict(
        "reject",
        json!([]),
        &["a test of add", "a doc comment"],
    )]);
    let (reason, missing, unavailable) = rejected(&fx, &script).await;
    assert_eq!((reason.as_str(), unavailable), ("judged: reject", false));
    assert_eq!(missing, ["a test of add", "a doc comment"]);
    assert!(fx.last_log().ends_with(
        " add sign-off rejected: judged: reject; missing: a test of add; a doc comment"
    ));
    assert_eq!(fx.verdicts()[0].decision.missing, missing);
}

#[tokio::test]
async fn garbage_or_endless_tool_calls_are_judge_unavailable() {
    let fx = Fx::new();
    let garbage = Script::turns([Turn::text("Looks done to me!")]);
    let (reason, _, unavailable) = rejected(&fx, &garbage).await;
    assert!(unavailable);
    assert_eq!(
        reason,
        "judge unavailable: no parsable verdict: its final message holds no JSON object"
    );

    let endless = Script::turns([]).then_repeat(Turn::tool("ls", json!({})));
    let judge = scripted(&endless).with_max_steps(3);
    let outcome = fx.complete(Some(judge)).await;
    assert!(outcome.judge_unavailable(), "{outcome:?}");
    assert_eq!(
        outcome.reason(),
        "judge unavailable: it made 3 model calls without giving a verdict"
    );
    assert_eq!(endless.served(), 3);
    let lines = transcript(fx.root(), ".tether/signoff/judge-add-2.jsonl");
    assert_eq!(lines.last().unwrap()["type"], "unavailable");
    let last_request = &lines[lines.len() - 3]["request"];
    assert_eq!(
        last_request["tools"].as_array().unwrap().len(),
        3,
        "the tools stay offered"
    );
    let last_message = last_request["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last_message["role"], "user");
    assert!(
        last_message["text"]
            .as_str()
            .unwrap()
            .contains("do not call any more tools")
    );
}

/// Runs git in `dir` (a test's own repository).
fn git(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

#[tokio::test]
async fn a_one_line_fix_is_signed_off_on_its_changed_line_and_an_untouched_import_is_not() {
    let fx = Fx::new();
    fx.write(".nvmrc", "18\n");
    fx.write("main.py", "import os\n\nprint(os.getcwd())\n");
    git(fx.root(), &["init", "-q"]);
    git(
        fx.root(),
        &["add", "plan.md", "src", "check.sh", ".nvmrc", "main.py"],
    );
    git(fx.root(), &["commit", "-q", "-m", "before the run"]);
    fx.begin().await;
    fx.write(".nvmrc", "22\n");

    let refused = Script::turns([verdict(
        "accept",
        json!([check("main.py", "import os")]),
        &[],
    )]);
    let (reason, missing, unavailable) = rejected(&fx, &refused).await;
    assert!(!unavailable);
    assert!(
        reason.contains(
            "the quote \"import os\" of `main.py` does not count: line 1 was not changed by this \
             run, and it is an import line"
        ) && reason.contains("quote the lines this run changed (.nvmrc line 1)"),
        "{reason}"
    );
    assert_eq!(missing.len(), 1, "{missing:?}");

    fx.write("NOTES.md", "node 22 is the LTS\n");
    let accepted = Script::turns([verdict("accept", json!([check(".nvmrc", "22")]), &[])]);
    let outcome = fx.complete(Some(scripted(&accepted))).await;
    let SignoffOutcome::Accepted {
        checks, transcript, ..
    } = &outcome
    else {
        panic!("{outcome:?}");
    };
    assert_eq!(checks[0].line, Some(1));
    assert_eq!(fx.status("add"), "done");
    // The judge was told which lines changed, to cite them first.
    let lines = crate::common::transcript(fx.root(), transcript.as_deref().unwrap());
    let prompt = lines[1]["request"]["messages"][0]["text"].as_str().unwrap();
    assert!(
        prompt.contains(
            "## Lines changed since the run began\nCite these first; a changed line counts \
             however short.\n- .nvmrc: line 1\n- NOTES.md: every line (a new file)\n"
        ),
        "{prompt}"
    );
}

/// A sign-off outside a run (a person's `tether goal complete`) compares the workspace with the
/// start of the latest run of this workspace; with no run, no line is known to be changed.
#[tokio::test]
async fn outside_a_run_the_latest_runs_start_is_what_changed_is_measured_from() {
    let fx = Fx::new();
    fx.write("mode.txt", "disabled\n");
    let accept = Script::turns([verdict(
        "accept",
        json!([check("mode.txt", "enabled")]),
        &[],
    )]);
    fx.write("mode.txt", "enabled\n");
    let (reason, _, _) = rejected(&fx, &accept).await;
    assert!(
        reason.contains("no line is known to be changed"),
        "no run yet: {reason}"
    );

    fx.write("mode.txt", "disabled\n");
    let snaps = tether_git::Snapshots::open(
        &fx.ws.state_dir(),
        fx.root(),
        tether_git::Confinement::Sandboxed,
        &[],
    )
    .unwrap();
    let snapshot = snaps
        .snapshot(&tokio_util::sync::CancellationToken::new())
        .await
        .unwrap();
    let mut spec = json!({});
    tether_git::Start::Taken(tether_git::StartTree::of(&snapshot)).record(&mut spec);
    let run = fx
        .journal
        .store()
        .create_run(tether_store::RunKind::Goal, fx.root(), &spec)
        .unwrap();
    fx.write("mode.txt", "enabled\n");
    // Not the workspace of the rejected attempt, which would not be checked again.
    fx.write("NOTES.md", "mode enabled\n");
    let again = Script::turns([verdict(
        "accept",
        json!([check("mode.txt", "enabled")]),
        &[],
    )]);
    let outcome = fx.complete(Some(scripted(&again))).await;
    let SignoffOutcome::Accepted { transcript, .. } = &outcome else {
        panic!("{outcome:?}");
    };
    let lines = transcript_of(&fx, transcript.as_deref().unwrap());
    assert!(
        lines.contains(&format!("changes since the run began (run {run})")),
        "{lines}"
    );
}

fn transcript_of(fx: &Fx, path: &str) -> String {
    transcript(fx.root(), path)
        .iter()
        .map(ToString::to_string)
        .collect()
}

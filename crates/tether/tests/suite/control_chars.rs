//! Control characters written by an agent (questions, context, tool calls, errors) or by
//! whoever answers (answers, responders) are printed as visible escapes by `tether questions`,
//! `history`, `status` and `answer`; `--json` keeps the exact text.

use serde_json::{Value, json};
use tether_store::{Event, NewQuestion, RunKind, Store};

use crate::common::{Out, tether};

const QUESTION: &str = "Deploy?\x1b[2J\x1b[H\rAll tests passed\x1b]52;c;ZXZpbA==\x07";
const CONTEXT: &str = "log:\n\x1b[31mFAIL\x1b[0m\r\u{9b}2J ok";

fn store(dir: &std::path::Path) -> Store {
    std::fs::create_dir_all(dir.join(".tether")).unwrap();
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

fn no_raw_controls(out: &Out) {
    for text in [&out.stdout, &out.stderr] {
        assert!(!text.contains(['\x1b', '\r', '\x07', '\u{9b}']), "{text:?}");
    }
}

/// The question id as `q-ID`.
fn ids(out: Out) -> Out {
    out.redact(r"q-[0-9a-z]+", "q-ID")
        .redact(r"r-[0-9a-z]+", "r-ID")
}

#[test]
fn questions_and_history_show_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let run = store
        .create_run(RunKind::Goal, dir.path(), &json!({}))
        .unwrap();
    let q = store
        .insert_question(&NewQuestion {
            run_id: Some(run),
            question: QUESTION.into(),
            context: CONTEXT.into(),
            confidence: Some(20),
            ..NewQuestion::default()
        })
        .unwrap();
    let pending = ids(tether(dir.path(), &["questions"]));
    no_raw_controls(&pending);
    insta::assert_snapshot!("questions_escaped", pending.stdout);

    let json = tether(dir.path(), &["questions", "--json"]);
    let list: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(list[0]["question"], QUESTION);
    assert_eq!(list[0]["context"], CONTEXT);

    let answered = tether(
        dir.path(),
        &[
            "answer",
            q.id.as_str(),
            "yes\x1b[8m",
            "--as",
            "eve\x1b[2K\r",
        ],
    );
    assert_eq!(answered.code, 0, "{}", answered.stderr);
    let again = tether(dir.path(), &["answer", q.id.as_str(), "no", "--as", "bob"]);
    no_raw_controls(&again);
    assert_eq!(
        again.stderr,
        format!(
            "{} was already answered on cli by eve\\x1b[2K\\r; your answer was not used\n",
            q.id
        )
    );
    let history = ids(tether(dir.path(), &["history"]));
    no_raw_controls(&history);
    insta::assert_snapshot!("history_escaped", history.stdout);
    let json = tether(dir.path(), &["history", "--json"]);
    let list: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        (list[0]["answer"].as_str(), list[0]["responder"].as_str()),
        (Some("yes\x1b[8m"), Some("eve\x1b[2K\r"))
    );
}

#[test]
fn status_shows_the_agents_tool_calls_and_errors_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let run = store
        .create_run(RunKind::Ralph, dir.path(), &json!({"max_iterations": 3}))
        .unwrap();
    let events = [
        Event::IterationStarted { n: 1 },
        Event::ToolCalled {
            n: 1,
            tool: "bash".into(),
            summary: "bash printf '\x1b]0;pwned\x07\x1b[2J'\rclean".into(),
        },
        Event::IterationUsage {
            n: 1,
            input_tokens: 1200,
            cached_input_tokens: 800,
            cache_write_input_tokens: 200,
            goals: Vec::new(),
            duration_ms: 0,
            output_tokens: 340,
            cost_usd: Some(0.0125),
        },
        Event::IterationFailed {
            n: 1,
            error: "model said \x1b[31mno\x1b[0m\r".into(),
        },
    ];
    store.append_all(Some(&run), &events).unwrap();
    let out = ids(tether(dir.path(), &["status"])).redact(r"\d+ s ago", "[AGO]");
    no_raw_controls(&out);
    insta::assert_snapshot!("status_escaped", out.stdout);
    let json: Value =
        serde_json::from_str(&tether(dir.path(), &["status", "--json"]).stdout).unwrap();
    let usage = json!({"input_tokens": 1200, "cached_input_tokens": 800, "cache_write_input_tokens": 200, "output_tokens": 340, "cost_usd": 0.0125});
    assert_eq!(json["usage"], usage);
    let json = tether(dir.path(), &["status", "--json"]);
    let v: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(
        v["last_tool_call"],
        "bash printf '\x1b]0;pwned\x07\x1b[2J'\rclean"
    );
}

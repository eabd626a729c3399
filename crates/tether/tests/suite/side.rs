//! `tether side "<question>"`: a question about a run asked on the side, end to end. The side
//! model is the fake model server; the run is a Ralph loop with a shell script as its agent (or
//! the built-in agent, for a question to a person). The answer is printed, recorded in the run's
//! timeline as a `side_question`, and never reaches the agent nor changes the run.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Seq, Store};
use tether_testkit::model_server::FakeModelServer;
use tether_testkit::wait_until;

use crate::common::{
    PATIENCE, model_table, pending_question, run, runtime, spawn, text, wait_output,
};

/// The agent: counts its runs, saves the prompt it was given (its stdin) in `prompt-<n>.txt`;
/// on run 1 it says it is running (`running-1`) and waits for `go-1`; on run 2 it keeps the
/// promise.
const AGENT: &str = r#"
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
cat > prompt-$n.txt
if [ $n -eq 1 ]; then
  touch running-1
  while [ ! -f go-1 ]; do sleep 0.05; done
  echo "wrote the parser"
else
  echo "all done <promise>DONE</promise>"
fi
"#;

const QUESTION: &str = "What is the agent doing right now, and why?";
const ANSWER: &str = "It is in iteration 1, waiting for a file named go-1.";

/// Waits (with a deadline) until `path` exists.
fn wait_for(path: PathBuf) {
    let what = path.display().to_string();
    wait_until(&what, PATIENCE, || path.exists().then_some(())).unwrap();
}

fn status(dir: &Path) -> Value {
    let out = run(dir, &["status", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

fn store(dir: &Path) -> Store {
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

/// The latest run's events.
fn events(dir: &Path) -> Vec<Event> {
    let store = store(dir);
    let run = store.latest_run().unwrap().unwrap();
    store
        .events(&run.id, Seq(0), usize::MAX)
        .unwrap()
        .into_iter()
        .filter_map(|e| e.event)
        .collect()
}

/// The side questions of the latest run, as `(question, answer, by)`.
fn side_questions(dir: &Path) -> Vec<(String, String, String)> {
    events(dir)
        .into_iter()
        .filter_map(|e| match e {
            Event::SideQuestion {
                question,
                answer,
                by,
                ..
            } => Some((question, answer, by)),
            _ => None,
        })
        .collect()
}

/// The run's state as `tether status --json` tells it, without what moves by itself.
fn state_of(dir: &Path) -> Value {
    let mut s = status(dir);
    for moving in ["spent", "pid", "orphaned"] {
        s.as_object_mut().unwrap().remove(moving);
    }
    s
}

/// A workspace whose Ralph run ended (the agent kept its promise in its second iteration), with
/// `side` as the `[table]` model named `name` — `[side]`, or `[model]`, which the side model
/// falls back to.
fn ended_run(side: &FakeModelServer, table: &str, name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(dir.path().join("go-1"), "").unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n\n{}",
            model_table(table, Api::OpenAiChat, side, name)
        ),
    )
    .unwrap();
    let out = run(
        dir.path(),
        &["ralph", "Do it.", "--completion-promise", "DONE"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    dir
}

#[test]
fn a_side_question_to_a_running_loop_is_answered_and_never_reaches_the_agent() {
    let rt = runtime();
    let side = rt
        .block_on(FakeModelServer::start(Script::turns([Turn::text(ANSWER)])))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n\n{}",
            model_table("side", Api::OpenAiChat, &side, "side-model")
        ),
    )
    .unwrap();
    let child = spawn(
        dir.path(),
        &["ralph", "Write the parser.", "--completion-promise", "DONE"],
    );
    wait_for(dir.path().join("running-1"));
    let before = state_of(dir.path());
    assert_eq!(
        (before["status"].as_str(), before["in_progress"].as_u64()),
        (Some("running"), Some(1))
    );

    let out = run(dir.path(), &["side", QUESTION]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), format!("{ANSWER}\n"));
    // Mid-iteration still, nothing asked of the loop.
    assert_eq!(state_of(dir.path()), before);
    assert_eq!(
        fs::read_to_string(dir.path().join("count")).unwrap().trim(),
        "1"
    );

    // The side model was told the run's prompt and the question, as the side model.
    let asked = side.requests();
    assert_eq!(asked.len(), 1);
    let body = &asked[0].raw_body;
    assert!(body.contains("Write the parser."), "{body}");
    assert!(body.contains(QUESTION), "{body}");
    assert!(body.contains("You are not that agent"), "{body}");
    assert!(body.contains("Iteration 1, in progress"), "{body}");

    fs::write(dir.path().join("go-1"), "").unwrap();
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    assert!(text(&done.stdout).contains("promise kept in iteration 2"));
    for n in 1..=2 {
        let prompt = fs::read_to_string(dir.path().join(format!("prompt-{n}.txt"))).unwrap();
        assert!(prompt.contains("Write the parser."), "{prompt}");
        assert!(!prompt.contains(QUESTION), "iteration {n} saw it: {prompt}");
        assert!(!prompt.contains(ANSWER), "iteration {n} saw it: {prompt}");
    }
    assert_eq!(
        side_questions(dir.path()),
        [(QUESTION.to_owned(), ANSWER.to_owned(), "tester".to_owned())]
    );
    assert!(
        !events(dir.path()).iter().any(|e| matches!(
            e,
            Event::MessageQueued { .. } | Event::PauseRequested { .. }
        )),
        "nothing was asked of the loop"
    );
    let timeline = text(&run(dir.path(), &["report"]).stdout);
    assert!(timeline.contains("## Side questions"), "{timeline}");
    assert!(timeline.contains(QUESTION), "{timeline}");
}

#[test]
fn an_ended_run_is_asked_about_as_json_and_its_end_stays_where_it_was() {
    let rt = runtime();
    let side = rt
        .block_on(FakeModelServer::start(Script::turns([Turn::text(
            "It kept its promise in iteration 2.",
        )])))
        .unwrap();
    // No [side]: the side model is [model]'s.
    let dir = ended_run(&side, "model", "worker-model");
    let before = store(dir.path()).latest_run().unwrap().unwrap();
    let id = before.id.to_string();

    let out = run(
        dir.path(),
        &["side", "How did it end?", "--run", &id, "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answered: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answered["run"], id.as_str());
    assert_eq!(answered["question"], "How did it end?");
    assert_eq!(answered["answer"], "It kept its promise in iteration 2.");
    assert_eq!(answered["model"], "openai-chat worker-model");
    assert_eq!(answered["calls"], 1);
    let after = store(dir.path()).latest_run().unwrap().unwrap();
    assert_eq!(after.status, before.status);
    assert_eq!(after.state.last_event_at_ms, before.state.last_event_at_ms);
    assert_eq!(after.state.last_event_kind, before.state.last_event_kind);
    assert_eq!(
        after.state.usage, before.state.usage,
        "not charged to the run"
    );
    assert_eq!(side_questions(dir.path()).len(), 1);
}

#[test]
fn without_a_model_or_a_question_it_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("agent.sh"), AGENT).unwrap();
    fs::write(dir.path().join("go-1"), "").unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n",
    )
    .unwrap();
    let out = run(dir.path(), &["side", "Anything?"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("no runs yet"),
        "{}",
        text(&out.stderr)
    );
    let out = run(
        dir.path(),
        &["ralph", "Do it.", "--completion-promise", "DONE"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = run(dir.path(), &["side", "Anything?"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("add a [side] table"),
        "{}",
        text(&out.stderr)
    );
    let out = run(dir.path(), &["side", "  "]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("the question is empty"),
        "{}",
        text(&out.stderr)
    );
    let long = "why? ".repeat(1_000);
    let out = run(dir.path(), &["side", &long]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr)
            .contains("the question is 4999 bytes long; a side question may be at most 4000"),
        "{}",
        text(&out.stderr)
    );
    assert!(side_questions(dir.path()).is_empty());
}

#[test]
fn while_the_run_waits_for_a_person_and_while_it_is_paused_the_answer_changes_nothing() {
    let rt = runtime();
    let worker = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some(_) => Turn::text("Noted. <promise>DONE</promise>"),
    });
    let worker = rt.block_on(FakeModelServer::start(worker)).unwrap();
    let side = rt
        .block_on(FakeModelServer::start(Script::turns([
            Turn::text("It waits for you to pick the logo's colour."),
            Turn::text("It is paused, waiting for the logo's colour."),
        ])))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        format!(
            "{}\n{}",
            model_table("model", Api::OpenAiChat, &worker, "worker"),
            model_table("side", Api::OpenAiChat, &side, "side")
        ),
    )
    .unwrap();
    let mut child = spawn(
        dir.path(),
        &[
            "ralph",
            "Pick the logo colour.",
            "--completion-promise",
            "DONE",
        ],
    );
    let q = pending_question(dir.path());
    let before = state_of(dir.path());
    assert_eq!(before["status"], "waiting_for_input");

    let out = run(dir.path(), &["side", "What is it waiting for?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "It waits for you to pick the logo's colour.\n"
    );
    assert_eq!(state_of(dir.path()), before);
    assert_eq!(pending_question(dir.path())["id"], q["id"]);
    let told = &side.requests()[0].raw_body;
    assert!(
        told.contains("It waits for a person's answer to: Which colour?"),
        "{told}"
    );
    assert_eq!(worker.request_count(), 1, "the agent was not called again");

    // Killed while it waits, then paused: no process drives it.
    child.kill().unwrap();
    child.wait().unwrap();
    let out = run(dir.path(), &["pause"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let paused = state_of(dir.path());
    assert_eq!(paused["status"], "paused");
    let out = run(dir.path(), &["side", "Why is it stopped?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "It is paused, waiting for the logo's colour.\n"
    );
    assert_eq!(state_of(dir.path()), paused);
    assert_eq!(side_questions(dir.path()).len(), 2);
    assert_eq!(worker.request_count(), 1);
    for request in worker.requests() {
        assert!(!request.raw_body.contains("Why is it stopped?"));
        assert!(!request.raw_body.contains("What is it waiting for?"));
    }
}

#[test]
fn the_side_model_reads_the_repository_and_nothing_outside_it() {
    let rt = runtime();
    let side = rt
        .block_on(FakeModelServer::start(Script::from_fn(|req: &Request| {
            let results: Vec<String> = req
                .messages
                .iter()
                .filter_map(|m| match m {
                    tether_model::Message::Tool { content, .. } => Some(content.clone()),
                    _ => None,
                })
                .collect();
            match results.len() {
                0 => Turn::tool("read", json!({"path": "NOTES.md"})),
                1 => Turn::tool("read", json!({"path": "../outside/secret.txt"})),
                _ => Turn::text(format!("The notes say: {}", results[0].trim())),
            }
        })))
        .unwrap();
    let top = tempfile::tempdir().unwrap();
    let dir = top.path().join("repo");
    fs::create_dir_all(&dir).unwrap();
    fs::create_dir_all(top.path().join("outside")).unwrap();
    fs::write(top.path().join("outside/secret.txt"), "hunter2-outside").unwrap();
    fs::write(dir.join("NOTES.md"), "the parser is half done").unwrap();
    fs::write(dir.join("agent.sh"), AGENT).unwrap();
    fs::write(dir.join("go-1"), "").unwrap();
    fs::write(
        dir.join("tether.toml"),
        format!(
            "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n\n{}",
            model_table("side", Api::Anthropic, &side, "side")
        ),
    )
    .unwrap();
    let out = run(&dir, &["ralph", "Do it.", "--completion-promise", "DONE"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let out = run(&dir, &["side", "How far is the parser?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let answer = text(&out.stdout);
    assert!(answer.contains("the parser is half done"), "{answer}");
    let requests = side.requests();
    assert_eq!(requests.len(), 3);
    let last = &requests[2].raw_body;
    assert!(last.contains("the parser is half done"), "{last}");
    assert!(!last.contains("hunter2-outside"), "read outside: {last}");
    let shown = text(&out.stderr);
    assert!(shown.contains("· read NOTES.md"), "{shown}");
    assert!(shown.contains("✗ read ../outside/secret.txt"), "{shown}");
}

#[test]
fn the_answer_is_escaped_before_it_reaches_the_terminal() {
    let rt = runtime();
    let side = rt
        .block_on(FakeModelServer::start(Script::turns([Turn::text(
            "fine\u{1b}]0;owned\u{7}\u{1b}[2J now",
        )])))
        .unwrap();
    let dir = ended_run(&side, "side", "side");
    let out = run(dir.path(), &["side", "Anything odd?"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!out.stdout.contains(&0x1b), "{:?}", text(&out.stdout));
    assert!(!out.stdout.contains(&0x07), "{:?}", text(&out.stdout));
    assert!(text(&out.stdout).contains("now"));
}

#[test]
fn no_answer_within_its_bounds_is_said_and_nothing_is_recorded() {
    let rt = runtime();
    // Always one more tool call: it never answers.
    let side = rt
        .block_on(FakeModelServer::start(Script::from_fn(|_: &Request| {
            Turn::tool("ls", json!({"path": "."}))
        })))
        .unwrap();
    let dir = ended_run(&side, "side", "side");

    let out = run(dir.path(), &["side", "Anything?"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let said = text(&out.stderr);
    assert!(
        said.contains("the side model gave no answer: it made 16 model calls without answering"),
        "{said}"
    );
    assert_eq!(side.request_count(), 16);

    side.fault_next(1, tether_testkit::model_server::Fault::Status(400));
    let out = run(dir.path(), &["side", "Anything?"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(
        said.contains("the side model gave no answer: its model call failed"),
        "{said}"
    );
    assert!(side_questions(dir.path()).is_empty());
}

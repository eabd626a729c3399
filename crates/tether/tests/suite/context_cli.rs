//! `[loop] context` end to end with the real agent CLIs against the fake model server: a goal
//! run of two iterations whose agent only talks. With `continue`, the second iteration's first
//! model request carries the first iteration's conversation (its whole prompt and the agent's
//! answer) and then only what is new; with `fresh` it carries no earlier answer. A session that
//! cannot be resumed gives way to a fresh context at once, recorded with why.

use std::fs;
use std::path::Path;

use serde_json::Value;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_store::{Event, Seq, Store};
use tether_testkit::model_server::{FakeModelServer, RecordedRequest};

use crate::common::agents::{PLAN, diagnose, start};
use crate::common::{run, text};

/// What the agent answers every turn.
const ANSWER: &str = "Iteration notes: the layout is src/lib.rs.";

/// `[loop] context = "<context>"`, as a `tether.toml` table after `[executor.env]`.
fn context(context: &str) -> String {
    format!("[loop]\ncontext = \"{context}\"\n")
}

/// The agent only talks.
fn talking() -> (tokio::runtime::Runtime, FakeModelServer) {
    start(Script::from_fn(|_: &Request| Turn::text(ANSWER)))
}

/// Runs two iterations of a goal run in `dir` (sign-off by verify alone; the agent signs
/// nothing off).
fn two_iterations(dir: &Path) {
    fs::write(dir.join("plan.md"), PLAN).unwrap();
    let out = run(
        dir,
        &["run", "--approve", "--no-judge", "--max-iterations", "2"],
    );
    let iterations = completed_iterations(dir);
    assert_eq!(iterations, 2, "{}", diagnose(dir, &out));
}

/// How many iterations of the workspace's run completed.
fn completed_iterations(dir: &Path) -> usize {
    let store = Store::open(dir.join(".tether/tether.db")).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let events = store.events(&run, Seq(0), usize::MAX).unwrap();
    events
        .iter()
        .filter(|e| matches!(e.event, Some(Event::IterationCompleted { .. })))
        .count()
}

/// Why the run's iterations started fresh instead of continuing (`fresh_context` events).
fn fresh_contexts(dir: &Path) -> Vec<(u32, String)> {
    let store = Store::open(dir.join(".tether/tether.db")).unwrap();
    let run = store.latest_run().unwrap().unwrap().id;
    let events = store.events(&run, Seq(0), usize::MAX).unwrap();
    events
        .into_iter()
        .filter_map(|e| match e.event {
            Some(Event::FreshContext { n, reason }) => Some((n, reason)),
            _ => None,
        })
        .collect()
}

/// A request's conversation, in order: each message's role and text, whatever the wire format
/// (Anthropic's and chat completions' `messages`, the Responses API's `input`).
fn conversation(request: &RecordedRequest) -> Vec<(String, String)> {
    let body = &request.body;
    let items = body["messages"]
        .as_array()
        .or(body["input"].as_array())
        .cloned()
        .unwrap_or_default();
    items
        .iter()
        .filter(|m| m["role"].is_string())
        .map(|m| {
            (
                m["role"].as_str().unwrap().to_owned(),
                text_of(&m["content"]),
            )
        })
        .collect()
}

/// The text of a message's content: a string, or its blocks' texts joined.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The first model request of the second iteration: the first one whose prompt carries what
/// the first iteration left (its prompt owes "Since the last iteration").
fn second_iteration(server: &FakeModelServer) -> RecordedRequest {
    server
        .requests()
        .into_iter()
        .find(|r| r.path != "/v1/models" && r.raw_body.contains("Since the last iteration"))
        .expect("no request of a second iteration")
}

/// The second iteration continued the first one's session: its request holds the first
/// prompt, the agent's answer, then the continuation.
fn assert_continued(server: &FakeModelServer) {
    let said = conversation(&second_iteration(server));
    let first_prompt = said
        .iter()
        .position(|(role, t)| role == "user" && t.contains("in one conversation"));
    let answer = said
        .iter()
        .position(|(role, t)| role == "assistant" && t.contains(ANSWER));
    let next = said
        .iter()
        .rposition(|(role, t)| role == "user" && t.contains("Next iteration"));
    match (first_prompt, answer, next) {
        (Some(p), Some(a), Some(n)) if p < a && a < n => {}
        _ => panic!("the first iteration's conversation is not carried on: {said:#?}"),
    }
    let whole_prompts = said
        .iter()
        .filter(|(_, t)| t.contains("You work in a loop"))
        .count();
    assert_eq!(whole_prompts, 1, "the whole prompt is sent once: {said:#?}");
}

/// The second iteration started from a fresh context: no answer of the agent in its request.
fn assert_fresh(server: &FakeModelServer) {
    let said = conversation(&second_iteration(server));
    assert!(
        said.iter().all(|(role, _)| role != "assistant"),
        "an earlier answer is carried on: {said:#?}"
    );
    assert!(
        said.iter().any(|(_, t)| t.contains("in a fresh context")),
        "{said:#?}"
    );
}

mod claude {
    use super::*;
    use crate::suite::claude_cli::{claude, configure_with, workspace};

    #[test]
    fn continue_resumes_claude_codes_session_in_the_next_iteration() {
        let (_rt, server) = talking();
        let dir = workspace(&server, &context("continue"));
        two_iterations(dir.path());
        assert_continued(&server);
        assert_eq!(fresh_contexts(dir.path()), []);
    }

    #[test]
    fn fresh_starts_every_iteration_of_claude_code_afresh() {
        let (_rt, server) = talking();
        let dir = workspace(&server, &context("fresh"));
        two_iterations(dir.path());
        assert_fresh(&server);
    }

    /// Claude Code run through a wrapper that loses its sessions whenever it is asked to resume
    /// one: the resume fails, and the same iteration runs again from a fresh context.
    #[test]
    fn a_session_that_cannot_be_resumed_gives_way_to_a_fresh_context() {
        let (_rt, server) = talking();
        let dir = tempfile::tempdir().unwrap();
        let wrapper = dir.path().join("forgetful-claude");
        fs::write(
            &wrapper,
            format!(
                "#!/bin/sh\nfor a in \"$@\"; do\n  [ \"$a\" = --resume ] && rm -rf \
                 \"$CLAUDE_CONFIG_DIR/projects\"\ndone\nexec '{}' \"$@\"\n",
                claude().display()
            ),
        )
        .unwrap();
        let out = std::process::Command::new("chmod")
            .arg("+x")
            .arg(&wrapper)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let program = format!("program = {:?}\n", wrapper.display().to_string());
        // Claude Code's install tree, which tether finds from its program, is the wrapper's here.
        let installed = claude().ancestors().nth(3).unwrap().display().to_string();
        let readable = format!("[sandbox]\nreadable = [{installed:?}]\n");
        configure_with(
            dir.path(),
            &server,
            "",
            &format!("{}{readable}", context("continue")),
        );
        let toml = fs::read_to_string(dir.path().join("tether.toml")).unwrap();
        let toml = toml.replacen("program = ", &format!("{program}# was: program = "), 1);
        fs::write(dir.path().join("tether.toml"), toml).unwrap();
        two_iterations(dir.path());
        assert_fresh(&server);
        let fresh = fresh_contexts(dir.path());
        assert_eq!(fresh.len(), 1, "{fresh:?}");
        assert_eq!(fresh[0].0, 2);
        assert!(
            fresh[0]
                .1
                .starts_with("Claude Code could not resume its session")
                && fresh[0].1.contains("No conversation found"),
            "{fresh:?}"
        );
    }
}

mod codex {
    use super::*;
    use crate::suite::codex_cli::Workspace;

    #[test]
    fn continue_resumes_the_codex_thread_in_the_next_iteration() {
        let (_rt, server) = talking();
        let ws = Workspace::new(&server, &context("continue"));
        two_iterations(ws.path());
        assert_continued(&server);
        assert_eq!(fresh_contexts(ws.path()), []);
    }

    #[test]
    fn fresh_starts_every_codex_iteration_afresh() {
        let (_rt, server) = talking();
        let ws = Workspace::new(&server, &context("fresh"));
        two_iterations(ws.path());
        assert_fresh(&server);
    }
}

mod pi {
    use super::*;
    use crate::suite::pi_cli::configure;

    #[test]
    fn continue_resumes_pis_session_in_the_next_iteration() {
        let (_rt, server) = talking();
        let dir = tempfile::tempdir().unwrap();
        configure(dir.path(), &server, &context("continue"));
        two_iterations(dir.path());
        assert_continued(&server);
        assert_eq!(fresh_contexts(dir.path()), []);
    }

    #[test]
    fn fresh_starts_every_pi_iteration_afresh() {
        let (_rt, server) = talking();
        let dir = tempfile::tempdir().unwrap();
        configure(dir.path(), &server, &context("fresh"));
        two_iterations(dir.path());
        assert_fresh(&server);
    }
}

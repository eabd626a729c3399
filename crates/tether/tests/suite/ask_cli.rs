//! Asking a human from the command line and from a running loop, answered from another shell.

use std::fs;
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tether_config::Api;
use tether_model::Request;
use tether_model::scripted::{Script, Turn};
use tether_testkit::model_server::FakeModelServer;

use crate::common::{cmd, model_table, pending_question, run, runtime, spawn, text, wait_output};

#[test]
fn ask_is_answered_from_another_shell() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ask",
            "Postgres or SQLite?",
            "--context",
            "small app",
            "--confidence",
            "30",
            "--json",
        ],
    );
    let q = pending_question(dir.path());
    let id = q["id"].as_str().unwrap();
    assert_eq!(
        (q["question"].as_str(), q["confidence"].as_u64()),
        (Some("Postgres or SQLite?"), Some(30))
    );
    let listed = text(&run(dir.path(), &["questions"]).stdout);
    assert!(listed.contains(&format!("tether answer {id}")), "{listed}");

    let out = run(dir.path(), &["answer", id, "SQLite", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let asked = wait_output(child);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        a,
        json!({"question_id": id, "text": "SQLite", "channel": "cli", "responder": "alice",
            "thread_id": id, "choice": null, "options_offered": 0})
    );
    assert!(text(&asked.stderr).contains(&format!("tether answer {id}")));

    let late = run(dir.path(), &["answer", id, "Postgres", "--as", "bob"]);
    assert_eq!(late.status.code(), Some(1));
    assert!(
        text(&late.stderr).contains("already answered on cli by alice"),
        "{}",
        text(&late.stderr)
    );
    let history = text(&run(dir.path(), &["history"]).stdout);
    assert!(history.contains("→ SQLite — alice via cli"), "{history}");
    assert_eq!(
        run(dir.path(), &["answer", "q-zzzzzz", "x"]).status.code(),
        Some(2)
    );
}

#[test]
fn ask_offers_choices_and_a_number_answers_one() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ask",
            "Which database? I suggest Postgres.",
            "--option",
            "Postgres",
            "--option",
            "SQLite",
            "--json",
        ],
    );
    let q = pending_question(dir.path());
    let id = q["id"].as_str().unwrap();
    assert_eq!(q["options"], json!(["Postgres", "SQLite"]));
    let listed = text(&run(dir.path(), &["questions"]).stdout);
    assert!(
        listed.contains("    1. Postgres\n    2. SQLite\n"),
        "the options are listed: {listed}"
    );
    assert!(
        listed.contains(&format!("tether answer {id} <number or your own words>")),
        "{listed}"
    );

    let out = run(dir.path(), &["answer", id, "2", "--as", "alice"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("answered {id}: chose option 2: SQLite\n")
    );
    let asked = wait_output(child);
    assert_eq!(asked.status.code(), Some(0), "{}", text(&asked.stderr));
    let a: Value = serde_json::from_slice(&asked.stdout).unwrap();
    assert_eq!(
        (&a["text"], &a["choice"], &a["options_offered"]),
        (&json!("SQLite"), &json!(1), &json!(2))
    );
    let history = text(&run(dir.path(), &["history"]).stdout);
    assert!(
        history.contains("→ SQLite (option 2) — alice via cli"),
        "{history}"
    );
}

#[test]
fn ask_refuses_bad_options_naming_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    for (args, says) in [
        (&["ask", "Q?", "--option", "Only"][..], "2 to 6"),
        (
            &["ask", "Q?", "--option", "A", "--option", "a"][..],
            "twice",
        ),
        (
            &["ask", "Q?", "--option", "A", "--option", " "][..],
            "option 2",
        ),
    ] {
        let out = run(dir.path(), args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("--option") && err.contains(says),
            "{args:?}: {err}"
        );
    }
    let listed = text(&run(dir.path(), &["questions"]).stdout);
    assert!(
        listed.contains("no questions are waiting"),
        "nothing was asked: {listed}"
    );
}

#[test]
fn ask_on_a_terminal_takes_a_typed_number_as_the_choice() {
    use std::io::{Read as _, Write as _};
    use std::sync::{Arc, Mutex};
    let dir = tempfile::tempdir().unwrap();
    let ask = format!(
        "{} ask 'Which database?' --option Postgres --option SQLite --option Both",
        env!("CARGO_BIN_EXE_tether")
    );
    let mut script = Command::new("script");
    let mut child = crate::common::isolate(&mut script)
        .args(["-qfec", &ask, "/dev/null"])
        .current_dir(dir.path())
        .env("TERM", "dumb")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let screen = Arc::new(Mutex::new(String::new()));
    let sink = screen.clone();
    let mut pipe = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                return;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let seen = |what: &str| screen.lock().unwrap().contains(what);
    tether_testkit::wait_until("the card", crate::common::PATIENCE, || {
        seen("Your answer:").then_some(())
    })
    .unwrap();
    stdin.write_all(b"2\n").unwrap();
    let status = crate::common::wait_exit(&mut child);
    let shown = screen.lock().unwrap().replace("\r\n", "\n");
    assert_eq!(status.code(), Some(0), "{shown}");
    for line in [
        "│   1. Postgres",
        "│   2. SQLite",
        "│   3. Both",
        "a number or your own words",
    ] {
        assert!(shown.contains(line), "the card shows {line:?}: {shown}");
    }
    assert!(
        shown.ends_with("2\nSQLite\n"),
        "prints the chosen label: {shown}"
    );
    let history = text(&run(dir.path(), &["history"]).stdout);
    assert!(
        history.contains("→ SQLite (option 2) — tester via terminal"),
        "{history}"
    );
}

#[test]
fn ctrl_c_leaves_the_question_pending() {
    let dir = tempfile::tempdir().unwrap();
    let child = spawn(dir.path(), &["ask", "Still there?"]);
    let q = pending_question(dir.path());
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = wait_output(child);
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    let again = pending_question(dir.path());
    assert_eq!(again["id"], q["id"]);
    assert_eq!(again["status"], "pending");
}

#[test]
fn a_ralph_loop_waits_for_a_human_and_continues_with_the_answer() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| match req.last_tool_result() {
        None => Turn::tool(
            "ask_human",
            json!({"question": "Which colour?", "context": "the logo", "confidence": 10}),
        ),
        Some((_, result)) => Turn::text(format!("Noted ({result}). <promise>DONE</promise>")),
    });
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake"),
    )
    .unwrap();
    let child = spawn(
        dir.path(),
        &[
            "ralph",
            "Pick the logo colour.",
            "--completion-promise",
            "DONE",
        ],
    );
    let q = pending_question(dir.path());
    let status: Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(status["status"], "waiting_for_input");
    assert_eq!(q["run_id"], status["id"]);
    let out = run(
        dir.path(),
        &[
            "answer",
            q["id"].as_str().unwrap(),
            "Blue.",
            "--as",
            "carol",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let done = wait_output(child);
    assert_eq!(done.status.code(), Some(0), "{}", text(&done.stderr));
    let requests = server.requests();
    let last = requests.last().unwrap().raw_body.clone();
    assert!(last.contains("Human replied: Blue."), "{last}");
    assert!(last.contains("responder: carol (via cli)"), "{last}");
}

#[test]
fn killed_while_waiting_then_resumed_keeps_the_same_question_and_delivers_its_answer() {
    let rt = runtime();
    let script = Script::from_fn(|req: &Request| {
        let prompt = req.last_user_text().unwrap_or_default().to_owned();
        if prompt.contains("Answer: Green.") {
            return Turn::text("Using green as the human said. <promise>DONE</promise>");
        }
        match req.last_tool_result() {
            None => Turn::tool(
                "ask_human",
                json!({"question": "Which colour?", "context": "", "confidence": 5}),
            ),
            Some(_) => Turn::text("no answer yet"),
        }
    });
    let server = rt.block_on(FakeModelServer::start(script)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tether.toml"),
        model_table("model", Api::OpenAiChat, &server, "fake"),
    )
    .unwrap();
    let mut child = cmd(
        dir.path(),
        &["ralph", "Pick a colour.", "--completion-promise", "DONE"],
    )
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let q = pending_question(dir.path());
    child.kill().unwrap(); // SIGKILL while the agent waits
    child.wait().unwrap();
    let status: Value =
        serde_json::from_slice(&run(dir.path(), &["status", "--json"]).stdout).unwrap();
    assert_eq!(
        (status["status"].as_str(), status["orphaned"].as_bool()),
        (Some("waiting_for_input"), Some(true))
    );
    // The human answers while nothing runs; the answer is kept for the resumed loop.
    let id = q["id"].as_str().unwrap();
    assert_eq!(
        run(dir.path(), &["answer", id, "Green."]).status.code(),
        Some(0)
    );
    let out = run(dir.path(), &["resume"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let history: Value =
        serde_json::from_slice(&run(dir.path(), &["history", "--json"]).stdout).unwrap();
    assert_eq!(
        history.as_array().unwrap().len(),
        1,
        "the question was not asked again"
    );
    assert_eq!(
        server.requests().len(),
        2,
        "one ask, then the resumed iteration's answer"
    );
}

//! `tether watch` on a real pseudo-terminal of 80x24, as a person runs it: the run waiting for
//! a person listed first; a run another process starts appears without a key pressed (the
//! journal read live); its question answered by an option's number; `q` quits and gives the
//! terminal back. Without a terminal it says what to use instead; inside an agent it is refused.

use tether_store::{Event, NewQuestion, RunKind, Store};
use tether_testkit::wait_until;

use crate::common::pty::Pty;
use crate::common::{PATIENCE, cmd, text};

const SIZE: (u16, u16) = (24, 80);

fn store(dir: &std::path::Path) -> Store {
    Store::open(dir.join(".tether/tether.db")).unwrap()
}

fn ralph(store: &Store, dir: &std::path::Path, prompt: &str) -> tether_store::RunId {
    let run = store
        .create_run(
            RunKind::Ralph,
            dir,
            &serde_json::json!({"prompt": prompt, "max_iterations": 5}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    run
}

/// The screen with what moves masked: run ids, clock times, the time elapsed.
fn masked(screen: &str) -> String {
    let ids = regex_lite::Regex::new(r"r-[0-9a-z]{12}").unwrap();
    let short = regex_lite::Regex::new(r"…[0-9a-z]{6}").unwrap();
    let clock = regex_lite::Regex::new(r"\d\d:\d\d:\d\d").unwrap();
    let elapsed = regex_lite::Regex::new(r"· (\d+[dhms] ?)+ *│").unwrap();
    let screen = ids.replace_all(screen, "r-xxxxxxxxxxxx");
    let screen = short.replace_all(&screen, "…xxxxxx");
    let screen = clock.replace_all(&screen, "HH:MM:SS");
    elapsed.replace_all(&screen, "· ELAPSED │").into_owned()
}

/// Waits until the terminal shows `what`.
fn shows(pty: &Pty, what: &str) -> String {
    let seen = wait_until(&format!("the screen to show {what:?}"), PATIENCE, || {
        let screen = pty.rendered(SIZE);
        screen.contains(what).then_some(screen)
    });
    seen.unwrap_or_else(|e| panic!("{e}\n--- screen ---\n{}", pty.rendered(SIZE)))
}

#[test]
fn a_person_watches_answers_by_number_and_quits_at_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("plan.md"), "# Plan\n").unwrap();
    let store = store(dir.path());
    let waiting = ralph(&store, dir.path(), "Ship the release");
    let q = store
        .insert_question(&NewQuestion {
            run_id: Some(waiting.clone()),
            thread_id: None,
            question: "Which registry do I publish to?".into(),
            context: String::new(),
            confidence: Some(2),
            options: vec!["crates.io".into(), "our mirror".into()],
        })
        .unwrap();

    let mut pty = Pty::start_sized(dir.path(), "watch", SIZE);
    let screen = shows(&pty, "Which registry do I publish to?");
    insta::assert_snapshot!(masked(&screen));
    let needs = screen.find("Needs input (1)").unwrap();
    assert!(screen.contains("waits for you (1 question)"), "{screen}");
    assert!(!screen.contains("working"), "{screen}");

    // Another process starts a run: it shows without a key pressed.
    ralph(&store, dir.path(), "Tidy the docs");
    let screen = shows(&pty, "Tidy the docs");
    assert!(screen.find("Needs input (1)") == Some(needs), "{screen}");

    // Enter opens the question; 2 then Enter picks the second option.
    pty.press(b"\r");
    shows(&pty, "answer (1-2 picks an option");
    pty.press(b"2\r");
    let answered = wait_until("the answer to be recorded", PATIENCE, || {
        let q = store.question(&q.id).ok()?;
        q.answer.clone()
    })
    .unwrap();
    assert_eq!(answered, "our mirror");
    shows(&pty, "answered: option 2");

    pty.press(b"q");
    let (code, _) = pty.wait();
    assert_eq!(code, 0);
}

#[test]
fn without_a_terminal_or_inside_an_agent_it_says_what_to_do_instead() {
    let dir = tempfile::tempdir().unwrap();
    let out = cmd(dir.path(), &["watch"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("tether watch needs a terminal; without one, `tether status`"),
        "{}",
        text(&out.stderr)
    );
    let out = cmd(dir.path(), &["watch"])
        .env("TETHER_AGENT", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with("error: refused: "),
        "{}",
        text(&out.stderr)
    );
}

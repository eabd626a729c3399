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
            &serde_json::json!({"prompt": prompt, "max_iterations": 8}),
        )
        .unwrap();
    store
        .append(Some(&run), &Event::IterationStarted { n: 1 })
        .unwrap();
    run
}

/// Iterations 1 to 3 of `run`, each with a tool call and what it used; the fourth begun.
fn three_iterations(store: &Store, run: &tether_store::RunId) {
    for (n, tokens) in [(1, 9_000), (2, 24_000), (3, 15_000)] {
        if n > 1 {
            store
                .append(Some(run), &Event::IterationStarted { n })
                .unwrap();
        }
        let events = [
            Event::ToolCalled {
                n,
                tool: "bash".into(),
                summary: format!("bash: cargo test -p release (exit {})", u8::from(n < 3)),
            },
            Event::IterationUsage {
                n,
                input_tokens: tokens,
                cached_input_tokens: 0,
                cache_write_input_tokens: 0,
                output_tokens: tokens / 10,
                cost_usd: Some(f64::from(u32::try_from(tokens).unwrap()) / 1e6 * 3.0),
                goals: Vec::new(),
                duration_ms: 40_000,
            },
            Event::IterationCompleted {
                n,
                summary: format!("release checklist step {n} done"),
            },
        ];
        for e in &events {
            store.append(Some(run), e).unwrap();
        }
    }
    store
        .append(Some(run), &Event::IterationStarted { n: 4 })
        .unwrap();
}

/// A process standing for a run's driver, ended with the test.
struct Driver(std::process::Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The screen with what moves masked: run ids, clock times, the time elapsed.
fn masked(screen: &str) -> String {
    let ids = regex_lite::Regex::new(r"r-[0-9a-z]{12}").unwrap();
    let short = regex_lite::Regex::new(r"…[0-9a-z]{6}").unwrap();
    let clock = regex_lite::Regex::new(r"\d\d:\d\d:\d\d").unwrap();
    let elapsed = regex_lite::Regex::new(r"began (\d+[dhms] ?)+ago *│").unwrap();
    let screen = ids.replace_all(screen, "r-xxxxxxxxxxxx");
    let screen = short.replace_all(&screen, "…xxxxxx");
    let screen = clock.replace_all(&screen, "HH:MM:SS");
    elapsed
        .replace_all(&screen, "began ELAPSED ago │")
        .into_owned()
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
    // A run a live process drives: one that holds its lock, as a loop does (not this test's
    // own process: `tether watch` descends from it, and would be taken for an agent's).
    let working = ralph(&store, dir.path(), "Port the parser");
    let lock = dir.path().join(format!(".tether/runs/{working}/lock"));
    std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
    let _driver = Driver(
        std::process::Command::new("sh")
            .args([
                "-c",
                "printf %s $$ > \"$0\"; exec flock -x \"$0\" sleep 600",
            ])
            .arg(&lock)
            .spawn()
            .unwrap(),
    );
    wait_until("the run's driver to hold its lock", PATIENCE, || {
        tether_store::run_lock::RunLock::holder(&lock)
    })
    .unwrap();
    let waiting = ralph(&store, dir.path(), "Ship the release");
    three_iterations(&store, &waiting);
    let q = store
        .insert_question(&NewQuestion {
            run_id: Some(waiting),
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
    assert!(needs < screen.find("Running (1)").unwrap(), "{screen}");
    assert!(screen.contains("waits for you (1 question)"), "{screen}");
    assert!(
        screen.contains("iteration 4 of 8 · 52.8k tokens · $0.14"),
        "{screen}"
    );
    // The book's picture of it: target/web-screenshots/watch.html, the screen as it is now.
    let shots =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/web-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    std::fs::write(shots.join("watch.html"), pty.html(SIZE)).unwrap();

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
        q.answer
    })
    .unwrap();
    assert_eq!(answered, "our mirror");
    shows(&pty, "answered: option 2");

    pty.press(b"q");
    let (code, _) = pty.wait();
    assert_eq!(code, 0);
}

/// The agent of a real loop: counts its turns; on its first it says so (`running-1`) and waits
/// for `go`; it never keeps the promise, so only its iteration budget ends the run.
const WAITING_AGENT: &str = r#"
n=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count
cat > /dev/null
if [ $n -eq 1 ]; then
  touch running-1
  while [ ! -f go ]; do sleep 0.05; done
fi
echo "step $n"
"#;

#[test]
fn iterations_added_from_the_screen_carry_a_running_loop_further() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agent.sh"), WAITING_AGENT).unwrap();
    std::fs::write(
        dir.path().join("tether.toml"),
        "[executor]\nkind = \"command\"\ncommand = [\"sh\", \"agent.sh\"]\n",
    )
    .unwrap();
    let looped = crate::common::spawn(
        dir.path(),
        &[
            "ralph",
            "Keep going",
            "--completion-promise",
            "NEVER",
            "--max-iterations",
            "2",
        ],
    );
    wait_until("the first iteration", PATIENCE, || {
        dir.path().join("running-1").exists().then_some(())
    })
    .unwrap();
    let mut pty = Pty::start_sized(dir.path(), "watch", SIZE);
    shows(&pty, "iteration 1 of 2");
    pty.press(b"+3\r");
    shows(&pty, "added 3 to its iteration budget");
    shows(&pty, "of 5");
    std::fs::write(dir.path().join("go"), "").unwrap();
    let out = crate::common::wait_output(looped);
    let said = text(&out.stderr);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("count"))
            .unwrap()
            .trim(),
        "5",
        "the loop went on to the raised budget: {said}"
    );
    pty.press(b"q");
    assert_eq!(pty.wait().0, 0);
}

#[test]
fn a_kill_or_a_closed_terminal_ends_it_with_the_terminal_given_back() {
    for signal in ["TERM", "HUP"] {
        let dir = tempfile::tempdir().unwrap();
        let store = store(dir.path());
        ralph(&store, dir.path(), "Port the parser");
        let pty = Pty::start_sized(dir.path(), "watch", SIZE);
        shows(&pty, "Port the parser");
        let pid = pty.program_pid();
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
        assert_eq!(comm.trim(), "tether", "the program on the terminal");
        let killed = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid.to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let (code, screen) = pty.wait();
        assert_eq!(code, 0, "SIG{signal}: it ends as q ends it");
        // It left the alternate screen after it last entered it, and showed the cursor again.
        let entered = screen.rfind("\x1b[?1049h").unwrap();
        let left = screen.rfind("\x1b[?1049l").unwrap_or(0);
        assert!(left > entered, "SIG{signal}: still on the alternate screen");
        assert!(
            screen[entered..].contains("\x1b[?25h"),
            "SIG{signal}: cursor hidden"
        );
    }
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

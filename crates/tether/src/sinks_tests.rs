use std::sync::Arc;
use std::time::Duration;

use tether_human::Broker;
use tether_human::terminal::{Screen, Terminal};
use tether_store::{Journal, NewQuestion, RunId, RunKind, Seq, Store};
use tether_testkit::{Captured, wait_until_async};
use tokio_util::sync::CancellationToken;

use super::*;

fn tool_called(summary: &str) -> StoredEvent {
    stored(Event::ToolCalled {
        n: 1,
        tool: "bash".to_owned(),
        summary: summary.to_owned(),
    })
}

fn stored(event: Event) -> StoredEvent {
    StoredEvent {
        seq: Seq(1),
        run_id: None,
        at_ms: 0,
        kind: event.kind().to_owned(),
        payload: serde_json::to_value(&event).unwrap(),
        event: Some(event),
    }
}

/// What was drawn, with the line's own clear-and-redraw shown as `⟲` and the clock as `MM:SS`.
fn drawn(screen: &Captured) -> String {
    let text = screen.text().replace("\r\x1b[2K", "⟲");
    regex_lite::Regex::new(r"\d\d:\d\d")
        .unwrap()
        .replace_all(&text, "MM:SS")
        .into_owned()
}

/// The progress line of run `r-test01` (5 iterations at most), drawn on `screen`.
fn progress_on(screen: &Captured) -> Progress {
    Progress::new(
        "r-test01",
        Some(5),
        Box::new(screen.clone()),
        Screen::default(),
    )
}

#[test]
fn control_characters_in_a_tool_call_are_shown_escaped_on_the_progress_line() {
    let screen = Captured::default();
    let progress = progress_on(&screen);
    progress.event(&tool_called(
        "bash printf '\x1b[2J\x1b]0;owned\x07'\rREAD ME\nsecond line",
    ));
    let shown = drawn(&screen);
    assert!(!shown.contains(['\x1b', '\r', '\x07', '\n']), "{shown:?}");
    insta::assert_snapshot!(shown, @r"⟲⟳ r-test01 · iteration 0/5 · MM:SS · bash printf '\x1b[2J\x1b]0;owned\x07'\rREAD ME\nsecond line");
}

#[test]
fn the_progress_line_says_until_when_a_usage_limit_is_waited_out() {
    let screen = Captured::default();
    let progress = progress_on(&screen);
    progress.event(&stored(Event::WaitingForUsageLimit {
        n: 1,
        message: "rate limited".to_owned(),
        until_ms: 1_767_225_600_000 + (14 * 3600 + 5 * 60 + 9) * 1000,
    }));
    let shown = screen.text().replace("\r\x1b[2K", "⟲");
    assert!(
        shown.ends_with("waiting for usage limit until 14:05:09 UTC (rate limited)"),
        "{shown:?}"
    );
}

/// A run's progress line and the terminal's question card on one screen, with a broker
/// offering questions on that card; lines typed go in through the sender.
struct Desk {
    _dir: tempfile::TempDir,
    run: RunId,
    screen: Captured,
    progress: Arc<Progress>,
    broker: Broker,
    typed: tokio::sync::mpsc::UnboundedSender<String>,
}

/// The desk, with a question already stored when `stored` is given (one left pending by a
/// killed run, waited for again after a resume).
fn desk(stored: Option<&str>) -> (Desk, Option<tether_store::QuestionId>) {
    let dir = tempfile::tempdir().unwrap();
    let ws = tether_config::Workspace::at(dir.path());
    let store = Store::open(ws.db_path()).unwrap();
    let run: RunId = store
        .create_run(RunKind::Ralph, dir.path(), &serde_json::json!({}))
        .unwrap();
    let asked = stored.map(|q| store.insert_question(&question(&run, q)).unwrap().id);
    let screen = Captured::default();
    let shared = Screen::default();
    let progress = Arc::new(Progress::new(
        run.as_str(),
        None,
        Box::new(screen.clone()),
        shared.clone(),
    ));
    let journal = Journal::new(store, vec![progress.clone()]).unwrap();
    let (typed, lines) = tokio::sync::mpsc::unbounded_channel();
    let terminal =
        Terminal::new(lines, Box::new(screen.clone()), "you".to_owned()).on_screen(shared);
    let broker = Broker::new(journal, ws.state_dir(), vec![Arc::new(terminal)]);
    let desk = Desk {
        _dir: dir,
        run,
        screen,
        progress,
        broker,
        typed,
    };
    (desk, asked)
}

fn question(run: &RunId, text: &str) -> NewQuestion {
    NewQuestion {
        run_id: Some(run.clone()),
        question: text.to_owned(),
        ..NewQuestion::default()
    }
}

impl Desk {
    /// Waits for the card's prompt, then redraws the line as its once-a-second tick would: the
    /// prompt must still end the screen.
    async fn card_stays_unspoilt(&self) {
        let screen = &self.screen;
        wait_until_async("the card", Duration::from_secs(10), || {
            screen.text().ends_with("Your answer: ").then_some(())
        })
        .await
        .unwrap();
        self.progress.draw();
        self.progress.draw();
        assert!(
            screen.text().ends_with("Your answer: "),
            "{:?}",
            drawn(screen)
        );
    }
}

/// The progress line and the terminal's question card share one screen: once the question is
/// stored, the sink knows (before anyone answers) and the line is not redrawn over the
/// `Your answer:` prompt until the answer is in.
#[tokio::test]
async fn the_progress_line_stays_quiet_while_a_question_waits_at_the_terminal() {
    let (d, _) = desk(None);
    let broker = d.broker.clone();
    let q = question(&d.run, "Ship it?");
    let asking = tokio::spawn(async move { broker.ask(q, CancellationToken::new()).await });
    d.card_stays_unspoilt().await;
    d.typed.send("yes\n".to_owned()).unwrap();
    let answer = asking.await.unwrap().unwrap();
    assert_eq!(answer.text, "yes");
    d.progress.draw();
    let shown = drawn(&d.screen);
    assert!(
        shown.ends_with("· you answered"),
        "the answer reaches the line at once: {shown:?}"
    );
}

/// A question waited for again after a resume is not asked anew (no `question_asked` event),
/// yet its card shows: the line stays quiet for it too.
#[tokio::test]
async fn the_progress_line_stays_quiet_while_a_resumed_question_waits_at_the_terminal() {
    let (d, asked) = desk(Some("Ship it?"));
    let broker = d.broker.clone();
    let id = asked.unwrap();
    let waiting = tokio::spawn(async move { broker.wait(&id, CancellationToken::new()).await });
    d.card_stays_unspoilt().await;
    d.typed.send("yes\n".to_owned()).unwrap();
    assert_eq!(waiting.await.unwrap().unwrap().text, "yes");
}

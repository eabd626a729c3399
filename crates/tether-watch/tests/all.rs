//! `tether watch` without a terminal: its screen drawn at 80x24 over a real store (snapshots of
//! what a person reads), and every key — answer a question by its option's number or in words,
//! pause, cancel only once confirmed, say, search, export — acting on that store.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::cell::RefCell;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use tether_config::Workspace;
use tether_store::control::{self, Control};
use tether_store::{
    AnswerOutcome, Author, Event, NewQuestion, Outcome, QuestionId, RunId, RunKind, Store,
};
use tether_watch::{Acts, App, Key, Mode, Theme};

struct Fx {
    _dir: tempfile::TempDir,
    ws: Workspace,
    store: Store,
}

/// The acts on the store itself, as the binary's go through `tether answer`, `pause`, … .
struct OnStore<'a> {
    fx: &'a Fx,
    done: RefCell<Vec<String>>,
}

impl Acts for OnStore<'_> {
    fn answer(&self, q: &QuestionId, text: &str) -> Result<String, String> {
        self.done.borrow_mut().push(format!("answer {text}"));
        match self
            .fx
            .store
            .answer_question(q, text, "watch", "ana")
            .unwrap()
        {
            AnswerOutcome::Answered(_) => Ok("answered".into()),
            _ => Err("not answered".into()),
        }
    }
    fn pause(&self, run: &RunId) -> Result<String, String> {
        self.done.borrow_mut().push("pause".into());
        let found = self.fx.store.run(run).unwrap();
        let lock = self.fx.ws.run_lock(run.as_str());
        match control::pause(&self.fx.store, &lock, &found, ("watch", Author::Person)).unwrap() {
            Control::Applied => Ok("paused".into()),
            other => Ok(format!("{other:?}")),
        }
    }
    fn cancel(&self, run: &RunId) -> Result<String, String> {
        self.done.borrow_mut().push("cancel".into());
        let found = self.fx.store.run(run).unwrap();
        let lock = self.fx.ws.run_lock(run.as_str());
        control::cancel(&self.fx.store, &lock, &found, "watch").unwrap();
        Ok("cancelled".into())
    }
    fn add_iterations(&self, run: &RunId, n: u32) -> Result<String, String> {
        self.done.borrow_mut().push(format!("add {n}"));
        self.fx
            .store
            .append(
                Some(run),
                &Event::BudgetRaised {
                    unit: tether_store::Unit::Iterations,
                    amount: f64::from(n),
                    goal_id: None,
                    by: "ana".into(),
                },
            )
            .unwrap();
        Ok(format!("added {n}"))
    }
    fn say(&self, run: &RunId, text: &str) -> Result<String, String> {
        self.done.borrow_mut().push(format!("say {text}"));
        let found = self.fx.store.run(run).unwrap();
        control::say(&self.fx.store, &found, text, ("ana", Author::Person)).unwrap();
        Ok("queued".into())
    }
}

/// A workspace with three runs: one done, one paused with a tool call and a verdict-free
/// timeline, and one (the newest) waiting on a question with two options.
fn fx() -> (Fx, RunId, RunId) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::at(dir.path());
    let store = Store::open(ws.db_path()).unwrap();
    let fx = Fx {
        _dir: dir,
        ws,
        store,
    };
    let run = |prompt: &str, events: &[Event]| {
        let id = fx
            .store
            .create_run(
                RunKind::Ralph,
                fx.ws.root(),
                &serde_json::json!({"prompt": prompt, "max_iterations": 10}),
            )
            .unwrap();
        for e in events {
            fx.store.append(Some(&id), e).unwrap();
        }
        id
    };
    run(
        "Tidy the docs",
        &[Event::RunFinished {
            outcome: Outcome::Completed,
        }],
    );
    let paused = run(
        "Fix the parser",
        &[
            Event::IterationStarted { n: 1 },
            Event::ToolCalled {
                n: 1,
                tool: "bash".into(),
                summary: "bash: cargo test (exit 101)".into(),
            },
            Event::IterationCompleted {
                n: 1,
                summary: "the parser test still fails\x1b[2J".into(),
            },
            Event::Paused {
                reason: "a person asked".into(),
            },
        ],
    );
    let waiting = run("Ship the release", &[Event::IterationStarted { n: 1 }]);
    let q = fx
        .store
        .insert_question(&NewQuestion {
            run_id: Some(waiting.clone()),
            thread_id: None,
            question: "Which registry do I publish to?".into(),
            context: String::new(),
            confidence: Some(2),
            options: vec!["crates.io".into(), "our mirror".into()],
        })
        .unwrap();
    assert_eq!(q.run_id.as_ref(), Some(&waiting));
    (fx, paused, waiting)
}

fn app(fx: &Fx) -> App {
    App::new(
        tether_watch::load(&fx.store, &fx.ws, None).unwrap(),
        fx.ws.root().into(),
    )
}

/// The screen at 80x24 as text, run ids and times masked, a minute and five seconds after the
/// selected run began.
fn screen(app: &App, theme: Theme) -> String {
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    let began = app
        .view
        .selected
        .as_ref()
        .map_or(0, |s| s.header.created_at_ms);
    terminal
        .draw(|f| tether_watch::draw(f, app, theme, began + 65_000))
        .unwrap();
    let buffer = terminal.backend().buffer().clone();
    let mut out = String::new();
    for y in 0..24 {
        for x in 0..80 {
            out.push_str(buffer[(x, y)].symbol());
        }
        out.push('\n');
    }
    regex_mask(&out)
}

/// Run ids and clock times masked, so a snapshot does not move.
fn regex_mask(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("r-") {
        out.push_str(&rest[..at]);
        let id_len = rest[at + 2..]
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .count();
        if id_len >= 8 {
            out.push_str(&format!("r-{}", "x".repeat(id_len)));
            rest = &rest[at + 2 + id_len..];
        } else {
            out.push_str("r-");
            rest = &rest[at + 2..];
        }
    }
    out.push_str(rest);
    // The list's short ids: `…` and the id's last six characters.
    let out: String = {
        let mut masked = String::new();
        let mut chars = out.chars().peekable();
        while let Some(c) = chars.next() {
            masked.push(c);
            if c == '…' {
                for _ in 0..6 {
                    if chars.next_if(char::is_ascii_alphanumeric).is_some() {
                        masked.push('x');
                    }
                }
            }
        }
        masked
    };
    out.lines()
        .map(|l| {
            let mut chars: Vec<char> = l.chars().collect();
            for i in 0..chars.len().saturating_sub(7) {
                let w: String = chars[i..i + 8].iter().collect();
                let b = w.as_bytes();
                if b.len() == 8
                    && b[2] == b':'
                    && b[5] == b':'
                    && w.chars().filter(char::is_ascii_digit).count() == 6
                {
                    for c in &mut chars[i..i + 8] {
                        if c.is_ascii_digit() {
                            *c = '9';
                        }
                    }
                }
            }
            chars.into_iter().collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

const COLOR: Theme = Theme { color: true };

#[test]
fn the_run_waiting_for_a_person_comes_first_and_never_reads_as_working() {
    let (fx, _, _) = fx();
    let app = app(&fx);
    let shown = screen(&app, COLOR);
    insta::assert_snapshot!(shown);
    let needs = shown.find("Needs input (1)").unwrap();
    let paused = shown.find("Paused (1)").unwrap();
    let done = shown.find("Done (1)").unwrap();
    assert!(needs < paused && paused < done, "{shown}");
    assert!(shown.contains("waits for you (1 question)"), "{shown}");
    assert!(!shown.contains("working"), "{shown}");
}

#[test]
fn a_digit_then_enter_picks_an_option_and_the_first_answer_counts() {
    let (fx, _, waiting) = fx();
    let mut app = app(&fx);
    assert_eq!(app.selected.as_ref(), Some(&waiting));
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    app.key(Key::Enter, &acts);
    assert_eq!(app.mode, Mode::Answer(String::new()));
    assert!(screen(&app, COLOR).contains("answer (1-2 picks an option"));
    app.key(Key::Char('2'), &acts);
    app.key(Key::Enter, &acts);
    let q = &fx.store.questions_for_run(&waiting).unwrap()[0];
    assert_eq!(q.answer.as_deref(), Some("our mirror"));
    assert_eq!(q.choice, Some(1));
    assert_eq!(app.status, "answered");
    // Read again, the run no longer waits: no question, so Enter says so.
    app.refresh(tether_watch::load(&fx.store, &fx.ws, app.selected.as_ref()).unwrap());
    app.key(Key::Enter, &acts);
    assert_eq!(app.status, "no question waits on this run");
}

#[test]
fn several_questions_are_answered_oldest_first_and_one_answered_elsewhere_is_not_answered_again() {
    let (fx, _, waiting) = fx();
    let ask = |text: &str| {
        fx.store
            .insert_question(&NewQuestion {
                run_id: Some(waiting.clone()),
                question: text.into(),
                ..NewQuestion::default()
            })
            .unwrap()
    };
    let second = ask("May I bump the version?");
    let third = ask("Tag it too?");
    let load = |app: &App| tether_watch::load(&fx.store, &fx.ws, app.selected.as_ref()).unwrap();
    let mut app = app(&fx);
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    assert!(screen(&app, COLOR).contains("waits for you (3 questions)"));
    app.key(Key::Enter, &acts);
    app.key(Key::Char('1'), &acts);
    app.key(Key::Enter, &acts);
    app.refresh(load(&app));
    assert_eq!(
        app.question().map(|q| &q.id),
        Some(&second.id),
        "the next oldest"
    );
    // While the answer is typed here, someone answers it on another channel: the first answer
    // stands, and the one typed here is refused and said so.
    app.key(Key::Enter, &acts);
    for c in "yes".chars() {
        app.key(Key::Char(c), &acts);
    }
    fx.store
        .answer_question(&second.id, "no", "zulip", "bo")
        .unwrap();
    app.key(Key::Enter, &acts);
    assert_eq!(app.status, "not answered");
    let kept = fx.store.question(&second.id).unwrap();
    assert_eq!(
        (kept.answer.as_deref(), kept.responder.as_deref()),
        (Some("no"), Some("bo"))
    );
    app.refresh(load(&app));
    assert_eq!(app.question().map(|q| &q.id), Some(&third.id));
    assert!(screen(&app, COLOR).contains("waits for you (1 question)"));
}

#[test]
fn plus_adds_iterations_to_the_selected_runs_budget_and_the_header_shows_it() {
    let (fx, _, waiting) = fx();
    let mut app = app(&fx);
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    assert!(screen(&app, COLOR).contains("of 10"));
    app.key(Key::Char('+'), &acts);
    assert!(screen(&app, COLOR).contains("add iterations to its budget"));
    for c in "lots".chars() {
        app.key(Key::Char(c), &acts);
    }
    app.key(Key::Enter, &acts);
    assert!(acts.done.borrow().is_empty(), "not a number: nothing added");
    assert!(
        app.status.contains("is no number of iterations"),
        "{}",
        app.status
    );
    app.key(Key::Char('+'), &acts);
    app.key(Key::Char('5'), &acts);
    app.key(Key::Enter, &acts);
    assert_eq!(*acts.done.borrow(), ["add 5"]);
    app.refresh(tether_watch::load(&fx.store, &fx.ws, app.selected.as_ref()).unwrap());
    assert_eq!(app.selected.as_ref(), Some(&waiting));
    let shown = screen(&app, COLOR);
    assert!(shown.contains("of 15"), "{shown}");
}

#[test]
fn typed_text_answers_freely_and_escape_leaves_it_unanswered() {
    let (fx, _, waiting) = fx();
    let mut app = app(&fx);
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    app.key(Key::Enter, &acts);
    for c in "neither".chars() {
        app.key(Key::Char(c), &acts);
    }
    app.key(Key::Esc, &acts);
    assert_eq!(app.mode, Mode::Normal);
    assert!(acts.done.borrow().is_empty(), "Esc sends nothing");
    app.key(Key::Enter, &acts);
    for c in "neither: wait".chars() {
        app.key(Key::Char(c), &acts);
    }
    app.key(Key::Backspace, &acts);
    app.key(Key::Enter, &acts);
    let q = &fx.store.questions_for_run(&waiting).unwrap()[0];
    assert_eq!(q.answer.as_deref(), Some("neither: wai"));
}

#[test]
fn pause_cancel_once_confirmed_and_say_act_on_the_selected_run() {
    let (fx, paused, waiting) = fx();
    let mut app = app(&fx);
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    app.key(Key::Char('s'), &acts);
    for c in "use the mirror".chars() {
        app.key(Key::Char(c), &acts);
    }
    app.key(Key::Enter, &acts);
    app.key(Key::Char('c'), &acts);
    assert!(screen(&app, COLOR).contains("cancel this run? y: yes"));
    app.key(Key::Char('n'), &acts);
    assert_eq!(app.status, "not cancelled");
    // Down to the paused run, then pause (already paused: nothing to do) and cancel it.
    assert!(app.key(Key::Down, &acts), "the selection moved");
    assert_eq!(app.selected.as_ref(), Some(&paused));
    app.key(Key::Char('c'), &acts);
    app.key(Key::Char('y'), &acts);
    assert_eq!(
        *acts.done.borrow(),
        ["say use the mirror", "cancel"],
        "cancel only once confirmed, on the selected run"
    );
    assert_eq!(
        fx.store.run(&paused).unwrap().state.status,
        tether_store::RunStatus::Cancelled
    );
    let said = fx.store.run(&waiting).unwrap().state.queued_messages.len();
    assert_eq!(said, 1);
    app.key(Key::Char('q'), &acts);
    assert!(app.quit);
}

#[test]
fn the_timeline_is_searched_escaped_and_exported() {
    let (fx, paused, _) = fx();
    let mut app = App::new(
        tether_watch::load(&fx.store, &fx.ws, Some(&paused)).unwrap(),
        fx.ws.root().into(),
    );
    let acts = OnStore {
        fx: &fx,
        done: RefCell::new(Vec::new()),
    };
    let shown = screen(&app, COLOR);
    assert!(shown.contains("▸ bash: cargo test (exit 101)"), "{shown}");
    let lines = &app.view.selected.as_ref().unwrap().lines;
    assert!(
        lines
            .iter()
            .any(|l| l.text.ends_with("still fails\\x1b[2J")),
        "escaped: {lines:?}"
    );
    assert!(!shown.contains('\x1b'), "{shown}");
    app.key(Key::Char('/'), &acts);
    for c in "CARGO".chars() {
        app.key(Key::Char(c), &acts);
    }
    app.key(Key::Enter, &acts);
    assert_eq!(
        app.found,
        Some(2),
        "the tool call, after the start and the iteration"
    );
    assert!(app.status.starts_with("found “CARGO”"), "{}", app.status);
    app.key(Key::Char('e'), &acts);
    let path = fx.ws.root().join(format!("{paused}-timeline.txt"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("▸ bash: cargo test (exit 101)"), "{text}");
    assert!(text.contains("paused: a person asked"), "{text}");
    assert!(
        app.status.starts_with("timeline written to "),
        "{}",
        app.status
    );
}

#[test]
fn without_colour_nothing_is_coloured() {
    let (fx, _, _) = fx();
    let app = app(&fx);
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).unwrap();
    terminal
        .draw(|f| tether_watch::draw(f, &app, Theme { color: false }, 0))
        .unwrap();
    let buffer = terminal.backend().buffer();
    assert!(
        buffer
            .content()
            .iter()
            .all(|cell| cell.fg == ratatui::style::Color::Reset),
        "NO_COLOR"
    );
    terminal
        .draw(|f| tether_watch::draw(f, &app, COLOR, 0))
        .unwrap();
    assert!(
        terminal
            .backend()
            .buffer()
            .content()
            .iter()
            .any(|cell| cell.fg != ratatui::style::Color::Reset),
        "with colour, some is"
    );
}

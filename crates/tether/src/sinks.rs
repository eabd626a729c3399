//! Where a running loop's events go besides the store: JSON lines on stdout (`--events jsonl`)
//! and a live progress line on a terminal's stderr.

use std::io::{self, IsTerminal as _, Write as _};
use std::sync::Mutex;
use std::time::Instant;

use tether_store::EventSink;
use tether_store::{Event, StoredEvent};

/// Writes each event as one JSON line to stdout.
pub struct Jsonl;

impl EventSink for Jsonl {
    fn event(&self, event: &StoredEvent) {
        let mut out = io::stdout().lock();
        if let Ok(line) = serde_json::to_string(event) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// The one-line live status on a terminal: `⟳ r-… · iteration 3/20 · 00:42 · edit src/lib.rs`.
pub struct Progress {
    state: Mutex<ProgressState>,
}

struct ProgressState {
    run: String,
    max: Option<u32>,
    iteration: u32,
    last: String,
    started: Instant,
    shown: bool,
    /// Questions pending: the line is not redrawn meanwhile, so it never overwrites the
    /// terminal's `Your answer:` prompt.
    waiting: usize,
}

impl Progress {
    /// A progress line for `run`, when stderr is a terminal.
    pub fn for_terminal(run: &str, max: Option<u32>) -> Option<Progress> {
        io::stderr().is_terminal().then(|| Progress {
            state: Mutex::new(ProgressState {
                run: run.to_owned(),
                max,
                iteration: 0,
                last: "starting".to_owned(),
                started: Instant::now(),
                shown: false,
                waiting: 0,
            }),
        })
    }

    /// Redraws the line (called on events and once a second).
    pub fn draw(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        if s.waiting > 0 {
            return;
        }
        let secs = s.started.elapsed().as_secs();
        let max = s.max.map_or_else(|| "∞".to_owned(), |m| m.to_string());
        let mut line = format!(
            "⟳ {} · iteration {}/{max} · {:02}:{:02} · {}",
            s.run,
            s.iteration,
            secs / 60,
            secs % 60,
            s.last
        );
        line = line.chars().take(120).collect();
        let mut err = io::stderr().lock();
        let _ = write!(err, "\r\x1b[2K{line}");
        let _ = err.flush();
        s.shown = true;
    }

    /// Clears the line before the final message.
    pub fn clear(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        if s.shown {
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            s.shown = false;
        }
    }
}

impl EventSink for Progress {
    fn event(&self, event: &StoredEvent) {
        if let Ok(mut s) = self.state.lock() {
            match &event.event {
                Some(Event::IterationStarted { n }) => {
                    s.iteration = *n;
                    s.last = "thinking".to_owned();
                }
                Some(Event::ToolCalled { summary, .. }) => s.last.clone_from(summary),
                Some(Event::IterationFailed { error, .. }) => s.last = format!("failed: {error}"),
                Some(Event::QuestionAsked { question_id }) => {
                    s.last = format!("waiting for a human: tether answer {question_id} \"…\"");
                    s.waiting += 1;
                }
                Some(Event::QuestionAnswered { responder, .. }) => {
                    s.last = format!("{responder} answered");
                    s.waiting = s.waiting.saturating_sub(1);
                }
                Some(Event::QuestionCancelled { .. }) => s.waiting = s.waiting.saturating_sub(1),
                Some(Event::GoalVerdict {
                    goal_id, verdict, ..
                }) => {
                    s.last = format!("sign-off of {goal_id}: {}", verdict.as_str());
                }
                Some(Event::RuleFired { rule, reason }) => s.last = format!("{rule}: {reason}"),
                _ => {}
            }
        }
        self.draw();
    }
}

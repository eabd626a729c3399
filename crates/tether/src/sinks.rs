//! Where a running loop's events go besides the store: JSON lines on stdout (`--events jsonl`)
//! and a live progress line on a terminal's stderr.

use std::io::{self, IsTerminal as _, Write as _};
use std::sync::Mutex;
use std::time::Instant;

use tether_human::terminal::Screen;
use tether_human::visible::one_line;
use tether_store::EventSink;
use tether_store::{Event, StoredEvent, UsageLimitWait};

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
    out: Box<dyn io::Write + Send>,
    /// Shared with the terminal's question card.
    screen: Screen,
    run: String,
    max: Option<u32>,
    iteration: u32,
    last: String,
    started: Instant,
    /// Tokens the run's model calls used (agent and judges), as reported so far.
    tokens: u64,
    /// What they cost, when known.
    cost_usd: Option<f64>,
    shown: bool,
}

impl Progress {
    /// A progress line for `run`, when stderr is a terminal.
    pub fn for_terminal(run: &str, max: Option<u32>) -> Option<Progress> {
        io::stderr()
            .is_terminal()
            .then(|| Progress::new(run, max, Box::new(io::stderr()), Screen::stderr()))
    }

    /// A progress line for `run` drawn on `out`, which is `screen`.
    fn new(
        run: &str,
        max: Option<u32>,
        out: Box<dyn io::Write + Send>,
        screen: Screen,
    ) -> Progress {
        Progress {
            state: Mutex::new(ProgressState {
                out,
                screen,
                run: run.to_owned(),
                max,
                iteration: 0,
                last: "starting".to_owned(),
                started: Instant::now(),
                tokens: 0,
                cost_usd: None,
                shown: false,
            }),
        }
    }

    /// Redraws the line (called on events and once a second).
    pub fn draw(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        s.draw();
    }

    /// Clears the line before the final message.
    pub fn clear(&self) {
        let Ok(mut s) = self.state.lock() else { return };
        s.clear();
    }
}

impl ProgressState {
    /// The line as it stands, or nothing while a question card waits for a typed answer (the
    /// line would overwrite its `Your answer:` prompt; a question waited for again after a
    /// resume has a card too).
    fn line(&self) -> Option<String> {
        if self.screen.card_open() {
            return None;
        }
        let secs = self.started.elapsed().as_secs();
        let max = self.max.map_or_else(|| "∞".to_owned(), |m| m.to_string());
        let mut spent = String::new();
        if self.tokens > 0 {
            let tokens = tether_budget::format_tokens(self.tokens);
            spent = format!(" · {tokens} tok");
        }
        if let Some(cost) = self.cost_usd {
            spent.push_str(&format!(" · {}", tether_budget::format_cost(cost)));
        }
        let line = format!(
            "⟳ {} · iteration {}/{max}{spent} · {:02}:{:02} · {}",
            self.run,
            self.iteration,
            secs / 60,
            secs % 60,
            self.last
        );
        // The agent's tool arguments and errors are in it: no control character of theirs
        // may act on the terminal.
        Some(one_line(&line).chars().take(120).collect())
    }

    fn draw(&mut self) {
        if let Some(line) = self.line() {
            let _ = write!(self.out, "\r\x1b[2K{line}");
            let _ = self.out.flush();
            self.shown = true;
        }
    }

    fn clear(&mut self) {
        if self.shown {
            let _ = write!(self.out, "\r\x1b[2K");
            let _ = self.out.flush();
            self.shown = false;
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
                Some(e @ (Event::IterationUsage { .. } | Event::JudgeUsage { .. })) => {
                    let usage = tether_store::Usage::of(e);
                    s.tokens = s.tokens.saturating_add(usage.tokens());
                    if let Some(c) = usage.cost_usd {
                        s.cost_usd = Some(s.cost_usd.unwrap_or(0.0) + c);
                    }
                }
                Some(Event::BudgetSpent {
                    unit, used, limit, ..
                }) => {
                    s.last = format!(
                        "{} spent: {} of {}",
                        unit.noun(),
                        unit.format(*used),
                        unit.format(*limit)
                    );
                }
                Some(Event::IterationFailed { error, .. }) => s.last = format!("failed: {error}"),
                Some(Event::WaitingForUsageLimit {
                    n,
                    message,
                    until_ms,
                }) => {
                    let wait = UsageLimitWait {
                        n: *n,
                        message: message.clone(),
                        until_ms: *until_ms,
                    };
                    s.last = wait.describe();
                }
                Some(Event::QuestionAsked { question_id }) => {
                    s.last = format!("waiting for a human: tether answer {question_id} \"…\"");
                    // The question's card starts on a clean line.
                    s.clear();
                }
                Some(Event::QuestionAnswered { responder, .. }) => {
                    s.last = format!("{responder} answered");
                }
                Some(Event::GoalVerdict {
                    goal_id, verdict, ..
                }) => {
                    s.last = format!("sign-off of {goal_id}: {}", verdict.as_str());
                }
                Some(Event::RuleFired { rule, reason }) => s.last = format!("{rule}: {reason}"),
                Some(Event::FreshContext { reason, .. }) => {
                    s.last = format!("fresh context: {reason}");
                }
                _ => {}
            }
            s.draw();
        }
    }
}

#[cfg(test)]
#[path = "sinks_tests.rs"]
mod tests;

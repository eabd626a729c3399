//! From the journal to notices: the run's committed events, read in order, make the few
//! notices a person following the run wants — it finished, paused for them, failed, signed a
//! goal off, or keeps being rejected.
//!
//! The loops record every such moment as an event already, so notices need no call of their
//! own in the loops: a [`NoticeSink`] sits among the journal's sinks (beside the progress line
//! and `--events jsonl`) and hands each notice to a [`NoticeQueue`], which the process's
//! [`crate::Desk`] delivers ([`crate::Desk::deliver_notices`]). [`NoticeWatch`] is the pure part:
//! an event in, at most one notice out, with the little it must remember (the last failure, the
//! last rule, the current streak of rejections).

use std::sync::Mutex;

use tether_config::{NoticeKind, NotifyConfig};
use tether_store::{Event, EventSink, Outcome, RunId, StoredEvent, Verdict};
use tokio::sync::mpsc;

use crate::notices::Notice;
use crate::visible::one_line;

/// The most characters of a reason (an agent's error, a rule's words) quoted in a notice.
const MAX_REASON_CHARS: usize = 240;

/// Turns a run's events into notices, remembering what a later notice quotes.
#[derive(Debug, Clone)]
pub struct NoticeWatch {
    rejected_after: u32,
    /// The goal whose sign-offs were rejected last, and how many times in a row.
    streak: Option<(String, u32)>,
    /// The last iteration's error, quoted when the run fails.
    last_error: Option<String>,
    /// The last rule that fired, quoted when a guard blocks the run.
    last_rule: Option<String>,
}

impl NoticeWatch {
    /// A watch making a `rejected` notice every `rejected_after` rejections of one goal in a
    /// row (at least 1).
    pub fn new(rejected_after: u32) -> Self {
        NoticeWatch {
            rejected_after: rejected_after.max(1),
            streak: None,
            last_error: None,
            last_rule: None,
        }
    }

    /// The notice `event` makes, if any.
    pub fn notice(&mut self, event: &StoredEvent) -> Option<Notice> {
        let run = event.run_id.clone()?;
        match event.event.as_ref()? {
            Event::IterationFailed { error, .. } => {
                self.last_error = Some(short(error));
                None
            }
            Event::IterationCompleted { .. } => {
                self.last_error = None;
                None
            }
            Event::RuleFired { rule, reason } => {
                self.last_rule = Some(format!("{}: {}", rule.as_str(), short(reason)));
                None
            }
            Event::Paused { reason } => Some(paused(run, &short(reason))),
            Event::GoalVerdict {
                goal_id,
                verdict,
                reason,
            } => self.verdict(run, goal_id, *verdict, reason),
            Event::RunFinished { outcome } => self.finished(run, *outcome),
            _ => None,
        }
    }

    /// A sign-off: accepted is a `signed_off` notice (and ends any streak); rejected counts
    /// toward the streak of its goal.
    fn verdict(
        &mut self,
        run: RunId,
        goal: &str,
        verdict: Verdict,
        reason: &str,
    ) -> Option<Notice> {
        if verdict == Verdict::Accept {
            self.streak = None;
            let text = format!("Run {run} signed off goal {goal}.");
            return Some(notice(NoticeKind::SignedOff, run, text, false));
        }
        let count = match &self.streak {
            Some((g, n)) if g == goal => n.saturating_add(1),
            _ => 1,
        };
        self.streak = Some((goal.to_owned(), count));
        if count % self.rejected_after != 0 {
            return None;
        }
        let times = match count {
            1 => String::new(),
            n => format!(" {n} times in a row"),
        };
        let text = format!(
            "Run {run}: the sign-off of goal {goal} was rejected{times}. Last reason: {}",
            short(reason)
        );
        Some(notice(NoticeKind::Rejected, run, text, false))
    }

    /// How the run ended, as a notice; cancelled and interrupted runs make none (a person
    /// did that and knows).
    fn finished(&mut self, run: RunId, outcome: Outcome) -> Option<Notice> {
        match outcome {
            Outcome::Completed => {
                let text = format!("Run {run} is done.");
                Some(notice(NoticeKind::Done, run, text, false))
            }
            Outcome::Failed => {
                let text = match self.last_error.take() {
                    Some(error) => format!("Run {run} failed: {error}"),
                    None => format!("Run {run} failed."),
                };
                Some(notice(NoticeKind::Failed, run, text, false))
            }
            Outcome::BudgetExhausted => Some(paused(run, "its iteration budget is spent.")),
            Outcome::Blocked => {
                let why = self
                    .last_rule
                    .take()
                    .unwrap_or_else(|| "a guard stopped it".to_owned());
                let text = format!("Run {run} is blocked: {why}");
                Some(notice(NoticeKind::Paused, run, text, true))
            }
            Outcome::Cancelled | Outcome::Interrupted => None,
        }
    }
}

/// A `paused` notice saying why.
fn paused(run: RunId, reason: &str) -> Notice {
    let text = format!("Run {run} paused: {reason}");
    notice(NoticeKind::Paused, run, text, true)
}

/// A notice, with `tether resume <run>` when `resumable`.
fn notice(kind: NoticeKind, run_id: RunId, text: String, resumable: bool) -> Notice {
    let resume = resumable.then(|| format!("tether resume {run_id}"));
    Notice {
        kind,
        run_id: Some(run_id),
        text,
        resume,
    }
}

/// `text` on one line (its lines joined, control characters escaped), cut to
/// [`MAX_REASON_CHARS`].
fn short(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = one_line(&joined);
    if line.chars().count() <= MAX_REASON_CHARS {
        return line.into_owned();
    }
    let cut: String = line.chars().take(MAX_REASON_CHARS - 1).collect();
    format!("{}…", cut.trim_end())
}

/// The journal sink that watches a run's events and queues the notices they make.
pub struct NoticeSink {
    watch: Mutex<NoticeWatch>,
    tx: mpsc::UnboundedSender<Notice>,
}

/// The notices a [`NoticeSink`] queued, for [`crate::Desk::deliver_notices`].
pub struct NoticeQueue {
    pub(crate) rx: mpsc::UnboundedReceiver<Notice>,
}

impl NoticeSink {
    /// A sink following `[notify]` and the queue it fills.
    pub fn new(config: &NotifyConfig) -> (Self, NoticeQueue) {
        let (tx, rx) = mpsc::unbounded_channel();
        let sink = NoticeSink {
            watch: Mutex::new(NoticeWatch::new(config.rejected_after)),
            tx,
        };
        (sink, NoticeQueue { rx })
    }
}

impl EventSink for NoticeSink {
    fn event(&self, event: &StoredEvent) {
        let notice = self
            .watch
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .notice(event);
        if let Some(notice) = notice {
            // Nobody delivers any more only when the process is ending.
            let _ = self.tx.send(notice);
        }
    }
}

#[cfg(test)]
#[path = "notice_events_tests.rs"]
mod tests;

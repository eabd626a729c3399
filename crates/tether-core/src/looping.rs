//! What every loop (Ralph, goal) does around one agent turn: record its tool calls, notice a
//! `tether cancel` from another process, summarise its final message, and, on resume, wait for
//! the questions an interrupted turn left pending.
//!
//! Keeping these in one place is what makes the two loops behave the same way under pause,
//! cancel, Ctrl+C and kill -9.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tether_agent::{AgentEvent, TurnObserver};
use tether_store::{Event, Outcome, QuestionId, RunId, Seq, StoreError};
use tokio_util::sync::CancellationToken;

use tether_config::Workspace;
use tether_human::{BrokerError, Desk};
use tether_store::Journal;

/// How often a running iteration checks the store for `tether cancel`.
const CANCEL_POLL: Duration = Duration::from_millis(100);

/// `.tether/runs/<run>/lock`.
pub fn lock_path(ws: &Workspace, run: &RunId) -> std::path::PathBuf {
    ws.runs_dir().join(run.to_string()).join("lock")
}

/// Records the executor's tool calls as journal events and counts them.
pub struct Recorder<'a> {
    journal: &'a Journal,
    run: &'a RunId,
    n: u32,
    calls: AtomicU32,
}

impl<'a> Recorder<'a> {
    /// A recorder for iteration `n` of `run`.
    pub fn new(journal: &'a Journal, run: &'a RunId, n: u32) -> Self {
        Recorder {
            journal,
            run,
            n,
            calls: AtomicU32::new(0),
        }
    }

    /// How many tool calls the iteration made so far.
    pub fn tool_calls(&self) -> u32 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl TurnObserver for Recorder<'_> {
    fn event(&self, event: AgentEvent) {
        if let AgentEvent::ToolCall { tool, summary, .. } = event {
            self.calls.fetch_add(1, Ordering::Relaxed);
            let e = Event::ToolCalled {
                n: self.n,
                tool,
                summary,
            };
            if let Err(err) = self.journal.append(self.run, &e) {
                tracing::warn!(error = %err, "could not record a tool call");
            }
        }
    }
}

/// Records that the run ended with `outcome`, and tells the human side's channels.
pub async fn finish(
    journal: &Journal,
    human: &Desk,
    run: &RunId,
    outcome: Outcome,
) -> Result<(), StoreError> {
    journal.append(run, &Event::RunFinished { outcome })?;
    human.run_ended(run, outcome).await;
    Ok(())
}

/// The first line of the final message, shortened, for the iteration's journal entry.
pub fn summary(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut s: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// Every error in a chain, joined like anyhow's `{:#}`.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// Fires `cancel` when the run's journal records a cancel request (from another process).
pub async fn watch_for_cancel(journal: Journal, run: RunId, cancel: CancellationToken) {
    let mut seen = None;
    loop {
        let version = journal.store().data_version().ok();
        if version != seen {
            seen = version;
            if journal
                .state(&run)
                .is_ok_and(|s| s.cancel_requested.is_some())
            {
                cancel.cancel();
                return;
            }
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(CANCEL_POLL) => {}
        }
    }
}

/// The questions asked in the run's last iteration if it never ended (it was interrupted or the
/// process killed while the agent waited): pending ones and ones answered in the meantime.
pub fn interrupted_questions(
    journal: &Journal,
    run: &RunId,
) -> Result<Vec<QuestionId>, StoreError> {
    let events = journal.store().events(run, Seq(0), usize::MAX)?;
    let Some(start) = events
        .iter()
        .rposition(|e| matches!(e.event, Some(Event::IterationStarted { .. })))
    else {
        return Ok(Vec::new());
    };
    let tail = &events[start + 1..];
    let ended = tail.iter().any(|e| {
        matches!(
            e.event,
            Some(Event::IterationCompleted { .. } | Event::IterationFailed { .. })
        )
    });
    if ended {
        return Ok(Vec::new());
    }
    Ok(tail
        .iter()
        .filter_map(|e| match &e.event {
            Some(Event::QuestionAsked { question_id }) => Some(question_id.clone()),
            _ => None,
        })
        .collect())
}

/// Waits for the answers to the questions an interrupted iteration left behind — the same
/// questions, not asked again: `human` offers each again on every channel (the terminal card
/// again, the Zulip topic it was posted in) with the timeout counted from when it was asked.
/// `None` when the wait was interrupted (Ctrl+C); otherwise each answered question with its
/// answer, for the next prompt.
pub async fn await_interrupted(
    human: &Desk,
    journal: &Journal,
    run: &RunId,
    interrupt: &CancellationToken,
) -> Result<Option<Vec<(String, String)>>, StoreError> {
    let pending = interrupted_questions(journal, run)?;
    let mut answers = Vec::new();
    if pending.is_empty() {
        return Ok(Some(answers));
    }
    for id in &pending {
        let question = journal.store().question(id)?.question;
        match human.wait(id, interrupt.clone()).await {
            Ok(answer) => answers.push((question, answer.text)),
            Err(BrokerError::Cancelled(_)) => return Ok(None),
            Err(BrokerError::Withdrawn(_)) => {}
            Err(BrokerError::Store(e)) => return Err(e),
        }
    }
    Ok(Some(answers))
}

/// Why a stopped run cannot be taken up again.
#[derive(Debug)]
pub enum Reopen {
    /// The store failed.
    Store(StoreError),
    /// Another process drives the run.
    Lock(crate::run_lock::LockError),
    /// The run is of another kind, or its stored spec does not decode.
    NotThisKind {
        /// The run.
        run: RunId,
        /// Why.
        detail: String,
    },
    /// The run already ended.
    Ended {
        /// The run.
        run: RunId,
        /// How it ended.
        status: tether_store::RunStatus,
    },
}

/// Takes a stopped run of `kind` up again for `by`: locks it, checks its kind and that it has
/// not ended, decodes its spec, and records `resumed` (resetting the budget when it was spent).
/// The lock is held until the returned [`crate::run_lock::RunLock`] is dropped.
pub fn reopen<S: serde::de::DeserializeOwned>(
    ws: &Workspace,
    journal: &Journal,
    run: &RunId,
    kind: tether_store::RunKind,
    by: &str,
) -> Result<(crate::run_lock::RunLock, S), Reopen> {
    use tether_store::RunStatus;
    let lock = crate::run_lock::RunLock::acquire(&lock_path(ws, run)).map_err(Reopen::Lock)?;
    let record = journal.store().run(run).map_err(Reopen::Store)?;
    let not_this = |detail: String| Reopen::NotThisKind {
        run: run.clone(),
        detail,
    };
    if record.kind != kind {
        return Err(not_this(format!("it is a {} run", record.kind.as_str())));
    }
    let spec: S =
        serde_json::from_value(record.spec.clone()).map_err(|e| not_this(e.to_string()))?;
    let status = record.state.status;
    if matches!(
        status,
        RunStatus::Completed | RunStatus::Cancelled | RunStatus::Failed
    ) {
        return Err(Reopen::Ended {
            run: run.clone(),
            status,
        });
    }
    journal
        .append(
            run,
            &Event::Resumed {
                by: by.to_owned(),
                reset_budget: status == RunStatus::BudgetExhausted,
            },
        )
        .map_err(Reopen::Store)?;
    Ok((lock, spec))
}

/// Creates a run of `kind` with `spec` (stored as JSON) and locks it for this process. The lock
/// is held until the returned [`crate::run_lock::RunLock`] is dropped.
pub fn open_new<S: serde::Serialize>(
    ws: &Workspace,
    journal: &Journal,
    kind: tether_store::RunKind,
    spec: &S,
) -> Result<(RunId, crate::run_lock::RunLock), Reopen> {
    let spec = serde_json::to_value(spec).map_err(|e| Reopen::Store(StoreError::from(e)))?;
    let run = journal
        .store()
        .create_run(kind, ws.root(), &spec)
        .map_err(Reopen::Store)?;
    let lock = crate::run_lock::RunLock::acquire(&lock_path(ws, &run)).map_err(Reopen::Lock)?;
    Ok((run, lock))
}

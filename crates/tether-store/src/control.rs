//! What any process may ask of a run — pause it, cancel it, give its agent a message, record a
//! question asked about it on the side — for the CLI (`tether pause`, `cancel`, `say`, `side`)
//! and the dashboard alike. A pause and a message say who
//! asked: a person, or the run's own agent ([`Author`]), so its words are never taken for a
//! person's.
//!
//! A running loop only reads requests from its journal at safe points, so pause and cancel are
//! *requests* appended as events. A run whose process is gone (stopped, or killed) is changed
//! directly instead, since nobody else will act on a request. Whether a process drives the run
//! is told by its lock file ([`RunLock::holder`]), which the caller names. A run of another
//! machine (a team store) cannot be told that way: it is only ever asked, and its own machine's
//! loop (or `tether resume` there) acts on the request.

use std::path::Path;

use crate::run_lock::RunLock;
use crate::{Author, Event, Outcome, Run, RunId, RunStatus, Seq, Store, StoreError};

/// A run could not be found or changed.
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    /// There are no runs in this workspace yet; start one with `tether ralph`.
    #[error("no runs yet in this workspace; start one with `tether ralph \"<prompt>\"`")]
    NoRuns,
    /// The id does not parse or names no run; `tether status` shows the latest.
    #[error("no run `{0}` in this workspace")]
    UnknownRun(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The run named by `id`, or the latest run.
pub fn find_run(store: &Store, id: Option<&str>) -> Result<Run, ControlError> {
    match id {
        None => store.latest_run()?.ok_or(ControlError::NoRuns),
        Some(s) => {
            let unknown = || ControlError::UnknownRun(s.to_owned());
            let id: RunId = s.parse().map_err(|_| unknown())?;
            match store.run(&id) {
                Ok(run) => Ok(run),
                Err(StoreError::NotFound { .. }) => Err(unknown()),
                Err(e) => Err(e.into()),
            }
        }
    }
}

/// What a pause, cancel or message did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A live loop was asked; it acts at its next safe point.
    Requested,
    /// No process drives the run, so it was changed directly.
    Applied,
    /// The run had already ended (or was already in that state); nothing changed.
    Unchanged(RunStatus),
}

/// Whether the run has ended for good (completed, cancelled, failed).
pub fn is_ended(status: RunStatus) -> bool {
    matches!(
        status,
        RunStatus::Completed | RunStatus::Cancelled | RunStatus::Failed
    )
}

/// Whether a process may be driving `run`: its lock (at `lock`) is held here, or it belongs to
/// another machine, whose processes this one cannot see.
fn may_be_driven(lock: &Path, run: &Run) -> bool {
    is_elsewhere(run) || RunLock::holder(lock).is_some()
}

/// Whether `run` was created on another machine than this one (runs recorded before tether
/// kept machines count as this machine's).
pub fn is_elsewhere(run: &Run) -> bool {
    run.machine
        .as_deref()
        .is_some_and(|machine| machine != crate::this_machine())
}

/// Asks the run to pause at its next iteration boundary (or pauses a stopped, unfinished run),
/// for `by`, a person or the run's own agent (`author`). `lock` is the run's lock file.
pub fn pause(
    store: &Store,
    lock: &Path,
    run: &Run,
    (by, author): (&str, Author),
) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) || status == RunStatus::Paused {
        return Ok(Control::Unchanged(status));
    }
    if may_be_driven(lock, run) {
        let by = by.to_owned();
        store.append(Some(&run.id), &Event::PauseRequested { by, author })?;
        return Ok(Control::Requested);
    }
    if status == RunStatus::BudgetExhausted || status == RunStatus::Blocked {
        return Ok(Control::Unchanged(status));
    }
    let reason = format!("paused by {by} while no process was driving it");
    store.append(Some(&run.id), &Event::Paused { reason })?;
    Ok(Control::Applied)
}

/// Cancels the run: a live loop stops its current iteration; a stopped run is marked cancelled.
/// `lock` is the run's lock file.
pub fn cancel(store: &Store, lock: &Path, run: &Run, by: &str) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) {
        return Ok(Control::Unchanged(status));
    }
    store.append(Some(&run.id), &Event::CancelRequested { by: by.to_owned() })?;
    if may_be_driven(lock, run) {
        return Ok(Control::Requested);
    }
    store.append(
        Some(&run.id),
        &Event::RunFinished {
            outcome: Outcome::Cancelled,
        },
    )?;
    Ok(Control::Applied)
}

/// Queues a message from `by` for the run's agent: it is delivered at the start of the next
/// iteration (recorded when it is), as a person's or, when `author` is the agent, as the
/// agent's own note. A run that ended cannot take messages.
pub fn say(
    store: &Store,
    run: &Run,
    text: &str,
    (by, author): (&str, Author),
) -> Result<Control, ControlError> {
    let status = run.state.status;
    if is_ended(status) {
        return Ok(Control::Unchanged(status));
    }
    store.append(
        Some(&run.id),
        &Event::MessageQueued {
            text: text.to_owned(),
            by: by.to_owned(),
            author,
        },
    )?;
    Ok(Control::Requested)
}

/// A question asked about a run on the side (`tether side`), answered: what is recorded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SideAnswered {
    /// The question.
    pub question: String,
    /// The side model's answer.
    pub answer: String,
    /// Who asked.
    pub by: String,
    /// The model that answered, for people (`openai-chat qwen3-coder`).
    pub model: String,
    /// The model calls made.
    pub calls: u32,
    /// Tokens sent, cache reads and writes included.
    pub input_tokens: u64,
    /// Of those, read from the provider's prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, written to the provider's prompt cache.
    pub cache_write_input_tokens: u64,
    /// Tokens produced.
    pub output_tokens: u64,
    /// Their cost in US dollars, from the model's price.
    pub cost_usd: Option<f64>,
}

/// Records a side question and its answer in `run`'s journal, whatever the run's state (an
/// ended run too: it is only a question about it). The loop never acts on it: it is neither a
/// request nor a message, the agent never sees it, and the run's state does not move.
pub fn side_question(store: &Store, run: &Run, asked: SideAnswered) -> Result<Seq, ControlError> {
    let event = Event::SideQuestion {
        question: asked.question,
        answer: asked.answer,
        by: asked.by,
        model: asked.model,
        calls: asked.calls,
        input_tokens: asked.input_tokens,
        cached_input_tokens: asked.cached_input_tokens,
        cache_write_input_tokens: asked.cache_write_input_tokens,
        output_tokens: asked.output_tokens,
        cost_usd: asked.cost_usd,
    };
    Ok(store.append(Some(&run.id), &event)?)
}

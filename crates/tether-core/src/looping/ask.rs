//! Asking a person between iterations, for the loop itself (not for the agent): the circuit
//! breaker's question about a goal rejected again and again, the loop judge's "the agent looks
//! stuck". The question goes through the human desk like any other — same channels, same
//! store, answerable with `tether answer` — and the run waits for it as it waits for the
//! agent's `ask_human` (`waiting_for_input`; a `tether cancel` or Ctrl+C stops the wait).
//! When nobody can be asked (asking is off, the channels are misconfigured) the run pauses
//! with the reason instead.

use tether_human::{AskFailed, Reply};
use tether_store::NewQuestion;
use tokio_util::sync::CancellationToken;

use super::kind::{Answered, At, HumanCall};
use super::{LoopError, watch_for_cancel};

/// How asking went.
pub(super) enum Asked {
    /// A person answered.
    Answered(Answered),
    /// Nobody can be asked, for this reason.
    Nobody(String),
    /// The wait was stopped (Ctrl+C, `tether cancel`); the question stays pending.
    Stopped,
}

/// Asks `call` and waits for the answer.
pub(super) async fn person(
    at: At<'_>,
    call: &HumanCall,
    interrupt: &CancellationToken,
) -> Result<Asked, LoopError> {
    let question = NewQuestion {
        run_id: Some(at.run.clone()),
        thread_id: None,
        question: call.question.clone(),
        context: call.context.clone(),
        confidence: None,
        options: call.options.clone(),
    };
    if let Some(reply) = at.deps.human.settle(&question) {
        let why = match reply {
            Reply::Refused(why) => why,
            Reply::Answered { .. } => "asking a person is off (human.threshold = 0)".to_owned(),
        };
        return Ok(Asked::Nobody(why));
    }
    let stop = interrupt.child_token();
    let watcher = tokio::spawn(watch_for_cancel(
        at.deps.journal.clone(),
        at.run.clone(),
        stop.clone(),
    ));
    let reply = at.deps.human.ask_human(question, stop).await;
    watcher.abort();
    match reply {
        Ok(Reply::Answered {
            answer: Some(a), ..
        }) => Ok(Asked::Answered(Answered {
            text: a.text,
            choice: a.choice,
            by: a.responder,
        })),
        Ok(Reply::Answered { text, .. } | Reply::Refused(text)) => Ok(Asked::Nobody(text)),
        Err(AskFailed::Cancelled(_)) => Ok(Asked::Stopped),
        Err(AskFailed::Store(e)) => Err(e.into()),
    }
}

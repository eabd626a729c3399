//! On resume, the questions an interrupted iteration left behind: found in the journal and
//! waited for at the human desk — the same questions, not asked again, offered again on every
//! channel — so their answers reach the next prompt.

use tether_human::{BrokerError, Desk};
use tether_store::{Event, Journal, QuestionId, RunId, Seq, StoreError};
use tokio_util::sync::CancellationToken;

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
        let question = journal.store().question(id)?;
        // Its asker (an MCP client) gave up on it: the run does not wait for it; its answer,
        // when it comes, reaches a later prompt on its own.
        if journal.store().abandoned(&question)?.is_some() {
            continue;
        }
        let question = question.question;
        match human.wait(id, interrupt.clone()).await {
            Ok(answer) => answers.push((question, answer.text)),
            Err(BrokerError::Cancelled(_)) => return Ok(None),
            Err(BrokerError::Withdrawn(_)) => {}
            Err(BrokerError::Store(e)) => return Err(e),
        }
    }
    Ok(Some(answers))
}

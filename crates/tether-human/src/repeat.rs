//! A question the run already asked, asked again because the agent's work was started over.
//!
//! When an iteration never ends — the process driving the run was killed, or interrupted, while
//! the agent worked — `tether resume` starts the agent's turn over, and the agent asks again what
//! it had asked: the person would answer the same question once per crash. So a question an
//! agent asks (`ask_human`, `tether ask`) is first looked for among its run's earlier ones
//! ([`earlier`]); when it is the same question it is given back instead of posted again:
//!
//! - the same question still **pending**, whenever it was asked: waited for (every channel waits
//!   on its own post), nothing posted again;
//! - the same question **answered** in an iteration that never ended (not the one in progress):
//!   its stored answer, at once. That answer never reached a turn that completed, so the agent
//!   asking again is the crash repeating itself, not a new need.
//!
//! A question answered in an iteration that ended, or earlier in the iteration in progress, is
//! asked anew: an agent that asks the same thing twice in a healthy iteration, or again in a later
//! one, means to ask again (the situation may have changed). Giving an answer back is recorded
//! (`question_repeated`) in the iteration that repeated it, so once that iteration ends the answer
//! counts as handed to a completed turn and is not given back again.
//!
//! The same question is the same run, text, context, options and thread; the agent's confidence is
//! left out (it does not change what is asked). A question of no run is never given back. The
//! `ask_before` gate and permission requests never come here: a yes allows one command once.

use std::collections::HashMap;

use tether_store::{
    Event, NewQuestion, Question, QuestionId, QuestionStatus, Seq, Store, StoreError, StoredEvent,
};

/// The earlier question of the same run that `asked` repeats and that is given back for it, if
/// any (see the module's rules).
pub fn earlier(store: &Store, asked: &NewQuestion) -> Result<Option<Question>, StoreError> {
    let Some(run) = &asked.run_id else {
        return Ok(None);
    };
    let same: Vec<Question> = store
        .questions_for_run(run)?
        .into_iter()
        .filter(|q| is_same(q, asked))
        .collect();
    if same.is_empty() {
        return Ok(None);
    }
    let events = store.events(run, Seq::START, usize::MAX)?;
    Ok(given_back(&same, &Iterations::of(&events)).cloned())
}

/// Whether `q` asks what `asked` asks.
pub fn is_same(q: &Question, asked: &NewQuestion) -> bool {
    q.run_id == asked.run_id
        && q.question == asked.question
        && q.context == asked.context
        && q.options == asked.options
        && q.thread_id == asked.thread_id
}

/// Of `same` (questions asking the same thing, oldest first), the one given back: a pending one
/// first, else the newest answered in an iteration that never ended and is not in progress.
fn given_back<'a>(same: &'a [Question], iterations: &Iterations) -> Option<&'a Question> {
    if let Some(pending) = same
        .iter()
        .rev()
        .find(|q| q.status == QuestionStatus::Pending)
    {
        return Some(pending);
    }
    same.iter()
        .rev()
        .filter(|q| q.status == QuestionStatus::Answered)
        .find(|q| iterations.asked_in_an_unended_one(&q.id))
}

/// The run's journal cut into iterations: where each question was last asked (or given back),
/// which iterations ended, which is in progress.
#[derive(Debug, Default)]
struct Iterations {
    /// Per iteration, in order, whether it ended (completed or failed); index 0 is what came
    /// before the first iteration.
    ended: Vec<bool>,
    /// The iteration each question was last asked or given back in.
    last_asked: HashMap<QuestionId, usize>,
}

impl Iterations {
    fn of(events: &[StoredEvent]) -> Self {
        let mut out = Iterations {
            ended: vec![true],
            last_asked: HashMap::new(),
        };
        for e in events {
            let current = out.ended.len() - 1;
            match &e.event {
                Some(Event::IterationStarted { .. }) => out.ended.push(false),
                Some(Event::IterationCompleted { .. } | Event::IterationFailed { .. }) => {
                    out.ended[current] = true;
                }
                Some(
                    Event::QuestionAsked { question_id } | Event::QuestionRepeated { question_id },
                ) => {
                    out.last_asked.insert(question_id.clone(), current);
                }
                _ => {}
            }
        }
        out
    }

    /// Whether `id` was last asked in an iteration that never ended and is not the one in
    /// progress (the last).
    fn asked_in_an_unended_one(&self, id: &QuestionId) -> bool {
        let in_progress = self.ended.len() - 1;
        self.last_asked
            .get(id)
            .is_some_and(|&i| i != in_progress && !self.ended[i])
    }
}

#[cfg(test)]
#[path = "repeat_tests.rs"]
mod tests;

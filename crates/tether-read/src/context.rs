//! What a timeline shows beside the journal's events: a `question_asked` event names its
//! question, a `goal_verdict` event its goal and time; the question and the verdict themselves
//! are read here, once per timeline.

use std::collections::HashMap;

use tether_store::{Question, QuestionId, RunId, Store, StoreError, VerdictRecord};

/// A run's questions and verdicts, for its timeline.
#[derive(Debug, Default, Clone)]
pub struct Context {
    /// The run's questions by id.
    pub questions: HashMap<QuestionId, Question>,
    /// The run's verdicts, oldest first.
    pub verdicts: Vec<VerdictRecord>,
}

impl Context {
    /// A context over these questions and verdicts.
    pub fn new(questions: Vec<Question>, verdicts: Vec<VerdictRecord>) -> Self {
        Context {
            questions: questions.into_iter().map(|q| (q.id.clone(), q)).collect(),
            verdicts,
        }
    }

    /// The context of `run`, read from the store.
    pub fn of(store: &Store, run: &RunId) -> Result<Self, StoreError> {
        Ok(Context::new(
            store.questions_for_run(run)?,
            store.verdicts_for_run(run)?,
        ))
    }

    /// The verdict recorded with a `goal_verdict` event of `goal` at `at_ms` (the store writes
    /// both in one transaction, at one time).
    pub fn verdict(&self, goal: &str, at_ms: i64) -> Option<&VerdictRecord> {
        self.verdicts
            .iter()
            .find(|v| v.decision.goal_id == goal && v.created_at_ms == at_ms)
    }
}

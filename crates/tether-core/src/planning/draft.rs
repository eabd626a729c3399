//! The drafting session: the agent drafts goals for an objective, tether checks the draft, and
//! a human's revision requests go back to the agent.
//!
//! After each agent turn the plan is checked: it parses, it has at least one goal that was not
//! there before drafting, and each new goal has `done_when` and at least two failure modes. A
//! draft that falls short is sent back to the agent once with the problems; what is still wrong
//! after that is returned in [`Draft::problems`] for the human to see. Goals without an id get
//! one (as a patch) once the plan parses, so every drafted goal can be approved by id.

use std::path::PathBuf;
use std::sync::Arc;

use tether_agent::{Access, ExecError, Executor, TurnObserver, TurnRequest};
use tether_plan::{AssignedId, PlanDoc};
use tokio_util::sync::CancellationToken;

use super::PlanRef;
use super::approve::add_missing_ids;
use super::baseline::Baseline;
use crate::prompts::drafting as prompts;
use tether_plan::file::{self as plan_file, PlanFileError};

/// The plan after a drafting turn, and how it measures up.
#[derive(Debug, Clone)]
pub struct Draft {
    /// The plan file as it is now.
    pub doc: PlanDoc,
    /// Indices (into `Plan::goals`) of the goals that were not in the plan before drafting.
    pub new_goals: Vec<usize>,
    /// What is still short of the format after the send-back; empty when the draft is fit.
    pub problems: Vec<String>,
    /// Ids added to goals that had none.
    pub assigned: Vec<AssignedId>,
    /// The agent's final message of its last turn (empty after a hand edit).
    pub final_message: String,
}

impl Draft {
    /// The ids of the new goals (those that have one).
    pub fn new_ids(&self) -> Vec<String> {
        self.new_goals
            .iter()
            .filter_map(|i| self.doc.plan().goals.get(*i)?.id().map(str::to_owned))
            .collect()
    }
}

/// Drafting failed.
#[derive(Debug, thiserror::Error)]
pub enum DraftError {
    /// Reading, patching or restoring the plan file failed.
    #[error(transparent)]
    Plan(#[from] PlanFileError),
    /// The agent's turn failed (the model, the step limit) or was cancelled.
    #[error(transparent)]
    Agent(#[from] ExecError),
}

/// One plan-mode session over a plan file.
pub struct Drafter {
    executor: Arc<dyn Executor>,
    plan: PlanRef,
    baseline: Baseline,
    transcripts: PathBuf,
    objective: String,
    turns: u32,
}

impl Drafter {
    /// A session drafting goals for `objective` with `executor` (whose tools must be
    /// [`super::drafting_tools`] over the same plan and baseline), keeping each turn's transcript
    /// in `transcripts/turn-<n>.jsonl`.
    pub fn new(
        executor: Arc<dyn Executor>,
        plan: PlanRef,
        baseline: Baseline,
        transcripts: PathBuf,
        objective: impl Into<String>,
    ) -> Self {
        Drafter {
            executor,
            plan,
            baseline,
            transcripts,
            objective: objective.into(),
            turns: 0,
        }
    }

    /// The plan file being drafted.
    pub fn plan(&self) -> &PlanRef {
        &self.plan
    }

    /// The plan before drafting.
    pub fn baseline(&self) -> &Baseline {
        &self.baseline
    }

    /// The first turn: the agent explores and drafts; checked, and sent back once if short.
    pub async fn draft(
        &mut self,
        observer: &dyn TurnObserver,
        cancel: CancellationToken,
    ) -> Result<Draft, DraftError> {
        let prompt = prompts::draft(
            &self.objective,
            &self.plan.key,
            self.baseline.text().is_some(),
        );
        self.turn_and_check(prompt, observer, cancel).await
    }

    /// A revision: the human's `request` goes to the agent with the drafted goals' ids; checked
    /// and sent back once if short, as a draft is.
    pub async fn revise(
        &mut self,
        request: &str,
        observer: &dyn TurnObserver,
        cancel: CancellationToken,
    ) -> Result<Draft, DraftError> {
        let drafted = self.current()?.new_ids();
        let prompt = prompts::revision(&self.objective, &self.plan.key, request, &drafted);
        self.turn_and_check(prompt, observer, cancel).await
    }

    /// The plan as it is now, checked (after a hand edit in an editor, say). Never calls the
    /// agent.
    pub fn current(&self) -> Result<Draft, DraftError> {
        self.check(String::new())
    }

    /// Puts the plan file back as it was before drafting (removing it if there was none).
    pub fn restore(&self) -> Result<(), PlanFileError> {
        self.baseline.restore(&self.plan)
    }

    async fn turn_and_check(
        &mut self,
        prompt: String,
        observer: &dyn TurnObserver,
        cancel: CancellationToken,
    ) -> Result<Draft, DraftError> {
        let message = self.turn(prompt.clone(), observer, cancel.clone()).await?;
        let draft = self.check(message)?;
        if draft.problems.is_empty() {
            return Ok(draft);
        }
        tracing::info!(problems = ?draft.problems, "the draft is short of the format; sending it back");
        let again = prompts::send_back(&prompt, &draft.problems);
        let message = self.turn(again, observer, cancel).await?;
        self.check(message)
    }

    async fn turn(
        &mut self,
        prompt: String,
        observer: &dyn TurnObserver,
        cancel: CancellationToken,
    ) -> Result<String, ExecError> {
        self.turns += 1;
        let request = TurnRequest {
            iteration: self.turns,
            prompt,
            transcript: self.transcripts.join(format!("turn-{}.jsonl", self.turns)),
            access: Access::ReadOnly,
            context: tether_agent::Context::Fresh,
        };
        let outcome = self.executor.run_turn(request, observer, cancel).await?;
        Ok(outcome.final_message)
    }

    /// Reads the plan, adds missing ids when it parses, and lists what falls short.
    fn check(&self, final_message: String) -> Result<Draft, DraftError> {
        let name = &self.plan.key;
        let (doc, assigned) = match plan_file::read(&self.plan.path) {
            Err(PlanFileError::Missing { .. }) => {
                return Ok(Draft {
                    doc: PlanDoc::parse(&self.plan.path, ""),
                    new_goals: Vec::new(),
                    problems: vec![format!(
                        "{name} was not written; write it with `write_plan`"
                    )],
                    assigned: Vec::new(),
                    final_message,
                });
            }
            Err(e) => return Err(e.into()),
            Ok(doc) if doc.plan().has_errors() => (doc, Vec::new()),
            Ok(_) => add_missing_ids(&self.plan)?,
        };
        let plan = doc.plan();
        let mut problems: Vec<String> = plan
            .problems
            .iter()
            .filter(|p| p.is_error())
            .map(|p| format!("{name} line {}: {}", p.line, p.message))
            .collect();
        let new_goals: Vec<usize> = (0..plan.goals.len())
            .filter(|i| !self.baseline.had(&plan.goals[*i]))
            .collect();
        if new_goals.is_empty() {
            problems.push(format!(
                "{name} has no new goal; add at least one `## Goal:` section for the objective"
            ));
        }
        for goal in new_goals.iter().map(|i| &plan.goals[*i]) {
            let which = match goal.id() {
                Some(id) => format!("goal `{id}` (line {})", goal.heading_line),
                None => format!("goal `{}` (line {})", goal.title, goal.heading_line),
            };
            if goal.done_when.is_none() {
                problems.push(format!("{which} has no `done_when:` line"));
            }
            let n = goal.failure_modes.len();
            if n < 2 {
                problems.push(format!(
                    "{which} has {n} failure mode{}; give 2 or 3 under `failure_modes:`",
                    if n == 1 { "" } else { "s" }
                ));
            }
        }
        Ok(Draft {
            doc,
            new_goals,
            problems,
            assigned,
            final_message,
        })
    }
}

//! The journal's event vocabulary.
//!
//! Every state change in tether is an [`Event`] appended to the `events` table; everything else
//! in the store (run status, iteration rows) is a projection that can be rebuilt from these. The
//! JSON form (`{"type":"iteration_started","n":3}`) is also what `tether run --events jsonl`
//! prints, so it is a wire format: rename nothing, and give new fields `#[serde(default)]` so
//! older journal rows still decode.
//!
//! Adding a variant: add it here, give [`Event::kind`] its tag, decide in
//! [`crate::RunState::apply`] whether it changes run state, and whether a run's usage series is
//! made of it ([`USAGE_KINDS`]). An older tether reading a journal
//! that holds a newer variant sees it as a [`StoredEvent`] with `event: None` and skips it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ids::{QuestionId, RunId, Seq};
use crate::vocab::{Author, JudgeRole, Outcome, Rule, RunKind, Verdict};
pub use tether_budget::Unit;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn one() -> u32 {
    1
}

/// One thing that happened, as recorded in the journal.
///
/// Iteration numbers start at 1. Free-text fields (`by`, `responder`, `summary`) are for
/// people; nothing parses them. No variant ever carries a secret.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A run began. Written by [`crate::Store::create_run`] together with the run row.
    RunStarted {
        /// Which loop this is.
        kind: RunKind,
        /// The run's parameters as the caller chose them (prompt, `max_iterations`, promise...).
        spec: Value,
    },
    /// Iteration `n` began: the agent was handed its prompt.
    IterationStarted {
        /// The iteration number.
        n: u32,
    },
    /// Iteration `n` ended normally.
    IterationCompleted {
        /// The iteration number.
        n: u32,
        /// A one-line account of what the iteration did.
        summary: String,
    },
    /// Iteration `n` ended with an error from the agent or executor.
    IterationFailed {
        /// The iteration number.
        n: u32,
        /// The error, as shown to people.
        error: String,
    },
    /// What iteration `n`'s agent turn used, as its executor reported it. Appended after the
    /// turn and before the iteration's end.
    IterationUsage {
        /// The iteration number.
        n: u32,
        /// Tokens sent to the model, cache reads and writes included.
        input_tokens: u64,
        /// Of those, the tokens read from the provider's prompt cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
        /// Of those, the tokens written to the provider's prompt cache (absent from events
        /// recorded before tether counted them apart: read as 0).
        #[serde(default, skip_serializing_if = "is_zero")]
        cache_write_input_tokens: u64,
        /// Tokens the model produced.
        output_tokens: u64,
        /// What the turn cost in US dollars: reported by the agent, or from the model's price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
        /// The goals the iteration worked on (the active ones), which its usage is charged to.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        goals: Vec<String>,
        /// How long the agent's turn took, in milliseconds.
        #[serde(default, skip_serializing_if = "is_zero")]
        duration_ms: u64,
    },
    /// What a judge's model call used: the sign-off judge checking a goal, or the loop judge
    /// reading an iteration.
    JudgeUsage {
        /// Which judge.
        judge: JudgeRole,
        /// The goal it judged (the sign-off judge), charged with this usage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        goal_id: Option<String>,
        /// The model calls made (a sign-off judge's session makes one per step).
        #[serde(default = "one")]
        calls: u32,
        /// Tokens sent to the model, cache reads and writes included.
        input_tokens: u64,
        /// Of those, the tokens read from the provider's prompt cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
        /// Of those, the tokens written to the provider's prompt cache (absent from events
        /// recorded before tether counted them apart: read as 0).
        #[serde(default, skip_serializing_if = "is_zero")]
        cache_write_input_tokens: u64,
        /// Tokens the model produced.
        output_tokens: u64,
        /// What the calls cost in US dollars, from the model's price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// `complete_goal` was refused at once because nothing changed since the goal's last
    /// rejected attempt (no verify, no model call). The goal loop counts it as a rejection and,
    /// for the spin guard, as an idle iteration.
    NothingChanged {
        /// The goal.
        goal_id: String,
        /// The rejected attempt the workspace is unchanged since.
        since_attempt: u32,
    },
    /// A budget was spent: the run stops (`budget_exhausted`) until a person raises it.
    BudgetSpent {
        /// The unit.
        unit: Unit,
        /// What was spent.
        used: f64,
        /// The limit it reached (raises included).
        limit: f64,
        /// The goal whose own budget (its `budget:` line) was spent; `None` for the run's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        goal_id: Option<String>,
        /// The budget was the one the goal runs of a run of many goals share, spent by all of
        /// them together.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        shared: bool,
    },
    /// A person raised a budget (`tether resume --add-tokens 500k`, ...).
    BudgetRaised {
        /// The unit.
        unit: Unit,
        /// How much was added.
        amount: f64,
        /// The goal whose budget was raised; `None` for the run's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        goal_id: Option<String>,
        /// Who raised it.
        by: String,
    },
    /// The agent called a tool during iteration `n`.
    ToolCalled {
        /// The iteration number.
        n: u32,
        /// The tool's name.
        tool: String,
        /// A short description of the call (its arguments, abridged).
        summary: String,
    },
    /// The agent asked permission for a tool call during iteration `n` (an ACP agent's
    /// `session/request_permission`), and it was decided.
    PermissionDecided {
        /// The iteration number.
        n: u32,
        /// The kind of tool (`execute`, `edit`, …).
        tool: String,
        /// What the agent wanted to do, in one line.
        summary: String,
        /// Whether the call may run.
        allowed: bool,
        /// Who decided: `tether` for a rule, else the person who answered.
        by: String,
        /// The agent's option that was chosen, or why the call was refused.
        decision: String,
    },
    /// Iteration `n` was to continue the agent's session of the last iteration (`[loop] context
    /// = "continue"`) and started from a fresh context instead.
    FreshContext {
        /// The iteration number.
        n: u32,
        /// Why (the session could not be resumed, the last turn failed, …).
        reason: String,
    },
    /// Someone asked the run to pause at the next iteration boundary.
    PauseRequested {
        /// Who asked (`cli`, `web:alice`, ..., or `the agent`).
        by: String,
        /// Whether a person or the run's own agent asked.
        #[serde(default, skip_serializing_if = "Author::is_person")]
        author: Author,
    },
    /// The loop stopped and waits for `tether resume`.
    Paused {
        /// Why (a person's request, a rule, ...).
        reason: String,
    },
    /// The run was resumed after a pause, a crash or the end of its budget.
    Resumed {
        /// Who resumed it.
        by: String,
        /// Whether the iteration budget starts again from zero.
        reset_budget: bool,
        /// The run's configuration from now on, when a person accepted a change of it with
        /// this resume (`tether resume --accept-config`, the dashboard's accepted Resume);
        /// `None` keeps the run's.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        settings: Option<Value>,
    },
    /// Someone asked the run to stop for good.
    CancelRequested {
        /// Who asked.
        by: String,
    },
    /// A message was queued for the agent (`tether say`, the dashboard): a person's, or a note
    /// the agent left itself with its own `tether say`.
    MessageQueued {
        /// The message.
        text: String,
        /// Who wrote it.
        by: String,
        /// Whether a person or the run's own agent wrote it.
        #[serde(default, skip_serializing_if = "Author::is_person")]
        author: Author,
    },
    /// A person asked a question about the run on the side (`tether side`, the dashboard's
    /// "Ask about this run") and the side model answered it from the run's record and the
    /// repository. Nothing of it reaches the run's agent and the loop never acts on it: it moves
    /// neither the run's state nor its clock, and its usage is not charged to the run's budget.
    SideQuestion {
        /// The question.
        question: String,
        /// The side model's answer, as it gave it.
        answer: String,
        /// Who asked (`ana`, `web:ana`).
        by: String,
        /// The model that answered (`openai-chat qwen3-coder`).
        model: String,
        /// The model calls made.
        #[serde(default = "one")]
        calls: u32,
        /// Tokens sent to the model, cache reads and writes included.
        input_tokens: u64,
        /// Of those, the tokens read from the provider's prompt cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cached_input_tokens: u64,
        /// Of those, the tokens written to the provider's prompt cache.
        #[serde(default, skip_serializing_if = "is_zero")]
        cache_write_input_tokens: u64,
        /// Tokens the model produced.
        output_tokens: u64,
        /// What the calls cost in US dollars, from the model's price.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// Every message queued before this event was put into iteration `n`'s prompt.
    MessageDelivered {
        /// The iteration that carried the messages.
        n: u32,
    },
    /// A question to a human was stored (see the `questions` table for its text).
    QuestionAsked {
        /// The question.
        question_id: QuestionId,
    },
    /// The first answer to a question was recorded.
    QuestionAnswered {
        /// The question.
        question_id: QuestionId,
        /// Where the answer came from (`terminal`, `cli`, `web`, `zulip`, ...).
        channel: String,
        /// Who answered.
        responder: String,
    },
    /// A question was withdrawn without an answer.
    QuestionCancelled {
        /// The question.
        question_id: QuestionId,
    },
    /// Whoever asked a pending question stopped waiting for its answer without withdrawing
    /// it (an MCP client timed out and cancelled its `ask_human` call, or `tether mcp` ended).
    /// The question stays pending and an answer is still recorded; a run it belongs to gets
    /// that answer in its next prompt.
    QuestionAbandoned {
        /// The question.
        question_id: QuestionId,
        /// Who gave up, in words for people.
        reason: String,
    },
    /// The agent asked again a question its run had already asked, after an iteration that
    /// never ended (the process was killed or interrupted while the agent worked) made it repeat
    /// itself: the stored answer was given back, or the same pending question waited for, and
    /// nothing was posted again.
    QuestionRepeated {
        /// The question given back.
        question_id: QuestionId,
    },
    /// Someone waits for an abandoned question again (a client asked for it again).
    QuestionAwaited {
        /// The question.
        question_id: QuestionId,
    },
    /// A goal-loop rule (spin guard, oscillation nudge, reminder, ...) took effect.
    RuleFired {
        /// The rule.
        rule: Rule,
        /// What triggered it.
        reason: String,
    },
    /// A sign-off attempt for a goal was decided. Written by [`crate::Store::insert_verdict`].
    GoalVerdict {
        /// The goal's id in the plan.
        goal_id: String,
        /// Accept or reject.
        verdict: Verdict,
        /// Why.
        reason: String,
    },
    /// A goal's contract was approved. Written by [`crate::Store::approve_contract`].
    ContractApproved {
        /// The plan file, as the caller names it (relative to the workspace).
        plan_path: String,
        /// The goal's id in the plan.
        goal_id: String,
        /// The hash of the approved contract.
        contract_hash: String,
        /// Who approved it.
        by: String,
    },
    /// Iteration `n`'s agent hit a usage or rate limit: the loop waits until `until_ms` and
    /// then runs the same iteration again (not counted as a failure).
    WaitingForUsageLimit {
        /// The iteration that will run again.
        n: u32,
        /// The agent's own words about the limit.
        message: String,
        /// When the loop tries again (ms since the Unix epoch).
        until_ms: i64,
    },
    /// The run ended (for now, in the case of `interrupted`).
    RunFinished {
        /// How.
        outcome: Outcome,
    },
    /// A run of many goals began, its goals waiting. Written, with no run, by
    /// [`crate::Store::begin_fleet`].
    FleetStarted {
        /// The run of many goals.
        fleet_id: RunId,
    },
    /// A goal of a run of many goals moved. Written, with no run, by
    /// [`crate::Store::set_fleet_goal`].
    FleetGoalMoved {
        /// The run of many goals.
        fleet_id: RunId,
        /// The goal.
        goal_id: String,
        /// Where it stands now.
        state: crate::GoalState,
    },
    /// A run of many goals ended. Written, with no run, by [`crate::Store::end_fleet`].
    FleetEnded {
        /// The run of many goals.
        fleet_id: RunId,
        /// How (`all_merged`, `stuck`, `stopped`, `interrupted`).
        outcome: String,
    },
}

const ITERATION_STARTED: &str = "iteration_started";
const ITERATION_USAGE: &str = "iteration_usage";
const JUDGE_USAGE: &str = "judge_usage";
const ITERATION_COMPLETED: &str = "iteration_completed";
const ITERATION_FAILED: &str = "iteration_failed";

/// The kinds ([`Event::kind`]) of the events a run's usage series is made of: an iteration's
/// start, what its agent and the judges used, its end. A reader of what each iteration used
/// reads only these ([`crate::Store::usage_events_before`]), however many other events (tool
/// calls, messages) the journal holds between them.
pub const USAGE_KINDS: [&str; 5] = [
    ITERATION_STARTED,
    ITERATION_USAGE,
    JUDGE_USAGE,
    ITERATION_COMPLETED,
    ITERATION_FAILED,
];

/// [`USAGE_KINDS`] as a list of SQL string literals (`'iteration_started', …`), for
/// `kind IN (…)`. Both backends write it into the statement rather than bind it: each keeps an
/// index of these events alone (`events_usage_by_run`), whose condition names the same list, and
/// a query planner uses such an index only for a query that names the list too.
pub fn usage_kinds_sql() -> String {
    USAGE_KINDS
        .iter()
        .map(|kind| format!("'{kind}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl Event {
    /// The event's type tag, as stored in `events.kind` and in the JSON `type` field.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::RunStarted { .. } => "run_started",
            Event::IterationStarted { .. } => ITERATION_STARTED,
            Event::IterationCompleted { .. } => ITERATION_COMPLETED,
            Event::IterationFailed { .. } => ITERATION_FAILED,
            Event::IterationUsage { .. } => ITERATION_USAGE,
            Event::JudgeUsage { .. } => JUDGE_USAGE,
            Event::NothingChanged { .. } => "nothing_changed",
            Event::BudgetSpent { .. } => "budget_spent",
            Event::BudgetRaised { .. } => "budget_raised",
            Event::ToolCalled { .. } => "tool_called",
            Event::PermissionDecided { .. } => "permission_decided",
            Event::FreshContext { .. } => "fresh_context",
            Event::PauseRequested { .. } => "pause_requested",
            Event::Paused { .. } => "paused",
            Event::Resumed { .. } => "resumed",
            Event::CancelRequested { .. } => "cancel_requested",
            Event::MessageQueued { .. } => "message_queued",
            Event::SideQuestion { .. } => "side_question",
            Event::MessageDelivered { .. } => "message_delivered",
            Event::QuestionAsked { .. } => "question_asked",
            Event::QuestionAnswered { .. } => "question_answered",
            Event::QuestionCancelled { .. } => "question_cancelled",
            Event::QuestionAbandoned { .. } => "question_abandoned",
            Event::QuestionRepeated { .. } => "question_repeated",
            Event::QuestionAwaited { .. } => "question_awaited",
            Event::RuleFired { .. } => "rule_fired",
            Event::GoalVerdict { .. } => "goal_verdict",
            Event::ContractApproved { .. } => "contract_approved",
            Event::WaitingForUsageLimit { .. } => "waiting_for_usage_limit",
            Event::RunFinished { .. } => "run_finished",
            Event::FleetStarted { .. } => "fleet_started",
            Event::FleetGoalMoved { .. } => "fleet_goal_moved",
            Event::FleetEnded { .. } => "fleet_ended",
        }
    }
}

/// An event as read back from the journal.
///
/// Serialises as `{"seq":…,"run_id":…,"at_ms":…,"event":{"type":…,…}}`, one JSON line per event
/// for `--events jsonl`; the `event` object is exactly what was stored, even when this build does
/// not know its type.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredEvent {
    /// Position in the journal.
    pub seq: Seq,
    /// The run it belongs to, if any (a standalone `tether ask` has none).
    pub run_id: Option<RunId>,
    /// When it was appended, in milliseconds since the Unix epoch.
    pub at_ms: i64,
    /// The type tag.
    #[serde(skip)]
    pub kind: String,
    /// The decoded event, or `None` when this build does not know the type (written by a newer
    /// tether) or cannot decode it.
    #[serde(skip)]
    pub event: Option<Event>,
    /// The stored JSON, type tag included.
    #[serde(rename = "event")]
    pub payload: Value,
}

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;

//! A run's state as a pure fold over its events.
//!
//! [`RunState::apply`] is the only place that decides what an event means for a run. The store
//! calls it inside each append transaction to keep the `runs` row current, and
//! [`crate::Store::rebuild_run_state`] calls it over the whole journal; the two must agree, and a
//! property test checks that they do. Keeping the fold free of I/O and clocks (timestamps come
//! from the events) is what makes a crashed run's state recoverable from its journal alone.

use serde::{Deserialize, Serialize};

use std::collections::BTreeMap;

use tether_budget::{Budget, Overrun, Spending, Unit};

use crate::event::{Event, StoredEvent};
use crate::ids::{QuestionId, Seq};
use crate::vocab::{Author, JudgeRole, Outcome, RunKind, RunStatus};

/// A message queued for the agent and not yet delivered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueuedMessage {
    /// The seq of its `message_queued` event.
    pub seq: Seq,
    /// When it was queued (ms since the Unix epoch).
    pub at_ms: i64,
    /// The message.
    pub text: String,
    /// Who wrote it.
    pub by: String,
    /// Whether a person wrote it or the run's own agent (its `tether say`).
    #[serde(default, skip_serializing_if = "Author::is_person")]
    pub author: Author,
}

/// The loop is waiting out a usage or rate limit of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageLimitWait {
    /// The iteration that runs again after the wait.
    pub n: u32,
    /// The agent's own words about the limit.
    pub message: String,
    /// When the loop tries again (ms since the Unix epoch).
    pub until_ms: i64,
}

impl UsageLimitWait {
    /// `waiting for usage limit until 14:05:09 UTC (the agent's message)`, for people.
    pub fn describe(&self) -> String {
        format!(
            "waiting for usage limit until {} ({})",
            utc_clock(self.until_ms),
            self.message
        )
    }
}

/// The time of day of `ms` (since the Unix epoch) in UTC: `14:05:09 UTC`.
pub fn utc_clock(ms: i64) -> String {
    let secs = ms.div_euclid(1000).rem_euclid(86_400);
    format!(
        "{:02}:{:02}:{:02} UTC",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

/// What model calls used, summed over usage events (an agent's turns, a judge's calls).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Tokens sent to the model, cache reads and writes included.
    pub input_tokens: u64,
    /// Of those, the tokens read from the provider's prompt cache.
    pub cached_input_tokens: u64,
    /// Of those, the tokens written to the provider's prompt cache.
    pub cache_write_input_tokens: u64,
    /// Tokens the model produced.
    pub output_tokens: u64,
    /// What the turns cost in US dollars, summed over the turns whose agent reported it; `None`
    /// when none did.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Whether anything was recorded.
    pub fn is_known(&self) -> bool {
        self.input_tokens > 0 || self.output_tokens > 0 || self.cost_usd.is_some()
    }

    /// The model usage a usage event (`iteration_usage`, `judge_usage`) records; nothing for
    /// any other event.
    pub fn of(event: &Event) -> Usage {
        match event {
            Event::IterationUsage {
                input_tokens,
                cached_input_tokens,
                cache_write_input_tokens,
                output_tokens,
                cost_usd,
                ..
            }
            | Event::JudgeUsage {
                input_tokens,
                cached_input_tokens,
                cache_write_input_tokens,
                output_tokens,
                cost_usd,
                ..
            } => Usage {
                input_tokens: *input_tokens,
                cached_input_tokens: *cached_input_tokens,
                cache_write_input_tokens: *cache_write_input_tokens,
                output_tokens: *output_tokens,
                cost_usd: *cost_usd,
            },
            _ => Usage::default(),
        }
    }

    /// Input and output tokens together.
    pub fn tokens(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// `1200 in (800 cache read, 200 cache write) / 340 out tokens (≈ $0.0123)`, for people;
    /// the cache's part is left out when it is nothing.
    pub fn describe(&self) -> String {
        let cost = self
            .cost_usd
            .map_or_else(String::new, |c| format!(" (≈ ${c:.4})"));
        let cache: Vec<String> = [
            (self.cached_input_tokens, "cache read"),
            (self.cache_write_input_tokens, "cache write"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
        let cache = if cache.is_empty() {
            String::new()
        } else {
            format!(" ({})", cache.join(", "))
        };
        format!(
            "{} in{cache} / {} out tokens{cost}",
            self.input_tokens, self.output_tokens
        )
    }

    /// Adds one call's (or one sum's) usage.
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.cached_input_tokens = self
            .cached_input_tokens
            .saturating_add(other.cached_input_tokens);
        self.cache_write_input_tokens = self
            .cache_write_input_tokens
            .saturating_add(other.cache_write_input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        if let Some(c) = other.cost_usd {
            self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + c);
        }
    }
}

/// What one goal's work used: the agent usage of the iterations it was active in, plus its
/// sign-off judge's calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct GoalUsage {
    /// Tokens and cost.
    pub usage: Usage,
    /// Iterations it was active in.
    pub iterations: u32,
    /// The time of those iterations' agent turns, in milliseconds.
    pub duration_ms: u64,
}

impl GoalUsage {
    /// The goal's spending, for its budget.
    pub fn spending(&self) -> Spending {
        Spending {
            iterations: self.iterations,
            tokens: self.usage.tokens(),
            cost_usd: self.usage.cost_usd.unwrap_or(0.0),
            duration_secs: self.duration_ms / 1000,
        }
    }
}

/// A budget that stopped the run: which, and whose.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpentBudget {
    /// The unit, what was spent and the limit.
    pub overrun: Overrun,
    /// The goal whose own budget it was; `None` for the run's.
    pub goal_id: Option<String>,
    /// Whether a person has raised it since.
    #[serde(default)]
    pub raised: bool,
    /// Whether it was the budget the goal runs of a run of many goals share.
    #[serde(default)]
    pub shared: bool,
}

impl SpentBudget {
    /// `token budget spent: 512.3k tokens of 500k tokens` (`goal g1's token budget ...`).
    pub fn describe(&self) -> String {
        match &self.goal_id {
            Some(goal) => format!("goal {goal}'s {}", self.overrun),
            None if self.shared => format!("the goals' shared {}", self.overrun),
            None => format!("the run's {}", self.overrun),
        }
    }

    /// The command that raises it, for run `run`: `tether resume r-1 --add-tokens 500k`.
    pub fn raise_hint(&self, run: &str) -> String {
        let unit = self.overrun.unit;
        let example = match unit {
            Unit::Iterations => "10",
            Unit::Tokens => "500k",
            Unit::CostUsd => "5",
            Unit::Duration => "2h",
        };
        format!("tether resume {run} {} {example}", unit.raise_flag())
    }
}

/// Everything the loop and the status surfaces need to know about a run, derived from its
/// journal.
///
/// Stored as JSON in `runs.state`; fields added later must default (the struct is
/// `#[serde(default)]`) so rows written by older builds still load.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunState {
    /// Which loop (from `run_started`).
    pub kind: Option<RunKind>,
    /// Where the run stands.
    pub status: RunStatus,
    /// How it last finished, while it stays finished; cleared by `resumed`.
    pub outcome: Option<Outcome>,
    /// The highest iteration that ended (completed or failed). A crash mid-iteration does not
    /// count it, so a resumed loop continues with `iteration + 1`.
    pub iteration: u32,
    /// The iteration that started and has not ended, if any.
    pub in_progress: Option<u32>,
    /// `iteration` when the budget was last reset; the budget used is `iteration - budget_start`.
    pub budget_start: u32,
    /// `max_iterations` from the run's spec, if it has one (0 means unlimited).
    pub max_iterations: Option<u32>,
    /// Who asked for a pause that has not taken effect yet.
    pub pause_requested: Option<String>,
    /// Who asked for a cancel that has not taken effect yet.
    pub cancel_requested: Option<String>,
    /// Messages queued for the agent and not yet delivered, oldest first.
    pub queued_messages: Vec<QueuedMessage>,
    /// Questions asked by this run that are still waiting for an answer, oldest first.
    pub pending_questions: Vec<QuestionId>,
    /// Questions of this run still without an answer whose asker stopped waiting
    /// (`question_abandoned`): the run is not blocked on them.
    pub abandoned_questions: Vec<QuestionId>,
    /// Questions answered after their asker stopped waiting, owed to the next prompt; taken
    /// with the queued messages (`message_delivered`).
    pub late_answers: Vec<QuestionId>,
    /// Failed iterations since the last completed one.
    pub consecutive_failures: u32,
    /// The usage limit the loop is waiting out, until the iteration runs again or the run
    /// stops.
    pub usage_limit: Option<UsageLimitWait>,
    /// What the run's agent turns used so far.
    pub usage: Usage,
    /// What the sign-off judge's calls used so far.
    pub judge_usage: Usage,
    /// What the loop judge's calls used so far.
    pub loop_judge_usage: Usage,
    /// What each goal's work used, by goal id.
    pub goal_usage: BTreeMap<String, GoalUsage>,
    /// Milliseconds the run spent running (not stopped, not waiting for an answer), up to its
    /// last event.
    pub running_ms: u64,
    /// What people added to the run's budget (`budget_raised`), per unit.
    pub raised: Budget,
    /// What people added to goals' budgets, by goal id.
    pub goal_raised: BTreeMap<String, Budget>,
    /// The budget that stopped the run, until it is resumed.
    pub budget_spent: Option<SpentBudget>,
    /// The run's configuration as a person last accepted it on a resume (see
    /// [`Event::Resumed`]); `None`: the one recorded in the run's spec.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<serde_json::Value>,
    /// The seq of the last event folded in.
    pub last_event_seq: Seq,
    /// The type tag of the last event folded in.
    pub last_event_kind: Option<String>,
    /// When the last event was appended (ms since the Unix epoch).
    pub last_event_at_ms: Option<i64>,
}

impl RunState {
    /// Folds a journal into a state.
    pub fn from_events<'a>(events: impl IntoIterator<Item = &'a StoredEvent>) -> RunState {
        let mut state = RunState::default();
        for event in events {
            state.apply_stored(event);
        }
        state
    }

    /// Iterations counted against the current budget.
    pub fn budget_used(&self) -> u32 {
        self.iteration.saturating_sub(self.budget_start)
    }

    /// Everything the run's model calls used: the agent's and both judges'.
    pub fn total_usage(&self) -> Usage {
        let mut total = self.usage;
        total.add(&self.judge_usage);
        total.add(&self.loop_judge_usage);
        total
    }

    /// The running time up to `now_ms`: [`RunState::running_ms`], plus the time since the last
    /// event while the run is running.
    pub fn running_ms_at(&self, now_ms: i64) -> u64 {
        let open = match (self.status, self.last_event_at_ms) {
            (RunStatus::Running, Some(last)) => u64::try_from(now_ms - last).unwrap_or(0),
            _ => 0,
        };
        self.running_ms.saturating_add(open)
    }

    /// What the run spent, against its budget, at `now_ms`.
    pub fn spending(&self, now_ms: i64) -> Spending {
        let total = self.total_usage();
        Spending {
            iterations: self.budget_used(),
            tokens: total.tokens(),
            cost_usd: total.cost_usd.unwrap_or(0.0),
            duration_secs: self.running_ms_at(now_ms) / 1000,
        }
    }

    /// The run's limits: `base` (from its spec) with what people added.
    pub fn limits(&self, base: &Budget) -> Budget {
        with_raises(base, &self.raised)
    }

    /// Goal `goal`'s limits: `base` (its `budget:` line) with what people added.
    pub fn goal_limits(&self, goal: &str, base: &Budget) -> Budget {
        self.goal_raised
            .get(goal)
            .map_or(*base, |raised| with_raises(base, raised))
    }

    /// Folds in an event read back from the journal. An event this build cannot decode only
    /// moves the position.
    pub fn apply_stored(&mut self, stored: &StoredEvent) {
        match &stored.event {
            Some(event) => self.apply(stored.seq, stored.at_ms, event),
            None => self.note_position(stored.seq, stored.at_ms, &stored.kind),
        }
    }

    /// Folds in one event appended at `seq` and `at_ms`. Pure: same inputs, same state.
    pub fn apply(&mut self, seq: Seq, at_ms: i64, event: &Event) {
        if let Event::SideQuestion { .. } = event {
            // A question on the side is no step of the run: its activity and clock stay put.
            self.last_event_seq = seq;
            return;
        }
        self.running_ms = self.running_ms_at(at_ms);
        self.note_position(seq, at_ms, event.kind());
        if self.usage_limit.is_some() && ends_a_usage_wait(event) {
            self.usage_limit = None;
        }
        match event {
            Event::RunStarted { kind, spec } => {
                *self = RunState {
                    kind: Some(*kind),
                    max_iterations: spec
                        .get("max_iterations")
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok()),
                    last_event_seq: self.last_event_seq,
                    last_event_kind: self.last_event_kind.take(),
                    last_event_at_ms: self.last_event_at_ms,
                    ..RunState::default()
                };
            }
            Event::IterationStarted { n } => {
                self.in_progress = Some(*n);
                self.status = self.waiting_or_running();
                self.outcome = None;
            }
            Event::IterationCompleted { n, .. } => {
                self.end_iteration(*n);
                self.consecutive_failures = 0;
            }
            Event::IterationFailed { n, .. } => {
                self.end_iteration(*n);
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
            }
            Event::IterationUsage {
                goals, duration_ms, ..
            } => {
                let usage = Usage::of(event);
                self.usage.add(&usage);
                for goal in goals {
                    let spent = self.goal_usage.entry(goal.clone()).or_default();
                    spent.usage.add(&usage);
                    spent.iterations = spent.iterations.saturating_add(1);
                    spent.duration_ms = spent.duration_ms.saturating_add(*duration_ms);
                }
            }
            Event::JudgeUsage { judge, goal_id, .. } => {
                let usage = Usage::of(event);
                match judge {
                    JudgeRole::SignOff => self.judge_usage.add(&usage),
                    JudgeRole::Loop => self.loop_judge_usage.add(&usage),
                }
                if let Some(goal) = goal_id {
                    self.goal_usage
                        .entry(goal.clone())
                        .or_default()
                        .usage
                        .add(&usage);
                }
            }
            Event::BudgetSpent {
                unit,
                used,
                limit,
                goal_id,
                shared,
            } => {
                self.budget_spent = Some(SpentBudget {
                    overrun: Overrun {
                        unit: *unit,
                        used: *used,
                        limit: *limit,
                    },
                    goal_id: goal_id.clone(),
                    raised: false,
                    shared: *shared,
                });
            }
            Event::BudgetRaised {
                unit,
                amount,
                goal_id,
                ..
            } => {
                if let Some(spent) = &mut self.budget_spent
                    && spent.overrun.unit == *unit
                    && spent.goal_id == *goal_id
                {
                    spent.raised = true;
                }
                let raised = match goal_id {
                    Some(goal) => self.goal_raised.entry(goal.clone()).or_default(),
                    None => &mut self.raised,
                };
                add_raise(raised, *unit, *amount);
            }
            Event::ToolCalled { .. }
            | Event::PermissionDecided { .. }
            | Event::FreshContext { .. }
            | Event::NothingChanged { .. }
            | Event::RuleFired { .. }
            | Event::GoalVerdict { .. }
            | Event::ContractApproved { .. }
            | Event::FleetStarted { .. }
            | Event::FleetGoalMoved { .. }
            | Event::FleetEnded { .. }
            | Event::SideQuestion { .. }
            | Event::QuestionRepeated { .. } => {}
            Event::PauseRequested { by, .. } => self.pause_requested = Some(by.clone()),
            Event::Paused { .. } => {
                self.in_progress = None;
                self.pause_requested = None;
                self.status = RunStatus::Paused;
            }
            Event::Resumed {
                reset_budget,
                settings,
                ..
            } => {
                if settings.is_some() {
                    self.settings.clone_from(settings);
                }
                self.budget_spent = None;
                self.in_progress = None;
                self.pause_requested = None;
                self.outcome = None;
                if *reset_budget {
                    self.budget_start = self.iteration;
                }
                self.status = self.waiting_or_running();
            }
            Event::CancelRequested { by } => self.cancel_requested = Some(by.clone()),
            Event::MessageQueued { text, by, author } => {
                self.queued_messages.push(QueuedMessage {
                    seq,
                    at_ms,
                    text: text.clone(),
                    by: by.clone(),
                    author: *author,
                });
            }
            Event::MessageDelivered { .. } => {
                self.queued_messages.clear();
                self.late_answers.clear();
            }
            Event::QuestionAsked { question_id } => {
                if !self.pending_questions.contains(question_id) {
                    self.pending_questions.push(question_id.clone());
                }
                if !self.status.is_stopped() {
                    self.status = RunStatus::WaitingForInput;
                }
            }
            Event::QuestionAnswered { question_id, .. }
            | Event::QuestionCancelled { question_id } => {
                self.pending_questions.retain(|id| id != question_id);
                let was_abandoned = self.abandoned_questions.contains(question_id);
                self.abandoned_questions.retain(|id| id != question_id);
                if was_abandoned && matches!(event, Event::QuestionAnswered { .. }) {
                    self.late_answers.push(question_id.clone());
                }
                if self.status == RunStatus::WaitingForInput {
                    self.status = self.waiting_or_running();
                }
            }
            Event::QuestionAbandoned { question_id, .. } => {
                if self.pending_questions.contains(question_id) {
                    self.pending_questions.retain(|id| id != question_id);
                    self.abandoned_questions.push(question_id.clone());
                }
                if self.status == RunStatus::WaitingForInput {
                    self.status = self.waiting_or_running();
                }
            }
            Event::QuestionAwaited { question_id } => {
                if self.abandoned_questions.contains(question_id) {
                    self.abandoned_questions.retain(|id| id != question_id);
                    self.pending_questions.push(question_id.clone());
                    if !self.status.is_stopped() {
                        self.status = RunStatus::WaitingForInput;
                    }
                }
            }
            Event::WaitingForUsageLimit {
                n,
                message,
                until_ms,
            } => {
                self.usage_limit = Some(UsageLimitWait {
                    n: *n,
                    message: message.clone(),
                    until_ms: *until_ms,
                });
            }
            Event::RunFinished { outcome } => {
                self.in_progress = None;
                self.pause_requested = None;
                self.cancel_requested = None;
                self.outcome = Some(*outcome);
                self.status = match outcome {
                    Outcome::Completed => RunStatus::Completed,
                    Outcome::BudgetExhausted => RunStatus::BudgetExhausted,
                    Outcome::Failed => RunStatus::Failed,
                    Outcome::Cancelled => RunStatus::Cancelled,
                    Outcome::Blocked => RunStatus::Blocked,
                    Outcome::Interrupted if self.pending_questions.is_empty() => RunStatus::Paused,
                    Outcome::Interrupted => RunStatus::WaitingForInput,
                };
            }
        }
    }

    fn note_position(&mut self, seq: Seq, at_ms: i64, kind: &str) {
        self.last_event_seq = seq;
        self.last_event_kind = Some(kind.to_owned());
        self.last_event_at_ms = Some(at_ms);
    }

    fn end_iteration(&mut self, n: u32) {
        self.iteration = self.iteration.max(n);
        if self.in_progress == Some(n) {
            self.in_progress = None;
        }
    }

    fn waiting_or_running(&self) -> RunStatus {
        if self.pending_questions.is_empty() {
            RunStatus::Running
        } else {
            RunStatus::WaitingForInput
        }
    }
}

/// Adds a raise of `amount` in `unit` to `raised` (which holds sums of raises).
fn add_raise(raised: &mut Budget, unit: Unit, amount: f64) {
    let whole = |n: f64| {
        // Raises are whole counts far below 2^53.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let w = n.max(0.0).round() as u64;
        w
    };
    match unit {
        Unit::Iterations => {
            let add = u32::try_from(whole(amount)).unwrap_or(u32::MAX);
            raised.iterations = Some(raised.iterations.unwrap_or(0).saturating_add(add));
        }
        Unit::Tokens => {
            raised.tokens = Some(raised.tokens.unwrap_or(0).saturating_add(whole(amount)));
        }
        Unit::CostUsd => raised.cost_usd = Some(raised.cost_usd.unwrap_or(0.0) + amount.max(0.0)),
        Unit::Duration => {
            raised.duration_secs = Some(
                raised
                    .duration_secs
                    .unwrap_or(0)
                    .saturating_add(whole(amount)),
            );
        }
    }
}

/// `base` with the sums of raises in `raised` added to each limit it sets.
fn with_raises(base: &Budget, raised: &Budget) -> Budget {
    let mut limits = *base;
    for unit in Unit::ALL {
        if let Some(amount) = raised.get(unit) {
            limits.raise(unit, amount);
        }
    }
    limits
}

/// Whether `event` ends a wait for a usage limit: the iteration starting again, or the run
/// stopping.
fn ends_a_usage_wait(event: &Event) -> bool {
    matches!(
        event,
        Event::IterationStarted { .. }
            | Event::IterationCompleted { .. }
            | Event::IterationFailed { .. }
            | Event::Paused { .. }
            | Event::Resumed { .. }
            | Event::RunFinished { .. }
    )
}

#[cfg(test)]
#[path = "state_tests.rs"]
mod tests;

//! `ask_before` enforced: the gate the built-in agent's `bash` asks before running a command.
//!
//! The prefixes come from `[human] ask_before` (as the run recorded it: see [`crate::bounds`])
//! and from every active goal's `ask_before:` list, read fresh from the plan on each call (the
//! plan changes during a run), together with the list of the goal's approved contract (see
//! [`crate::planning::terms`]). A goal's list, once seen while the goal is active, keeps
//! applying until the goal is closed (done or cancelled): deleting the lines, the goal or its
//! `status:` from the plan does not lift it.
//!
//! When a command matches a prefix, or the line cannot be read well enough to tell (see
//! [`tether_tools::gate::check`]), the command is held and a human is asked through the broker:
//! "run `git push origin main`? yes/no". Only a clear yes runs it; a no, anything else, the
//! broker's timeout answer, a cancelled wait or channels that cannot be set up refuse it, and the
//! reason is the tool's result for the model.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use tether_human::Desk;
use tether_human::broker::BrokerError;
use tether_plan::file::PlanFileError;
use tether_store::{NewQuestion, RunCell};
use tether_tools::ToolContext;
use tether_tools::gate::{CommandGate, Verdict, check};
use tokio_util::sync::CancellationToken;

use crate::planning::terms::Approvals;

/// How much of a command is quoted in the question.
const SHOWN_CHARS: usize = 300;

/// What the gate decided about a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// It starts with no `ask_before` prefix: nothing to ask.
    Clear,
    /// It was held, and a human said yes.
    Allowed,
    /// It was held and may not run; the reason is for the model.
    Refused(String),
}

/// tether's `ask_before` gate for one run's agent (the built-in agent's `bash`, and Claude
/// Code's Bash through `tether gate`).
pub struct AskBeforeGate {
    desk: Desk,
    global: Vec<String>,
    plan: PathBuf,
    run: RunCell,
    /// Each goal's prefixes seen while it was active, by goal id (or title), until it closes.
    goals: Mutex<BTreeMap<String, Vec<String>>>,
    /// Where the goals' approved contracts are read: their prefixes apply whatever the plan
    /// says now.
    approvals: Option<Approvals>,
}

impl std::fmt::Debug for AskBeforeGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AskBeforeGate")
            .field("global", &self.global)
            .field("plan", &self.plan)
            .finish_non_exhaustive()
    }
}

impl AskBeforeGate {
    /// A gate asking at `desk` (questions filed under the run in `run`), with the
    /// `[human] ask_before` prefixes `global` and the goals of the plan file `plan`. While the
    /// desk's channels have problems (one could not be set up), a matching command is refused
    /// without asking, naming them.
    pub fn new(desk: Desk, global: Vec<String>, plan: PathBuf, run: RunCell) -> Self {
        let gate = AskBeforeGate {
            desk,
            global,
            plan,
            run,
            goals: Mutex::new(BTreeMap::new()),
            approvals: None,
        };
        // The goals' lists as they are before the agent's first turn can change them.
        gate.prefixes();
        gate
    }

    /// The gate also holds each goal's prefixes as its approved contract lists them (read from
    /// `approvals`), so deleting them from the plan does not lift them.
    #[must_use]
    pub fn with_approvals(mut self, approvals: Approvals) -> Self {
        self.approvals = Some(approvals);
        self.prefixes();
        self
    }

    /// Every prefix in force now, each with where it comes from.
    fn prefixes(&self) -> Vec<(String, String)> {
        let mut goals = self
            .goals
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        match tether_plan::file::read(&self.plan) {
            Ok(doc) => {
                for goal in &doc.plan().goals {
                    let key = goal
                        .id
                        .as_ref()
                        .map_or_else(|| goal.title.clone(), |id| id.value.clone());
                    let status = goal.status();
                    if status.is_closed() {
                        goals.remove(&key);
                    } else if status == tether_plan::Status::Active || goals.contains_key(&key) {
                        let approved = self
                            .approvals
                            .as_ref()
                            .and_then(|a| a.terms(goal))
                            .map(|t| t.ask_before)
                            .unwrap_or_default();
                        let written = goal.ask_before.iter().map(|p| p.value.clone());
                        let list = goals.entry(key).or_default();
                        for prefix in written.chain(approved) {
                            if !list.contains(&prefix) {
                                list.push(prefix);
                            }
                        }
                    }
                }
            }
            Err(PlanFileError::Missing { .. }) => {}
            Err(err) => {
                tracing::warn!(%err, "ask_before: the plan could not be read; using the lists seen before")
            }
        }
        let global = self
            .global
            .iter()
            .map(|p| (p.clone(), "[human] ask_before in tether.toml".to_owned()));
        let per_goal = goals.iter().flat_map(|(goal, list)| {
            list.iter()
                .map(move |p| (p.clone(), format!("the ask_before of goal `{goal}`")))
        });
        global.chain(per_goal).collect()
    }

    async fn decide(&self, command: &str, ctx: &ToolContext) -> Result<(), String> {
        match self.judge(command, ctx.cancel_token().clone()).await {
            Decision::Clear | Decision::Allowed => Ok(()),
            Decision::Refused(reason) => Err(reason),
        }
    }

    /// Why `command` must wait for a human's yes (it starts with an `ask_before` prefix, or
    /// tether cannot tell), or `None` when it is clear.
    pub fn hold_reason(&self, command: &str) -> Option<String> {
        let prefixes = self.prefixes();
        let list: Vec<String> = prefixes.iter().map(|(p, _)| p.clone()).collect();
        match check(command, &list) {
            Verdict::Clear => None,
            Verdict::Matches { command, prefix } => {
                let source = prefixes
                    .iter()
                    .find(|(p, _)| p.trim() == prefix)
                    .map_or("ask_before", |(_, s)| s.as_str());
                Some(format!("`{command}` starts with `{prefix}` ({source})"))
            }
            Verdict::Unsure { reason } => Some(format!(
                "tether cannot tell whether it runs one of the ask_before commands ({}): {reason}",
                list.join(", ")
            )),
        }
    }

    /// The desk this gate asks at.
    pub fn desk(&self) -> &Desk {
        &self.desk
    }

    /// The run the gate's questions are filed under, once it exists.
    pub fn run(&self) -> Option<tether_store::RunId> {
        self.run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Whether `command` may run: clear of every `ask_before` prefix, or held and asked about
    /// until a human answers (or `cancel` fires, which withdraws the question).
    pub async fn judge(&self, command: &str, cancel: CancellationToken) -> Decision {
        let Some(why) = self.hold_reason(command) else {
            return Decision::Clear;
        };
        let shown = shorten(command);
        let problems = &self.desk.policy().problems;
        if !problems.is_empty() {
            return Decision::Refused(format!(
                "not run: `{shown}` needs a human's yes first ({why}), and no human can be asked: \
                 {}. Do not run it another way; say in your summary that it is waiting for a \
                 human.",
                problems.join("; ")
            ));
        }
        let run = self
            .run
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        let ask = NewQuestion {
            run_id: run,
            question: format!("run `{shown}`? yes/no"),
            context: format!(
                "The agent's bash wants to run:\n{command}\n\nIt needs a human's yes first: {why}. \
                 Answer yes to run it; anything else refuses it."
            ),
            confidence: None,
            thread_id: None,
            options: vec!["yes".to_owned(), "no".to_owned()],
        };
        let refused = match self.desk.broker().ask(ask, cancel).await {
            Ok(answer) if answer.channel != "timeout" && is_yes(&answer.text) => {
                return Decision::Allowed;
            }
            Ok(answer) => format!(
                "not run: `{shown}` needs a human's yes first ({why}); {} answered \"{}\". Do not \
                 run it another way; if it is still needed, say why in your summary or ask with \
                 ask_human.",
                answer.responder,
                answer.text.trim()
            ),
            Err(BrokerError::Cancelled(id)) => {
                // Not left pending: nobody will run this command when the answer comes.
                let _ = self.broker_store_cancel(&id);
                format!(
                    "not run: `{shown}` was waiting for a human's yes ({why}) when the run was \
                     cancelled"
                )
            }
            Err(err) => format!(
                "not run: `{shown}` needs a human's yes first ({why}), and asking failed: {err}"
            ),
        };
        Decision::Refused(refused)
    }

    fn broker_store_cancel(&self, id: &tether_store::QuestionId) -> Result<bool, String> {
        self.desk
            .broker()
            .journal()
            .store()
            .cancel_question(id)
            .map_err(|e| e.to_string())
    }
}

impl CommandGate for AskBeforeGate {
    fn allow<'a>(
        &'a self,
        command: &'a str,
        ctx: &'a ToolContext,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(self.decide(command, ctx))
    }
}

/// Whether a human's answer is a clear yes.
pub fn is_yes(answer: &str) -> bool {
    let a = answer
        .trim()
        .trim_end_matches(['.', '!'])
        .trim()
        .to_lowercase();
    matches!(
        a.as_str(),
        "yes"
            | "y"
            | "yes please"
            | "yep"
            | "yeah"
            | "ok"
            | "okay"
            | "approve"
            | "approved"
            | "allow"
            | "allowed"
            | "go ahead"
            | "proceed"
            | "run it"
            | "sure"
    )
}

fn shorten(command: &str) -> String {
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    match flat.char_indices().nth(SHOWN_CHARS) {
        None => flat,
        Some((cut, _)) => format!("{}…", &flat[..cut]),
    }
}

#[cfg(test)]
mod tests {
    use super::is_yes;

    #[test]
    fn only_a_clear_yes_is_yes() {
        for yes in ["yes", "Yes.", " y ", "OK", "go ahead!", "Approved"] {
            assert!(is_yes(yes), "{yes}");
        }
        for no in [
            "no",
            "",
            "yes, but not to main",
            "not yet",
            "maybe",
            "nope",
            "yess",
            "y?",
        ] {
            assert!(!is_yes(no), "{no}");
        }
    }
}

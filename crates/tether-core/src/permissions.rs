//! Who decides an ACP agent's permission requests: the run's `ask_before` rules (global and the
//! active goals', the same matching as the built-in agent's shell) and `[executor] permissions`
//! say whether a call is put to a person; when it is, the question goes through the human desk
//! as a choice among the agent's own options ("Allow", "Always Allow", "Reject", …) with the
//! call's details, and waits as long as questions wait. Calls nobody needs to see are allowed
//! here, with `tether` as the one who decided.

use futures_util::future::BoxFuture;
use tether_agent::acp::{PermissionAsk, PermissionDesk, PermissionVerdict};
use tether_config::Permissions;
use tether_human::broker::BrokerError;
use tether_store::NewQuestion;
use tokio_util::sync::CancellationToken;

use crate::ask_before::{AskBeforeGate, is_yes};

/// The run's permission policy, asking at the gate's desk.
pub struct DeskPermissions {
    gate: AskBeforeGate,
    mode: Permissions,
}

impl DeskPermissions {
    /// Decides with `gate`'s `ask_before` lists and desk, under `mode`.
    pub fn new(gate: AskBeforeGate, mode: Permissions) -> Self {
        DeskPermissions { gate, mode }
    }

    /// Why a person must decide `ask`, or `None` when the policy allows it.
    fn hold_reason(&self, ask: &PermissionAsk) -> Option<String> {
        if let Some(why) = ask
            .command
            .as_deref()
            .and_then(|c| self.gate.hold_reason(c))
        {
            return Some(why);
        }
        match self.mode {
            Permissions::AskAll if !ask.only_reads() => {
                Some("[executor] permissions = \"ask_all\" puts every change to a person".into())
            }
            _ => None,
        }
    }

    async fn decide_now(
        &self,
        ask: &PermissionAsk,
        cancel: CancellationToken,
    ) -> PermissionVerdict {
        let Some(why) = self.hold_reason(ask) else {
            return PermissionVerdict::allow(ask, "tether");
        };
        let problems = &self.gate.desk().policy().problems;
        if !problems.is_empty() {
            return PermissionVerdict::Refused {
                reason: format!(
                    "{} needs a person's decision ({why}), and no one can be asked: {}",
                    ask.describe(),
                    problems.join("; ")
                ),
                by: "tether".into(),
            };
        }
        let question = NewQuestion {
            run_id: self.gate.run(),
            question: format!("Allow the agent to {}?", ask.describe()),
            context: context(ask, &why),
            confidence: None,
            thread_id: None,
            options: ask.choices.iter().map(|c| c.label.clone()).collect(),
        };
        let broker = self.gate.desk().broker();
        match broker.ask(question, cancel).await {
            Ok(answer) if answer.channel == "timeout" => PermissionVerdict::Refused {
                reason: format!(
                    "{} waited for a person's decision ({why}) and the wait timed out",
                    ask.describe()
                ),
                by: "timeout".into(),
            },
            Ok(answer) => {
                let by = answer.responder.clone();
                let picked = answer.choice.and_then(|i| ask.choices.get(i)).or_else(|| {
                    ask.choices
                        .iter()
                        .find(|c| c.label.eq_ignore_ascii_case(answer.text.trim()))
                });
                match picked {
                    Some(choice) => PermissionVerdict::Chose {
                        option: choice.id.clone(),
                        by,
                    },
                    None if is_yes(&answer.text) => PermissionVerdict::allow(ask, &by),
                    None => PermissionVerdict::Refused {
                        reason: format!(
                            "{} was refused: {by} answered \"{}\"",
                            ask.describe(),
                            answer.text.trim()
                        ),
                        by,
                    },
                }
            }
            Err(BrokerError::Cancelled(id)) => {
                // Nobody will run the call when an answer comes: withdraw the question.
                let _ = broker.journal().store().cancel_question(&id);
                PermissionVerdict::Refused {
                    reason: format!(
                        "{} was waiting for a person when the turn stopped",
                        ask.describe()
                    ),
                    by: "tether".into(),
                }
            }
            Err(err) => PermissionVerdict::Refused {
                reason: format!(
                    "{} needs a person's decision ({why}), and asking failed: {err}",
                    ask.describe()
                ),
                by: "tether".into(),
            },
        }
    }
}

impl PermissionDesk for DeskPermissions {
    fn decide<'a>(
        &'a self,
        ask: &'a PermissionAsk,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, PermissionVerdict> {
        Box::pin(self.decide_now(ask, cancel))
    }
}

/// The question's details: what the call is, why it waits, what it touches.
fn context(ask: &PermissionAsk, why: &str) -> String {
    let mut out = format!(
        "The agent wants to make a tool call ({}): {}\n\nIt waits for a person: {why}.",
        ask.kind, ask.title
    );
    if let Some(command) = &ask.command {
        out.push_str(&format!("\n\nCommand:\n{command}"));
    }
    if !ask.paths.is_empty() {
        let paths: Vec<String> = ask.paths.iter().map(|p| p.display().to_string()).collect();
        out.push_str(&format!("\n\nFiles: {}", paths.join(", ")));
    }
    if let Some(input) = &ask.input {
        out.push_str(&format!("\n\nInput: {input}"));
    }
    out
}

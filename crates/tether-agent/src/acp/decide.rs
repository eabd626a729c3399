//! The executor's side of a permission request: tether's own limits first (nothing but reads in
//! a read-only turn, no change outside the workspace), then the [`PermissionDesk`]; the decision
//! sent back as the agent's own option, recorded as an event, and a refusal remembered for the
//! next prompt (an agent whose only reject option ends its turn would not hear it otherwise).

use std::sync::PoisonError;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    PermissionOptionId, RequestPermissionOutcome, RequestPermissionResponse,
    SelectedPermissionOutcome,
};
use tether_tools::Workspace;
use tokio_util::sync::CancellationToken;

use super::AcpExecutor;
use super::permission::{ChoiceKind, PermissionAsk, PermissionVerdict};
use crate::{Access, AgentEvent, TurnObserver};

/// A permission request and what was decided.
pub(super) struct Decided {
    ask: PermissionAsk,
    verdict: PermissionVerdict,
    responder: Responder<RequestPermissionResponse>,
}

impl AcpExecutor {
    /// Decides one permission request: tether's own limits first, then the desk.
    pub(super) async fn decide(
        &self,
        ask: PermissionAsk,
        access: Access,
        responder: Responder<RequestPermissionResponse>,
        cancel: CancellationToken,
    ) -> Decided {
        let verdict = if ask.tether_tool {
            // tether's own tools: what they do, tether governs (a question, a sign-off).
            PermissionVerdict::allow(&ask, "tether")
        } else if access == Access::ReadOnly && !ask.only_reads() {
            PermissionVerdict::Refused {
                reason: format!(
                    "{} changes things, and this turn may only read",
                    ask.describe()
                ),
                by: "tether".into(),
            }
        } else if let Some(path) = self.outside(&ask) {
            PermissionVerdict::Refused {
                reason: format!(
                    "{} reaches `{}`, outside the workspace",
                    ask.describe(),
                    path
                ),
                by: "tether".into(),
            }
        } else {
            self.desk.decide(&ask, cancel).await
        };
        Decided {
            ask,
            verdict,
            responder,
        }
    }

    /// A path a changing call names outside the workspace, if any.
    fn outside(&self, ask: &PermissionAsk) -> Option<String> {
        if ask.only_reads() {
            return None;
        }
        let workspace = Workspace::new(&self.settings.workspace).ok()?;
        ask.paths
            .iter()
            .find(|p| workspace.resolve(&p.to_string_lossy()).is_err())
            .map(|p| p.display().to_string())
    }

    /// Sends a decision to the agent and records it.
    pub(super) fn answer(&self, decided: Decided, cancelled: bool, observer: &dyn TurnObserver) {
        let Decided {
            ask,
            verdict,
            responder,
        } = decided;
        let (outcome, allowed, by, label) = match (&verdict, cancelled) {
            (_, true) => (
                RequestPermissionOutcome::Cancelled,
                false,
                "tether".to_owned(),
                "cancelled".to_owned(),
            ),
            (PermissionVerdict::Chose { option, by }, false) => {
                let choice = ask.choices.iter().find(|c| &c.id == option);
                let allowed = choice.is_some_and(|c| c.kind.allows());
                let label = choice.map_or_else(|| option.clone(), |c| c.label.clone());
                if !allowed {
                    self.remember(format!("{}: {by} chose \"{label}\"", ask.describe()));
                }
                (selected(option), allowed, by.clone(), label)
            }
            (PermissionVerdict::Refused { reason, by }, false) => {
                self.remember(reason.clone());
                let reject = ask
                    .option(ChoiceKind::RejectOnce)
                    .or_else(|| ask.option(ChoiceKind::RejectAlways));
                let outcome =
                    reject.map_or(RequestPermissionOutcome::Cancelled, |c| selected(&c.id));
                (outcome, false, by.clone(), format!("refused: {reason}"))
            }
        };
        observer.event(AgentEvent::Permission {
            tool: ask.kind.clone(),
            summary: ask.describe(),
            allowed,
            by,
            decision: label,
        });
        if let Err(e) = responder.respond(RequestPermissionResponse::new(outcome)) {
            tracing::debug!(error = %e, "a permission decision could not be sent");
        }
    }

    fn remember(&self, refusal: String) {
        self.refusals
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(refusal);
    }
}

fn selected(option: &str) -> RequestPermissionOutcome {
    RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(PermissionOptionId::new(
        option,
    )))
}

//! The MCP client's own prompt as a channel: when the client declares the `elicitation`
//! capability (at `initialize`, or in each request's `_meta` on protocol 2026-07-28),
//! `ask_human` also asks the person through it, racing the desk's other channels. Up to
//! protocol 2025-11-25 that is an `elicitation/create` request ([`Elicitation`]); on 2026-07-28,
//! where a server sends no requests, the call returns `input_required` with the same form and
//! the client's retry carries the person's response (see `crate::rounds`).
//!
//! The form holds the question (and its context) as the message. An open question asks for one
//! required `answer`; a question with choices offers a `choice` (one of the options) and an
//! `other` field for the person's own words, which wins when filled in. An accepted form
//! answers the question; a declined or cancelled one leaves it pending on the other channels
//! (the store, Zulip, …). When another channel answers first the request is cancelled with
//! `notifications/cancelled`, and the client's late response, if any, is ignored.

use rmcp::model::ProtocolVersion;
use rmcp::model::{
    ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
    ServerRequest,
};
use rmcp::service::{PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::{Value, json};
use tether_config::HumanConfig;
use tether_human::{Channel, ChannelAnswer};
use tether_store::Question;
use tokio_util::sync::CancellationToken;

/// Asks through the prompt of the MCP client on the other end of `peer`.
pub(crate) struct Elicitation {
    peer: Peer<RoleServer>,
    responder: String,
}

/// How the client can show a form to its person, for this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prompt {
    /// It cannot (no `elicitation` capability, or a headless client inside a run).
    Absent,
    /// An `elicitation/create` request to the client (protocols up to 2025-11-25).
    Request,
    /// An `input_required` result asking for the form, answered by the client's retry of the
    /// call (protocol 2026-07-28, where servers send no requests).
    InputRequired,
}

/// How this call's client can be asked; `in_run` says the server serves a run, whose agent CLI
/// runs headless with nobody at its prompt (the run's channels reach the person instead).
pub(crate) fn prompt(rc: &RequestContext<RoleServer>, in_run: bool) -> Prompt {
    let forms = rc
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if in_run || !forms {
        Prompt::Absent
    } else if rc
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
    {
        Prompt::InputRequired
    } else {
        Prompt::Request
    }
}

/// Who answers in the client's prompt: the person at this machine
/// ([`tether_human::person`]), else the client's name.
pub(crate) fn responder(rc: &RequestContext<RoleServer>, human: &HumanConfig) -> String {
    tether_human::person::known_name(human, &tether_config::ProcessEnv)
        .or_else(|| rc.client_info().map(|c| c.name))
        .unwrap_or_else(|| "the MCP client".to_owned())
}

impl Elicitation {
    /// The channel asking through the client of this call.
    pub(crate) fn new(rc: &RequestContext<RoleServer>, human: &HumanConfig) -> Self {
        Elicitation {
            peer: rc.peer.clone(),
            responder: responder(rc, human),
        }
    }

    /// Sends the form and waits for the person's response, or for `stop`.
    async fn ask(&self, question: &Question, stop: &CancellationToken) -> Option<ChannelAnswer> {
        let params = form(question)?;
        let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
        let handle = match self
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(h) => h,
            Err(e) => {
                tracing::warn!(error = %e, "could not ask through the MCP client's prompt");
                return None;
            }
        };
        let mut handle = handle;
        let response = tokio::select! {
            r = &mut handle.rx => Some(r),
            () = stop.cancelled() => None,
        };
        let Some(response) = response else {
            // Answered elsewhere (or the wait was cancelled): close the client's prompt; its
            // late response finds no request waiting and is dropped.
            let reason = Some("answered elsewhere; tether no longer needs this".to_owned());
            if let Err(e) = handle.cancel(reason).await {
                tracing::debug!(error = %e, "could not withdraw the elicitation");
            }
            return None;
        };
        let result = match response {
            Ok(Ok(rmcp::model::ClientResult::ElicitResult(result))) => result,
            Ok(Ok(other)) => {
                tracing::warn!(?other, "the MCP client answered the elicitation oddly");
                return None;
            }
            Ok(Err(e)) => {
                log_failure(&e);
                return None;
            }
            Err(_) => return None,
        };
        read(question, &result, &self.responder)
    }
}

fn log_failure(e: &ServiceError) {
    tracing::warn!(error = %e, "the MCP client's prompt failed; the question stays pending elsewhere");
}

/// The form for `question`: its text and context as the message, and the fields to fill in.
pub(crate) fn form(question: &Question) -> Option<ElicitRequestParams> {
    let mut message = question.question.trim().to_owned();
    let context = question.context.trim();
    if !context.is_empty() {
        message.push_str(&format!("\n\nContext:\n{context}"));
    }
    let schema = if question.options.is_empty() {
        json!({
            "type": "object",
            "properties": {
                "answer": {"type": "string", "title": "Your answer"}
            },
            "required": ["answer"]
        })
    } else {
        json!({
            "type": "object",
            "properties": {
                "choice": {"type": "string", "title": "Pick one", "enum": question.options},
                "other": {"type": "string", "title": "Or answer in your own words"}
            }
        })
    };
    match serde_json::from_value::<ElicitationSchema>(schema) {
        Ok(requested_schema) => Some(ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema,
        }),
        Err(e) => {
            tracing::warn!(error = %e, "could not build the elicitation form");
            None
        }
    }
}

/// The answer in an elicitation's result: only an accepted form with something filled in
/// answers; own words win over a picked choice.
pub(crate) fn read(
    question: &Question,
    result: &ElicitResult,
    responder: &str,
) -> Option<ChannelAnswer> {
    if result.action != ElicitationAction::Accept {
        // Declined, cancelled (or an action this version does not know): no answer here.
        tracing::info!(question = %question.id, action = ?result.action,
            "the person did not answer in the MCP client; the question stays pending elsewhere");
        return None;
    }
    let content = result.content.as_ref()?;
    let field = |name: &str| {
        content
            .get(name)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
    };
    if let Some(text) = field("answer").or_else(|| field("other")) {
        return Some(ChannelAnswer::text(text, responder));
    }
    let picked = field("choice")?;
    let index = question.options.iter().position(|o| o == picked)?;
    ChannelAnswer::choice(question, index, responder)
}

impl Channel for Elicitation {
    fn name(&self) -> &'static str {
        "mcp"
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        self.ask(question, &stop).await
    }
}

#[cfg(test)]
#[path = "elicit_tests.rs"]
mod tests;

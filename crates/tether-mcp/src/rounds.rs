//! The client's prompt on protocol 2026-07-28, where a server sends the client no requests: the
//! first `ask_human` call stores the question, offers it on the desk's channels in the
//! background, and returns `input_required` with the form (the `answer` input request) and the
//! question's id as `requestState`. The client shows the form and calls again with the person's
//! response: an accepted form answers the question (first answer wins, so one given meanwhile
//! on another channel stands); a declined or cancelled one just waits for the other channels.
//!
//! Only question ids this process handed out are taken back as `requestState` (kept in memory,
//! not trusted from the client), so a retry cannot answer another process's question.

use std::collections::BTreeMap;

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResponse, ElicitRequest, ElicitResult, InputRequest, InputRequiredResult,
    InputResponses,
};
use rmcp::service::RequestContext;
use tether_human::Desk;
use tether_human::broker::{self, BrokerError};
use tether_store::{NewQuestion, QuestionId};

use crate::ask::{refused, reply};
use crate::elicit;
use crate::server::TetherMcp;

/// The key of the form among the input requests.
const ANSWER: &str = "answer";

impl TetherMcp {
    /// The first round: the question stored and offered elsewhere, the form returned.
    pub(crate) async fn first_round(&self, desk: &Desk, question: NewQuestion) -> CallToolResponse {
        if let Some(settled) = desk.settle(&question) {
            return reply(settled).into();
        }
        let stored = match desk.broker().journal().store().insert_question(&question) {
            Ok(q) => q,
            Err(e) => return refused(format!("ask_human failed: {e}")).into(),
        };
        let id = stored.id.clone();
        tracing::info!(question = %id, "asking in the client's prompt; answer with `tether answer {id} \"…\"`");
        let Some(form) = elicit::form(&stored) else {
            return refused(format!("ask_human could not build the form for {id}")).into();
        };
        // The other channels get it now, not only once the prompt is closed.
        let stop = self.inner.shutdown.child_token();
        if let Ok(mut prompted) = self.inner.prompted.lock() {
            prompted.insert(id.clone(), stop.clone());
        }
        let (desk, busy) = (desk.clone(), self.inner.in_flight.enter());
        tokio::spawn(async move {
            let _busy = busy;
            match desk.wait(&id, stop).await {
                Ok(_) | Err(BrokerError::Cancelled(_) | BrokerError::Withdrawn(_)) => {}
                Err(e) => {
                    tracing::warn!(question = %id, error = %e, "waiting beside the prompt failed")
                }
            }
        });
        let requests = BTreeMap::from([(
            ANSWER.to_owned(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        )]);
        InputRequiredResult::new(Some(requests), Some(stored.id.to_string())).into()
    }

    /// The next round: the person's response recorded (if they answered), then the first
    /// answer from any channel returned.
    pub(crate) async fn next_round(
        &self,
        state: &str,
        responses: Option<InputResponses>,
        rc: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let _busy = self.inner.in_flight.enter();
        let unknown = || {
            refused(format!(
                "`requestState` {state:?} names no question this server is asking; call ask_human \
                 again without it"
            ))
            .into()
        };
        let Ok(id) = state.parse::<QuestionId>() else {
            return unknown();
        };
        let background = self
            .inner
            .prompted
            .lock()
            .ok()
            .and_then(|mut p| p.remove(&id));
        let Some(background) = background else {
            return unknown();
        };
        let desk = match self.the_desk().await {
            Ok(d) => d.clone(),
            Err(e) => return e.into(),
        };
        if let Err(e) = self.record_response(&desk, &id, responses.as_ref(), &rc) {
            return refused(format!("ask_human failed: {e}")).into();
        }
        // The wait below takes over from the one started beside the prompt.
        background.cancel();
        let cancel = self.inner.shutdown.child_token();
        let asked = std::sync::OnceLock::from(id.clone());
        let waiting = async { tether_human::asking::replied(desk.wait(&id, cancel.clone()).await) };
        self.reply_when_answered(waiting, &rc, &cancel, &asked)
            .await
            .into()
    }

    /// Stores the person's answer from the form, if they gave one (the first answer wins).
    fn record_response(
        &self,
        desk: &Desk,
        id: &QuestionId,
        responses: Option<&InputResponses>,
        rc: &RequestContext<RoleServer>,
    ) -> Result<(), tether_store::StoreError> {
        let result = responses
            .and_then(|r| r.get(ANSWER))
            .and_then(|v| serde_json::from_value::<ElicitResult>(v.clone()).ok());
        let Some(result) = result else {
            return Ok(());
        };
        let store = desk.broker().journal().store();
        let question = store.question(id)?;
        if let Some(answer) = elicit::read(
            &question,
            &result,
            &elicit::responder(rc, &self.inner.options.human()),
        ) {
            broker::answer(
                &store,
                &self.inner.options.workspace.state_dir(),
                id,
                answer.body.text(),
                "mcp",
                &answer.responder,
            )?;
        }
        Ok(())
    }
}

//! What a turn's `session/update` notifications mean to tether: the agent's text (its final
//! message is the text after its last tool call), its tool calls as they finish (one event
//! each, with a one-line summary), its plan, and what it reports of its usage.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{
    ContentBlock, SessionUpdate, ToolCall, ToolCallStatus, ToolCallUpdate,
};

use super::permission::kind_name;
use crate::AgentEvent;

/// How many characters of a tool call's title go into its summary.
const SUMMARY_CHARS: usize = 160;

/// One turn's updates, folded.
#[derive(Debug, Default)]
pub(crate) struct TurnState {
    /// The text since the last tool call.
    message: String,
    /// Tool calls seen, by id: title, kind, and whether their end was reported.
    calls: HashMap<String, Call>,
    /// How many tool calls finished.
    pub(crate) tool_calls: u32,
    /// The session's cost so far, as the agent last reported it (US dollars).
    pub(crate) cost_usd: Option<f64>,
}

#[derive(Debug)]
struct Call {
    title: String,
    kind: &'static str,
    reported: bool,
}

impl TurnState {
    /// Folds one update in; returns the events it makes.
    pub(crate) fn apply(&mut self, update: SessionUpdate) -> Vec<AgentEvent> {
        match update {
            SessionUpdate::AgentMessageChunk(chunk) => {
                if let ContentBlock::Text(text) = chunk.content {
                    self.message.push_str(&text.text);
                }
                Vec::new()
            }
            SessionUpdate::ToolCall(call) => self.started(call).into_iter().collect(),
            SessionUpdate::ToolCallUpdate(update) => self.updated(update).into_iter().collect(),
            SessionUpdate::Plan(plan) => {
                let steps: Vec<&str> = plan.entries.iter().map(|e| e.content.as_str()).collect();
                vec![AgentEvent::ToolCall {
                    tool: "plan".into(),
                    summary: super::one_line(&format!("plan: {}", steps.join("; ")), SUMMARY_CHARS),
                    is_error: false,
                }]
            }
            SessionUpdate::UsageUpdate(usage) => {
                if let Some(cost) = usage.cost
                    && cost.currency.eq_ignore_ascii_case("USD")
                {
                    self.cost_usd = Some(cost.amount);
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    fn started(&mut self, call: ToolCall) -> Option<AgentEvent> {
        let id = call.tool_call_id.to_string();
        self.calls.insert(
            id.clone(),
            Call {
                title: call.title,
                kind: kind_name(call.kind),
                reported: false,
            },
        );
        self.finish_if_done(&id, call.status)
    }

    fn updated(&mut self, update: ToolCallUpdate) -> Option<AgentEvent> {
        let id = update.tool_call_id.to_string();
        let fields = update.fields;
        let call = self.calls.entry(id.clone()).or_insert_with(|| Call {
            title: String::new(),
            kind: "other",
            reported: false,
        });
        if let Some(title) = fields.title {
            call.title = title;
        }
        if let Some(kind) = fields.kind {
            call.kind = kind_name(kind);
        }
        self.finish_if_done(&id, fields.status?)
    }

    /// The event of a call that just reached its end.
    fn finish_if_done(&mut self, id: &str, status: ToolCallStatus) -> Option<AgentEvent> {
        let failed = match status {
            ToolCallStatus::Completed => false,
            ToolCallStatus::Failed => true,
            _ => return None,
        };
        let call = self.calls.get_mut(id)?;
        if call.reported {
            return None;
        }
        call.reported = true;
        self.tool_calls += 1;
        // The final message is what the agent says after its last tool call.
        self.message.clear();
        let title = if call.title.is_empty() {
            call.kind.to_owned()
        } else {
            call.title.clone()
        };
        Some(AgentEvent::ToolCall {
            tool: call.kind.to_owned(),
            summary: super::one_line(&title, SUMMARY_CHARS),
            is_error: failed,
        })
    }

    /// The text after the last tool call.
    pub(crate) fn final_message(&self) -> String {
        self.message.trim().to_owned()
    }
}

#[cfg(test)]
#[path = "updates_tests.rs"]
mod tests;

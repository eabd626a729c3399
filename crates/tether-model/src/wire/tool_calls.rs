//! Assembles streamed tool calls, whatever key the API uses to tell them apart.
//!
//! Chat Completions keys fragments by a choice-local index, Anthropic by content-block index,
//! Responses by output index or call id. All three end up here, which numbers calls from 0 in
//! the order they started and emits the matching `ToolCall*` events.

use std::collections::VecDeque;

use crate::{StreamEvent, ToolCall};

#[derive(Debug)]
struct Pending {
    key: String,
    id: String,
    name: String,
    raw: String,
    finished: bool,
}

/// The tool calls of one response.
#[derive(Debug, Default)]
pub(crate) struct ToolCalls {
    calls: Vec<Pending>,
}

impl ToolCalls {
    /// The call with this key, if it was started.
    pub(crate) fn index_of(&self, key: &str) -> Option<usize> {
        self.calls.iter().position(|call| call.key == key)
    }

    /// Starts a call and returns its index.
    pub(crate) fn start(
        &mut self,
        key: String,
        id: String,
        name: String,
        out: &mut VecDeque<StreamEvent>,
    ) -> usize {
        let index = self.calls.len();
        out.push_back(StreamEvent::ToolCallStarted {
            index,
            id: id.clone(),
            name: name.clone(),
        });
        self.calls.push(Pending {
            key,
            id,
            name,
            raw: String::new(),
            finished: false,
        });
        index
    }

    /// Fills in a name that arrived after the call started (some servers do this).
    pub(crate) fn set_name_if_empty(&mut self, index: usize, name: &str) {
        if let Some(call) = self.calls.get_mut(index)
            && call.name.is_empty()
        {
            call.name = name.to_owned();
        }
    }

    /// Appends raw argument text to a started call.
    pub(crate) fn delta(&mut self, index: usize, delta: &str, out: &mut VecDeque<StreamEvent>) {
        if delta.is_empty() {
            return;
        }
        if let Some(call) = self.calls.get_mut(index) {
            call.raw.push_str(delta);
            out.push_back(StreamEvent::ToolCallArgumentsDelta {
                index,
                delta: delta.to_owned(),
            });
        }
    }

    /// The raw arguments received so far.
    pub(crate) fn raw(&self, index: usize) -> &str {
        self.calls.get(index).map_or("", |call| call.raw.as_str())
    }

    /// Finishes one call (once).
    pub(crate) fn finish(&mut self, index: usize, out: &mut VecDeque<StreamEvent>) {
        if let Some(call) = self.calls.get_mut(index)
            && !call.finished
        {
            call.finished = true;
            out.push_back(StreamEvent::ToolCallFinished {
                index,
                call: ToolCall::from_raw(call.id.clone(), call.name.clone(), call.raw.clone()),
            });
        }
    }

    /// Finishes every call still open.
    pub(crate) fn finish_all(&mut self, out: &mut VecDeque<StreamEvent>) {
        for index in 0..self.calls.len() {
            self.finish(index, out);
        }
    }

    /// Whether any call was made.
    pub(crate) fn any(&self) -> bool {
        !self.calls.is_empty()
    }
}

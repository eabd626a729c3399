//! What a run did last, from the journal's tail: its last step (a side question is no step of
//! the run's) and its last tool call.

use serde::Serialize;
use tether_store::{Event, Run, Seq, Store, StoreError, StoredEvent};

/// How far back the tail is read.
const TAIL: i64 = 200;

/// A run's last step and last tool call.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Activity {
    /// The last event of the run's own (not a side question).
    pub last_event: Option<StoredEvent>,
    /// The summary of its last tool call, if any.
    pub last_tool_call: Option<String>,
}

/// `run`'s activity, from the last events of its journal.
pub fn activity(store: &Store, run: &Run) -> Result<Activity, StoreError> {
    let from = Seq(run.last_event_seq.0.saturating_sub(TAIL));
    let recent = store.events(&run.id, from, usize::try_from(TAIL).unwrap_or(usize::MAX))?;
    Ok(Activity {
        last_event: recent
            .iter()
            .rev()
            .find(|e| !matches!(e.event, Some(Event::SideQuestion { .. })))
            .cloned(),
        last_tool_call: recent.iter().rev().find_map(|e| match &e.event {
            Some(Event::ToolCalled { summary, .. }) => Some(summary.clone()),
            _ => None,
        }),
    })
}

//! What a tool gives back: to the model ([`ToolOutput`]), and to the loop's event journal
//! ([`ToolCallOutcome`]'s one-line summary).

use std::time::Duration;

use serde::Serialize;

/// What a tool call returns to the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolOutput {
    /// The text the model reads.
    pub content: String,
    /// Whether the call failed (bad arguments, missing file, non-zero exit, …). The model sees
    /// the flag and the message and can try again; the turn goes on.
    pub is_error: bool,
    /// A few words about the result for the one-line call summary in logs (`exit 0, 1.2 s`,
    /// `3 matches`). Never sent to the model.
    #[serde(skip)]
    pub note: Option<String>,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
            note: None,
        }
    }

    /// A failed result, with a message for the model.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
            note: None,
        }
    }

    /// The same output, with a note for the call summary.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// A finished call through [`ToolSet::call`](crate::ToolSet::call): the output for the model,
/// and a summary for the loop's events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCallOutcome {
    /// What goes back to the model.
    pub output: ToolOutput,
    /// One short line for humans and the event journal (`bash: cargo test (exit 0, 1.2 s)`).
    pub summary: String,
    /// How long the call took.
    pub elapsed: Duration,
}

//! What the journal keeps of one agent turn: its tool calls as they happen (counted, for the
//! goal loop's spin guard), the permission decisions of an agent that asks, a turn that started
//! fresh instead of continuing the agent's session (and why), then a one-line summary of its
//! final message or its error chain.

use std::sync::atomic::{AtomicU32, Ordering};

use tether_agent::{AgentEvent, TurnObserver};
use tether_store::{Event, Journal, RunId};

/// Records the executor's tool calls as journal events and counts them.
pub struct Recorder<'a> {
    journal: &'a Journal,
    run: &'a RunId,
    n: u32,
    calls: AtomicU32,
}

impl<'a> Recorder<'a> {
    /// A recorder for iteration `n` of `run`.
    pub fn new(journal: &'a Journal, run: &'a RunId, n: u32) -> Self {
        Recorder {
            journal,
            run,
            n,
            calls: AtomicU32::new(0),
        }
    }

    /// How many tool calls the iteration made so far.
    pub fn tool_calls(&self) -> u32 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl TurnObserver for Recorder<'_> {
    fn event(&self, event: AgentEvent) {
        let e = match event {
            AgentEvent::ToolCall { tool, summary, .. } => {
                self.calls.fetch_add(1, Ordering::Relaxed);
                Event::ToolCalled {
                    n: self.n,
                    tool,
                    summary,
                }
            }
            AgentEvent::Permission {
                tool,
                summary,
                allowed,
                by,
                decision,
            } => Event::PermissionDecided {
                n: self.n,
                tool,
                summary,
                allowed,
                by,
                decision,
            },
            AgentEvent::FreshContext { reason } => {
                tracing::info!(
                    iteration = self.n,
                    "a fresh context instead of the agent's session: {reason}"
                );
                Event::FreshContext { n: self.n, reason }
            }
            AgentEvent::ModelCall { .. } => return,
        };
        if let Err(err) = self.journal.append(self.run, &e) {
            tracing::warn!(error = %err, "could not record what the agent did");
        }
    }
}

/// The first line of the final message, shortened, for the iteration's journal entry.
pub fn summary(message: &str) -> String {
    let line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let mut s: String = line.chars().take(200).collect();
    if line.chars().count() > 200 {
        s.push('…');
    }
    s
}

/// Every error in a chain, joined like anyhow's `{:#}`.
pub fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

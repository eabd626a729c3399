//! An answer given while nobody waits for the question: who tells the notice sinks.
//!
//! The rule: the process waiting for a question tells every channel it offered the question on
//! who answered (the broker does, whichever channel the answer came from — `tether answer` in
//! another shell included), and waits for that to be delivered before it exits. `tether answer`
//! only records the answer and wakes that process.
//!
//! When nobody waits any more — the asker stopped waiting: an MCP client gave up, `tether mcp`
//! ended, `tether ask` was interrupted — no process would tell them, so the process recording
//! the answer tells the notice sinks (ntfy, webhook, email, command) the question had been
//! handed to, here. Each sink records in the store that it was told, so a waiter coming back at
//! that very moment does not tell it a second time.

use std::sync::Arc;
use std::time::Duration;

use tether_config::{Config, Workspace};
use tether_store::{Journal, Question};

use crate::broker::Answer;
use crate::channels::DynChannel;
use crate::sinks::SinkBuilder;

/// The notice sinks of one process, telling them an answer nobody was waiting for.
pub struct LateAnswer {
    sinks: Vec<Arc<dyn DynChannel>>,
}

impl LateAnswer {
    /// The sinks `config` turns on for the workspace `ws` (listed in `human.channels`, or named
    /// by `human.escalate_to`), recording in `journal`.
    pub fn from_config(config: &Config, ws: &Workspace, journal: &Journal) -> Self {
        LateAnswer {
            sinks: SinkBuilder::new(config, ws, journal).all(),
        }
    }

    /// Tells every sink `question` was handed to that `answer` answered it — except the one it
    /// came from (an ntfy button) — and waits, at most `grace`, for that to be delivered.
    /// Whether it all was.
    pub async fn tell(&self, question: &Question, answer: &Answer, grace: Duration) -> bool {
        let told = self
            .sinks
            .iter()
            .filter(|s| s.name() != answer.channel)
            .map(|s| s.answered_elsewhere(question, answer));
        let delivered = async {
            futures_util::future::join_all(told).await;
            futures_util::future::join_all(self.sinks.iter().map(|s| s.flush())).await;
        };
        crate::desk::within(grace, delivered).await
    }
}

//! An agent CLI's turn that may take up the session of its last turn
//! ([`Context::Continue`](crate::Context::Continue)), the same way for every CLI: its
//! [`Resume`](super::Resume) says how the CLI is asked to, and which line of its stream names
//! the session a turn ran in ([`SessionTap`], beside the CLI's own parser).
//!
//! A turn asked to continue resumes the session its last completed turn named, with the shorter
//! prompt. When the CLI cannot take it up — the turn fails before its stream names a session
//! (the session is gone, the CLI refused it) — the same turn runs again at once from a fresh
//! context with the whole prompt, and the run's record says why; the session is never tried
//! again. What is left for the next turn is [`Kept`]'s to say.

use std::future::Future;

use serde_json::Value;

use super::Cli;
use super::lines::LineParser;
use crate::executor::{AgentEvent, ExecError, Turn, TurnOutcome};
use crate::session::{Kept, Start, chain};

/// A CLI's own stream parser, with the session its stream names noted on the way.
pub(crate) struct SessionTap<P> {
    /// The CLI's own parser, handed every line.
    pub(crate) inner: P,
    read: fn(&Value) -> Option<&str>,
    /// The first session the stream named.
    pub(crate) session: Option<String>,
}

impl<P> SessionTap<P> {
    /// `inner`, noting the session `read` finds in a line.
    pub(crate) fn new(inner: P, read: fn(&Value) -> Option<&str>) -> Self {
        SessionTap {
            inner,
            read,
            session: None,
        }
    }
}

impl<P: LineParser> LineParser for SessionTap<P> {
    fn line(&mut self, value: &Value) {
        if self.session.is_none() {
            self.session = (self.read)(value).map(str::to_owned);
        }
        self.inner.line(value);
    }
}

/// The session a turn takes up, and what it tells it.
#[derive(Debug, Clone)]
pub(crate) struct Resuming {
    /// The session's id, as the CLI named it.
    pub(crate) id: String,
    /// The prompt of the continuing turn.
    pub(crate) prompt: String,
}

/// One run of a turn's process: how the turn went, and the session its stream named.
pub(crate) struct Attempt {
    /// The turn's outcome.
    pub(crate) result: Result<TurnOutcome, ExecError>,
    /// The session it ran in, if the stream named one.
    pub(crate) session: Option<String>,
}

impl Cli {
    /// Runs `turn` by `attempt` (given the session to resume, or `None` for a fresh context),
    /// continuing the session `kept` holds when the turn asks to, and runs it again from a fresh
    /// context when the session could not be taken up.
    pub(crate) async fn continuing<F, Fut>(
        &self,
        kept: &Kept<String>,
        turn: &Turn<'_>,
        attempt: F,
    ) -> Result<TurnOutcome, ExecError>
    where
        F: Fn(Option<Resuming>) -> Fut,
        Fut: Future<Output = Attempt>,
    {
        let fresh = |why: String| {
            turn.observer
                .event(AgentEvent::FreshContext { reason: why });
        };
        let resuming = match kept.start(&turn.request.context) {
            Start::Continue { session, prompt } => Some(Resuming {
                id: session,
                prompt,
            }),
            Start::Fresh { why } => {
                if let Some(why) = why {
                    fresh(why);
                }
                None
            }
        };
        let resumed = resuming.as_ref().map(|r| r.id.clone());
        let mut done = attempt(resuming).await;
        if let Some(id) = resumed
            && done.session.is_none()
            && let Err(e) = &done.result
            && not_taken_up(e)
        {
            let title = self.agent().title;
            fresh(format!(
                "{title} could not resume its session {id} ({})",
                chain(e)
            ));
            done = attempt(None).await;
        }
        let title = self.agent().title;
        kept.settle(&done.result, done.session, || {
            format!("{title} named no session in its last turn")
        });
        done.result
    }
}

/// Whether a turn that resumed a session and failed before naming it failed because the session
/// was not taken up: not a cancel, a usage limit (the turn runs again as it is) or a CLI that
/// cannot run at all (a fresh context would not help).
fn not_taken_up(e: &ExecError) -> bool {
    !matches!(
        e,
        ExecError::Cancelled | ExecError::UsageLimit(_) | ExecError::Setup(_)
    )
}

//! What an executor keeps of its last turn for a turn that continues it
//! ([`Context::Continue`]): an agent CLI's session id, the built-in agent's conversation, an ACP
//! agent's session.
//!
//! Only a turn that completed leaves something to continue. A turn that failed leaves the reason
//! instead, so the next turn starts from a fresh context and says why rather than taking the
//! same session up again: a session that cannot be continued is never tried twice. A turn that
//! was cancelled, or hit a usage limit (it runs again), changes nothing.

use std::sync::{Mutex, PoisonError};

use crate::executor::{Context, ExecError};

/// What the last turn left for the next.
#[derive(Debug)]
enum Left<T> {
    /// No turn yet (this process has not run the agent).
    Nothing,
    /// A session to continue.
    Session(T),
    /// Nothing to continue, and why.
    Dropped(String),
}

/// Where a turn starts.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Start<T> {
    /// From a fresh context with the whole prompt; `why` when the turn was asked to continue
    /// and could not, for the run's record.
    Fresh {
        /// Why it could not continue.
        why: Option<String>,
    },
    /// Continuing `session` with `prompt`.
    Continue {
        /// The session of the last turn.
        session: T,
        /// What is new since that turn.
        prompt: String,
    },
}

/// The session an executor's turns continue.
#[derive(Debug)]
pub(crate) struct Kept<T> {
    left: Mutex<Left<T>>,
}

impl<T> Default for Kept<T> {
    fn default() -> Self {
        Kept {
            left: Mutex::new(Left::Nothing),
        }
    }
}

impl<T: Clone> Kept<T> {
    /// Where a turn asking for `context` starts.
    pub(crate) fn start(&self, context: &Context) -> Start<T> {
        let Context::Continue(prompt) = context else {
            return Start::Fresh { why: None };
        };
        match &*self.left.lock().unwrap_or_else(PoisonError::into_inner) {
            Left::Nothing => Start::Fresh { why: None },
            Left::Dropped(why) => Start::Fresh {
                why: Some(why.clone()),
            },
            Left::Session(session) => Start::Continue {
                session: session.clone(),
                prompt: prompt.clone(),
            },
        }
    }

    /// A turn completed in `session`: the next may continue it.
    pub(crate) fn keep(&self, session: T) {
        *self.left.lock().unwrap_or_else(PoisonError::into_inner) = Left::Session(session);
    }

    /// Nothing is left to continue, because of `why`.
    pub(crate) fn drop_with(&self, why: String) {
        *self.left.lock().unwrap_or_else(PoisonError::into_inner) = Left::Dropped(why);
    }

    /// A turn ended with `result`: a completed one leaves `session` (when it has one; else
    /// `missing` says why not), a failed one its error; a cancelled one, or one that hit a usage
    /// limit, changes nothing.
    pub(crate) fn settle<O>(
        &self,
        result: &Result<O, ExecError>,
        session: Option<T>,
        missing: impl FnOnce() -> String,
    ) {
        match result {
            Ok(_) => match session {
                Some(session) => self.keep(session),
                None => self.drop_with(missing()),
            },
            Err(ExecError::Cancelled | ExecError::UsageLimit(_)) => {}
            Err(e) => self.drop_with(format!("the agent's last turn failed ({})", chain(e))),
        }
    }
}

/// `e` with its sources, each after a colon.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn continuing() -> Context {
        Context::Continue("what is new".into())
    }

    #[test]
    fn a_fresh_request_starts_fresh_whatever_was_kept() {
        let kept = Kept::default();
        kept.keep("s-1".to_owned());
        assert_eq!(kept.start(&Context::Fresh), Start::Fresh { why: None });
    }

    #[test]
    fn the_first_turn_starts_fresh_without_a_word_then_the_next_continues() {
        let kept = Kept::default();
        assert_eq!(kept.start(&continuing()), Start::Fresh { why: None });
        kept.settle::<()>(&Ok(()), Some("s-1".to_owned()), String::new);
        assert_eq!(
            kept.start(&continuing()),
            Start::Continue {
                session: "s-1".to_owned(),
                prompt: "what is new".into()
            }
        );
    }

    #[test]
    fn a_failed_turn_leaves_its_error_and_the_next_starts_fresh_saying_so() {
        let kept = Kept::default();
        kept.keep("s-1".to_owned());
        let failed: Result<(), ExecError> = Err(ExecError::Model("overloaded".into()));
        kept.settle(&failed, Some("s-1".to_owned()), String::new);
        let Start::Fresh { why: Some(why) } = kept.start(&continuing()) else {
            panic!("a failed session is continued");
        };
        assert_eq!(
            why,
            "the agent's last turn failed (the agent's model failed: overloaded)"
        );
    }

    #[test]
    fn a_cancelled_turn_changes_nothing_and_a_sessionless_one_says_why() {
        let kept = Kept::default();
        kept.keep("s-1".to_owned());
        kept.settle::<()>(&Err(ExecError::Cancelled), None, String::new);
        assert!(matches!(kept.start(&continuing()), Start::Continue { .. }));
        kept.settle::<()>(&Ok(()), None, || "no session named".to_owned());
        assert_eq!(
            kept.start(&continuing()),
            Start::Fresh {
                why: Some("no session named".to_owned())
            }
        );
    }
}

//! Notices: what a run tells the people following it without being asked — it finished,
//! paused for them, failed, signed a goal off, or keeps being rejected — in the same places its
//! questions go (the terminal, the chat channels), short, with the command to go on where there
//! is one.
//!
//! A notice is a value here; which kinds each channel gets is `[notify]` in `tether.toml`, and
//! each [`crate::Channel`] shows it in its own way ([`crate::Channel::notice`]).

use tether_config::NoticeKind;
use tether_store::RunId;

/// One notice about a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What happened.
    pub kind: NoticeKind,
    /// The run it is about.
    pub run_id: RunId,
    /// One or two short sentences for a person, e.g. "Run r-7k2m9x paused: the judge is
    /// unavailable."
    pub text: String,
    /// The command that continues the run, when one applies (`tether resume r-7k2m9x`).
    pub resume: Option<String>,
}

impl Notice {
    /// The notice as one plain text: the text, then the command on its own line.
    pub fn plain(&self) -> String {
        match &self.resume {
            Some(command) => format!("{}\nTo continue: {command}", self.text),
            None => self.text.clone(),
        }
    }
}

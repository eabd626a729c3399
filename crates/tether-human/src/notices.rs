//! Notices: what a run tells the people following it without being asked — it finished,
//! paused for them, failed, signed a goal off, or keeps being rejected — in the same places its
//! questions go (the terminal, the chat channels), short, with the command to go on where there
//! is one. A person's `tether goal complete` signs a goal off outside any run: its notice
//! belongs to no run.
//!
//! A notice is a value here; which kinds each channel gets is `[notify]` in `tether.toml`, and
//! each [`crate::Channel`] shows it in its own way ([`crate::Channel::notice`]).

use tether_config::NoticeKind;
use tether_store::RunId;

/// One notice about a run (or, for a person's sign-off, about a goal outside any run).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// What happened.
    pub kind: NoticeKind,
    /// The run it is about; `None` for a goal a person signed off (`tether goal complete`).
    pub run_id: Option<RunId>,
    /// One or two short sentences for a person, e.g. "Run r-7k2m9x paused: the judge is
    /// unavailable."
    pub text: String,
    /// The command that continues the run, when one applies (`tether resume r-7k2m9x`).
    pub resume: Option<String>,
}

impl Notice {
    /// A person signed goal `goal` off (`tether goal complete`) as `by`: a `signed_off` notice
    /// of no run.
    pub fn signed_off_by_person(goal: &str, by: &str) -> Self {
        Notice {
            kind: NoticeKind::SignedOff,
            run_id: None,
            text: format!(
                "Goal {} was signed off by {}.",
                crate::visible::one_line(goal),
                crate::visible::one_line(by)
            ),
            resume: None,
        }
    }

    /// Schedule `name` paused itself: `failures` fires in a row did not end done, the last
    /// ending as `last` says. A notice of no run, carrying the command that resumes it.
    pub fn schedule_paused(name: &str, failures: u32, last: &str) -> Self {
        let name = crate::visible::one_line(name);
        Notice {
            kind: NoticeKind::SchedulePaused,
            run_id: None,
            text: format!(
                "Schedule {name} paused itself after {failures} failed runs in a row. Last: {}",
                crate::visible::one_line(last)
            ),
            resume: Some(format!("tether schedule resume {name}")),
        }
    }

    /// Schedule `name` was due at `due` and has not fired for `late` (both as a person reads
    /// them): a notice of no run.
    pub fn overdue(name: &str, due: &str, late: &str) -> Self {
        Notice {
            kind: NoticeKind::Overdue,
            run_id: None,
            text: format!(
                "Schedule {} is overdue: it was due at {due} and has not fired for {late}.",
                crate::visible::one_line(name)
            ),
            resume: None,
        }
    }

    /// The notice as one plain text: the text, then the command on its own line.
    pub fn plain(&self) -> String {
        match &self.resume {
            Some(command) => format!("{}\nTo continue: {command}", self.text),
            None => self.text.clone(),
        }
    }
}

/// Which notices go where: each chat channel's or sink's own `notify` list, else `[notify] on` (which the
/// terminal and the desktop follow too), and the desktop notifier when there is one. The one
/// place the filter of `[notify]` is read.
#[derive(Debug, Clone, Default)]
pub struct NoticeRoutes {
    on: Vec<NoticeKind>,
    /// Channels (by [`crate::Channel::name`]) with a list of their own.
    own: Vec<(&'static str, Vec<NoticeKind>)>,
    desktop: Option<crate::desktop::Desktop>,
}

impl NoticeRoutes {
    /// The routes `[notify]` and each channel's own `notify` list describe (no desktop yet: see
    /// [`NoticeRoutes::with_desktop`]).
    pub fn from_config(config: &tether_config::Config) -> Self {
        let own = crate::registry::CHANNELS
            .iter()
            .filter_map(|def| Some((def.kind().as_str(), (def.notices)(config)?)))
            .collect();
        NoticeRoutes {
            on: config.notify.on.clone(),
            own,
            desktop: None,
        }
    }

    /// Shows the notices `[notify] on` turns on as desktop notifications too, with `desktop`.
    pub fn with_desktop(mut self, desktop: Option<crate::desktop::Desktop>) -> Self {
        self.desktop = desktop;
        self
    }

    /// Whether the channel named `channel` gets notices of `kind`.
    pub fn wants(&self, channel: &str, kind: NoticeKind) -> bool {
        let list = self
            .own
            .iter()
            .find(|(name, _)| *name == channel)
            .map_or(&self.on, |(_, list)| list);
        list.contains(&kind)
    }

    /// The desktop notifier, if `kind` is for it.
    pub fn desktop(&self, kind: NoticeKind) -> Option<&crate::desktop::Desktop> {
        self.desktop.as_ref().filter(|_| self.on.contains(&kind))
    }
}

#[cfg(test)]
mod tests {
    use super::Notice;

    #[test]
    fn a_schedules_notices_say_what_happened_and_how_to_go_on() {
        let texts = [
            Notice::schedule_paused(
                "nightly",
                3,
                "run r-7k2m9x3tq0w2 failed: the model endpoint answered 500",
            ),
            Notice::overdue("nightly", "2026-11-29 06:00:00 UTC", "12m"),
        ]
        .map(|n| format!("{}: {}", n.kind.as_str(), n.plain()));
        insta::assert_snapshot!(texts.join("\n===\n"));
    }
}

//! What a run tells its channels unprompted (`[notify]`), and the kinds of notice a channel's
//! own `notify = [...]` lists: their types, defaults and schema walk.

use crate::reader::{Reader, Table};

/// Something a run tells its channels without being asked (`[notify] on`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NoticeKind {
    /// The run finished: every goal signed off, or the Ralph loop completed.
    Done,
    /// The run paused for a person (a budget spent, blocked, the judge unavailable, the spin
    /// guard); the notice carries the `tether resume` command.
    Paused,
    /// The run stopped on a failure (failed iterations in a row, an error).
    Failed,
    /// A goal was signed off.
    SignedOff,
    /// A goal's sign-off was rejected `[notify] rejected_after` times in a row.
    Rejected,
    /// A schedule paused itself: its runs failed `[schedule] pause_after_failures` times in a
    /// row; the notice carries `tether schedule resume <name>`.
    SchedulePaused,
    /// A schedule has not fired within its interval and `[schedule] overdue_grace_secs`.
    Overdue,
}

impl NoticeKind {
    /// Every kind with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, NoticeKind); 7] = [
        ("done", NoticeKind::Done),
        ("paused", NoticeKind::Paused),
        ("failed", NoticeKind::Failed),
        ("signed_off", NoticeKind::SignedOff),
        ("rejected", NoticeKind::Rejected),
        ("schedule_paused", NoticeKind::SchedulePaused),
        ("overdue", NoticeKind::Overdue),
    ];

    /// The spelling in `tether.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Done => "done",
            NoticeKind::Paused => "paused",
            NoticeKind::Failed => "failed",
            NoticeKind::SignedOff => "signed_off",
            NoticeKind::Rejected => "rejected",
            NoticeKind::SchedulePaused => "schedule_paused",
            NoticeKind::Overdue => "overdue",
        }
    }
}

/// What a run tells its channels unprompted (`[notify]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotifyConfig {
    /// The notices every channel gets unless its own table lists others (its `notify = [...]`,
    /// read with [`crate::TableReader::notices`]). Default: `done`, `paused` and the
    /// schedules' `schedule_paused` and `overdue` (the rest is chat noise unless asked for).
    pub on: Vec<NoticeKind>,
    /// Whether the terminal user also gets a desktop notification (freedesktop, where a
    /// notification service is running).
    pub desktop: bool,
    /// Rejections of one goal in a row that make a `rejected` notice.
    pub rejected_after: u32,
}

impl NotifyConfig {
    /// Default for `notify.rejected_after`.
    pub const DEFAULT_REJECTED_AFTER: u32 = 3;
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            on: vec![
                NoticeKind::Done,
                NoticeKind::Paused,
                NoticeKind::SchedulePaused,
                NoticeKind::Overdue,
            ],
            desktop: true,
            rejected_after: Self::DEFAULT_REJECTED_AFTER,
        }
    }
}

/// `(min, max)` of `notify.rejected_after`.
const REJECTED_AFTER: (i64, i64) = (1, 100);

/// Reads `[notify]`.
pub(crate) fn read_notify(r: &mut Reader, t: &Table, out: &mut NotifyConfig) {
    r.unknown_keys(t, crate::keys::NOTIFY, None);
    if let Some(on) = r.choice_list(t, "on", &NoticeKind::CHOICES) {
        out.on = on;
    }
    if let Some(desktop) = r.bool(t, "desktop") {
        out.desktop = desktop;
    }
    if let Some(n) = r.int(t, "rejected_after", REJECTED_AFTER.0, REJECTED_AFTER.1) {
        out.rejected_after = n;
    }
}

//! How the scheduler keeps goals on a schedule (`[schedule]`): the failures in a row that pause
//! a schedule, the grace before a late schedule is overdue, and how often it looks.

use crate::reader::{Reader, Table};

/// How `tether schedule run` keeps schedules (`[schedule]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScheduleConfig {
    /// Fires in a row that do not end done before the schedule pauses itself (and a notice
    /// says so); 0: never.
    pub pause_after_failures: u32,
    /// How long past its due time a schedule that has not fired is overdue (and a notice says
    /// so, once per overdue spell), in seconds.
    pub overdue_grace_secs: u64,
    /// How often the scheduler looks at the schedules at the most (it also wakes when one is
    /// due), in seconds.
    pub poll_secs: u64,
}

impl ScheduleConfig {
    /// Default for `schedule.pause_after_failures`.
    pub const DEFAULT_PAUSE_AFTER_FAILURES: u32 = 3;
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        ScheduleConfig {
            pause_after_failures: Self::DEFAULT_PAUSE_AFTER_FAILURES,
            overdue_grace_secs: 300,
            poll_secs: 10,
        }
    }
}

/// Reads `[schedule]`.
pub(crate) fn read_schedule(r: &mut Reader, t: &Table, out: &mut ScheduleConfig) {
    r.unknown_keys(t, crate::keys::SCHEDULE, None);
    if let Some(n) = r.int(t, "pause_after_failures", 0, 100) {
        out.pause_after_failures = n;
    }
    if let Some(n) = r.int(t, "overdue_grace_secs", 1, 7 * 86_400) {
        out.overdue_grace_secs = n;
    }
    if let Some(n) = r.int(t, "poll_secs", 1, 3_600) {
        out.poll_secs = n;
    }
}

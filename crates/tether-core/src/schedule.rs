//! When a schedule fires (`tether schedule`): its timing — every so long, or a cron expression
//! read in UTC — and what a scheduler does with it at a given time. Pure: every answer is
//! computed from the time it is handed (a clock the caller owns, so tests run on a paused one).
//!
//! A schedule is due at its timing's next time after it last fired (or after it was added,
//! before its first fire). A scheduler looking at it then fires it unless a fire of it still
//! goes on; the fire is recorded at the time it happened, so the next is due a whole interval
//! (or the cron's next time) after it: however many times were missed while no scheduler ran,
//! they give **one** catch-up fire. A schedule still not fired a grace past its due time is
//! **overdue**: people are told once per overdue spell (the next fire ends the spell). A
//! schedule a person resumed is due at once when one of its times passed while it was paused,
//! but late only a grace past its resume: its pause was the person's, not a fault to report.

use chrono::{DateTime, Utc};

/// The most missed times counted (the rest is said as "at least").
pub const MAX_MISSED: u64 = 10_000;

/// The longest interval of an `--every` schedule: 366 days (a longer wait is a cron
/// expression's, such as a yearly one).
pub const MAX_EVERY_SECS: u64 = 366 * 86_400;

/// Why a timing cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimingError {
    /// `--every` is not a duration, or is zero.
    #[error("`{text}` is not a duration of at least a second (such as 45s, 90m, 2h, 1h30m or 2d)")]
    Duration {
        /// What was given.
        text: String,
    },
    /// `--every` is longer than [`MAX_EVERY_SECS`].
    #[error(
        "`{text}` is longer than the longest interval, 366d (for a time once a year, give \
         --cron, such as `0 9 1 1 *`)"
    )]
    TooLong {
        /// What was given.
        text: String,
    },
    /// The timing names no time after now: a cron expression's day no month has (`30 2`), or
    /// a year gone by.
    #[error(
        "`{text}` names no time to come (a day no month has, such as the 30th of February, or \
         a year gone by)"
    )]
    NoTimeToCome {
        /// What was given.
        text: String,
    },
    /// `--cron` is not a cron expression.
    #[error(
        "`{text}` is not a cron expression (five fields: minute hour day-of-month month \
         day-of-week, such as `0 9 * * 1-5`): {reason}"
    )]
    Cron {
        /// What was given.
        text: String,
        /// What the cron parser said.
        reason: String,
    },
    /// A stored timing this build cannot read.
    #[error("`{text}` is not a schedule's timing (`every <n>s` or `cron <expression>`)")]
    Stored {
        /// What was stored.
        text: String,
    },
}

/// When a schedule fires.
#[derive(Debug, Clone)]
pub enum Timing {
    /// Every so many seconds (at least one).
    Every {
        /// The interval.
        secs: u64,
    },
    /// At the times a cron expression names, in UTC.
    Cron {
        /// The expression as given.
        text: String,
        /// The expression, parsed.
        cron: Box<croner::Cron>,
    },
}

impl Timing {
    /// Every `text` (`45s`, `90m`, `2h`, `1h30m`, `2d`), at most [`MAX_EVERY_SECS`].
    pub fn every(text: &str) -> Result<Timing, TimingError> {
        match tether_budget::parse_duration(text) {
            Ok(secs) if secs > MAX_EVERY_SECS => Err(TimingError::TooLong {
                text: text.to_owned(),
            }),
            Ok(secs) if secs > 0 => Ok(Timing::Every { secs }),
            _ => Err(TimingError::Duration {
                text: text.to_owned(),
            }),
        }
    }

    /// This timing, when it names a time after `at_ms` (ms since the Unix epoch); refused
    /// otherwise, as a schedule that would never fire.
    pub fn to_come(self, at_ms: i64) -> Result<Timing, TimingError> {
        match self.next_after(at_ms) {
            Some(_) => Ok(self),
            None => Err(TimingError::NoTimeToCome {
                text: match &self {
                    Timing::Every { secs } => tether_budget::format_duration(*secs),
                    Timing::Cron { text, .. } => text.clone(),
                },
            }),
        }
    }

    /// At the times the cron expression `text` names (five fields, or six with seconds first),
    /// in UTC.
    pub fn cron(text: &str) -> Result<Timing, TimingError> {
        let text = text.trim();
        let cron: croner::Cron =
            text.parse()
                .map_err(|e: croner::errors::CronError| TimingError::Cron {
                    text: text.to_owned(),
                    reason: e.to_string(),
                })?;
        Ok(Timing::Cron {
            text: text.to_owned(),
            cron: Box::new(cron),
        })
    }

    /// The timing as the store keeps it ([`Timing::stored`]).
    pub fn read(stored: &str) -> Result<Timing, TimingError> {
        let bad = || TimingError::Stored {
            text: stored.to_owned(),
        };
        if let Some(secs) = stored
            .strip_prefix("every ")
            .and_then(|s| s.strip_suffix('s'))
        {
            let secs: u64 = secs.parse().map_err(|_| bad())?;
            return if secs > 0 {
                Ok(Timing::Every { secs })
            } else {
                Err(bad())
            };
        }
        match stored.strip_prefix("cron ") {
            Some(expr) => Timing::cron(expr).map_err(|_| bad()),
            None => Err(bad()),
        }
    }

    /// How the store keeps it: `every 3600s`, `cron 0 9 * * 1-5`.
    pub fn stored(&self) -> String {
        match self {
            Timing::Every { secs } => format!("every {secs}s"),
            Timing::Cron { text, .. } => format!("cron {text}"),
        }
    }

    /// For people: `every 1h`, `cron 0 9 * * 1-5 (UTC)`.
    pub fn describe(&self) -> String {
        match self {
            Timing::Every { secs } => format!("every {}", tether_budget::format_duration(*secs)),
            Timing::Cron { text, .. } => format!("cron {text} (UTC)"),
        }
    }

    /// Its first time strictly after `at_ms` (ms since the Unix epoch); `None` when there is
    /// none (a cron expression naming no time to come).
    pub fn next_after(&self, at_ms: i64) -> Option<i64> {
        match self {
            Timing::Every { secs } => {
                let step = i64::try_from(secs.saturating_mul(1000)).ok()?;
                at_ms.checked_add(step)
            }
            Timing::Cron { cron, .. } => {
                let at = DateTime::<Utc>::from_timestamp_millis(at_ms)?;
                let next = cron.find_next_occurrence(&at, false).ok()?;
                Some(next.timestamp_millis())
            }
        }
    }

    /// How many of its times fall in `[from_ms, to_ms]` (at most [`MAX_MISSED`]); `from_ms`
    /// is one of them.
    pub fn times_in(&self, from_ms: i64, to_ms: i64) -> u64 {
        if to_ms < from_ms {
            return 0;
        }
        if let Timing::Every { secs } = self {
            let step = i64::try_from(secs.saturating_mul(1000)).unwrap_or(i64::MAX);
            let n = (to_ms - from_ms) / step.max(1) + 1;
            return u64::try_from(n).unwrap_or(0).min(MAX_MISSED);
        }
        let (mut n, mut at) = (1, from_ms);
        while n < MAX_MISSED {
            match self.next_after(at) {
                Some(next) if next <= to_ms => {
                    n += 1;
                    at = next;
                }
                _ => break,
            }
        }
        n
    }
}

/// Where a schedule stands, as a scheduler read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Standing {
    /// When it was added.
    pub created_at_ms: i64,
    /// When it last fired, if ever.
    pub last_fire_ms: Option<i64>,
    /// Whether it is paused.
    pub paused: bool,
    /// Whether a fire of it goes on.
    pub firing: bool,
    /// Whether people were told it is overdue in this spell.
    pub overdue_told: bool,
    /// When a person last resumed it, if ever: it is late no sooner than a grace after that.
    pub resumed_at_ms: Option<i64>,
}

/// What a scheduler does with a schedule at a given time ([`look`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Look {
    /// When it is (or was) due; `None` when paused or its timing names no time to come.
    pub due_ms: Option<i64>,
    /// Fire it now: it is due and no fire of it goes on (how many of its times the fire
    /// stands for is [`missed`]'s, asked once it is claimed).
    pub fire: bool,
    /// It is late past its grace (overdue), whether or not people were told.
    pub late: bool,
    /// Tell people it is overdue now: it is late and they were not told in this spell.
    pub tell_overdue: bool,
    /// When to look at it again at the latest (`None`: nothing will change by itself).
    pub wake_ms: Option<i64>,
}

/// What a scheduler does with a schedule of `timing` standing as `s` at `now_ms`, late past
/// `grace_ms` being overdue.
pub fn look(timing: &Timing, s: &Standing, now_ms: i64, grace_ms: i64) -> Look {
    let idle = Look {
        due_ms: None,
        fire: false,
        late: false,
        tell_overdue: false,
        wake_ms: None,
    };
    if s.paused {
        return idle;
    }
    let anchor = s.last_fire_ms.unwrap_or(s.created_at_ms);
    let Some(due) = timing.next_after(anchor) else {
        return idle;
    };
    // Late a grace past its due time, or past its resume when that came later.
    let overdue_at = due
        .max(s.resumed_at_ms.unwrap_or(due))
        .saturating_add(grace_ms.max(0));
    if now_ms < due {
        return Look {
            due_ms: Some(due),
            wake_ms: Some(due),
            ..idle
        };
    }
    let late = now_ms >= overdue_at;
    Look {
        due_ms: Some(due),
        fire: !s.firing,
        late,
        tell_overdue: late && !s.overdue_told,
        // Firing now moves it on; while a fire goes on, it is overdue at its grace.
        wake_ms: (s.firing && !late).then_some(overdue_at),
    }
}

/// How many of `timing`'s times a fire at `now_ms` of a schedule due at `due_ms` stands for
/// (1: only the one due; more: one catch-up fire for them all; at most [`MAX_MISSED`]). Counting
/// them walks a cron expression time by time, so a scheduler asks only for a fire it claimed.
pub fn missed(timing: &Timing, due_ms: i64, now_ms: i64) -> u64 {
    timing.times_in(due_ms, now_ms)
}

/// `at_ms` for people: `2026-11-29 06:00:00 UTC`.
pub fn when(at_ms: i64) -> String {
    DateTime::<Utc>::from_timestamp_millis(at_ms).map_or_else(
        || format!("{at_ms} ms"),
        |t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
    )
}

/// `ms` for people, short: `45s`, `1h 30m`.
pub fn span(ms: i64) -> String {
    tether_budget::format_duration(u64::try_from(ms.max(0) / 1000).unwrap_or(0))
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;

//! The schedule's rules on a paused clock: every time is handed in, none is read.

use proptest::prelude::*;

use super::{Look, Standing, Timing, TimingError, look, missed, when};

const SEC: i64 = 1000;
const MIN: i64 = 60 * SEC;
/// 2026-11-29 06:00:00 UTC.
const T0: i64 = 1_795_932_000_000;

fn fresh(created_at_ms: i64) -> Standing {
    Standing {
        created_at_ms,
        last_fire_ms: None,
        paused: false,
        firing: false,
        overdue_told: false,
        resumed_at_ms: None,
    }
}

#[test]
fn durations_and_cron_expressions_are_read_and_stored_back() {
    assert!(matches!(
        Timing::every("1h30m"),
        Ok(Timing::Every { secs: 5400 })
    ));
    assert!(matches!(
        Timing::every("0s"),
        Err(TimingError::Duration { .. })
    ));
    assert!(matches!(
        Timing::every("soon"),
        Err(TimingError::Duration { .. })
    ));
    let cron = Timing::cron("0 9 * * 1-5").unwrap();
    assert_eq!(cron.stored(), "cron 0 9 * * 1-5");
    assert_eq!(cron.describe(), "cron 0 9 * * 1-5 (UTC)");
    assert!(matches!(
        Timing::cron("61 * * * *"),
        Err(TimingError::Cron { .. })
    ));
    assert!(matches!(
        Timing::cron("often"),
        Err(TimingError::Cron { .. })
    ));
    for t in [Timing::every("90m").unwrap(), cron] {
        let back = Timing::read(&t.stored()).unwrap();
        assert_eq!(back.stored(), t.stored());
    }
    assert!(matches!(
        Timing::read("whenever"),
        Err(TimingError::Stored { .. })
    ));
    assert_eq!(Timing::every("90m").unwrap().describe(), "every 1h 30m");
}

#[test]
fn a_cron_fires_at_its_next_time_in_utc() {
    let cron = Timing::cron("30 9 * * *").unwrap();
    // 06:00 → 09:30 the same day; 09:30 itself → the next day's.
    let next = cron.next_after(T0).unwrap();
    assert_eq!(when(next), "2026-11-29 09:30:00 UTC");
    assert_eq!(
        when(cron.next_after(next).unwrap()),
        "2026-11-30 09:30:00 UTC"
    );
}

#[test]
fn a_new_schedule_waits_one_interval_then_fires() {
    let every = Timing::every("10m").unwrap();
    let s = fresh(T0);
    let before = look(&every, &s, T0 + 9 * MIN, MIN);
    assert_eq!(
        before,
        Look {
            due_ms: Some(T0 + 10 * MIN),
            fire: false,
            late: false,
            tell_overdue: false,
            wake_ms: Some(T0 + 10 * MIN),
        }
    );
    let due = look(&every, &s, T0 + 10 * MIN, MIN);
    assert!(due.fire && !due.late, "{due:?}");
    assert_eq!(missed(&every, due.due_ms.unwrap(), T0 + 10 * MIN), 1);
}

#[test]
fn fires_missed_while_no_scheduler_ran_give_one_catch_up() {
    let every = Timing::every("10m").unwrap();
    let mut s = fresh(T0);
    s.last_fire_ms = Some(T0);
    // Down for 55 minutes: five times missed, one fire, told it is overdue.
    let now = T0 + 55 * MIN;
    let back = look(&every, &s, now, MIN);
    assert!(back.fire && back.late && back.tell_overdue, "{back:?}");
    assert_eq!(missed(&every, back.due_ms.unwrap(), now), 5);
    // Fired at `now`, the next is a whole interval on: nothing more to catch up.
    s.last_fire_ms = Some(now);
    let after = look(&every, &s, now + SEC, MIN);
    assert!(!after.fire && !after.late);
    assert_eq!(after.due_ms, Some(now + 10 * MIN));
}

#[test]
fn overdue_is_told_once_per_spell_and_a_fire_ends_it() {
    let every = Timing::every("10m").unwrap();
    let mut s = fresh(T0);
    s.firing = true; // the last fire still goes on
    let due = look(&every, &s, T0 + 10 * MIN, 5 * MIN);
    assert!(!due.fire && !due.late, "{due:?}");
    assert_eq!(
        due.wake_ms,
        Some(T0 + 15 * MIN),
        "wakes when it would be overdue"
    );
    let late = look(&every, &s, T0 + 15 * MIN, 5 * MIN);
    assert!(late.late && late.tell_overdue && !late.fire);
    s.overdue_told = true;
    let still = look(&every, &s, T0 + 40 * MIN, 5 * MIN);
    assert!(still.late && !still.tell_overdue, "told once: {still:?}");
}

#[test]
fn a_paused_schedule_neither_fires_nor_is_overdue() {
    let every = Timing::every("1m").unwrap();
    let mut s = fresh(T0);
    s.paused = true;
    let paused = look(&every, &s, T0 + 600 * MIN, MIN);
    assert!(!paused.fire && !paused.late && paused.due_ms.is_none());
}

fn timing() -> impl Strategy<Value = Timing> {
    prop_oneof![
        (1u64..100_000).prop_map(|secs| Timing::Every { secs }),
        prop::sample::select(vec![
            "* * * * *",
            "*/5 * * * *",
            "0 9 * * 1-5",
            "30 2 1 * *",
            "0 0 29 2 *",
        ])
        .prop_map(|t| Timing::cron(t).unwrap()),
    ]
}

proptest! {
    #[test]
    fn the_next_time_is_always_later(t in timing(), at in 0i64..4_000_000_000_000) {
        let next = t.next_after(at).unwrap();
        prop_assert!(next > at);
        if let Timing::Every { secs } = t {
            prop_assert_eq!(next - at, i64::try_from(secs).unwrap() * SEC);
        }
    }

    #[test]
    fn however_long_it_was_down_it_catches_up_once(
        t in timing(),
        last in 0i64..4_000_000_000_000,
        down in 0i64..(400 * 86_400 * SEC),
    ) {
        let mut s = fresh(last);
        s.last_fire_ms = Some(last);
        let now = last + down;
        let first = look(&t, &s, now, MIN);
        let due = first.due_ms.unwrap();
        prop_assert_eq!(first.fire, now >= due);
        if first.fire {
            prop_assert!(missed(&t, due, now) >= 1);
            s.last_fire_ms = Some(now);
            let again = look(&t, &s, now, MIN);
            prop_assert!(!again.fire, "one catch-up fire");
        } else {
            prop_assert_eq!(missed(&t, due, now), 0);
        }
    }

    /// A scheduler looking every `step` for a while fires about once per interval, never
    /// more: each fire is a whole interval after the one before.
    #[test]
    fn a_running_scheduler_fires_once_per_interval(
        secs in 1u64..600,
        step in 1i64..600_000,
        looks in 1usize..400,
    ) {
        let every = Timing::Every { secs };
        let interval = i64::try_from(secs).unwrap() * SEC;
        let mut s = fresh(T0);
        let mut fires = Vec::new();
        let mut now = T0;
        for _ in 0..looks {
            now += step;
            let l = look(&every, &s, now, interval);
            if l.fire {
                fires.push(now);
                s.last_fire_ms = Some(now);
            }
        }
        for pair in fires.windows(2) {
            prop_assert!(pair[1] - pair[0] >= interval);
        }
        let elapsed = now - T0;
        prop_assert!(i64::try_from(fires.len()).unwrap() <= elapsed / interval);
        // Late by a step at most each time.
        let at_least = elapsed / (interval + step) - 1;
        prop_assert!(i64::try_from(fires.len()).unwrap() >= at_least);
    }
}

#[test]
fn a_timing_that_names_no_time_to_come_is_refused() {
    for never in ["0 0 30 2 *", "0 0 31 4 *", "0 0 0 1 1 * 2020"] {
        let parsed = Timing::cron(never).unwrap();
        assert_eq!(parsed.next_after(T0), None, "{never}");
        assert!(
            matches!(
                Timing::cron(never).unwrap().to_come(T0),
                Err(TimingError::NoTimeToCome { ref text }) if text == never
            ),
            "{never}"
        );
    }
    let said = Timing::cron("0 0 30 2 *")
        .unwrap()
        .to_come(T0)
        .unwrap_err()
        .to_string();
    assert!(
        said.starts_with("`0 0 30 2 *` names no time to come"),
        "{said}"
    );
    // Honest timings come, however rare.
    for honest in ["0 9 * * 1-5", "0 0 29 2 *", "0 0 0 1 1 * 2099", "* * * * *"] {
        assert!(
            Timing::cron(honest).unwrap().to_come(T0).is_ok(),
            "{honest}"
        );
    }
    for every in ["1s", "1d", "366d", "8784h"] {
        assert!(Timing::every(every).unwrap().to_come(T0).is_ok(), "{every}");
    }
}

#[test]
fn an_interval_is_366_days_at_most() {
    assert!(matches!(
        Timing::every("366d"),
        Ok(Timing::Every { secs }) if secs == 366 * 86_400
    ));
    for long in ["367d", "366d1s", "300000000000d"] {
        assert!(
            matches!(Timing::every(long), Err(TimingError::TooLong { ref text }) if text == long),
            "{long}"
        );
    }
    let said = Timing::every("300000000000d").unwrap_err().to_string();
    assert!(
        said.starts_with("`300000000000d` is longer than the longest interval, 366d"),
        "{said}"
    );
}

#[test]
fn a_resumed_schedule_is_due_at_once_but_late_only_a_grace_after_its_resume() {
    let hourly = Timing::every("1h").unwrap();
    let grace = 5 * MIN;
    let mut s = fresh(T0);
    s.last_fire_ms = Some(T0);
    // Paused for a week, then resumed: its time passed meanwhile, so it fires at once.
    let resumed = T0 + 7 * 24 * 60 * MIN;
    s.resumed_at_ms = Some(resumed);
    let at_resume = look(&hourly, &s, resumed + SEC, grace);
    assert!(at_resume.fire, "{at_resume:?}");
    assert!(!at_resume.late && !at_resume.tell_overdue, "{at_resume:?}");
    // Not fired (its last run still works), it is late a grace after the resume.
    s.firing = true;
    let working = look(&hourly, &s, resumed + SEC, grace);
    assert_eq!(working.wake_ms, Some(resumed + grace));
    let before = look(&hourly, &s, resumed + grace - SEC, grace);
    assert!(!before.late, "{before:?}");
    let late = look(&hourly, &s, resumed + grace, grace);
    assert!(late.late && late.tell_overdue, "{late:?}");
    // A resume before its due time leaves its lateness as it was: a grace past the due time.
    let mut early = fresh(T0);
    early.last_fire_ms = Some(T0);
    early.resumed_at_ms = Some(T0 + 10 * MIN);
    let due = T0 + 60 * MIN;
    assert!(!look(&hourly, &early, due + grace - SEC, grace).late);
    assert!(look(&hourly, &early, due + grace, grace).late);
}

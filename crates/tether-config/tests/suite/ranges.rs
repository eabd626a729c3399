//! Every integer setting is checked at both ends of its range.

use super::{config, problem};

/// (table, key, min, max) of every integer setting; the allowed values are documented in the
/// template and the report.
const RANGES: &[(&str, &str, i64, i64)] = &[
    ("judge", "timeout_secs", 1, 86_400),
    ("loop", "max_iterations", 0, 20_000),
    ("loop", "spin_guard", 1, 100),
    ("loop", "oscillation_repeats", 2, 100),
    ("loop", "reminder_after", 1, 100),
    ("loop", "clean_end_reminders", 1, 100),
    ("loop", "verify_timeout_secs", 1, 86_400),
    ("loop", "max_consecutive_failures", 1, 100),
    ("human", "threshold", 0, 5),
    ("human", "timeout_secs", 1, 2_592_000),
];

const JUDGE: &str = "[judge]\napi = \"anthropic\"\nbase_url = \"http://h\"\nmodel = \"m\"\n";

fn text(table: &str, key: &str, value: i64) -> String {
    if table == "judge" {
        format!("{JUDGE}{key} = {value}\n")
    } else {
        format!("[{table}]\n{key} = {value}\n")
    }
}

fn line(table: &str) -> usize {
    if table == "judge" { 5 } else { 2 }
}

#[test]
fn values_at_both_ends_are_accepted() {
    for &(table, key, min, max) in RANGES {
        config(&text(table, key, min));
        config(&text(table, key, max));
    }
}

#[test]
fn values_just_outside_both_ends_are_rejected_naming_the_range() {
    for &(table, key, min, max) in RANGES {
        for bad in [min - 1, max + 1] {
            assert_eq!(
                problem(&text(table, key, bad)),
                format!(
                    "tether.toml:{}: {table}.{key}: must be between {min} and {max}, got {bad}",
                    line(table)
                )
            );
        }
    }
}

#[test]
fn the_spin_guard_message_reads_as_documented() {
    assert_eq!(
        problem("[loop]\nspin_guard = 0\n"),
        "tether.toml:2: loop.spin_guard: must be between 1 and 100, got 0"
    );
}

#[test]
fn numbers_too_big_for_any_integer_are_out_of_range() {
    assert_eq!(
        problem("[loop]\nmax_iterations = 99999999999999999999\n"),
        "tether.toml:2: loop.max_iterations: must be between 0 and 20000, got 99999999999999999999"
    );
}

#[test]
fn the_iteration_ceiling_is_public() {
    assert_eq!(tether_config::LoopConfig::MAX_ITERATIONS_CEILING, 20_000);
}

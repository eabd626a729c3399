use super::{closest, distance};

#[test]
fn distance_counts_edits() {
    assert_eq!(distance("", ""), 0);
    assert_eq!(distance("abc", ""), 3);
    assert_eq!(distance("", "abc"), 3);
    assert_eq!(distance("kitten", "sitting"), 3);
    assert_eq!(distance("max_iteratons", "max_iterations"), 1);
}

#[test]
fn distance_counts_a_swap_as_one_edit() {
    assert_eq!(distance("humna", "human"), 1);
    assert_eq!(distance("ab", "ba"), 1);
}

#[test]
fn suggests_close_keys() {
    let keys = ["max_iterations", "spin_guard", "reminder_after"];
    assert_eq!(closest("max_iteratons", &keys), Some("max_iterations"));
    assert_eq!(closest("spin-guard", &keys), Some("spin_guard"));
    assert_eq!(closest("SPIN_GUARD", &keys), Some("spin_guard"));
    assert_eq!(closest("humna", &["human", "model"]), Some("human"));
}

#[test]
fn suggests_a_key_the_word_is_a_prefix_of() {
    assert_eq!(
        closest("timeout", &["threshold", "timeout_secs", "on_timeout"]),
        Some("timeout_secs")
    );
}

#[test]
fn suggests_a_key_that_is_a_prefix_of_the_word() {
    assert_eq!(closest("listen_addr", &["listen"]), Some("listen"));
    assert_eq!(closest("api_version", &["api", "model"]), None);
}

#[test]
fn stays_silent_when_nothing_is_close() {
    let keys = ["max_iterations", "spin_guard"];
    assert_eq!(closest("colour", &keys), None);
    assert_eq!(closest("x", &keys), None);
    assert_eq!(closest("ma", &keys), None);
}

#[test]
fn prefers_the_closest_candidate() {
    assert_eq!(closest("modell", &["mode", "model"]), Some("model"));
    assert_eq!(closest("stram", &["stream", "steam_x"]), Some("stream"));
}

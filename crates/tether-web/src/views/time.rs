//! Times as people read them: relative (`3 min ago`) with the absolute UTC time beside it; the
//! script keeps the relative part current.

use maud::{Markup, html};

/// `12 s ago`, `3 min ago`, `2 h 5 min ago`, `4 d ago`, relative to `now_ms`.
pub fn ago(ms: i64, now_ms: i64) -> String {
    let secs = (now_ms - ms).max(0) / 1000;
    match secs {
        0..60 => format!("{secs} s ago"),
        60..3600 => format!("{} min ago", secs / 60),
        3600..86400 => format!("{} h {} min ago", secs / 3600, secs % 3600 / 60),
        _ => format!("{} d ago", secs / 86400),
    }
}

/// `2026-11-23 19:03:35 UTC`.
pub fn absolute(ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(ms) {
        Some(at) => at.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
        // Beyond what a calendar date can say (hundreds of millennia away).
        None => format!("{ms} ms"),
    }
}

/// `2026-11-23T19:03:35Z`, for `datetime`.
fn iso(ms: i64) -> String {
    absolute(ms).replacen(' ', "T", 1).replace(" UTC", "Z")
}

/// A `<time>`: relative text, the absolute time beside it and in `datetime`.
pub fn when(ms: i64, now_ms: i64) -> Markup {
    html! {
        time.rel datetime=(iso(ms)) data-ms=(ms) title=(absolute(ms)) { (ago(ms, now_ms)) }
        " " span.abs { "(" (absolute(ms)) ")" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(absolute(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(absolute(1_795_460_615_000), "2026-11-23 19:03:35 UTC");
        assert_eq!(absolute(951_782_400_000), "2000-02-29 00:00:00 UTC");
        assert_eq!(iso(0), "1970-01-01T00:00:00Z");
        assert_eq!(ago(0, 61_000), "1 min ago");
        assert_eq!(ago(0, 3_660_000), "1 h 1 min ago");
    }
}

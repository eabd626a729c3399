//! Usage and rate limits reported by an agent CLI.
//!
//! A subscription's usage limit ("You've hit your usage limit … try again in 2 hours") or a
//! provider's rate limit (HTTP 429) is not the agent failing: retrying at once only burns the
//! next attempt. The executors look for these messages in what a failed turn printed; the loop
//! then waits — until the reset time when the CLI gave one, else with backoff — and runs the
//! same iteration again without counting a failure.

use std::sync::LazyLock;
use std::time::Duration;

use regex_lite::Regex;

/// A usage or rate limit a CLI reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageLimit {
    /// The CLI's own words (one line, trimmed).
    pub message: String,
    /// How long until the limit resets, when the CLI said.
    pub retry_after: Option<Duration>,
}

/// Phrases that mean a limit, not a failure of the agent's work.
static LIMIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(usage limit|rate[ _-]?limit|hit your limit|limit reached|quota exceeded|exceeded your current quota|too many requests|\b429\b|overloaded_error|resource_exhausted)",
    )
    .ok()
});

/// `Claude AI usage limit reached|1767225600`: the reset as a Unix time.
static EPOCH: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"limit reached\|(\d{9,11})").ok());

/// `try again in 2 hours 5 minutes`, `resets in 45m`, `retry after 30 seconds`.
static RELATIVE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:try again|resets?|retry)(?: again)? (?:in|after) ((?:\d+(?:\.\d+)?\s*(?:days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b[\s,]*(?:and\s+)?)+)").ok()
});

static PART: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)(\d+(?:\.\d+)?)\s*(days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b")
        .ok()
});

/// The limit in `text` (a CLI's error message or stderr), if it reports one; `now_unix` is the
/// current Unix time, to turn an absolute reset into a wait.
pub fn recognise(text: &str, now_unix: u64) -> Option<UsageLimit> {
    let limit = LIMIT.as_ref()?;
    let line = text.lines().find(|line| limit.is_match(line))?;
    let message: String = line.trim().chars().take(300).collect();
    Some(UsageLimit {
        retry_after: epoch(text, now_unix).or_else(|| relative(text)),
        message,
    })
}

fn epoch(text: &str, now_unix: u64) -> Option<Duration> {
    let at: u64 = EPOCH
        .as_ref()?
        .captures(text)?
        .get(1)?
        .as_str()
        .parse()
        .ok()?;
    Some(Duration::from_secs(at.saturating_sub(now_unix)))
}

fn relative(text: &str) -> Option<Duration> {
    let span = RELATIVE.as_ref()?.captures(text)?.get(1)?.as_str();
    let mut secs = 0.0_f64;
    for part in PART.as_ref()?.captures_iter(span) {
        let n: f64 = part.get(1)?.as_str().parse().ok()?;
        let unit = part.get(2)?.as_str().to_ascii_lowercase();
        let scale = match unit.chars().next()? {
            'd' => 86_400.0,
            'h' => 3_600.0,
            'm' => 60.0,
            _ => 1.0,
        };
        secs += n * scale;
    }
    (secs > 0.0).then(|| Duration::from_secs_f64(secs))
}

/// The current Unix time, for [`recognise`].
pub fn now_unix() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_767_200_000;

    #[test]
    fn claude_codes_limit_with_a_reset_time_waits_until_then() {
        let limit = recognise("Claude AI usage limit reached|1767225600", NOW).unwrap();
        assert_eq!(limit.retry_after, Some(Duration::from_secs(25_600)));
        assert_eq!(limit.message, "Claude AI usage limit reached|1767225600");
    }

    #[test]
    fn a_relative_reset_is_added_up() {
        let text =
            "error: You've hit your usage limit. Upgrade to Pro or try again in 2 hours 5 minutes.";
        let limit = recognise(text, NOW).unwrap();
        assert_eq!(limit.retry_after, Some(Duration::from_secs(2 * 3600 + 300)));
        let limit = recognise("Rate limit reached; retry after 30 seconds", NOW).unwrap();
        assert_eq!(limit.retry_after, Some(Duration::from_secs(30)));
    }

    #[test]
    fn claude_codes_429_result_is_a_limit() {
        let limit = recognise(
            "API Error: Request rejected (429) · Rate limit reached",
            NOW,
        );
        assert_eq!(
            limit,
            Some(UsageLimit {
                message: "API Error: Request rejected (429) · Rate limit reached".into(),
                retry_after: None,
            })
        );
    }

    #[test]
    fn a_limit_without_a_reset_time_is_still_a_limit() {
        let text = "stream error: exceeded retry limit, last status: 429 Too Many Requests";
        let limit = recognise(text, NOW).unwrap();
        assert_eq!(limit.retry_after, None);
        let limit = recognise("5-hour limit reached ∙ resets 3pm", NOW).unwrap();
        assert_eq!(limit.retry_after, None);
    }

    #[test]
    fn other_failures_are_not_limits() {
        for text in [
            "error: cargo test failed",
            "API Error: 500 internal server error",
            "connection refused",
            "the file has 4290 lines",
        ] {
            assert_eq!(recognise(text, NOW), None, "{text}");
        }
    }
}

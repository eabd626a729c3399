//! Topic names: one topic per conversation, `Agent Q #<n> — <summary>`, short enough that Zulip
//! never truncates it (which would make the client's exact-topic filter miss every reply).

/// The longest topic tether creates, in characters (Zulip's `max_topic_length` was 60 before
/// feature level 53, and servers truncate rather than reject).
pub const MAX_TOPIC_CHARS: usize = 60;

const ELLIPSIS: char = '…';

/// `Agent Q #<n> — <summary>`, at most [`MAX_TOPIC_CHARS`] characters.
///
/// The summary's whitespace runs (newlines included) become single spaces; a summary too long
/// is cut on a character boundary and ends with `…`. An empty summary gives `Agent Q #<n>`.
///
/// ```
/// use tether_zulip::topic_name;
/// assert_eq!(topic_name(3, "payment processing"), "Agent Q #3 — payment processing");
/// assert!(topic_name(7, &"x".repeat(200)).ends_with('…'));
/// ```
pub fn topic_name(n: u64, summary: &str) -> String {
    let prefix = format!("Agent Q #{n}");
    let summary = summary.split_whitespace().collect::<Vec<_>>().join(" ");
    if summary.is_empty() {
        return prefix;
    }
    let head = format!("{prefix} — ");
    let room = MAX_TOPIC_CHARS.saturating_sub(head.chars().count());
    if summary.chars().count() <= room {
        return head + &summary;
    }
    let cut: String = summary.chars().take(room.saturating_sub(1)).collect();
    let cut = cut.trim_end();
    if cut.is_empty() {
        return prefix;
    }
    format!("{head}{cut}{ELLIPSIS}")
}

#[cfg(test)]
#[path = "topic_tests.rs"]
mod tests;

//! Small text helpers shared by the tools: binary detection, shortening long lines, plurals.

use std::borrow::Cow;

/// How much of a file's start is checked for NUL bytes.
const SNIFF_BYTES: usize = 8192;

/// Whether `bytes` (a file's start, or all of it) look binary: a NUL byte in the first 8 KiB, as
/// git and grep decide.
pub(crate) fn looks_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(SNIFF_BYTES)].contains(&0)
}

/// `line` cut to at most `max_chars` characters, saying how much was cut.
pub(crate) fn shorten(line: &str, max_chars: usize) -> Cow<'_, str> {
    match line.char_indices().nth(max_chars) {
        None => Cow::Borrowed(line),
        Some((cut, _)) => {
            let rest = line[cut..].chars().count();
            Cow::Owned(format!("{}… [{rest} more characters]", &line[..cut]))
        }
    }
}

/// `1 line`, `2 lines`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The first line of `text`, at most `max_chars` characters, for one-line summaries.
pub(crate) fn first_line(text: &str, max_chars: usize) -> String {
    let line = text.lines().next().unwrap_or_default();
    match line.char_indices().nth(max_chars) {
        None if text.lines().nth(1).is_none() => line.to_owned(),
        None => format!("{line} …"),
        Some((cut, _)) => format!("{}…", &line[..cut]),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn binary_means_a_nul_near_the_start() {
        assert!(looks_binary(b"abc\0def"));
        assert!(!looks_binary("héllo\n".as_bytes()));
        let mut late = vec![b'a'; SNIFF_BYTES];
        late.push(0);
        assert!(!looks_binary(&late));
    }

    #[test]
    fn shorten_counts_what_it_cut() {
        assert_eq!(shorten("abc", 3), "abc");
        assert_eq!(shorten("abcdé", 3), "abc… [2 more characters]");
    }

    #[test]
    fn first_line_marks_more() {
        assert_eq!(first_line("one", 10), "one");
        assert_eq!(first_line("one\ntwo", 10), "one …");
        assert_eq!(first_line("abcdef", 3), "abc…");
        assert_eq!(first_line("", 3), "");
    }
}

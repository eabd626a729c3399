//! Discord's message markup, for the webhook's `discord` format: text written by agents (and
//! by people on other channels) escaped so that it shows as written and does nothing else.
//!
//! Discord reads a message's `content` as markdown: `@everyone`, `@here` and `<@id>` ping
//! people, `[text](url)` shows a link whose text hides its target, `||…||` hides text, and
//! `*`, `_`, `~`, `` ` ``, `>` and a `#` or `-` at the start of a line format it. So:
//!
//! - every markdown character is escaped with a backslash, which Discord shows as the
//!   character itself (`a \< b` reads `a < b`);
//! - `@everyone` and `@here` get a zero-width space after the `@`, so they read the same and
//!   are not mentions even to a client that ignored the escape; the webhook body also sends
//!   `allowed_mentions: {"parse": []}`, which tells Discord to ping nobody whatever the text;
//! - a URL written plainly (`https://…`) is kept as it is, so it stays a working link whose
//!   text is its target; it ends at whitespace, `<`, `>`, `[` or `]`, which are escaped;
//! - an `@` in an email address is left alone.
//!
//! Slack's format reuses the Slack channel's escaping ([`tether_slack::escape`]); this is the
//! one escaping for Discord.

/// The most characters of a message's `content` Discord accepts.
pub const MAX_CONTENT: usize = 2000;

/// What is added where a message was cut to fit [`MAX_CONTENT`].
const CUT: &str = "\n[… truncated]";

/// `text` escaped for a Discord message (see the module's documentation).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut line_start = true;
    let mut previous: Option<char> = None;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let after_word = previous.is_some_and(char::is_alphanumeric);
        if let Some(url) = url_at(rest).filter(|_| !after_word) {
            out.push_str(url);
            rest = &rest[url.len()..];
            previous = url.chars().last();
            line_start = false;
            continue;
        }
        match c {
            '\\' | '*' | '_' | '~' | '`' | '|' | '<' | '>' | '[' | ']' => {
                out.push('\\');
                out.push(c);
            }
            '#' | '-' | '+' if line_start => {
                out.push('\\');
                out.push(c);
            }
            '@' if mass_mention(&rest[1..]) => {
                out.push('@');
                out.push('\u{200b}');
            }
            _ => out.push(c),
        }
        line_start = c == '\n' || (line_start && c.is_whitespace());
        previous = Some(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// A plain URL at the start of `text`: `http(s)://` and what follows up to whitespace or one
/// of `<>[]`.
fn url_at(text: &str) -> Option<&str> {
    let scheme = ["https://", "http://"]
        .into_iter()
        .find(|s| text.starts_with(s))?;
    let end = text[scheme.len()..]
        .find(|c: char| c.is_whitespace() || matches!(c, '<' | '>' | '[' | ']'))
        .map_or(text.len(), |i| scheme.len() + i);
    (end > scheme.len()).then(|| &text[..end])
}

/// Whether `text` (what follows an `@`) is `everyone` or `here`.
fn mass_mention(text: &str) -> bool {
    ["everyone", "here"].iter().any(|m| {
        text.get(..m.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(m))
    })
}

/// A message's `content`: the bold `title` (tether's own) over `text` (escaped here), cut to
/// [`MAX_CONTENT`] characters.
pub fn content(title: &str, text: &str) -> String {
    let whole = format!("**{}**\n{}", escape(title), escape(text));
    if whole.chars().count() <= MAX_CONTENT {
        return whole;
    }
    let mut kept: String = whole
        .chars()
        .take(MAX_CONTENT - CUT.chars().count())
        .collect();
    // An escape cut in half would escape the marker's newline instead.
    let trailing = kept.chars().rev().take_while(|c| *c == '\\').count();
    if trailing % 2 == 1 {
        kept.pop();
    }
    kept.push_str(CUT);
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_links_and_markup_are_inert() {
        assert_eq!(escape("@everyone look"), "@\u{200b}everyone look");
        assert_eq!(escape("hi @Here"), "hi @\u{200b}Here");
        assert_eq!(escape("<@123456789012345678>"), "\\<@123456789012345678\\>");
        assert_eq!(escape("<@&42> <#7>"), "\\<@&42\\> \\<#7\\>");
        assert_eq!(
            escape("[click](https://evil.example)"),
            "\\[click\\](https://evil.example)"
        );
        assert_eq!(
            escape("https://good.example/[x](https://evil.example)"),
            "https://good.example/\\[x\\](https://evil.example)"
        );
        assert_eq!(
            escape("||hidden|| **bold**"),
            "\\|\\|hidden\\|\\| \\*\\*bold\\*\\*"
        );
        assert_eq!(
            escape("# Big\n- item\n> quote"),
            "\\# Big\n\\- item\n\\> quote"
        );
        assert_eq!(escape("\\*"), "\\\\\\*");
    }

    #[test]
    fn honest_text_keeps_its_words() {
        assert_eq!(escape("if a < b && c > d"), "if a \\< b && c \\> d");
        assert_eq!(
            escape("see https://example.com/a_b?x=1&y=2 now"),
            "see https://example.com/a_b?x=1&y=2 now"
        );
        assert_eq!(escape("mail ana@example.com"), "mail ana@example.com");
        assert_eq!(escape("well-known # 3"), "well-known # 3");
        assert_eq!(escape("xhttps://a_b"), "xhttps://a\\_b");
    }

    #[test]
    fn long_content_is_cut_to_the_limit() {
        let long = "*".repeat(3000);
        let c = content("tether: a question", &long);
        assert_eq!(c.chars().count(), MAX_CONTENT - 1);
        assert!(c.ends_with("\\*\n[… truncated]"), "{}", &c[c.len() - 30..]);
        assert_eq!(content("t", "short"), "**t**\nshort");
    }
}

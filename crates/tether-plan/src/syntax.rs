//! Recognisers for single lines of markdown: headings, fences, fields, list items, checkboxes and
//! the id comment. Each takes a line's content (no terminator) and returns what it found, with
//! byte offsets relative to the line where a patch needs them.

/// Strips at most three leading spaces, as CommonMark allows before block syntax.
fn strip_indent(s: &str) -> Option<&str> {
    let n = s.bytes().take_while(|b| *b == b' ').count();
    (n <= 3).then(|| &s[n..])
}

/// Skips leading spaces and tabs.
fn skip_blanks(s: &str) -> &str {
    let n = s.bytes().take_while(|b| *b == b' ' || *b == b'\t').count();
    &s[n..]
}

/// A fence opener or closer: the fence character, its run length, and the text after it.
pub(crate) fn fence(content: &str) -> Option<(u8, usize, &str)> {
    let s = strip_indent(content)?;
    let ch = *s.as_bytes().first()?;
    if ch != b'`' && ch != b'~' {
        return None;
    }
    let run = s.bytes().take_while(|b| *b == ch).count();
    if run < 3 {
        return None;
    }
    let rest = &s[run..];
    if ch == b'`' && rest.contains('`') {
        return None;
    }
    Some((ch, run, rest))
}

/// An ATX heading: its level (1–6) and its text with closing `#`s removed.
pub(crate) fn heading(content: &str) -> Option<(usize, &str)> {
    let s = strip_indent(content)?;
    let level = s.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &s[level..];
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let mut text = rest.trim_ascii();
    let without_hashes = text.trim_end_matches('#');
    if without_hashes.is_empty() {
        text = "";
    } else if without_hashes.ends_with([' ', '\t']) {
        text = without_hashes.trim_ascii_end();
    }
    Some((level, text))
}

/// The title of a `## Goal: <title>` heading text, if it is one.
pub(crate) fn goal_title(heading_text: &str) -> Option<&str> {
    let prefix = heading_text.get(..5)?;
    prefix
        .eq_ignore_ascii_case("goal:")
        .then(|| heading_text[5..].trim_ascii())
}

/// Whether a heading text names the log section.
pub(crate) fn is_log_heading(heading_text: &str) -> bool {
    heading_text.eq_ignore_ascii_case("log")
}

/// The objective of a `# Plan: <objective>` heading text (or the whole text without the prefix).
pub(crate) fn plan_title(heading_text: &str) -> &str {
    match heading_text.get(..5) {
        Some(p) if p.eq_ignore_ascii_case("plan:") => heading_text[5..].trim_ascii(),
        _ => heading_text,
    }
}

/// Whether a line opens an HTML comment block that it does not also close: it starts (after at
/// most three spaces) with `<!--` and has no `-->` after that. Such a block runs to the first line
/// holding `-->`; markdown inside it — goal headings included — is not read.
pub(crate) fn opens_comment_block(content: &str) -> bool {
    let indent = content.len() - content.trim_start_matches(' ').len();
    indent <= 3
        && content[indent..]
            .strip_prefix("<!--")
            .is_some_and(|rest| !rest.contains("-->"))
}

/// Whether a line closes an HTML comment block (holds `-->`).
pub(crate) fn closes_comment_block(content: &str) -> bool {
    content.contains("-->")
}

/// The value of an `<!-- id: … -->` comment line.
pub(crate) fn id_comment(content: &str) -> Option<&str> {
    let inner = content
        .trim_ascii()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim_ascii();
    let key = inner.get(..3)?;
    key.eq_ignore_ascii_case("id:")
        .then(|| inner[3..].trim_ascii())
}

/// Whether `id` is a valid goal id: ASCII letters, digits, `.`, `_`, `-`, starting with a letter
/// or digit, at most 64 bytes.
pub(crate) fn valid_id(id: &str) -> bool {
    let b = id.as_bytes();
    !b.is_empty()
        && b.len() <= 64
        && b[0].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
}

/// A `key: value` line: the key, the value (trimmed), and the byte range of the value within the
/// line. Keys are identifiers at the start of the line (up to three spaces of indent).
pub(crate) fn field(content: &str) -> Option<(&str, &str, std::ops::Range<usize>)> {
    let indent = content.len() - strip_indent(content)?.len();
    let s = &content[indent..];
    let key_len = s
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    if key_len == 0 || !s.as_bytes()[0].is_ascii_alphabetic() {
        return None;
    }
    let key = &s[..key_len];
    let after_key = skip_blanks(&s[key_len..]);
    let after_colon = after_key.strip_prefix(':')?;
    let lead = after_colon.len() - after_colon.trim_ascii_start().len();
    let value = after_colon.trim_ascii();
    let value_start = content.len() - after_colon.len() + lead;
    Some((key, value, value_start..value_start + value.len()))
}

/// A bullet list item (`-`, `*` or `+`): the text after the bullet.
pub(crate) fn list_item(content: &str) -> Option<&str> {
    let s = skip_blanks(content);
    let rest = s.strip_prefix(['-', '*', '+'])?;
    if rest.is_empty() {
        return Some("");
    }
    rest.starts_with([' ', '\t']).then(|| rest.trim_ascii())
}

/// A checkbox item: whether it is ticked, its text, and the byte offset of the mark inside the
/// brackets (the one byte a tick or untick replaces).
pub(crate) fn checkbox(content: &str) -> Option<(bool, &str, usize)> {
    let s = skip_blanks(content);
    let rest = s.strip_prefix(['-', '*', '+'])?;
    let after_bullet = skip_blanks(rest);
    if after_bullet.len() == rest.len() {
        return None;
    }
    let b = after_bullet.as_bytes();
    if b.len() < 3 || b[0] != b'[' || b[2] != b']' {
        return None;
    }
    let checked = match b[1] {
        b' ' => false,
        b'x' | b'X' => true,
        _ => return None,
    };
    let tail = &after_bullet[3..];
    if !(tail.is_empty() || tail.starts_with([' ', '\t'])) {
        return None;
    }
    let mark = content.len() - after_bullet.len() + 1;
    Some((checked, tail.trim_ascii(), mark))
}

/// Levenshtein distance, for "did you mean" suggestions on short keys.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// Derives an id from a goal title: lowercase ASCII words joined by `-`, at most 48 bytes.
pub(crate) fn slug(title: &str) -> String {
    let mut out = String::new();
    for word in title
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if out.len() + word.len() + 1 > 48 && !out.is_empty() {
            break;
        }
        if !out.is_empty() {
            out.push('-');
        }
        out.push_str(&word.to_ascii_lowercase());
    }
    out.truncate(48);
    while out.ends_with('-') {
        out.pop();
    }
    if out.is_empty() {
        out.push_str("goal");
    }
    out
}

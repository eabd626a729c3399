//! File-name globs for `grep`, translated to a regular expression so no glob crate is needed.
//!
//! Supported: `*` (within one path segment), `?`, `**` (any number of segments), `[abc]`/`[!a]`,
//! and `{a,b}` alternatives. A glob without `/` matches the file name; one with `/` matches the
//! path from the workspace root.

use regex_lite::Regex;

/// A compiled glob.
#[derive(Debug)]
pub(crate) struct Glob {
    regex: Regex,
    whole_path: bool,
}

impl Glob {
    pub(crate) fn new(glob: &str) -> Result<Self, String> {
        let regex = Regex::new(&to_regex(glob))
            .map_err(|err| format!("`{glob}` is not a valid glob: {err}"))?;
        Ok(Self {
            regex,
            whole_path: glob.contains('/'),
        })
    }

    /// Whether the file at `rel` (relative to the workspace root, `/`-separated) matches.
    pub(crate) fn matches(&self, rel: &str) -> bool {
        if self.whole_path {
            self.regex.is_match(rel)
        } else {
            self.regex.is_match(rel.rsplit('/').next().unwrap_or(rel))
        }
    }
}

fn to_regex(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::from("^");
    let mut braces = 0usize;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if chars.get(i + 1) == Some(&'*') => {
                if chars.get(i + 2) == Some(&'/') {
                    out.push_str("(?:.*/)?");
                    i += 3;
                } else {
                    out.push_str(".*");
                    i += 2;
                }
                continue;
            }
            '*' => out.push_str("[^/]*"),
            '?' => out.push_str("[^/]"),
            '[' => {
                if let Some(len) = class_len(&chars[i..]) {
                    out.push('[');
                    let mut body = &chars[i + 1..i + len - 1];
                    if body.first() == Some(&'!') {
                        out.push('^');
                        body = &body[1..];
                    }
                    for &b in body {
                        if matches!(b, '\\' | '[' | '&' | '~') {
                            out.push('\\');
                        }
                        out.push(b);
                    }
                    out.push(']');
                    i += len;
                    continue;
                }
                out.push_str(r"\[");
            }
            '{' => {
                braces += 1;
                out.push_str("(?:");
            }
            '}' if braces > 0 => {
                braces -= 1;
                out.push(')');
            }
            ',' if braces > 0 => out.push('|'),
            other => out.push_str(&regex_lite::escape(other.encode_utf8(&mut [0; 4]))),
        }
        i += 1;
    }
    for _ in 0..braces {
        out.push(')');
    }
    out.push('$');
    out
}

/// The length of a `[...]` class starting at `chars[0]`, including both brackets, if it closes.
fn class_len(chars: &[char]) -> Option<usize> {
    let mut j = 1;
    if chars.get(j) == Some(&'!') {
        j += 1;
    }
    if chars.get(j) == Some(&']') {
        j += 1;
    }
    while j < chars.len() {
        if chars[j] == ']' {
            return Some(j + 1);
        }
        j += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::Glob;

    fn matches(glob: &str, path: &str) -> bool {
        Glob::new(glob).unwrap().matches(path)
    }

    #[test]
    fn names_and_paths() {
        assert!(matches("*.rs", "src/lib.rs"));
        assert!(matches("*.rs", "lib.rs"));
        assert!(!matches("*.rs", "src/lib.rs.bak"));
        assert!(matches("*.{ts,tsx}", "web/app.tsx"));
        assert!(!matches("*.{ts,tsx}", "web/app.js"));
        assert!(matches("src/**/*.rs", "src/a/b/c.rs"));
        assert!(matches("src/**/*.rs", "src/c.rs"));
        assert!(!matches("src/*.rs", "src/a/c.rs"));
        assert!(matches("file?.txt", "file1.txt"));
        assert!(matches("[!a]*.md", "README.md"));
        assert!(!matches("[!a]*.md", "about.md"));
        assert!(matches("a+b(1).txt", "a+b(1).txt"));
        assert!(matches("[", "["));
    }
}

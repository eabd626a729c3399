//! The link checker: every relative link of a markdown file must point at a file that exists
//! and, with an `#anchor`, at a heading of that file, as GitHub and mdBook name headings
//! (lowercase, white space to `-`, punctuation but `-` and `_` dropped, `-1`, `-2` … after a
//! repeated one). Links in code (fenced blocks and inline code spans) are text, not links; links
//! with a scheme (`https:`, `mailto:`) leave the repository and are not followed.

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

/// A link that does not lead where it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The file holding the link.
    pub file: PathBuf,
    /// Its line (1-based).
    pub line: usize,
    /// The link's target as written.
    pub target: String,
    /// What is wrong with it.
    pub why: String,
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (file, line, target, why) = (self.file.display(), self.line, &self.target, &self.why);
        write!(f, "{file}:{line}: ({target}): {why}")
    }
}

/// The broken links of `file`.
pub fn check_file(file: &Path) -> Vec<Broken> {
    let text = match fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => return vec![broken(file, 0, "", &format!("cannot read it: {e}"))],
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    links(&text)
        .into_iter()
        .filter_map(|(line, target)| {
            let why = check_target(file, dir, &target)?;
            Some(broken(file, line, &target, &why))
        })
        .collect()
}

fn broken(file: &Path, line: usize, target: &str, why: &str) -> Broken {
    Broken {
        file: file.to_path_buf(),
        line,
        target: target.to_owned(),
        why: why.to_owned(),
    }
}

/// What is wrong with `target`, a link of `file` (in `dir`); `None` when it leads somewhere.
fn check_target(file: &Path, dir: &Path, target: &str) -> Option<String> {
    if is_external(target) {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((path, anchor)) => (path, Some(anchor)),
        None => (target, None),
    };
    let dest = if path.is_empty() {
        file.to_path_buf()
    } else if path.starts_with('/') {
        return Some("an absolute path: write it relative to this file".into());
    } else {
        dir.join(path)
    };
    if !dest.exists() {
        return Some(format!("no such file: {}", dest.display()));
    }
    let anchor = anchor?;
    if dest.extension().is_none_or(|e| e != "md") {
        return Some("an anchor into a file that is not markdown".into());
    }
    let text = fs::read_to_string(&dest).ok()?;
    if anchors(&text).contains(anchor) {
        None
    } else {
        Some(format!(
            "no heading of {} has the anchor #{anchor}",
            dest.display()
        ))
    }
}

fn is_external(target: &str) -> bool {
    let scheme = target.split(':').next().unwrap_or("");
    target.contains(':')
        && !scheme.is_empty()
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The text outside code: fenced blocks and inline code spans blanked (line breaks kept, so
/// lines still count).
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fences = Fences::default();
    for line in text.split_inclusive('\n') {
        if !fences.is_code(line) {
            out.push_str(line);
        } else if line.ends_with('\n') {
            out.push('\n');
        }
    }
    without_code_spans(&out)
}

/// Fenced code blocks, followed line by line.
#[derive(Default)]
struct Fences {
    /// The marker of the block we are in (three or more backticks or tildes).
    open: Option<String>,
}

impl Fences {
    /// Whether `line` is code: a fence's opening or closing line, or a line inside a block.
    fn is_code(&mut self, line: &str) -> bool {
        match (&self.open, fence_marker(line)) {
            (Some(open), Some((marker, rest)))
                if marker.starts_with(open.as_str()) && rest.trim().is_empty() =>
            {
                self.open = None;
                true
            }
            (Some(_), _) => true,
            (None, Some((marker, _))) => {
                self.open = Some(marker);
                true
            }
            (None, None) => false,
        }
    }
}

/// The fence a line opens or closes (three or more backticks or tildes), and what follows it.
fn fence_marker(line: &str) -> Option<(String, &str)> {
    let trimmed = line.trim_start();
    let first = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let len = trimmed.chars().take_while(|c| *c == first).count();
    (len >= 3).then(|| (first.to_string().repeat(len), &trimmed[len..]))
}

/// `text` with every inline code span blanked: a run of backticks up to the next run of the same
/// length (a span may cross a line break, never a paragraph's end).
fn without_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|c| **c == '`').count();
        match closing_run(&chars, i + run, run) {
            Some(end) => {
                out.extend(
                    chars[i..end]
                        .iter()
                        .map(|c| if *c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            None => {
                out.extend(std::iter::repeat_n('`', run));
                i += run;
            }
        }
    }
    out
}

/// Where the span opened by `run` backticks before `from` ends (after its closing run).
fn closing_run(chars: &[char], from: usize, run: usize) -> Option<usize> {
    let mut j = from;
    while j < chars.len() {
        if chars[j] == '\n' && chars.get(j + 1) == Some(&'\n') {
            return None;
        }
        if chars[j] == '`' {
            let len = chars[j..].iter().take_while(|c| **c == '`').count();
            if len == run {
                return Some(j + len);
            }
            j += len;
        } else {
            j += 1;
        }
    }
    None
}

/// Every link target of `text` (inline links and images: `](target)`, and reference
/// definitions: `[name]: target`), with its line.
pub fn links(text: &str) -> Vec<(usize, String)> {
    let prose = prose(text);
    let mut found = Vec::new();
    for (at, _) in prose.match_indices("](") {
        let rest = &prose[at + 2..];
        let target: String = rest
            .chars()
            .take_while(|c| *c != ')' && !c.is_whitespace())
            .collect();
        let target = target
            .trim_start_matches('<')
            .trim_end_matches('>')
            .to_owned();
        if !target.is_empty() {
            found.push((line_of(&prose, at), target));
        }
    }
    for (n, line) in prose.lines().enumerate() {
        let line = line.trim_start();
        if let Some(rest) = line.strip_prefix('[')
            && let Some((label, target)) = rest.split_once("]:")
            && !label.is_empty()
            && !label.contains(']')
            && let Some(target) = target.split_whitespace().next()
        {
            found.push((n + 1, target.to_owned()));
        }
    }
    found
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// The anchors of `text`'s headings, as GitHub and mdBook make them.
pub fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    let mut fences = Fences::default();
    for line in text.lines() {
        if fences.is_code(line) {
            continue;
        }
        let Some(title) = heading(line) else { continue };
        let base = slug(title);
        let mut id = base.clone();
        let mut n = 0;
        while seen.contains(&id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        seen.insert(id);
    }
    seen
}

/// The title of an ATX heading line (`## Title ##`), if it is one.
fn heading(line: &str) -> Option<&str> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    if !(1..=6).contains(&hashes) {
        return None;
    }
    let rest = &line[hashes..];
    if !rest.is_empty() && !rest.starts_with(' ') && !rest.starts_with('\t') {
        return None;
    }
    Some(rest.trim().trim_end_matches('#').trim_end())
}

/// A heading's anchor: lowercase, white space to `-`, every character but letters, digits, `-`
/// and `_` dropped.
pub fn slug(title: &str) -> String {
    title
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_lowercase().collect::<String>())
            } else if c.is_whitespace() {
                Some("-".to_owned())
            } else {
                None
            }
        })
        .collect()
}

//! Whether a shell line runs a command that starts with one of the `ask_before` prefixes.
//!
//! Each command of the line ([`split`]) is compared on its own, after the words that only wrap
//! another command are set aside: variable assignments (`A=1 git push`), `env`, `sudo`,
//! `command`, `exec`, `nohup`, `nice`, `timeout`, `xargs`, `time` and the shell's keywords
//! (`if`, `then`, `!`, `{`, …). A program named by its path counts as its name
//! (`/usr/bin/git push` is `git push`). The comparison is a plain prefix match of the words joined
//! by single spaces (so `git push` also matches `git push-all`: asking once too often is the
//! safe side).
//!
//! When the line cannot be read with confidence, the answer is [`Verdict::Unsure`] and the
//! caller asks: an unclosed quote or substitution, `eval`, a program name computed by an
//! expansion (`$cmd push`). `sh -c '…'` (and `bash -c`, …) is checked on its script.

use super::line::{Word, split};

/// The outcome of checking one shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No command of the line starts with a prefix.
    Clear,
    /// A command starts with `prefix`.
    Matches {
        /// The command, as compared (wrappers removed, words joined by spaces).
        command: String,
        /// The prefix it starts with, as given.
        prefix: String,
    },
    /// The line cannot be read well enough to tell.
    Unsure {
        /// Why, for the question and the model.
        reason: String,
    },
}

/// Checks `line` against `prefixes` (blank prefixes are ignored; none at all is always clear).
pub fn check(line: &str, prefixes: &[String]) -> Verdict {
    let wanted: Vec<(&String, String)> = prefixes
        .iter()
        .map(|p| (p, normalize_prefix(p)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if wanted.is_empty() {
        return Verdict::Clear;
    }
    check_normalized(line, &wanted, 0)
}

/// How deep `sh -c` scripts are followed before giving up (and asking).
const MAX_DEPTH: usize = 4;

fn check_normalized(line: &str, wanted: &[(&String, String)], depth: usize) -> Verdict {
    if depth > MAX_DEPTH {
        return unsure("it nests `sh -c` too deeply to follow");
    }
    let raw = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(found) = first_match(&raw, wanted) {
        return found;
    }
    let parsed = split(line);
    if let Some(reason) = parsed.unsure.first() {
        return unsure(&format!("{reason}, so its commands cannot be told apart"));
    }
    for words in &parsed.commands {
        let words = unwrap(words);
        let Some(program) = words.first() else {
            continue;
        };
        if program.expanded {
            return unsure(&format!(
                "its program name `{}` is computed when it runs",
                program.text
            ));
        }
        let name = basename(&program.text);
        if name == "eval" {
            return unsure("it uses `eval`");
        }
        if let Some(script) = shell_script(name, &words[1..]) {
            match check_normalized(&script.text, wanted, depth + 1) {
                Verdict::Clear if !script.expanded => {}
                Verdict::Clear => return unsure("it runs `sh -c` with a computed script"),
                found => return found,
            }
        }
        let joined = std::iter::once(name)
            .chain(words[1..].iter().map(|w| w.text.as_str()))
            .collect::<Vec<_>>()
            .join(" ");
        if let Some(found) = first_match(&joined, wanted) {
            return found;
        }
    }
    Verdict::Clear
}

fn first_match(command: &str, wanted: &[(&String, String)]) -> Option<Verdict> {
    wanted
        .iter()
        .find(|(_, p)| command.starts_with(p.as_str()))
        .map(|(given, _)| Verdict::Matches {
            command: command.to_owned(),
            prefix: given.trim().to_owned(),
        })
}

fn unsure(reason: &str) -> Verdict {
    Verdict::Unsure {
        reason: reason.to_owned(),
    }
}

/// The prefix with single spaces and its program named without a path.
fn normalize_prefix(prefix: &str) -> String {
    let mut words = prefix.split_whitespace();
    let Some(first) = words.next() else {
        return String::new();
    };
    std::iter::once(basename(first))
        .chain(words)
        .collect::<Vec<_>>()
        .join(" ")
}

fn basename(program: &str) -> &str {
    program
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(program)
}

/// Keywords that may stand before a command.
const KEYWORDS: [&str; 13] = [
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// The words of a command from its real program on: keywords, assignments and wrapper
/// programs (with their options) set aside.
fn unwrap(words: &[Word]) -> &[Word] {
    let mut rest = words;
    loop {
        let Some(first) = rest.first() else {
            return rest;
        };
        let text = first.text.as_str();
        if KEYWORDS.contains(&text) || is_assignment(first) {
            rest = &rest[1..];
            continue;
        }
        if first.expanded {
            return rest;
        }
        let taking: &[&str] = match basename(text) {
            "env" => &["-u", "-C", "--unset", "--chdir"],
            "sudo" | "doas" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            "command" | "nohup" | "builtin" => &[],
            "exec" => &["-a"],
            "nice" => &["-n"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "xargs" => &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"],
            _ => return rest,
        };
        let wrapper = basename(text);
        rest = &rest[1..];
        while let Some(word) = rest.first() {
            let t = word.text.as_str();
            if t == "--" {
                rest = &rest[1..];
                break;
            }
            if is_assignment(word) && wrapper == "env" {
                rest = &rest[1..];
            } else if taking.contains(&t) {
                rest = rest.get(2..).unwrap_or_default();
            } else if t.starts_with('-') && t.len() > 1 {
                rest = &rest[1..];
            } else {
                break;
            }
        }
        if wrapper == "timeout"
            && let Some(duration) = rest.first()
            && duration.text.starts_with(|c: char| c.is_ascii_digit())
        {
            rest = &rest[1..];
        }
    }
}

fn is_assignment(word: &Word) -> bool {
    match word.text.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

/// The script of `sh -c 'script'` (and the other shells), if `program` is a shell given one.
fn shell_script<'w>(program: &str, args: &'w [Word]) -> Option<&'w Word> {
    const SHELLS: [&str; 7] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh"];
    if !SHELLS.contains(&program) {
        return None;
    }
    let mut saw_c = false;
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let t = word.text.as_str();
        if t == "-o" || t == "+o" {
            words.next();
        } else if t.starts_with('-') && !t.starts_with("--") && t.len() > 1 {
            saw_c |= t[1..].contains('c');
        } else if t.starts_with("--") {
            continue;
        } else {
            return saw_c.then_some(word);
        }
    }
    None
}

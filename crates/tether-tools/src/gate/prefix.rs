//! Whether a shell line runs a command that starts with one of the `ask_before` prefixes.
//!
//! Each command of the line ([`split`]) is compared on its own, after the words that only wrap
//! another command are set aside: variable assignments (`A=1 git push`), `env`, `sudo`,
//! `command`, `exec`, `nohup`, `setsid`, `nice`, `timeout`, `xargs`, `time` and the shell's
//! keywords (`if`, `then`, `!`, `{`, …). A program named by its path counts as its name
//! (`/usr/bin/git push` is `git push`). The comparison is a plain prefix match of the words joined
//! by single spaces (so `git push` also matches `git push-all`: asking once too often is the
//! safe side).
//!
//! Commands run by other commands are compared too ([`super::indirect`]): the script of `sh -c
//! '…'` (and `bash -c`, …) is checked like a line, and the commands of `find`'s `-exec`,
//! `-execdir`, `-ok` and `-okdir` like commands of the line.
//!
//! When the line cannot be read with confidence, the answer is [`Verdict::Unsure`] and the
//! caller asks: an unclosed quote or substitution, `eval`, a program name computed by an
//! expansion (`$cmd push`), a shell given its script on standard input (`echo 'git push' | sh`,
//! `bash -s`, `bash <<< …`), `sh -c` with a computed script, or a command whose words up to a
//! computed one could still make up a prefix (`git $sub`, `echo push | xargs git`, `find …
//! -exec git {} \;`).

use super::indirect::{ShellInput, find_execs, shell_input, unwrap};
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

/// How deep `sh -c` scripts and `find -exec` commands are followed before giving up (and
/// asking).
const MAX_DEPTH: usize = 4;

fn check_normalized(line: &str, wanted: &[(&String, String)], depth: usize) -> Verdict {
    if depth > MAX_DEPTH {
        return unsure("it nests commands too deeply to follow");
    }
    let raw = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(found) = first_match(&raw, wanted) {
        return found;
    }
    let parsed = split(line);
    if let Some(reason) = parsed.unsure.first() {
        return unsure(&format!("{reason}, so its commands cannot be told apart"));
    }
    parsed
        .commands
        .iter()
        .find_map(|words| check_command(words, wanted, depth))
        .unwrap_or(Verdict::Clear)
}

/// One simple command against the prefixes: `None` when it is clear.
fn check_command(words: &[Word], wanted: &[(&String, String)], depth: usize) -> Option<Verdict> {
    if depth > MAX_DEPTH {
        return Some(unsure("it nests commands too deeply to follow"));
    }
    let words = unwrap(words);
    let program = words.first()?;
    if program.expanded {
        return Some(unsure(&format!(
            "its program name `{}` is computed when it runs",
            program.text
        )));
    }
    let name = basename(&program.text);
    if name == "eval" {
        return Some(unsure("it uses `eval`"));
    }
    match shell_input(name, &words[1..]) {
        Some(ShellInput::Script(script)) => match check_normalized(&script.text, wanted, depth + 1)
        {
            Verdict::Clear if !script.expanded => {}
            Verdict::Clear => return Some(unsure("it runs `sh -c` with a computed script")),
            found => return Some(found),
        },
        Some(ShellInput::Stdin) => {
            return Some(unsure(&format!(
                "it gives `{name}` its script on standard input (a pipe, a here-document or a \
                 file), which tether cannot read"
            )));
        }
        Some(ShellInput::File) | None => {}
    }
    for exec in find_execs(name, &words[1..]) {
        if let Some(found) = check_command(&exec, wanted, depth + 1) {
            return Some(found);
        }
    }
    let joined: Vec<&str> = std::iter::once(name)
        .chain(words[1..].iter().map(|w| w.text.as_str()))
        .collect();
    if let Some(found) = first_match(&joined.join(" "), wanted) {
        return Some(found);
    }
    computed_arguments(name, &words, wanted)
}

/// A command whose words before its first computed one could still be completed into a prefix
/// (`git $sub` against `git push`): what it runs is known only when it runs.
fn computed_arguments(name: &str, words: &[Word], wanted: &[(&String, String)]) -> Option<Verdict> {
    let first = words.iter().position(|w| w.expanded)?;
    let known = std::iter::once(name)
        .chain(words[1..first].iter().map(|w| w.text.as_str()))
        .collect::<Vec<_>>()
        .join(" ");
    let stem = format!("{known} ");
    let (given, _) = wanted.iter().find(|(_, p)| p.starts_with(&stem))?;
    Some(unsure(&format!(
        "`{known}` is given arguments computed when it runs, which may make it `{}`",
        given.trim()
    )))
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

pub(super) fn basename(program: &str) -> &str {
    program
        .rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(program)
}

//! The ways a command runs another command the line only names as data: wrappers (`sudo git
//! push`), programs that take a command as arguments (`find … -exec git push \;`, `xargs git
//! push`) and shells (`sh -c 'git push'`, or a script on standard input: `echo 'git push' | sh`).
//!
//! Each is taken apart here so the gate compares the command actually run: a wrapper is set
//! aside, `find`'s `-exec` commands are checked as commands of their own, `xargs`'s command gets
//! the arguments it appends from its input as computed words, and a shell's script is checked
//! like a line when the line shows it — or, when the shell reads it from its input, the gate
//! cannot tell and asks.

use super::line::Word;
use super::prefix::basename;

/// Keywords that may stand before a command.
const KEYWORDS: [&str; 13] = [
    "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
];

/// The shells whose scripts the gate reads (`-c`) or refuses to guess (standard input).
const SHELLS: [&str; 8] = ["sh", "bash", "dash", "zsh", "ksh", "ash", "mksh", "yash"];

/// `find`'s actions that run a command, up to `;` or `+`.
const FIND_EXECS: [&str; 4] = ["-exec", "-execdir", "-ok", "-okdir"];

/// The words of a command from its real program on: keywords, assignments and wrapper
/// programs (with their options) set aside. Behind `xargs`, the words the replace string
/// stands in (`-I {}`) are computed, and so, without one, is a last word for what it appends;
/// with no command at all, `xargs` runs `echo`.
pub(super) fn unwrap(words: &[Word]) -> Vec<Word> {
    let mut rest = words;
    let mut xargs: Option<Option<String>> = None;
    while let Some(first) = rest.first() {
        let text = first.text.as_str();
        if KEYWORDS.contains(&text) || is_assignment(first) {
            rest = &rest[1..];
            continue;
        }
        if first.expanded {
            break;
        }
        let taking: &[&str] = match basename(text) {
            "env" => &["-u", "-C", "--unset", "--chdir"],
            "sudo" | "doas" => &["-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T"],
            "command" | "nohup" | "builtin" | "setsid" => &[],
            "exec" => &["-a"],
            "nice" => &["-n"],
            "timeout" => &["-s", "-k", "--signal", "--kill-after"],
            "xargs" => &["-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"],
            _ => break,
        };
        let wrapper = basename(text);
        rest = &rest[1..];
        let mut replace = None;
        while let Some(word) = rest.first() {
            let t = word.text.as_str();
            if t == "--" {
                rest = &rest[1..];
                break;
            }
            if wrapper == "xargs" {
                replace = replace.or_else(|| replace_string(t, rest.get(1)));
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
        if wrapper == "xargs" {
            xargs = Some(replace);
        }
    }
    let mut out = rest.to_vec();
    if let Some(replace) = xargs {
        if out.is_empty() {
            out.push(literal("echo"));
        }
        match replace {
            Some(replace) => {
                for word in &mut out {
                    word.expanded |= word.text.contains(&replace);
                }
            }
            None => out.push(Word {
                text: "<input>".to_owned(),
                expanded: true,
            }),
        }
    }
    out
}

/// `xargs`'s replace string, if the option `t` (followed by `next`) sets one.
fn replace_string(t: &str, next: Option<&Word>) -> Option<String> {
    match t {
        "-I" => next.map(|w| w.text.clone()),
        "-i" | "--replace" => Some("{}".to_owned()),
        _ => t
            .strip_prefix("--replace=")
            .or_else(|| t.strip_prefix("-I"))
            .or_else(|| t.strip_prefix("-i"))
            .filter(|r| !r.is_empty())
            .map(str::to_owned),
    }
}

fn literal(text: &str) -> Word {
    Word {
        text: text.to_owned(),
        expanded: false,
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

/// Where a shell started by a command takes its script from.
pub(super) enum ShellInput<'w> {
    /// `sh -c 'script'`: the script is this word.
    Script(&'w Word),
    /// `sh`, `sh -s`, `… | sh`, `sh <<< …`, `sh < file`: its standard input, which the line
    /// does not show (a pipe's writer, a here-document or a file).
    Stdin,
    /// `sh script.sh`: a file (not read; see the README's limits).
    File,
}

/// Where the shell `program` (run with `args`) takes its script from, if it is a shell.
pub(super) fn shell_input<'w>(program: &str, args: &'w [Word]) -> Option<ShellInput<'w>> {
    if !SHELLS.contains(&program) {
        return None;
    }
    let (mut saw_c, mut saw_s) = (false, false);
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let t = word.text.as_str();
        if t == "-o" || t == "+o" {
            words.next();
        } else if t == "--version" || t == "--help" {
            return None;
        } else if t == "--" || t == "-" {
            return Some(operand(saw_c, saw_s, words.next()));
        } else if t.starts_with("--") {
            continue;
        } else if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            saw_c |= t[1..].contains('c');
            saw_s |= t[1..].contains('s');
        } else {
            return Some(operand(saw_c, saw_s, Some(word)));
        }
    }
    Some(operand(saw_c, saw_s, None))
}

/// A shell's script given its flags and first operand.
fn operand(saw_c: bool, saw_s: bool, first: Option<&Word>) -> ShellInput<'_> {
    match first {
        Some(word) if saw_c => ShellInput::Script(word),
        // `sh -c` with nothing after it fails; `sh -s args` reads its input.
        None if saw_c => ShellInput::File,
        Some(_) if !saw_s => ShellInput::File,
        _ => ShellInput::Stdin,
    }
}

/// The commands `find`'s `-exec`, `-execdir`, `-ok` and `-okdir` run (each up to its `;` or
/// `+`), with the file name `{}` as a computed word; empty for any other program.
pub(super) fn find_execs(program: &str, args: &[Word]) -> Vec<Vec<Word>> {
    if program != "find" {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if !FIND_EXECS.contains(&word.text.as_str()) {
            continue;
        }
        let command: Vec<Word> = words
            .by_ref()
            .take_while(|w| w.text != ";" && w.text != "+")
            .map(|w| Word {
                expanded: w.expanded || w.text.contains("{}"),
                text: w.text.clone(),
            })
            .collect();
        if !command.is_empty() {
            out.push(command);
        }
    }
    out
}

//! The completion scripts and the manual page are checked against the CLI's definition, as the
//! book's command reference is: walking `Cli::command()`, every command, subcommand and flag a
//! person sees in `--help` must be in each script and on the page (and a hidden one nowhere);
//! each script must be one its shell accepts (`bash -n`, `zsh -n`, `fish -n`: ./test.sh
//! installs them) and the page one groff renders without a warning.

use std::io::Write as _;
use std::process::{Command, Stdio};

use clap_complete::Shell;

use super::{command, completion_script, manual_page};

/// Every command a person sees, as its path from `tether` (`["plan", "new"]`), with the long
/// flags of its own (not the global ones, nor `--help`).
fn commands() -> Vec<(Vec<String>, Vec<String>)> {
    fn walk(cmd: &clap::Command, path: &[String], out: &mut Vec<(Vec<String>, Vec<String>)>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let mut at = path.to_vec();
            at.push(sub.get_name().to_owned());
            let longs = sub
                .get_arguments()
                .filter(|a| !a.is_hide_set() && !a.is_global_set() && a.get_id() != "help")
                .filter_map(|a| a.get_long().map(str::to_owned))
                .collect();
            out.push((at.clone(), longs));
            walk(sub, &at, out);
        }
    }
    let mut out = Vec::new();
    walk(&command(), &[], &mut out);
    out
}

/// How `shell`'s script spells the long flag `long`.
fn flag(shell: Shell, long: &str) -> String {
    match shell {
        Shell::Fish => format!("-l {long}"),
        _ => format!("--{long}"),
    }
}

/// How `shell`'s script spells the command at `path` where it completes its words.
fn command_mark(shell: Shell, path: &[String]) -> String {
    let name = &path[path.len() - 1];
    match shell {
        // Its case in the walk over the words typed: `tether__subcmd__plan,new)`.
        Shell::Bash => format!(",{name})"),
        // Its description under its parent: `'new:Plan mode…'`.
        Shell::Zsh => format!("'{name}:"),
        // `-a "new"` under its parent's condition.
        Shell::Fish => format!("-a \"{name}\""),
        // Its completion: `'tether;plan;new'`.
        Shell::Elvish => format!("'tether;{}'", path.join(";")),
        Shell::PowerShell => format!("'tether;{}'", path.join(";")),
        _ => name.clone(),
    }
}

const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::Elvish,
    Shell::PowerShell,
];

#[test]
fn every_script_names_every_command_subcommand_and_flag() {
    let commands = commands();
    assert!(commands.len() > 40, "{}", commands.len());
    for shell in SHELLS {
        let script = completion_script(shell);
        for (path, longs) in &commands {
            let mark = command_mark(shell, path);
            assert!(script.contains(&mark), "{shell}: {path:?} ({mark})");
            for long in longs {
                assert!(
                    script.contains(&flag(shell, long)),
                    "{shell}: {path:?} --{long}"
                );
            }
        }
        for global in ["workspace", "verbose", "help", "version"] {
            assert!(script.contains(&flag(shell, global)), "{shell}: --{global}");
        }
        // The hidden `gate` (an agent CLI's hook) and `mcp`'s hidden flags are not offered.
        assert!(!script.contains("gate"), "{shell}: offers `gate`");
        assert!(
            !script.contains("progress-ms"),
            "{shell}: offers a hidden flag"
        );
    }
}

/// Runs `program args… <script>` with `text` in a file, failing with its stderr.
fn accepted(program: &str, args: &[&str], text: &str) {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    let out = Command::new(program)
        .args(args)
        .arg(file.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{program} does not run ({e}): ./test.sh installs it"));
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn each_shell_accepts_its_script() {
    accepted("bash", &["-n"], &completion_script(Shell::Bash));
    accepted("zsh", &["-n"], &completion_script(Shell::Zsh));
    accepted("fish", &["-n"], &completion_script(Shell::Fish));
    // The check can fail: a script cut short is refused.
    let bash = completion_script(Shell::Bash);
    let cut = &bash[..bash.len() / 2];
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(cut.as_bytes()).unwrap();
    let out = Command::new("bash")
        .arg("-n")
        .arg(file.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
}

#[test]
fn the_page_names_every_command_and_flag_in_its_commands_section() {
    let page = String::from_utf8(manual_page().unwrap()).unwrap();
    assert!(
        page.lines().any(|l| l.starts_with(".TH tether 1 ")),
        "{page}"
    );
    let sections: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SH "))
        .map(|h| h.trim_matches('"'))
        .collect();
    assert_eq!(
        sections,
        [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "COMMANDS",
            "EXIT STATUS",
            "VERSION"
        ]
    );
    // One `.SS` per command, in the CLI's order, each followed by its flags as `.TP` items.
    let headings: Vec<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix(".SS "))
        .map(|h| h.trim_matches('"').to_owned())
        .collect();
    let commands = commands();
    let expected: Vec<String> = commands
        .iter()
        .map(|(path, _)| format!("tether {}", path.join(" ")))
        .collect();
    assert_eq!(headings, expected);
    let blocks: Vec<&str> = page.split("\n.SS ").skip(1).collect();
    for ((path, longs), block) in commands.iter().zip(blocks) {
        for long in longs {
            let roff = format!("\\-\\-{}", long.replace('-', "\\-"));
            assert!(block.contains(&roff), "{path:?}: {roff} in\n{block}");
        }
    }
    assert!(
        !page.contains("tether gate"),
        "the hidden `gate` is on the page"
    );
    assert!(page.is_ascii(), "the page needs an input encoding");
}

#[test]
fn groff_renders_the_page_without_a_warning() {
    let page = manual_page().unwrap();
    let mut groff = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("groff does not run ({e}): ./test.sh installs it"));
    groff.stdin.take().unwrap().write_all(&page).unwrap();
    let out = groff.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

//! `tether completions <shell>` and `tether man`, as a person installs them: the script on
//! stdout is taken by its shell and completes tether's commands and flags there (bash and fish
//! asked for completions of a partly typed line, zsh's parser), and the page on stdout is one
//! `man` renders. (That they name every command and flag of the CLI is checked against its
//! definition in the binary's own tests, `cmd/shell_tests.rs`.)

use std::process::Command;

use crate::common::{Out, cmd};

fn tether(args: &[&str]) -> Out {
    let dir = tempfile::tempdir().unwrap();
    let out = Out::new(dir.path(), &cmd(dir.path(), args).output().unwrap());
    assert_eq!((out.code, out.stderr.as_str()), (0, ""), "{args:?}");
    assert!(!out.stdout.is_empty(), "{args:?}");
    out
}

/// `shell args…` with the script at `script`; its stdout, failing the test when it fails.
fn shell(program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .env("HOME", std::env::temp_dir())
        .output()
        .unwrap_or_else(|e| panic!("{program} does not run ({e}): ./test.sh installs it"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{program} {args:?}: {}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn bash_completes_commands_subcommands_and_flags() {
    let script = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(script.path(), tether(&["completions", "bash"]).stdout).unwrap();
    let path = script.path().display().to_string();
    shell("bash", &["-n", &path]);
    let complete = |line: &str| {
        let words: Vec<&str> = line.split(' ').collect();
        shell(
            "bash",
            &[
                "-c",
                &format!(
                    "source {path}; COMP_WORDS=({}); COMP_CWORD={}; COMP_LINE='{line}'; \
                     COMP_POINT=${{#COMP_LINE}}; _tether tether '{}' '{}'; \
                     printf '%s\\n' \"${{COMPREPLY[@]}}\"",
                    words
                        .iter()
                        .map(|w| format!("'{w}'"))
                        .collect::<Vec<_>>()
                        .join(" "),
                    words.len() - 1,
                    words[words.len() - 1],
                    words[words.len() - 2],
                ),
            ],
        )
    };
    assert_eq!(complete("tether comp"), "completions\n");
    assert_eq!(complete("tether plan app"), "approve\n");
    assert!(
        complete("tether run --max-").lines().eq([
            "--max-iterations",
            "--max-tokens",
            "--max-cost",
            "--max-duration"
        ]),
        "{}",
        complete("tether run --max-")
    );
    assert_eq!(complete("tether completions z"), "zsh\n");
    assert_eq!(complete("tether init --agent c"), "claude\ncodex\n");
}

#[test]
fn fish_completes_commands_and_zsh_parses_its_script() {
    let fish = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(fish.path(), tether(&["completions", "fish"]).stdout).unwrap();
    let path = fish.path().display().to_string();
    shell("fish", &["-n", &path]);
    let said = shell(
        "fish",
        &["-c", &format!("source {path}; complete -C 'tether sch'")],
    );
    assert!(said.starts_with("schedule\t"), "{said}");
    let said = shell(
        "fish",
        &[
            "-c",
            &format!("source {path}; complete -C 'tether goal complete --ev'"),
        ],
    );
    assert!(said.starts_with("--evidence\t"), "{said}");

    let zsh = tempfile::NamedTempFile::new().unwrap();
    let script = tether(&["completions", "zsh"]).stdout;
    assert!(script.starts_with("#compdef tether\n"), "{script}");
    std::fs::write(zsh.path(), script).unwrap();
    shell("zsh", &["-n", &zsh.path().display().to_string()]);
    for other in ["elvish", "powershell"] {
        assert!(tether(&["completions", other]).stdout.contains("tether"));
    }
}

#[test]
fn man_renders_the_page_without_a_warning() {
    let page = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(page.path(), tether(&["man"]).stdout).unwrap();
    let out = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .arg(page.path())
        .output()
        .unwrap_or_else(|e| panic!("groff does not run ({e}): ./test.sh installs it"));
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "", "groff's warnings");
    let rendered = Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(page.path())
        .env("MANWIDTH", "100")
        .output()
        .unwrap();
    assert!(rendered.status.success());
    // Bold and underlined text comes as overstrikes (`c\x08c`): the characters shown.
    let mut text = String::new();
    for c in String::from_utf8_lossy(&rendered.stdout).chars() {
        if c == '\x08' {
            text.pop();
        } else {
            text.push(c);
        }
    }
    for expected in [
        "NAME",
        "SYNOPSIS",
        "COMMANDS",
        "tether plan new",
        "--max-iterations",
    ] {
        assert!(text.contains(expected), "{expected} in:\n{text}");
    }
}

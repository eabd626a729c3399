//! The command reference of the book (`docs/src/reference/commands.md`) is generated from this
//! CLI definition, so it cannot drift: this test fails when the file differs from what the
//! definition gives, and `TETHER_BLESS=1 cargo test -p tether --bin tether reference` rewrites it.

use std::fmt::Write as _;
use std::path::Path;

use clap::CommandFactory as _;

use super::Cli;

/// The reference: every command and subcommand with its whole `--help`, in the CLI's order.
fn reference() -> String {
    let mut cli = Cli::command().term_width(100).max_term_width(100);
    cli.build();
    let mut out = String::from(
        "# Command reference\n\n\
         <!-- Generated from the CLI definition (crates/tether/src/cli.rs) by \
         `TETHER_BLESS=1 cargo test -p tether --bin tether reference`; do not edit. -->\n\n\
         Every command's `--help`, as `tether` prints it. Exit codes: `0` done, `1` error, `2` \
         usage or configuration error, `3` budget spent, `4` paused or blocked waiting for a \
         person, `130` interrupted.\n",
    );
    section(&mut cli, "tether", &mut out);
    out
}

fn section(cmd: &mut clap::Command, path: &str, out: &mut String) {
    let help = cmd.render_long_help().to_string();
    let help: Vec<&str> = help.lines().map(str::trim_end).collect();
    let _ = write!(
        out,
        "\n## `{path}`\n\n```text\n{}\n```\n",
        help.join("\n").trim_end()
    );
    for sub in cmd.get_subcommands_mut() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        let name = format!("{path} {}", sub.get_name());
        section(sub, &name, out);
    }
}

#[test]
fn the_books_command_reference_is_generated_from_the_cli() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/src/reference/commands.md");
    let generated = reference();
    if std::env::var_os("TETHER_BLESS").is_some() {
        std::fs::write(&file, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is not what the CLI definition gives; regenerate it with \
         `TETHER_BLESS=1 cargo test -p tether --bin tether reference`",
        file.display()
    );
}

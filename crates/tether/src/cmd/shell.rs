//! `tether completions` and `tether man`: the shell's conventions, generated from the command
//! line's own definition (clap's generators), so they name what `tether` accepts today.

use anyhow::Result;
use clap::CommandFactory as _;
use roff::{Roff, bold, italic, roman};

use super::Ctx;
use crate::cli::{Cli, CompletionsArgs};
use crate::exit::Exit;

/// The command line as the generators read it: built, with no `help` subcommand (it is
/// `--help` in scripts and the page).
pub fn command() -> clap::Command {
    let mut cli = Cli::command().disable_help_subcommand(true);
    cli.build();
    cli
}

/// Prints the completion script for `args.shell`.
pub fn completions(ctx: &mut Ctx<'_>, args: &CompletionsArgs) -> Result<Exit> {
    ctx.out
        .write_all(completion_script(args.shell).as_bytes())?;
    Ok(Exit::Done)
}

/// The completion script of `shell`: the commands and arguments `--help` shows.
pub fn completion_script(shell: clap_complete::Shell) -> String {
    let mut cli = shown(&Cli::command()).disable_help_subcommand(true);
    cli.build();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut cli, "tether", &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// `cmd` without its hidden subcommands and arguments (clap's completion generators would offer
/// them: `tether gate`, the flags tether passes itself), read before the command line is built.
fn shown(cmd: &clap::Command) -> clap::Command {
    let args: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set())
        .cloned()
        .collect();
    let kept = |id: &clap::Id| args.iter().any(|a| a.get_id() == id);
    let groups: Vec<clap::ArgGroup> = cmd
        .get_groups()
        .filter(|g| g.get_args().all(kept))
        .cloned()
        .collect();
    let subcommands: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .map(shown)
        .collect();
    let mut out = clap::Command::new(cmd.get_name().to_owned())
        .args(args)
        .groups(groups)
        .subcommands(subcommands)
        .args_conflicts_with_subcommands(cmd.is_args_conflicts_with_subcommands_set());
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(version.to_owned());
    }
    out
}

/// Prints the manual page.
pub fn man(ctx: &mut Ctx<'_>) -> Result<Exit> {
    ctx.out.write_all(&manual_page()?)?;
    Ok(Exit::Done)
}

/// tether(1): clap_mangen's page of the top-level command (its name, synopsis, description and
/// global options) with a COMMANDS section holding every command and subcommand — its usage,
/// its description and its own arguments — in the command line's order, so one page says
/// everything; then the exit codes and the version. Characters beyond ASCII are written as
/// groff's escapes, so the page needs no input encoding.
pub fn manual_page() -> std::io::Result<Vec<u8>> {
    let cli = command();
    let man = clap_mangen::Man::new(cli.clone()).manual("tether manual");
    let mut page = Vec::new();
    man.render_title(&mut page)?;
    man.render_name_section(&mut page)?;
    man.render_synopsis_section(&mut page)?;
    man.render_description_section(&mut page)?;
    man.render_options_section(&mut page)?;
    let mut roff = Roff::default();
    roff.control("SH", ["COMMANDS"]);
    for sub in visible(&cli) {
        command_section(&mut roff, sub, "tether");
    }
    if let Some(exit) = cli.get_after_help() {
        roff.control("SH", ["EXIT STATUS"]);
        roff.text([roman(exit.to_string())]);
    }
    roff.to_writer(&mut page)?;
    man.render_version_section(&mut page)?;
    Ok(ascii(&String::from_utf8_lossy(&page)).into_bytes())
}

/// `text` with every character beyond ASCII written as groff's `\[uXXXX]`.
fn ascii(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
        } else {
            out.push_str(&format!("\\[u{:04X}]", u32::from(c)));
        }
    }
    out
}

/// The subcommands of `cmd` a person sees in `--help`.
fn visible(cmd: &clap::Command) -> impl Iterator<Item = &clap::Command> {
    cmd.get_subcommands().filter(|s| !s.is_hide_set())
}

/// `cmd`'s part of COMMANDS (`parent` is the command line before it), then its subcommands'.
fn command_section(roff: &mut Roff, cmd: &clap::Command, parent: &str) {
    let path = format!("{parent} {}", cmd.get_name());
    roff.control("SS", [path.as_str()]);
    let usage = cmd.clone().bin_name(&path).render_usage().to_string();
    let usage = usage.strip_prefix("Usage: ").unwrap_or(&usage);
    roff.text([bold(usage.trim())]);
    let about = cmd.get_long_about().or_else(|| cmd.get_about());
    for paragraph in about
        .map(|a| a.to_string())
        .unwrap_or_default()
        .split("\n\n")
    {
        roff.control("PP", []);
        roff.text([roman(paragraph.replace('\n', " ").trim())]);
    }
    // Its own arguments: the global ones and --help are the page's OPTIONS.
    let own = cmd
        .get_arguments()
        .filter(|a| !a.is_hide_set() && !a.is_global_set() && a.get_id() != "help");
    for arg in own {
        roff.control("TP", []);
        roff.text(argument(arg));
        let help = arg.get_long_help().or_else(|| arg.get_help());
        let mut text = help.map(|h| h.to_string()).unwrap_or_default();
        let values: Vec<String> = arg
            .get_possible_values()
            .iter()
            .filter(|v| !v.is_hide_set())
            .map(|v| v.get_name().to_owned())
            .collect();
        if !values.is_empty() && !arg.is_hide_possible_values_set() {
            text.push_str(&format!(" [possible values: {}]", values.join(", ")));
        }
        let defaults: Vec<String> = arg
            .get_default_values()
            .iter()
            .map(|v| v.to_string_lossy().into_owned())
            .collect();
        if !defaults.is_empty()
            && !arg.is_hide_default_value_set()
            && arg.get_action().takes_values()
        {
            text.push_str(&format!(" [default: {}]", defaults.join(", ")));
        }
        roff.text([roman(text.replace('\n', " ").trim())]);
    }
    for sub in visible(cmd) {
        command_section(roff, sub, &path);
    }
}

/// How an argument is written: `-s, --long <VALUE>` in bold with its value in italics, or a
/// positional's `<VALUE>`.
fn argument(arg: &clap::Arg) -> Vec<roff::Inline> {
    let value = || {
        let names = arg
            .get_value_names()
            .map(|v| v.iter().map(ToString::to_string).collect::<Vec<_>>())
            .unwrap_or_else(|| vec![arg.get_id().to_string().to_uppercase()]);
        format!("<{}>", names.join("> <"))
    };
    let mut out = Vec::new();
    if arg.is_positional() {
        out.push(italic(value()));
        return out;
    }
    let mut flags = Vec::new();
    if let Some(short) = arg.get_short() {
        flags.push(format!("-{short}"));
    }
    if let Some(long) = arg.get_long() {
        flags.push(format!("--{long}"));
    }
    out.push(bold(flags.join(", ")));
    if arg.get_action().takes_values() {
        out.push(roman(" "));
        out.push(italic(value()));
    }
    out
}

#[cfg(test)]
#[path = "shell_tests.rs"]
mod tests;

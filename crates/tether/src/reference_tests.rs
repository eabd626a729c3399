//! The book's references are generated from the code, so they cannot drift: the command
//! reference (`docs/src/reference/commands.md`) from this CLI definition, the configuration
//! reference (`docs/src/reference/configuration.md`) from the template `tether init` writes,
//! assembled from the runtime's schema (the core tables and every table the channels and sinks
//! declare; tether-config's tests hold it to the schema, key by key). These tests fail when a
//! file differs from what the code gives; `TETHER_BLESS=1 cargo test -p tether --bin tether
//! reference` rewrites them.

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

/// The book's configuration reference: the template of `schema`, a section per table, each with
/// the template's own comments (so the book says what `tether init` writes, word for word).
fn configuration(schema: &tether_config::Schema) -> String {
    let mut out = String::from(
        "# Configuration reference\n\n\
         <!-- Generated from the configuration schema's template \
         (crates/tether-config/src/template.rs, with each channel's table as \
         crates/tether-human/src/tables/ declares it) by \
         `TETHER_BLESS=1 cargo test -p tether --bin tether reference`; do not edit. -->\n\n\
         `tether.toml` at the workspace root; `tether init` writes it with every setting below, \
         commented. Unknown keys are errors (the closest valid key is suggested), and `tether \
         validate` names every problem with its file, line and key. Keys never live in the \
         file: a setting ending in `_env` names the environment variable that holds one.\n",
    );
    for paragraph in schema.template().split("\n\n") {
        let table = paragraph.lines().find_map(|line| {
            let line = line.strip_prefix("# ").unwrap_or(line);
            line.strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        });
        let heading = match table {
            Some(name) => format!("`[{name}]`"),
            None if paragraph.contains("\nplan = ") => "Top level".to_owned(),
            None => continue,
        };
        let _ = write!(
            out,
            "\n## {heading}\n\n```toml\n{}\n```\n",
            paragraph.trim_end()
        );
    }
    out
}

/// Fails unless `file` (from the repository's root) holds `generated`; rewrites it first with
/// `TETHER_BLESS` set.
fn check_or_bless(file: &str, generated: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(file);
    if std::env::var_os("TETHER_BLESS").is_some() {
        std::fs::write(&path, generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{file} is not what the code gives; regenerate it with \
         `TETHER_BLESS=1 cargo test -p tether --bin tether reference`"
    );
}

#[test]
fn the_books_command_reference_is_generated_from_the_cli() {
    check_or_bless("docs/src/reference/commands.md", &reference());
}

#[test]
fn the_books_configuration_reference_is_generated_from_the_template() {
    let generated = configuration(tether_runtime::schema());
    for table in [
        "model", "judge", "loop", "human", "executor", "sandbox", "run",
    ] {
        assert!(generated.contains(&format!("## `[{table}]`")), "[{table}]");
    }
    check_or_bless("docs/src/reference/configuration.md", &generated);
}

/// A sink declared for this test only, as a channel's module declares its table.
const TEST_SINK: tether_config::TableDecl = tether_config::TableDecl {
    name: "test_sink",
    intro: "A sink of this test's registry.",
    role: tether_config::Role::Sink { arg: None },
    keys: &[tether_config::KeyDecl::new(
        "token_env",
        "The NAME of the variable holding its token.",
        "\"TEST_SINK_TOKEN\"",
        "\"OTHER_TOKEN\"",
    )
    .active()
    .secret_var(Some("TEST_SINK_TOKEN"))],
    advice: Some("token_env"),
    read: |t| std::sync::Arc::new(t.secret_var("token_env")),
    default: || std::sync::Arc::new(Some("TEST_SINK_TOKEN".to_owned())),
};

#[test]
fn a_table_added_to_a_registry_is_in_the_reference_and_the_checks_with_no_other_edit() {
    let schema = tether_runtime::schema().clone().with([&TEST_SINK]);
    let reference = configuration(&schema);
    assert!(
        reference.contains(
            "## `[test_sink]`\n\n```toml\n# A sink of this test's registry.\n[test_sink]\n\
             # The NAME of the variable holding its token.\ntoken_env = \"TEST_SINK_TOKEN\"\n```"
        ),
        "{reference}"
    );
    let text = "[human]\nchannels = [\"test_sink\"]\n[test_sink]\ntoken = \"x\"\n";
    let err = tether_config::parse(
        &schema,
        text,
        std::path::Path::new("tether.toml"),
        &tether_config::MapEnv::new(),
    )
    .unwrap_err();
    assert_eq!(
        err.problems()[0].to_string(),
        "tether.toml:4: test_sink.token: API keys never live in files; remove `token`, then set \
         the environment variable TEST_SINK_TOKEN instead (named by `test_sink.token_env`)"
    );
    let config = tether_config::Config::defaults(&schema);
    assert!(config.key_vars().contains(&"TEST_SINK_TOKEN".to_owned()));
    assert!(schema.key_settings().contains(&("test_sink", "token_env")));
}

//! Which model provider Codex will use, and the variables its key comes from, read from
//! Codex's own configuration the way Codex reads it: `$CODEX_HOME/config.toml`, the profile
//! `--profile`/`-p` selects (`<profile>.config.toml` beside it, layered over it; or, before
//! Codex 0.171, a `[profiles.<name>]` table selected by the flag or a top-level `profile`), then
//! the `-c key=value` overrides of the command line (the value TOML, else the raw string).
//! The provider is `model_provider` (a legacy profile's first), default `openai`; a built-in
//! provider (`openai`, `ollama`, `lmstudio`, `amazon-bedrock`) names no variable, a configured
//! one `[model_providers.<id>] env_key` and the values of its `env_http_headers`.

use std::path::Path;

use toml::{Table, Value};

use crate::cli::key::{ConfigFileError, ProviderKey, is_var_name, read_config};

/// Codex's provider when nothing names one.
const DEFAULT_PROVIDER: &str = "openai";

/// Codex's built-in providers and how each reaches its model without a variable of its own.
const BUILTIN: [(&str, &str); 4] = [
    (
        "openai",
        "Codex's login (`codex login`), or OPENAI_API_KEY or CODEX_API_KEY",
    ),
    ("ollama", "a local server, with no key"),
    ("lmstudio", "a local server, with no key"),
    (
        "amazon-bedrock",
        "AWS credentials (AWS_PROFILE, AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, \
         AWS_BEARER_TOKEN_BEDROCK, ~/.aws)",
    ),
];

/// The provider Codex run with `args` under the configuration directory `home`
/// (`CODEX_HOME`) will use, and the variables its key comes from.
pub fn provider_key(home: &Path, args: &[String]) -> ProviderKey {
    let mut notes = Vec::new();
    let cli = CommandLine::parse(args, &mut notes);
    let root = layered(home, &cli, &mut notes);
    let profile_name = cli
        .profile
        .clone()
        .or_else(|| string_at(&root, &["profile"]));
    let legacy_profile = profile_name
        .as_deref()
        .and_then(|name| string_at(&root, &["profiles", name, "model_provider"]));
    let id = legacy_profile
        .or_else(|| string_at(&root, &["model_provider"]))
        .unwrap_or_else(|| DEFAULT_PROVIDER.to_owned());
    let mut key = ProviderKey {
        provider: Some(id.clone()),
        ..ProviderKey::default()
    };
    if let Some((_, how)) = BUILTIN.iter().find(|(name, _)| *name == id) {
        key.builtin = Some(how);
    } else if let Some(table) = table_at(&root, &["model_providers", &id]) {
        configured(&id, table, &mut key, &mut notes);
    } else {
        notes.push(format!(
            "Codex's provider `{id}` is not built in and has no [model_providers.{id}] in {}",
            home.join("config.toml").display()
        ));
    }
    key.notes = notes;
    key
}

/// A configured provider's `env_key` and `env_http_headers`.
fn configured(id: &str, table: &Table, key: &mut ProviderKey, notes: &mut Vec<String>) {
    match table.get("env_key") {
        Some(Value::String(var)) if is_var_name(var) => {
            key.key_var = Some(var.clone());
            key.required = true;
        }
        Some(other) => {
            let shown = other
                .as_str()
                .map_or_else(|| format!("a {}", other.type_str()), |s| format!("{s:?}"));
            notes.push(format!(
                "[model_providers.{id}] env_key is not a variable name: {shown}"
            ));
        }
        None => {}
    }
    if let Some(Value::Table(headers)) = table.get("env_http_headers") {
        key.other_vars.extend(
            headers
                .values()
                .filter_map(Value::as_str)
                .filter(|v| is_var_name(v))
                .map(str::to_owned),
        );
    }
}

/// What Codex's command line says about its configuration.
#[derive(Debug, Default)]
struct CommandLine {
    /// `--profile`/`-p`, the last one.
    profile: Option<String>,
    /// `-c`/`--config` overrides in order: the dotted key and the raw value.
    overrides: Vec<(String, String)>,
}

impl CommandLine {
    fn parse(args: &[String], notes: &mut Vec<String>) -> Self {
        let mut out = CommandLine::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let (flag, attached) = split_flag(arg);
            let Some(flag) = flag else { continue };
            let value = match attached {
                Some(value) => Some(value.to_owned()),
                None => args.next().cloned(),
            };
            let Some(value) = value else { break };
            match flag {
                Flag::Profile => out.profile = Some(value),
                Flag::Config => match value.split_once('=') {
                    Some((k, v)) => out.overrides.push((k.trim().to_owned(), v.to_owned())),
                    None => notes.push(format!(
                        "the Codex argument `-c {value}` is not key=value: ignored"
                    )),
                },
            }
        }
        out
    }
}

#[derive(Debug, Clone, Copy)]
enum Flag {
    Profile,
    Config,
}

/// The configuration flag `arg` is, and its value when attached (`--profile=x`, `-px`).
fn split_flag(arg: &str) -> (Option<Flag>, Option<&str>) {
    for (long, short, flag) in [
        ("--profile", "-p", Flag::Profile),
        ("--config", "-c", Flag::Config),
    ] {
        if arg == long || arg == short {
            return (Some(flag), None);
        }
        if let Some(value) = arg.strip_prefix(long).and_then(|r| r.strip_prefix('=')) {
            return (Some(flag), Some(value));
        }
        if let Some(value) = arg.strip_prefix(short).filter(|r| !r.is_empty()) {
            return (Some(flag), Some(value.strip_prefix('=').unwrap_or(value)));
        }
    }
    (None, None)
}

/// `config.toml`, the selected profile's file over it, the overrides over both.
fn layered(home: &Path, cli: &CommandLine, notes: &mut Vec<String>) -> Table {
    let mut root = read_toml(&home.join("config.toml"), notes).unwrap_or_default();
    let profile = cli.profile.as_deref().filter(|p| is_file_stem(p));
    if let Some(layer) =
        profile.and_then(|profile| read_toml(&home.join(format!("{profile}.config.toml")), notes))
    {
        merge(&mut root, layer);
    }
    for (path, raw) in &cli.overrides {
        set(&mut root, path, parse_value(raw));
    }
    root
}

/// The TOML file at `path`; `None` (with a note when it is there but unreadable) otherwise.
fn read_toml(path: &Path, notes: &mut Vec<String>) -> Option<Table> {
    let parsed = read_config(path).and_then(|text| {
        text.map(|t| {
            t.parse::<Table>().map_err(|e| ConfigFileError::Parse {
                path: path.to_owned(),
                detail: e.to_string().trim().to_owned(),
            })
        })
        .transpose()
    });
    match parsed {
        Ok(table) => table,
        Err(e) => {
            notes.push(format!(
                "Codex's configuration was not read ({e}); assuming Codex's defaults"
            ));
            None
        }
    }
}

/// A profile name usable as a file name beside `config.toml`.
fn is_file_stem(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// `over` merged into `base`, tables key by key, anything else replaced.
fn merge(base: &mut Table, over: Table) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Table(into)), Value::Table(from)) => merge(into, from),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

/// Sets the dotted `path` of `root` to `value`, making tables on the way.
fn set(root: &mut Table, path: &str, value: Value) {
    let parts: Vec<&str> = path.split('.').map(str::trim).collect();
    let Some((last, parents)) = parts.split_last() else {
        return;
    };
    let mut table = root;
    for part in parents {
        let entry = table
            .entry((*part).to_owned())
            .or_insert_with(|| Value::Table(Table::new()));
        if !entry.is_table() {
            *entry = Value::Table(Table::new());
        }
        let Value::Table(next) = entry else { return };
        table = next;
    }
    table.insert((*last).to_owned(), value);
}

/// An override's value as Codex reads it: TOML, else the raw string (trimmed, unquoted).
fn parse_value(raw: &str) -> Value {
    let wrapped = format!("value = {raw}");
    match wrapped.parse::<Table>() {
        Ok(mut table) => table
            .remove("value")
            .unwrap_or_else(|| Value::String(raw.to_owned())),
        Err(_) => Value::String(raw.trim().trim_matches(['"', '\'']).to_owned()),
    }
}

fn table_at<'a>(root: &'a Table, path: &[&str]) -> Option<&'a Table> {
    let (first, rest) = path.split_first()?;
    let mut table = root.get(*first)?.as_table()?;
    for part in rest {
        table = table.get(*part)?.as_table()?;
    }
    Some(table)
}

fn string_at(root: &Table, path: &[&str]) -> Option<String> {
    let (last, parents) = path.split_last()?;
    let table = if parents.is_empty() {
        root
    } else {
        table_at(root, parents)?
    };
    table.get(*last)?.as_str().map(str::to_owned)
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;

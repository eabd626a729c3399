use std::path::Path;

use super::{provider_key, template_vars};
use crate::cli::key::ProviderKey;

fn agent_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn key(dir: &Path, args: &[&str]) -> ProviderKey {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    provider_key(Some(dir), &args)
}

const MODELS: &str = r#"{"providers": {
  "proxy": {"baseUrl": "http://proxy", "api": "openai-completions",
            "apiKey": "${PROXY_KEY}", "headers": {"X-Team": "team-$TEAM_ID"},
            "models": [{"id": "m", "headers": {"X-M": "$$literal ${MODEL_HDR}"}}]},
  "local": {"baseUrl": "http://local", "apiKey": "ollama"},
  "vault": {"baseUrl": "http://vault", "apiKey": "!vault read -field=key $SECRET_PATH"}
}}"#;

#[test]
fn values_interpolate_variables_as_pi_does() {
    assert_eq!(template_vars("$OPENROUTER_API_KEY"), ["OPENROUTER_API_KEY"]);
    assert_eq!(template_vars("Bearer ${A}-$B.c"), ["A", "B"]);
    assert_eq!(
        template_vars("$$NOT $!NOT ${bad-name} $1x $"),
        [] as [&str; 0]
    );
    assert_eq!(template_vars("!echo $CMD_VAR"), [] as [&str; 0]);
    assert_eq!(template_vars("sk-literal"), [] as [&str; 0]);
}

#[test]
fn the_selected_providers_api_key_variable_is_required_and_every_named_one_passed() {
    let dir = agent_dir(&[
        ("models.json", MODELS),
        ("settings.json", r#"{"defaultProvider": "proxy"}"#),
    ]);
    let found = key(dir.path(), &[]);
    assert_eq!(found.provider.as_deref(), Some("proxy"));
    assert_eq!(found.key_var.as_deref(), Some("PROXY_KEY"));
    assert!(found.required && found.notes.is_empty(), "{found:?}");
    assert_eq!(found.vars(), ["PROXY_KEY", "TEAM_ID", "MODEL_HDR"]);
}

#[test]
fn the_command_line_chooses_the_provider_before_the_settings() {
    let dir = agent_dir(&[
        ("models.json", MODELS),
        ("settings.json", r#"{"defaultProvider": "proxy"}"#),
    ]);
    let local = key(dir.path(), &["--provider", "local"]);
    assert_eq!(
        (local.provider.as_deref(), local.key_var.as_deref()),
        (Some("local"), None)
    );
    assert!(local.builtin.unwrap().contains("literal"), "{local:?}");
    let routed = key(
        dir.path(),
        &["--model", "openrouter/anthropic/claude-sonnet-4"],
    );
    assert_eq!(
        (routed.provider.as_deref(), routed.key_var.as_deref()),
        (Some("openrouter"), Some("OPENROUTER_API_KEY"))
    );
    assert!(!routed.required, "pi's login may stand in");
    // A model id with a slash that is no provider leaves the settings' choice.
    let plain = key(dir.path(), &["--model", "meta-llama/llama-4"]);
    assert_eq!(plain.provider.as_deref(), Some("proxy"));
    let inline = key(dir.path(), &["--api-key", "sk-x"]);
    assert_eq!(inline.key_var, None);
    assert_eq!(inline.builtin, Some("the --api-key argument"));
}

#[test]
fn a_built_in_provider_reads_its_own_variables() {
    let dir = agent_dir(&[("settings.json", r#"{"defaultProvider": "anthropic"}"#)]);
    let found = key(dir.path(), &[]);
    assert_eq!(
        found.vars(),
        [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_OAUTH_TOKEN"
        ]
    );
    let groq = key(dir.path(), &["--provider", "groq"]);
    assert_eq!(groq.vars(), ["GROQ_API_KEY"]);
}

#[test]
fn without_a_choice_pi_picks_itself_and_only_models_json_names_variables() {
    let dir = agent_dir(&[("models.json", MODELS)]);
    let found = key(dir.path(), &[]);
    assert_eq!(
        (found.provider.as_deref(), found.key_var.as_deref()),
        (None, None)
    );
    assert_eq!(found.vars(), ["PROXY_KEY", "TEAM_ID", "MODEL_HDR"]);
    let none = provider_key(None, &[]);
    assert_eq!(none, ProviderKey::default());
}

#[test]
fn an_invalid_file_falls_back_to_the_defaults_with_a_note() {
    let dir = agent_dir(&[("models.json", "{ not json"), ("settings.json", "{}")]);
    let found = key(dir.path(), &["--provider", "xai"]);
    assert_eq!(found.key_var.as_deref(), Some("XAI_API_KEY"));
    let note = &found.notes[0];
    assert!(
        note.starts_with("pi's configuration was not read (")
            && note.contains("models.json does not parse")
            && note.ends_with("assuming pi's defaults"),
        "{note}"
    );
}

use std::path::Path;

use super::provider_key;
use crate::cli::key::ProviderKey;

const OPENROUTER: &str = "model_provider = \"openrouter\"\n\
    [model_providers.openrouter]\nname = \"OpenRouter\"\n\
    base_url = \"https://openrouter.ai/api/v1\"\nenv_key = \"OPENROUTER_API_KEY\"\n\
    [model_providers.azure]\nbase_url = \"https://x.openai.azure.com/openai\"\n\
    env_key = \"AZURE_OPENAI_API_KEY\"\n";

fn home(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn key(home: &Path, args: &[&str]) -> ProviderKey {
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    provider_key(home, &args)
}

/// The provider and the variable its key comes from.
fn provider(key: &ProviderKey) -> (Option<&str>, Option<&str>) {
    (key.provider.as_deref(), key.key_var.as_deref())
}

#[test]
fn a_configured_provider_names_its_key_variable() {
    let dir = home(&[("config.toml", OPENROUTER)]);
    let found = key(dir.path(), &[]);
    assert_eq!(
        provider(&found),
        (Some("openrouter"), Some("OPENROUTER_API_KEY"))
    );
    assert!(found.required && found.notes.is_empty(), "{found:?}");
    assert_eq!(found.vars(), ["OPENROUTER_API_KEY"]);
}

#[test]
fn without_a_config_codex_uses_openai_with_its_login_or_openai_api_key() {
    let dir = home(&[]);
    let found = key(dir.path(), &[]);
    assert_eq!(provider(&found), (Some("openai"), None));
    assert!(found.builtin.unwrap().contains("OPENAI_API_KEY"));
    assert!(!found.required && found.vars().is_empty() && found.notes.is_empty());
}

#[test]
fn built_in_providers_name_no_variable_even_when_redefined() {
    let config = "model_provider = \"ollama\"\n[model_providers.ollama]\nenv_key = \"NOPE\"\n";
    let dir = home(&[("config.toml", config)]);
    let found = key(dir.path(), &[]);
    assert_eq!(provider(&found), (Some("ollama"), None));
    assert_eq!(found.builtin, Some("a local server, with no key"));
    let bedrock = key(dir.path(), &["-c", "model_provider=amazon-bedrock"]);
    assert!(bedrock.builtin.unwrap().contains("AWS_PROFILE"));
}

#[test]
fn a_profile_file_is_layered_over_config_toml() {
    let dir = home(&[
        ("config.toml", OPENROUTER),
        ("work.config.toml", "model_provider = \"azure\"\n"),
        (
            "keyed.config.toml",
            "[model_providers.openrouter]\nenv_key = \"OR_WORK_KEY\"\n",
        ),
    ]);
    for args in [
        &["--profile", "work"][..],
        &["-p", "work"],
        &["--profile=work"],
        &["-pwork"],
    ] {
        assert_eq!(
            provider(&key(dir.path(), args)),
            (Some("azure"), Some("AZURE_OPENAI_API_KEY")),
            "{args:?}"
        );
    }
    // Tables merge key by key: the profile changes only the variable.
    assert_eq!(
        provider(&key(dir.path(), &["-p", "keyed"])),
        (Some("openrouter"), Some("OR_WORK_KEY"))
    );
    // A profile without its file changes nothing, as in Codex.
    assert_eq!(
        provider(&key(dir.path(), &["-p", "none"])),
        (Some("openrouter"), Some("OPENROUTER_API_KEY"))
    );
}

#[test]
fn a_legacy_profile_table_is_selected_by_the_top_level_profile_or_the_flag() {
    let config = format!(
        "profile = \"cloud\"\n{OPENROUTER}\
         [profiles.cloud]\nmodel_provider = \"azure\"\n\
         [profiles.local]\nmodel_provider = \"ollama\"\n"
    );
    let dir = home(&[("config.toml", &config)]);
    assert_eq!(
        provider(&key(dir.path(), &[])),
        (Some("azure"), Some("AZURE_OPENAI_API_KEY"))
    );
    assert_eq!(
        provider(&key(dir.path(), &["-p", "local"])),
        (Some("ollama"), None)
    );
    assert_eq!(
        provider(&key(dir.path(), &["-c", "profile=local"])),
        (Some("ollama"), None)
    );
}

#[test]
fn overrides_on_the_command_line_win() {
    let dir = home(&[("config.toml", OPENROUTER)]);
    for args in [
        &["-c", "model_provider=azure"][..],
        &["-c", "model_provider=\"azure\""],
        &["--config", "model_provider=azure"],
        &["--config=model_provider=azure"],
        &["-cmodel_provider=azure"],
    ] {
        assert_eq!(
            provider(&key(dir.path(), args)),
            (Some("azure"), Some("AZURE_OPENAI_API_KEY")),
            "{args:?}"
        );
    }
    assert_eq!(
        provider(&key(
            dir.path(),
            &["-c", "model_providers.openrouter.env_key=MY_KEY"]
        )),
        (Some("openrouter"), Some("MY_KEY"))
    );
    // A provider defined on the command line alone.
    let args = [
        "-c",
        "model_provider=x",
        "-c",
        "model_providers.x={ name = \"X\", base_url = \"http://x\", env_key = \"X_KEY\" }",
    ];
    assert_eq!(
        provider(&key(dir.path(), &args)),
        (Some("x"), Some("X_KEY"))
    );
    // Other arguments are left alone; the last flag wins.
    let args = ["-m", "gpt-5", "--json", "-c", "model_provider=openai"];
    assert_eq!(provider(&key(dir.path(), &args)), (Some("openai"), None));
}

#[test]
fn header_variables_are_passed_with_the_key() {
    let config = "model_provider = \"h\"\n[model_providers.h]\nenv_key = \"H_KEY\"\n\
                  env_http_headers = { \"X-Org\" = \"H_ORG\", \"X-Bad\" = \"not a name\" }\n";
    let dir = home(&[("config.toml", config)]);
    assert_eq!(key(dir.path(), &[]).vars(), ["H_KEY", "H_ORG"]);
}

#[test]
fn an_invalid_or_unreadable_config_falls_back_to_the_defaults_with_a_note() {
    let dir = home(&[("config.toml", "model_provider = [\n")]);
    let found = key(dir.path(), &[]);
    assert_eq!(provider(&found), (Some("openai"), None));
    let note = &found.notes[0];
    assert!(
        note.starts_with("Codex's configuration was not read (")
            && note.contains("config.toml does not parse")
            && note.ends_with("assuming Codex's defaults"),
        "{note}"
    );
    let dir = home(&[]);
    std::fs::create_dir(dir.path().join("config.toml")).unwrap();
    let found = key(dir.path(), &[]);
    assert!(
        found.notes[0].contains("is not a regular file"),
        "{found:?}"
    );
}

#[test]
fn an_unknown_provider_or_a_bad_flag_is_noted() {
    let dir = home(&[("config.toml", "model_provider = \"gone\"\n")]);
    let found = key(dir.path(), &["-c", "novalue"]);
    assert_eq!(provider(&found), (Some("gone"), None));
    assert_eq!(found.notes.len(), 2, "{:?}", found.notes);
    assert!(found.notes[0].contains("`-c novalue` is not key=value"));
    assert!(
        found.notes[1]
            .contains("provider `gone` is not built in and has no [model_providers.gone]")
    );
}

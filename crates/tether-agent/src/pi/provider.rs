//! Which provider pi will use, and the variables its key comes from, read from pi's own agent
//! directory: the provider is `--provider` (or the `provider/` of `--model`) in the arguments,
//! else `defaultProvider` in `settings.json`; `models.json` may give a provider an `apiKey` (and
//! header values) interpolating variables (`"$NAME"`, `"${NAME}"`; `"!command"` runs a command
//! and names none), else a built-in provider reads its own variable (`OPENROUTER_API_KEY`…) or
//! pi's login.
//!
//! A project's `.pi/settings.json` is not read: it is in the agent's reach, and must not choose
//! which of the user's variables reach the agent.

use std::path::Path;

use serde_json::Value;

use crate::cli::key::{ConfigFileError, ProviderKey, is_var_name, read_config};

/// pi's built-in providers that read their key from variables of their own (pi 1.6's
/// table; the first is the key's), when no login (`/login`, `auth.json`) stands in for them.
const BUILTIN: &[(&str, &[&str])] = &[
    ("github-copilot", &["COPILOT_GITHUB_TOKEN"]),
    (
        "anthropic",
        &[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_OAUTH_TOKEN",
        ],
    ),
    ("ant-ling", &["ANT_LING_API_KEY"]),
    (
        "qwen-token-plan",
        &["QWEN_TOKEN_PLAN_TEAM_API_KEY", "QWEN_TOKEN_PLAN_API_KEY"],
    ),
    (
        "qwen-token-plan-cn",
        &[
            "QWEN_TOKEN_PLAN_TEAM_CN_API_KEY",
            "QWEN_TOKEN_PLAN_CN_API_KEY",
        ],
    ),
    (
        "qwen-token-plan-individual",
        &[
            "QWEN_TOKEN_PLAN_INDIVIDUAL_API_KEY",
            "QWEN_TOKEN_PLAN_API_KEY",
        ],
    ),
    (
        "qwen-token-plan-individual-cn",
        &[
            "QWEN_TOKEN_PLAN_INDIVIDUAL_CN_API_KEY",
            "QWEN_TOKEN_PLAN_CN_API_KEY",
        ],
    ),
    ("openai", &["OPENAI_API_KEY"]),
    ("azure", &["AZURE_OPENAI_API_KEY"]),
    ("nvidia", &["NVIDIA_API_KEY"]),
    ("deepseek", &["DEEPSEEK_API_KEY"]),
    ("google", &["GEMINI_API_KEY"]),
    ("google-vertex", &["GOOGLE_CLOUD_API_KEY"]),
    ("groq", &["GROQ_API_KEY"]),
    ("cerebras", &["CEREBRAS_API_KEY"]),
    ("xai", &["XAI_API_KEY"]),
    ("typesafe", &["TYPESAFE_API_KEY"]),
    ("radius", &["RADIUS_API_KEY"]),
    ("openrouter", &["OPENROUTER_API_KEY"]),
    ("vercel-ai-gateway", &["AI_GATEWAY_API_KEY"]),
    ("zai", &["ZAI_API_KEY"]),
    ("zai-coding-cn", &["ZAI_CODING_CN_API_KEY"]),
    ("mistral", &["MISTRAL_API_KEY"]),
    ("minimax", &["MINIMAX_API_KEY"]),
    ("minimax-cn", &["MINIMAX_CN_API_KEY"]),
    ("moonshotai", &["MOONSHOT_API_KEY"]),
    ("moonshotai-cn", &["MOONSHOT_API_KEY"]),
    ("huggingface", &["HF_TOKEN"]),
    ("fireworks", &["FIREWORKS_API_KEY"]),
    ("together", &["TOGETHER_API_KEY"]),
    ("baseten", &["BASETEN_API_KEY"]),
    ("opencode", &["OPENCODE_API_KEY"]),
    ("opencode-go", &["OPENCODE_API_KEY"]),
    ("kimi-coding", &["KIMI_API_KEY"]),
    ("meta", &["META_API_KEY"]),
    ("cloudflare-workers-ai", &["CLOUDFLARE_API_KEY"]),
    ("cloudflare-ai-gateway", &["CLOUDFLARE_API_KEY"]),
    ("xiaomi", &["XIAOMI_API_KEY"]),
    ("xiaomi-token-plan-cn", &["XIAOMI_TOKEN_PLAN_CN_API_KEY"]),
    ("xiaomi-token-plan-ams", &["XIAOMI_TOKEN_PLAN_AMS_API_KEY"]),
    ("xiaomi-token-plan-sgp", &["XIAOMI_TOKEN_PLAN_SGP_API_KEY"]),
];

/// How a built-in provider reaches its model when its variable is unset.
const LOGIN: &str = "pi's login (`/login`, kept in auth.json)";

/// The provider pi run with `args` and the agent directory `agent_dir` will use, and the
/// variables its key comes from; every variable `models.json` interpolates is passed too.
pub fn provider_key(agent_dir: Option<&Path>, args: &[String]) -> ProviderKey {
    let mut notes = Vec::new();
    let read = |name: &str, notes: &mut Vec<String>| {
        agent_dir.and_then(|dir| read_json(&dir.join(name), notes))
    };
    let models = read("models.json", &mut notes).unwrap_or(Value::Null);
    let settings = read("settings.json", &mut notes).unwrap_or(Value::Null);
    let providers = models.get("providers").and_then(Value::as_object);
    let known = |id: &str| {
        providers.is_some_and(|p| p.contains_key(id)) || BUILTIN.iter().any(|(b, _)| *b == id)
    };
    let cli = CommandLine::parse(args);
    let provider = cli
        .provider
        .or_else(|| {
            let model = cli.model?;
            let (prefix, _) = model.split_once('/')?;
            known(prefix).then(|| prefix.to_owned())
        })
        .or_else(|| {
            settings
                .get("defaultProvider")
                .and_then(Value::as_str)
                .map(str::to_owned)
        });
    let mut key = ProviderKey {
        provider: provider.clone(),
        ..ProviderKey::default()
    };
    for (id, entry) in providers.into_iter().flatten() {
        let named = interpolated(entry);
        if provider.as_deref() == Some(id.as_str()) {
            let api_key = entry.get("apiKey").and_then(Value::as_str);
            if let Some(first) = api_key.and_then(|k| template_vars(k).into_iter().next()) {
                key.key_var = Some(first);
                key.required = true;
            } else if api_key.is_some() {
                key.builtin = Some("the apiKey models.json gives it (a literal or a command)");
            }
        }
        key.other_vars.extend(named);
    }
    if cli.api_key {
        key.builtin = Some("the --api-key argument");
        key.key_var = None;
        key.required = false;
    } else if key.key_var.is_none() && key.builtin.is_none() {
        let builtin = provider
            .as_deref()
            .and_then(|p| BUILTIN.iter().find(|(b, _)| *b == p));
        if let Some((first, rest)) = builtin.and_then(|(_, vars)| vars.split_first()) {
            key.key_var = Some((*first).to_owned());
            key.other_vars.extend(rest.iter().map(|v| (*v).to_owned()));
            key.builtin = Some(LOGIN);
        }
    }
    key.notes = notes;
    key
}

/// Every variable a provider's `apiKey` and `headers` (its models' too) interpolate.
fn interpolated(provider: &Value) -> Vec<String> {
    let mut vars = Vec::new();
    let mut add = |value: Option<&Value>| {
        if let Some(text) = value.and_then(Value::as_str) {
            vars.extend(template_vars(text));
        }
    };
    add(provider.get("apiKey"));
    let headers = |v: &Value| {
        v.get("headers")
            .and_then(Value::as_object)
            .map(|h| h.values().cloned().collect::<Vec<_>>())
            .unwrap_or_default()
    };
    for value in headers(provider) {
        add(Some(&value));
    }
    for model in provider
        .get("models")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for value in headers(model) {
            add(Some(&value));
        }
    }
    vars
}

/// The variables a pi configuration value interpolates: `$NAME` and `${NAME}`, with `$$` and
/// `$!` literal; none in a `!command`.
pub(crate) fn template_vars(value: &str) -> Vec<String> {
    if value.starts_with('!') {
        return Vec::new();
    }
    let mut vars = Vec::new();
    let mut rest = value;
    while let Some(at) = rest.find('$') {
        let after = &rest[at + 1..];
        if after.starts_with('$') || after.starts_with('!') {
            rest = &after[1..];
            continue;
        }
        let (name, next) = if let Some(braced) = after.strip_prefix('{') {
            match braced.split_once('}') {
                Some((name, next)) => (name, next),
                None => ("", after),
            }
        } else {
            let end = after
                .char_indices()
                .find(|&(i, c)| {
                    !(c.is_ascii_alphanumeric() || c == '_') || (i == 0 && c.is_ascii_digit())
                })
                .map_or(after.len(), |(i, _)| i);
            (&after[..end], &after[end..])
        };
        if is_var_name(name) && !vars.iter().any(|v| v == name) {
            vars.push(name.to_owned());
        }
        rest = next;
    }
    vars
}

/// What pi's command line says about its provider.
#[derive(Debug, Default)]
struct CommandLine {
    provider: Option<String>,
    model: Option<String>,
    /// `--api-key` gives the key itself.
    api_key: bool,
}

impl CommandLine {
    fn parse(args: &[String]) -> Self {
        let mut out = CommandLine::default();
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--provider" => out.provider = args.next().cloned(),
                "--model" => out.model = args.next().cloned(),
                "--api-key" => out.api_key = args.next().is_some(),
                _ => {}
            }
        }
        out
    }
}

/// The JSON file at `path`; `None` (with a note when it is there but unreadable) otherwise.
fn read_json(path: &Path, notes: &mut Vec<String>) -> Option<Value> {
    let parsed = read_config(path).and_then(|text| {
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| ConfigFileError::Parse {
                path: path.to_owned(),
                detail: e.to_string(),
            })
        })
        .transpose()
    });
    match parsed {
        Ok(value) => value,
        Err(e) => {
            notes.push(format!(
                "pi's configuration was not read ({e}); assuming pi's defaults"
            ));
            None
        }
    }
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;

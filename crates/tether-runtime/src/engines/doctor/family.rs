//! Whether the judges are all of the agent's own model family: a judge of the same family tends
//! to share the agent's blind spots (and to like its style), so a panel with a judge of another
//! vendor catches more. Families are told by the model's name (`claude-…`, `gpt-…`, `gemini-…`,
//! `qwen…`) and, for an agent CLI whose model tether.toml does not name, by the CLI's own vendor;
//! an agent or judge of no known family is never warned about.

use tether_config::{Config, ExecutorKind};

/// A vendor's family of models.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    Anthropic,
    OpenAi,
    Google,
    Qwen,
    Meta,
    Mistral,
    DeepSeek,
    Moonshot,
    Zhipu,
    Xai,
}

impl Family {
    fn name(self) -> &'static str {
        match self {
            Family::Anthropic => "Anthropic's Claude",
            Family::OpenAi => "OpenAI's GPT",
            Family::Google => "Google's Gemini",
            Family::Qwen => "Alibaba's Qwen",
            Family::Meta => "Meta's Llama",
            Family::Mistral => "Mistral's",
            Family::DeepSeek => "DeepSeek's",
            Family::Moonshot => "Moonshot's Kimi",
            Family::Zhipu => "Zhipu's GLM",
            Family::Xai => "xAI's Grok",
        }
    }
}

/// The family a model's name says (`anthropic/claude-sonnet-4-5`, `gpt-5-codex`, `o3`).
pub(super) fn of_model(name: &str) -> Option<Family> {
    let name = name.trim().to_ascii_lowercase();
    // The part after a provider's prefix (`openrouter/anthropic/claude…`) names the model.
    let model = name.rsplit('/').next().unwrap_or(&name);
    const BY_NAME: &[(&str, Family)] = &[
        ("claude", Family::Anthropic),
        ("gpt", Family::OpenAi),
        ("codex", Family::OpenAi),
        ("gemini", Family::Google),
        ("gemma", Family::Google),
        ("qwen", Family::Qwen),
        ("qwq", Family::Qwen),
        ("llama", Family::Meta),
        ("mistral", Family::Mistral),
        ("mixtral", Family::Mistral),
        ("codestral", Family::Mistral),
        ("devstral", Family::Mistral),
        ("deepseek", Family::DeepSeek),
        ("kimi", Family::Moonshot),
        ("glm", Family::Zhipu),
        ("grok", Family::Xai),
    ];
    if let Some((_, family)) = BY_NAME.iter().find(|(word, _)| model.contains(word)) {
        return Some(*family);
    }
    // OpenAI's reasoning models: `o1`, `o3-mini`, `o4-mini`.
    let reasoning = model
        .strip_prefix('o')
        .is_some_and(|rest| rest.chars().next().is_some_and(|c| c.is_ascii_digit()));
    reasoning.then_some(Family::OpenAi)
}

/// The agent's family and how it was told: the model tether.toml names for it (`[model]` for
/// the built-in agent, `--model` among an agent CLI's `args`), else an agent CLI's vendor.
fn of_agent(config: &Config) -> Option<(Family, String)> {
    let named = match config.executor.kind {
        ExecutorKind::Builtin => config.model.as_ref().map(|m| m.model.clone()),
        _ => model_arg(&config.executor.args),
    };
    if let Some(model) = named {
        return of_model(&model).map(|f| (f, format!("its model {model}")));
    }
    let ExecutorKind::Cli(cli) = config.executor.kind else {
        return None;
    };
    let family = match cli {
        "claude" => Family::Anthropic,
        "codex" => Family::OpenAi,
        "gemini" => Family::Google,
        "qwen" => Family::Qwen,
        _ => return None,
    };
    Some((family, format!("the {cli} CLI's own models")))
}

/// The value of `--model X`, `--model=X` or `-m X` among an agent CLI's arguments.
fn model_arg(args: &[String]) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if let Some(value) = arg.strip_prefix("--model=") {
            return Some(value.to_owned());
        }
        if arg == "--model" || arg == "-m" {
            return args.next().cloned();
        }
    }
    None
}

/// The warning for a configuration whose every judge is of the agent's own family, if it is.
pub(super) fn warning(config: &Config) -> Option<String> {
    let judge = config.judge.as_ref()?;
    let (agent, told) = of_agent(config)?;
    let all_same = judge
        .judges()
        .all(|j| of_model(&j.endpoint.model) == Some(agent));
    all_same.then(|| {
        format!(
            "every judge is of the agent's own model family ({}, from {told}): a judge of \
             another vendor misses less of what the agent gets wrong; add one as a \
             [[judge.panel]]",
            agent.name()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{Family, model_arg, of_model};

    #[test]
    fn families_are_told_by_the_models_name() {
        for (name, family) in [
            ("claude-opus-4-5", Family::Anthropic),
            ("anthropic/claude-sonnet-4.5", Family::Anthropic),
            ("gpt-5-codex", Family::OpenAi),
            ("o4-mini", Family::OpenAi),
            ("gemini-2.5-pro", Family::Google),
            ("qwen3-coder-plus", Family::Qwen),
            ("Qwen/Qwen3-Coder-480B", Family::Qwen),
            ("deepseek-chat", Family::DeepSeek),
            ("devstral-small", Family::Mistral),
            ("kimi-k2", Family::Moonshot),
            ("glm-4.6", Family::Zhipu),
        ] {
            assert_eq!(of_model(name), Some(family), "{name}");
        }
        for unknown in ["judge-model", "my-finetune", "opus", "local"] {
            assert_eq!(of_model(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn an_agent_clis_model_argument_is_read_in_every_spelling() {
        let args = |a: &[&str]| a.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            model_arg(&args(&["--model", "gpt-5"])).as_deref(),
            Some("gpt-5")
        );
        assert_eq!(
            model_arg(&args(&["-x", "--model=o3"])).as_deref(),
            Some("o3")
        );
        assert_eq!(model_arg(&args(&["-m", "qwen3"])).as_deref(), Some("qwen3"));
        assert_eq!(model_arg(&args(&["--verbose"])), None);
    }
}

//! Model endpoints: the built-in agent's `[model]` and the sign-off `[judge]`.
//!
//! Both tables share one shape, so they share [`ModelConfig`]. The key itself is looked up on
//! demand through [`ModelConfig::api_key`], because only the code that calls the model needs it
//! and `tether validate` must work without it.

use crate::env::{Env, non_empty_key};
use crate::{ConfigError, Secret};

/// The wire protocol a model endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// OpenAI Chat Completions (and compatible local servers).
    OpenAiChat,
    /// OpenAI Responses.
    OpenAiResponses,
    /// Anthropic Messages.
    Anthropic,
}

impl Api {
    /// Every protocol with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, Api); 3] = [
        ("openai-chat", Api::OpenAiChat),
        ("openai-responses", Api::OpenAiResponses),
        ("anthropic", Api::Anthropic),
    ];

    /// The spelling in `tether.toml`.
    pub fn as_str(self) -> &'static str {
        match self {
            Api::OpenAiChat => "openai-chat",
            Api::OpenAiResponses => "openai-responses",
            Api::Anthropic => "anthropic",
        }
    }

    /// The variable such endpoints conventionally read their key from; used in hints.
    pub fn conventional_key_env(self) -> &'static str {
        match self {
            Api::OpenAiChat | Api::OpenAiResponses => "OPENAI_API_KEY",
            Api::Anthropic => "ANTHROPIC_API_KEY",
        }
    }
}

/// One model endpoint (`[model]`, and the endpoint part of `[judge]` and `[loop_judge]`).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    /// The wire protocol.
    pub api: Api,
    /// An `http://` or `https://` URL with a host.
    pub base_url: String,
    /// The model's name as the endpoint knows it; never empty.
    pub model: String,
    /// The NAME of the environment variable holding the key; `None` for keyless local servers.
    pub api_key_env: Option<String>,
    /// What its tokens cost (`price_per_mtok`); `None` when not given, and then calls to it
    /// have no cost unless the agent reports one.
    pub price: Option<crate::Price>,
}

impl ModelConfig {
    /// The API key, read from the variable named by `api_key_env`.
    ///
    /// `Ok(None)` when no variable is named. An error names the variable when it is named but
    /// unset or blank.
    pub fn api_key(&self, env: &dyn Env) -> Result<Option<Secret>, ConfigError> {
        let Some(var) = &self.api_key_env else {
            return Ok(None);
        };
        match non_empty_key(env, var) {
            Some(value) => Ok(Some(Secret::new(value))),
            None => Err(ConfigError::MissingKey { var: var.clone() }),
        }
    }

    /// Whether two endpoints are the same model: same protocol, same URL (ignoring a trailing
    /// `/` and the case of scheme and host), same model name.
    pub fn same_model_as(&self, other: &ModelConfig) -> bool {
        self.api == other.api
            && normalize_url(&self.base_url) == normalize_url(&other.base_url)
            && self.model.trim() == other.model.trim()
    }
}

fn normalize_url(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            format!(
                "{}://{}{path}",
                scheme.to_ascii_lowercase(),
                authority.to_ascii_lowercase()
            )
        }
        None => url.to_owned(),
    }
}

/// The sign-off judge (`[judge]`), and the judges of its panel (`[[judge.panel]]`).
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeConfig {
    /// The judge's endpoint: the same fields as `[model]`.
    pub endpoint: ModelConfig,
    /// Allows the judge to be the executor's own model (cross-model is the default).
    pub same_model: bool,
    /// How long one judge call may take, in seconds.
    pub timeout_secs: u64,
    /// How the panel decides (`agree`); meaningful on `[judge]` alone.
    pub agree: Agree,
    /// The judges beside this one (`[[judge.panel]]`, in the file's order), each with the keys
    /// of `[judge]` but `agree` and `panel`; always empty in a panel's own entries.
    pub panel: Vec<JudgeConfig>,
}

impl JudgeConfig {
    /// Default for `judge.same_model`.
    pub const DEFAULT_SAME_MODEL: bool = false;
    /// Default for `judge.timeout_secs`.
    pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

    /// One judge on `endpoint` with the defaults, and no panel.
    pub fn single(endpoint: ModelConfig) -> Self {
        JudgeConfig {
            endpoint,
            same_model: Self::DEFAULT_SAME_MODEL,
            timeout_secs: Self::DEFAULT_TIMEOUT_SECS,
            agree: Agree::All,
            panel: Vec::new(),
        }
    }

    /// Every judge: this one, then its panel's in order.
    pub fn judges(&self) -> impl Iterator<Item = &JudgeConfig> {
        std::iter::once(self).chain(&self.panel)
    }
}

/// How a judge panel decides a sign-off (`[judge] agree`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Agree {
    /// Every judge must accept: one reject rejects (the default).
    #[default]
    All,
    /// More than half of the judges must accept.
    Majority,
}

impl Agree {
    /// The spellings `agree` takes.
    pub const CHOICES: [(&'static str, Agree); 2] =
        [("all", Agree::All), ("majority", Agree::Majority)];

    /// How `agree` spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Agree::All => "all",
            Agree::Majority => "majority",
        }
    }
}

/// The loop judge (`[loop_judge]`): a small, cheap model that reads each iteration's final
/// message and says whether the run should go on or a person is needed. It never signs a goal
/// off.
#[derive(Debug, Clone, PartialEq)]
pub struct LoopJudgeConfig {
    /// Its endpoint: the same fields as `[model]`.
    pub endpoint: ModelConfig,
    /// How long one call may take, in seconds.
    pub timeout_secs: u64,
}

impl LoopJudgeConfig {
    /// Default for `loop_judge.timeout_secs`.
    pub const DEFAULT_TIMEOUT_SECS: u64 = 60;
}

/// Plan mode's model (`[planning]`): any of `[model]`'s fields, each overriding `[model]`'s for
/// drafting goals (`tether plan new`), so a stronger (or cheaper) model can plan than works.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PlanningConfig {
    /// The wire protocol, if not `[model]`'s.
    pub api: Option<Api>,
    /// The endpoint, if not `[model]`'s.
    pub base_url: Option<String>,
    /// The model's name, if not `[model]`'s.
    pub model: Option<String>,
    /// The key's variable, if not `[model]`'s.
    pub api_key_env: Option<String>,
    /// The price, if not `[model]`'s.
    pub price: Option<crate::Price>,
}

impl PlanningConfig {
    /// The endpoint plan mode drafts with: these fields over `base`'s (`[model]`), or these
    /// alone when there is no `[model]`; `None` when that leaves `api`, `base_url` or `model`
    /// unknown.
    pub fn over(&self, base: Option<&ModelConfig>) -> Option<ModelConfig> {
        Some(ModelConfig {
            api: self.api.or(base.map(|b| b.api))?,
            base_url: self
                .base_url
                .clone()
                .or_else(|| base.map(|b| b.base_url.clone()))?,
            model: self
                .model
                .clone()
                .or_else(|| base.map(|b| b.model.clone()))?,
            api_key_env: self
                .api_key_env
                .clone()
                .or_else(|| base.and_then(|b| b.api_key_env.clone())),
            price: self.price.or(base.and_then(|b| b.price)),
        })
    }
}

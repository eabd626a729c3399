//! The checks that reach over the network, each one bounded request: the `[model]` and
//! `[judge]` endpoints (the key's variable set, the base URL answering and taking the key) and,
//! when `human.channels` lists it, Zulip (its settings present, the bot's credentials taken).
//! No key is ever printed: only the names of the variables that hold them.

use std::time::Duration;

use tether_config::{Channel, Config, ConfigError, Env, ModelConfig};
use tether_model::{Endpoint, Probe};
use tether_zulip::{ApiOptions, ZulipApi, ZulipError, ZulipSettings};

use super::Check;

/// How long one request may take, connecting included.
pub(super) const TIMEOUT: Duration = Duration::from_secs(5);

/// The model, judge, Zulip, Slack and Telegram checks of `config`.
pub async fn checks(config: &Config, env: &dyn Env) -> Vec<Check> {
    let model = match &config.model {
        Some(model) => endpoint("model", model, env).await,
        None => Check::skip(
            "model",
            "no [model] (needed by the built-in agent and `tether plan new`)",
        ),
    };
    let judge = match &config.judge {
        Some(judge) => endpoint("judge", &judge.endpoint, env).await,
        None => Check::skip(
            "judge",
            "no [judge] (`tether run` needs one to sign goals off, or --no-judge)",
        ),
    };
    let slack = super::slack::check(config).await;
    let telegram = super::telegram::check(config).await;
    vec![model, judge, zulip(config).await, slack, telegram]
}

/// `[name]`: its key variable is set, and its base URL answers and takes the key.
async fn endpoint(name: &'static str, model: &ModelConfig, env: &dyn Env) -> Check {
    let table = format!("[{name}]");
    let key = match model.api_key(env) {
        Ok(key) => key,
        Err(ConfigError::MissingKey { var }) => {
            return Check::fail(
                name,
                format!("{table} reads its key from {var}, which is not set"),
                format!("export {var}=… (or remove api_key_env from {table} for a keyless server)"),
            );
        }
        Err(e) => return Check::fail(name, e.to_string(), format!("correct {table}")),
    };
    let keyed = model
        .api_key_env
        .as_ref()
        .map_or_else(|| "no key".to_owned(), |var| format!("key from {var}"));
    let at = format!(
        "{} {} at {}",
        model.api.as_str(),
        model.model,
        model.base_url
    );
    let endpoint = Endpoint::from_config(model, key);
    match tether_model::probe(&endpoint, TIMEOUT).await {
        Ok(Probe::Reachable { status }) => Check::pass(
            name,
            format!(
                "{at} answers (HTTP {status} from {}; {keyed})",
                tether_model::models_url(&endpoint)
            ),
        ),
        Ok(Probe::KeyRefused { status }) => Check::fail(
            name,
            format!("{at} refused the key (HTTP {status}; {keyed})"),
            match &model.api_key_env {
                Some(var) => format!("put a valid key for this endpoint in {var}"),
                None => format!("set {table} api_key_env to the variable holding its key"),
            },
        ),
        Err(e) => Check::fail(
            name,
            format!("{at} cannot be reached: {e}"),
            format!("check {table} base_url, and that the server runs and is reachable from here"),
        ),
    }
}

/// Zulip, when a question would be offered there: settings present, the bot known to the server.
async fn zulip(config: &Config) -> Check {
    const NAME: &str = "zulip";
    if !config.human.channels.contains(&Channel::Zulip) {
        return Check::skip(NAME, "not among human.channels");
    }
    let settings = match ZulipSettings::from_config(&config.zulip) {
        Ok(settings) => settings,
        Err(e) => {
            return Check::fail(
                NAME,
                e.to_string(),
                "set each missing value in [zulip] or its environment variable",
            );
        }
    };
    let options = ApiOptions {
        connect_timeout: TIMEOUT,
        request_timeout: TIMEOUT,
        ..ApiOptions::default()
    };
    let at = format!(
        "bot {} on {}, stream {}",
        settings.bot_email, settings.server_url, settings.stream
    );
    let me = match ZulipApi::new(&settings, options) {
        Ok(api) => api.me().await,
        Err(e) => Err(e),
    };
    match me {
        Ok(_) => Check::pass(NAME, format!("{at}: the server knows the bot")),
        Err(e @ ZulipError::Auth { .. }) => Check::fail(
            NAME,
            format!("{at}: {e}"),
            format!(
                "check the bot's email and its API key (in {})",
                config.zulip.api_key_env
            ),
        ),
        Err(e) => Check::fail(
            NAME,
            format!("{at}: {e}"),
            "check zulip.server_url (ZULIP_SERVER_URL) and that the server is reachable",
        ),
    }
}

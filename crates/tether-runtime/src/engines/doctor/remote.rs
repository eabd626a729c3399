//! The checks that reach over the network, each request bounded: the `[model]` and `[judge]`
//! endpoints (and each of the judge's panel; a warning when every judge is of the agent's own
//! model family) (the key's variable set, the base URL answering and taking the key) and the probe
//! of each channel `human.channels` lists that talks to a service (its settings present, its
//! credentials taken: the channel's own, in its registry entry).
//! No key is ever printed: only the names of the variables that hold them.

use std::time::Duration;

use tether_config::{Config, ConfigError, Env, ModelConfig};
use tether_human::registry::Probed;
use tether_model::{Endpoint, Probe};

use super::Check;

/// How long one request may take, connecting included.
const TIMEOUT: Duration = Duration::from_secs(5);

/// The model and judge checks of `config`, then its channels' probes.
pub async fn checks(config: &Config, env: &dyn Env) -> Vec<Check> {
    let model = match &config.model {
        Some(model) => endpoint("model", model, env).await,
        None => Check::skip(
            "model",
            "no [model] (needed by the built-in agent and `tether plan new`)",
        ),
    };
    let mut judge = match &config.judge {
        Some(judge) => endpoint("judge", &judge.endpoint, env).await,
        None => Check::skip(
            "judge",
            "no [judge] (`tether run` needs one to sign goals off, or --no-judge)",
        ),
    };
    if let Some(warning) = super::family::warning(config) {
        judge.detail.push_str(&format!("\nwarning: {warning}"));
    }
    let mut checks = vec![model, judge];
    // Each judge of a panel, as the first.
    for panel_judge in config.judge.iter().flat_map(|j| &j.panel) {
        checks.push(endpoint("judge.panel", &panel_judge.endpoint, env).await);
    }
    checks.extend(channels(config).await);
    checks
}

/// `[name]`: its key variable is set, and its base URL answers and takes the key.
async fn endpoint(name: &'static str, model: &ModelConfig, env: &dyn Env) -> Check {
    let table = match name {
        "judge.panel" => "[[judge.panel]]".to_owned(),
        _ => format!("[{name}]"),
    };
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

/// The probe of each channel `human.channels` lists that talks to a service (Zulip, Slack,
/// Telegram: [`tether_human::registry::CHANNELS`]), the others among them skipped.
async fn channels(config: &Config) -> Vec<Check> {
    let mut checks = Vec::new();
    for def in tether_human::registry::CHANNELS {
        let Some(probe) = def.probe else { continue };
        let name = def.kind().as_str();
        if !config.human.channels.contains(&def.kind()) {
            checks.push(Check::skip(name, "not among human.channels"));
            continue;
        }
        checks.push(match probe(config, TIMEOUT).await {
            Probed::Works(detail) => Check::pass(name, detail),
            Probed::Fails { detail, fix } => Check::fail(name, detail, fix),
        });
    }
    checks
}

/// The names of the channel checks, in order (for a config that does not load).
pub fn channel_names() -> impl Iterator<Item = &'static str> {
    tether_human::registry::CHANNELS
        .iter()
        .filter(|def| def.probe.is_some())
        .map(|def| def.kind().as_str())
}

//! The agent key check: the variable the agent CLI's own configuration names for its model key
//! (Codex's provider's `env_key`, pi's provider's `apiKey`) is set, and is not one of tether's
//! own keys, which never reach an agent; it is what the sandbox passes to the agent. Only for
//! an agent whose configuration can name one (see `agent_key`); a value is never printed.

use tether_config::{Config, Env};

use super::Check;
use crate::compose::agent_key::{AgentKey, PASS_SETTING, VarState};

const NAME: &str = "agent key";

/// The check for the agent `config` runs, when its configuration can name a key variable.
pub fn check(config: &Config, env: &dyn Env) -> Option<Check> {
    let key = crate::compose::agent_key::of(config)?;
    let notes: String = key
        .key
        .notes
        .iter()
        .map(|note| format!("\nnote: {note}"))
        .collect();
    if let Some((problem, fix)) = key.problem(config, env) {
        return Some(Check::fail(NAME, format!("{problem}{notes}"), fix));
    }
    Some(Check::pass(
        NAME,
        format!("{}{notes}", found(&key, config, env)),
    ))
}

/// What the agent reads its key from, and what it gets.
fn found(key: &AgentKey, config: &Config, env: &dyn Env) -> String {
    let whose = key.whose();
    let passed = key.passed(config);
    let others = || -> String {
        let extra: Vec<&String> = passed
            .iter()
            .filter(|v| key.key.key_var.as_ref() != Some(*v))
            .collect();
        if extra.is_empty() {
            String::new()
        } else {
            let names: Vec<&str> = extra.iter().map(|v| v.as_str()).collect();
            format!("; also passed: {}", names.join(", "))
        }
    };
    match (&key.key.key_var, key.key.builtin) {
        (Some(var), _) if AgentKey::state(var, config, env) == VarState::Set => {
            format!(
                "{whose} reads its key from {var}: set, passed to the agent{}",
                others()
            )
        }
        (Some(var), Some(otherwise)) => format!(
            "{whose} reads its key from {var} (not set), else from {otherwise}{}",
            others()
        ),
        (Some(var), None) => format!("{whose} reads its key from {var}{}", others()),
        (None, Some(otherwise)) => format!(
            "{whose} uses {otherwise}; another variable reaches the agent only when listed in \
             {PASS_SETTING}{}",
            others()
        ),
        (None, None) if key.key.provider.is_none() => format!(
            "{whose} chooses its provider itself (none in its arguments or settings); another \
             variable reaches the agent only when listed in {PASS_SETTING}{}",
            others()
        ),
        (None, None) => format!(
            "{whose} names no key variable; another variable reaches the agent only when \
             listed in {PASS_SETTING}{}",
            others()
        ),
    }
}

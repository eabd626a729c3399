//! The model key an agent CLI needs, as its own configuration names it — Codex's provider's
//! `env_key` (also for Codex's ACP adapter), pi's provider's `apiKey` variable — so the
//! sandbox passes exactly those variables to it (its environment is otherwise an allow-list),
//! and a run's warning and `tether doctor` name the one that is unset or that tether keeps for
//! itself, with the setting that fixes it. Claude Code's configuration names no variable of
//! its own: its `ANTHROPIC_*` variables pass by prefix.
//!
//! The configuration is read when the run's sandbox is built (at start, before the agent's
//! first turn, and again on resume), so what the agent writes into its configuration directory
//! changes what it gets no sooner than the next start.

use tether_agent::cli::key::ProviderKey;
use tether_agent::cli::{Agent, KeyNaming};
use tether_config::{Config, Env};

use crate::compose::agents::Worker;

/// The setting that lets any other variable through to the agent.
pub const PASS_SETTING: &str = "[sandbox] env";

/// What the configured agent CLI's own configuration says about its key.
pub struct AgentKey {
    /// Which CLI.
    pub agent: Agent,
    /// Where its configuration names the key.
    naming: KeyNaming,
    /// Its provider and the variables it reads.
    pub key: ProviderKey,
}

/// How the key's variable stands in tether's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarState {
    /// Set (in tether's environment or `[executor] env`): passed to the agent.
    Set,
    /// Not set anywhere.
    Unset,
    /// Also one of tether's own keys, which never reach an agent.
    TethersOwn,
}

/// The key of the agent `config` runs, when its configuration can name one (Codex, also as
/// `codex-acp`, and pi: see each CLI's descriptor).
pub fn of(config: &Config) -> Option<AgentKey> {
    let Ok(Worker::Cli(agent)) = crate::compose::agents::sandboxed_as(config) else {
        return None;
    };
    let naming = agent.key?;
    let dir = crate::compose::sandbox::config_dir(config, agent);
    let key = (naming.read)(&dir, &config.executor.args);
    Some(AgentKey { agent, naming, key })
}

impl AgentKey {
    /// The variables to pass to the agent: those its configuration names, but tether's own
    /// keys.
    pub fn passed(&self, config: &Config) -> Vec<String> {
        let own = config.key_vars();
        self.key
            .vars()
            .into_iter()
            .filter(|v| !own.contains(v))
            .collect()
    }

    /// How `var` stands for `config` in `env`.
    pub fn state(var: &str, config: &Config, env: &dyn Env) -> VarState {
        if config.executor.env.iter().any(|(k, _)| k == var) {
            VarState::Set
        } else if config.key_vars().iter().any(|k| k == var) {
            VarState::TethersOwn
        } else if env.var(var).is_some_and(|v| !v.trim().is_empty()) {
            VarState::Set
        } else {
            VarState::Unset
        }
    }

    /// "Codex's provider `openrouter`", or the CLI's name when it picks a provider itself.
    pub fn whose(&self) -> String {
        match &self.key.provider {
            Some(provider) => format!("{}'s provider `{provider}`", self.agent.title),
            None => self.agent.title.to_owned(),
        }
    }

    /// Where the key's variable is named, for the fix.
    pub fn setting(&self) -> String {
        let provider = self.key.provider.as_deref().unwrap_or("…");
        (self.naming.setting)(provider)
    }

    /// What is wrong with the key's variable, and the fix: `None` when it is set, or unset but
    /// not needed (a login stands in for it).
    pub fn problem(&self, config: &Config, env: &dyn Env) -> Option<(String, String)> {
        let var = self.key.key_var.as_deref()?;
        let whose = self.whose();
        let title = self.agent.title;
        match Self::state(var, config, env) {
            VarState::Set => None,
            VarState::Unset if !self.key.required => None,
            VarState::Unset => Some((
                format!("{whose} reads its key from {var}, which is not set"),
                format!(
                    "export {var}=… where you start tether (tether passes it, and none of its \
                     own keys, to {title}); a variable of another name reaches the agent only \
                     when listed in {PASS_SETTING}"
                ),
            )),
            VarState::TethersOwn => Some((
                format!(
                    "{whose} reads its key from {var}, which tether.toml also names as one of \
                     tether's own keys: tether keeps its own keys from every agent"
                ),
                format!(
                    "give {} another variable, or point {title} at another one ({})",
                    own_setting(config, var),
                    self.setting()
                ),
            )),
        }
    }
}

/// The setting of tether.toml that names `var` as one of tether's own keys.
fn own_setting(config: &Config, var: &str) -> String {
    match config.key_setting(var) {
        Some(setting) => format!("tether's {setting}"),
        None => "tether's own setting naming it in tether.toml".to_owned(),
    }
}

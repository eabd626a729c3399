//! `[executor] kind = "opencode"`: opencode (`opencode acp`) as the agent, driven over the Agent
//! Client Protocol by tether's own [`AcpExecutor`], with tether's tools over MCP (in every
//! `session/new`, carrying the run's id).
//!
//! opencode allows every command and edit by default, so nothing would reach `[human]
//! ask_before`. tether sets its `permission` for `bash` and `edit` to `ask` through
//! `OPENCODE_PERMISSION` ([`permission`]), which opencode applies over every configuration file
//! it reads: each command and edit is then a `session/request_permission` to tether, decided by
//! the run's `ask_before` rules and `[executor] permissions` ([`Gate::Acp`]). A permission an
//! agent of opencode's configuration sets for itself (`agent.<name>.permission`) still wins over
//! that for the agent it names: [`overrides`] finds those in the files tether can see, for the
//! run and `tether doctor` to say.
//!
//! It reads a project's `opencode.json(c)` and `.opencode/` each time it starts, where the agent
//! can write an agent's own `permission`: in a run it reads none of them ([`pin`]).
//!
//! opencode reads its configuration from `OPENCODE_CONFIG_DIR` (by default `~/.config/opencode`)
//! and keeps its logins, sessions and caches in the XDG directories. In a sandboxed run it works
//! in the run's own copy of its configuration directory ([`crate::cli::RunConfigDir`]), its XDG
//! directories inside it ([`xdg_env`]): nothing it writes reaches the person's. Its model comes
//! from its configuration (a provider with its `options`, `{env:NAME}` for a key), from
//! `OPENCODE_CONFIG_CONTENT`, or from a provider's own variables (`OPENAI_API_KEY`, …).

mod overrides;
mod pin;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};

use self::overrides::overrides;
use crate::acp::AcpExecutor;
use crate::cli::{AgentCli, ConfigDir, ConfigFile, Gate, Resume, Version};

/// The variable whose JSON opencode applies over its configuration's `permission`.
const PERMISSION_VAR: &str = "OPENCODE_PERMISSION";

/// What opencode asks about, so that tether decides it.
const ASKED: [&str; 2] = ["bash", "edit"];

/// opencode as tether knows it.
pub const CLI: AgentCli = AgentCli {
    kind: "opencode",
    title: "opencode",
    about: "opencode over ACP, the same way",
    program: "opencode",
    install: "npm install -g opencode-ai",
    // `opencode acp`, `OPENCODE_PERMISSION` applied over every configuration file.
    minimum: Version::new(1, 18, 33),
    env_prefixes: &[
        "OPENCODE_",
        "OPENAI_",
        "ANTHROPIC_",
        "GEMINI_",
        "GOOGLE_",
        "OPENROUTER_",
    ],
    config_dir: ConfigDir {
        var: "OPENCODE_CONFIG_DIR",
        default: ".config/opencode",
        within: None,
        files: &[
            // Its settings (providers, models, MCP servers, permissions) and instructions.
            ConfigFile::setting("opencode.json"),
            ConfigFile::setting("opencode.jsonc"),
            ConfigFile::setting("AGENTS.md"),
            ConfigFile::shared("agent"),
            ConfigFile::shared("agents"),
            ConfigFile::shared("command"),
            ConfigFile::shared("commands"),
            ConfigFile::shared("plugin"),
            ConfigFile::shared("plugins"),
            ConfigFile::shared("skill"),
            ConfigFile::shared("skills"),
            ConfigFile::shared("tool"),
            ConfigFile::shared("tools"),
            ConfigFile::shared("themes"),
        ],
    },
    // Its configuration names a key as `{env:NAME}` in a provider's options, anywhere.
    key: None,
    gate: Gate::Acp {
        loosened: overrides,
    },
    // Sessions are ACP's: the executor continues its kept session itself.
    resume: Resume::OVER_ACP,
    acp_adapter: None,
    home_reads: &[],
    // Nothing of the workspace's configuration, which the agent writes.
    pin: Some(pin::pin),
    executor: |settings, run, desk| {
        let mut settings = settings.leading(&["acp"]);
        let asked = permission(&settings.env);
        settings.env.retain(|(name, _)| name != PERMISSION_VAR);
        settings.env.push((PERMISSION_VAR.to_owned(), asked));
        if let Some(dir) = settings.config_dir.clone() {
            settings.env.retain(|(name, _)| !name.starts_with("XDG_"));
            settings.env.extend(xdg_env(dir.dir()));
        }
        Arc::new(AcpExecutor::new(settings, run, desk))
    },
};

/// `OPENCODE_PERMISSION`: the one `env` gives (or tether's environment), with `bash` and `edit`
/// set to `ask`.
fn permission(env: &[(String, String)]) -> String {
    let given = env
        .iter()
        .rev()
        .find(|(name, _)| name == PERMISSION_VAR)
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var(PERMISSION_VAR).ok());
    let mut permission = match given.as_deref().map(serde_json::from_str::<Value>) {
        Some(Ok(Value::Object(map))) => map,
        _ => Map::new(),
    };
    for name in ASKED {
        permission.insert(name.to_owned(), Value::String("ask".to_owned()));
    }
    Value::Object(permission).to_string()
}

/// opencode's XDG directories inside the run's configuration directory `dir`: its logins,
/// sessions, caches and state stay in the run.
fn xdg_env(dir: &Path) -> Vec<(String, String)> {
    ["DATA", "CACHE", "STATE", "CONFIG"]
        .into_iter()
        .map(|kind| {
            let path = dir.join("xdg").join(kind.to_lowercase());
            (format!("XDG_{kind}_HOME"), path.display().to_string())
        })
        .collect()
}

#[cfg(test)]
mod tests;

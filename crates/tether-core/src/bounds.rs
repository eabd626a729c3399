//! The settings that bound the agent are the person's: what tether.toml said of them when a run
//! started is recorded with the run, and the run keeps to it.
//!
//! tether.toml lies in the tree the agent writes, and tether reads it again during a run (the
//! commands the agent hands to the driving process, a `tether resume`). So the settings that
//! bound the agent — `[sandbox]` (mode, network, writable, readable, env), `[human] ask_before`,
//! `[loop] verify_timeout_secs` and `[executor] permissions` — are taken from what was approved,
//! never from the file as it is now: a new run records them in its spec ([`Bounds`], under
//! [`SPEC_KEY`]); a resumed run keeps the recorded ones unless a person accepts the file's
//! (`tether resume --accept-config`, recorded in the `resumed` event); and a change of the
//! file while a run is driven pauses the run for a person ([`Pinned::changed`]). The run's
//! budgets and loop rules are its spec's already, raised only with `tether resume --add-…`.
//!
//! Where tether sends its keys and what it starts as the agent are recorded the same way
//! ([`Bounds::destinations`]: each endpoint's URL with the variable whose key goes there, the
//! chat and notice servers, the store, the agent's program, arguments and variables, the value
//! of a variable named as a secret hidden): the agent could otherwise rewrite `[model]
//! base_url` (or `api_key_env`, naming another secret) and have the person's next `tether
//! resume` send the key to it. These cannot be pinned back from the record, so a resume with
//! them changed is refused until a person accepts them.
//!
//! What a goal's contract says (`network:`, `budget:`, `ask_before:`) is the approved
//! contract's: see [`crate::planning::terms`].

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use tether_config::{Config, Permissions, SandboxMode};
use tether_store::Run;

/// Where a run's spec holds the settings recorded at its start.
pub const SPEC_KEY: &str = "bounds";

/// The settings that bound the agent, as recorded with a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    /// `[sandbox]`.
    pub sandbox: SandboxBounds,
    /// `[human] ask_before`.
    #[serde(default)]
    pub ask_before: Vec<String>,
    /// `[loop] verify_timeout_secs`.
    pub verify_timeout_secs: u64,
    /// `[executor] permissions` (an ACP agent's permission requests), as spelled in tether.toml.
    pub permissions: String,
    /// Where keys go and what runs as the agent, one value per setting of [`DESTINATIONS`]
    /// (empty for a run recorded before tether kept them).
    #[serde(default)]
    pub destinations: Vec<String>,
}

/// How a recorded setting's value is read from a configuration.
pub type ReadSetting = fn(&Config) -> String;

/// The settings recorded in [`Bounds::destinations`], in order: each one's name and how its
/// value is read from a configuration (`-` for an absent one).
pub const DESTINATIONS: [(&str, ReadSetting); 17] = [
    ("[model] base_url", |c| base_url(c.model.as_ref())),
    ("[model] api_key_env", |c| key_env(c.model.as_ref())),
    ("[judge] base_url", |c| {
        base_url(c.judge.as_ref().map(|j| &j.endpoint))
    }),
    ("[judge] api_key_env", |c| {
        key_env(c.judge.as_ref().map(|j| &j.endpoint))
    }),
    ("[loop_judge] base_url", |c| {
        base_url(c.loop_judge.as_ref().map(|j| &j.endpoint))
    }),
    ("[loop_judge] api_key_env", |c| {
        key_env(c.loop_judge.as_ref().map(|j| &j.endpoint))
    }),
    ("[planning] base_url", |c| {
        maybe(c.planning.as_ref().and_then(|p| p.base_url.as_deref()))
    }),
    ("[planning] api_key_env", |c| {
        bare(c.planning.as_ref().and_then(|p| p.api_key_env.as_deref()))
    }),
    ("[zulip] server_url", |c| {
        maybe(c.zulip.server_url.as_deref())
    }),
    ("[slack] api_url", |c| quoted(&c.slack.api_url)),
    ("[telegram] api_url", |c| quoted(&c.telegram.api_url)),
    ("[ntfy] server", |c| quoted(&c.ntfy.server)),
    ("[email] smtp_host", |c| maybe(c.email.smtp_host.as_deref())),
    ("[store] url", |c| maybe(c.store.url.as_deref())),
    ("[executor] program", |c| {
        maybe(c.executor.program.as_deref())
    }),
    ("[executor] args", |c| list(&c.executor.args)),
    ("[executor] env", |c| variables(&c.executor.env)),
];

/// The values of [`DESTINATIONS`] in `config`.
fn destinations(config: &Config) -> Vec<String> {
    DESTINATIONS.iter().map(|(_, read)| read(config)).collect()
}

/// An endpoint's `base_url`, quoted.
fn base_url(endpoint: Option<&tether_config::ModelConfig>) -> String {
    maybe(endpoint.map(|m| m.base_url.as_str()))
}

/// The variable an endpoint's key is read from, as written.
fn key_env(endpoint: Option<&tether_config::ModelConfig>) -> String {
    bare(endpoint.and_then(|m| m.api_key_env.as_deref()))
}

/// A value quoted, or `-` when absent.
fn maybe(value: Option<&str>) -> String {
    value.map_or_else(|| "-".to_owned(), quoted)
}

/// Each variable as `NAME=value`, the value of one whose name says it holds a secret hidden
/// (`NAME=(hidden)`): what redirects an agent (a base URL, a proxy, a CA file) is seen as
/// written, and no key is kept in the record or shown in a notice.
fn variables(env: &[(String, String)]) -> String {
    let shown: Vec<String> = env
        .iter()
        .map(|(name, value)| match holds_secret(name) {
            true => format!("{name}=(hidden)"),
            false => format!("{name}={value}"),
        })
        .collect();
    list(&shown)
}

/// Whether a variable's name says it holds a secret (`ANTHROPIC_API_KEY`, `GH_TOKEN`,
/// `DB_PASSWORD`, `AWS_SECRET_ACCESS_KEY`, `ANTHROPIC_AUTH_TOKEN`, `GOOGLE_CREDENTIALS`).
fn holds_secret(name: &str) -> bool {
    const WORDS: [&str; 6] = ["KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH"];
    let upper = name.to_ascii_uppercase();
    WORDS.iter().any(|word| upper.contains(word))
}

/// A value as written, or `-` when absent.
fn bare(value: Option<&str>) -> String {
    value.unwrap_or("-").to_owned()
}

/// `[sandbox]`, as recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SandboxBounds {
    /// `mode`, as spelled in tether.toml (`enforce`, `off`).
    pub mode: String,
    /// `network`.
    pub network: bool,
    /// `writable`, expanded.
    #[serde(default)]
    pub writable: Vec<PathBuf>,
    /// `readable`, expanded.
    #[serde(default)]
    pub readable: Vec<PathBuf>,
    /// `env`.
    #[serde(default)]
    pub env: Vec<String>,
}

/// One setting that differs between two [`Bounds`], for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The setting as tether.toml names it (`[sandbox] mode`).
    pub setting: &'static str,
    /// Its value in the first (the run's).
    pub was: String,
    /// Its value in the second (tether.toml's now).
    pub now: String,
}

impl std::fmt::Display for Change {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} → {}", self.setting, self.was, self.now)
    }
}

impl Bounds {
    /// What `config` says of them.
    pub fn of(config: &Config) -> Bounds {
        let s = &config.sandbox;
        Bounds {
            sandbox: SandboxBounds {
                mode: spelling(&SandboxMode::CHOICES, s.mode).to_owned(),
                network: s.network,
                writable: s.writable.clone(),
                readable: s.readable.clone(),
                env: s.env.clone(),
            },
            ask_before: config.human.ask_before.clone(),
            verify_timeout_secs: config.r#loop.verify_timeout_secs,
            permissions: spelling(&Permissions::CHOICES, config.executor.permissions).to_owned(),
            destinations: destinations(config),
        }
    }

    /// The [`DESTINATIONS`] that differ from `now` (none when this record predates them):
    /// changes a resume cannot pin back, so a person has to accept them.
    pub fn destination_changes(&self, now: &Bounds) -> Vec<Change> {
        // A record from an older tether holds the first settings of the list (or none).
        DESTINATIONS
            .iter()
            .zip(self.destinations.iter().zip(&now.destinations))
            .filter(|(_, (was, now))| was != now)
            .map(|((setting, _), (was, now))| Change {
                setting,
                was: was.clone(),
                now: now.clone(),
            })
            .collect()
    }

    /// `config` with these settings in place of its own. A spelling this build does not know
    /// takes the strictest choice (the sandbox enforced, every ACP permission asked).
    pub fn pin(&self, config: &mut Config) {
        let s = &mut config.sandbox;
        s.mode = choice(&SandboxMode::CHOICES, &self.sandbox.mode).unwrap_or(SandboxMode::Enforce);
        s.network = self.sandbox.network;
        s.writable.clone_from(&self.sandbox.writable);
        s.readable.clone_from(&self.sandbox.readable);
        s.env.clone_from(&self.sandbox.env);
        config.human.ask_before.clone_from(&self.ask_before);
        config.r#loop.verify_timeout_secs = self.verify_timeout_secs;
        config.executor.permissions =
            choice(&Permissions::CHOICES, &self.permissions).unwrap_or(Permissions::AskAll);
    }

    /// The settings `run` keeps to: those a person last accepted on a resume, else those
    /// recorded at its start; `None` for a run recorded before tether kept them.
    pub fn recorded(run: &Run) -> Option<Bounds> {
        let read = |v: &serde_json::Value| serde_json::from_value(v.clone()).ok();
        let accepted = run.state.settings.as_ref().and_then(read);
        accepted.or_else(|| run.spec.get(SPEC_KEY).and_then(read))
    }

    /// Every setting that differs from `now`, in tether.toml's order.
    pub fn changes(&self, now: &Bounds) -> Vec<Change> {
        let mut out = Vec::new();
        let mut diff = |setting: &'static str, was: String, now: String| {
            if was != now {
                out.push(Change { setting, was, now });
            }
        };
        let (a, b) = (&self.sandbox, &now.sandbox);
        diff("[sandbox] mode", quoted(&a.mode), quoted(&b.mode));
        diff(
            "[sandbox] network",
            a.network.to_string(),
            b.network.to_string(),
        );
        diff("[sandbox] writable", paths(&a.writable), paths(&b.writable));
        diff("[sandbox] readable", paths(&a.readable), paths(&b.readable));
        diff("[sandbox] env", list(&a.env), list(&b.env));
        diff(
            "[human] ask_before",
            list(&self.ask_before),
            list(&now.ask_before),
        );
        diff(
            "[loop] verify_timeout_secs",
            self.verify_timeout_secs.to_string(),
            now.verify_timeout_secs.to_string(),
        );
        diff(
            "[executor] permissions",
            quoted(&self.permissions),
            quoted(&now.permissions),
        );
        out.extend(self.destination_changes(now));
        out
    }

    /// The settings as JSON, for the run's records.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// The settings that bound the agent in one process's run: those in force, and how to tell
/// that tether.toml changed them while the run is driven.
pub struct Pinned {
    /// The settings the run keeps to: its record, or what a person accepted on this resume.
    pub bounds: Bounds,
    /// Whether a person accepted `bounds` on this resume: the `resumed` event records them.
    pub accepted: bool,
    /// What tether.toml said when this process took the run up.
    pub seen: Bounds,
    /// What tether.toml says now (`None` when it cannot be read: then nothing is said to have
    /// changed, as nothing of it is used).
    pub read: Arc<dyn Fn() -> Option<Bounds> + Send + Sync>,
}

impl std::fmt::Debug for Pinned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pinned")
            .field("bounds", &self.bounds)
            .field("accepted", &self.accepted)
            .finish_non_exhaustive()
    }
}

impl Pinned {
    /// What changed in tether.toml's settings since this process took the run up: the reason
    /// the run pauses for a person, or `None`.
    pub fn changed(&self, run: &tether_store::RunId) -> Option<String> {
        let now = (self.read)()?;
        let changes = self.seen.changes(&now);
        if changes.is_empty() {
            return None;
        }
        let said: Vec<String> = changes.iter().map(ToString::to_string).collect();
        Some(format!(
            "tether.toml's settings that bound the agent changed during the run ({}); they are \
             not applied: a person resumes with `tether resume {run}` to keep the run's, or \
             `tether resume {run} --accept-config` to apply them",
            said.join("; ")
        ))
    }
}

fn spelling<T: PartialEq + Copy>(choices: &[(&'static str, T)], value: T) -> &'static str {
    choices
        .iter()
        .find(|(_, v)| *v == value)
        .map_or("?", |(name, _)| name)
}

fn choice<T: Copy>(choices: &[(&'static str, T)], name: &str) -> Option<T> {
    choices.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
}

fn quoted(text: &str) -> String {
    format!("{text:?}")
}

fn list(items: &[String]) -> String {
    format!("{items:?}")
}

fn paths(items: &[PathBuf]) -> String {
    let shown: Vec<String> = items.iter().map(|p| p.display().to_string()).collect();
    list(&shown)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;

    #[test]
    fn pinning_a_config_gives_back_the_recorded_settings() {
        let mut config = Config::default();
        config.sandbox.network = true;
        config.sandbox.writable = vec![PathBuf::from("/home/a/.cargo")];
        config.human.ask_before = vec!["git push".to_owned()];
        config.r#loop.verify_timeout_secs = 30;
        let recorded = Bounds::of(&config);
        let json = recorded.to_json();
        let back: Bounds = serde_json::from_value(json).unwrap();
        assert_eq!(back, recorded);

        let mut edited = Config::default();
        edited.sandbox.mode = SandboxMode::Off;
        edited.executor.permissions = Permissions::Allow;
        recorded.pin(&mut edited);
        assert_eq!(Bounds::of(&edited), recorded);
        assert_eq!(edited.sandbox.mode, SandboxMode::Enforce);
    }

    #[test]
    fn an_unknown_spelling_pins_the_strictest_choice() {
        let mut recorded = Bounds::of(&Config::default());
        recorded.sandbox.mode = "sideways".to_owned();
        recorded.permissions = "whatever".to_owned();
        let mut config = Config::default();
        config.sandbox.mode = SandboxMode::Off;
        recorded.pin(&mut config);
        assert_eq!(config.sandbox.mode, SandboxMode::Enforce);
        assert_eq!(config.executor.permissions, Permissions::AskAll);
    }

    #[test]
    fn changes_name_each_setting_with_both_values() {
        let was = Bounds::of(&Config::default());
        let mut config = Config::default();
        config.sandbox.mode = SandboxMode::Off;
        config.sandbox.readable = vec![PathBuf::from("/etc/secret")];
        config.human.ask_before = vec!["git push".to_owned()];
        let now = Bounds::of(&config);
        let said: Vec<String> = was.changes(&now).iter().map(ToString::to_string).collect();
        assert_eq!(
            said,
            [
                "[sandbox] mode: \"enforce\" → \"off\"",
                "[sandbox] readable: [] → [\"/etc/secret\"]",
                "[human] ask_before: [] → [\"git push\"]",
            ]
        );
        assert!(was.changes(&was).is_empty());
    }

    #[test]
    fn an_executor_variable_changed_is_shown_and_a_secret_one_never() {
        let mut config = Config::default();
        config.executor.env = vec![
            ("ANTHROPIC_BASE_URL".into(), "https://api.example".into()),
            ("ANTHROPIC_API_KEY".into(), "sk-one".into()),
        ];
        let was = Bounds::of(&config);
        assert!(was.destination_changes(&Bounds::of(&config)).is_empty());
        config.executor.env[0].1 = "http://127.0.0.1:9/steal".into();
        config.executor.env[1].1 = "sk-two".into();
        let said: Vec<String> = was
            .destination_changes(&Bounds::of(&config))
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            said,
            [
                "[executor] env: [\"ANTHROPIC_BASE_URL=https://api.example\", \
              \"ANTHROPIC_API_KEY=(hidden)\"] → [\"ANTHROPIC_BASE_URL=http://127.0.0.1:9/steal\", \
              \"ANTHROPIC_API_KEY=(hidden)\"]"
            ]
        );
        assert!(!format!("{:?}", Bounds::of(&config)).contains("sk-"));
    }

    #[test]
    fn names_that_hold_secrets_are_told_from_those_that_do_not() {
        for secret in [
            "ANTHROPIC_API_KEY",
            "gh_token",
            "DB_PASSWORD",
            "ANTHROPIC_AUTH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "PASSWD",
        ] {
            assert!(holds_secret(secret), "{secret}");
        }
        for plain in [
            "ANTHROPIC_BASE_URL",
            "HTTPS_PROXY",
            "NODE_EXTRA_CA_CERTS",
            "ANTHROPIC_MODEL",
            "PI_CODING_AGENT_DIR",
        ] {
            assert!(!holds_secret(plain), "{plain}");
        }
    }

    #[test]
    fn a_record_from_before_a_setting_was_kept_compares_the_settings_it_holds() {
        let mut was = Bounds::of(&Config::default());
        was.destinations.pop();
        let mut config = Config::default();
        config.executor.env = vec![("ANTHROPIC_BASE_URL".into(), "x".into())];
        assert!(was.destination_changes(&Bounds::of(&config)).is_empty());
        config.store.url = Some("postgres://elsewhere/db".into());
        let said = was.destination_changes(&Bounds::of(&config));
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].setting, "[store] url");
        was.destinations.clear();
        assert!(was.destination_changes(&Bounds::of(&config)).is_empty());
    }
}

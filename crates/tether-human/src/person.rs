//! Who the person at this machine is, as their acts are recorded.
//!
//! Approving a contract, an answer typed on the terminal or with `tether answer`, a sign-off or
//! cancel by hand, a budget raised on resume, a message sent with `tether say`: each is stored
//! with the person's name, and the plan log, the dashboard, the run report and the notices show
//! it. The name is, in order: `[human] name` in tether.toml; git's `user.name` from the person's
//! own (global) git configuration; `$USER`; `$LOGNAME`. Never the repository's git
//! configuration: a repository (one the agent made, say) cannot choose whose name an act
//! carries.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use tether_config::{Env, HumanConfig};

/// How long git gets to print `user.name`.
const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// The name recorded for the person when nothing names them.
pub const NOBODY_NAMED: &str = "a person";

/// The person's name (see the module documentation).
pub fn name(config: &HumanConfig, env: &dyn Env) -> String {
    known_name(config, env).unwrap_or_else(|| NOBODY_NAMED.to_owned())
}

/// The person's name when something names them.
pub fn known_name(config: &HumanConfig, env: &dyn Env) -> Option<String> {
    config
        .name
        .clone()
        .or_else(|| git_user_name(env))
        .or_else(|| from_env(env, "USER"))
        .or_else(|| from_env(env, "LOGNAME"))
}

fn from_env(env: &dyn Env, var: &str) -> Option<String> {
    env.var(var)
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// Asks git for the global `user.name` of the person `env` describes (their `HOME`, and
/// `XDG_CONFIG_HOME` and `GIT_CONFIG_GLOBAL` when set), outside any repository (from `/`, with
/// the system configuration ignored), bounded in time; `None` when there is no git, no home or
/// no name.
fn git_user_name(env: &dyn Env) -> Option<String> {
    let home = from_env(env, "HOME")?;
    let mut git = Command::new("git");
    git.args(["config", "--global", "--get", "user.name"])
        .current_dir(Path::new("/"))
        .env("HOME", home)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("GIT_CONFIG_GLOBAL");
    for var in ["XDG_CONFIG_HOME", "GIT_CONFIG_GLOBAL"] {
        if let Some(value) = from_env(env, var) {
            git.env(var, value);
        }
    }
    let mut child = git
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_CONFIG")
        .env_remove("GIT_CONFIG_PARAMETERS")
        .env_remove("GIT_CONFIG_COUNT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let deadline = Instant::now() + GIT_TIMEOUT;
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    let name: String = String::from_utf8_lossy(&out.stdout)
        .trim()
        .chars()
        .filter(|c| !c.is_control())
        .take(100)
        .collect();
    (!name.is_empty()).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_config::MapEnv;

    #[test]
    fn the_configured_name_comes_first() {
        let config = HumanConfig {
            name: Some("Ana Lima".to_owned()),
            ..HumanConfig::default()
        };
        let env = MapEnv::new().with("USER", "ana");
        assert_eq!(name(&config, &env), "Ana Lima");
    }

    #[test]
    fn without_a_home_git_is_not_asked_and_the_login_names_the_person() {
        let config = HumanConfig::default();
        assert_eq!(name(&config, &MapEnv::new().with("LOGNAME", "ana")), "ana");
        assert_eq!(
            name(&config, &MapEnv::new().with("USER", "  ")),
            NOBODY_NAMED
        );
    }

    #[test]
    fn gits_global_user_name_comes_before_the_login() {
        let dir = tempfile::tempdir().unwrap();
        let gitconfig = dir.path().join("gitconfig");
        std::fs::write(&gitconfig, "[user]\n\tname = Bo Git\n").unwrap();
        let env = MapEnv::new()
            .with("HOME", dir.path().to_str().unwrap())
            .with("GIT_CONFIG_GLOBAL", gitconfig.to_str().unwrap())
            .with("USER", "bo");
        assert_eq!(name(&HumanConfig::default(), &env), "Bo Git");
    }
}

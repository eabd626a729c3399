//! `[sandbox]` and `[run]`: how the agent is kept apart from the rest of the machine and from
//! the user's checkout.

use std::path::PathBuf;

use crate::keys;
use crate::reader::{Reader, Table};

/// Whether children run sandboxed (`[sandbox] mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SandboxMode {
    /// Every child runs in the sandbox; a kernel that cannot enforce it stops the run.
    #[default]
    Enforce,
    /// No sandbox: a warning on every run.
    Off,
}

impl SandboxMode {
    /// Every choice with its spelling in `tether.toml`.
    pub const CHOICES: [(&'static str, SandboxMode); 2] =
        [("enforce", SandboxMode::Enforce), ("off", SandboxMode::Off)];
}

/// The sandbox every child runs in (`[sandbox]`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SandboxConfig {
    /// Enforced or off.
    pub mode: SandboxMode,
    /// Whether the built-in agent's shell and the verify commands may reach the network
    /// (external agent CLIs always may: they need their model's API).
    pub network: bool,
    /// More trees children may write (`~` for the home directory).
    pub writable: Vec<PathBuf>,
    /// More trees children may read (`~` for the home directory).
    pub readable: Vec<PathBuf>,
    /// More environment variables children get, by name, beyond the usual ones (`PATH`,
    /// `HOME`, the locale, the terminal, toolchain homes).
    pub env: Vec<String>,
}

/// Where a run works and what it leaves (`[run]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunConfig {
    /// Every `tether run` and `tether ralph` works in a worktree of its own, on a branch
    /// `tether/<run-id>`, as with `--worktree`.
    pub worktree: bool,
    /// Whether the repository's git hooks run for the commit tether makes per signed-off goal.
    pub commit_hooks: bool,
    /// How many goals of the plan `tether run` works on at once, each in a worktree of its
    /// own (`--parallel`); 1 works on them one after another, in the run's own tree.
    pub parallel: u32,
    /// How many times a goal's merge into the run's branch may conflict before a person is
    /// asked: the goal's agent settles each conflict before that (1: a person at the first).
    pub merge_attempts: u32,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            worktree: false,
            commit_hooks: false,
            parallel: 1,
            merge_attempts: 3,
        }
    }
}

/// The most conflicting merges of one goal before a person is asked.
pub const MAX_MERGE_ATTEMPTS: i64 = 20;

/// The most goals a run works on at once.
pub const MAX_PARALLEL: i64 = 64;

/// `~` or `~/…` against `home`; other paths as written.
fn expand(path: &str, home: Option<&str>) -> PathBuf {
    match (path.strip_prefix('~'), home) {
        (Some(""), Some(home)) => PathBuf::from(home),
        (Some(rest), Some(home)) if rest.starts_with('/') => PathBuf::from(format!("{home}{rest}")),
        _ => PathBuf::from(path),
    }
}

fn absolute(text: &str) -> Result<(), String> {
    if text.starts_with('/') || text == "~" || text.starts_with("~/") {
        Ok(())
    } else {
        Err(format!(
            "must be an absolute path or start with ~/, got {text:?}"
        ))
    }
}

pub(crate) fn read_sandbox(r: &mut Reader, t: &Table, home: Option<&str>, out: &mut SandboxConfig) {
    r.unknown_keys(t, keys::SANDBOX, None);
    if let Some(mode) = r.choice(t, "mode", &SandboxMode::CHOICES) {
        out.mode = mode;
    }
    if let Some(on) = r.bool(t, "network") {
        out.network = on;
    }
    if let Some(paths) = r.string_list(t, "writable", absolute) {
        out.writable = paths.iter().map(|p| expand(p, home)).collect();
    }
    if let Some(paths) = r.string_list(t, "readable", absolute) {
        out.readable = paths.iter().map(|p| expand(p, home)).collect();
    }
    if let Some(names) = r.string_list(t, "env", crate::values::env_var_name) {
        out.env = names;
    }
}

pub(crate) fn read_run(r: &mut Reader, t: &Table, out: &mut RunConfig) {
    r.unknown_keys(t, keys::RUN, None);
    if let Some(on) = r.bool(t, "worktree") {
        out.worktree = on;
    }
    if let Some(on) = r.bool(t, "commit_hooks") {
        out.commit_hooks = on;
    }
    if let Some(n) = r.int(t, "parallel", 1, MAX_PARALLEL) {
        out.parallel = n;
    }
    if let Some(n) = r.int(t, "merge_attempts", 1, MAX_MERGE_ATTEMPTS) {
        out.merge_attempts = n;
    }
}

#[cfg(test)]
mod tests {
    use super::expand;
    use std::path::PathBuf;

    #[test]
    fn a_tilde_is_the_home_directory() {
        assert_eq!(
            expand("~/.cargo", Some("/home/ana")),
            PathBuf::from("/home/ana/.cargo")
        );
        assert_eq!(expand("~", Some("/home/ana")), PathBuf::from("/home/ana"));
        assert_eq!(expand("/opt/x", Some("/home/ana")), PathBuf::from("/opt/x"));
        assert_eq!(expand("~ana", Some("/home/ana")), PathBuf::from("~ana"));
    }
}

//! A policy with what goes with it for every child: the kernel's support checked once, the
//! environment cut down to an allow-list, and a private temporary directory.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Arc;

use crate::{Policy, RunNamespace, SandboxError, Support, confine};

/// Variables every sandboxed child gets when tether has them: what programs and toolchains
/// need to run, nothing that carries a credential.
const ENV_NAMES: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "CI",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "RUSTUP_TOOLCHAIN",
    "GOPATH",
    "GOROOT",
    "GOFLAGS",
    "JAVA_HOME",
    "NODE_PATH",
    "NVM_DIR",
    "NVM_BIN",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "PYTHONPATH",
];

/// Prefixes of variables every sandboxed child gets (the locale's categories).
const ENV_PREFIXES: &[&str] = &["LC_"];

/// A [`Policy`] ready to confine children: built once per run, used for every spawn.
#[derive(Debug, Clone)]
pub struct Sandbox {
    policy: Policy,
    support: Support,
    tmpdir: Option<PathBuf>,
    vars: Vec<(String, OsString)>,
    env_names: Vec<String>,
    env_prefixes: Vec<String>,
    run: Option<Arc<RunNamespace>>,
}

impl Sandbox {
    /// A sandbox for `policy`, refused at once when the kernel cannot enforce it.
    pub fn new(policy: Policy, support: Support) -> Result<Self, SandboxError> {
        support.check()?;
        Ok(Sandbox {
            policy,
            support,
            tmpdir: None,
            vars: Vec::new(),
            env_names: Vec::new(),
            env_prefixes: Vec::new(),
            run: None,
        })
    }

    /// Points `TMPDIR` (and `TMP`, `TEMP`) at `dir`, which the policy should let the child write.
    #[must_use]
    pub fn tmpdir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.tmpdir = Some(dir.into());
        self
    }

    /// Sets `name` to `value` for every child (a command may still set it otherwise).
    #[must_use]
    pub fn var(mut self, name: impl Into<String>, value: impl Into<OsString>) -> Self {
        self.vars.push((name.into(), value.into()));
        self
    }

    /// Also passes on the variables named `names` from tether's environment.
    #[must_use]
    pub fn env(mut self, names: impl IntoIterator<Item = String>) -> Self {
        self.env_names.extend(names);
        self
    }

    /// Also passes on every variable starting with `prefix` (an agent CLI's own settings).
    #[must_use]
    pub fn env_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.env_prefixes.push(prefix.into());
        self
    }

    /// Runs every child in the run's PID namespace `run`: nothing a child starts outlives it.
    #[must_use]
    pub fn within(mut self, run: Arc<RunNamespace>) -> Self {
        self.run = Some(run);
        self
    }

    /// The policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Whether a variable of tether's own environment is passed on to children.
    pub fn passes(&self, name: &str) -> bool {
        ENV_NAMES.contains(&name)
            || ENV_PREFIXES.iter().any(|p| name.starts_with(p))
            || self.env_names.iter().any(|n| n == name)
            || self
                .env_prefixes
                .iter()
                .any(|p| name.starts_with(p.as_str()))
    }

    /// Makes `cmd` run in the sandbox: its environment is what `cmd` sets explicitly plus the
    /// allowed part of tether's, and the policy is applied between fork and exec.
    pub fn confine(&self, cmd: &mut Command) -> Result<(), SandboxError> {
        let mut prepared = self.policy.prepare(self.support)?;
        if let Some(run) = &self.run {
            prepared = prepared.inside(run.entry()?);
        }
        let explicit: Vec<(OsString, Option<OsString>)> = cmd
            .get_envs()
            .map(|(k, v)| (k.to_owned(), v.map(ToOwned::to_owned)))
            .collect();
        cmd.env_clear();
        for (name, value) in std::env::vars_os() {
            if name.to_str().is_some_and(|n| self.passes(n)) {
                cmd.env(name, value);
            }
        }
        if let Some(dir) = &self.tmpdir {
            for name in ["TMPDIR", "TMP", "TEMP"] {
                cmd.env(name, dir);
            }
        }
        for (name, value) in &self.vars {
            cmd.env(name, value);
        }
        for (name, value) in explicit {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        confine(cmd, prepared);
        Ok(())
    }
}

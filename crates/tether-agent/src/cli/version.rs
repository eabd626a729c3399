//! `<cli> --version`, once per executor: a missing or too-old CLI stops the run before its first
//! turn with the fix, instead of failing every iteration.

use std::fmt;

use tether_tools::{ShellEnd, run_program};
use tokio_util::sync::CancellationToken;

use super::{Cli, CliError, VERSION_TIMEOUT, describe_end};
use crate::executor::ExecError;

/// A CLI's version: the first `major.minor.patch` in what `--version` printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version {
    /// Major.
    pub major: u64,
    /// Minor.
    pub minor: u64,
    /// Patch.
    pub patch: u64,
}

impl Version {
    /// `major.minor.patch`.
    pub const fn new(major: u64, minor: u64, patch: u64) -> Self {
        Version {
            major,
            minor,
            patch,
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The first `N.N.N` in `text` (`2.1.330 (Claude Code)`, `codex-cli 0.169.0`), if any.
pub fn parse_version(text: &str) -> Option<Version> {
    text.split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .find_map(|word| {
            let mut parts = word.split('.').filter(|p| !p.is_empty());
            let major = parts.next()?.parse().ok()?;
            let minor = parts.next()?.parse().ok()?;
            let patch = parts.next()?.parse().ok()?;
            Some(Version::new(major, minor, patch))
        })
}

impl Cli {
    /// Runs `<program> --version` the first time it is called and checks it against the
    /// oldest supported version; later calls return the version found.
    pub async fn check_version(&self, cancel: &CancellationToken) -> Result<Version, ExecError> {
        if let Some(version) = self.version.get() {
            return Ok(*version);
        }
        let setup = |e: CliError| ExecError::Setup(Box::new(e));
        let argv = self.argv(["--version"]);
        let command = self
            .settings()
            .command(argv, None, VERSION_TIMEOUT, Vec::new());
        let sandboxed = command.sandbox.is_some();
        let run = run_program(&command, cancel).await.map_err(|e| {
            if sandboxed && e.kind() == std::io::ErrorKind::PermissionDenied {
                return setup(self.unreadable(self.settings().program.clone().into()));
            }
            setup(self.not_runnable(format!("could not start: {e}")))
        })?;
        match run.end {
            ShellEnd::Cancelled => return Err(ExecError::Cancelled),
            ShellEnd::Exited(0) => {}
            other => {
                let hidden = super::denied::denied_path(&run.stderr, |p| p.exists());
                if sandboxed && let Some(path) = hidden {
                    return Err(setup(self.unreadable(path)));
                }
                let detail = format!("{}: {}", describe_end(other), run.stderr.trim());
                return Err(setup(self.not_runnable(detail)));
            }
        }
        let Some(found) = parse_version(&run.stdout) else {
            let detail = format!("printed no version: {:?}", run.stdout.trim());
            return Err(setup(self.not_runnable(detail)));
        };
        let minimum = self.agent.minimum;
        if found < minimum {
            return Err(setup(CliError::TooOld {
                agent: self.agent,
                found,
                minimum,
            }));
        }
        Ok(*self.version.get_or_init(|| found))
    }
}

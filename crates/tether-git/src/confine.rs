//! Where tether's git runs on a workspace: in a sandbox of its own, or — only when the person
//! turned the run's sandbox off — outside any.
//!
//! tether's git reads no configuration the agent could have written (see [`crate::Snapshots`]),
//! so it should run no program of the agent's. The sandbox is the second wall, for what git
//! might still be made to do: the work tree readable only (a program git was somehow told to
//! run cannot change what is being snapshotted, nor `.git`), tether's snapshot repository the
//! only place it writes, the network off, `/tmp`, `/run` and the home directory covered, no
//! capability. A kernel that cannot enforce that means git does not run: the sign-off then knows
//! no changed line (a stricter check) and says why.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tether_sandbox::{Policy, Sandbox, Support};

use crate::GitError;

/// Where tether's git runs on a workspace. Handed down by whoever knows the run's sandbox mode
/// (`[sandbox] mode`): never guessed here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Confinement {
    /// In a sandbox of its own (see the module's documentation); when the kernel cannot
    /// enforce it, git does not run ([`GitError::NoSandbox`]).
    #[default]
    Sandboxed,
    /// Outside any sandbox: the person turned the run's sandbox off, so the agent already has
    /// every power of theirs; git still reads only tether's own configuration.
    Unconfined,
}

/// What a sandboxed git may reach.
#[derive(Debug, Default)]
pub(crate) struct Reach {
    /// Trees it reads (the work tree, borrowed objects).
    pub read: Vec<PathBuf>,
    /// Paths it reads when they exist (a `.git` above a directory git looks for a repository
    /// in, the `.git` files of a repository's other worktrees, which `git worktree prune` must
    /// see to leave their records alone).
    pub read_if_present: Vec<PathBuf>,
    /// Trees it writes (tether's snapshot repository, the objects a commit adds to).
    pub write: Vec<PathBuf>,
    /// Its `TMPDIR` (beneath a written tree), when it has one.
    pub tmp: Option<PathBuf>,
}

impl Confinement {
    /// The sandbox for `reach`: `None` when unconfined; an error when the kernel cannot
    /// enforce one.
    pub(crate) fn sandbox(self, reach: &Reach) -> Result<Option<Arc<Sandbox>>, GitError> {
        if self == Confinement::Unconfined {
            return Ok(None);
        }
        self.sandbox_on(reach, support())
    }

    /// [`Confinement::sandbox`] on a kernel that offers `support`.
    pub(crate) fn sandbox_on(
        self,
        reach: &Reach,
        support: Support,
    ) -> Result<Option<Arc<Sandbox>>, GitError> {
        if self == Confinement::Unconfined {
            return Ok(None);
        }
        let mut policy = Policy::new().network(false);
        for path in &reach.read {
            policy = policy.read(path);
        }
        for path in &reach.read_if_present {
            policy = policy.read_if_present(path);
        }
        for path in &reach.write {
            policy = policy.write(path);
        }
        if let Some(home) = std::env::var_os("HOME") {
            policy = policy.cover(home);
        }
        let mut sandbox = Sandbox::new(policy, support)
            .map_err(|e| GitError::NoSandbox { why: e.to_string() })?;
        if let Some(tmp) = &reach.tmp {
            sandbox = sandbox.tmpdir(tmp);
        }
        Ok(Some(Arc::new(sandbox)))
    }
}

/// What the kernel supports, probed once per process (a probe starts a child): the commands on
/// a person's repository each build a sandbox of their own.
fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(Support::probe)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A kernel without Landlock: no sandbox, so no git (an error, never an unconfined git);
    /// unless the person turned the sandbox off.
    #[test]
    fn no_sandbox_means_no_git_unless_the_sandbox_is_off() {
        let dir = tempfile::tempdir().unwrap();
        let reach = Reach {
            read: vec![dir.path().to_path_buf()],
            write: vec![dir.path().to_path_buf()],
            tmp: Some(dir.path().to_path_buf()),
            ..Reach::default()
        };
        let old = Support {
            landlock_abi: 0,
            namespaces: true,
        };
        let got = Confinement::Sandboxed.sandbox_on(&reach, old);
        assert!(matches!(got, Err(GitError::NoSandbox { .. })), "{got:?}");
        assert!(
            Confinement::Unconfined
                .sandbox_on(&reach, old)
                .unwrap()
                .is_none()
        );
    }
}

//! Where a run lives: the machine, the workspace's root and its repository's remote.
//!
//! A team store holds runs of many machines. Reading and answering work from anywhere, but only
//! the machine that has a run's workspace can drive it, so every run records its [`Origin`] and
//! commands compare it with [`Origin::local`] before driving a run.
//!
//! The remote is read from the repository's `.git/config` (bounded: a regular file of at most
//! [`GIT_CONFIG_LIMIT`] bytes), and any credentials in it (`https://user:token@host/…`) are
//! dropped before it is stored.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most of `.git/config` read.
pub const GIT_CONFIG_LIMIT: u64 = 256 * 1024;

/// Where a run lives: the machine and workspace that can drive it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// The machine's hostname.
    pub machine: String,
    /// The root of the workspace (the repository's root when it is one).
    pub workspace_root: PathBuf,
    /// The repository's `origin` remote (or its first remote), without credentials.
    pub repo_remote: Option<String>,
}

impl Origin {
    /// This machine, with `workspace` and its repository (if any).
    pub fn local(workspace: &Path) -> Origin {
        let root = repo_root(workspace);
        Origin {
            machine: this_machine(),
            repo_remote: root.as_deref().and_then(remote_of),
            workspace_root: root.unwrap_or_else(|| workspace.to_path_buf()),
        }
    }
}

/// The environment variable that names this machine instead of its hostname (for containers,
/// whose hostnames change, and for tests that play several machines on one).
pub const MACHINE_VAR: &str = "TETHER_MACHINE";

/// This machine's name: `TETHER_MACHINE` when set, else its hostname, else `unknown`.
pub fn this_machine() -> String {
    if let Some(name) = std::env::var(MACHINE_VAR)
        .ok()
        .filter(|n| !n.trim().is_empty())
    {
        return name.trim().to_owned();
    }
    nix::unistd::gethostname()
        .ok()
        .and_then(|name| name.into_string().ok())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "unknown".to_owned())
}

/// The nearest directory at or above `workspace` holding a `.git`.
fn repo_root(workspace: &Path) -> Option<PathBuf> {
    workspace
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// The `origin` remote's URL in `root/.git/config`, else the first remote's.
fn remote_of(root: &Path) -> Option<String> {
    let path = root.join(".git/config");
    let meta = std::fs::symlink_metadata(&path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(&path)
        .ok()?
        .take(GIT_CONFIG_LIMIT)
        .read_to_string(&mut text)
        .ok()?;
    remote_in(&text).map(|url| without_credentials(&url))
}

/// The remote URL a git config names: `origin`'s when it has one, else the first remote's.
pub(crate) fn remote_in(config: &str) -> Option<String> {
    let mut section: Option<String> = None;
    let mut first = None;
    for line in config.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line
                .strip_prefix("[remote \"")
                .and_then(|rest| rest.strip_suffix("\"]"))
                .map(str::to_owned);
            continue;
        }
        let Some(name) = &section else { continue };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if key.trim() != "url" {
            continue;
        }
        let url = value.trim().trim_matches('"').to_owned();
        if name == "origin" {
            return Some(url);
        }
        first.get_or_insert(url);
    }
    first
}

/// `url` without a `user:password@` part (an `ssh` user such as `git@` stays).
pub(crate) fn without_credentials(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((userinfo, host)) if userinfo.contains(':') || scheme.starts_with("http") => {
            format!("{scheme}://{host}{path}")
        }
        _ => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_wins_over_the_first_remote() {
        let config = "[core]\n\tbare = false\n[remote \"fork\"]\n\turl = git@x:me/a.git\n\
                      [remote \"origin\"]\n\turl = https://github.com/team/a.git\n";
        assert_eq!(
            remote_in(config).as_deref(),
            Some("https://github.com/team/a.git")
        );
        let only_fork =
            "[remote \"fork\"]\n\turl = git@x:me/a.git\n[branch \"main\"]\n\turl = no\n";
        assert_eq!(remote_in(only_fork).as_deref(), Some("git@x:me/a.git"));
        assert_eq!(remote_in("[core]\n"), None);
    }

    #[test]
    fn credentials_never_reach_the_store() {
        assert_eq!(
            without_credentials("https://me:ghp_secret@github.com/team/a.git"),
            "https://github.com/team/a.git"
        );
        assert_eq!(
            without_credentials("https://token@github.com/team/a.git"),
            "https://github.com/team/a.git"
        );
        assert_eq!(
            without_credentials("ssh://git@host/team/a.git"),
            "ssh://git@host/team/a.git"
        );
        assert_eq!(without_credentials("git@x:me/a.git"), "git@x:me/a.git");
    }

    #[test]
    fn a_workspace_inside_a_repository_records_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git/config"),
            "[remote \"origin\"]\n\turl = https://u:p@example.com/r.git\n",
        )
        .unwrap();
        let ws = dir.path().join("sub/dir");
        std::fs::create_dir_all(&ws).unwrap();
        let origin = Origin::local(&ws);
        assert_eq!(origin.workspace_root, dir.path());
        assert_eq!(
            origin.repo_remote.as_deref(),
            Some("https://example.com/r.git")
        );
        assert!(!origin.machine.is_empty());
    }
}

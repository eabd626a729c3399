//! The person's own git settings that tether carries over to the git it runs without their
//! configuration files: the directories they trust (`safe.directory`, so git's ownership check
//! answers as it would for them), their identity (`user.name`, `user.email`, for the commits
//! tether makes) and the file of what they ignore everywhere (`core.excludesFile`, so a `.env`
//! they ignore is not snapshotted). Read from their global and system files only, from `/`,
//! outside any repository; reading configuration runs no program.

use std::path::PathBuf;

use tokio_util::sync::CancellationToken;

use crate::command::exec_outside;

/// The person's `safe.directory` entries, as command-line configuration.
pub(crate) async fn safe_directories(
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Vec<(String, String)> {
    let args = [
        "config",
        "--show-scope",
        "--includes",
        "--get-all",
        "safe.directory",
    ];
    let Ok(out) = exec_outside(&args, env_remove, cancel).await else {
        return Vec::new();
    };
    if !out.ok() {
        return Vec::new();
    }
    protected(&out.stdout)
        .map(|dir| ("safe.directory".to_owned(), dir.to_owned()))
        .collect()
}

/// The values of a `--show-scope` listing that come from protected configuration (the system
/// and global files, the command line): the only scopes git reads `safe.directory` from.
fn protected(listing: &str) -> impl Iterator<Item = &str> {
    listing.lines().filter_map(|line| {
        let (scope, value) = line.split_once('\t')?;
        matches!(scope, "system" | "global" | "command").then_some(value)
    })
}

/// The person's `user.<key>` (`name`, `email`) from their global configuration, if set.
pub async fn global_identity(key: &str, cancel: &CancellationToken) -> Option<String> {
    let name = format!("user.{key}");
    let out = exec_outside(&["config", "--global", "--get", &name], &[], cancel)
        .await
        .ok()?;
    let value = out.stdout.trim();
    (out.ok() && !value.is_empty()).then(|| value.to_owned())
}

/// The file of patterns the person ignores in every repository: their global
/// `core.excludesFile` (with their includes followed, `~` expanded), else git's default
/// (`$XDG_CONFIG_HOME/git/ignore`, `~/.config/git/ignore`). `None` when there is none to name.
pub async fn global_excludes_file(
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Option<PathBuf> {
    let args = [
        "config",
        "--global",
        "--includes",
        "--path",
        "--get",
        "core.excludesFile",
    ];
    if let Ok(out) = exec_outside(&args, env_remove, cancel).await {
        let value = out.stdout.trim();
        if out.ok() && !value.is_empty() {
            return Some(PathBuf::from(value));
        }
    }
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(config.join("git/ignore"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_protected_scopes_count() {
        let listing = "global\t/srv/a\nlocal\t*\nsystem\t/srv/b\ncommand\t/srv/c\nworktree\t*\n";
        assert_eq!(
            protected(listing).collect::<Vec<_>>(),
            ["/srv/a", "/srv/b", "/srv/c"]
        );
    }
}

//! The person's own git settings that tether carries over to the git it runs without their
//! configuration files: the directories they trust (`safe.directory`, so git's ownership check
//! answers as it would for them) and their identity (`user.name`, `user.email`, for the commits
//! tether makes). Read from their global and system files only, from `/`, outside any
//! repository; reading configuration runs no program.

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

//! Talking to a repository's shared remote, for a run of many goals whose goals work on many
//! machines: a worker clones the repository and fetches from it, the coordinator and the
//! workers push branches to it and fetch theirs.
//!
//! Unlike the rest of tether's git, this one needs what the person's own git has to reach a
//! remote — the network and their credentials (an ssh agent, a credential helper of their
//! global configuration) — so it runs outside tether's sandbox, with the person's global and
//! system configuration. It never runs a program the repository's own files could name: hooks
//! off (`core.hooksPath=/dev/null`), `core.fsmonitor` off, the `ext::` transport refused, no
//! prompt for a password, bounded in time, in a process group of its own killed with it,
//! tether's keys out of its environment, and named to git by its git directory (`GIT_DIR`),
//! never found through a tree. It runs only the four commands below, on the person's repository
//! or on a clone tether made.

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::GitError;
use crate::command::{GitCommand, GitOutput, path_str, spawn_plain};

/// The longest one exchange with a remote may take.
const TIMEOUT: Duration = Duration::from_secs(600);

/// Configuration every exchange runs with, over the person's and the repository's.
const GUARDS: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("protocol.ext.allow", "never"),
    ("credential.interactive", "false"),
];

/// One exchange with a remote.
#[derive(Debug, Clone, Copy)]
pub enum Exchange<'a> {
    /// `git clone --no-checkout --branch <branch> <url> <dir>`: a repository of tether's own at
    /// `dir`, its `HEAD` on `branch`.
    Clone {
        /// The remote.
        url: &'a str,
        /// The branch its `HEAD` is on.
        branch: &'a str,
        /// Where the clone goes (must not exist, or be empty).
        dir: &'a Path,
    },
    /// `git fetch <url> <refspecs>` into the repository at `git_dir`.
    Fetch {
        /// The repository's git directory.
        git_dir: &'a Path,
        /// The remote.
        url: &'a str,
        /// What to fetch, each `+<remote ref>:<local ref>`.
        refspecs: &'a [String],
    },
    /// `git push <url> <refspecs>` from the repository at `git_dir` (never forced).
    Push {
        /// The repository's git directory.
        git_dir: &'a Path,
        /// The remote.
        url: &'a str,
        /// What to push, each `<local ref>:<remote ref>`.
        refspecs: &'a [String],
    },
    /// `git ls-remote <url> <refs>`: the remote's refs of those names, and their commits.
    List {
        /// The remote.
        url: &'a str,
        /// The refs.
        refs: &'a [String],
    },
}

impl Exchange<'_> {
    /// Runs it: what git printed once it exited (zero or not), without `env_remove`.
    pub async fn run(
        &self,
        env_remove: &[String],
        cancel: &CancellationToken,
    ) -> Result<GitOutput, GitError> {
        let mut args: Vec<String> = Vec::new();
        for (key, value) in GUARDS {
            args.extend(["-c".to_owned(), format!("{key}={value}")]);
        }
        let (cwd, git_dir) = match self {
            Exchange::Clone { url, branch, dir } => {
                args.extend(
                    [
                        "clone",
                        "--no-checkout",
                        "--quiet",
                        "--branch",
                        branch,
                        "--",
                        url,
                    ]
                    .map(str::to_owned),
                );
                args.push(path_str(dir)?);
                ("/".as_ref(), None)
            }
            Exchange::Fetch {
                git_dir,
                url,
                refspecs,
            } => {
                args.extend(["fetch", "--quiet", "--no-tags", "--", url].map(str::to_owned));
                args.extend(refspecs.iter().cloned());
                (*git_dir, Some(*git_dir))
            }
            Exchange::Push {
                git_dir,
                url,
                refspecs,
            } => {
                args.extend(["push", "--quiet", "--porcelain", "--", url].map(str::to_owned));
                args.extend(refspecs.iter().cloned());
                (*git_dir, Some(*git_dir))
            }
            Exchange::List { url, refs } => {
                args.extend(["ls-remote", "--", url].map(str::to_owned));
                args.extend(refs.iter().cloned());
                ("/".as_ref(), None)
            }
        };
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let cmd = GitCommand::new(cwd, &refs).timeout(TIMEOUT);
        let mut env = vec![
            ("GIT_TERMINAL_PROMPT".to_owned(), "0".to_owned()),
            ("GIT_CEILING_DIRECTORIES".to_owned(), "/".to_owned()),
        ];
        if let Some(dir) = git_dir {
            env.push(("GIT_DIR".to_owned(), path_str(dir)?));
        }
        spawn_plain(&cmd, env, env_remove, cancel).await
    }
}

/// The commit `branch` (a short name) points at on the remote `url`, if it has that branch.
pub async fn remote_head(
    url: &str,
    branch: &str,
    env_remove: &[String],
    cancel: &CancellationToken,
) -> Result<Option<String>, GitError> {
    let reference = format!("refs/heads/{branch}");
    let refs = [reference.clone()];
    let listed = Exchange::List { url, refs: &refs }
        .run(env_remove, cancel)
        .await?;
    if !listed.ok() {
        return Err(GitError::Failed {
            what: format!("ls-remote {url} {reference}"),
            stderr: listed.stderr.trim().to_owned(),
        });
    }
    Ok(listed.stdout.lines().find_map(|line| {
        let (commit, name) = line.split_once('\t')?;
        (name == reference).then(|| commit.to_owned())
    }))
}

//! tether's own snapshot repository: a git directory of tether's under the workspace's state
//! directory (`.tether/git/`, which the agent's sandbox hides), with a configuration tether
//! wrote, in which every snapshot, diff and listing of a workspace runs.
//!
//! git is told this directory (`GIT_DIR`) and the work tree (`GIT_WORK_TREE`), with a private
//! index, no system or global configuration, none of tether's `GIT_*` variables, attributes
//! read from the empty tree (`GIT_ATTR_SOURCE`, so no `.gitattributes` of the work tree is read
//! on a git that knows it) and the programs of [`crate::neutral::FIXED`] turned off. So it reads
//! no configuration the agent could have written: the workspace's `.git/config` is never read,
//! no driver is defined anywhere git looks, and a `.gitattributes` naming `filter=evil` names
//! nothing. A workspace that is no repository is snapshotted the same way, and so is one with a
//! repository of any kind — with or without a commit, dirty or clean.
//!
//! When tether makes this directory, a repository whose `.git` is a real directory (never a
//! `.git` file, never followed) above the state directory, owned by the same user, lends it its
//! objects, read-only (`objects/info/alternates`): the snapshot then stores only what the
//! repository lacks. A `.git` that appears later (one the agent made with `git init`) is never
//! borrowed from. Objects are data: a missing one makes a diff fail, which the sign-off takes
//! as no changed line known (a stricter check).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tether_sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::command::{GitCommand, GitOutput, Setting, exec, path_str};
use crate::confine::{Confinement, Reach};
use crate::{GitError, ObjectId};

/// The snapshot repository's directory under a state directory.
pub const DIR_NAME: &str = "git";

/// The empty tree's id: where a git that knows `GIT_ATTR_SOURCE` reads attributes from.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// The configuration tether writes for its repository (the command line turns off the rest).
const CONFIG: &str = "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tfilemode = true\n\
                      \tsymlinks = true\n\tignorecase = false\n\tlogallrefupdates = false\n\
                      \tuntrackedCache = false\n\tsplitIndex = false\n[gc]\n\tauto = 0\n";

/// How long a command of the snapshot repository gets unless told otherwise.
const TIMEOUT: Duration = Duration::from_secs(60);

/// tether's snapshot repository for one work tree, ready to run git in.
#[derive(Debug, Clone)]
pub struct Snapshots {
    pub(crate) git_dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    /// The state directory relative to the work tree, when it lies beneath it (left out of
    /// every snapshot).
    pub(crate) state_in_tree: Option<String>,
    /// The person's git directory a commit is meant for: new objects go to its `objects/`
    /// instead of the repository's own, and its `info/exclude` is honoured.
    pub(crate) person: Option<PathBuf>,
    sandbox: Option<Arc<Sandbox>>,
    pub(crate) env_remove: Vec<String>,
    pub(crate) timeout: Duration,
}

impl Snapshots {
    /// The snapshot repository under `state_dir` (made when missing) for the work tree
    /// `work_tree`, its git run as `confinement` says, without the variables `env_remove`
    /// (tether's keys).
    pub fn open(
        state_dir: &Path,
        work_tree: &Path,
        confinement: Confinement,
        env_remove: &[String],
    ) -> Result<Self, GitError> {
        Self::open_with(state_dir, work_tree, None, confinement, env_remove)
    }

    /// [`Snapshots::open`] for a commit meant for the person's repository whose (common) git
    /// directory is `person`: every new object is written to its `objects/` (which git may then
    /// write, and nothing else of it) rather than to the snapshot repository's own, and its
    /// `info/exclude` is honoured. Its configuration is still never read.
    pub fn for_commit(
        state_dir: &Path,
        work_tree: &Path,
        person: &Path,
        confinement: Confinement,
        env_remove: &[String],
    ) -> Result<Self, GitError> {
        Self::open_with(state_dir, work_tree, Some(person), confinement, env_remove)
    }

    fn open_with(
        state_dir: &Path,
        work_tree: &Path,
        person: Option<&Path>,
        confinement: Confinement,
        env_remove: &[String],
    ) -> Result<Self, GitError> {
        // git is told both by path, from inside the work tree: relative paths would move.
        let absolute = |path: &Path| {
            std::path::absolute(path).map_err(|source| GitError::Private {
                path: path.to_path_buf(),
                source,
            })
        };
        let (state_dir, work_tree) = (&absolute(state_dir)?, &absolute(work_tree)?);
        let git_dir = ensure(state_dir)?;
        let state_in_tree = state_dir
            .strip_prefix(work_tree)
            .ok()
            .and_then(Path::to_str)
            .filter(|rel| !rel.is_empty())
            .map(str::to_owned);
        let mut reach = Reach {
            read: vec![work_tree.to_path_buf()],
            write: vec![git_dir.clone()],
            tmp: Some(git_dir.join("tmp")),
            ..Reach::default()
        };
        match person {
            Some(person) => reach.write.push(person.join("objects")),
            None => reach.read.extend(borrowed(&git_dir.join("objects"))),
        }
        let sandbox = confinement.sandbox(&reach)?;
        Ok(Snapshots {
            git_dir,
            work_tree: work_tree.to_path_buf(),
            state_in_tree,
            person: person.map(Path::to_path_buf),
            sandbox,
            env_remove: env_remove.to_vec(),
            timeout: TIMEOUT,
        })
    }

    /// Each command gets `timeout` (unless it sets its own).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The repository's git directory.
    pub fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The work tree it snapshots.
    pub fn work_tree(&self) -> &Path {
        &self.work_tree
    }

    /// A command of this repository (`git <args>` from the top of the work tree, bounded by
    /// the repository's timeout).
    pub fn command(&self, args: &[&str]) -> GitCommand {
        GitCommand::new(&self.work_tree, args)
            .timeout(self.timeout)
            .without_env(&self.env_remove)
    }

    /// Runs `cmd` in this repository (a diff of two snapshots, say): tether's directory and the
    /// work tree named to git, only tether's configuration read, in the sandbox when confined.
    /// A command that exits non-zero is an [`Ok`] with its code.
    pub async fn run(
        &self,
        cmd: &GitCommand,
        cancel: &CancellationToken,
    ) -> Result<GitOutput, GitError> {
        let config = crate::repo::fixed();
        let mut env = vec![("GIT_ATTR_SOURCE".to_owned(), EMPTY_TREE.to_owned())];
        if let Some(person) = &self.person {
            let objects = person.join("objects");
            env.push(("GIT_OBJECT_DIRECTORY".to_owned(), path_str(&objects)?));
        }
        if !cmd.env.iter().any(|(k, _)| k == "GIT_INDEX_FILE") {
            // Never the repository's own index: nothing relies on one.
            let none = self.git_dir.join("tmp/no-index");
            env.push(("GIT_INDEX_FILE".to_owned(), path_str(&none)?));
        }
        let setting = Setting {
            pinned: Some((&self.git_dir, &self.work_tree)),
            config: &config,
            env: &env,
            sandbox: self.sandbox.as_ref(),
        };
        exec(cmd, &setting, cancel).await
    }

    /// [`Snapshots::run`], with stdout when git exited 0 and an error naming the command and
    /// what git said otherwise.
    pub async fn ok(
        &self,
        cmd: &GitCommand,
        cancel: &CancellationToken,
    ) -> Result<GitOutput, GitError> {
        let out = self.run(cmd, cancel).await?;
        if out.ok() {
            Ok(out)
        } else {
            Err(GitError::Failed {
                what: cmd.describe(),
                stderr: out.stderr.trim().to_owned(),
            })
        }
    }

    /// The commit of `tree` on `parents` (the first, and a merged branch's head after it) with
    /// `message`, by `identity` (name, email) unless the
    /// person's environment names an author or committer (`GIT_AUTHOR_NAME`, …: theirs win, as
    /// with their own git), written where this repository writes objects; its id.
    pub async fn commit_tree(
        &self,
        tree: &ObjectId,
        parents: &[&ObjectId],
        message: &str,
        (name, email): (&str, &str),
        cancel: &CancellationToken,
    ) -> Result<ObjectId, GitError> {
        let mut args = vec!["commit-tree", tree.as_str()];
        for parent in parents {
            args.extend(["-p", parent.as_str()]);
        }
        let mut cmd = self.command(&args).input(message.as_bytes().to_vec());
        for (var, value) in [
            ("GIT_AUTHOR_NAME", name),
            ("GIT_AUTHOR_EMAIL", email),
            ("GIT_COMMITTER_NAME", name),
            ("GIT_COMMITTER_EMAIL", email),
        ] {
            if std::env::var_os(var).is_none() {
                cmd = cmd.env(var, value);
            }
        }
        let out = self.ok(&cmd, cancel).await?;
        ObjectId::parse(out.stdout.trim()).ok_or_else(|| GitError::Failed {
            what: cmd.describe(),
            stderr: format!("not an object id: {}", out.stdout.trim()),
        })
    }

    /// A new, empty directory in the repository's `tmp/` for one command's temporary files
    /// (given to it with [`GitCommand::scratch`]); the caller removes it.
    pub fn scratch_dir(&self, what: &str) -> Result<PathBuf, GitError> {
        let dir = self.scratch(what);
        std::fs::create_dir_all(&dir).map_err(|source| GitError::Private {
            path: dir.clone(),
            source,
        })?;
        Ok(dir)
    }

    /// A new path for a file of one command (an index, a list of patterns), in the repository's
    /// `tmp/`.
    pub(crate) fn scratch(&self, what: &str) -> PathBuf {
        self.git_dir.join("tmp").join(unique(what))
    }
}

/// A file name no other command of this process or another uses: `<what>-<pid>-<n>`.
fn unique(what: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    format!("{what}-{}-{n}", std::process::id())
}

/// The snapshot repository under `state_dir`, made when it is not there: built aside, then
/// renamed into place (a process making it at the same time wins or loses whole).
fn ensure(state_dir: &Path) -> Result<PathBuf, GitError> {
    let git_dir = state_dir.join(DIR_NAME);
    let io = |source: std::io::Error| GitError::Private {
        path: git_dir.clone(),
        source,
    };
    match std::fs::symlink_metadata(&git_dir) {
        Ok(meta) if meta.is_dir() => {
            refresh(&git_dir).map_err(io)?;
            return Ok(git_dir);
        }
        Ok(_) => {
            return Err(io(std::io::Error::other(
                "not a directory (tether makes it; remove it and it is made again)",
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    std::fs::create_dir_all(state_dir).map_err(io)?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let aside = state_dir.join(format!(".{DIR_NAME}-{}-{nanos}", std::process::id()));
    layout(&aside, state_dir).map_err(io)?;
    if let Err(e) = std::fs::rename(&aside, &git_dir) {
        let _ = std::fs::remove_dir_all(&aside);
        if !std::fs::symlink_metadata(&git_dir).is_ok_and(|m| m.is_dir()) {
            return Err(io(e));
        }
    }
    Ok(git_dir)
}

/// Makes an existing repository's configuration tether's again (written aside, renamed over),
/// and removes attributes of its own: only someone who could write `.tether/` (an agent with
/// the sandbox off) could have changed them, and git must read none of theirs.
fn refresh(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir.join("tmp"))?;
    let aside = dir.join("tmp").join(unique("config"));
    std::fs::write(&aside, CONFIG)?;
    std::fs::rename(&aside, dir.join("config"))?;
    match std::fs::remove_file(dir.join("info/attributes")) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Writes a repository's layout at `dir`: `HEAD`, tether's configuration, `objects/` (with the
/// objects of the repository found above `state_dir` borrowed, when one may be), `refs/`,
/// `info/` and `tmp/`.
fn layout(dir: &Path, state_dir: &Path) -> std::io::Result<()> {
    for sub in [
        "objects/info",
        "objects/pack",
        "refs/heads",
        "refs/tags",
        "info",
        "tmp",
    ] {
        std::fs::create_dir_all(dir.join(sub))?;
    }
    std::fs::write(dir.join("HEAD"), "ref: refs/heads/snapshots\n")?;
    // Made tidy: the first tidying is due a week from now, or when it grows.
    std::fs::write(dir.join("tidied"), "")?;
    std::fs::write(dir.join("config"), CONFIG)?;
    std::fs::write(
        dir.join("info/exclude"),
        "# tether's snapshot repository: what is left out is handed to git with each listing\n",
    )?;
    if let Some(objects) = lender(state_dir) {
        let mut line = objects.into_os_string().into_encoded_bytes();
        line.push(b'\n');
        std::fs::write(dir.join("objects/info/alternates"), line)?;
    }
    Ok(())
}

/// The object directory of the repository above `state_dir` that may lend its objects: the
/// nearest `.git` at or above the state directory's parent, when it is a real directory (not a
/// file, not a symlink) owned by the state directory's owner and holding `objects/`.
fn lender(state_dir: &Path) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt as _;
    let owner = std::fs::metadata(state_dir).ok()?.uid();
    let start = std::fs::canonicalize(state_dir.parent()?).ok()?;
    for dir in start.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dot_git) else {
            continue;
        };
        let objects = dot_git.join("objects");
        let lends = meta.is_dir()
            && meta.uid() == owner
            && std::fs::symlink_metadata(&objects).is_ok_and(|m| m.is_dir());
        return lends.then_some(objects);
    }
    None
}

/// The object directories the object directory `objects` borrows from (its `alternates`),
/// which a sandboxed git must be able to read.
pub(crate) fn borrowed(objects: &Path) -> Vec<PathBuf> {
    let Some(bytes) = crate::bounded::read(&objects.join("info/alternates"), 64 * 1024, false)
    else {
        return Vec::new();
    };
    String::from_utf8_lossy(&bytes)
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        // A relative entry is relative to the object directory, as git reads it.
        .map(|l| objects.join(l))
        .filter(|p| p.is_dir())
        .collect()
}

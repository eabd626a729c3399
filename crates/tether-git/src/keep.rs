//! Keeping tether's snapshot repository whole and tidy.
//!
//! - **Every run's start is pinned** ([`Snapshots::pin`]): its tree is reachable from
//!   `refs/tether/runs/<run>`, so tidying never drops what a run still measures from.
//! - **A start does not depend on the person's repository**: the objects the snapshot borrowed
//!   (`objects/info/alternates`) are copied into tether's own repository when it is pinned, in
//!   a pack of what is new since the last start copied whole (`refs/tether/whole`). The person's
//!   `git gc` may then prune what it likes: the start stays readable. Should that copy fail (its
//!   time ran out), the start is pinned all the same and borrows as before until the next tidying
//!   copies it.
//! - **Tidying** ([`Snapshots::tidy`], when [`Snapshots::tidy_due`]: a week since the last, or
//!   many loose objects or packs) drops the pins the caller names (runs ended long ago), packs
//!   everything still pinned into one pack of its own — the borrowed objects included
//!   (`git repack -A -d`, without `-l`) — and removes what no pin reaches once it is a day old
//!   (the snapshots of sign-offs; a snapshot being taken meanwhile is younger). One process
//!   tidies at a time; the others go on.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio_util::sync::CancellationToken;

use crate::{GitError, ObjectId, Snapshots};

/// Where the runs' starts are pinned: `refs/tether/runs/<run>`.
pub const RUNS_REFS: &str = "refs/tether/runs/";
/// The newest start copied whole: a new start's copy holds what it adds to that one.
const WHOLE_REF: &str = "refs/tether/whole";
/// The file whose time says when the repository was last tidied.
const TIDIED: &str = "tidied";
/// The lock one tidying process holds.
const TIDY_LOCK: &str = "tidy.lock";
/// How often the repository is tidied at most, unless it grew.
const TIDY_EVERY: Duration = Duration::from_secs(7 * 24 * 3600);
/// Loose objects past which it is tidied sooner (git's own `gc.auto` is 6700).
const LOOSE_MAX: u64 = 5000;
/// Packs past which it is tidied sooner (one per run's start copy).
const PACKS_MAX: u64 = 40;
/// What no pin reaches is removed once this old (`git prune --expire`).
const EXPIRE: &str = "1.day.ago";
/// Scratch files (indexes, patterns) of a process that was killed are removed once this old.
const SCRATCH_AGE: Duration = Duration::from_secs(24 * 3600);
/// How long each git command of a tidying gets (a repack of a large tree).
const TIDY_TIMEOUT: Duration = Duration::from_secs(300);

/// What tidying did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tidied {
    /// The pins dropped.
    pub dropped: usize,
    /// The pins kept.
    pub kept: usize,
}

impl Snapshots {
    /// Pins `tree`, the start of `run`: `refs/tether/runs/<run>` names it, and the objects it
    /// borrowed are copied into the repository (see the module's documentation). Nothing to do
    /// when it is pinned already (a resumed run). A copy that fails is logged, never fatal: the
    /// pin alone keeps tidying from dropping it.
    pub async fn pin(
        &self,
        run: &str,
        tree: &ObjectId,
        cancel: &CancellationToken,
    ) -> Result<(), GitError> {
        let name = pin_ref(run)?;
        if self.resolve(&name, cancel).await?.as_ref() == Some(tree) {
            return Ok(());
        }
        match self.copy_whole(tree, cancel).await {
            Ok(()) => self.set_ref(WHOLE_REF, tree, cancel).await?,
            Err(e) => tracing::warn!(
                run,
                error = %e,
                "the run's starting snapshot still borrows objects from the repository it was \
                 taken in (copied at the next tidying)"
            ),
        }
        self.set_ref(&name, tree, cancel).await
    }

    /// The runs whose start is pinned.
    pub async fn pins(&self, cancel: &CancellationToken) -> Result<Vec<String>, GitError> {
        Ok(self
            .pinned(cancel)
            .await?
            .into_iter()
            .map(|(run, _)| run)
            .collect())
    }

    /// The runs whose start is pinned, with their trees.
    async fn pinned(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Vec<(String, ObjectId)>, GitError> {
        let cmd = self
            .command(&[
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                RUNS_REFS,
            ])
            .whole(16 << 20);
        let out = self.ok(&cmd, cancel).await?;
        let bytes = out.bytes.unwrap_or_default();
        Ok(String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|line| {
                let (id, name) = line.split_once(' ')?;
                Some((
                    name.strip_prefix(RUNS_REFS)?.to_owned(),
                    ObjectId::parse(id)?,
                ))
            })
            .collect())
    }

    /// Whether the repository is due to be tidied: never tidied, tidied over a week ago, or
    /// grown past [`LOOSE_MAX`] loose objects or [`PACKS_MAX`] packs.
    pub async fn tidy_due(&self, cancel: &CancellationToken) -> bool {
        let tidied = std::fs::metadata(self.git_dir.join(TIDIED)).and_then(|m| m.modified());
        let stale = tidied
            .ok()
            .and_then(|at| SystemTime::now().duration_since(at).ok())
            .is_none_or(|age| age > TIDY_EVERY);
        if stale {
            return true;
        }
        let Ok(out) = self
            .ok(&self.command(&["count-objects", "-v"]), cancel)
            .await
        else {
            return false;
        };
        let count = |key: &str| {
            out.stdout
                .lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        count("count:") > LOOSE_MAX || count("packs:") > PACKS_MAX
    }

    /// Tidies the repository (see the module's documentation): drops the pins of the runs
    /// `dropped` names, packs what is still pinned into one pack of its own, and removes what no
    /// pin reaches once a day old. `None` when another process is tidying it.
    pub async fn tidy(
        &self,
        dropped: &[String],
        cancel: &CancellationToken,
    ) -> Result<Option<Tidied>, GitError> {
        let io = |path: PathBuf| {
            move |source| GitError::Private {
                path: path.clone(),
                source,
            }
        };
        let lock_path = self.git_dir.join(TIDY_LOCK);
        let lock = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io(lock_path.clone()))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(io(lock_path)(e)),
        }
        // Marked first: a tidying that fails or runs out of time is not tried again at every
        // run's start.
        let tidied = self.git_dir.join(TIDIED);
        std::fs::write(&tidied, b"").map_err(io(tidied))?;
        let pinned = self.pinned(cancel).await?;
        let (gone, kept): (Vec<_>, Vec<_>) =
            pinned.iter().partition(|(run, _)| dropped.contains(run));
        let mut updates = String::new();
        for (run, _) in &gone {
            updates.push_str(&format!("delete {}\n", pin_ref(run)?));
        }
        // The start the next copy is measured against must not keep a dropped one alive: any
        // start still pinned will do, since the repack below makes them all whole.
        let whole = self.resolve(WHOLE_REF, cancel).await?;
        if let Some(whole) = whole.filter(|w| !kept.iter().any(|(_, tree)| tree == w)) {
            match kept.first() {
                Some((_, tree)) => {
                    updates.push_str(&format!("update {WHOLE_REF} {tree} {whole}\n"))
                }
                None => updates.push_str(&format!("delete {WHOLE_REF} {whole}\n")),
            }
        }
        if !updates.is_empty() {
            let cmd = self.command(&["update-ref", "--stdin"]).input(updates);
            self.ok(&cmd, cancel).await?;
        }
        let unpack = format!("--unpack-unreachable={EXPIRE}");
        let repack = self
            .command(&["repack", "-A", "-d", "-q", "-n", &unpack])
            .timeout(TIDY_TIMEOUT);
        self.ok(&repack, cancel).await?;
        let expire = format!("--expire={EXPIRE}");
        let prune = self.command(&["prune", &expire]).timeout(TIDY_TIMEOUT);
        self.ok(&prune, cancel).await?;
        remove_old(&self.git_dir.join("tmp"), SCRATCH_AGE);
        Ok(Some(Tidied {
            dropped: gone.len(),
            kept: kept.len(),
        }))
    }

    /// Whether every object of `tree` can be found (none borrowed and pruned since): `false`
    /// when one is missing or the tree itself is; an error when git cannot say (its listing
    /// past 64 MiB, say).
    pub async fn is_whole(
        &self,
        tree: &ObjectId,
        cancel: &CancellationToken,
    ) -> Result<bool, GitError> {
        let cmd = self
            .command(&["rev-list", "--objects", "--missing=print", tree.as_str()])
            .whole(64 << 20);
        let out = self.run(&cmd, cancel).await?;
        if !out.ok() {
            return Ok(false);
        }
        let bytes = out.bytes.unwrap_or_default();
        Ok(!bytes
            .split(|b| *b == b'\n')
            .any(|line| line.starts_with(b"?")))
    }

    /// Packs the objects of `tree` that the newest start copied whole lacks, the borrowed ones
    /// included, into a pack of the repository's own.
    async fn copy_whole(
        &self,
        tree: &ObjectId,
        cancel: &CancellationToken,
    ) -> Result<(), GitError> {
        let mut revs = format!("{tree}\n");
        if let Some(whole) = self.resolve(WHOLE_REF, cancel).await? {
            revs.push_str(&format!("^{whole}\n"));
        }
        let base = crate::command::path_str(&self.git_dir.join("objects/pack/pack"))?;
        let cmd = self
            .command(&["pack-objects", "--revs", "-q", "--window=0", &base])
            .input(revs);
        self.ok(&cmd, cancel).await.map(drop)
    }

    /// The object `name` names, when it names one.
    async fn resolve(
        &self,
        name: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<ObjectId>, GitError> {
        let cmd = self.command(&["rev-parse", "--verify", "--quiet", name]);
        let out = self.run(&cmd, cancel).await?;
        Ok(out
            .ok()
            .then(|| ObjectId::parse(out.stdout.trim()))
            .flatten())
    }

    async fn set_ref(
        &self,
        name: &str,
        to: &ObjectId,
        cancel: &CancellationToken,
    ) -> Result<(), GitError> {
        let cmd = self.command(&["update-ref", name, to.as_str()]);
        self.ok(&cmd, cancel).await.map(drop)
    }
}

/// `refs/tether/runs/<run>`, for a run id made of letters, digits, `-` and `_` only (every id
/// tether draws): anything else is refused rather than handed to git as a ref name.
fn pin_ref(run: &str) -> Result<String, GitError> {
    let plain = !run.is_empty()
        && run.len() <= 128
        && run
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if plain {
        Ok(format!("{RUNS_REFS}{run}"))
    } else {
        Err(GitError::Refused {
            why: format!("{run:?} is not a run id tether can name a ref after"),
        })
    }
}

/// Removes the entries of `dir` (scratch files of killed processes) last changed more than
/// `age` ago; what cannot be removed stays.
fn remove_old(dir: &Path, age: Duration) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let Ok(meta) = entry.path().symlink_metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|at| now.duration_since(at).ok())
            .is_some_and(|elapsed| elapsed > age);
        if !old {
            continue;
        }
        let _ = if meta.is_dir() {
            std::fs::remove_dir_all(entry.path())
        } else {
            std::fs::remove_file(entry.path())
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_is_named_after_a_plain_run_id_only() {
        assert_eq!(pin_ref("r-ab12_C").unwrap(), "refs/tether/runs/r-ab12_C");
        for bad in [
            "",
            "../x",
            "a/b",
            "r-1.lock",
            "a b",
            "@{1}",
            &"x".repeat(129),
        ] {
            let got = pin_ref(bad);
            assert!(matches!(got, Err(GitError::Refused { .. })), "{bad}");
        }
    }
}

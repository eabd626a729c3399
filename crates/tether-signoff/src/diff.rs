//! What the work changed since the run began, computed once per sign-off attempt: the summary
//! the judge is given (which files changed), the lines it changed ([`ChangedLines`], which the
//! quote check reads), and the workspace's files now (where the quote check looks for lines
//! common to many files).
//!
//! The run recorded the workspace as it began: a tree of tether's snapshot repository
//! ([`tether_git::Start`]). The sign-off snapshots the workspace now and diffs the two there:
//! `git diff --stat` for the judge's summary, `git diff -U0` for the changed lines, the new
//! snapshot's files for the quote check. So "changed" means changed since the run began in
//! every kind of workspace — a repository with or without commits, a dirty tree, a directory
//! that is no repository — and a line the person changed before the run is not the run's work.
//! git runs only in tether's repository, reading no configuration the agent could write, in a
//! sandbox of its own unless the run's sandbox is off, each command bounded in time and size.
//!
//! Files a snapshot left out (over 16 MiB, not a file), at the start or now, have no line known
//! to be changed; when no starting snapshot is known (a run an older tether began, a snapshot
//! that failed, no run to compare with), the starting snapshot is no longer whole (an object it
//! borrowed from the person's repository pruned there, said as such) or git fails, no line is:
//! stricter checks, never laxer.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use tether_config::Workspace;
use tether_git::{Confinement, Skipped, Snapshots, Start};
use tether_store::RunId;
use tokio_util::sync::CancellationToken;

use crate::changed::{ChangedLines, Unknown, shown_path};

/// Each git command gets this long.
const GIT_TIMEOUT: Duration = Duration::from_secs(30);

/// How many bytes of `git diff --stat` are kept (its end, where the totals are).
const STAT_BYTES: usize = 6000;
/// How many bytes of `git diff -U0` are kept (past it, the changed lines of the files cut off
/// are not known: a stricter check, never a laxer one).
const DIFF_BYTES: usize = 4 * 1024 * 1024;
/// How many files left out of a snapshot are named to the judge.
const MAX_SKIPPED: usize = 10;

/// What the work changed in the workspace.
#[derive(Debug, Clone)]
pub(crate) struct WorkTree {
    /// The summary text, for the judge's prompt.
    pub summary: String,
    /// The lines this run changed.
    pub changed: ChangedLines,
    /// The workspace's files now, relative to its root; `None` when no snapshot was taken.
    pub tracked: Option<Vec<PathBuf>>,
}

/// What a sign-off compares the workspace with: the workspace as a run began.
#[derive(Debug, Clone)]
pub(crate) struct Baseline {
    /// What the run recorded of its start.
    pub start: Start,
    /// The run, when there is one.
    pub run: Option<RunId>,
}

impl Baseline {
    /// Nothing to compare with: `why` (for the judge's text).
    fn unknown(&self, why: &str, reason: Unknown) -> WorkTree {
        WorkTree {
            summary: format!("what changed since the run began is not known: {why}"),
            changed: ChangedLines::unknown(reason),
            tracked: None,
        }
    }

    /// "since the run began", naming the run when known.
    fn since(&self) -> String {
        match &self.run {
            Some(run) => format!("since the run began (run {run})"),
            None => "since the run began".to_owned(),
        }
    }
}

/// Asks git what changed in `ws` since `baseline`, git running as `git` says. Never fails:
/// problems become the text, and changed lines that cannot be known are [`Unknown`].
pub(crate) async fn collect(
    ws: &Workspace,
    baseline: &Baseline,
    (git, env_remove): (Confinement, &[String]),
    cancel: &CancellationToken,
) -> WorkTree {
    let Some(start) = baseline.start.tree() else {
        let why = baseline
            .start
            .why_not()
            .unwrap_or_else(|| "no starting snapshot".to_owned());
        return baseline.unknown(&why, Unknown::NoStart);
    };
    let snaps = match Snapshots::open(&ws.state_dir(), ws.root(), git, env_remove) {
        Ok(snaps) => snaps.with_timeout(GIT_TIMEOUT),
        Err(e) => return baseline.unknown(&e.to_string(), Unknown::of(&e)),
    };
    let now = match snaps.snapshot(cancel).await {
        Ok(now) => now,
        Err(e) => return baseline.unknown(&e.to_string(), Unknown::of(&e)),
    };
    let diff = |args: &[&str], cap: usize| {
        let mut all = vec![
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--ignore-submodules=all",
            "--no-renames",
        ];
        all.extend_from_slice(args);
        all.extend([start.tree.as_str(), now.tree.as_str(), "--"]);
        snaps.command(&all).stdout_cap(cap)
    };
    let since = baseline.since();
    let stat = snaps.ok(&diff(&["--stat=100"], STAT_BYTES), cancel).await;
    if stat.is_err() && snaps.is_whole(&start.tree, cancel).await.ok() == Some(false) {
        return WorkTree {
            summary: format!("what changed {since} is not known: {}", Unknown::StartLost),
            changed: ChangedLines::unknown(Unknown::StartLost),
            tracked: Some(now.files.iter().map(PathBuf::from).collect()),
        };
    }
    let stat = match stat {
        Ok(out) if out.stdout.trim().is_empty() => format!("no file changed {since}"),
        Ok(out) => format!(
            "changes {since} (git diff --stat):\n{}",
            out.stdout.trim_end()
        ),
        Err(e) => {
            tracing::debug!(error = %e, "git gave no diffstat");
            format!("git could not summarise the changes {since}")
        }
    };
    let lines = diff(&["-U0", "--src-prefix=a/", "--dst-prefix=b/"], DIFF_BYTES);
    let left_out: BTreeSet<&str> = start
        .skipped
        .iter()
        .map(String::as_str)
        .chain(now.skipped.iter().map(|s| s.path.as_str()))
        .collect();
    let changed = if start.skipped_unlisted > 0 {
        ChangedLines::unknown(Unknown::StartIncomplete)
    } else {
        match snaps.ok(&lines, cancel).await {
            Ok(out) => ChangedLines::from_diff(&out.stdout, &left_out),
            Err(e) => {
                tracing::debug!(error = %e, "git gave no changed lines");
                ChangedLines::unknown(Unknown::GitFailed)
            }
        }
    };
    let mut summary = stat;
    summary.push_str(&left_out_text(&start.skipped, &now.skipped));
    WorkTree {
        summary,
        changed,
        tracked: Some(now.files.iter().map(PathBuf::from).collect()),
    }
}

/// The files left out of the snapshots, for the judge: they are there, but what changed in them
/// is not known.
fn left_out_text(at_start: &[String], now: &[Skipped]) -> String {
    let shown = |path: &str| shown_path(std::path::Path::new(path));
    let mut names: Vec<String> = now
        .iter()
        .map(|s| format!("{} ({})", shown(&s.path), s.why))
        .collect();
    for path in at_start {
        if !now.iter().any(|s| &s.path == path) {
            names.push(format!("{} (left out when the run began)", shown(path)));
        }
    }
    if names.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "\nleft out of the snapshots, so no line of theirs counts as changed ({}):",
        names.len()
    );
    for name in names.iter().take(MAX_SKIPPED) {
        text.push_str("\n  ");
        text.push_str(name);
    }
    if names.len() > MAX_SKIPPED {
        text.push_str(&format!("\n  … and {} more", names.len() - MAX_SKIPPED));
    }
    text
}

#[cfg(test)]
#[path = "diff_tests.rs"]
mod tests;

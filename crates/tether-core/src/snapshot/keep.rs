//! Keeping what runs measure from: each run's start pinned in tether's snapshot repository
//! (with what it borrowed from the person's repository copied in, see `tether_git`'s `keep`),
//! and the repository tidied now and then, dropping the starts no run will measure from again.
//!
//! The rule: a start is dropped when its run is stopped and has been idle (no event) for more
//! than [`KEEP_FOR`], or when the store knows no such run — but never the newest run's of each
//! workspace, which `tether goal complete` outside a run compares with. A run still running or
//! waiting for a person keeps its start however long it waits. A start dropped is the run's
//! loss of its baseline only: a sign-off of that run, resumed later, then knows no changed line
//! (a stricter check).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use tether_config::Workspace;
use tether_git::{Confinement, Snapshots, Start};
use tether_store::{Journal, RunId, StoreError};
use tokio_util::sync::CancellationToken;

/// How long a stopped run's start is kept after its last event.
pub const KEEP_FOR: Duration = Duration::from_secs(30 * 24 * 3600);

/// What the store says of the run a start was pinned for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Seen {
    /// Its workspace.
    pub workspace: PathBuf,
    /// When it was created (ms since the epoch).
    pub created_ms: i64,
    /// When its last event was appended (ms since the epoch).
    pub updated_ms: i64,
    /// Whether it is stopped (for now or for good) rather than running or waiting.
    pub stopped: bool,
}

/// Pins `run`'s start in the snapshot repository of `ws`, then tidies the repository when it
/// is due (see the module's documentation). Never fails the run: a problem is logged, and the
/// start recorded in the run's spec stands either way.
pub async fn keep_start(
    ws: &Workspace,
    journal: &Journal,
    run: &RunId,
    start: &Start,
    (git, env_remove): (Confinement, &[String]),
) {
    let Some(start) = start.tree() else {
        return;
    };
    let snaps = match super::snapshots(ws, git, env_remove) {
        Ok(snaps) => snaps,
        Err(e) => {
            tracing::warn!(error = %e, "the run's starting snapshot is not pinned");
            return;
        }
    };
    let cancel = CancellationToken::new();
    if let Err(e) = snaps.pin(run.as_str(), &start.tree, &cancel).await {
        tracing::warn!(error = %e, "the run's starting snapshot is not pinned");
    }
    if snaps.tidy_due(&cancel).await {
        tidy(&snaps, journal, &cancel).await;
    }
}

/// Tidies `snaps`, dropping the starts the rule drops; nothing when the store cannot say.
async fn tidy(snaps: &Snapshots, journal: &Journal, cancel: &CancellationToken) {
    let pins = match snaps.pins(cancel).await {
        Ok(pins) => pins,
        Err(e) => {
            tracing::warn!(error = %e, "tether's snapshot repository was not tidied");
            return;
        }
    };
    let seen = match seen(journal, &pins) {
        Ok(seen) => seen,
        Err(e) => {
            tracing::warn!(error = %e, "tether's snapshot repository was not tidied: the store could not say which runs it still needs");
            return;
        }
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let dropped = dropped(&seen, now);
    match snaps.tidy(&dropped, cancel).await {
        Ok(Some(tidied)) => tracing::info!(
            dropped = tidied.dropped,
            kept = tidied.kept,
            "tidied tether's snapshot repository"
        ),
        Ok(None) => tracing::debug!("another process is tidying tether's snapshot repository"),
        Err(e) => tracing::warn!(error = %e, "tether's snapshot repository was not tidied"),
    }
}

/// What the store says of each pinned run (`None`: no such run).
fn seen(journal: &Journal, pins: &[String]) -> Result<Vec<(String, Option<Seen>)>, StoreError> {
    let store = journal.store();
    let mut out = Vec::with_capacity(pins.len());
    for pin in pins {
        let Ok(id) = pin.parse::<RunId>() else {
            out.push((pin.clone(), None));
            continue;
        };
        match store.run(&id) {
            Ok(run) => out.push((
                pin.clone(),
                Some(Seen {
                    workspace: run.workspace,
                    created_ms: run.created_at_ms,
                    updated_ms: run.updated_at_ms,
                    stopped: run.status.is_stopped(),
                }),
            )),
            Err(StoreError::NotFound { .. }) => out.push((pin.clone(), None)),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The pins the rule drops (see the module's documentation), at `now` (ms since the epoch).
pub(crate) fn dropped(pins: &[(String, Option<Seen>)], now: i64) -> Vec<String> {
    let keep_for = i64::try_from(KEEP_FOR.as_millis()).unwrap_or(i64::MAX);
    let mut newest: HashMap<&PathBuf, (i64, &str)> = HashMap::new();
    for (run, seen) in pins {
        if let Some(seen) = seen {
            let entry = newest
                .entry(&seen.workspace)
                .or_insert((seen.created_ms, run));
            if (seen.created_ms, run.as_str()) > *entry {
                *entry = (seen.created_ms, run);
            }
        }
    }
    pins.iter()
        .filter(|(run, seen)| match seen {
            None => true,
            Some(seen) => {
                let newest_here = newest
                    .get(&seen.workspace)
                    .is_some_and(|(_, newest)| *newest == run.as_str());
                seen.stopped && now.saturating_sub(seen.updated_ms) > keep_for && !newest_here
            }
        })
        .map(|(run, _)| run.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use tether_store::{RunKind, Store};

    /// A run's start is pinned as it begins; a tidying that is due drops the start of a run the
    /// store does not know and keeps the run's.
    #[tokio::test]
    async fn a_runs_start_is_pinned_and_tidying_drops_what_no_run_needs() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let git = (Confinement::Sandboxed, &[][..]);
        let began = super::super::take_start(&ws, git.0, git.1).await;
        let journal = Journal::new(Store::open_in_memory().unwrap(), Vec::new()).unwrap();
        let run = journal
            .store()
            .create_run(RunKind::Ralph, ws.root(), &serde_json::json!({}))
            .unwrap();
        keep_start(&ws, &journal, &run, &began, git).await;
        let snaps = super::super::snapshots(&ws, git.0, git.1).unwrap();
        let cancel = CancellationToken::new();
        assert_eq!(snaps.pins(&cancel).await.unwrap(), [run.as_str()]);
        // A start pinned for a run this store does not know, and a tidying due.
        let tree = began.tree().unwrap().tree.clone();
        snaps.pin("r-unknown", &tree, &cancel).await.unwrap();
        let marker = std::fs::File::options()
            .write(true)
            .open(ws.state_dir().join("git/tidied"))
            .unwrap();
        let long_ago = std::time::SystemTime::now() - Duration::from_secs(8 * 24 * 3600);
        marker.set_modified(long_ago).unwrap();
        keep_start(&ws, &journal, &run, &began, git).await;
        assert_eq!(snaps.pins(&cancel).await.unwrap(), [run.as_str()]);
        assert!(!snaps.tidy_due(&cancel).await);
    }

    const DAY: i64 = 24 * 3600 * 1000;

    fn seen(workspace: &str, created_days_ago: i64, idle_days: i64, stopped: bool) -> Option<Seen> {
        let now = 1000 * DAY;
        Some(Seen {
            workspace: PathBuf::from(workspace),
            created_ms: now - created_days_ago * DAY,
            updated_ms: now - idle_days * DAY,
            stopped,
        })
    }

    #[test]
    fn stopped_runs_idle_a_month_lose_their_start_but_the_newest_of_each_workspace() {
        let pins = vec![
            ("r-old".to_owned(), seen("/w", 90, 80, true)),
            ("r-recent".to_owned(), seen("/w", 20, 10, true)),
            ("r-waiting".to_owned(), seen("/w", 60, 45, false)),
            ("r-newest".to_owned(), seen("/w", 5, 4, true)),
            ("r-alone".to_owned(), seen("/wt/r-alone", 100, 99, true)),
            ("r-other".to_owned(), seen("/wt/r-alone", 200, 199, true)),
            ("r-forgotten".to_owned(), None),
        ];
        let mut got = dropped(&pins, 1000 * DAY);
        got.sort();
        assert_eq!(got, ["r-forgotten", "r-old", "r-other"]);
        assert!(dropped(&[], 1000 * DAY).is_empty());
    }
}

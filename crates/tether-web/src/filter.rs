//! Which runs a list shows: by machine, workspace and state, from the query string of the runs
//! page, its live stream and `GET /api/runs`.
//!
//! A team store holds the runs of many machines and workspaces, and a person looks for theirs.
//! The list is read newest first in pages and filtered here, so a filter works on every store
//! without a query of its own; to keep a page fast on a large store, one request looks at no
//! more than [`SCAN`] runs and hands back where it stopped, so the next page goes on from there.

use serde::Deserialize;
use tether_config::Workspace;
use tether_store::{Run, RunId, RunStatus, Store};

use crate::error::WebError;
use crate::model::{self, RunSummary};

/// The most runs one request reads while looking for matches.
pub const SCAN: usize = 5000;
/// Runs read per query while filtering.
const BATCH: usize = 500;

/// `?machine=&workspace=&state=` as sent (an empty field is no filter).
#[derive(Debug, Default, Clone, Deserialize)]
pub(crate) struct FilterQuery {
    #[serde(default)]
    machine: Option<String>,
    #[serde(default)]
    workspace: Option<String>,
    #[serde(default)]
    state: Option<String>,
}

impl FilterQuery {
    /// The filter asked for; an unknown state is refused with the states there are.
    pub(crate) fn filter(&self) -> Result<RunFilter, WebError> {
        let given = |v: &Option<String>| {
            v.as_deref()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let state = match given(&self.state) {
            None => None,
            Some(s) => Some(s.parse::<RunStatus>().map_err(|_| {
                let known: Vec<&str> = RunStatus::ALL.iter().map(|s| s.as_str()).collect();
                WebError::BadRequest(format!(
                    "no run state `{s}`; the states are {}",
                    known.join(", ")
                ))
            })?),
        };
        Ok(RunFilter {
            machine: given(&self.machine),
            workspace: given(&self.workspace),
            state,
        })
    }
}

/// Which runs to show; every field set must match.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunFilter {
    /// The machine's hostname, exactly.
    pub machine: Option<String>,
    /// The workspace's path, exactly.
    pub workspace: Option<String>,
    /// The run's state.
    pub state: Option<RunStatus>,
}

impl RunFilter {
    /// Whether it lets every run through.
    pub fn is_empty(&self) -> bool {
        self.machine.is_none() && self.workspace.is_none() && self.state.is_none()
    }

    /// Whether `run` is shown.
    pub fn matches(&self, run: &Run) -> bool {
        self.machine
            .as_ref()
            .is_none_or(|m| run.machine.as_deref() == Some(m.as_str()))
            && self
                .workspace
                .as_ref()
                .is_none_or(|w| run.workspace.to_str() == Some(w.as_str()))
            && self.state.is_none_or(|s| run.state.status == s)
    }

    /// The filter as query parameters (`machine=…&state=…`, percent-encoded; empty when none),
    /// for links and the live stream's URL.
    pub fn query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.machine {
            parts.push(format!("machine={}", encode(m)));
        }
        if let Some(w) = &self.workspace {
            parts.push(format!("workspace={}", encode(w)));
        }
        if let Some(s) = self.state {
            parts.push(format!("state={}", s.as_str()));
        }
        parts.join("&")
    }

    /// The runs page's URL with this filter and `extra` parameters (already encoded).
    pub fn url(&self, extra: &str) -> String {
        let q = [self.query(), extra.to_owned()]
            .into_iter()
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("&");
        if q.is_empty() {
            "/".to_owned()
        } else {
            format!("/?{q}")
        }
    }
}

/// `s` percent-encoded for a query string: everything but unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A page of the filtered list.
#[derive(Debug)]
pub struct Page {
    /// The runs shown, newest first.
    pub runs: Vec<RunSummary>,
    /// Where the next page starts (`?after=`), when older runs may match.
    pub next: Option<RunId>,
    /// Runs read to make it.
    pub scanned: usize,
}

/// Up to `want` runs matching `filter`, newest first, after `after` (from the start when
/// `None`). Reads at most [`SCAN`] runs; a page cut short there has `next` set all the same.
pub fn page(
    store: &Store,
    ws: &Workspace,
    filter: &RunFilter,
    after: Option<&RunId>,
    want: usize,
) -> Result<Page, WebError> {
    let batch = if filter.is_empty() { want } else { BATCH };
    let mut cursor = after.cloned();
    let mut found = Vec::new();
    let mut scanned = 0;
    let mut active = None;
    loop {
        let runs = match &cursor {
            Some(last) => store.runs_after(last, batch)?,
            None => store.runs(batch)?,
        };
        let full = runs.len() == batch;
        for run in &runs {
            scanned += 1;
            if filter.matches(run) {
                found.push(model::summary(store, ws, run, &mut active)?);
                if found.len() == want {
                    return Ok(Page {
                        runs: found,
                        next: Some(run.id.clone()),
                        scanned,
                    });
                }
            }
        }
        cursor = runs.last().map(|r| r.id.clone());
        if !full || cursor.is_none() {
            return Ok(Page {
                runs: found,
                next: None,
                scanned,
            });
        }
        if scanned >= SCAN {
            return Ok(Page {
                runs: found,
                next: cursor,
                scanned,
            });
        }
    }
}

//! Which runs a list shows: by machine, workspace and state, from the query string of the runs
//! page, its live stream and `GET /api/runs`.
//!
//! A team store holds the runs of many machines and workspaces, and a person looks for theirs.
//! The store filters (`Store::runs_matching`, one query on either backend), newest first, a
//! page at a time: a request reads one more run than it shows, to know whether there is an
//! older page.

use serde::Deserialize;
use tether_config::Workspace;
pub use tether_store::RunFilter;
use tether_store::{RunId, RunStatus, Store};

use crate::error::WebError;
use crate::model::{self, RunSummary};

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
            status: state,
        })
    }
}

/// A filter's links: its query parameters and the runs page's URL with it.
pub trait FilterLinks {
    /// The filter as query parameters (`machine=…&state=…`, percent-encoded; empty when none),
    /// for links and the live stream's URL.
    fn query(&self) -> String;
    /// The runs page's URL with this filter and `extra` parameters (already encoded).
    fn url(&self, extra: &str) -> String;
}

impl FilterLinks for RunFilter {
    fn query(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.machine {
            parts.push(format!("machine={}", encode(m)));
        }
        if let Some(w) = &self.workspace {
            parts.push(format!("workspace={}", encode(w)));
        }
        if let Some(s) = self.status {
            parts.push(format!("state={}", s.as_str()));
        }
        parts.join("&")
    }

    fn url(&self, extra: &str) -> String {
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
}

/// Up to `want` runs matching `filter`, newest first, after `after` (from the start when
/// `None`).
pub fn page(
    store: &Store,
    ws: &Workspace,
    filter: &RunFilter,
    after: Option<&RunId>,
    want: usize,
) -> Result<Page, WebError> {
    let mut runs = store.runs_matching(filter, after, want.saturating_add(1))?;
    let next = if runs.len() > want {
        runs.truncate(want);
        runs.last().map(|r| r.id.clone())
    } else {
        None
    };
    let mut active = None;
    let runs = runs
        .iter()
        .map(|run| model::summary(store, ws, run, &mut active))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Page { runs, next })
}

//! The `runs` table: creating runs and reading their projected state.
//!
//! A run row is written once with its parameters and then only its projection columns change,
//! always from [`crate::journal`] in the same transaction as the event that caused the change.

use std::path::{Path, PathBuf};

use rusqlite::{OptionalExtension, params};
use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, StoreError};
use crate::event::Event;
use crate::ids::{RunId, Seq};
use crate::journal::{append_in, run_not_found};
use crate::origin::Origin;
use crate::row;
use crate::state::RunState;
use crate::store::Sqlite;
use crate::vocab::{RunKind, RunStatus};

/// How many fresh ids to draw before concluding something is wrong with the generator.
pub(crate) const ID_ATTEMPTS: usize = 16;

const RUN_COLUMNS: &str = "id, kind, created_at_ms, workspace, spec, status, iteration, \
                           updated_at_ms, last_event_seq, state, machine, repo_remote";

/// A run and its projected state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Run {
    /// The run's id.
    pub id: RunId,
    /// Which loop it is.
    pub kind: RunKind,
    /// When it was created (ms since the Unix epoch).
    pub created_at_ms: i64,
    /// The workspace it works in.
    pub workspace: PathBuf,
    /// Its parameters, as given to [`crate::Store::create_run`].
    pub spec: Value,
    /// Where it stands (also in `state.status`).
    pub status: RunStatus,
    /// The last iteration that ended (also in `state.iteration`).
    pub iteration: u32,
    /// When its last event was appended.
    pub updated_at_ms: i64,
    /// Its last event's seq.
    pub last_event_seq: Seq,
    /// The full projected state.
    pub state: RunState,
    /// The machine that created it and can drive it (`None` for runs recorded before tether
    /// kept it).
    pub machine: Option<String>,
    /// Its repository's remote, without credentials, when it has one.
    pub repo_remote: Option<String>,
}

impl Run {
    /// The run's limits now: the budget of its spec (`max_iterations` and `budget`) with what
    /// people added since.
    pub fn limits(&self) -> tether_budget::Budget {
        let mut base: tether_budget::Budget = self
            .spec
            .get("budget")
            .and_then(|b| serde_json::from_value(b.clone()).ok())
            .unwrap_or_default();
        base.iterations = self.state.max_iterations;
        self.state.limits(&base)
    }
}

/// Which runs a list shows; every field set must match (none set: every run).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RunFilter {
    /// The machine that created the run, exactly.
    pub machine: Option<String>,
    /// The run's workspace path, exactly.
    pub workspace: Option<String>,
    /// The run's state.
    pub status: Option<RunStatus>,
}

impl RunFilter {
    /// Whether it lets every run through.
    pub fn is_empty(&self) -> bool {
        self.machine.is_none() && self.workspace.is_none() && self.status.is_none()
    }

    /// Whether `run` passes (what [`crate::Store::runs_matching`] selects, for one run).
    pub fn matches(&self, run: &Run) -> bool {
        self.machine
            .as_ref()
            .is_none_or(|m| run.machine.as_deref() == Some(m.as_str()))
            && self
                .workspace
                .as_ref()
                .is_none_or(|w| run.workspace.to_str() == Some(w.as_str()))
            && self.status.is_none_or(|s| run.status == s)
    }
}

impl Sqlite {
    pub fn create_run(&self, kind: RunKind, workspace: &Path, spec: &Value) -> Result<RunId> {
        self.insert_run(None, kind, workspace, spec)
    }

    pub fn create_run_as(
        &self,
        id: &RunId,
        kind: RunKind,
        workspace: &Path,
        spec: &Value,
    ) -> Result<RunId> {
        self.insert_run(Some(id), kind, workspace, spec)
    }

    fn insert_run(
        &self,
        id: Option<&RunId>,
        kind: RunKind,
        workspace: &Path,
        spec: &Value,
    ) -> Result<RunId> {
        let workspace = workspace.to_str().ok_or_else(|| StoreError::NonUtf8Path {
            path: workspace.to_path_buf(),
        })?;
        let origin = Origin::local(Path::new(workspace));
        let tx = self.write()?;
        let now = self.now();
        let id = match id {
            Some(id) => id.clone(),
            None => unused_run_id(&tx)?,
        };
        tx.execute(
            "INSERT INTO runs (id, kind, created_at_ms, workspace, spec, status, updated_at_ms, \
             machine, repo_remote) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?3, ?7, ?8)",
            params![
                id.as_str(),
                kind.as_str(),
                now,
                workspace,
                serde_json::to_string(spec)?,
                RunStatus::Running.as_str(),
                origin.machine,
                origin.repo_remote,
            ],
        )?;
        append_in(
            &tx,
            Some(&id),
            now,
            &[Event::RunStarted {
                kind,
                spec: spec.clone(),
            }],
        )?;
        tx.commit()?;
        Ok(id)
    }

    pub fn run(&self, id: &RunId) -> Result<Run> {
        let raw = self
            .conn
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = ?1"))?
            .query_row([id.as_str()], raw_run)
            .optional()?;
        decode_run(raw.ok_or_else(|| run_not_found(id))?)
    }

    pub fn latest_run(&self) -> Result<Option<Run>> {
        Ok(self.runs(1)?.into_iter().next())
    }

    pub fn runs(&self, limit: usize) -> Result<Vec<Run>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at_ms DESC, rowid DESC LIMIT ?1"
        ))?;
        let rows = stmt.query_map([row::limit(limit)], raw_run)?;
        rows.map(|raw| decode_run(raw?)).collect()
    }

    pub fn runs_matching(
        &self,
        filter: &RunFilter,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<Run>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM runs \
             WHERE (?1 IS NULL OR machine = ?1) AND (?2 IS NULL OR workspace = ?2) \
             AND (?3 IS NULL OR status = ?3) \
             AND (?4 IS NULL OR (created_at_ms, rowid) < \
                  (SELECT created_at_ms, rowid FROM runs WHERE id = ?4)) \
             ORDER BY created_at_ms DESC, rowid DESC LIMIT ?5"
        ))?;
        let rows = stmt.query_map(
            rusqlite::params![
                filter.machine,
                filter.workspace,
                filter.status.map(RunStatus::as_str),
                after.map(RunId::as_str),
                row::limit(limit)
            ],
            raw_run,
        )?;
        rows.map(|raw| decode_run(raw?)).collect()
    }

    pub fn runs_after(&self, last: &RunId, limit: usize) -> Result<Vec<Run>> {
        let mut stmt = self.conn.prepare_cached(&format!(
            "SELECT {RUN_COLUMNS} FROM runs \
             WHERE (created_at_ms, rowid) < (SELECT created_at_ms, rowid FROM runs WHERE id = ?1) \
             ORDER BY created_at_ms DESC, rowid DESC LIMIT ?2"
        ))?;
        let rows = stmt.query_map(rusqlite::params![last.as_str(), row::limit(limit)], raw_run)?;
        rows.map(|raw| decode_run(raw?)).collect()
    }
}

fn unused_run_id(conn: &rusqlite::Connection) -> Result<RunId> {
    let mut exists = conn.prepare_cached("SELECT 1 FROM runs WHERE id = ?1")?;
    for _ in 0..ID_ATTEMPTS {
        let id = RunId::generate();
        if !exists.exists([id.as_str()])? {
            return Ok(id);
        }
    }
    Err(StoreError::corrupt("could not draw an unused run id"))
}

type RawRun = (
    String,
    String,
    i64,
    String,
    String,
    String,
    u32,
    i64,
    i64,
    String,
    Option<String>,
    Option<String>,
);

fn raw_run(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawRun> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
    ))
}

fn decode_run(raw: RawRun) -> Result<Run> {
    let (
        id,
        kind,
        created_at_ms,
        workspace,
        spec,
        status,
        iteration,
        updated,
        seq,
        state,
        machine,
        repo_remote,
    ) = raw;
    Ok(Run {
        id: row::parse("runs.id", &id)?,
        kind: row::parse("runs.kind", &kind)?,
        created_at_ms,
        workspace: PathBuf::from(workspace),
        spec: row::json("runs.spec", &spec)?,
        status: row::parse("runs.status", &status)?,
        iteration,
        updated_at_ms: updated,
        last_event_seq: Seq(seq),
        state: row::json("runs.state", &state)?,
        machine,
        repo_remote,
    })
}

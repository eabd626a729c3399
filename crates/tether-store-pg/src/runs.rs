//! The `runs` table: creating runs (with where they live) and reading their projected state.
//!
//! A run row is written once with its parameters and origin; afterwards only its projection
//! columns change, always from [`crate::journal`] in the same transaction as the event.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tether_store::{Event, Run, RunFilter, RunId, RunKind, RunState, RunStatus, Seq};
use tokio_postgres::Row;
use tokio_postgres::types::Json;

use crate::error::{PgStoreError, Result};
use crate::journal::{append_in, get, limit_of, parse, run_not_found};
use crate::store::PgStore;
use tether_store::Origin;

/// How many fresh ids to draw before concluding something is wrong with the generator.
pub(crate) const ID_ATTEMPTS: usize = 16;

const RUN_COLUMNS: &str = "id, kind, created_at_ms, workspace, spec, status, iteration, \
                           updated_at_ms, last_event_seq, state, machine, repo_remote";

impl PgStore {
    /// Creates a run of this machine ([`Origin::local`]) and writes its `run_started` event in
    /// one transaction.
    pub async fn create_run(&self, kind: RunKind, workspace: &Path, spec: &Value) -> Result<RunId> {
        self.create_run_from(kind, workspace, spec, &Origin::local(workspace))
            .await
    }

    /// [`PgStore::create_run`] recording `origin` as where the run lives.
    pub async fn create_run_from(
        &self,
        kind: RunKind,
        workspace: &Path,
        spec: &Value,
        origin: &Origin,
    ) -> Result<RunId> {
        self.insert_run(None, kind, workspace, spec, origin).await
    }

    /// [`PgStore::create_run`] under `id`, drawn beforehand; refused when a run has that id.
    pub async fn create_run_as(
        &self,
        id: &RunId,
        kind: RunKind,
        workspace: &Path,
        spec: &Value,
    ) -> Result<RunId> {
        self.insert_run(Some(id), kind, workspace, spec, &Origin::local(workspace))
            .await
    }

    async fn insert_run(
        &self,
        wanted: Option<&RunId>,
        kind: RunKind,
        workspace: &Path,
        spec: &Value,
        origin: &Origin,
    ) -> Result<RunId> {
        let workspace = utf8(workspace)?;
        let root = utf8(&origin.workspace_root)?;
        let mut client = self.client().await?;
        let tx = client.transaction().await?;
        let now = self.now();
        let insert = tx
            .prepare_cached(
                "INSERT INTO runs (id, kind, created_at_ms, workspace, machine, workspace_root, \
                 repo_remote, spec, status, updated_at_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $3) ON CONFLICT (id) DO NOTHING",
            )
            .await?;
        let mut created = None;
        let attempts = if wanted.is_some() { 1 } else { ID_ATTEMPTS };
        for _ in 0..attempts {
            let id = wanted.cloned().unwrap_or_else(RunId::generate);
            let params: [&(dyn tokio_postgres::types::ToSql + Sync); 9] = [
                &id.as_str(),
                &kind.as_str(),
                &now,
                &workspace,
                &origin.machine,
                &root,
                &origin.repo_remote,
                spec,
                &RunStatus::Running.as_str(),
            ];
            if tx.execute(&insert, &params).await? == 1 {
                created = Some(id);
                break;
            }
        }
        let id = created.ok_or_else(|| match wanted {
            Some(id) => PgStoreError::corrupt(format!("a run with the id {id} exists already")),
            None => PgStoreError::corrupt("could not draw an unused run id"),
        })?;
        let started = Event::RunStarted {
            kind,
            spec: spec.clone(),
        };
        append_in(&tx, Some(&id), now, &[started]).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The run with this id.
    pub async fn run(&self, id: &RunId) -> Result<Run> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"))
            .await?;
        let row = client.query_opt(&stmt, &[&id.as_str()]).await?;
        decode_run(&row.ok_or_else(|| run_not_found(id))?)
    }

    /// Where the run with this id lives.
    pub async fn run_origin(&self, id: &RunId) -> Result<Origin> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached("SELECT machine, workspace_root, repo_remote FROM runs WHERE id = $1")
            .await?;
        let row = client
            .query_opt(&stmt, &[&id.as_str()])
            .await?
            .ok_or_else(|| run_not_found(id))?;
        Ok(Origin {
            machine: get(&row, 0, "runs.machine")?,
            workspace_root: PathBuf::from(get::<String>(&row, 1, "runs.workspace_root")?),
            repo_remote: get(&row, 2, "runs.repo_remote")?,
        })
    }

    /// The most recently created run, if there is one.
    pub async fn latest_run(&self) -> Result<Option<Run>> {
        Ok(self.runs(1).await?.into_iter().next())
    }

    /// Up to `limit` runs, newest first.
    pub async fn runs(&self, limit: usize) -> Result<Vec<Run>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at_ms DESC, ord DESC LIMIT $1"
            ))
            .await?;
        let rows = client.query(&stmt, &[&limit_of(limit)]).await?;
        rows.iter().map(decode_run).collect()
    }

    /// Up to `limit` runs that pass `filter`, newest first, after `after` (from the newest when
    /// `None`; an unknown `after` gives none).
    pub async fn runs_matching(
        &self,
        filter: &RunFilter,
        after: Option<&RunId>,
        limit: usize,
    ) -> Result<Vec<Run>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs \
                 WHERE ($1::TEXT IS NULL OR machine = $1) AND ($2::TEXT IS NULL OR workspace = $2) \
                 AND ($3::TEXT IS NULL OR status = $3) \
                 AND ($4::TEXT IS NULL OR (created_at_ms, ord) < \
                      (SELECT created_at_ms, ord FROM runs WHERE id = $4)) \
                 ORDER BY created_at_ms DESC, ord DESC LIMIT $5"
            ))
            .await?;
        let rows = client
            .query(
                &stmt,
                &[
                    &filter.machine,
                    &filter.workspace,
                    &filter.status.map(RunStatus::as_str),
                    &after.map(RunId::as_str),
                    &limit_of(limit),
                ],
            )
            .await?;
        rows.iter().map(decode_run).collect()
    }

    /// Up to `limit` runs listed after `last` in [`runs`](Self::runs)' order: the next page of
    /// a list that ended with `last`. An unknown `last` gives none.
    pub async fn runs_after(&self, last: &RunId, limit: usize) -> Result<Vec<Run>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(&format!(
                "SELECT {RUN_COLUMNS} FROM runs WHERE (created_at_ms, ord) < \
                 (SELECT created_at_ms, ord FROM runs WHERE id = $1) \
                 ORDER BY created_at_ms DESC, ord DESC LIMIT $2"
            ))
            .await?;
        let rows = client
            .query(&stmt, &[&last.as_str(), &limit_of(limit)])
            .await?;
        rows.iter().map(decode_run).collect()
    }
}

fn utf8(path: &Path) -> Result<&str> {
    path.to_str().ok_or_else(|| PgStoreError::NonUtf8Path {
        path: path.to_path_buf(),
    })
}

fn decode_run(row: &Row) -> Result<Run> {
    let Json(state): Json<RunState> = get(row, 9, "runs.state")?;
    let iteration: i64 = get(row, 6, "runs.iteration")?;
    Ok(Run {
        id: parse("runs.id", get(row, 0, "runs.id")?)?,
        kind: parse("runs.kind", get(row, 1, "runs.kind")?)?,
        created_at_ms: get(row, 2, "runs.created_at_ms")?,
        workspace: PathBuf::from(get::<String>(row, 3, "runs.workspace")?),
        spec: get(row, 4, "runs.spec")?,
        status: parse("runs.status", get(row, 5, "runs.status")?)?,
        iteration: u32::try_from(iteration)
            .map_err(|_| PgStoreError::corrupt(format!("column runs.iteration: {iteration}")))?,
        updated_at_ms: get(row, 7, "runs.updated_at_ms")?,
        last_event_seq: Seq(get(row, 8, "runs.last_event_seq")?),
        state,
        machine: Some(get(row, 10, "runs.machine")?),
        repo_remote: get(row, 11, "runs.repo_remote")?,
    })
}

//! Which store a command uses: the workspace's own SQLite file, or — in team mode — the
//! PostgreSQL database named by `TETHER_STORE_URL` or `[store] url`, shared by every machine of a
//! team. Every command opens its store here, so all of them agree. Only `[store]` is read to
//! find it, so reading and answering work whatever the rest of `tether.toml` says.
//!
//! A process connects to a team store once (a pool of connections and the small runtime they
//! live on) and every store it opens shares that connection.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tether_config::{Env, Workspace};
use tether_store::{Connector, EmbeddedFile, Origin, Store};
use tether_store_pg::TeamStore;

use crate::error::{Error, Result};

/// The team store this process connected to, by URL (a process uses one).
static TEAM: OnceLock<Mutex<Option<(String, TeamStore)>>> = OnceLock::new();

/// Where `ws`'s commands keep their records.
pub fn connector(ws: &Workspace, env: &dyn Env) -> Result<Arc<dyn Connector>> {
    match team_url(ws, env)? {
        Some(url) => Ok(Arc::new(team(&url)?.scoped(&here(ws)))),
        None => Ok(Arc::new(EmbeddedFile(ws.db_path()))),
    }
}

/// A store of `ws`'s place (see [`connector`]).
pub fn open(ws: &Workspace, env: &dyn Env) -> Result<Store> {
    let connector = connector(ws, env)?;
    connector.connect().map_err(|cause| Error::OpenStore {
        place: connector.describe(),
        cause,
    })
}

/// This workspace as a team store tells workspaces apart (sign-off records are kept per
/// workspace): this machine and the workspace's own root (not its repository's: two workspaces
/// may share a repository).
pub fn here(ws: &Workspace) -> Origin {
    Origin {
        machine: tether_store::this_machine(),
        workspace_root: ws.root().to_path_buf(),
        repo_remote: None,
    }
}

/// Whether `ws`'s commands use a team store.
pub fn is_team(ws: &Workspace, env: &dyn Env) -> Result<bool> {
    Ok(team_url(ws, env)?.is_some())
}

/// The team store at `url`, connecting on first use.
pub fn team(url: &str) -> Result<TeamStore> {
    let cell = TEAM.get_or_init(Mutex::default);
    let mut current = cell.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((known, store)) = current.as_ref()
        && known == url
    {
        return Ok(store.clone());
    }
    let config = tether_store_pg::config_from_url(url)?;
    let store = TeamStore::connect(config).map_err(|cause| Error::ConnectTeam {
        url: tether_store_pg::redacted(url),
        cause,
    })?;
    *current = Some((url.to_owned(), store.clone()));
    Ok(store)
}

/// The team store's URL, if this workspace uses one (`TETHER_STORE_URL`, else `[store] url`).
fn team_url(ws: &Workspace, env: &dyn Env) -> Result<Option<String>> {
    let store = tether_config::load_store(ws.root(), env).map_err(Error::FindStore)?;
    Ok(store.url)
}

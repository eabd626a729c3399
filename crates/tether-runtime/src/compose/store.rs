//! Which store a command uses: the workspace's own SQLite file, or — in team mode — the
//! PostgreSQL database named by `TETHER_STORE_URL` or `[store] url`, shared by every machine of a
//! team. Every command opens its store here, so all of them agree. Only `[store]` is read to
//! find it, so reading and answering work whatever the rest of `tether.toml` says.
//!
//! The stores a URL can name are listed once, by scheme ([`BY_URL`]); adding one is a line
//! there (and its scheme accepted by `[store] url`'s check in tether-config).
//!
//! A process connects to a team store once (a pool of connections and the small runtime they
//! live on) and every store it opens shares that connection.

use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tether_config::{Env, StoreConfig, Workspace};
use tether_store::{Connector, EmbeddedFile, Origin, Store};
use tether_store_pg::TeamStore;

use crate::error::{Error, Result};

/// The team store this process connected to, by URL (a process uses one).
static TEAM: OnceLock<Mutex<Option<(String, TeamStore)>>> = OnceLock::new();

/// A kind of store a URL names.
struct ByUrl {
    /// The URL schemes naming it (`postgres`).
    schemes: &'static [&'static str],
    /// A connector to the store at the URL, holding `ws`'s records.
    connect: fn(&str, &Workspace) -> Result<Arc<dyn Connector>>,
}

/// The stores a URL names, by scheme: PostgreSQL, the team store. Without a URL, a workspace
/// keeps its records in its own SQLite file.
const BY_URL: &[ByUrl] = &[ByUrl {
    schemes: &["postgres", "postgresql"],
    connect: |url, ws| Ok(Arc::new(team(url)?.scoped(&here(ws)))),
}];

/// Where `ws`'s commands keep their records.
pub fn connector(ws: &Workspace, env: &dyn Env) -> Result<Arc<dyn Connector>> {
    connector_of(ws, &find(ws, env)?)
}

/// Where the records are kept of a run whose configuration names `store` (a run's own, not
/// tether.toml's as it is now).
pub fn connector_of(ws: &Workspace, store: &StoreConfig) -> Result<Arc<dyn Connector>> {
    match &store.url {
        Some(url) => at_url(url, ws),
        None => Ok(Arc::new(EmbeddedFile(ws.db_path()))),
    }
}

/// The store at `url`, holding `ws`'s records.
pub fn at_url(url: &str, ws: &Workspace) -> Result<Arc<dyn Connector>> {
    let scheme = url.split_once("://").map_or("", |(scheme, _)| scheme);
    let kind = BY_URL
        .iter()
        .find(|kind| kind.schemes.iter().any(|s| s.eq_ignore_ascii_case(scheme)))
        .ok_or_else(|| Error::UnknownStore(tether_store_pg::redacted(url)))?;
    (kind.connect)(url, ws)
}

/// A store of `ws`'s place (see [`connector`]).
pub fn open(ws: &Workspace, env: &dyn Env) -> Result<Store> {
    open_of(ws, &find(ws, env)?)
}

/// The store `store` names for `ws` (see [`connector_of`]).
pub fn open_of(ws: &Workspace, store: &StoreConfig) -> Result<Store> {
    let connector = connector_of(ws, store)?;
    connector.connect().map_err(|cause| Error::OpenStore {
        place: connector.describe(),
        cause,
    })
}

/// A store of `ws`'s place for a command that only reads, or an empty one in memory when the
/// workspace has none yet (reading does not create `.tether/`).
pub fn for_reading(ws: &Workspace, env: &dyn Env) -> Result<Store> {
    for_reading_of(ws, &find(ws, env)?)
}

/// [`for_reading`] of the store `store` names.
pub fn for_reading_of(ws: &Workspace, store: &StoreConfig) -> Result<Store> {
    if ws.db_path().is_file() || store.url.is_some() {
        return open_of(ws, store);
    }
    Ok(Store::open_in_memory()?)
}

/// Which store tether.toml (`[store]`) and `TETHER_STORE_URL` name for `ws` now.
pub fn find(ws: &Workspace, env: &dyn Env) -> Result<StoreConfig> {
    tether_config::load_store(ws.root(), env).map_err(Error::FindStore)
}

/// This workspace as a team store tells workspaces apart (sign-off records are kept per
/// workspace): this machine and the workspace's own root (not its repository's: two workspaces
/// may share a repository), or the machine and root of the workspace it works for.
pub fn here(ws: &Workspace) -> Origin {
    if let Some((machine, root)) = ws.stands_for() {
        return Origin {
            machine: machine.to_owned(),
            workspace_root: root.to_path_buf(),
            repo_remote: None,
        };
    }
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
    Ok(find(ws, env)?.url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_of_no_known_store_is_refused_without_its_password() {
        let ws = Workspace::at("/nowhere");
        let Err(e) = at_url("mysql://me:secret@db/tether", &ws) else {
            panic!("a mysql URL was taken");
        };
        assert!(e.is_usage());
        assert_eq!(
            e.to_string(),
            "mysql://me:***@db/tether names no store tether knows (postgres://…)"
        );
    }

    #[test]
    fn without_a_url_the_workspace_keeps_its_own_file() {
        let dir = tempfile::tempdir().unwrap();
        let ws = Workspace::at(dir.path());
        let store = connector(&ws, &tether_config::MapEnv::new()).unwrap();
        assert_eq!(store.describe(), ws.db_path().display().to_string());
    }
}

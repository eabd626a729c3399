//! The store check: the workspace's own file, or the team store (reachable, its schema, its
//! journal in step with its runs).

use tether_config::{Env, Workspace};

use super::Check;

/// Where the store is and whether it answers.
pub async fn check(ws: &Workspace, env: &dyn Env) -> Check {
    let url = match tether_config::load_store(ws.root(), env) {
        Ok(store) => store.url,
        Err(e) => return Check::fail("store", e.to_string(), "fix [store] in tether.toml"),
    };
    let Some(url) = url else {
        return Check::pass(
            "store",
            format!("this workspace's own {}", ws.display(&ws.db_path())),
        );
    };
    let shown = tether_store_pg::redacted(&url);
    // Connecting blocks: off this runtime's only thread.
    let checked = tokio::task::spawn_blocking(move || team(&url)).await;
    match checked {
        Ok(Ok(detail)) => Check::pass("store", format!("the team store {shown}: {detail}")),
        Ok(Err(e)) => Check::fail(
            "store",
            format!("the team store {shown}: {}", crate::error::chain(&e)),
            "check that the server runs and the URL's host, port, user and database; the \
             password comes from PGPASSWORD or ~/.pgpass (chmod 0600)",
        ),
        Err(e) => Check::fail("store", e.to_string(), "report this"),
    }
}

/// Connects, and reads the schema version and the runs the store holds.
fn team(url: &str) -> crate::Result<String> {
    let team = crate::compose::store::team(url)?;
    let store = tether_store::Connector::connect(&team)?;
    let schema = store.schema_version()?;
    store.check_integrity()?;
    let runs = match store.runs(1000)?.len() {
        1000 => "1,000 or more".to_owned(),
        n => n.to_string(),
    };
    Ok(format!("schema {schema}, {runs} runs, journal in step"))
}

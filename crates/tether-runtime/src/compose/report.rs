//! A run's report (see `tether_core::report`), written beside its transcripts
//! (`.tether/runs/<run>/report.md`): at the end of every foreground run, and by `tether report`.

use std::path::PathBuf;

use tether_config::{Env, Workspace};
use tether_store::{Journal, RunId};

use crate::error::{Error, Result};

/// Renders run `id`'s report from `journal`'s store and writes it under `ws`'s state directory: the path
/// and the markdown, or `None` for a run of another machine (its directory is there, not
/// here). The git it runs for the diffstat runs as `git` says, without the variables
/// `env_remove` names.
pub async fn write(
    ws: &Workspace,
    journal: &Journal,
    id: &RunId,
    (git, env_remove): (tether_git::Confinement, &[String]),
) -> Result<Option<(PathBuf, String)>> {
    let run = journal.store().run(id)?;
    if tether_store::control::is_elsewhere(&run) {
        return Ok(None);
    }
    // A run in a worktree of its own changed the worktree's files.
    let worked_in = if run.workspace != ws.root() && run.workspace.is_dir() {
        Workspace::at(&run.workspace).with_state_dir(ws.state_dir())
    } else {
        ws.clone()
    };
    let files = tether_core::snapshot::diffstat(
        &worked_in,
        &tether_git::Start::of_spec(&run.spec),
        git,
        env_remove,
    )
    .await;
    let markdown = tether_core::report::render(&journal.store(), ws, &run, files.as_deref())?;
    let path = ws.runs_dir().join(run.id.as_str()).join("report.md");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::creating(dir, e))?;
    }
    std::fs::write(&path, &markdown)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(Some((path, markdown)))
}

/// [`write`] for a command: from `ws`'s store, without tether.toml's keys in git's
/// environment, git in its sandbox unless tether.toml turns the sandbox off, on a runtime of
/// its own (call it outside any).
pub fn write_now(ws: &Workspace, env: &dyn Env, id: &RunId) -> Result<Option<(PathBuf, String)>> {
    let journal = Journal::new(crate::compose::store::open(ws, env)?, Vec::new())?;
    let (git, env_remove) = tether_config::load(crate::schema(), ws.root(), env).map_or_else(
        |_| (tether_git::Confinement::Sandboxed, Vec::new()),
        |loaded| {
            (
                tether_signoff::git_confinement(&loaded.config),
                loaded.config.key_vars(),
            )
        },
    );
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io("starting a runtime for the report", e))?
        .block_on(write(ws, &journal, id, (git, &env_remove)))
}

//! A run's report (see `tether_core::report`), written beside its transcripts
//! (`.tether/runs/<run>/report.md`): at the end of every foreground run, and by `tether report`.

use std::path::PathBuf;

use tether_config::Workspace;
use tether_store::{Journal, RunId};

use crate::error::{Error, Result};

/// Renders run `id`'s report from `journal`'s store and writes it under `ws`'s state directory: the path
/// and the markdown, or `None` for a run of another machine (its directory is there, not
/// here). The git it runs for the diffstat starts without the variables `env_remove` names.
pub async fn write(
    ws: &Workspace,
    journal: &Journal,
    id: &RunId,
    env_remove: &[String],
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
        &run.id,
        &tether_git::AtStart::of_spec(&run.spec),
        env_remove,
    )
    .await;
    let markdown = tether_core::report::render(&journal.store(), &run, files.as_deref())?;
    let path = ws.runs_dir().join(run.id.as_str()).join("report.md");
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::creating(dir, e))?;
    }
    std::fs::write(&path, &markdown)
        .map_err(|e| Error::io(format!("writing {}", path.display()), e))?;
    Ok(Some((path, markdown)))
}

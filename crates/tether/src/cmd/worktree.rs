//! `tether worktree list | remove <run>`: the worktrees of runs started with `--worktree`.

use anyhow::{Result, anyhow};
use serde::Serialize;
use tether_store::RunId;
use tether_store::run_lock::RunLock;
use tether_worktree::Repo;

use super::Ctx;
use crate::cli::WorktreeCommand;
use crate::exit::Exit;
use crate::failure::Failure;

/// One run's worktree.
#[derive(Debug, Serialize)]
struct Entry {
    run: String,
    branch: String,
    dir: String,
    /// Whether a process drives the run now.
    live: bool,
}

/// `tether worktree …`.
pub fn run(ctx: &mut Ctx<'_>, command: &WorktreeCommand) -> Result<Exit> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let repo = runtime
        .block_on(Repo::discover(ctx.ws.root()))
        .map_err(Failure::usage)?;
    let listed = runtime.block_on(repo.list())?;
    let entries: Vec<Entry> = listed
        .iter()
        .filter_map(|w| {
            let run = w.run_id()?;
            Some(Entry {
                run: run.to_owned(),
                branch: w.branch.clone().unwrap_or_default(),
                dir: w.dir.display().to_string(),
                live: live(ctx, run),
            })
        })
        .collect();
    match command {
        WorktreeCommand::List(args) => {
            if args.json {
                serde_json::to_writer_pretty(&mut *ctx.out, &entries)?;
                writeln!(ctx.out)?;
            } else if entries.is_empty() {
                writeln!(ctx.out, "no run has a worktree in this repository")?;
            } else {
                for e in &entries {
                    let state = if e.live { "in use" } else { "idle" };
                    writeln!(ctx.out, "{}  {}  {}  {state}", e.run, e.branch, e.dir)?;
                }
            }
            Ok(Exit::Done)
        }
        WorktreeCommand::Remove(args) => {
            let Some(entry) = entries.iter().find(|e| e.run == args.run) else {
                return Err(Failure::usage(anyhow!(
                    "run {} has no worktree in this repository (`tether worktree list` shows \
                     those that do)",
                    args.run
                )));
            };
            runtime
                .block_on(repo.remove(&entry.run, entry.dir.as_ref(), entry.live))
                .map_err(Failure::usage)?;
            writeln!(
                ctx.out,
                "removed the worktree of run {} ({}); its branch {} is kept",
                entry.run, entry.dir, entry.branch
            )?;
            Ok(Exit::Done)
        }
    }
}

/// Whether a live process holds the run's lock.
fn live(ctx: &Ctx<'_>, run: &str) -> bool {
    run.parse::<RunId>()
        .is_ok_and(|id| RunLock::holder(&tether_core::looping::lock_path(&ctx.ws, &id)).is_some())
}

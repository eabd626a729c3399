//! `tether worktree list | remove <run>`: the worktrees of runs started with `--worktree`.

use anyhow::{Result, anyhow};

use super::Ctx;
use crate::cli::WorktreeCommand;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether worktree …`.
pub fn run(ctx: &mut Ctx<'_>, command: &WorktreeCommand) -> Result<Exit> {
    let runtime = super::current_thread()?;
    // Where its git runs: the sandbox's mode of tether.toml (a sandbox unless it says "off",
    // and when it cannot be read).
    let config = super::load_config(ctx)
        .map(|l| l.config)
        .unwrap_or_default();
    let (repo, entries) = runtime.block_on(tether_runtime::worktree::list(&ctx.ws, &config))?;
    match command {
        WorktreeCommand::List(args) => {
            if args.json {
                super::json(ctx.out, &entries)?;
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

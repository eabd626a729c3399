//! `tether worker`: works on the goals of runs of many goals started on other machines (see
//! `tether_runtime::fleet::worker`), one at a time, until stopped — Ctrl+C or SIGTERM stops the
//! goal's run after its current step, leaves the goal ready for another worker, and exits.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Result, anyhow};
use tether_human::Console;
use tether_runtime::fleet::worker::{Front, Worker};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use super::foreground::terminal;
use crate::cli::WorkerArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether worker`.
pub fn run(ctx: &mut Ctx<'_>, args: &WorkerArgs) -> Result<Exit> {
    if !tether_runtime::store::is_team(&ctx.ws, ctx.env)? {
        return Err(Failure::usage(anyhow!(
            "tether worker works on the goals a team store offers: set TETHER_STORE_URL (or \
             [store] url in tether.toml) to the team's PostgreSQL database"
        )));
    }
    let dir = args.dir.clone().unwrap_or_else(default_dir);
    let worker = Worker {
        dir,
        ws: ctx.ws.clone(),
        front: Front {
            console: Console::Absent,
            observer: terminal(("goal run", String::new())),
            host: crate::bridged::host(),
            notice_grace: tether_runtime::process::notice_grace(ctx.env),
        },
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let handle = runtime.handle().clone();
    let stop = CancellationToken::new();
    let env = ctx.env;
    let poll = Duration::from_secs(args.poll);
    let once = args.once;
    let worked = runtime.block_on(async {
        tokio::spawn(watch_stop(stop.clone()));
        eprintln!("worker in {}", worker.dir.display());
        let mut count = 0_usize;
        while !stop.is_cancelled() {
            match worker.next(env, &handle, &stop).await {
                // The goal cannot be worked on here (it is released): on to the next.
                Err(e) => {
                    eprintln!(
                        "error: {}",
                        tether_human::visible::visible(&format!("{e:#}"))
                    );
                    tokio::select! {
                        () = tokio::time::sleep(poll) => {}
                        () = stop.cancelled() => {}
                    }
                }
                Ok(Some(done)) => {
                    count += 1;
                    let run = done.run.map_or_else(String::new, |r| format!(" ({r})"));
                    eprintln!(
                        "goal {} of {}{run}: {}",
                        done.goal,
                        done.fleet,
                        done.state.as_str().replace('_', " ")
                    );
                }
                Ok(None) if once => break,
                Ok(None) => {
                    tokio::select! {
                        () = tokio::time::sleep(poll) => {}
                        () = stop.cancelled() => {}
                    }
                }
            }
        }
        anyhow::Ok(count)
    });
    runtime.shutdown_background();
    let count = worked?;
    writeln!(ctx.out, "worked on {count} goal(s)")?;
    Ok(if stop.is_cancelled() {
        Exit::Interrupted
    } else {
        Exit::Done
    })
}

/// `$XDG_STATE_HOME/tether/worker`, else `~/.local/state/tether/worker`.
fn default_dir() -> PathBuf {
    std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join("tether/worker")
}

/// Cancels `stop` at Ctrl+C or SIGTERM.
async fn watch_stop(stop: CancellationToken) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut term) = signal(SignalKind::terminate()) else {
        return;
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
    eprintln!("stopping after the current step…");
    stop.cancel();
}

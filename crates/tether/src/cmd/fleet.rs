//! `tether run --parallel N`: many goals of the plan at once (see
//! `tether_runtime::fleet`), each goal's run announced and ended on the terminal as a run is,
//! each signed-off goal merged into the run's branch, and at the end the branch that holds the
//! work and how to merge it.

use anyhow::Result;
use tether_core::fleet::Finish;
use tether_runtime::fleet::{Fleet, FleetEnd};
use tether_runtime::launch::Launch;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use super::foreground::watch_ctrl_c;
use crate::exit::Exit;

/// Drives `launch`'s goal run as a run of many goals, `parallel` at once: on this machine, or
/// (`remote`, a remote's name or a URL) offered to workers on others.
pub fn run(
    ctx: &mut Ctx<'_>,
    launch: Launch,
    parallel: u32,
    remote: Option<String>,
) -> Result<Exit> {
    let fleet = Fleet {
        id: tether_store::RunId::generate(),
        launch,
        parallel: usize::try_from(parallel).unwrap_or(1),
        remote,
    };
    drive(ctx, fleet, None)
}

/// Takes the run of many goals `before` (as the store recorded it) up again, with `launch`'s
/// settings.
pub fn again(ctx: &mut Ctx<'_>, launch: Launch, before: tether_store::Fleet) -> Result<Exit> {
    let fleet = Fleet {
        id: before.id.clone(),
        launch,
        parallel: usize::try_from(before.parallel).unwrap_or(1),
        remote: before.remote.clone(),
    };
    drive(ctx, fleet, Some(before))
}

/// Drives `fleet` (new, or taken up again from `before`) to its end, and says how it ended.
fn drive(ctx: &mut Ctx<'_>, fleet: Fleet, before: Option<tether_store::Fleet>) -> Result<Exit> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let interrupt = CancellationToken::new();
    let handle = runtime.handle().clone();
    let env = ctx.env;
    let end = runtime.block_on(async {
        tokio::spawn(watch_ctrl_c(interrupt.clone()));
        let going = match before {
            None => fleet.begin(env).await?,
            Some(before) => fleet.again(env, before).await?,
        };
        eprintln!("run of many goals {}", going.id());
        going.drive(env, &handle, interrupt).await
    });
    runtime.shutdown_background();
    let end = end?;
    let (line, exit) = closing(&end);
    writeln!(ctx.out, "{}", tether_human::visible::visible(&line))?;
    if let Some(r) = &end.regression {
        for (goal, ending) in &r.failing {
            eprintln!(
                "verify of {goal}: {}",
                tether_human::visible::visible(ending)
            );
        }
    }
    eprintln!(
        "branch {branch}: merge it with `git merge {branch}`",
        branch = end.branch
    );
    Ok(exit)
}

/// The closing line of a run of many goals and its exit code.
fn closing(end: &FleetEnd) -> (String, Exit) {
    let merged = if end.merged.is_empty() {
        "none".to_owned()
    } else {
        end.merged.join(", ")
    };
    match &end.finish {
        Finish::AllMerged => (
            format!("all goals merged into {}: {merged}", end.branch),
            Exit::Done,
        ),
        Finish::Stuck { .. } if end.regression.is_some() => {
            let mut line = format!("run {} stopped", end.run);
            if let Some(r) = &end.regression {
                let failing: Vec<_> = r.failing.iter().map(|(g, _)| g.as_str()).collect();
                line.push_str(&format!(
                    ": after merging {}, the verify of {} fails on {}",
                    r.merged,
                    failing.join(", "),
                    end.branch
                ));
            }
            line.push_str(&format!("; merged: {merged}"));
            (line, Exit::Paused)
        }
        Finish::Stuck { ended, waiting } => {
            let mut line = format!(
                "run {} stopped with goals not merged: {}",
                end.run,
                ended.join(", ")
            );
            for (goal, paths) in &end.conflicts {
                line.push_str(&format!(
                    "; {goal} conflicts in {} (merge tether/{}-{goal} into {} yourself)",
                    paths.join(", "),
                    end.run,
                    end.branch
                ));
            }
            if !waiting.is_empty() {
                line.push_str(&format!("; waiting on them: {}", waiting.join(", ")));
            }
            if let Some(spent) = &end.budget_spent {
                line.push_str(&format!("; {}", spent.describe()));
            }
            line.push_str(&format!("; merged: {merged}"));
            (line, Exit::Paused)
        }
    }
}

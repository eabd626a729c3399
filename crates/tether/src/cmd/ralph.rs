//! `tether ralph` and `tether resume`: drive a Ralph loop in the foreground.

use anyhow::{Context as _, Result, anyhow};
use tether_config::Config;
use tether_core::control;
use tether_core::ralph::{self, Deps, LoopError, MAX_ITERATIONS_CEILING, RalphEnd, RalphSpec};
use tether_store::RunCell;
use tether_store::{RunId, Store};

use super::Ctx;
use super::foreground::Foreground;
use crate::cli::{EventsFormat, RalphArgs, ResumeArgs};
use crate::exit::Exit;
use crate::failure::Failure;

enum Start {
    New(RalphSpec),
    Resume(RunId),
}

/// `tether ralph`.
pub fn run(ctx: &mut Ctx<'_>, args: &RalphArgs) -> Result<Exit> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let prompt = match (&args.prompt, &args.prompt_file) {
        (Some(p), _) => p.clone(),
        (None, Some(file)) => std::fs::read_to_string(ctx.ws.root().join(file))
            .with_context(|| format!("reading the prompt file {}", file.display()))
            .map_err(Failure::usage)?,
        (None, None) => return Err(Failure::usage(anyhow!("give a prompt or --prompt-file"))),
    };
    if prompt.trim().is_empty() {
        return Err(Failure::usage(anyhow!("the prompt is empty")));
    }
    let max = args
        .max_iterations
        .unwrap_or(loaded.config.r#loop.max_iterations);
    if max > MAX_ITERATIONS_CEILING {
        return Err(Failure::usage(anyhow!(
            "--max-iterations {max} is above the ceiling of {MAX_ITERATIONS_CEILING}"
        )));
    }
    if max == 0 {
        eprintln!(
            "warning: --max-iterations 0: no iteration limit; stop the loop with Ctrl+C or \
             `tether cancel`"
        );
    }
    if args.completion_promise.is_none() {
        eprintln!(
            "note: no --completion-promise, so the loop runs {} iterations",
            if max == 0 {
                "until stopped".to_owned()
            } else {
                format!("all {max}")
            }
        );
    }
    let spec = RalphSpec {
        prompt,
        promise: args.completion_promise.clone(),
        max_iterations: (max != 0).then_some(max),
        max_consecutive_failures: loaded.config.r#loop.max_consecutive_failures,
    };
    let fg = Foreground::new("ralph", spec.max_iterations, args.events)?;
    let cell = RunCell::default();
    let deps = deps(ctx, &fg, &loaded.config, &cell)?;
    drive(ctx, fg, deps, &cell, Start::New(spec), args.events)
}

/// `tether resume`.
pub fn resume(ctx: &mut Ctx<'_>, args: &ResumeArgs) -> Result<Exit> {
    let run = {
        let store = Store::open(ctx.ws.db_path())?;
        control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?
    };
    if run.kind == tether_store::RunKind::Goal {
        return super::run::resume(ctx, run.id, args.events);
    }
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let fg = Foreground::new("ralph", None, args.events)?;
    let cell = RunCell::default();
    let deps = deps(ctx, &fg, &loaded.config, &cell)?;
    drive(ctx, fg, deps, &cell, Start::Resume(run.id), args.events)
}

/// The loop's parts: the process's one store connection and its human desk, and the executor
/// asking there.
fn deps(ctx: &Ctx<'_>, fg: &Foreground, config: &Config, cell: &RunCell) -> Result<Deps> {
    let (journal, human) = fg.human_side(&ctx.ws, config)?;
    let executor = crate::executor::from_config(config, &ctx.ws, ctx.env, &human, cell)?;
    Ok(Deps {
        ws: ctx.ws.clone(),
        journal,
        executor,
        human,
    })
}

fn drive(
    ctx: &mut Ctx<'_>,
    fg: Foreground,
    deps: Deps,
    cell: &RunCell,
    start: Start,
    events: Option<EventsFormat>,
) -> Result<Exit> {
    let describe = deps.executor.describe();
    let (run, end) = fg
        .run(|interrupt| async {
            match start {
                Start::New(spec) => {
                    let (promise, max) = (spec.promise.clone(), spec.max_iterations);
                    ralph::start(&deps, spec, interrupt, |run| {
                        if let Ok(mut c) = cell.lock() {
                            *c = Some(run.clone());
                        }
                        let budget = max.map_or_else(
                            || "no limit".to_owned(),
                            |m| format!("up to {m} iterations"),
                        );
                        let promise =
                            promise.map_or_else(String::new, |p| format!(" · promise {p:?}"));
                        eprintln!("ralph run {run} · {budget}{promise} · {describe}");
                    })
                    .await
                }
                Start::Resume(run) => {
                    if let Ok(mut c) = cell.lock() {
                        *c = Some(run.clone());
                    }
                    eprintln!("resuming run {run} · {describe}");
                    let end = ralph::resume(&deps, &run, "cli", interrupt).await;
                    end.map(|e| (run, e))
                }
            }
        })
        .map_err(|e| match e {
            // Asking for something that cannot be done (the run ended, or another process drives
            // it) is a usage error, not a failure of tether.
            LoopError::Ended { .. } | LoopError::Lock(_) | LoopError::NotRalph { .. } => {
                Failure::usage(e)
            }
            LoopError::Store(_) => anyhow::Error::new(e),
        })?;
    report(ctx, &run, &end, events.is_some())
}

fn report(ctx: &mut Ctx<'_>, run: &RunId, end: &RalphEnd, quiet_stdout: bool) -> Result<Exit> {
    let transcripts = ctx
        .ws
        .display(&ctx.ws.runs_dir().join(run.to_string()))
        .into_owned();
    let (line, exit) = match end {
        RalphEnd::PromiseKept { iteration } => (
            format!(
                "promise kept in iteration {iteration}: run {run} completed (transcripts: {transcripts}/)"
            ),
            Exit::Done,
        ),
        RalphEnd::BudgetSpent { iteration } => (
            format!(
                "budget spent after iteration {iteration} without the promise; continue with: tether resume {run}"
            ),
            Exit::Budget,
        ),
        RalphEnd::Failed { iteration, error } => (
            format!(
                "stopped: iteration {iteration} was the last of several failures in a row: {error}"
            ),
            Exit::Error,
        ),
        RalphEnd::Cancelled => (format!("run {run} cancelled"), Exit::Interrupted),
        RalphEnd::Paused => (
            format!("run {run} paused; continue with: tether resume {run}"),
            Exit::Paused,
        ),
        RalphEnd::Interrupted => (
            format!("run {run} interrupted; continue with: tether resume {run}"),
            Exit::Interrupted,
        ),
    };
    if quiet_stdout {
        eprintln!("{line}");
    } else {
        writeln!(ctx.out, "{line}")?;
    }
    Ok(exit)
}

//! `tether ralph`: the Ralph loop in the foreground (a Ralph run is resumed by `tether resume`).

use std::future::Future;
use std::time::Instant;

use anyhow::{Context as _, Result, anyhow};
use tether_config::Workspace;
use tether_core::ralph::{self, Deps, LoopError, MAX_ITERATIONS_CEILING, RalphEnd, RalphSpec};
use tether_store::{RunCell, RunId};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use super::foreground::{self, Loop, Parts, Start};
use crate::cli::RalphArgs;
use crate::exit::Exit;
use crate::failure::Failure;

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
        budget: super::budget::from_flags(&loaded.config.r#loop, &args.budget),
        max_consecutive_failures: loaded.config.r#loop.max_consecutive_failures,
    };
    let run = RunCell::default();
    let start = Start::New(spec);
    let config = &loaded.config;
    let bounds = super::settings::for_new_run(ctx, config);
    let parts = Parts::new::<RalphLoop>(
        &ctx.ws,
        ctx.env,
        (config, bounds),
        &start,
        (args.events, args.place),
        |ws, _, human| crate::executor::from_config(config, ws, ctx.env, human, &run),
    )?;
    foreground::drive::<RalphLoop>(ctx, parts, &run, start, args.events)
}

/// The Ralph loop in the foreground.
pub struct RalphLoop;

impl Loop for RalphLoop {
    type Spec = RalphSpec;
    type End = RalphEnd;
    const LABEL: &'static str = "ralph";
    const COMMITS_WHEN_DONE: bool = true;

    fn max_iterations(spec: &RalphSpec) -> Option<u32> {
        spec.max_iterations
    }

    fn banner(spec: &RalphSpec) -> (&'static str, String) {
        let budget = spec.max_iterations.map_or_else(
            || "no limit".to_owned(),
            |m| format!("up to {m} iterations"),
        );
        let promise = spec
            .promise
            .as_ref()
            .map_or_else(String::new, |p| format!(" · promise {p:?}"));
        ("ralph run", format!("{budget}{promise}"))
    }

    fn start(
        deps: &Deps,
        spec: RalphSpec,
        interrupt: CancellationToken,
        on_start: impl FnOnce(&RunId),
    ) -> impl Future<Output = Result<(RunId, RalphEnd), LoopError>> {
        ralph::start(deps, spec, interrupt, on_start)
    }

    fn resume(
        deps: &Deps,
        run: &RunId,
        interrupt: CancellationToken,
    ) -> impl Future<Output = Result<RalphEnd, LoopError>> {
        ralph::resume(deps, run, "cli", interrupt)
    }

    fn report(ws: &Workspace, run: &RunId, end: &RalphEnd, _: Instant) -> (String, Exit) {
        let transcripts = ws
            .display(&ws.runs_dir().join(run.to_string()))
            .into_owned();
        match end {
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
            RalphEnd::CannotRun { iteration, error } => (
                format!("stopped at iteration {iteration}: {error}"),
                Exit::Error,
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
        }
    }
}

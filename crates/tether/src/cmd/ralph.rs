//! `tether ralph`: the Ralph loop in the foreground (a Ralph run is resumed by `tether resume`).

use anyhow::{Context as _, Result, anyhow};
use tether_config::Workspace;
use tether_core::ralph::{MAX_ITERATIONS_CEILING, RalphEnd};
use tether_runtime::launch::{Place, RunSpec};
use tether_store::RunId;

use super::Ctx;
use super::foreground::{self, Shown};
use super::stopped;
use crate::cli::RalphArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether ralph`.
pub fn run(ctx: &mut Ctx<'_>, args: &RalphArgs) -> Result<Exit> {
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
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
    let config = loaded.config.clone();
    let max = (max != 0).then_some(max);
    let promise = args.completion_promise.clone();
    let shown = Shown {
        label: LABEL,
        max,
        banner: ("ralph run", banner(max, promise.as_deref())),
        events: args.events,
    };
    let budget = super::budget::from_flags(&config.r#loop, &args.budget);
    let spec = RunSpec::ralph(&config, prompt, promise, max, budget);
    let bounds = tether_runtime::bounds::for_new_run(&ctx.ws, &loaded);
    let place = Place {
        worktree: args.place.worktree,
        commit: args.place.commit,
    };
    let fg = foreground::prepare(ctx, (config, bounds), spec, place, shown)?;
    foreground::drive(ctx, fg, super::run::report)
}

/// Names the progress line of a Ralph run.
pub const LABEL: &str = "ralph";

/// What the line announcing a new Ralph run says after its id.
fn banner(max: Option<u32>, promise: Option<&str>) -> String {
    let budget = max.map_or_else(
        || "no limit".to_owned(),
        |m| format!("up to {m} iterations"),
    );
    let promise = promise.map_or_else(String::new, |p| format!(" · promise {p:?}"));
    format!("{budget}{promise}")
}

/// The closing line of a Ralph run and its exit code.
pub fn ralph_report(ws: &Workspace, run: &RunId, end: &RalphEnd) -> (String, Exit) {
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
        RalphEnd::Stopped(how) => stopped::report(run, how, stopped::RALPH),
    }
}

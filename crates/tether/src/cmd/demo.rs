//! `tether demo`: the Ralph loop end to end in a fresh workspace, with a scripted model.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context as _, Result};
use tether_agent::{BuiltinAgent, WorkspaceTools};
use tether_core::Workspace;
use tether_core::journal::{EventSink, Journal};
use tether_core::ralph::{self, Deps, RalphEnd, RalphSpec};
use tether_model::scripted::ScriptedModel;
use tether_store::{Event, Seq, Store};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::DemoArgs;
use crate::demo;
use crate::exit::Exit;
use crate::sinks::Progress;

/// Runs the demo and tells what happened.
pub fn run(ctx: &mut Ctx<'_>, args: &DemoArgs) -> Result<Exit> {
    let dir = match &args.dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.clone()
        }
        None => tempfile::Builder::new()
            .prefix("tether-demo-")
            .tempdir()?
            .keep(),
    };
    let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
    let ws = Workspace::at(&dir);
    for (name, text) in demo::FILES {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    writeln!(
        ctx.out,
        "tether demo — a Ralph loop in a fresh workspace: {}",
        dir.display()
    )?;
    writeln!(
        ctx.out,
        "The model is SCRIPTED (no AI is called): it answers from a fixed list. The files, the \
         tools, the loop, the store and the transcripts are real.\n"
    )?;
    writeln!(ctx.out, "prompt:  {}", demo::PROMPT)?;
    writeln!(ctx.out, "promise: {}\n", demo::PROMISE)?;

    let model = Arc::new(ScriptedModel::new(demo::script()));
    let tools = tether_tools::ToolSet::builtin(ws.root(), &tether_tools::ToolOptions::default())?;
    let agent = BuiltinAgent::new(
        model,
        Arc::new(WorkspaceTools::new(tools)),
        "scripted demo model".into(),
    );
    let progress = Progress::for_terminal("demo", Some(5)).map(Arc::new);
    let sinks: Vec<Arc<dyn EventSink>> = progress
        .iter()
        .map(|p| Arc::clone(p) as Arc<dyn EventSink>)
        .collect();
    let deps = Deps {
        ws: ws.clone(),
        journal: Journal::new(Store::open(ws.db_path())?, sinks)?,
        executor: Arc::new(agent),
    };
    let spec = RalphSpec {
        prompt: demo::PROMPT.into(),
        promise: Some(demo::PROMISE.into()),
        max_iterations: Some(5),
        max_consecutive_failures: 3,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let (run, end) =
        runtime.block_on(ralph::start(&deps, spec, CancellationToken::new(), |_| {}))?;
    if let Some(p) = &progress {
        p.clear();
    }
    let events = deps.journal.store().events(&run, Seq(0), usize::MAX)?;
    for e in events.iter().filter_map(|e| e.event.as_ref()) {
        match e {
            Event::IterationStarted { n } => writeln!(ctx.out, "iteration {n}")?,
            Event::ToolCalled { summary, .. } => writeln!(ctx.out, "  tool  {summary}")?,
            Event::IterationCompleted { summary, .. } => {
                writeln!(ctx.out, "  said  {summary}")?;
            }
            Event::IterationFailed { error, .. } => writeln!(ctx.out, "  failed  {error}")?,
            _ => {}
        }
    }
    let greet = std::fs::read_to_string(dir.join("greet.sh")).unwrap_or_default();
    let transcripts: PathBuf = ws.runs_dir().join(run.to_string());
    writeln!(ctx.out)?;
    let exit = match end {
        RalphEnd::PromiseKept { iteration } => {
            writeln!(
                ctx.out,
                "The agent kept its promise in iteration {iteration}."
            )?;
            Exit::Done
        }
        other => {
            writeln!(ctx.out, "The loop ended without the promise: {other:?}")?;
            Exit::Error
        }
    };
    writeln!(ctx.out, "greet.sh is now: {}", greet.trim())?;
    writeln!(ctx.out, "transcripts:     {}/", transcripts.display())?;
    writeln!(
        ctx.out,
        "look around:     tether -C {} status",
        dir.display()
    )?;
    Ok(exit)
}

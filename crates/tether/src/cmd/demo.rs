//! `tether demo`: the whole story in a fresh workspace with scripted models — a plan with one
//! goal, the goal loop, a question to a human, a real verify, a judge citing a real quote, the
//! sign-off, and a summary.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context as _, Result};
use tether_config::Config;
use tether_human::terminal::Terminal;
use tether_human::{Console, Desk, Keyboard};
use tether_runtime::demo::{AutoAnswer, Demo, story};
use tether_store::EventSink;
use tether_store::RunId;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::DemoArgs;
use crate::exit::Exit;
use crate::sinks::Progress;

/// Runs the demo and tells what happened.
pub fn run(ctx: &mut Ctx<'_>, args: &DemoArgs) -> Result<Exit> {
    let dir = workspace_dir(args.dir.as_deref())?;
    let progress = Progress::for_terminal("demo", Some(5)).map(Arc::new);
    let sinks: Vec<Arc<dyn EventSink>> = progress
        .iter()
        .map(|p| Arc::clone(p) as Arc<dyn EventSink>)
        .collect();
    let (ws, journal) = tether_runtime::demo::set_up(&dir, sinks)?;
    // The demo workspace has no tether.toml: the defaults (threshold 2, no timeout, no Zulip).
    let config = Config::defaults(tether_runtime::schema());
    let console = match Console::detect(|| tether_human::person::name(&config.human, ctx.env)) {
        Console::Person { .. } if args.yes => Console::Absent,
        console => console,
    };
    let terminal = console != Console::Absent;
    write!(ctx.out, "{}", story::intro(&dir, terminal))?;
    // The keyboard (the process's one reader of stdin): the question card, then the Enter
    // that stops the dashboard.
    let keyboard = std::io::stdin().is_terminal().then(Keyboard::get);
    let dashboard = super::serve::Dashboard::bind(tether_web::embedded(&ws), &ws, &config);
    let url = dashboard.as_ref().map(super::serve::Dashboard::url);
    if let Some(url) = &url {
        writeln!(ctx.out, "Watch it in a browser: {url}\n")?;
        ctx.out.flush()?;
    }

    let mut human = Desk::from_config(
        &config,
        &ws,
        journal.clone(),
        (Console::Absent, tether_human::registry::Reach::ANYTHING),
    );
    if let (Console::Person { who }, Some(_)) = (&console, keyboard) {
        human = human.with_channel(Arc::new(Terminal::stdio(who.clone())));
    }
    if !terminal {
        human = human.with_channel(Arc::new(AutoAnswer));
    }
    let demo = Demo::new(&ws, &journal, human, &crate::bridged::host())?;
    if let Some(e) = &demo.unsandboxed {
        eprintln!("note: the demo runs without the sandbox: {e}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if let Some(d) = dashboard {
        let _serving = runtime.enter();
        d.spawn(CancellationToken::new());
    }
    let (run, end) = runtime.block_on(demo.run())?;
    if let Some(p) = &progress {
        p.clear();
    }
    let exit = {
        let store = journal.store();
        let (summary, signed_off) = story::summary(&ws, &store, &run, &end)?;
        write!(ctx.out, "{}{summary}", story::timeline(&store, &run)?)?;
        if signed_off { Exit::Done } else { Exit::Error }
    };
    if let (Some(url), Some(keyboard)) = (url, keyboard) {
        keep_serving(ctx, &url, &run, keyboard)?;
    }
    runtime.shutdown_background();
    Ok(exit)
}

/// On a terminal, the dashboard keeps serving the finished demo until Enter is pressed.
fn keep_serving(ctx: &mut Ctx<'_>, url: &str, run: &RunId, keyboard: &Keyboard) -> Result<()> {
    let (base, token) = url.split_once("/?").unwrap_or((url, ""));
    writeln!(
        ctx.out,
        "\nThe dashboard shows the run with both verdicts, the cited quotes and the Q&A:\n  \
         {base}/runs/{run}?{token}\nPress Enter to stop it."
    )?;
    ctx.out.flush()?;
    keyboard.discard_typed_ahead();
    let _ = keyboard.wait_line();
    Ok(())
}

fn workspace_dir(dir: Option<&Path>) -> Result<PathBuf> {
    let dir = match dir {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
            d.to_owned()
        }
        None => tempfile::Builder::new()
            .prefix("tether-demo-")
            .tempdir()?
            .keep(),
    };
    Ok(std::fs::canonicalize(&dir).unwrap_or(dir))
}

//! `tether demo`: the whole story in a fresh workspace with scripted models — a plan with one
//! goal, the goal loop, a question to a human, a real verify, a judge citing a real quote, the
//! sign-off, and a summary.

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, Result};
use tether_agent::BuiltinAgent;
use tether_config::{Config, Workspace};
use tether_core::goal::{self, Deps, GoalEnd, GoalSpec, RuleSettings};
use tether_human::terminal::Terminal;
use tether_human::tool::{AskHuman, RunCell};
use tether_human::{Channel, ChannelAnswer, Console, Desk, Keyboard};
use tether_model::scripted::ScriptedModel;
use tether_signoff::tool::{CancelGoal, CompleteGoal};
use tether_signoff::{Judge, Signoff};
use tether_store::{Event, Question, RunId, Seq, Store, Verdict};
use tether_store::{EventSink, Journal};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::DemoArgs;
use crate::demo;
use crate::exit::Exit;
use crate::sinks::Progress;

/// Answers every question at once, for `--yes` and runs without a terminal.
struct AutoAnswer;

impl Channel for AutoAnswer {
    fn name(&self) -> &'static str {
        "demo"
    }

    async fn offer(&self, _question: &Question, _stop: CancellationToken) -> Option<ChannelAnswer> {
        Some(ChannelAnswer::text(demo::AUTO_ANSWER, "tether demo --yes"))
    }
}

/// Runs the demo and tells what happened.
pub fn run(ctx: &mut Ctx<'_>, args: &DemoArgs) -> Result<Exit> {
    let dir = workspace_dir(args.dir.as_deref())?;
    let ws = Workspace::at(&dir);
    for (name, text) in demo::FILES {
        std::fs::write(dir.join(name), text).with_context(|| format!("writing {name}"))?;
    }
    std::fs::create_dir_all(ws.state_dir())?;
    let progress = Progress::for_terminal("demo", Some(5)).map(Arc::new);
    let sinks: Vec<Arc<dyn EventSink>> = progress
        .iter()
        .map(|p| Arc::clone(p) as Arc<dyn EventSink>)
        .collect();
    let journal = Journal::new(Store::open(ws.db_path())?, sinks)?;
    let doc = tether_plan::PlanDoc::parse("plan.md", demo::PLAN);
    for g in &doc.plan().goals {
        if let Some(id) = g.id() {
            journal.store().approve_contract_terms(
                "plan.md",
                id,
                &g.contract_hash(),
                &tether_core::planning::terms::written(g),
                "tether demo",
            )?;
        }
    }
    let console =
        match Console::detect(|| tether_human::person::name(&Config::default().human, ctx.env)) {
            Console::Person { .. } if args.yes => Console::Absent,
            console => console,
        };
    let terminal = console != Console::Absent;
    intro(ctx, &dir, terminal)?;
    // The keyboard (the process's one reader of stdin): the question card, then the Enter
    // that stops the dashboard.
    let keyboard = std::io::stdin().is_terminal().then(Keyboard::get);
    let dashboard =
        super::serve::Dashboard::bind(tether_web::embedded(&ws), &ws, &Config::default());
    let url = dashboard.as_ref().map(super::serve::Dashboard::url);
    if let Some(url) = &url {
        writeln!(ctx.out, "Watch it in a browser: {url}\n")?;
        ctx.out.flush()?;
    }

    let cell = RunCell::default();
    // The demo workspace has no tether.toml: the defaults (threshold 2, no timeout, no Zulip).
    let mut human = Desk::from_config(&Config::default(), &ws, journal.clone(), Console::Absent);
    if let (Console::Person { who }, Some(_)) = (&console, keyboard) {
        human = human.with_channel(Arc::new(Terminal::stdio(who.clone())));
    }
    if !terminal {
        human = human.with_channel(Arc::new(AutoAnswer));
    }
    let judge = Judge::new(
        Arc::new(ScriptedModel::new(demo::judge())),
        "scripted judge",
        Duration::from_secs(60),
    );
    // The scripted agent's commands run sandboxed like a real one's, where the kernel can.
    let sandbox = match tether_sandbox::Support::probe().check() {
        Ok(()) => crate::sandbox::for_run(&Config::default(), &ws)?,
        Err(e) => {
            eprintln!("note: the demo runs without the sandbox: {e}");
            crate::sandbox::RunSandbox::default()
        }
    };
    let signoff = Signoff::new(ws.clone(), journal.clone(), "plan.md")
        .with_judge(Some(judge))
        .sandboxed(sandbox.shell.clone());
    let options = tether_tools::ToolOptions {
        bash_sandbox: sandbox.shell,
        ..tether_tools::ToolOptions::default()
    };
    let mut tools = tether_tools::ToolSet::builtin(ws.root(), &options)?;
    tools.add(Arc::new(AskHuman::new(human.clone(), cell.clone())))?;
    tools.add(Arc::new(CompleteGoal::new(signoff.clone(), cell.clone())))?;
    tools.add(Arc::new(CancelGoal::new(signoff)))?;
    let agent = BuiltinAgent::new(
        Arc::new(ScriptedModel::new(demo::agent())),
        tools,
        "scripted demo model".into(),
    );
    let deps = Deps {
        ws: ws.clone(),
        journal: journal.clone(),
        executor: Arc::new(agent),
        human,
        usage: tether_core::looping::UsageWaits::default(),
        price: None,
        loop_judge: None,
        env_remove: Vec::new(),
        isolation: Default::default(),
        // A throwaway workspace of its own: no tether.toml of the person's to keep to.
        bounds: None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    if let Some(d) = dashboard {
        let _serving = runtime.enter();
        d.spawn(CancellationToken::new());
    }
    let (run, end) = runtime.block_on(goal::start(
        &deps,
        spec(),
        CancellationToken::new(),
        |run| {
            if let Ok(mut c) = cell.lock() {
                *c = Some(run.clone());
            }
        },
    ))?;
    if let Some(p) = &progress {
        p.clear();
    }
    let exit = {
        let store = journal.store();
        timeline(ctx, &store, &run)?;
        summary(ctx, &ws, &store, &run, &end)?
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

fn spec() -> GoalSpec {
    GoalSpec {
        plan: "plan.md".into(),
        max_iterations: Some(5),
        budget: tether_store::Budget::default(),
        threshold: 2,
        no_judge: false,
        rules: RuleSettings::default(),
        max_consecutive_failures: 3,
    }
}

fn intro(ctx: &mut Ctx<'_>, dir: &Path, terminal: bool) -> Result<()> {
    writeln!(
        ctx.out,
        "tether demo — a goal loop in a fresh workspace: {}",
        dir.display()
    )?;
    writeln!(
        ctx.out,
        "The agent and the judge are SCRIPTED models (no AI is called): they answer from fixed \
         lists. The files, the tools, the question, the verify command, the judge's quote check, \
         the loop, the store and the transcripts are real.\n"
    )?;
    writeln!(
        ctx.out,
        "plan.md has one goal, `greet`: `sh greet.sh NAME` prints `Hello, NAME!`; verify: sh \
         test.sh. Its contract is approved."
    )?;
    if terminal {
        writeln!(
            ctx.out,
            "The agent will ask you one question on this terminal (any answer works: the script \
             does not read it; --yes answers for you).\n"
        )?;
    } else {
        writeln!(
            ctx.out,
            "The agent's one question is answered automatically (--yes, or no terminal).\n"
        )?;
    }
    Ok(())
}

fn timeline(ctx: &mut Ctx<'_>, store: &Store, run: &RunId) -> Result<()> {
    for e in store.events(run, Seq(0), usize::MAX)? {
        match e.event {
            Some(Event::IterationStarted { n }) => writeln!(ctx.out, "iteration {n}")?,
            Some(Event::ToolCalled { summary, .. }) => writeln!(ctx.out, "  tool     {summary}")?,
            Some(Event::QuestionAsked { question_id }) => {
                let q = store.question(&question_id)?;
                writeln!(ctx.out, "  asked    {}", q.question)?;
            }
            Some(Event::QuestionAnswered { question_id, .. }) => {
                let q = store.question(&question_id)?;
                let who = q.responder.unwrap_or_default();
                writeln!(
                    ctx.out,
                    "  answer   {} — {who}",
                    q.answer.unwrap_or_default()
                )?;
            }
            Some(Event::GoalVerdict {
                goal_id,
                verdict,
                reason,
            }) => writeln!(
                ctx.out,
                "  sign-off {goal_id}: {} — {reason}",
                verdict.as_str()
            )?,
            Some(Event::RuleFired { rule, reason }) => {
                writeln!(ctx.out, "  rule     {rule}: {reason}")?;
            }
            Some(Event::IterationCompleted { summary, .. }) => {
                writeln!(ctx.out, "  said     {summary}")?;
            }
            Some(Event::IterationFailed { error, .. }) => writeln!(ctx.out, "  failed   {error}")?,
            _ => {}
        }
    }
    Ok(())
}

fn summary(
    ctx: &mut Ctx<'_>,
    ws: &Workspace,
    store: &Store,
    run: &RunId,
    end: &GoalEnd,
) -> Result<Exit> {
    writeln!(ctx.out)?;
    let exit = match end {
        GoalEnd::AllDone { iteration, .. } => {
            writeln!(
                ctx.out,
                "The goal `greet` was signed off in iteration {iteration}."
            )?;
            Exit::Done
        }
        other => {
            writeln!(ctx.out, "The run ended without the sign-off: {other:?}")?;
            Exit::Error
        }
    };
    for v in store.verdicts_for_goal("plan.md", "greet")? {
        let d = &v.decision;
        let judge = d.judge_model.as_deref().unwrap_or("no judge");
        writeln!(
            ctx.out,
            "  attempt {}: {} (verify exit {}, {judge})",
            d.attempt,
            d.verdict.as_str(),
            d.verify_exit
                .map_or_else(|| "-".to_owned(), |c| c.to_string()),
        )?;
        if d.verdict == Verdict::Accept
            && let Some(checks) = d.checks.as_array()
        {
            for c in checks {
                writeln!(
                    ctx.out,
                    "    cited {}: {}   (found in the file by tether)",
                    c["path"].as_str().unwrap_or_default(),
                    c["quote"].as_str().unwrap_or_default()
                )?;
            }
        }
    }
    let greet = std::fs::read_to_string(ws.root().join("greet.sh")).unwrap_or_default();
    let files: PathBuf = ws.runs_dir().join(run.to_string());
    writeln!(ctx.out, "greet.sh is now:  {}", greet.trim())?;
    writeln!(
        ctx.out,
        "transcripts, verify and judge logs: {}/",
        files.display()
    )?;
    writeln!(
        ctx.out,
        "look around:      tether -C {} plan   (also: status, history)",
        ws.root().display()
    )?;
    Ok(exit)
}

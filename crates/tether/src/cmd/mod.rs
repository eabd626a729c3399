//! One module per command. Each takes its parsed arguments, the context, and a writer for
//! stdout, and returns how it ended.

pub mod budget;
pub mod control;
pub mod demo;
pub mod doctor;
pub mod fleet;
pub mod foreground;
pub mod gate;
pub mod goal;
pub mod human;
pub mod init;
pub mod judge;
pub mod mcp;
pub mod plan;
pub mod ralph;
pub mod resume;
pub mod run;
pub mod schedule;
pub mod serve;
pub mod shell;
pub mod side;
pub mod stopped;
pub mod store;
pub mod validate;
pub mod watch;
pub mod worker;
pub mod worktree;

use std::io::Write;

use tether_config::Env;
use tether_config::Workspace;
use tether_config::{Config, ConfigError, Loaded};
use tether_core::human_act;
use tether_store::RunId;

/// What every command gets from `main`.
pub struct Ctx<'a> {
    /// The workspace the command works in.
    pub ws: Workspace,
    /// The process environment (tests and embedders may substitute their own).
    pub env: &'a (dyn Env + Sync),
    /// Where results go (stdout): text or JSON, nothing else.
    pub out: &'a mut dyn Write,
    /// Whether the command was handed over by a sandboxed agent (see `bridge`): it has no
    /// terminal of its own, and the driving process's terminal is not the agent's to use.
    pub bridged: bool,
    /// What a bridged command's stdin held (read by the sandboxed process and handed over).
    pub input: Option<String>,
    /// For a command handed over by a run's agent: the run's configuration, as the process
    /// driving it holds it (the one the run recorded or a person accepted: its sandbox, its
    /// judge, its store…). It stands in for tether.toml, which the agent may have edited.
    pub run_config: Option<std::sync::Arc<Config>>,
    /// The sandbox of the run a bridged command was handed over from: what it runs for the
    /// agent (a sign-off's verify) runs there, and nothing is built per call.
    pub run_sandbox: Option<tether_runtime::sandbox::RunSandbox>,
    /// The run a bridged command was handed over from, as the bridge knows it (never as the
    /// agent names it): what the command records is filed under it.
    pub run: Option<RunId>,
}

/// Writes `value` to `out` as pretty JSON and a newline: a command's `--json` result.
pub fn json(out: &mut dyn Write, value: &impl serde::Serialize) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value)?;
    writeln!(out)?;
    Ok(())
}

/// A Tokio runtime on this thread alone, for a command's few asynchronous steps.
pub fn current_thread() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
}

/// tether.toml as loaded now — or, for a command handed over by a run's agent, the run's
/// configuration (see [`Ctx::run_config`]): an edit the agent made is not applied.
pub fn load_config(ctx: &Ctx<'_>) -> Result<Loaded, ConfigError> {
    match &ctx.run_config {
        Some(config) => Ok(Loaded {
            config: Config::clone(config),
            source: None,
            warnings: Vec::new(),
            input: tether_config::Source {
                schema: tether_runtime::schema().clone(),
                ..tether_config::Source::default()
            },
        }),
        None => tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env),
    }
}

/// Which store a command keeps its records in: for a command handed over by a run's agent,
/// the run's (its configuration's, whatever tether.toml says now); else the one tether.toml and
/// `TETHER_STORE_URL` name.
pub fn store_config(ctx: &Ctx<'_>) -> tether_runtime::Result<tether_config::StoreConfig> {
    match &ctx.run_config {
        Some(config) => Ok(config.store.clone()),
        None => tether_runtime::store::find(&ctx.ws, ctx.env),
    }
}

/// The store a command keeps its records in (see [`store_config`]).
pub fn store(ctx: &Ctx<'_>) -> tether_runtime::Result<tether_store::Store> {
    tether_runtime::store::open_of(&ctx.ws, &store_config(ctx)?)
}

/// The run what this command records (a question, a sign-off) belongs to: for a command a
/// run's agent handed over, that run, whatever it names; otherwise the run `TETHER_RUN_ID`
/// names, when it is set to a run id (an agent CLI's own `tether` commands, outside a sandbox).
pub fn filed_under(ctx: &Ctx<'_>) -> Option<RunId> {
    if ctx.run.is_some() {
        return ctx.run.clone();
    }
    let named = ctx.env.var(tether_runtime::bridge::RUN_ENV)?;
    named.trim().parse().ok()
}

/// Who asks something of a run from this command: a person, or — inside an agent's process
/// tree, or handed over through the bridge — the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asker {
    /// A person, by name (`[human] name`, git's `user.name`, `$USER`).
    Person(String),
    /// An agent; `run` is the run it belongs to when that is known.
    Agent {
        /// Its run, as the bridge (or its driver's lock) says.
        run: Option<RunId>,
    },
}

/// Who runs this command, for what it asks of a run (`tether say`, `tether pause`).
pub fn asker(ctx: &Ctx<'_>) -> Asker {
    match human_act::inside_agent(&ctx.ws, ctx.env) {
        None => Asker::Person(who(ctx)),
        Some(inside) => {
            let driven = match inside {
                human_act::Inside::Ancestor { run, .. } => run.parse().ok(),
                _ => None,
            };
            Asker::Agent {
                run: filed_under(ctx).or(driven),
            }
        }
    }
}

/// Who the person running this command is, as their acts are recorded (`[human] name`, else
/// git's `user.name`, else `$USER`; see `tether_human::person`): the run's `[human] name` for a
/// command handed over by its agent.
pub fn who(ctx: &Ctx<'_>) -> String {
    let human = match &ctx.run_config {
        Some(config) => config.human.clone(),
        None => tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
            .map(|loaded| loaded.config.human)
            .unwrap_or_default(),
    };
    tether_human::person::name(&human, ctx.env)
}

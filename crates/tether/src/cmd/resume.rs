//! `tether resume`: a stopped run of either loop taken up again in the foreground, from where
//! the store says it stands.

use anyhow::Result;
use tether_core::control;
use tether_core::human_act::HumanAct;
use tether_store::{RunCell, RunKind, Store};

use super::Ctx;
use super::foreground::{self, Parts, Start};
use super::ralph::RalphLoop;
use super::run::GoalLoop;
use crate::cli::ResumeArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether resume`.
pub fn run(ctx: &mut Ctx<'_>, args: &ResumeArgs) -> Result<Exit> {
    super::require_human(ctx, HumanAct::ResumeRun)?;
    let run = {
        let store = Store::open(ctx.ws.db_path())?;
        control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?
    };
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let config = &loaded.config;
    let cell = RunCell::default();
    if run.kind == RunKind::Goal {
        // Sign-off by verify alone is the run's choice, kept in its spec.
        let no_judge = run
            .spec
            .get("no_judge")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false);
        let start = Start::Resume(run.id);
        let parts =
            Parts::new::<GoalLoop>(&ctx.ws, config, &start, args.events, |journal, human| {
                crate::executor::for_goal_loop(
                    config, &ctx.ws, ctx.env, journal, human, &cell, no_judge,
                )
            })?;
        return foreground::drive::<GoalLoop>(ctx, parts, &cell, start, args.events);
    }
    // Any other kind is refused by the Ralph loop with a message naming the run's kind.
    let start = Start::Resume(run.id);
    let parts = Parts::new::<RalphLoop>(&ctx.ws, config, &start, args.events, |_, human| {
        crate::executor::from_config(config, &ctx.ws, ctx.env, human, &cell)
    })?;
    foreground::drive::<RalphLoop>(ctx, parts, &cell, start, args.events)
}

//! `tether goal complete` and `tether goal cancel`: a person signing a goal off (or cancelling
//! it) through the same path the agent's `complete_goal` takes. A goal a person signs off this
//! way is a `signed_off` notice of no run, delivered (bounded) before the command exits; one a
//! run's agent signs off (handed over through the bridge) is filed under its run, whose own
//! notices tell it.

use anyhow::{Result, anyhow};
use tether_human::visible::visible;
use tether_runtime::human_act::{HumanAct, require_human};
use tether_runtime::signoff::ByPerson;
use tether_signoff::{CancelOutcome, Signoff, SignoffError, SignoffOutcome};
use tether_store::Journal;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::{GoalAddCriterionArgs, GoalCancelArgs, GoalCommand, GoalCompleteArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether goal …`.
pub fn run(ctx: &mut Ctx<'_>, cmd: &GoalCommand) -> Result<Exit> {
    match cmd {
        GoalCommand::Complete(args) => complete(ctx, args),
        GoalCommand::Cancel(args) => cancel(ctx, args),
        GoalCommand::AddCriterion(args) => add_criterion(ctx, args),
    }
}

fn complete(ctx: &mut Ctx<'_>, args: &GoalCompleteArgs) -> Result<Exit> {
    if args.no_judge {
        require_human(&ctx.ws, ctx.env, HumanAct::SignOffWithoutJudge)?;
    }
    // Handed over by a run's agent: the run's configuration (its sandbox, verify timeout and
    // judge), not tether.toml as the agent may have left it; verify in the run's sandbox.
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    // Claimed by a run's agent through the bridge: filed under its run (the report lists it
    // there), its diff taken in the repository the run recorded.
    let run = super::filed_under(ctx);
    let of_run = run.is_some();
    let signoff = ByPerson::new(
        (&ctx.ws, &loaded.config, ctx.env),
        crate::cmd::store(ctx)?,
        args.no_judge,
        (ctx.run_sandbox.clone(), run),
        &crate::bridged::host(),
    )?;
    let runtime = super::current_thread()?;
    let cancel = CancellationToken::new();
    let judge = signoff.judge();
    eprintln!("checking goal {}: verify, then {judge}…", args.id);
    let result = runtime.block_on(async {
        let c = cancel.clone();
        tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                c.cancel();
            }
        });
        signoff
            .complete(
                &args.id,
                args.evidence.as_deref().unwrap_or_default(),
                &args.paths,
                &cancel,
            )
            .await
    });
    let outcome = match result {
        Ok(o) => o,
        Err(SignoffError::Cancelled) => {
            eprintln!("interrupted; nothing was recorded");
            return Ok(Exit::Interrupted);
        }
        Err(e) => return Err(e.into()),
    };
    let exit = print_outcome(ctx, args, &outcome);
    // A run's sign-off is told by the run's own notices.
    if outcome.is_accepted() && !of_run {
        let grace = tether_runtime::process::notice_grace(ctx.env);
        runtime.block_on(signoff.announce(&args.id, &super::who(ctx), grace));
    }
    exit
}

/// Prints `outcome` (as JSON with `--json`) and says how the command ends.
fn print_outcome(
    ctx: &mut Ctx<'_>,
    args: &GoalCompleteArgs,
    outcome: &SignoffOutcome,
) -> Result<Exit> {
    if args.json {
        super::json(ctx.out, outcome)?;
    }
    match outcome {
        SignoffOutcome::Refused { reason, .. } if args.json => {
            eprintln!("refused: {}", visible(reason));
            Ok(Exit::Usage)
        }
        SignoffOutcome::Refused { reason, .. } => Err(Failure::usage(anyhow!("{reason}"))),
        _ if args.json => Ok(exit_of(outcome)),
        _ => {
            // The judge's reasons and quotes and verify's output are in it.
            write!(ctx.out, "{}", visible(&outcome.person_text()))?;
            Ok(exit_of(outcome))
        }
    }
}

fn exit_of(outcome: &SignoffOutcome) -> Exit {
    if outcome.is_accepted() {
        Exit::Done
    } else {
        Exit::Error
    }
}

fn cancel(ctx: &mut Ctx<'_>, args: &GoalCancelArgs) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::CancelGoal)?;
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let journal = Journal::new(crate::cmd::store(ctx)?, Vec::new())?;
    let plan = loaded.config.plan_path(ctx.ws.root());
    let signoff = Signoff::new(ctx.ws.clone(), journal, plan);
    match signoff.cancel_goal_by_person(&args.id, &args.reason, &super::who(ctx))? {
        CancelOutcome::Cancelled {
            goal_id, reason, ..
        } => {
            let line = format!("cancelled: goal {goal_id}: {reason}");
            writeln!(ctx.out, "{}", visible(&line))?;
            Ok(Exit::Done)
        }
        CancelOutcome::Refused { reason, .. } => Err(Failure::usage(anyhow!("{reason}"))),
    }
}

/// `tether goal add-criterion`: the criterion into `done_when`, a log line, and the changed
/// contract approved as the person who added it.
fn add_criterion(ctx: &mut Ctx<'_>, args: &GoalAddCriterionArgs) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::AddCriterion)?;
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let who = super::who(ctx);
    let store = crate::cmd::store(ctx)?;
    let (done_when, hash) = tether_runtime::plan::add_criterion(
        (&ctx.ws, &loaded.config),
        &store,
        (&args.id, &args.criterion),
        &who,
    )?;
    let line = format!(
        "{}: done_when is now {done_when}\ncontract approved again by {who} ({hash})",
        args.id
    );
    writeln!(ctx.out, "{}", visible(&line))?;
    Ok(Exit::Done)
}

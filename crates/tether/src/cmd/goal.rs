//! `tether goal complete` and `tether goal cancel`: a person signing a goal off (or cancelling
//! it) through the same path the agent's `complete_goal` takes. A goal signed off this way is a
//! `signed_off` notice of no run, delivered (bounded) before the command exits.

use anyhow::{Result, anyhow};
use tether_core::human_act::HumanAct;
use tether_human::visible::visible;
use tether_runtime::signoff::ByPerson;
use tether_signoff::{CancelOutcome, Signoff, SignoffError, SignoffOutcome, VerifyResult};
use tether_store::Journal;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::{GoalAddCriterionArgs, GoalCancelArgs, GoalCommand, GoalCompleteArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// How many lines of a failing verify's output are printed.
const TAIL_LINES: usize = 20;

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
        super::require_human(ctx, HumanAct::SignOffWithoutJudge)?;
    }
    // Handed over by a run's agent: the run's configuration (its sandbox, verify timeout and
    // judge), not tether.toml as the agent may have left it; verify in the run's sandbox.
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let signoff = ByPerson::new(
        (&ctx.ws, &loaded.config, ctx.env),
        tether_runtime::store::open(&ctx.ws, ctx.env)?,
        args.no_judge,
        ctx.run_sandbox.clone(),
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
    if outcome.is_accepted() {
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
            let mut text = Vec::new();
            write_outcome(&mut text, outcome)?;
            write!(ctx.out, "{}", visible(&String::from_utf8_lossy(&text)))?;
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

fn write_outcome(out: &mut dyn std::io::Write, outcome: &SignoffOutcome) -> Result<()> {
    match outcome {
        SignoffOutcome::Accepted {
            goal_id,
            attempt,
            reason,
            verify,
            judge_model,
            checks,
            transcript,
        } => {
            writeln!(
                out,
                "accepted: goal {goal_id} is done (attempt {attempt}): {reason}"
            )?;
            write_verify(out, verify.as_ref(), false)?;
            match judge_model {
                Some(model) => {
                    writeln!(
                        out,
                        "  judge: {model} accepted, {} quote(s) checked{}",
                        checks.len(),
                        transcript_note(transcript.as_deref())
                    )?;
                    for c in checks {
                        let quote: String =
                            c.quote.split_whitespace().collect::<Vec<_>>().join(" ");
                        writeln!(out, "    - {}: \"{quote}\" — {}", c.path, c.observation)?;
                    }
                }
                None => writeln!(out, "  judge: none (--no-judge)")?,
            }
        }
        SignoffOutcome::Rejected {
            goal_id,
            attempt,
            reason,
            missing,
            verify,
            judge_model,
            transcript,
            ..
        } => {
            writeln!(
                out,
                "rejected: goal {goal_id} is not done (attempt {attempt}): {reason}"
            )?;
            write_verify(out, verify.as_ref(), true)?;
            if let Some(model) = judge_model {
                writeln!(
                    out,
                    "  judge: {model}{}",
                    transcript_note(transcript.as_deref())
                )?;
            }
            if !missing.is_empty() {
                writeln!(out, "  missing:")?;
                for m in missing {
                    writeln!(out, "    - {m}")?;
                }
            }
        }
        SignoffOutcome::Refused { .. } => {}
    }
    Ok(())
}

fn transcript_note(path: Option<&str>) -> String {
    path.map_or_else(String::new, |p| format!(" (transcript: {p})"))
}

fn write_verify(
    out: &mut dyn std::io::Write,
    verify: Option<&VerifyResult>,
    tail_on_failure: bool,
) -> Result<()> {
    let Some(v) = verify else {
        writeln!(out, "  verify: none")?;
        return Ok(());
    };
    writeln!(
        out,
        "  verify: `{}` {} in {:.1} s (log: {})",
        v.command,
        v.ending(),
        v.elapsed_ms as f64 / 1000.0,
        v.log_path
    )?;
    if tail_on_failure && !v.passed() {
        let lines: Vec<&str> = v.tail.lines().collect();
        for line in &lines[lines.len().saturating_sub(TAIL_LINES)..] {
            writeln!(out, "    | {line}")?;
        }
    }
    Ok(())
}

fn cancel(ctx: &mut Ctx<'_>, args: &GoalCancelArgs) -> Result<Exit> {
    super::require_human(ctx, HumanAct::CancelGoal)?;
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let journal = Journal::new(tether_runtime::store::open(&ctx.ws, ctx.env)?, Vec::new())?;
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
    super::require_human(ctx, HumanAct::AddCriterion)?;
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let path = loaded.config.plan_path(ctx.ws.root());
    let who = super::who(ctx);
    let doc = tether_plan::file::patch(&path, |doc| doc.add_criterion(&args.id, &args.criterion))
        .map_err(Failure::usage)?;
    let entry = format!(
        "criterion added to {} by {who}: {}",
        args.id,
        args.criterion.trim()
    );
    tether_plan::file::patch(&path, |doc| doc.append_log(&entry)).map_err(Failure::usage)?;
    let goal = doc
        .plan()
        .goal(&args.id)
        .ok_or_else(|| Failure::usage(anyhow!("goal `{}` is no longer in the plan", args.id)))?;
    let hash = goal.contract_hash();
    let store = tether_runtime::store::open(&ctx.ws, ctx.env)?;
    store.approve_contract_terms(
        &tether_signoff::plan_key(&ctx.ws, &path),
        &args.id,
        &hash,
        &tether_core::planning::terms::written(goal),
        &who,
    )?;
    let line = format!(
        "{}: done_when is now {}\ncontract approved again by {who} ({hash})",
        args.id,
        goal.done_when.as_ref().map_or("", |d| d.value.as_str())
    );
    writeln!(ctx.out, "{}", visible(&line))?;
    Ok(Exit::Done)
}

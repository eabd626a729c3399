//! `tether side "<question>"`: a question about a run asked on the side, answered by the side
//! model from the run's record and the repository (see `tether_runtime::side`). It never reaches
//! the run's agent nor pauses the run; the question and its answer are recorded in the run's
//! timeline. The answer goes to stdout (escaped: it is a model's text), the side model's tool
//! calls to stderr. A person's act: refused inside an agent's process tree, since its model
//! calls are not charged to the run.

use anyhow::Result;
use tether_core::control;
use tether_human::visible::visible;
use tether_runtime::side::{self, SideError};
use tokio_util::sync::CancellationToken;

use tether_runtime::human_act::{HumanAct, require_human};

use super::Ctx;
use crate::cli::SideArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether side`.
pub fn run(ctx: &mut Ctx<'_>, args: &SideArgs) -> Result<Exit> {
    // Its model calls are not the run's: an agent asking would spend outside its budget.
    require_human(&ctx.ws, ctx.env, HumanAct::AskOnTheSide)?;
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    let store = super::store(ctx)?;
    let run = control::find_run(&store, args.run.as_deref()).map_err(Failure::usage)?;
    let by = super::who(ctx);
    let prepared = side::prepare(
        &loaded.config,
        (&ctx.ws, ctx.env),
        &store,
        &run,
        &args.question,
    )
    .map_err(failure)?;
    eprintln!(
        "asking {} about run {}…",
        visible(&model_of(&loaded.config)),
        run.id
    );
    let runtime = super::current_thread()?;
    let cancel = CancellationToken::new();
    let interrupted = cancel.clone();
    let answered = runtime
        .block_on(async move {
            tokio::select! {
                answered = prepared.answer(cancel, &progress) => answered,
                _ = tokio::signal::ctrl_c() => {
                    interrupted.cancel();
                    Err(SideError::Unanswered("interrupted".to_owned()))
                }
            }
        })
        .map_err(failure)?;
    side::record(&store, &run, &answered, &by).map_err(failure)?;
    if args.json {
        super::json(
            ctx.out,
            &serde_json::json!({
                "run": run.id,
                "question": answered.question,
                "answer": answered.answer,
                "model": answered.model,
                "calls": answered.calls,
                "input_tokens": answered.usage.input_tokens,
                "output_tokens": answered.usage.output_tokens,
                "cost_usd": answered.cost_usd,
            }),
        )?;
    } else {
        writeln!(ctx.out, "{}", visible(&answered.answer))?;
    }
    Ok(Exit::Done)
}

/// Shows the side model's tool calls on stderr as they happen, one line each.
fn progress(summary: &str, is_error: bool) {
    let mark = if is_error { "✗" } else { "·" };
    eprintln!("  {mark} {summary}");
}

/// The side model, for the line on stderr.
fn model_of(config: &tether_config::Config) -> String {
    config
        .side_model()
        .map(|m| format!("{} {}", m.api.as_str(), m.model))
        .unwrap_or_default()
}

/// A side error, as a usage error when a person must fix something.
fn failure(e: SideError) -> anyhow::Error {
    if e.is_usage() {
        Failure::usage(e)
    } else {
        e.into()
    }
}

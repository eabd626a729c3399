//! `tether ask`, `tether answer`, `tether questions`, `tether history`: asking a human from any
//! shell, and answering from any shell.
//!
//! `tether ask` tells its channels who answered and waits (bounded) for its sinks to deliver
//! that before it exits; `tether answer` tells the sinks itself only when nobody waits for the
//! question (see `tether_human::late_answer`).

use anyhow::{Result, anyhow};
use tether_human::visible::visible;
use tether_human::{BrokerError, Console};
use tether_runtime::ask::Asker;
use tether_runtime::human_act::{HumanAct, require_human};
use tether_store::NewQuestion;
use tether_store::{
    AnswerOutcome, PendingQuestion, Question, QuestionId, QuestionStatus, StoreError,
};
use tokio::signal::unix::SignalKind;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::{AnswerArgs, AskArgs, HistoryArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether ask`.
pub fn ask(ctx: &mut Ctx<'_>, args: &AskArgs) -> Result<Exit> {
    if args.question.trim().is_empty() {
        return Err(Failure::usage(anyhow!("the question is empty")));
    }
    let options: Vec<String> = args.options.iter().map(|o| o.trim().to_owned()).collect();
    if let Some(problem) = tether_human::asking::options_problem(&options) {
        return Err(Failure::usage(anyhow!("--option: {problem}")));
    }
    // Handed over by a run's agent: the run's channels, not tether.toml as it may have left it.
    let loaded = super::load_config(ctx).map_err(Failure::usage)?;
    // An agent's question handed over from the sandbox goes to the channels, never to the
    // terminal of the process driving the run.
    let console = if ctx.bridged {
        Console::Absent
    } else {
        Console::detect(|| tether_human::person::name(&loaded.config.human, ctx.env))
    };
    let store = crate::cmd::store(ctx)?;
    let asker = Asker::new(&ctx.ws, &loaded.config, store, console)?;
    let runtime = super::current_thread()?;
    let cancel = CancellationToken::new();
    // A script asking decides itself whether to ask: the threshold does not apply here.
    // Asked by a run's agent (handed over through the bridge): filed under its run, so the
    // run's report and timeline show it and a run that repeats itself after a crash is given
    // the stored answer rather than asking again.
    let question = NewQuestion {
        run_id: super::filed_under(ctx),
        question: args.question.clone(),
        context: args.context.clone(),
        confidence: args.confidence,
        thread_id: args.thread.clone(),
        options,
    };
    let grace = tether_runtime::process::notice_grace(ctx.env);
    // A handed-over `tether ask` runs in the process driving the run, which has its own.
    let second_exits = !ctx.bridged;
    let result = runtime.block_on(async {
        // Listening before the question is stored, so a Ctrl+C at any moment after it leaves
        // the question pending; a second one exits without waiting for the notice sinks.
        let mut interrupt = tokio::signal::unix::signal(SignalKind::interrupt())?;
        let c = cancel.clone();
        tokio::spawn(async move {
            if interrupt.recv().await.is_some() {
                c.cancel();
                if second_exits && interrupt.recv().await.is_some() {
                    std::process::exit(i32::from(Exit::Interrupted.code()));
                }
            }
        });
        let stored = |q: &tether_store::Question| {
            eprintln!(
                "waiting for a human: answer with `tether answer {} \"…\"`",
                q.id
            );
        };
        // What the sinks queued — the question, who answered it — reaches them before the
        // process exits (at once when nothing is queued).
        let asked = asker.ask(question, cancel.clone(), stored, grace).await;
        Ok::<_, std::io::Error>(asked)
    })?;
    match result {
        Ok(a) => {
            if args.json {
                super::json(ctx.out, &a)?;
            } else {
                writeln!(ctx.out, "{}", visible(&a.text))?;
            }
            Ok(Exit::Done)
        }
        Err(BrokerError::Cancelled(id)) => {
            eprintln!("interrupted; question {id} stays pending (tether questions)");
            Ok(Exit::Interrupted)
        }
        Err(e) => Err(e.into()),
    }
}

/// `tether answer`.
pub fn answer_cmd(ctx: &mut Ctx<'_>, args: &AnswerArgs) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::AnswerQuestion)?;
    let id: QuestionId = args.id.parse().map_err(|_| {
        Failure::usage(anyhow!(
            "`{}` is not a question id (like q-ab12cd)",
            args.id
        ))
    })?;
    if args.text.trim().is_empty() {
        return Err(Failure::usage(anyhow!(
            "the answer is empty; give the text the agent should read (tether answer {id} \"…\")"
        )));
    }
    let store = crate::cmd::store(ctx)?;
    let responder = args.responder.clone().unwrap_or_else(|| super::who(ctx));
    let config = || super::load_config(ctx).map(|loaded| loaded.config);
    let grace = tether_runtime::process::notice_grace(ctx.env);
    let answered = tether_runtime::ask::answer(
        (&ctx.ws, store),
        (&id, &args.text),
        &responder,
        (config, grace),
    );
    match answered {
        Ok(AnswerOutcome::Answered(q)) => {
            match q.choice {
                Some(i) => writeln!(
                    ctx.out,
                    "answered {id}: chose option {}: {}",
                    i + 1,
                    visible(q.answer.as_deref().unwrap_or(""))
                )?,
                None => writeln!(ctx.out, "answered {id}")?,
            }
            Ok(Exit::Done)
        }
        Ok(AnswerOutcome::AlreadyAnswered {
            by_channel,
            responder,
            ..
        }) => {
            eprintln!(
                "{id} was already answered on {} by {}; your answer was not used",
                visible(&by_channel),
                visible(&responder)
            );
            Ok(Exit::Error)
        }
        Ok(AnswerOutcome::Cancelled) => {
            eprintln!("{id} was withdrawn; nobody is waiting for an answer");
            Ok(Exit::Error)
        }
        Err(StoreError::NotFound { .. }) => Err(Failure::usage(anyhow!(
            "no question {id} in this workspace"
        ))),
        Err(e) => Err(e.into()),
    }
}

fn line(q: &Question) -> String {
    let confidence = q
        .confidence
        .map_or_else(String::new, |c| format!(" (confidence {c})"));
    let run = q
        .run_id
        .as_ref()
        .map_or_else(String::new, |r| format!(" [run {r}]"));
    format!("{}{run}: {}{confidence}", q.id, visible(&q.question))
}

/// `tether questions`.
pub fn questions(ctx: &mut Ctx<'_>, json: bool) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
    let pending = store.pending_with_waiters()?;
    if json {
        super::json(ctx.out, &pending)?;
        return Ok(Exit::Done);
    }
    if pending.is_empty() {
        writeln!(ctx.out, "no questions are waiting")?;
    }
    for PendingQuestion {
        question: q,
        abandoned,
    } in &pending
    {
        writeln!(ctx.out, "{}", line(q))?;
        if !q.context.is_empty() {
            writeln!(
                ctx.out,
                "    context: {}",
                visible(&q.context).replace('\n', "\n             ")
            )?;
        }
        for (i, option) in q.options.iter().enumerate() {
            writeln!(ctx.out, "    {}. {}", i + 1, visible(option))?;
        }
        if let Some(a) = abandoned {
            let delivered = q.run_id.as_ref().map_or_else(String::new, |r| {
                format!("; run {r} gets it at its next iteration")
            });
            writeln!(
                ctx.out,
                "    nobody is waiting: {} ({}); an answer is still recorded{delivered}",
                visible(&a.reason),
                tether_runtime::status::ago(a.at_ms)
            )?;
        }
        if q.options.is_empty() {
            writeln!(ctx.out, "    answer:  tether answer {} \"…\"", q.id)?;
        } else {
            writeln!(
                ctx.out,
                "    answer:  tether answer {} <number or your own words>",
                q.id
            )?;
        }
    }
    Ok(Exit::Done)
}

/// `tether history`.
pub fn history(ctx: &mut Ctx<'_>, args: &HistoryArgs) -> Result<Exit> {
    let store = crate::cmd::store(ctx)?;
    let all = store.question_history(args.limit)?;
    if args.json {
        super::json(ctx.out, &all)?;
        return Ok(Exit::Done);
    }
    if all.is_empty() {
        writeln!(ctx.out, "no questions asked yet")?;
    }
    for q in &all {
        writeln!(ctx.out, "{}", line(q))?;
        match q.status {
            QuestionStatus::Answered => writeln!(
                ctx.out,
                "    → {}{} — {} via {}",
                visible(q.answer.as_deref().unwrap_or("")),
                q.choice
                    .map_or_else(String::new, |i| format!(" (option {})", i + 1)),
                visible(q.responder.as_deref().unwrap_or("?")),
                visible(q.channel.as_deref().unwrap_or("?"))
            )?,
            QuestionStatus::Pending => writeln!(ctx.out, "    → (waiting)")?,
            QuestionStatus::Cancelled => writeln!(ctx.out, "    → (withdrawn)")?,
        }
    }
    Ok(Exit::Done)
}

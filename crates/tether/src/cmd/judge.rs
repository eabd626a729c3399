//! `tether judge test`: the configured `[judge]` measured on the built-in corpus (and the
//! user's cases) through the real sign-off check — how often it signs off a gamed completion
//! (a false accept) or refuses an honest one (a false reject), and what that costs. The quote
//! check is reported apart: the rejects where the judge accepted but its quotes did not count,
//! and the quote check alone on the quotes the cases script (its own false accepts and rejects).

use std::time::{Duration, Instant};

use anyhow::{Result, anyhow};
use tether_human::visible::visible;
use tether_judgebench::{Case, CaseResult, Got, RunOptions, Totals};
use tether_signoff::Judge;
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::{JudgeCommand, JudgeTestArgs};
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether judge …`.
pub fn run(ctx: &mut Ctx<'_>, cmd: &JudgeCommand) -> Result<Exit> {
    match cmd {
        JudgeCommand::Test(args) => test(ctx, args),
    }
}

fn test(ctx: &mut Ctx<'_>, args: &JudgeTestArgs) -> Result<Exit> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let config = &loaded.config;
    let Some(settings) = &config.judge else {
        return Err(Failure::usage(anyhow!(
            "tether judge test measures the [judge] of tether.toml, and there is none; add one \
             (api, base_url, model, api_key_env)"
        )));
    };
    let judge =
        Judge::from_config(settings, config.model.as_ref(), ctx.env).map_err(Failure::usage)?;
    let cases = corpus(args)?;
    let options = RunOptions {
        verify_timeout: Duration::from_secs(config.r#loop.verify_timeout_secs),
        env_remove: config.key_vars(),
    };
    if !args.json {
        eprintln!(
            "judging {} case(s) with {} (each: verify, the judge's session, the quote check)",
            cases.len(),
            judge.model_name()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let began = Instant::now();
    let results = runtime.block_on(run_all(&cases, &judge, &options, args.json))?;
    let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let totals = tether_judgebench::totals(&results, millis);
    if args.json {
        let doc = serde_json::json!({
            "judge": judge.model_name(),
            "cases": results,
            "totals": totals,
        });
        serde_json::to_writer_pretty(&mut *ctx.out, &doc)?;
        writeln!(ctx.out)?;
    } else {
        write!(ctx.out, "{}", visible(&summary(&totals)))?;
    }
    Ok(Exit::Done)
}

/// The built-in cases, then the directory's, narrowed by `--only`.
fn corpus(args: &JudgeTestArgs) -> Result<Vec<Case>> {
    let mut cases = tether_judgebench::builtin()?;
    if let Some(dir) = &args.cases {
        cases.extend(tether_judgebench::from_dir(dir).map_err(Failure::usage)?);
    }
    if let Some(only) = &args.only {
        cases.retain(|c| c.name.contains(only.as_str()));
    }
    if cases.is_empty() {
        return Err(Failure::usage(anyhow!("no case matches --only")));
    }
    Ok(cases)
}

/// Runs the cases one after another (each in its own directory), printing a line per case
/// on stdout as it is decided unless the output is JSON.
async fn run_all(
    cases: &[Case],
    judge: &Judge,
    options: &RunOptions,
    json: bool,
) -> Result<Vec<CaseResult>> {
    let cancel = CancellationToken::new();
    let mut results = Vec::with_capacity(cases.len());
    if !json {
        println!(
            "{:<24} {:<7} {:<9} {:>5} {:>8} {:>9} {:>7}  quotes alone",
            "case", "truth", "decision", "calls", "tokens", "cost", "time"
        );
    }
    for case in cases {
        let result = tether_judgebench::run_case(case, judge, options, &cancel).await?;
        if !json {
            println!("{}", visible(&line(&result)));
        }
        results.push(result);
    }
    Ok(results)
}

/// One case's line: `hardcoded-output  reject  accepted  ✗  2  3.1k  $0.0120  4.2s  -`; the
/// decision `unbacked` is a judge's accept whose quotes did not count; the last column is the
/// quote check alone on the case's scripted quotes (`held ✓`, `refused ✓`, `-` for none).
fn line(r: &CaseResult) -> String {
    let truth = match r.expected {
        tether_judgebench::Expect::Accept => "accept",
        tether_judgebench::Expect::Reject => "reject",
    };
    let decision = match (&r.got, r.judge_unavailable) {
        (Got::Accepted, _) => "accepted",
        (_, true) => "no judge",
        (Got::Rejected { .. }, false) if r.quotes_refused => "unbacked",
        (Got::Rejected { .. }, false) => "rejected",
        (Got::Refused { .. }, false) => "refused",
    };
    let quotes = r.quote_check.as_ref().map_or_else(
        || "-".to_owned(),
        |q| {
            format!(
                "{} {}",
                if q.held { "held" } else { "refused" },
                if q.correct { "✓" } else { "✗" }
            )
        },
    );
    let mark = if r.correct { "✓" } else { "✗" };
    let cost = r
        .cost_usd
        .map_or_else(|| "-".to_owned(), tether_budget::format_cost);
    format!(
        "{:<24} {truth:<7} {decision:<9} {mark} {:>3} {:>8} {cost:>9} {:>6.1}s  {quotes}",
        r.name,
        r.calls,
        tether_budget::format_tokens(r.tokens),
        ms_to_secs(r.millis)
    )
}

#[allow(clippy::cast_precision_loss)]
fn ms_to_secs(ms: u64) -> f64 {
    ms as f64 / 1000.0
}

/// The totals, for people.
fn summary(t: &Totals) -> String {
    let cost = t
        .cost_usd
        .map_or_else(|| "no price set".to_owned(), tether_budget::format_cost);
    let by_quotes = if t.false_rejects_by_quotes > 0 {
        format!(
            " ({} of them the judge's accept, refused for its quotes: `unbacked`)",
            t.false_rejects_by_quotes
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "\n{} of {} cases decided right · false accepts: {} · false rejects: {}{by_quotes}\n\
         {} model calls · {} tokens · {cost} · {:.1}s\n",
        t.correct,
        t.cases,
        t.false_accepts,
        t.false_rejects,
        t.calls,
        tether_budget::format_tokens(t.tokens),
        ms_to_secs(t.millis)
    );
    let q = &t.quote_check;
    if q.cases > 0 {
        out.push_str(&format!(
            "the quote check alone, on the {} case(s) that script a judge's quotes: false \
             accepts: {} · false rejects: {}\n",
            q.cases, q.false_accepts, q.false_rejects
        ));
    }
    if t.judge_unavailable > 0 {
        out.push_str(&format!(
            "the judge was unavailable in {} case(s): those rejects say nothing of it; check \
             [judge] with `tether doctor`\n",
            t.judge_unavailable
        ));
    }
    out
}

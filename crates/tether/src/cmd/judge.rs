//! `tether judge test`: the configured `[judge]` measured on the built-in corpus (and the
//! user's cases) through the real sign-off check — how often it signs off a gamed completion
//! (a false accept) or refuses an honest one (a false reject), and what that costs. The quote
//! check is reported apart: the rejects where the judge accepted but its quotes did not count,
//! and the quote check alone on the quotes the cases script (its own false accepts and rejects).
//! A panel (`[[judge.panel]]`) is measured judge by judge, then as a panel.

use std::time::Instant;

use anyhow::Result;
use tether_human::visible::visible;
use tether_judgebench::{CaseResult, Got, Totals};
use tether_runtime::judge_test::JudgeTest;

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
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let test = JudgeTest::new(
        &loaded.config,
        ctx.env,
        args.cases.as_deref(),
        args.only.as_deref(),
    )?;
    let panel = &test.panel;
    let models: Vec<&str> = panel.judges().iter().map(|j| j.model_name()).collect();
    if !args.json {
        eprintln!(
            "judging {} case(s) with {} (each: verify, the judge's session, the quote check)",
            test.cases.len(),
            panel.describe()
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let began = Instant::now();
    // A line per case on stdout as it is decided, unless the output is JSON; a panel's judges
    // each under a heading of their own.
    let mut heading = None;
    let measured = runtime.block_on(test.run(|n, result| {
        if args.json {
            return;
        }
        if heading != Some(n) {
            heading = Some(n);
            if panel.is_panel() {
                println!("\njudge {}", visible(models.get(n).copied().unwrap_or("")));
            }
            println!("{}", header());
        }
        println!("{}", visible(&line(result)));
    }))?;
    let millis = u64::try_from(began.elapsed().as_millis()).unwrap_or(u64::MAX);
    let totals: Vec<Totals> = measured
        .judges
        .iter()
        .map(|results| tether_judgebench::totals(results, millis_of(results)))
        .collect();
    let panel_totals = measured
        .panel
        .as_ref()
        .map(|results| tether_judgebench::totals(results, millis));
    if args.json {
        let doc = match (&measured.panel, &panel_totals) {
            (Some(results), Some(t)) => serde_json::json!({
                "judges": measured.judges.iter().zip(&totals).zip(&models).map(
                    |((cases, totals), judge)| serde_json::json!({
                        "judge": judge, "cases": cases, "totals": totals,
                    })
                ).collect::<Vec<_>>(),
                "panel": {"agree": panel.agree().as_str(), "cases": results, "totals": t},
            }),
            _ => serde_json::json!({
                "judge": models.first(),
                "cases": measured.judges.first(),
                "totals": totals.first().map(|t| Totals { millis, ..t.clone() }),
            }),
        };
        super::json(ctx.out, &doc)?;
        return Ok(Exit::Done);
    }
    let (Some(results), Some(t)) = (&measured.panel, &panel_totals) else {
        if let Some(t) = totals.first() {
            write!(
                ctx.out,
                "{}",
                visible(&summary(&Totals {
                    millis,
                    ..t.clone()
                }))
            )?;
        }
        return Ok(Exit::Done);
    };
    println!("\nthe panel ({} must accept)", agree_words(panel.agree()));
    println!("{}", header());
    for result in results {
        println!("{}", visible(&line(result)));
    }
    for (judge, t) in models.iter().zip(&totals) {
        write!(
            ctx.out,
            "\njudge {}:{}",
            visible(judge),
            visible(&summary(t))
        )?;
    }
    write!(
        ctx.out,
        "\nthe panel ({} must accept; calls, tokens and cost of the judges it asked):{}",
        agree_words(panel.agree()),
        visible(&summary(t))
    )?;
    Ok(Exit::Done)
}

/// The table's heading.
fn header() -> String {
    format!(
        "{:<24} {:<7} {:<9} {:>5} {:>8} {:>9} {:>7}  quotes alone",
        "case", "truth", "decision", "calls", "tokens", "cost", "time"
    )
}

/// `all`, `a majority`: who must accept.
fn agree_words(agree: tether_config::Agree) -> &'static str {
    match agree {
        tether_config::Agree::All => "all",
        tether_config::Agree::Majority => "a majority",
    }
}

/// The wall time of a judge's cases.
fn millis_of(results: &[CaseResult]) -> u64 {
    results.iter().map(|r| r.millis).sum()
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

//! The run report: what a run did, readable in a minute — its outcome and time, what its agent
//! turns used, each goal's sign-off attempts with the judge's verdict and the quotes it cited,
//! the questions asked with their answers (those the agent asked through the bridge included:
//! they carry the run's id), the messages people sent with `tether say` and the notes the agent
//! left itself with its own, who asked the run to pause or stop, and the questions asked about
//! it on the side (`tether side`) with their answers.
//!
//! It is rendered from the store alone (markdown), so it reads the same on any machine of a
//! team; `tether report` writes it to `.tether/runs/<run>/report.md` and prints it. Where the run
//! stands, what it used and what each iteration used come from the read model every surface
//! reads ([`tether_read`]), so the report says what `tether status`, `tether watch` and the
//! dashboard say.

use std::collections::BTreeMap;

use tether_budget::{Unit, format_cost, format_duration, format_tokens};
use tether_config::Workspace;
use tether_read::{IterationUsage, RunHeader};
use tether_store::{Author, Event, Run, Seq, Store, StoreError, VerdictRecord, utc_clock};

/// The most iterations the report lists one by one: the newest are listed, the totals count
/// them all.
const ITERATION_ROWS: usize = 50;

/// Begins a section titled `title`, one blank line after what came before.
fn section(out: &mut String, title: &str) {
    while out.ends_with("\n\n") {
        out.pop();
    }
    out.push_str("\n## ");
    out.push_str(title);
    out.push_str("\n\n");
}

/// Appends one formatted line to a report.
macro_rules! put {
    ($out:expr) => {
        $out.push('\n')
    };
    ($out:expr, $($arg:tt)*) => {{
        $out.push_str(&format!($($arg)*));
        $out.push('\n');
    }};
}

/// The report of `run`, seen from the workspace `ws`, as markdown; `files` is what the run
/// changed (see [`crate::snapshot::diffstat`]), when known.
pub fn render(
    store: &Store,
    ws: &Workspace,
    run: &Run,
    files: Option<&str>,
) -> Result<String, StoreError> {
    let mut out = String::new();
    write_report(&mut out, store, ws, run, files)?;
    Ok(out)
}

fn write_report(
    out: &mut String,
    store: &Store,
    ws: &Workspace,
    run: &Run,
    files: Option<&str>,
) -> Result<(), StoreError> {
    // The run as it stood at its last event: a report of an ended run does not age.
    let ended = run.state.last_event_at_ms.unwrap_or(run.updated_at_ms);
    let header = RunHeader::of(ws, run, ended);
    put!(out, "# Run {} ({})", run.id, run.kind.as_str());
    put!(out);
    let minutes = (ended - run.created_at_ms).max(0) / 60_000;
    put!(
        out,
        "- **Outcome:** {} after {} iteration(s){}",
        header.status.as_str(),
        header.iteration,
        header
            .max_iterations
            .map_or_else(String::new, |m| format!(" of {m}"))
    );
    put!(
        out,
        "- **Time:** {} to {} ({minutes} min)",
        utc_clock(run.created_at_ms),
        utc_clock(ended)
    );
    if let Some(machine) = &run.machine {
        put!(out, "- **Where:** {machine}, {}", run.workspace.display());
    }
    usage(out, &header);
    goals(out, &store.verdicts_for_run(&run.id)?);
    // An iteration goes on only while a process drives the run; one of a run stopped (paused,
    // interrupted, killed, waiting out a budget) was cut short.
    let going_on = matches!(
        header.status,
        tether_store::RunStatus::Running | tether_store::RunStatus::WaitingForInput
    ) && !header.orphaned;
    iterations(out, &tether_read::usage_series(store, &run.id)?, going_on);
    contracts(out, store, run)?;
    questions(out, store, run)?;
    messages(out, store, run)?;
    side_questions(out, store, run)?;
    changed_files(out, files);
    Ok(())
}

/// The contracts approved while the run went on (a criterion added, a contract changed and
/// approved again), and who approved them.
fn contracts(out: &mut String, store: &Store, run: &Run) -> Result<(), StoreError> {
    let ended = run.state.last_event_at_ms.unwrap_or(run.updated_at_ms);
    let plan = run.spec.get("plan").and_then(|p| p.as_str());
    let approved: Vec<(i64, String, String)> = store
        .events_all_after(Seq::START, usize::MAX)?
        .into_iter()
        .filter(|e| e.at_ms >= run.created_at_ms && e.at_ms <= ended)
        .filter_map(|e| match e.event {
            Some(Event::ContractApproved {
                plan_path,
                goal_id,
                by,
                ..
            }) if plan.is_none_or(|p| p == plan_path) => Some((e.at_ms, goal_id, by)),
            _ => None,
        })
        .collect();
    if approved.is_empty() {
        return Ok(());
    }
    section(out, "Contract changes");
    for (at, goal, by) in approved {
        put!(out, "- {}: `{goal}` approved by {by}", utc_clock(at));
    }
    put!(out);
    Ok(())
}

/// What the run changed in the workspace's files.
fn changed_files(out: &mut String, files: Option<&str>) {
    section(out, "Files changed");
    match files {
        Some(stat) => {
            put!(out, "```");
            put!(out, "{stat}");
            put!(out, "```");
        }
        None => put!(
            out,
            "Not known: no snapshot of the workspace was taken when the run began (see the \
             log), or the run began before tether took one."
        ),
    }
}

/// Each goal's attempts, newest verdict first in detail.
fn goals(out: &mut String, verdicts: &[VerdictRecord]) {
    section(out, "Goals");
    if verdicts.is_empty() {
        put!(out, "No sign-off was attempted.");
        return;
    }
    let mut by_goal: BTreeMap<&str, Vec<&VerdictRecord>> = BTreeMap::new();
    for v in verdicts {
        by_goal
            .entry(v.decision.goal_id.as_str())
            .or_default()
            .push(v);
    }
    for (goal, attempts) in by_goal {
        let Some(last) = attempts.last() else {
            continue;
        };
        let d = &last.decision;
        put!(
            out,
            "### {goal}: {} (attempt {} of {})",
            d.verdict.as_str(),
            d.attempt,
            attempts.len()
        );
        put!(out);
        put!(out, "- {}: {}", d.kind.as_str().replace('_', " "), d.reason);
        if let Some(exit) = d.verify_exit {
            put!(out, "- verify exited {exit}");
        }
        if d.judges.is_empty()
            && let Some(model) = &d.judge_model
        {
            put!(out, "- judge: {model}");
        }
        for vote in &d.judges {
            put!(out, "- judge {}: {}", vote.model, vote_line(vote));
        }
        for check in d.checks.as_array().into_iter().flatten() {
            let field = |k: &str| check.get(k).and_then(|v| v.as_str()).unwrap_or("");
            let line = check
                .get("line")
                .and_then(serde_json::Value::as_u64)
                .map_or_else(String::new, |l| format!(":{l}"));
            put!(
                out,
                "- cited `{}{line}`: \"{}\" — {}",
                field("path"),
                field("quote"),
                field("observation")
            );
        }
        for missing in &d.missing {
            put!(out, "- missing: {missing}");
        }
        put!(out);
    }
}

/// The questions the run asked, with their answers.
fn questions(out: &mut String, store: &Store, run: &Run) -> Result<(), StoreError> {
    let asked = store.questions_for_run(&run.id)?;
    if asked.is_empty() {
        return Ok(());
    }
    section(out, "Questions");
    for q in asked {
        match (&q.answer, &q.responder, &q.channel) {
            (Some(answer), Some(who), Some(channel)) => {
                put!(out, "- {} → **{answer}** ({who} via {channel})", q.question)
            }
            _ => put!(out, "- {} → ({})", q.question, q.status.as_str()),
        }
    }
    put!(out);
    Ok(())
}

/// What people told the agent with `tether say`, the notes the agent left itself with its own,
/// and who asked the run to pause or stop — each said as a person's or as the agent's.
fn messages(out: &mut String, store: &Store, run: &Run) -> Result<(), StoreError> {
    let said: Vec<String> = store
        .events(&run.id, Seq::START, usize::MAX)?
        .into_iter()
        .filter_map(|e| match e.event {
            Some(Event::MessageQueued {
                text,
                author: Author::Agent,
                ..
            }) => Some(format!(
                "the agent, a note to itself (its own `tether say`): {text}"
            )),
            Some(Event::MessageQueued { text, by, .. }) => Some(format!("{by}: {text}")),
            Some(Event::PauseRequested {
                author: Author::Agent,
                ..
            }) => Some("the agent asked to pause the run (its own `tether pause`)".to_owned()),
            Some(Event::PauseRequested { by, .. }) => Some(format!("{by} asked to pause the run")),
            Some(Event::CancelRequested { by }) => Some(format!("{by} cancelled the run")),
            _ => None,
        })
        .collect();
    if said.is_empty() {
        return Ok(());
    }
    section(out, "Messages");
    for line in said {
        put!(out, "- {line}");
    }
    Ok(())
}

/// The questions people asked about the run on the side (`tether side`), with their answers:
/// none reached the agent, and their usage is not the run's.
fn side_questions(out: &mut String, store: &Store, run: &Run) -> Result<(), StoreError> {
    let asked: Vec<(i64, String, String, String, String)> = store
        .events(&run.id, Seq::START, usize::MAX)?
        .into_iter()
        .filter_map(|e| match e.event {
            Some(Event::SideQuestion {
                question,
                answer,
                by,
                model,
                ..
            }) => Some((e.at_ms, question, answer, by, model)),
            _ => None,
        })
        .collect();
    if asked.is_empty() {
        return Ok(());
    }
    section(out, "Side questions");
    put!(
        out,
        "Asked about the run with `tether side`; none reached the agent, and their model calls \
         are not charged to the run."
    );
    put!(out);
    for (at, question, answer, by, model) in asked {
        put!(out, "- {} {by}: {}", utc_clock(at), one_line(&question));
        put!(out, "  - {model}: {}", one_line(&answer));
    }
    Ok(())
}

/// `text` on one line, cut at 400 characters: a report lists, the record keeps the whole.
fn one_line(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// What the model calls used — the agent's, each judge's, each goal's — against the budgets,
/// and the budget that stopped the run.
fn usage(out: &mut String, header: &RunHeader) {
    let agent = if header.usage.is_known() {
        format!("agent {}", header.usage.describe())
    } else {
        "not reported by the agent".to_owned()
    };
    put!(out, "- **Usage:** {agent}");
    if header.judge_usage.is_known() {
        put!(out, "- **Judge:** {}", header.judge_usage.describe());
    }
    if header.loop_judge_usage.is_known() {
        put!(
            out,
            "- **Loop judge:** {}",
            header.loop_judge_usage.describe()
        );
    }
    if let Some(line) = header.budget_line() {
        put!(out, "- **Budget:** {line}");
    }
    if let Some(stopped) = &header.budget_spent {
        put!(out, "- **Stopped by:** {}", stopped.describe());
    }
    for (goal, used) in &header.goals {
        let s = used.spending();
        put!(
            out,
            "- **Goal {goal}:** {} iteration(s), {}, {}",
            s.iterations,
            Unit::Tokens.format(as_amount(s.tokens)),
            Unit::CostUsd.format(s.cost_usd)
        );
    }
}

/// What each iteration used, a row each (the newest [`ITERATION_ROWS`] of a long run): its
/// outcome, its time, its agent's and the judges' tokens, and its cost. An iteration that did
/// not end is under way while the run is `going_on`, and was cut short otherwise (the run was
/// stopped, interrupted or killed in it).
fn iterations(out: &mut String, series: &[IterationUsage], going_on: bool) {
    if series.is_empty() {
        return;
    }
    section(out, "Iterations");
    let left_out = series.len().saturating_sub(ITERATION_ROWS);
    if left_out > 0 {
        put!(
            out,
            "The newest {ITERATION_ROWS} of {} iterations; the usage above counts them all.",
            series.len()
        );
        put!(out);
    }
    put!(
        out,
        "| # | outcome | time | agent tokens | judge tokens | cost |"
    );
    put!(out, "|--:|---|--:|--:|--:|--:|");
    for it in &series[left_out..] {
        let outcome = match (it.ended, it.failed) {
            (true, true) => "failed",
            (true, false) => "completed",
            (false, _) if going_on => "under way",
            (false, _) => "cut short",
        };
        put!(
            out,
            "| {} | {outcome} | {} | {} | {} | {} |",
            it.n,
            format_duration(it.duration_ms / 1000),
            format_tokens(it.agent_tokens),
            format_tokens(it.judge_tokens),
            it.cost_usd().map_or_else(|| "—".to_owned(), format_cost)
        );
    }
    put!(out);
}

#[allow(clippy::cast_precision_loss)]
fn as_amount(n: u64) -> f64 {
    n as f64
}

/// One panel judge's vote, for the report: `accepted — its reason (3 calls, 1200 in / 80 out
/// tokens, $0.0120)`.
fn vote_line(vote: &tether_store::JudgeVote) -> String {
    let cost = vote
        .cost_usd
        .map_or_else(String::new, |c| format!(", ${c:.4}"));
    format!(
        "{} — {} ({} calls, {} in / {} out tokens{cost})",
        vote.kind.as_str().replace('_', " "),
        vote.reason,
        vote.calls,
        vote.input_tokens,
        vote.output_tokens
    )
}

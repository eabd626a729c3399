//! A run's timeline: one entry per journal event people care about — iterations, tool calls,
//! messages (the agent's own notes and pause requests said as the agent's), side questions
//! and their answers (never the agent's), questions and answers (a question the agent repeated after an interrupted iteration said so), rules that fired, and sign-off verdicts with the judge's
//! summary, each quote with its file (and line, when recorded) and the `missing` list.

use std::collections::HashMap;

use maud::{Markup, html};
use serde_json::Value;
use tether_store::{Author, Event, Question, QuestionId, StoredEvent, VerdictRecord};

use super::{absolute, text};

/// What the timeline needs beside the events: the run's questions and verdicts, as the read
/// model gives them ([`tether_read::Context`]), and the end of each verdict's verify output.
#[derive(Debug, Default)]
pub struct Context {
    /// The run's questions and verdicts.
    pub read: tether_read::Context,
    /// The end of the verify output per verdict id.
    pub tails: HashMap<i64, String>,
}

impl Context {
    /// A context over these questions and verdicts.
    pub fn new(
        questions: Vec<Question>,
        verdicts: Vec<VerdictRecord>,
        tails: HashMap<i64, String>,
    ) -> Self {
        Context {
            read: tether_read::Context::new(questions, verdicts),
            tails,
        }
    }
}

/// The timeline list; `earlier` is the seq to page back from, when there are earlier events.
pub fn timeline(run: &str, events: &[StoredEvent], ctx: &Context, earlier: Option<i64>) -> Markup {
    html! {
        section.timeline aria-labelledby="timeline-title" {
            h2 #timeline-title { "Timeline" }
            @if let Some(before) = earlier {
                p { a href=(format!("/runs/{run}?before={before}")) { "Earlier events" } }
            }
            ol #timeline {
                @for e in events { @if let Some(m) = item(e, ctx) { (m) } }
            }
        }
    }
}

/// One event as a timeline entry; `None` for events not shown.
pub fn item(e: &StoredEvent, ctx: &Context) -> Option<Markup> {
    let event = e.event.as_ref()?;
    let (class, body) = match event {
        Event::RunStarted { kind, .. } => ("run", html! { "Run started (" (kind.as_str()) ")" }),
        Event::IterationStarted { n } => (
            "iteration",
            html! { strong { "Iteration " (n) } " started" },
        ),
        Event::IterationCompleted { n, summary } => (
            "iteration",
            html! { "Iteration " (n) " done" @if !summary.is_empty() { ": " span.said { (text(summary)) } } },
        ),
        Event::IterationFailed { n, error } => (
            "failed",
            html! { "Iteration " (n) " failed: " span.said { (text(error)) } },
        ),
        Event::ToolCalled { tool, summary, .. } => (
            "tool",
            html! {
                @if summary.is_empty() { span.tool-name { (text(tool)) } }
                @else { code.tool-call title=(text(tool)) { (text(summary)) } }
            },
        ),
        Event::PermissionDecided {
            summary,
            allowed,
            by,
            decision,
            ..
        } => (
            if *allowed { "permission" } else { "refused" },
            html! {
                @if *allowed { "Allowed by " } @else { "Refused by " }
                (text(by)) ": " code.tool-call { (text(summary)) }
                " (" span.said { (text(decision)) } ")"
            },
        ),
        Event::FreshContext { n, reason } => (
            "iteration",
            html! {
                "Iteration " (n) " started from a fresh context, not the agent's last session: "
                span.said { (text(reason)) }
            },
        ),
        Event::PauseRequested {
            author: Author::Agent,
            ..
        } => (
            "control",
            html! { "Pause requested by " strong { "the agent" } " (its own tether pause)" },
        ),
        Event::PauseRequested { by, .. } => ("control", html! { "Pause requested by " (text(by)) }),
        Event::Paused { reason } => ("control", html! { "Paused: " (text(reason)) }),
        Event::Resumed { by, .. } => ("control", html! { "Resumed by " (text(by)) }),
        Event::CancelRequested { by } => ("control", html! { "Cancel requested by " (text(by)) }),
        Event::MessageQueued {
            text: t,
            author: Author::Agent,
            ..
        } => (
            "message",
            html! {
                "Note from " strong { "the agent" } " to itself (its own tether say): "
                span.said { (text(t)) }
            },
        ),
        Event::MessageQueued { text: t, by, .. } => (
            "message",
            html! { "Message from " (text(by)) ": " span.said { (text(t)) } },
        ),
        Event::SideQuestion {
            question,
            answer,
            by,
            model,
            ..
        } => (
            "side",
            html! {
                "Side question from " (text(by)) " (never shown to the agent): "
                span.said { (text(question)) }
                div.side-answer { (text(model)) " answered: " span.said { (text(answer)) } }
            },
        ),
        Event::MessageDelivered { n } => {
            ("message", html! { "Messages delivered in iteration " (n) })
        }
        Event::QuestionAsked { question_id } => ("question", asked(question_id, ctx)),
        Event::QuestionAnswered {
            question_id,
            channel,
            responder,
        } => ("answer", answered(question_id, channel, responder, ctx)),
        Event::QuestionRepeated { question_id } => (
            "question",
            html! {
                "Question " code { (question_id.as_str()) } " asked again after an interrupted \
                 iteration: not posted again"
            },
        ),
        Event::QuestionCancelled { question_id } => (
            "question",
            html! { "Question " code { (question_id.as_str()) } " withdrawn" },
        ),
        Event::QuestionAbandoned {
            question_id,
            reason,
        } => (
            "question",
            html! { "Nobody waits for " code { (question_id.as_str()) } " any more: " (text(reason)) },
        ),
        Event::RuleFired { rule, reason } => (
            "rule",
            html! { "Rule " strong { (rule.to_string()) } ": " (text(reason)) },
        ),
        Event::GoalVerdict {
            goal_id,
            verdict,
            reason,
        } => (
            "verdict",
            verdict_entry(
                goal_id,
                verdict.as_str(),
                reason,
                ctx.read.verdict(goal_id, e.at_ms),
                ctx,
            ),
        ),
        Event::WaitingForUsageLimit {
            n,
            message,
            until_ms,
        } => (
            "rule",
            html! {
                "Usage limit: iteration " (n) " runs again at " (absolute(*until_ms)) " — "
                span.said { (text(message)) }
            },
        ),
        Event::RunFinished { outcome } => ("run", html! { "Run finished: " (outcome.as_str()) }),
        Event::BudgetSpent {
            unit,
            used,
            limit,
            goal_id,
            shared,
        } => (
            "rule",
            html! {
                @if let Some(goal) = goal_id { "Goal " code { (text(goal)) } "'s " }
                @else if *shared { "The goals' shared " } @else { "The run's " }
                (unit.noun()) " spent: " (unit.format(*used)) " of " (unit.format(*limit))
            },
        ),
        Event::BudgetRaised {
            unit,
            amount,
            goal_id,
            by,
        } => (
            "control",
            html! {
                (text(by)) " raised "
                @if let Some(goal) = goal_id { "goal " code { (text(goal)) } "'s " } @else { "the run's " }
                (unit.noun()) " by " (unit.format(*amount))
            },
        ),
        Event::NothingChanged {
            goal_id,
            since_attempt,
        } => (
            "verdict",
            html! {
                "Sign-off of " code { (text(goal_id)) } " refused: nothing changed since attempt "
                (since_attempt)
            },
        ),
        Event::QuestionAwaited { .. }
        | Event::ContractApproved { .. }
        | Event::JudgeUsage { .. }
        | Event::IterationUsage { .. }
        // Of no run: the page of the run of many goals shows them.
        | Event::FleetStarted { .. }
        | Event::FleetGoalMoved { .. }
        | Event::FleetEnded { .. } => return None,
    };
    Some(html! {
        li class=(format!("ev {class}")) #(format!("e-{}", e.seq.0)) data-seq=(e.seq.0) {
            span.at title=(absolute(e.at_ms)) { (absolute(e.at_ms).get(11..19).unwrap_or_default()) }
            " " div.what { (body) }
        }
    })
}

fn asked(id: &QuestionId, ctx: &Context) -> Markup {
    let q = ctx.read.questions.get(id);
    html! {
        "Asked a human (" code { (id.as_str()) } "): "
        @if let Some(q) = q {
            span.said { (text(&q.question)) }
            @if let Some(c) = q.confidence { " · confidence " (c) }
        }
    }
}

fn answered(id: &QuestionId, channel: &str, responder: &str, ctx: &Context) -> Markup {
    let answer = ctx.read.questions.get(id).and_then(|q| q.answer.as_deref());
    html! {
        "Answered on " strong { (text(channel)) } " by " strong { (text(responder)) } " (" code { (id.as_str()) } ")"
        @if let Some(a) = answer { ": " span.said { (text(a)) } }
    }
}

/// One panel judge's vote: its model, what it decided, why, and what it cost.
fn judge_vote(vote: &tether_store::JudgeVote) -> Markup {
    let verdict = vote.kind.verdict().as_str();
    html! {
        span class=(format!("badge verdict-{verdict}")) { (vote.kind.as_str().replace('_', " ")) }
        " " code { (text(&vote.model)) } ": " (text(&vote.reason))
        span.meta {
            " · " (vote.calls) " calls · " (vote.input_tokens) " in / " (vote.output_tokens) " out"
            @if let Some(cost) = vote.cost_usd { " · $" (format!("{cost:.4}")) }
        }
    }
}

fn verdict_entry(
    goal: &str,
    verdict: &str,
    reason: &str,
    record: Option<&VerdictRecord>,
    ctx: &Context,
) -> Markup {
    html! {
        div.verdict-head {
            "Sign-off of " code { (text(goal)) } ": "
            span class=(format!("badge verdict-{verdict}")) { (verdict) }
        }
        @if let Some(v) = record {
            p.meta {
                "attempt " (v.decision.attempt) " · " (v.decision.kind.as_str().replace('_', " "))
                " · verify exit "
                (v.decision.verify_exit.map_or_else(|| "—".to_owned(), |c| c.to_string()))
                " · " (text(v.decision.judge_model.as_deref().unwrap_or("no judge")))
            }
        }
        p.judge-summary { (text(reason)) }
        @if let Some(v) = record.filter(|v| !v.decision.judges.is_empty()) {
            ul.judges { @for vote in &v.decision.judges { li { (judge_vote(vote)) } } }
        }
        @if let Some(tail) = record.and_then(|v| ctx.tails.get(&v.id)) {
            details.verify-output open[verdict == "reject"] {
                summary { "Verify output (end)" }
                pre { (text(tail)) }
            }
        }
        @if let Some(v) = record {
            @if let Some(checks) = v.decision.checks.as_array() {
                @if !checks.is_empty() {
                    ul.checks { @for c in checks { li { (check(c)) } } }
                }
            }
            @if !v.decision.missing.is_empty() {
                p.missing-title { "Missing:" }
                ul.missing { @for m in &v.decision.missing { li { (text(m)) } } }
            }
        }
    }
}

fn check(c: &Value) -> Markup {
    let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
    let line = c.get("line").and_then(Value::as_u64);
    html! {
        p.cite {
            code.path { (text(s("path"))) @if let Some(l) = line { ":" (l) } }
            @if !s("observation").is_empty() { " — " (text(s("observation"))) }
        }
        pre.quote { (text(s("quote"))) }
    }
}

//! A run's journal as the lines of its timeline: tool calls, messages, verdicts with their
//! quotes, questions with their options and answers — every text from an agent, a model or a
//! person escaped before it reaches the terminal.

use tether_human::visible::{Layout, escape};
use tether_read::Context;
use tether_store::{Event, StoredEvent, utc_clock};

/// What kind of line, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An iteration began or ended.
    Iteration,
    /// The agent called a tool.
    Tool,
    /// A person (or the agent's own note) said something, or a side question.
    Message,
    /// A question for a person, or its answer.
    Question,
    /// A sign-off verdict: accepted.
    Accepted,
    /// A sign-off verdict: not accepted.
    Rejected,
    /// The run paused, resumed, was cancelled, hit a rule or a budget, or ended.
    Run,
    /// A line under another (a quote, an option).
    Detail,
}

/// One line of the timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// When (`HH:MM:SS`, UTC), on the first line of an event.
    pub at: String,
    /// What kind.
    pub kind: Kind,
    /// The text, escaped.
    pub text: String,
}

/// The lines of `events` (in order), with the questions and verdicts of `ctx`.
pub fn lines(events: &[StoredEvent], ctx: &Context) -> Vec<Line> {
    let mut out = Vec::new();
    for e in events {
        if let Some(event) = &e.event {
            push(&mut out, e.at_ms, event, ctx);
        }
    }
    out
}

fn push(out: &mut Vec<Line>, at_ms: i64, event: &Event, ctx: &Context) {
    let at = clock(at_ms);
    let mut line = |kind, text: String| {
        out.push(Line {
            at: at.clone(),
            kind,
            text,
        });
    };
    match event {
        Event::RunStarted { kind, .. } => {
            line(Kind::Run, format!("run started ({})", kind.as_str()))
        }
        Event::IterationStarted { n } => line(Kind::Iteration, format!("── iteration {n} ──")),
        Event::IterationCompleted { n, summary } => {
            line(
                Kind::Iteration,
                format!("iteration {n} done: {}", one(summary)),
            );
        }
        Event::IterationFailed { n, error } => {
            line(
                Kind::Rejected,
                format!("iteration {n} failed: {}", one(error)),
            );
        }
        Event::ToolCalled { summary, .. } => line(Kind::Tool, format!("▸ {}", one(summary))),
        Event::PermissionDecided {
            summary,
            allowed,
            by,
            ..
        } => {
            let what = if *allowed { "allowed" } else { "refused" };
            line(
                Kind::Question,
                format!("{what} by {}: {}", one(by), one(summary)),
            );
        }
        Event::MessageQueued { text, by, .. } => {
            line(
                Kind::Message,
                format!("message from {}: {}", one(by), one(text)),
            );
        }
        Event::SideQuestion {
            question,
            answer,
            by,
            ..
        } => {
            line(
                Kind::Message,
                format!("side question from {}: {}", one(by), one(question)),
            );
            line(Kind::Detail, format!("  → {}", one(answer)));
        }
        Event::QuestionAsked { question_id } => match ctx.questions.get(question_id) {
            Some(q) => {
                line(Kind::Question, format!("? {}", one(&q.question)));
                for (i, option) in q.options.iter().enumerate() {
                    line(Kind::Detail, format!("  {}. {}", i + 1, one(option)));
                }
            }
            None => line(Kind::Question, format!("? question {question_id}")),
        },
        Event::QuestionAnswered {
            question_id,
            channel,
            responder,
        } => {
            let answer = ctx
                .questions
                .get(question_id)
                .and_then(|q| q.answer.as_deref())
                .unwrap_or("");
            line(
                Kind::Question,
                format!(
                    "answered by {} ({}): {}",
                    one(responder),
                    one(channel),
                    one(answer)
                ),
            );
        }
        Event::QuestionCancelled { .. } => line(Kind::Question, "question withdrawn".to_owned()),
        Event::GoalVerdict {
            goal_id,
            verdict,
            reason,
        } => {
            let accepted = verdict.as_str() == "accept";
            let kind = if accepted {
                Kind::Accepted
            } else {
                Kind::Rejected
            };
            line(
                kind,
                format!(
                    "sign-off of {}: {} — {}",
                    one(goal_id),
                    verdict.as_str(),
                    one(reason)
                ),
            );
            if let Some(v) = ctx.verdict(goal_id, at_ms) {
                for vote in &v.decision.judges {
                    line(
                        Kind::Detail,
                        format!(
                            "  judge {}: {}",
                            one(&vote.model),
                            vote.kind.as_str().replace('_', " ")
                        ),
                    );
                }
                for check in v.decision.checks.as_array().into_iter().flatten() {
                    let field = |k: &str| check.get(k).and_then(|v| v.as_str()).unwrap_or("");
                    let at_line = check
                        .get("line")
                        .and_then(serde_json::Value::as_u64)
                        .map_or_else(String::new, |l| format!(":{l}"));
                    line(
                        Kind::Detail,
                        format!(
                            "  “{}” {}{at_line}",
                            one(field("quote")),
                            one(field("path"))
                        ),
                    );
                }
                for missing in &v.decision.missing {
                    line(Kind::Detail, format!("  missing: {}", one(missing)));
                }
            }
        }
        Event::RuleFired { rule, reason } => {
            line(
                Kind::Run,
                format!("rule {}: {}", rule.as_str(), one(reason)),
            );
        }
        Event::PauseRequested { by, .. } => line(Kind::Run, format!("pause asked by {}", one(by))),
        Event::Paused { reason } => line(Kind::Run, format!("paused: {}", one(reason))),
        Event::Resumed { by, .. } => line(Kind::Run, format!("resumed by {}", one(by))),
        Event::CancelRequested { by } => line(Kind::Run, format!("cancel asked by {}", one(by))),
        Event::BudgetSpent {
            unit, used, limit, ..
        } => line(
            Kind::Run,
            format!(
                "budget spent: {} of {}",
                unit.format(*used),
                unit.format(*limit)
            ),
        ),
        Event::RunFinished { outcome } => {
            line(Kind::Run, format!("run ended: {}", outcome.as_str()))
        }
        _ => {}
    }
}

/// `text` on one line, every control character shown as an escape.
fn one(text: &str) -> String {
    escape(text.trim(), Layout::OneLine).into_owned()
}

/// `HH:MM:SS` (UTC) of `ms`.
fn clock(ms: i64) -> String {
    utc_clock(ms).trim_end_matches(" UTC").to_owned()
}

//! The run page's parts: its head (state, iteration, elapsed, who drives it and where), the
//! controls (pause, cancel, a message to the agent; the resume command, on the run's own
//! machine), the form asking about the run on the side with the answer just given, and the plan
//! it works on.

use maud::{Markup, html};
use tether_store::control::is_ended;

use super::runs::{badge, elapsed, iteration, place, short};
use super::{text, when};
use crate::model::{PlanView, RunSummary};

/// The head of a run's page; replaced live as the run moves.
pub fn head(r: &RunSummary, now_ms: i64) -> Markup {
    let last = r.last_event_at_ms.unwrap_or(r.created_at_ms);
    let to = if r.status.is_stopped() { last } else { now_ms };
    html! {
        div #run-head {
            h1 { "Run " code { (r.id) } " " span.kind { (r.kind.as_str()) } " " (badge(r)) }
            p.objective { (text(&short(&r.objective, 600))) }
            @if !r.goals.is_empty() {
                p.goals { "goals: " @for (i, g) in r.goals.iter().enumerate() { @if i > 0 { ", " } code { (text(g)) } } }
            }
            p.meta {
                "iteration " (iteration(r)) " · started " (when(r.created_at_ms, now_ms))
                " · elapsed " (elapsed(to - r.created_at_ms))
                @if !r.here {
                    " · driven on its machine"
                } @else {
                    @match r.pid {
                        Some(pid) => { " · driven by pid " (pid) }
                        None => { " · no process drives it" }
                    }
                }
            }
            (place(r))
            @if let Some(branch) = &r.branch {
                p.meta { "in a worktree of its own, on branch " code { (text(branch)) } }
            }
            @if r.usage.is_known() {
                p.meta { "usage: " (r.usage.describe()) }
            }
            @if let Some(wait) = &r.usage_limit {
                p.waiting { (text(&wait.describe())) }
            }
            @if r.pending_questions > 0 {
                p.waiting { "The agent is waiting for your answer (above)." }
            }
        }
    }
}

/// Pause, cancel and a message for the agent; how to resume: a button when this dashboard
/// drives runs (`can_resume`, and the run is of this machine), else the command for a shell.
pub fn controls(r: &RunSummary, can_resume: bool) -> Markup {
    let id = &r.id;
    let ended = is_ended(r.status);
    html! {
        section.controls aria-labelledby="controls-title" {
            h2 #controls-title { "Controls" }
            @if ended {
                p { "This run has ended." }
            } @else {
                div.buttons {
                    form method="post" action=(format!("/runs/{id}/pause")) {
                        input.responder type="hidden" name="by";
                        button type="submit" { "Pause" }
                    }
                    form method="post" action=(format!("/runs/{id}/cancel")) {
                        input.responder type="hidden" name="by";
                        button.danger type="submit" { "Cancel run" }
                    }
                }
                p.hint { "Pause stops the run at its next iteration boundary; cancel stops it now." }
                form.say method="post" action=(format!("/runs/{id}/say")) {
                    label for="say-text" { "Message to the agent" }
                    textarea #say-text name="text" rows="2" required {}
                    input.responder type="hidden" name="by";
                    button type="submit" { "Send message" }
                }
            }
            @if r.status.is_stopped() && !ended || r.orphaned {
                @if r.here && can_resume {
                    @if let Some(spent) = &r.budget_spent {
                        (raise_form(id, spent))
                    }
                    form method="post" action=(format!("/runs/{id}/resume")) {
                        button type="submit" { "Resume" }
                    }
                    p.hint { "Resume drives the run from this dashboard's process (it goes on when the page is closed); or from a shell: " code { "tether resume " (id) } }
                } @else if r.here {
                    p.hint { "Continue it from a shell in the workspace: " code { "tether resume " (id) } }
                } @else {
                    p.hint {
                        "Continue it from a shell in its workspace on "
                        (text(r.machine.as_deref().unwrap_or("its machine"))) ": "
                        code { "tether resume " (id) }
                    }
                }
            }
        }
    }
}

/// For a run a budget stopped: what stopped it, and a form that adds to a budget (that one
/// chosen) and resumes the run, as `tether resume --add-…` does.
fn raise_form(id: &str, spent: &tether_store::SpentBudget) -> Markup {
    let stopped = spent.overrun.unit;
    html! {
        form.raise method="post" action=(format!("/runs/{id}/resume")) {
            p { "Stopped: " (text(&spent.describe())) "." }
            label for="raise-amount" { "Add to its budget, then resume" }
            div.buttons {
                input #raise-amount name="add" required placeholder="5, 200k, $2.50, 1h" {}
                select name="unit" aria-label="Which budget" {
                    @for unit in tether_store::Unit::ALL {
                        option value=(unit.as_str()) selected[unit == stopped] { (unit.noun()) }
                    }
                }
                input.responder type="hidden" name="by";
                button type="submit" { "Add and resume" }
            }
        }
    }
}

/// The run's report, as written (markdown shown as text: it quotes the agent and the judge).
pub fn report(markdown: &str) -> Markup {
    html! {
        section #report aria-labelledby="report-title" {
            h2 #report-title { "Report" }
            pre.report { (text(markdown)) }
        }
    }
}

/// The plan a goal run works on: goals with their contracts, subtasks and problems, and the
/// last log lines.
pub fn plan(p: &PlanView) -> Markup {
    html! {
        section #plan aria-labelledby="plan-title" {
            h2 #plan-title { "Plan " code { (text(&p.path)) } }
            @if let Some(why) = &p.unreadable { p.problem { "Cannot read it: " (text(why)) } }
            @for g in &p.goals {
                article.goal {
                    h3 { code { (text(&g.id)) } " " (text(&g.title)) " " span class=(format!("badge goal-{}", g.status)) { (g.status) } }
                    @if let Some(f) = &g.flag { p.problem { (text(f)) } }
                    dl {
                        @if let Some(c) = &g.contract { dt { "contract" } dd { (text(c)) } }
                        @if let Some(d) = &g.done_when { dt { "done when" } dd { (text(d)) } }
                        @if let Some(v) = &g.verify { dt { "verify" } dd { code { (text(v)) } } }
                        @if !g.failure_modes.is_empty() {
                            dt { "failure modes" }
                            dd { ul { @for f in &g.failure_modes { li { (text(f)) } } } }
                        }
                    }
                    @if !g.subtasks.is_empty() {
                        ul.subtasks {
                            @for (s, done) in &g.subtasks {
                                li.done[*done] { (if *done { "☑ " } else { "☐ " }) (text(s)) }
                            }
                        }
                    }
                }
            }
            @if !p.problems.is_empty() {
                ul.problems { @for pr in &p.problems { li { (text(pr)) } } }
            }
            @if !p.log.is_empty() {
                h3 { "Log" }
                ul.log { @for l in &p.log { li { (text(l)) } } }
            }
        }
    }
}

/// A side question just answered, shown above the form that asked it.
#[derive(Debug, Clone)]
pub struct SideShown {
    /// The question.
    pub question: String,
    /// The side model's answer.
    pub answer: String,
    /// The model that answered.
    pub model: String,
}

/// "Ask about this run": a question answered on the side by the side model, which never reaches
/// the agent nor pauses the run; `shown` is the answer just given. Offered only when this
/// dashboard answers side questions (`can_ask`: `tether serve`'s).
pub fn side(id: &str, can_ask: bool, shown: Option<&SideShown>) -> Markup {
    html! {
        section.side aria-labelledby="side-title" {
            h2 #side-title { "Ask about this run" }
            @if let Some(s) = shown {
                div #side-answer .side-answer role="status" {
                    p { strong { "You asked: " } span.said { (text(&s.question)) } }
                    p { strong { (text(&s.model)) " answered:" } }
                    blockquote.answer-text { (text(&s.answer)) }
                }
            }
            @if can_ask {
                form.side method="post" action=(format!("/runs/{id}/side")) {
                    label for="side-question" { "Your question" }
                    textarea #side-question name="text" rows="2" required {}
                    input.responder type="hidden" name="by";
                    button type="submit" { "Ask" }
                }
                p.hint {
                    "Answered by the side model from the run's record and the repository; the \
                     agent never sees it and the run goes on undisturbed. Or from a shell: "
                    code { "tether side --run " (id) " \"<question>\"" }
                }
            } @else {
                p.hint { "Ask from a shell in the workspace: " code { "tether side --run " (id) " \"<question>\"" } }
            }
        }
    }
}

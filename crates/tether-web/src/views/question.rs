//! Questions: the card of a pending one with its answer form (and a button per choice when it
//! offers choices), the card of one answered (where and by whom, and which option was chosen),
//! a run's Q&A, and the history across runs.

use maud::{Markup, html};
use tether_store::{Question, QuestionStatus};

use super::{text, when};
use crate::model::Pending;

/// The cards of every pending question.
pub fn cards(pending: &[Pending], now_ms: i64) -> Markup {
    html! {
        @for p in pending { (pending_card(p, now_ms)) }
    }
}

/// A pending question: what the agent asks, its context and confidence, how long it has
/// waited, and the form to answer it.
pub fn pending_card(p: &Pending, now_ms: i64) -> Markup {
    let q = &p.question;
    let id = q.id.as_str();
    html! {
        article.card.question #(format!("q-{id}")) aria-labelledby=(format!("q-{id}-title")) {
            h2 #(format!("q-{id}-title")) {
                "The agent is waiting for your answer"
                @if let Some(run) = &q.run_id {
                    " · " a href=(format!("/runs/{run}")) { "run " (run.as_str()) }
                }
            }
            p.asked { (text(&q.question)) }
            @if !q.context.is_empty() {
                details.context open[q.context.len() < 600] {
                    summary { "Context" }
                    pre { (text(&q.context)) }
                }
            }
            p.meta {
                @if let Some(c) = q.confidence { "confidence " (c) " · " }
                "asked " (when(q.created_at_ms, now_ms)) " · " code { (id) }
            }
            @if let Some(a) = &p.abandoned {
                p.note { "Nobody is waiting right now (" (text(&a.reason)) "); an answer is still recorded and reaches the run at its next iteration." }
            }
            form.answer method="post" action=(format!("/questions/{id}/answer")) {
                label for=(format!("answer-{id}")) {
                    @if q.options.is_empty() { "Your answer" } @else { "Or answer in your own words" }
                }
                textarea #(format!("answer-{id}")) name="text" rows="3" required {}
                label for=(format!("name-{id}")) { "Your name" }
                input.responder #(format!("name-{id}")) name="responder" autocomplete="name" maxlength="100";
                button type="submit" { "Send answer" }
                // After the send button in the page's order, so Enter in a field sends the text
                // rather than picking the first choice; shown first by the style sheet.
                @if !q.options.is_empty() {
                    fieldset.choices {
                        legend { "Pick one" }
                        @for (i, option) in q.options.iter().enumerate() {
                            button.choice type="submit" name="choice" value=(i) formnovalidate {
                                (text(option))
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A question that is no longer pending: answered (where, by whom, what) or withdrawn.
pub fn answered_card(q: &Question, now_ms: i64) -> Markup {
    let id = q.id.as_str();
    html! {
        article.card.question.settled #(format!("q-{id}")) {
            h2 { "Question " code { (id) } }
            p.asked { (text(&q.question)) }
            (outcome(q, now_ms))
        }
    }
}

fn outcome(q: &Question, now_ms: i64) -> Markup {
    match q.status {
        QuestionStatus::Answered => html! {
            p.answered {
                "Answered on " strong { (text(q.channel.as_deref().unwrap_or("?"))) }
                " by " strong { (text(q.responder.as_deref().unwrap_or("?"))) }
                @if let Some(at) = q.answered_at_ms { " " (when(at, now_ms)) }
            }
            blockquote.answer-text {
                (text(q.answer.as_deref().unwrap_or("")))
                @if let Some(i) = q.choice { " " span.choice-made { "(option " (i + 1) " of " (q.options.len()) ")" } }
            }
        },
        QuestionStatus::Cancelled => html! { p.answered { "Withdrawn without an answer." } },
        QuestionStatus::Pending => html! { p.answered { "Waiting for an answer." } },
    }
}

/// The Q&A of one run, oldest first.
pub fn run_qa(questions: &[Question], now_ms: i64) -> Markup {
    html! {
        section #run-qa aria-labelledby="run-qa-title" {
            h2 #run-qa-title { "Questions and answers" }
            @if questions.is_empty() { p.empty { "No questions asked." } }
            ol.qa {
                @for q in questions { li { (qa_entry(q, now_ms)) } }
            }
        }
    }
}

fn qa_entry(q: &Question, now_ms: i64) -> Markup {
    html! {
        p.asked { (text(&q.question)) }
        p.meta {
            code { (q.id.as_str()) } " · asked " (when(q.created_at_ms, now_ms))
            @if let Some(c) = q.confidence { " · confidence " (c) }
            @if let Some(run) = &q.run_id { " · " a href=(format!("/runs/{run}")) { (run.as_str()) } }
        }
        (outcome(q, now_ms))
    }
}

/// Every question across runs, newest first.
pub fn history(questions: &[Question], now_ms: i64) -> Markup {
    html! {
        section #history aria-labelledby="history-title" {
            h1 #history-title { "Q&A history" }
            @if questions.is_empty() { p.empty { "No questions asked yet." } }
            ol.qa {
                @for q in questions { li { (qa_entry(q, now_ms)) } }
            }
        }
    }
}

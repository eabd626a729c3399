//! The frame of every page: head (the two embedded assets, nothing inline), navigation, the
//! live-status line, the pending-question cards, and a notice after a form was sent.

use maud::{DOCTYPE, Markup, html};

/// Which page is shown (for the navigation's `aria-current`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    /// The runs list.
    Runs,
    /// One run.
    Run,
    /// The Q&A history.
    History,
}

/// What a form just did, shown once at the top of the page it leads back to. Fixed texts: a
/// notice is chosen by name from the URL, never taken from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Notice {
    /// The answer was recorded; the agent has it.
    Answered,
    /// Someone answered first.
    AlreadyAnswered,
    /// The question was withdrawn.
    Withdrawn,
    /// The answer was empty.
    EmptyAnswer,
    /// Pause requested (or applied).
    Paused,
    /// Cancel requested (or applied).
    Cancelled,
    /// A message was queued.
    Said,
    /// The run had ended, so nothing was changed.
    Ended,
    /// A run was started here.
    Started,
    /// The run was resumed here.
    Resumed,
}

impl Notice {
    /// The name used in `?notice=`.
    pub fn name(self) -> &'static str {
        match self {
            Notice::Answered => "answered",
            Notice::AlreadyAnswered => "already-answered",
            Notice::Withdrawn => "withdrawn",
            Notice::EmptyAnswer => "empty-answer",
            Notice::Paused => "paused",
            Notice::Cancelled => "cancelled",
            Notice::Said => "said",
            Notice::Ended => "ended",
            Notice::Started => "started",
            Notice::Resumed => "resumed",
        }
    }

    /// The notice named `name`, if there is one.
    pub fn from_name(name: &str) -> Option<Notice> {
        [
            Notice::Answered,
            Notice::AlreadyAnswered,
            Notice::Withdrawn,
            Notice::EmptyAnswer,
            Notice::Paused,
            Notice::Cancelled,
            Notice::Said,
            Notice::Ended,
            Notice::Started,
            Notice::Resumed,
        ]
        .into_iter()
        .find(|n| n.name() == name)
    }

    fn text(self) -> &'static str {
        match self {
            Notice::Answered => "Your answer was sent; the agent has it.",
            Notice::AlreadyAnswered => {
                "Someone answered first; their answer stands and yours was not used."
            }
            Notice::Withdrawn => "The question was withdrawn; nobody is waiting for an answer.",
            Notice::EmptyAnswer => "The answer was empty; write what the agent should read.",
            Notice::Paused => "Pause requested: the run stops at its next iteration boundary.",
            Notice::Cancelled => "Cancel requested: the run stops now.",
            Notice::Said => {
                "Message queued: the agent reads it at the start of its next iteration."
            }
            Notice::Ended => "The run has ended; nothing was changed.",
            Notice::Started => "The run started; this process drives it, page open or not.",
            Notice::Resumed => "The run was resumed; this process drives it, page open or not.",
        }
    }

    fn is_problem(self) -> bool {
        matches!(
            self,
            Notice::AlreadyAnswered | Notice::Withdrawn | Notice::EmptyAnswer | Notice::Ended
        )
    }
}

/// What a page opened without the token gets (every navigation, since the token never travels
/// in a cookie): the head with the two assets, and a line that the script replaces with the
/// page it fetches with the token. It holds nothing from the store.
pub fn shell() -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(html! { "tether" }))
            body data-shell="true" {
                header.top {
                    nav aria-label="Main" { a.brand href="/" { "tether" } }
                }
                main #main {
                    p #shell-status role="status" { "Loading…" }
                    noscript {
                        p.notice.problem {
                            "The dashboard needs JavaScript: its page keeps the token in this tab \
                             and sends it with every request (never in a cookie)."
                        }
                    }
                }
            }
        }
    }
}

/// Every page's head: `title`, and the two assets (nothing loaded from elsewhere).
fn head(title: Markup) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            meta name="color-scheme" content="light dark";
            title { (title) }
            link rel="stylesheet" href="/assets/app.css";
            script src="/assets/app.js" defer {}
        }
    }
}

/// A whole page. `live` is the URL of its live stream; `questions` the pending cards.
pub fn page(
    title: &str,
    nav: Nav,
    live: &str,
    notice: Option<Notice>,
    questions: Markup,
    main: Markup,
) -> Markup {
    let current = |n: Nav| (n == nav).then_some("page");
    html! {
        (DOCTYPE)
        html lang="en" {
            (head(html! { (title) " · tether" }))
            body data-live=(live) {
                a.skip href="#main" { "Skip to content" }
                header.top {
                    nav aria-label="Main" {
                        a.brand href="/" { "tether" }
                        a href="/" aria-current=[current(Nav::Runs)] { "Runs" }
                        a href="/history" aria-current=[current(Nav::History)] { "Q&A history" }
                    }
                    span #live-status role="status" aria-live="polite" { "not live" }
                }
                @if let Some(n) = notice {
                    p.notice.problem[n.is_problem()] role="status" { (n.text()) }
                }
                section #questions aria-label="Questions waiting for an answer" {
                    (questions)
                }
                main #main tabindex="-1" { (main) }
            }
        }
    }
}

//! The terminal channel: a question card and a `Your answer:` prompt on the terminal where
//! tether runs. It closes by itself (saying who answered) when another channel wins first.
//! A question with choices lists them numbered; a typed number (or label) is that choice, read
//! by the store like every answer, and anything else is the person's own words.
//!
//! On a terminal, lines come from the process's one reader of stdin ([`Keyboard`]), shared with
//! every other prompt of the process, so the card can be offered again for the next question;
//! the lines and the writer can also be injected, so the card is testable without a terminal.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tether_store::Question;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::broker::Answer;
use crate::channels::{Channel, ChannelAnswer};
use crate::keyboard::Keyboard;
use crate::notices::Notice;
use crate::visible::{one_line, visible};

/// Offers questions on a terminal.
pub struct Terminal {
    lines: tokio::sync::Mutex<Lines>,
    out: Mutex<Box<dyn Write + Send>>,
    screen: Screen,
    responder: String,
}

impl Terminal {
    /// Reads answers from `lines` and writes cards to `out`; answers are stored as `responder`'s.
    pub fn new(
        lines: mpsc::UnboundedReceiver<String>,
        out: Box<dyn Write + Send>,
        responder: String,
    ) -> Self {
        Terminal {
            lines: tokio::sync::Mutex::new(Lines::Given(lines)),
            out: Mutex::new(out),
            screen: Screen::default(),
            responder,
        }
    }

    /// The card shares `screen` with a status line.
    pub fn on_screen(mut self, screen: Screen) -> Self {
        self.screen = screen;
        self
    }

    /// The process's keyboard and stderr.
    pub fn stdio(responder: String) -> Self {
        Terminal {
            lines: tokio::sync::Mutex::new(Lines::Keyboard(Keyboard::get())),
            out: Mutex::new(Box::new(std::io::stderr())),
            screen: Screen::stderr(),
            responder,
        }
    }

    /// Writes `text` with its control characters shown as escapes.
    fn write(&self, text: &str) {
        if let Ok(mut out) = self.out.lock() {
            let _ = out.write_all(visible(text).as_bytes());
            let _ = out.flush();
        }
    }
}

/// A terminal screen that a question card and a live status line share: while a card waits
/// for a typed answer the status line must not redraw over its `Your answer:` prompt.
#[derive(Clone, Default)]
pub struct Screen {
    cards: Arc<AtomicUsize>,
}

impl Screen {
    /// The process's stderr, where the card and the progress line of a run are drawn.
    pub fn stderr() -> Screen {
        static STDERR: OnceLock<Screen> = OnceLock::new();
        STDERR.get_or_init(Screen::default).clone()
    }

    /// Whether a question card on this screen waits for a typed answer.
    pub fn card_open(&self) -> bool {
        self.cards.load(Ordering::SeqCst) > 0
    }

    fn open_card(&self) -> OpenCard {
        self.cards.fetch_add(1, Ordering::SeqCst);
        OpenCard(Arc::clone(&self.cards))
    }
}

/// Counts a card as open on its screen for as long as it lives.
struct OpenCard(Arc<AtomicUsize>);

impl Drop for OpenCard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Where the card's lines come from.
enum Lines {
    /// Lines a caller feeds (tests, an embedding program).
    Given(mpsc::UnboundedReceiver<String>),
    /// The process's keyboard.
    Keyboard(&'static Keyboard),
}

impl Lines {
    async fn next(&mut self) -> Option<String> {
        match self {
            Lines::Given(rx) => rx.recv().await,
            Lines::Keyboard(k) => k.next_line().await,
        }
    }

    fn discard_typed_ahead(&mut self) {
        match self {
            Lines::Given(_) => {}
            Lines::Keyboard(k) => k.discard_typed_ahead(),
        }
    }
}

/// The line shown for a notice: `» Run r-… paused: … · tether resume r-…`, on one line (its
/// control characters escaped) and on a line of its own.
pub fn notice_line(notice: &Notice) -> String {
    let line = match &notice.resume {
        Some(command) => format!("{} · {command}", notice.text),
        None => notice.text.clone(),
    };
    format!("\n» {}\n", one_line(&line))
}

/// The card shown for a question (written through [`visible`], like everything the terminal
/// channel prints).
pub fn card(q: &Question) -> String {
    let mut s = format!("\n┌─ a question for you ({})", q.id);
    if let Some(c) = q.confidence {
        s.push_str(&format!(" · the agent's confidence: {c}/100"));
    }
    s.push('\n');
    for line in q.question.lines() {
        s.push_str(&format!("│ {line}\n"));
    }
    if !q.context.trim().is_empty() {
        s.push_str("│\n│ context:\n");
        for line in q.context.lines() {
            s.push_str(&format!("│   {line}\n"));
        }
    }
    if q.options.is_empty() {
        s.push_str(&format!(
            "└─ answer here, or from any shell: tether answer {} \"…\"\nYour answer: ",
            q.id
        ));
    } else {
        s.push_str("│\n│ choices:\n");
        for (i, option) in q.options.iter().enumerate() {
            s.push_str(&format!("│   {}. {option}\n", i + 1));
        }
        s.push_str(&format!(
            "└─ a number or your own words, here or from any shell: tether answer {} \"…\"\n\
             Your answer: ",
            q.id
        ));
    }
    s
}

impl Channel for Terminal {
    fn name(&self) -> &'static str {
        "terminal"
    }

    async fn offer(&self, question: &Question, stop: CancellationToken) -> Option<ChannelAnswer> {
        let mut lines = tokio::select! {
            l = self.lines.lock() => l,
            () = stop.cancelled() => return None,
        };
        lines.discard_typed_ahead();
        let _open = self.screen.open_card();
        self.write(&card(question));
        loop {
            let line = tokio::select! {
                l = lines.next() => l?,
                () = stop.cancelled() => return None,
            };
            let text = line.trim();
            if !text.is_empty() {
                return Some(ChannelAnswer::text(text, self.responder.clone()));
            }
            self.write("Your answer: ");
        }
    }

    async fn answered_elsewhere(&self, _question: &Question, answer: &Answer) {
        self.write(&format!(
            "\n(answered on {} by {}: {})\n",
            answer.channel, answer.responder, answer.text
        ));
    }

    async fn notice(&self, notice: &Notice) {
        self.write(&notice_line(notice))
    }
}

//! The screen's state and what each key does. Nothing here draws or reads the terminal: keys
//! come in as [`Key`]s, acts on a run go out through [`Acts`], so the whole of `tether watch`'s
//! behaviour is tested without a terminal.

use std::path::PathBuf;

use tether_store::{QuestionId, RunId};

use crate::model::View;

/// What a key press is, as `tether watch` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key {
    /// A character typed.
    Char(char),
    /// Enter.
    Enter,
    /// Escape.
    Esc,
    /// Backspace.
    Backspace,
    /// Arrow up.
    Up,
    /// Arrow down.
    Down,
    /// Page up.
    PageUp,
    /// Page down.
    PageDown,
    /// Home.
    Home,
    /// End.
    End,
    /// Ctrl+C.
    Interrupt,
}

/// What a person may do to a run from the screen: the same acts, with the same rules, as
/// `tether answer`, `pause`, `cancel`, `say` and `resume --add-iterations`. Each says what
/// happened, for the status line, or why not.
pub trait Acts {
    /// Answers `question` with `text` (an option's number picks that option).
    fn answer(&self, question: &QuestionId, text: &str) -> Result<String, String>;
    /// Asks `run` to pause.
    fn pause(&self, run: &RunId) -> Result<String, String>;
    /// Cancels `run`.
    fn cancel(&self, run: &RunId) -> Result<String, String>;
    /// Says `text` to `run`'s agent at its next iteration.
    fn say(&self, run: &RunId, text: &str) -> Result<String, String>;
    /// Adds `n` iterations to `run`'s iteration budget: a running run goes on further, a run
    /// its iteration budget stopped may be resumed.
    fn add_iterations(&self, run: &RunId, n: u32) -> Result<String, String>;
}

/// What the bottom line is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Keys move and act.
    Normal,
    /// Typing the answer to the selected run's question.
    Answer(String),
    /// Typing what to search the timeline for.
    Search(String),
    /// Typing a message for the agent.
    Say(String),
    /// Typing how many iterations to add to the run's budget.
    AddIterations(String),
    /// Asking whether to cancel the selected run.
    ConfirmCancel,
}

/// The screen's state.
#[derive(Debug)]
pub struct App {
    /// What the store said last.
    pub view: View,
    /// The selected run.
    pub selected: Option<RunId>,
    /// What the bottom line is doing.
    pub mode: Mode,
    /// How many lines the timeline is scrolled up from its end.
    pub scroll: usize,
    /// The last search, for `n`.
    pub search: Option<String>,
    /// The timeline line the last search found.
    pub found: Option<usize>,
    /// What happened last, for the status line.
    pub status: String,
    /// Where timelines are exported.
    pub export_dir: PathBuf,
    /// Set once the person quits.
    pub quit: bool,
}

impl App {
    /// A screen over `view`, exporting timelines into `export_dir`.
    pub fn new(view: View, export_dir: PathBuf) -> Self {
        let selected = view.selected.as_ref().map(|s| s.header.id.clone());
        App {
            view,
            selected,
            mode: Mode::Normal,
            scroll: 0,
            search: None,
            found: None,
            status: String::new(),
            export_dir,
            quit: false,
        }
    }

    /// Takes a newly read view, keeping the selection.
    pub fn refresh(&mut self, view: View) {
        self.selected = view.selected.as_ref().map(|s| s.header.id.clone());
        self.view = view;
    }

    /// Handles `key`; returns whether the selection changed (the caller reads the view again).
    pub fn key(&mut self, key: Key, acts: &dyn Acts) -> bool {
        if key == Key::Interrupt {
            self.quit = true;
            return false;
        }
        match std::mem::replace(&mut self.mode, Mode::Normal) {
            Mode::Normal => self.normal(key, acts),
            Mode::Answer(text) => {
                self.mode =
                    self.typing(key, text, Mode::Answer, |app, text| app.answer(&text, acts));
                false
            }
            Mode::Search(text) => {
                self.mode = self.typing(key, text, Mode::Search, |app, text| app.find(text));
                false
            }
            Mode::Say(text) => {
                self.mode = self.typing(key, text, Mode::Say, |app, text| app.say(&text, acts));
                false
            }
            Mode::AddIterations(text) => {
                self.mode = self.typing(key, text, Mode::AddIterations, |app, text| {
                    app.add_iterations(&text, acts);
                });
                false
            }
            Mode::ConfirmCancel => {
                match (key, self.selected.clone()) {
                    (Key::Char('y' | 'Y'), Some(run)) => self.report(acts.cancel(&run)),
                    _ => self.status = "not cancelled".to_owned(),
                }
                false
            }
        }
    }

    /// A key in a mode that types a line: Enter hands the line to `done`, Esc drops it.
    fn typing(
        &mut self,
        key: Key,
        mut text: String,
        again: fn(String) -> Mode,
        done: impl FnOnce(&mut App, String),
    ) -> Mode {
        match key {
            Key::Enter => {
                done(self, text);
                Mode::Normal
            }
            Key::Esc => Mode::Normal,
            Key::Backspace => {
                text.pop();
                again(text)
            }
            Key::Char(c) if !c.is_control() => {
                text.push(c);
                again(text)
            }
            _ => again(text),
        }
    }

    fn normal(&mut self, key: Key, acts: &dyn Acts) -> bool {
        match key {
            Key::Char('q') => self.quit = true,
            Key::Up | Key::Char('k') => return self.move_selection(-1),
            Key::Down | Key::Char('j') => return self.move_selection(1),
            Key::PageUp => self.scroll = self.scroll.saturating_add(10),
            Key::PageDown => self.scroll = self.scroll.saturating_sub(10),
            Key::Home => self.scroll = usize::MAX,
            Key::End => self.scroll = 0,
            Key::Enter => match self.question() {
                Some(_) => self.mode = Mode::Answer(String::new()),
                None => self.status = "no question waits on this run".to_owned(),
            },
            Key::Char('/') => self.mode = Mode::Search(String::new()),
            Key::Char('n') => match self.search.clone() {
                Some(text) => self.find(text),
                None => self.status = "nothing searched yet: / to search".to_owned(),
            },
            Key::Char('p') => {
                if let Some(run) = self.selected.clone() {
                    self.report(acts.pause(&run));
                }
            }
            Key::Char('c') if self.selected.is_some() => self.mode = Mode::ConfirmCancel,
            Key::Char('s') if self.selected.is_some() => self.mode = Mode::Say(String::new()),
            Key::Char('+') if self.selected.is_some() => {
                self.mode = Mode::AddIterations(String::new());
            }
            Key::Char('e') => self.export(),
            _ => {}
        }
        false
    }

    /// The question the selected run waits on.
    pub fn question(&self) -> Option<&tether_store::Question> {
        self.view.selected.as_ref()?.question.as_ref()
    }

    fn move_selection(&mut self, by: isize) -> bool {
        let ids: Vec<&RunId> = self.view.rows().map(|r| &r.header.id).collect();
        if ids.is_empty() {
            return false;
        }
        let at = self
            .selected
            .as_ref()
            .and_then(|s| ids.iter().position(|id| *id == s))
            .unwrap_or(0);
        let last = ids.len() - 1;
        let next = at.saturating_add_signed(by).min(last);
        if next == at {
            return false;
        }
        self.selected = ids.get(next).map(|id| (*id).clone());
        self.scroll = 0;
        self.found = None;
        true
    }

    fn answer(&mut self, text: &str, acts: &dyn Acts) {
        let Some(q) = self.question() else {
            self.status = "the question was answered meanwhile".to_owned();
            return;
        };
        let id = q.id.clone();
        if text.trim().is_empty() {
            self.status = "not answered: the answer is empty".to_owned();
            return;
        }
        self.report(acts.answer(&id, text.trim()));
    }

    fn say(&mut self, text: &str, acts: &dyn Acts) {
        match (self.selected.clone(), text.trim()) {
            (_, "") => self.status = "nothing said".to_owned(),
            (Some(run), text) => self.report(acts.say(&run, text)),
            (None, _) => {}
        }
    }

    fn add_iterations(&mut self, text: &str, acts: &dyn Acts) {
        let Some(run) = self.selected.clone() else {
            return;
        };
        match tether_budget::parse_iterations(text.trim()) {
            Ok(0) | Err(_) => {
                self.status = format!("not added: “{}” is no number of iterations", text.trim());
            }
            Ok(n) => self.report(acts.add_iterations(&run, n)),
        }
    }

    /// Searches the timeline backwards from the line found last (or its end) for `text`.
    fn find(&mut self, text: String) {
        let Some(sel) = &self.view.selected else {
            return;
        };
        let needle = text.to_lowercase();
        let before = self.found.unwrap_or(sel.lines.len());
        let hit = sel.lines[..before.min(sel.lines.len())]
            .iter()
            .rposition(|l| l.text.to_lowercase().contains(&needle))
            .or_else(|| {
                sel.lines
                    .iter()
                    .rposition(|l| l.text.to_lowercase().contains(&needle))
            });
        match hit {
            Some(at) => {
                self.found = Some(at);
                self.scroll = sel.lines.len().saturating_sub(at + 1);
                self.status = format!("found “{text}” (n: the one before)");
            }
            None => {
                self.found = None;
                self.status = format!("“{text}” is not in the timeline");
            }
        }
        self.search = Some(text);
    }

    /// Writes the selected run's timeline to `<export_dir>/<run>-timeline.txt`.
    fn export(&mut self) {
        let Some(sel) = &self.view.selected else {
            return;
        };
        let path = self
            .export_dir
            .join(format!("{}-timeline.txt", sel.header.id));
        let text: String = sel
            .lines
            .iter()
            .map(|l| format!("{:>8}  {}\n", l.at, l.text))
            .collect();
        self.status = match std::fs::write(&path, text) {
            Ok(()) => format!("timeline written to {}", path.display()),
            Err(e) => format!("could not write {}: {e}", path.display()),
        };
    }

    fn report(&mut self, done: Result<String, String>) {
        self.status = match done {
            Ok(said) | Err(said) => said,
        };
    }
}

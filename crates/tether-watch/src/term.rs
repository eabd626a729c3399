//! `tether watch` on the terminal: raw mode and the alternate screen (restored however it
//! ends: `q`, Ctrl+C, a panic, or SIGTERM, SIGHUP or SIGINT from outside), keys read on a
//! thread of their own, the store's changes and those signals poking the same channel, and the
//! screen drawn again after each.

use std::io;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use ratatui::DefaultTerminal;
use ratatui::crossterm::event::{self, Event as TermEvent, KeyCode, KeyEventKind, KeyModifiers};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;
use tether_config::Workspace;
use tether_store::{Store, StoreError};

use crate::app::{Acts, App, Key};
use crate::draw::{Theme, draw};
use crate::model;

/// The store is read again this often even when nothing said it changed (a file system that
/// does not report changes, a team feed that reconnected), and the elapsed time moves on.
const SAFETY_NET: Duration = Duration::from_secs(5);
/// How often the screen is drawn again with nothing new (the elapsed time).
const TICK: Duration = Duration::from_secs(1);

/// `tether watch` could not go on.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The terminal could not be used (not a terminal, or it went away).
    #[error("the terminal: {0}")]
    Terminal(#[from] io::Error),
}

/// What comes in while watching.
enum Input {
    Key(Key),
    Resized,
    Changed,
    /// A signal asked it to end (a `kill`, the terminal or SSH session closing).
    Ended,
}

/// Watches `ws`'s `store` until the person quits: `connect` opens a connection of its own for
/// a team store's feed of changes; `export_dir` is where timelines are exported.
pub fn run(
    store: &Store,
    ws: &Workspace,
    connect: impl FnOnce() -> Result<Store, StoreError>,
    acts: &dyn Acts,
    export_dir: PathBuf,
) -> Result<(), WatchError> {
    let theme = Theme {
        color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let (tx, rx) = mpsc::channel();
    let poke = tx.clone();
    let _changes = tether_read::Changes::watch(
        store.kind(),
        &ws.state_dir(),
        connect,
        std::sync::Arc::new(move || {
            let _ = poke.send(Input::Changed);
        }),
    );
    let mut app = App::new(model::load(store, ws, None)?, export_dir);
    let signals = on_signals(tx.clone())?;
    let mut terminal = ratatui::try_init()?;
    std::thread::Builder::new()
        .name("tether-watch-keys".into())
        .spawn(move || read_keys(&tx))?;
    let ended = watch(&mut terminal, &mut app, (store, ws), acts, (&rx, theme));
    ratatui::restore();
    signals.close();
    ended
}

/// Turns SIGTERM, SIGHUP and SIGINT into [`Input::Ended`], so the watch ends as `q` ends it,
/// the terminal given back, rather than leaving it in raw mode on the alternate screen; a
/// second signal gives the terminal back and exits 130 at once. (In raw mode Ctrl+C is a key;
/// SIGINT comes only from outside.)
fn on_signals(tx: mpsc::Sender<Input>) -> io::Result<signal_hook::iterator::Handle> {
    let mut signals = Signals::new([SIGTERM, SIGHUP, SIGINT])?;
    let handle = signals.handle();
    std::thread::Builder::new()
        .name("tether-watch-signals".into())
        .spawn(move || {
            let mut received = signals.forever();
            if received.next().is_some() {
                let _ = tx.send(Input::Ended);
            }
            // A second one while the first waits on something slow (a team store that does not
            // answer): the terminal given back here, and out.
            if received.next().is_some() {
                ratatui::restore();
                std::process::exit(130);
            }
        })?;
    Ok(handle)
}

fn watch(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    (store, ws): (&Store, &Workspace),
    acts: &dyn Acts,
    (rx, theme): (&mpsc::Receiver<Input>, Theme),
) -> Result<(), WatchError> {
    let mut read_at = Instant::now();
    loop {
        terminal.draw(|frame| draw(frame, app, theme, tether_store::now_ms()))?;
        let mut reload = read_at.elapsed() >= SAFETY_NET;
        match rx.recv_timeout(TICK) {
            Ok(Input::Key(key)) => {
                reload |= app.key(key, acts);
                // An act changes the store; the change itself pokes too, but the person sees it
                // at once.
                reload |= matches!(key, Key::Enter | Key::Char('p' | 'y' | 'Y'));
            }
            Ok(Input::Changed) => reload = true,
            Ok(Input::Ended) => return Ok(()),
            Ok(Input::Resized) | Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
        }
        if app.quit {
            return Ok(());
        }
        if reload {
            // Pokes that came meanwhile are answered by this one read.
            while let Ok(Input::Changed) = rx.try_recv() {}
            app.refresh(model::load(store, ws, app.selected.as_ref())?);
            read_at = Instant::now();
        }
    }
}

/// Reads the terminal's keys into `tx` until the watch is gone.
fn read_keys(tx: &mpsc::Sender<Input>) {
    loop {
        let input = match event::read() {
            Ok(TermEvent::Key(k)) if k.kind != KeyEventKind::Release => {
                match key_of(k.code, k.modifiers) {
                    Some(key) => Input::Key(key),
                    None => continue,
                }
            }
            Ok(TermEvent::Resize(..)) => Input::Resized,
            Ok(_) => continue,
            Err(_) => return,
        };
        if tx.send(input).is_err() {
            return;
        }
    }
}

fn key_of(code: KeyCode, modifiers: KeyModifiers) -> Option<Key> {
    Some(match code {
        KeyCode::Char('c') if modifiers.contains(KeyModifiers::CONTROL) => Key::Interrupt,
        KeyCode::Char(c) => Key::Char(c),
        KeyCode::Enter => Key::Enter,
        KeyCode::Esc => Key::Esc,
        KeyCode::Backspace => Key::Backspace,
        KeyCode::Up => Key::Up,
        KeyCode::Down => Key::Down,
        KeyCode::PageUp => Key::PageUp,
        KeyCode::PageDown => Key::PageDown,
        KeyCode::Home => Key::Home,
        KeyCode::End => Key::End,
        _ => return None,
    })
}

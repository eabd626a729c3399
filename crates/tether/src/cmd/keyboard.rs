//! The demo's keyboard: one reader of stdin for the whole process (standard input cannot be
//! shared between readers), whose lines go to the terminal's question card while the run goes
//! on and, once it is over, end the wait of [`Keyboard::wait_for_enter`].

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::mpsc;

/// Lines typed on the terminal.
pub struct Keyboard {
    card: Option<mpsc::UnboundedReceiver<String>>,
    enter: std::sync::mpsc::Receiver<()>,
    after_run: Arc<AtomicBool>,
}

impl Keyboard {
    /// Starts reading stdin on a thread of its own.
    pub fn start() -> Keyboard {
        let (card_tx, card) = mpsc::unbounded_channel();
        let (enter_tx, enter) = std::sync::mpsc::channel();
        let after_run = Arc::new(AtomicBool::new(false));
        let after = Arc::clone(&after_run);
        std::thread::spawn(move || {
            let stdin = std::io::stdin();
            let mut line = String::new();
            while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
                let line = std::mem::take(&mut line);
                let sent = if after.load(Ordering::SeqCst) {
                    enter_tx.send(()).is_ok()
                } else {
                    card_tx.send(line).is_ok() || enter_tx.send(()).is_ok()
                };
                if !sent {
                    return;
                }
            }
            // End of input: nobody can press Enter any more.
            let _ = enter_tx.send(());
        });
        Keyboard {
            card: Some(card),
            enter,
            after_run,
        }
    }

    /// The lines for the terminal's question card (once).
    pub fn card_lines(&mut self) -> Option<mpsc::UnboundedReceiver<String>> {
        self.card.take()
    }

    /// From now on a line ends the wait; blocks until one is typed (or stdin ends).
    pub fn wait_for_enter(&self) {
        self.after_run.store(true, Ordering::SeqCst);
        let _ = self.enter.recv();
    }
}

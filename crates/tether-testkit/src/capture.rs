//! Capturing what code under test writes or asks: an in-memory writer to hand out as a
//! terminal or a log sink, and a model script that records every request it answers.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use tether_model::Request;
use tether_model::scripted::{Script, Turn};

/// An in-memory writer whose clones share one buffer: give a clone to the code under test (as
/// its screen or log sink) and read what it wrote through another.
#[derive(Debug, Clone, Default)]
pub struct Captured(pub Arc<Mutex<Vec<u8>>>);

impl Captured {
    /// Everything written so far, as text.
    pub fn text(&self) -> String {
        let bytes = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

impl std::io::Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A script playing `turns`, then saying "done" on every later request; the list fills with
/// every request it answers.
pub fn recording_script(turns: Vec<Turn>) -> (Script, Arc<Mutex<Vec<Request>>>) {
    let requests = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&requests);
    let mut turns = VecDeque::from(turns);
    let script = Script::from_fn(move |req: &Request| {
        log.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(req.clone());
        turns.pop_front().unwrap_or_else(|| Turn::text("done"))
    });
    (script, requests)
}

//! The keyboard: the one reader of the process's standard input.
//!
//! Standard input cannot be shared between readers. A thread blocked in `read_line` holds the
//! stdin lock until a line arrives, so a second reader — the contract question of `tether run`
//! asked while the terminal channel's reader already waits — blocks with it, and a line typed
//! goes to whichever reader the lock favours. So every part of tether that reads what a person
//! types (the question card, the `[y/N]` of contract approval, the review menu of `tether plan
//! new`, the demo's closing Enter) takes its lines from [`Keyboard::get`]: one thread reads stdin
//! for the whole process and queues the lines; whoever asks next takes them.
//!
//! A prompt of the command itself (a `[y/N]`, a menu) reads what was typed ahead, as a terminal
//! program does; the question card first drops the lines typed while no question was shown
//! ([`Keyboard::discard_typed_ahead`]): a line typed before the agent asked cannot be the answer.

use std::collections::VecDeque;
use std::io::{self, BufRead, Read};
use std::sync::{Condvar, Mutex, MutexGuard, Once, OnceLock};

use tokio::sync::Notify;

/// The process's keyboard (see the module documentation).
pub struct Keyboard {
    queue: Mutex<Queue>,
    /// Wakes blocking readers.
    arrived: Condvar,
    /// Wakes async readers.
    notify: Notify,
}

#[derive(Default)]
struct Queue {
    lines: VecDeque<String>,
    /// Standard input ended (or failed): no line will come.
    closed: bool,
}

impl Keyboard {
    /// The keyboard of this process, reading stdin on a thread of its own from the first call.
    pub fn get() -> &'static Keyboard {
        static KEYBOARD: OnceLock<Keyboard> = OnceLock::new();
        static READING: Once = Once::new();
        let keyboard = KEYBOARD.get_or_init(Keyboard::empty);
        READING.call_once(|| {
            std::thread::spawn(move || keyboard.read_stdin());
        });
        keyboard
    }

    /// A keyboard no thread feeds (tests feed it with [`Keyboard::push`]).
    fn empty() -> Keyboard {
        Keyboard {
            queue: Mutex::new(Queue::default()),
            arrived: Condvar::new(),
            notify: Notify::new(),
        }
    }

    /// Reads stdin line by line until it ends.
    fn read_stdin(&self) {
        let stdin = io::stdin();
        let mut line = String::new();
        while stdin.read_line(&mut line).is_ok_and(|n| n > 0) {
            self.push(std::mem::take(&mut line));
        }
        self.close();
    }

    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Queues a typed line.
    fn push(&self, line: String) {
        self.queue().lines.push_back(line);
        self.wake();
    }

    /// Marks the end of input.
    fn close(&self) {
        self.queue().closed = true;
        self.wake();
    }

    fn wake(&self) {
        self.arrived.notify_all();
        self.notify.notify_waiters();
    }

    /// Drops the lines typed while nobody asked; call it when a prompt is shown.
    pub fn discard_typed_ahead(&self) {
        self.queue().lines.clear();
    }

    /// The next line, or `None` once input ended (not waiting when one is queued).
    fn take(&self) -> Option<Option<String>> {
        let mut q = self.queue();
        match q.lines.pop_front() {
            Some(line) => Some(Some(line)),
            None if q.closed => Some(None),
            None => None,
        }
    }

    /// Waits for the next line (with its line break), or `None` once input ended. For async
    /// code: it never blocks a thread.
    pub async fn next_line(&self) -> Option<String> {
        loop {
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(line) = self.take() {
                return line;
            }
            notified.await;
        }
    }

    /// Blocks the calling thread until the next line (with its line break), or `None` once
    /// input ended. For code outside async tasks (a prompt before a run starts).
    pub fn wait_line(&self) -> Option<String> {
        let mut q = self.queue();
        loop {
            if let Some(line) = q.lines.pop_front() {
                return Some(line);
            }
            if q.closed {
                return None;
            }
            q = self
                .arrived
                .wait(q)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// A blocking reader of the keyboard's lines (those typed ahead first), for code written
    /// over [`BufRead`].
    pub fn reader(&'static self) -> KeyboardReader {
        KeyboardReader {
            keyboard: self,
            line: Vec::new(),
            at: 0,
        }
    }
}

/// [`BufRead`] over the keyboard's lines (see [`Keyboard::reader`]).
pub struct KeyboardReader {
    keyboard: &'static Keyboard,
    line: Vec<u8>,
    at: usize,
}

impl Read for KeyboardReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for KeyboardReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at >= self.line.len() {
            self.line = self.keyboard.wait_line().unwrap_or_default().into_bytes();
            self.at = 0;
        }
        Ok(&self.line[self.at..])
    }

    fn consume(&mut self, amount: usize) {
        self.at = (self.at + amount).min(self.line.len());
    }
}

#[cfg(test)]
mod tests {
    use super::Keyboard;
    use std::io::BufRead as _;

    fn leaked() -> &'static Keyboard {
        Box::leak(Box::new(Keyboard::empty()))
    }

    #[test]
    fn a_blocking_reader_and_an_async_one_take_turns_on_one_queue() {
        let k = leaked();
        k.push("first\n".into());
        k.push("second\n".into());
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert_eq!(rt.block_on(k.next_line()).as_deref(), Some("first\n"));
        assert_eq!(k.wait_line().as_deref(), Some("second\n"));
        k.close();
        assert_eq!(k.wait_line(), None);
        assert_eq!(rt.block_on(k.next_line()), None);
    }

    #[test]
    fn a_line_typed_later_wakes_a_waiting_reader() {
        let k = leaked();
        let typist = std::thread::spawn(move || {
            // The reader may or may not be waiting yet: both orders must deliver.
            k.push("yes\n".into());
        });
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let line = rt.block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(10), k.next_line()).await
        });
        typist.join().unwrap();
        assert_eq!(line.unwrap().as_deref(), Some("yes\n"));
    }

    #[test]
    fn the_reader_reads_line_by_line_after_what_was_discarded() {
        let k = leaked();
        k.push("\n".into());
        k.push("stale answer\n".into());
        k.discard_typed_ahead();
        let mut reader = k.reader();
        k.push("y\n".into());
        k.push("second\n".into());
        k.close();
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "y\n");
        line.clear();
        reader.read_line(&mut line).unwrap();
        assert_eq!(line, "second\n");
        line.clear();
        assert_eq!(reader.read_line(&mut line).unwrap(), 0, "end of input");
    }
}

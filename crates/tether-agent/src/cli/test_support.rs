//! What the agent CLIs' unit tests share: settings to start from, an observer that keeps the
//! events, and a stream fed to a parser in chunks of any size.

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

use super::CliSettings;
use super::lines::{LineParser, LineSink};
use crate::executor::{AgentEvent, TurnObserver};

/// Settings running `program` in `/ws` with a minute per turn and nothing else set.
pub(crate) fn settings(program: &str) -> CliSettings {
    CliSettings {
        program: program.into(),
        args: Vec::new(),
        env: Vec::new(),
        turn_timeout: Duration::from_secs(60),
        workspace: PathBuf::from("/ws"),
        tether: PathBuf::from("/usr/bin/tether"),
        env_remove: Vec::new(),
        mcp_extra: Vec::new(),
        sandbox: None,
        read_only_sandbox: None,
        scratch: None,
        bridge: None,
        config_dir: None,
    }
}

/// Keeps every event it is told, in order.
#[derive(Default)]
pub(crate) struct Events(Mutex<Vec<AgentEvent>>);

impl Events {
    /// The events so far.
    pub(crate) fn taken(self) -> Vec<AgentEvent> {
        self.0.into_inner().unwrap_or_else(|e| e.into_inner())
    }
}

impl TurnObserver for Events {
    fn event(&self, event: AgentEvent) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(event);
    }
}

/// `text` fed to `parser` `chunk` bytes at a time, as a CLI's output arrives: the parser
/// afterwards, and the transcript written.
pub(crate) fn feed<P: LineParser>(text: &str, chunk: usize, parser: P) -> (P, Vec<u8>) {
    let mut raw = Vec::new();
    let parser = {
        let mut sink = LineSink::new(Box::new(&mut raw), parser);
        for part in text.as_bytes().chunks(chunk) {
            sink.write_all(part).expect("the sink takes every chunk");
        }
        sink.finish().expect("the transcript is written")
    };
    (parser, raw)
}

/// Defines a test module's `feed(text, chunk) -> (Seen, events, transcript)` for a stream
/// parser made by `$new(&observer)` whose findings are its `seen`.
macro_rules! feed_fn {
    ($new:path) => {
        fn feed(text: &str, chunk: usize) -> (Seen, Vec<AgentEvent>, Vec<u8>) {
            let events = $crate::cli::test_support::Events::default();
            let (parser, raw) = $crate::cli::test_support::feed(text, chunk, $new(&events));
            let seen = parser.seen;
            (seen, events.taken(), raw)
        }
    };
}
pub(crate) use feed_fn;

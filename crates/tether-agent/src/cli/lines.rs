//! An agent CLI's JSON-lines output, read while it runs: every byte is kept as the iteration's
//! transcript, and every complete line that is JSON goes to the CLI's own parser.

use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;
use tether_tools::{ProgramCommand, ProgramRun, run_program_teed};
use tokio_util::sync::CancellationToken;

use super::Cli;
use crate::executor::ExecError;

/// Reads one CLI's JSON lines (Claude's stream-json, Codex's `exec --json`, pi's `--mode json`).
pub(crate) trait LineParser {
    /// One complete line that parsed as JSON.
    fn line(&mut self, value: &Value);
}

/// Copies the stream to the transcript and hands complete JSON lines to `parser`.
pub(crate) struct LineSink<'a, P> {
    transcript: Box<dyn Write + Send + 'a>,
    partial: Vec<u8>,
    pub(crate) parser: P,
}

impl<'a, P: LineParser> LineSink<'a, P> {
    pub(crate) fn new(transcript: Box<dyn Write + Send + 'a>, parser: P) -> Self {
        LineSink {
            transcript,
            partial: Vec::new(),
            parser,
        }
    }

    /// Reads whatever is left (a last line without a newline), flushes the transcript and
    /// returns the parser.
    pub(crate) fn finish(mut self) -> io::Result<P> {
        let rest = std::mem::take(&mut self.partial);
        self.feed(&rest);
        self.transcript.flush()?;
        Ok(self.parser)
    }

    fn feed(&mut self, line: &[u8]) {
        if let Ok(value) = serde_json::from_slice::<Value>(line) {
            self.parser.line(&value);
        }
    }
}

impl<P: LineParser> Write for LineSink<'_, P> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.transcript.write_all(buf)?;
        self.partial.extend_from_slice(buf);
        while let Some(end) = self.partial.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=end).collect();
            self.feed(&line);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.transcript.flush()
    }
}

impl Cli {
    /// Runs one turn's `command`: its stdout is kept as `transcript` and read by `parser` as it
    /// arrives. Returns how the process ended and the parser; a process that cannot start means
    /// the CLI cannot run.
    pub(crate) async fn run_streamed<P: LineParser + Send>(
        &self,
        command: &ProgramCommand,
        transcript: &Path,
        parser: P,
        cancel: &CancellationToken,
    ) -> Result<(ProgramRun, P), ExecError> {
        let transcript_err = |source| ExecError::Transcript {
            path: transcript.to_owned(),
            source,
        };
        let file = std::fs::File::create(transcript).map_err(transcript_err)?;
        let mut sink = LineSink::new(Box::new(std::io::BufWriter::new(file)), parser);
        let run = run_program_teed(command, cancel, &mut sink)
            .await
            .map_err(|e| {
                ExecError::Setup(Box::new(self.not_runnable(format!("could not start: {e}"))))
            })?;
        let parser = sink.finish().map_err(transcript_err)?;
        Ok((run, parser))
    }
}

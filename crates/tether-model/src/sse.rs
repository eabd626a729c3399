//! A small incremental Server-Sent Events decoder.
//!
//! All three model APIs stream SSE, and network chunks split frames anywhere (even between the
//! CR and LF of one line ending), so decoding must keep state across chunks. This follows the
//! WHATWG event-stream rules that matter here: `event:` and `data:` fields (one optional space
//! after the colon is dropped), several `data:` lines joined with `\n`, lines ending in LF, CRLF
//! or CR, `:` comment lines ignored, a leading BOM ignored, and a blank line dispatching the
//! frame. `id:` and `retry:` are accepted and ignored (nothing here reconnects).

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseFrame {
    /// The `event:` name, if the frame had one.
    pub event: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Turns a byte stream, fed in arbitrary chunks, into [`SseFrame`]s.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// The current, not yet terminated line.
    line: Vec<u8>,
    /// The previous chunk ended in CR: a leading LF of the next chunk belongs to it.
    after_cr: bool,
    /// Whether the stream's first bytes have been checked for a BOM.
    started: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk; appends every frame it completes to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<SseFrame>) {
        if self.started {
            self.push_bytes(chunk, out);
            return;
        }
        // A BOM may open the stream, itself split across chunks: hold bytes until it is clear.
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        self.line.extend_from_slice(chunk);
        if self.line.len() < BOM.len() && BOM.starts_with(&self.line) {
            return;
        }
        self.started = true;
        let buffered = std::mem::take(&mut self.line);
        self.push_bytes(buffered.strip_prefix(BOM).unwrap_or(&buffered), out);
    }

    fn push_bytes(&mut self, mut chunk: &[u8], out: &mut Vec<SseFrame>) {
        if chunk.is_empty() {
            // Keep `after_cr`: the LF it waits for may be in the next non-empty chunk.
            return;
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = chunk.strip_prefix(b"\n") {
                chunk = rest;
            }
        }
        while let Some(end) = chunk.iter().position(|&b| b == b'\n' || b == b'\r') {
            self.line.extend_from_slice(&chunk[..end]);
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, out);
            let ending_len = if chunk[end] == b'\r' {
                match chunk.get(end + 1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None => {
                        self.after_cr = true;
                        1
                    }
                }
            } else {
                1
            };
            chunk = &chunk[end + ending_len..];
        }
        self.line.extend_from_slice(chunk);
    }

    /// Ends the stream: a frame whose lines were all terminated but which lacked the final blank
    /// line is dispatched (servers that close right after `data: [DONE]\n` exist); an
    /// unterminated last line is dropped, as the SSE rules say.
    pub fn finish(&mut self, out: &mut Vec<SseFrame>) {
        self.line.clear();
        self.after_cr = false;
        self.dispatch(out);
    }

    /// Whether bytes of an unfinished frame are buffered.
    pub fn has_partial_frame(&self) -> bool {
        !self.line.is_empty() || self.has_data || self.event.is_some()
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseFrame>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|&b| b == b':') {
            Some(colon) => {
                let value = &line[colon + 1..];
                (&line[..colon], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &[][..]),
        };
        match field {
            b"event" => self.event = Some(String::from_utf8_lossy(value).into_owned()),
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseFrame>) {
        let event = self.event.take();
        if !self.has_data {
            // A frame without data is not dispatched (per the SSE rules); its name is dropped.
            return;
        }
        self.has_data = false;
        out.push(SseFrame {
            event,
            data: std::mem::take(&mut self.data),
        });
    }
}

#[cfg(test)]
#[path = "sse_tests.rs"]
mod tests;

//! Streaming SSE bodies, with the stream faults applied and client disconnects observed.
//!
//! A body owns a [`DisconnectGuard`]; hyper drops the body when the client goes away, and a
//! guard dropped before the body finished counts as a disconnect. That is how a cancellation
//! test knows the client really closed the connection.

use std::collections::VecDeque;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use tokio_util::sync::CancellationToken;

use super::Fault;
use super::record::Recorder;
use super::wire::Frame;

/// Counts a disconnect when dropped unless disarmed.
pub(crate) struct DisconnectGuard {
    recorder: Arc<Recorder>,
    armed: bool,
}

impl DisconnectGuard {
    pub(crate) fn new(recorder: Arc<Recorder>) -> Self {
        Self {
            recorder,
            armed: true,
        }
    }

    pub(crate) fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for DisconnectGuard {
    fn drop(&mut self) {
        if self.armed {
            self.recorder.disconnect();
        }
    }
}

enum Ending {
    /// End the body normally.
    Finish,
    /// Fail the body: hyper closes the connection without finishing the chunked encoding.
    Cut,
    /// Stay open until the client leaves or the server stops.
    Hold,
}

struct State {
    chunks: VecDeque<Bytes>,
    ending: Ending,
    guard: DisconnectGuard,
    shutdown: CancellationToken,
}

/// The body streaming `frames`, altered by `fault` (only stream faults matter here).
pub(crate) fn sse_body(
    frames: Vec<Frame>,
    fault: Option<&Fault>,
    guard: DisconnectGuard,
    shutdown: CancellationToken,
) -> Body {
    let encoded = |frames: &[Frame]| frames.iter().map(Frame::encode).collect::<VecDeque<_>>();
    let (chunks, ending) = match fault {
        Some(Fault::CutAfter(n)) => (encoded(&frames[..(*n).min(frames.len())]), Ending::Cut),
        Some(Fault::HoldAfter(n)) => (encoded(&frames[..(*n).min(frames.len())]), Ending::Hold),
        Some(Fault::MalformedAfter(n)) => {
            let n = (*n).min(frames.len());
            let mut chunks = encoded(&frames[..n]);
            let bad = frames.get(n).map_or_else(
                || Frame {
                    event: None,
                    data: "{".to_owned(),
                },
                Frame::truncated,
            );
            chunks.push_back(bad.encode());
            (chunks, Ending::Finish)
        }
        _ => (encoded(&frames), Ending::Finish),
    };
    let state = State {
        chunks,
        ending,
        guard,
        shutdown,
    };
    Body::from_stream(futures_util::stream::unfold(
        state,
        |mut state| async move {
            if let Some(chunk) = state.chunks.pop_front() {
                return Some((Ok(chunk), state));
            }
            match state.ending {
                Ending::Finish => {
                    state.guard.disarm();
                    None
                }
                Ending::Cut => {
                    // hyper drops its unflushed write buffer when a body fails, and it only flushes
                    // once the body stops producing data: yield so the frames reach the socket
                    // before the cut, as "cut after N frames" promises.
                    for _ in 0..4 {
                        tokio::task::yield_now().await;
                    }
                    state.guard.disarm();
                    state.ending = Ending::Finish;
                    let error = std::io::Error::new(
                        std::io::ErrorKind::ConnectionAborted,
                        "fake model server: stream cut by fault injection",
                    );
                    Some((Err(error), state))
                }
                Ending::Hold => {
                    state.shutdown.cancelled().await;
                    state.guard.disarm();
                    None
                }
            }
        },
    ))
}

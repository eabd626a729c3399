//! [`Follower`]: reading a topic's messages as they come, losing none and doubling none.
//!
//! ntfy's `/<topic>/json` is a long-lived response of one JSON event per line: `open` when the
//! subscription starts, `keepalive` every so often (45 s by default), `message` for each
//! message. Streams drop (a proxy's idle timeout, a server restart, a laptop's sleep), so the
//! follower remembers the id of the last message it handed out and reconnects with
//! `since=<that id>`: the server sends what was published meanwhile from its cache. A message
//! can still come twice (a reconnect racing a delivery, a server replaying), so ids already
//! handed out are remembered too and skipped. A stream silent for longer than
//! [`FollowOptions::idle_timeout`] (no keepalive either) is taken for dead and reopened.

use std::collections::{HashSet, VecDeque};
use std::time::Duration;

use futures_util::StreamExt as _;
use futures_util::stream::BoxStream;
use tokio_util::sync::CancellationToken;

use crate::client::NtfyClient;
use crate::error::NtfyError;
use crate::wire::Message;

/// How many handed-out message ids are remembered for deduplication.
const SEEN_CAP: usize = 4096;
/// The longest line accepted from a stream (ntfy's messages are at most 4 KB of text).
const MAX_LINE: usize = 256 * 1024;

/// How a [`Follower`] waits and reconnects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FollowOptions {
    /// A stream with nothing on it (not even a keepalive) for this long is reopened.
    pub idle_timeout: Duration,
    /// The first delay before reconnecting after a failure; it doubles per failure in a row.
    pub initial_backoff: Duration,
    /// The cap on that delay.
    pub max_backoff: Duration,
}

impl Default for FollowOptions {
    fn default() -> Self {
        FollowOptions {
            idle_timeout: Duration::from_secs(120),
            initial_backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// Follows one topic's messages across dropped streams.
pub struct Follower {
    client: NtfyClient,
    topic: String,
    /// Where the next stream starts: the last message id handed out, or the caller's start.
    since: String,
    last_id: Option<String>,
    seen: Seen,
    options: FollowOptions,
    stream: Option<Lines>,
    connects: u64,
}

impl Follower {
    /// A follower of `topic` whose first stream starts at `since` (a message id — the last one
    /// handled before, so a restart resumes where it stopped — or a Unix time, or `all`).
    pub fn new(client: NtfyClient, topic: &str, since: &str, options: FollowOptions) -> Self {
        Follower {
            client,
            topic: topic.to_owned(),
            since: since.to_owned(),
            last_id: None,
            seen: Seen::default(),
            options,
            stream: None,
            connects: 0,
        }
    }

    /// The id of the last message handed out, if any.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// How many streams were opened so far.
    pub fn connects(&self) -> u64 {
        self.connects
    }

    /// The next message not handed out before; waits (reconnecting as needed) until there is
    /// one. Errs only when `cancel` fires or the server refuses the subscription for good
    /// (a wrong token, a forbidden topic).
    pub async fn next(&mut self, cancel: &CancellationToken) -> Result<Message, NtfyError> {
        let mut backoff =
            tether_http::Backoff::new(self.options.initial_backoff, self.options.max_backoff);
        loop {
            if cancel.is_cancelled() {
                return Err(NtfyError::Cancelled);
            }
            let Some(stream) = self.stream.as_mut() else {
                let opened = tether_http::guarded(
                    self.client.open_stream(&self.topic, &self.since),
                    cancel,
                    None,
                )
                .await;
                match opened {
                    Ok(response) => {
                        self.connects += 1;
                        self.stream = Some(Lines::new(response));
                    }
                    Err(NtfyError::Cancelled) => return Err(NtfyError::Cancelled),
                    Err(e) if e.is_retryable() => {
                        let delay = backoff.delay(&e);
                        tracing::debug!(error = %e, ?delay, "ntfy subscription failed; trying again");
                        tether_http::pause::<NtfyError>(delay, cancel, None).await?;
                    }
                    Err(e) => return Err(e),
                }
                continue;
            };
            let line = tokio::select! {
                () = cancel.cancelled() => return Err(NtfyError::Cancelled),
                line = tokio::time::timeout(self.options.idle_timeout, stream.next()) => line,
            };
            let line = match line {
                Ok(Some(Ok(line))) => line,
                Ok(Some(Err(e))) => {
                    tracing::debug!(error = %e, "ntfy stream broke; reconnecting");
                    self.reconnect_after(&mut backoff, cancel).await?;
                    continue;
                }
                Ok(None) => {
                    tracing::debug!("ntfy stream ended; reconnecting");
                    self.reconnect_after(&mut backoff, cancel).await?;
                    continue;
                }
                Err(_) => {
                    tracing::debug!("ntfy stream went silent; reconnecting");
                    self.stream = None;
                    continue;
                }
            };
            let event: Message = match serde_json::from_str(&line) {
                Ok(event) => event,
                Err(e) => {
                    tracing::debug!(error = %e, "skipping a line of the ntfy stream");
                    continue;
                }
            };
            if event.event == "open" {
                backoff.reset();
            }
            if !event.is_message() || !self.seen.insert(&event.id) {
                continue;
            }
            self.since.clone_from(&event.id);
            self.last_id = Some(event.id.clone());
            return Ok(event);
        }
    }

    /// Drops the stream and pauses before the next one (a stream that opens and ends at once
    /// must not make a busy loop).
    async fn reconnect_after(
        &mut self,
        backoff: &mut tether_http::Backoff,
        cancel: &CancellationToken,
    ) -> Result<(), NtfyError> {
        self.stream = None;
        let delay = backoff.exponential();
        tether_http::pause::<NtfyError>(delay, cancel, None).await
    }
}

/// Message ids already handed out, the oldest forgotten past [`SEEN_CAP`].
#[derive(Default)]
struct Seen {
    set: HashSet<String>,
    order: VecDeque<String>,
}

impl Seen {
    /// Whether `id` is new (and remembers it).
    fn insert(&mut self, id: &str) -> bool {
        if self.set.contains(id) {
            return false;
        }
        if self.order.len() == SEEN_CAP
            && let Some(old) = self.order.pop_front()
        {
            self.set.remove(&old);
        }
        self.set.insert(id.to_owned());
        self.order.push_back(id.to_owned());
        true
    }
}

/// A response body split into lines.
struct Lines {
    body: BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: Vec<u8>,
}

impl Lines {
    fn new(response: reqwest::Response) -> Self {
        Lines {
            body: response.bytes_stream().boxed(),
            buffer: Vec::new(),
        }
    }

    /// The next whole line (without its newline), `None` at the end of the body.
    async fn next(&mut self) -> Option<Result<String, NtfyError>> {
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let text = String::from_utf8_lossy(&line[..end]).trim().to_owned();
                if text.is_empty() {
                    continue;
                }
                return Some(Ok(text));
            }
            match self.body.next().await? {
                Ok(chunk) => {
                    self.buffer.extend_from_slice(&chunk);
                    if self.buffer.len() > MAX_LINE {
                        return Some(Err(NtfyError::Protocol("a line too long".to_owned())));
                    }
                }
                Err(e) => return Some(Err(NtfyError::transport(&e))),
            }
        }
    }
}

//! Every request the fake server received, and waiting for the Nth one or for disconnects.
//!
//! Tests assert on what the client really sent (a model reads it), and must wait for events
//! rather than sleep; a `watch` channel per counter makes both cheap.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::http::HeaderMap;
use serde_json::Value;
use tether_model::Usage;
use tokio::sync::watch;

use crate::wait::WaitTimeout;

/// Headers whose values are credentials; recorded as `<redacted>`.
const SECRET_HEADERS: [&str; 3] = ["authorization", "x-api-key", "api-key"];

/// One request as the fake server received it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    /// 0-based arrival order.
    pub index: usize,
    /// The request path, e.g. `/v1/messages`.
    pub path: String,
    /// Headers in arrival order, names lower-case, credential values replaced by `<redacted>`.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON (`null` when it was not JSON).
    pub body: Value,
    /// The body as sent.
    pub raw_body: String,
    /// When it arrived (its headers and body read): what latency measurements time against.
    pub received: Instant,
    /// The usage the server reported in its answer (with the prompt cache's reads and writes
    /// when it plays one); `None` until it answered, and for a request answered with an error.
    pub usage: Option<Usage>,
}

impl RecordedRequest {
    /// The first value of a header (name case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

#[derive(Debug)]
pub(crate) struct Recorder {
    requests: Mutex<Vec<RecordedRequest>>,
    count: watch::Sender<usize>,
    disconnects: watch::Sender<usize>,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Self {
            requests: Mutex::new(Vec::new()),
            count: watch::Sender::new(0),
            disconnects: watch::Sender::new(0),
        }
    }

    /// Records a request and returns its index.
    pub(crate) fn record(&self, path: &str, headers: &HeaderMap, raw: &[u8]) -> usize {
        let received = Instant::now();
        let raw_body = String::from_utf8_lossy(raw).into_owned();
        let body = serde_json::from_slice(raw).unwrap_or(Value::Null);
        let headers = headers
            .iter()
            .map(|(name, value)| {
                let name = name.as_str().to_ascii_lowercase();
                let value = if SECRET_HEADERS.contains(&name.as_str()) {
                    "<redacted>".to_owned()
                } else {
                    String::from_utf8_lossy(value.as_bytes()).into_owned()
                };
                (name, value)
            })
            .collect();
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        let index = requests.len();
        requests.push(RecordedRequest {
            index,
            path: path.to_owned(),
            headers,
            body,
            raw_body,
            received,
            usage: None,
        });
        drop(requests);
        self.count.send_modify(|count| *count += 1);
        index
    }

    /// Notes the usage the answer to request `index` reported.
    pub(crate) fn answered(&self, index: usize, usage: Usage) {
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(request) = requests.get_mut(index) {
            request.usage = Some(usage);
        }
    }

    pub(crate) fn requests(&self) -> Vec<RecordedRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn count(&self) -> usize {
        *self.count.borrow()
    }

    pub(crate) fn disconnect(&self) {
        self.disconnects.send_modify(|count| *count += 1);
    }

    pub(crate) fn disconnects(&self) -> usize {
        *self.disconnects.borrow()
    }

    pub(crate) async fn wait_for_request(
        &self,
        index: usize,
        timeout: Duration,
    ) -> Result<RecordedRequest, WaitTimeout> {
        wait(&self.count, index + 1, timeout, || {
            format!("request #{index}")
        })
        .await?;
        self.requests()
            .get(index)
            .cloned()
            .ok_or_else(|| WaitTimeout {
                what: format!("request #{index}"),
                timeout,
                seen: self.count(),
            })
    }

    pub(crate) async fn wait_for_disconnects(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<(), WaitTimeout> {
        wait(&self.disconnects, n, timeout, || {
            format!("{n} client disconnect(s)")
        })
        .await
    }
}

async fn wait(
    counter: &watch::Sender<usize>,
    at_least: usize,
    timeout: Duration,
    what: impl Fn() -> String,
) -> Result<(), WaitTimeout> {
    let mut rx = counter.subscribe();
    match tokio::time::timeout(timeout, rx.wait_for(|count| *count >= at_least)).await {
        Ok(Ok(_)) => Ok(()),
        _ => Err(WaitTimeout {
            what: what(),
            timeout,
            seen: *counter.borrow(),
        }),
    }
}

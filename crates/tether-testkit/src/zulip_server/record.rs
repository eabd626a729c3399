//! Every request the fake Zulip server received, counted per endpoint, with waits on the counts.
//!
//! Tests assert that waiting is cheap (requests per long-poll timeout) and that cleanup
//! happened (the `DELETE /events` arrived), and they wait on counts instead of sleeping.
//! Credentials are never recorded: only whether they were right.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::fault::Endpoint;
use crate::wait::WaitTimeout;

/// One request as the fake Zulip server received it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZulipRequest {
    /// 0-based arrival order over all requests.
    pub index: usize,
    /// 0-based arrival order among requests to the same endpoint.
    pub nth: usize,
    /// The endpoint, when the route is one the server implements.
    pub endpoint: Option<Endpoint>,
    /// `GET`, `POST`, `DELETE`…
    pub method: String,
    /// The path, e.g. `/api/v1/events`.
    pub path: String,
    /// The parameters, decoded: the query for GET, the form body otherwise.
    pub params: Vec<(String, String)>,
    /// The `Content-Type` header, if any.
    pub content_type: Option<String>,
    /// Whether the Basic credentials were the bot's.
    pub authorized: bool,
    /// When it arrived.
    pub at: Instant,
}

impl ZulipRequest {
    /// The first value of parameter `name`.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

/// Counts per endpoint (by [`Endpoint::slot`]) plus the total.
type Counts = [usize; 7];
const TOTAL: usize = 6;

#[derive(Debug)]
pub(crate) struct Recorder {
    requests: Mutex<Vec<ZulipRequest>>,
    counts: watch::Sender<Counts>,
}

impl Recorder {
    pub(crate) fn new() -> Self {
        Self {
            requests: Mutex::new(Vec::new()),
            counts: watch::Sender::new([0; 7]),
        }
    }

    /// Records a request; returns its index among its endpoint's requests.
    pub(crate) fn record(&self, mut request: ZulipRequest) -> usize {
        // Counting under the lock keeps `nth` unique when requests arrive together.
        let mut requests = self.requests.lock().unwrap_or_else(PoisonError::into_inner);
        request.index = requests.len();
        let endpoint = request.endpoint;
        let nth = endpoint.map_or(0, |e| self.counts.borrow()[e.slot()]);
        request.nth = nth;
        requests.push(request);
        self.counts.send_modify(|counts| {
            if let Some(endpoint) = endpoint {
                counts[endpoint.slot()] += 1;
            }
            counts[TOTAL] += 1;
        });
        drop(requests);
        nth
    }

    pub(crate) fn requests(&self) -> Vec<ZulipRequest> {
        self.requests
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub(crate) fn count(&self, endpoint: Endpoint) -> usize {
        self.counts.borrow()[endpoint.slot()]
    }

    pub(crate) fn total(&self) -> usize {
        self.counts.borrow()[TOTAL]
    }

    pub(crate) async fn wait_for_count(
        &self,
        endpoint: Endpoint,
        at_least: usize,
        timeout: Duration,
    ) -> Result<(), WaitTimeout> {
        let slot = endpoint.slot();
        let mut rx = self.counts.subscribe();
        let reached = tokio::time::timeout(timeout, rx.wait_for(|c| c[slot] >= at_least)).await;
        match reached {
            Ok(Ok(_)) => Ok(()),
            _ => Err(WaitTimeout {
                what: format!("{at_least} request(s) to {endpoint:?}"),
                timeout,
                seen: self.count(endpoint),
            }),
        }
    }
}

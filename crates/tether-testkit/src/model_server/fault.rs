//! Faults the fake server injects, by request index or for the next N requests.
//!
//! Status faults (429, 5xx) answer before the script is consulted, so the retried request gets
//! the same scripted turn. Stream faults (cut, malformed, hold) play part of a turn, which is
//! then used up.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// A fault to inject into one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// HTTP 429 with the API's rate-limit error body, and `retry-after: <value>` when given
    /// (as written: `"2"`, `"0.05"`).
    RateLimited {
        /// The `retry-after` header value.
        retry_after: Option<String>,
    },
    /// This HTTP status (500, 503, …) with the API's error body.
    Status(u16),
    /// A 429 with the API's error body saying `message` (a subscription's usage limit as a
    /// provider words it: "… try again in 2 hours").
    UsageLimit {
        /// The error message.
        message: String,
    },
    /// Sends this many SSE frames, then closes the connection without ending the body.
    CutAfter(usize),
    /// Sends this many SSE frames, then one whose JSON is truncated, then ends the body.
    MalformedAfter(usize),
    /// Sends this many SSE frames, then holds the stream open until the client disconnects (or
    /// the server shuts down). The disconnect is counted (see
    /// [`crate::FakeModelServer::wait_for_disconnects`]).
    HoldAfter(usize),
    /// Never sends the response headers until the client disconnects (or shutdown).
    HoldBeforeHeaders,
}

impl Fault {
    /// A 429 with `retry-after: <value>`.
    pub fn rate_limited(retry_after: impl Into<String>) -> Self {
        Fault::RateLimited {
            retry_after: Some(retry_after.into()),
        }
    }
}

#[derive(Debug, Default)]
struct Plan {
    by_index: HashMap<usize, Fault>,
    next: VecDeque<(Fault, usize)>,
}

/// The faults still to inject.
#[derive(Debug, Default)]
pub(crate) struct FaultPlan {
    plan: Mutex<Plan>,
}

impl FaultPlan {
    pub(crate) fn on(&self, index: usize, fault: Fault) {
        self.lock().by_index.insert(index, fault);
    }

    pub(crate) fn next(&self, count: usize, fault: Fault) {
        if count > 0 {
            self.lock().next.push_back((fault, count));
        }
    }

    /// The fault for request `index`: one planned for that index wins over "next N".
    pub(crate) fn take(&self, index: usize) -> Option<Fault> {
        let mut plan = self.lock();
        if let Some(fault) = plan.by_index.remove(&index) {
            return Some(fault);
        }
        let (fault, left) = plan.next.front_mut()?;
        let fault = fault.clone();
        *left -= 1;
        if *left == 0 {
            plan.next.pop_front();
        }
        Some(fault)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

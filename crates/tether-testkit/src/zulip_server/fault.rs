//! What the fake Zulip server does wrong on demand, and what happens in the realm at chosen
//! moments (a human replying "between the post and the first poll", queues expiring mid-wait).
//!
//! Both are keyed by endpoint and by the 0-based index of the request **to that endpoint**, so a
//! test (or a seeded chaos schedule) can say "the third long-poll gets a 429" precisely.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use axum::http::Method;

use super::realm::ZulipUser;

/// The endpoints the fake server implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Endpoint {
    /// `POST /api/v1/messages`.
    SendMessage,
    /// `GET /api/v1/messages`.
    GetMessages,
    /// `POST /api/v1/register`.
    Register,
    /// `GET /api/v1/events` (the long-poll).
    GetEvents,
    /// `DELETE /api/v1/events`.
    DeleteQueue,
    /// `GET /api/v1/users/me`.
    UsersMe,
}

impl Endpoint {
    /// Every endpoint.
    pub const ALL: [Endpoint; 6] = [
        Endpoint::SendMessage,
        Endpoint::GetMessages,
        Endpoint::Register,
        Endpoint::GetEvents,
        Endpoint::DeleteQueue,
        Endpoint::UsersMe,
    ];

    /// The endpoint a method and path name, if any.
    pub fn of(method: &Method, path: &str) -> Option<Self> {
        let path = path.strip_prefix("/api/v1")?.trim_end_matches('/');
        match (method.as_str(), path) {
            ("POST", "/messages") => Some(Endpoint::SendMessage),
            ("GET", "/messages") => Some(Endpoint::GetMessages),
            ("POST", "/register") => Some(Endpoint::Register),
            ("GET", "/events") => Some(Endpoint::GetEvents),
            ("DELETE", "/events") => Some(Endpoint::DeleteQueue),
            ("GET", "/users/me") => Some(Endpoint::UsersMe),
            _ => None,
        }
    }

    pub(crate) fn slot(self) -> usize {
        match self {
            Endpoint::SendMessage => 0,
            Endpoint::GetMessages => 1,
            Endpoint::Register => 2,
            Endpoint::GetEvents => 3,
            Endpoint::DeleteQueue => 4,
            Endpoint::UsersMe => 5,
        }
    }
}

/// A fault injected into one response.
#[derive(Debug, Clone, PartialEq)]
pub enum ZulipFault {
    /// HTTP 429 `RATE_LIMIT_HIT` with a float `retry-after` in the body and the header.
    RateLimited {
        /// Seconds, e.g. `0.05`.
        retry_after: f64,
    },
    /// This 5xx status with an HTML body, as a proxy in front of Zulip sends. Nothing is done.
    ServerError(u16),
    /// The connection is dropped before anything is done or answered.
    ConnectionReset,
    /// The request takes effect (a message is stored, a queue registered), then the connection
    /// is dropped before the answer: a re-sent post would appear twice.
    ResetAfterHandling,
    /// For a request naming a queue: the queue expires first, so the answer is HTTP 400
    /// `BAD_EVENT_QUEUE_ID`.
    BadEventQueue,
    /// For `GET /events`: the previous batch (already acknowledged) is sent again, and every
    /// event of this batch twice, as at-least-once delivery allows.
    DuplicateDelivery,
}

/// Something that happens in the realm at a chosen request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// `sender` posts `content` in `topic` of `stream` (the server's stream when `None`).
    Post {
        /// Who posts (a human, or the bot to fake an echo).
        sender: ZulipUser,
        /// The stream; `None` for the server's stream.
        stream: Option<String>,
        /// The topic.
        topic: String,
        /// The content.
        content: String,
    },
    /// Every event queue expires (a poll in progress gets `BAD_EVENT_QUEUE_ID`).
    ExpireQueues,
}

/// When an [`Action`] runs relative to its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Moment {
    /// As soon as the request arrives, before anything else (a reply landing while a long-poll
    /// is already waiting).
    OnArrival,
    /// Once the response is decided, before it is sent (the client cannot have sent its next
    /// request yet).
    AfterHandling,
}

#[derive(Debug, Default)]
struct Plan {
    faults_at: HashMap<(Endpoint, usize), ZulipFault>,
    faults_next: HashMap<Endpoint, VecDeque<(ZulipFault, usize)>>,
    actions: Vec<(Endpoint, usize, Moment, Action)>,
}

/// The faults and actions still to come.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    plan: Mutex<Plan>,
}

impl Schedule {
    pub(crate) fn fault_at(&self, endpoint: Endpoint, nth: usize, fault: ZulipFault) {
        self.lock().faults_at.insert((endpoint, nth), fault);
    }

    pub(crate) fn fault_next(&self, endpoint: Endpoint, count: usize, fault: ZulipFault) {
        if count > 0 {
            let mut plan = self.lock();
            plan.faults_next
                .entry(endpoint)
                .or_default()
                .push_back((fault, count));
        }
    }

    pub(crate) fn action_at(&self, endpoint: Endpoint, nth: usize, moment: Moment, action: Action) {
        self.lock().actions.push((endpoint, nth, moment, action));
    }

    /// The fault for request `nth` of `endpoint`; one planned by index wins over "next N".
    pub(crate) fn take_fault(&self, endpoint: Endpoint, nth: usize) -> Option<ZulipFault> {
        let mut plan = self.lock();
        if let Some(fault) = plan.faults_at.remove(&(endpoint, nth)) {
            return Some(fault);
        }
        let queue = plan.faults_next.get_mut(&endpoint)?;
        let (fault, left) = queue.front_mut()?;
        let fault = fault.clone();
        *left -= 1;
        if *left == 0 {
            queue.pop_front();
        }
        Some(fault)
    }

    /// The actions due at this request and moment, in the order they were planned.
    pub(crate) fn take_actions(
        &self,
        endpoint: Endpoint,
        nth: usize,
        moment: Moment,
    ) -> Vec<Action> {
        let mut plan = self.lock();
        let mut due = Vec::new();
        plan.actions.retain(|(e, n, m, action)| {
            let now = *e == endpoint && *n == nth && *m == moment;
            if now {
                due.push(action.clone());
            }
            !now
        });
        due
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Plan> {
        self.plan.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

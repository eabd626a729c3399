//! What the fake Slack does wrong on demand, keyed by Web API method and counted down: "the
//! next two `chat.postMessage` get a 429", "the next post is stored but its answer is lost".

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

/// The Web API methods the fake implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SlackMethod {
    /// `auth.test`.
    AuthTest,
    /// `apps.connections.open`.
    ConnectionsOpen,
    /// `chat.postMessage`.
    PostMessage,
    /// `chat.update`.
    Update,
    /// `conversations.replies`.
    Replies,
    /// `conversations.history`.
    History,
    /// `users.info`.
    UsersInfo,
}

impl SlackMethod {
    /// Every method.
    pub const ALL: [SlackMethod; 7] = [
        SlackMethod::AuthTest,
        SlackMethod::ConnectionsOpen,
        SlackMethod::PostMessage,
        SlackMethod::Update,
        SlackMethod::Replies,
        SlackMethod::History,
        SlackMethod::UsersInfo,
    ];

    /// The method a path segment names.
    pub fn of(name: &str) -> Option<Self> {
        Some(match name {
            "auth.test" => SlackMethod::AuthTest,
            "apps.connections.open" => SlackMethod::ConnectionsOpen,
            "chat.postMessage" => SlackMethod::PostMessage,
            "chat.update" => SlackMethod::Update,
            "conversations.replies" => SlackMethod::Replies,
            "conversations.history" => SlackMethod::History,
            "users.info" => SlackMethod::UsersInfo,
            _ => return None,
        })
    }

    /// Its name in the API.
    pub fn name(self) -> &'static str {
        match self {
            SlackMethod::AuthTest => "auth.test",
            SlackMethod::ConnectionsOpen => "apps.connections.open",
            SlackMethod::PostMessage => "chat.postMessage",
            SlackMethod::Update => "chat.update",
            SlackMethod::Replies => "conversations.replies",
            SlackMethod::History => "conversations.history",
            SlackMethod::UsersInfo => "users.info",
        }
    }
}

/// A fault injected into one Web API response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlackFault {
    /// HTTP 429 with `Retry-After` (whole seconds, as Slack sends) and `ratelimited`.
    RateLimited {
        /// The header's value.
        retry_after_secs: u64,
    },
    /// This 5xx status with an HTML body, as a proxy sends. Nothing is done.
    ServerError(u16),
    /// The connection is dropped before anything is done or answered.
    ConnectionReset,
    /// The request takes effect (a message is stored), then the connection is dropped before
    /// the answer: posting again would post twice.
    ResetAfterHandling,
    /// HTTP 200 `{"ok":false,"error":…}` with this code (`invalid_auth`, `not_in_channel`, …).
    Error(String),
}

#[derive(Debug, Default)]
pub(crate) struct Schedule {
    next: Mutex<HashMap<SlackMethod, VecDeque<(SlackFault, usize)>>>,
}

impl Schedule {
    pub(crate) fn add(&self, method: SlackMethod, count: usize, fault: SlackFault) {
        if count > 0 {
            self.lock()
                .entry(method)
                .or_default()
                .push_back((fault, count));
        }
    }

    pub(crate) fn take(&self, method: SlackMethod) -> Option<SlackFault> {
        let mut next = self.lock();
        let queue = next.get_mut(&method)?;
        let (fault, left) = queue.front_mut()?;
        let fault = fault.clone();
        *left -= 1;
        if *left == 0 {
            queue.pop_front();
        }
        Some(fault)
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<SlackMethod, VecDeque<(SlackFault, usize)>>> {
        self.next.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

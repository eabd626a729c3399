//! Waiting for the first human answer to one posted question, losslessly.
//!
//! A [`PendingReply`] subscribes to the client's shared Socket Mode connection for its thread,
//! and after every `hello` (the first connection, every reconnect) reads the thread with
//! `conversations.replies` from the question on, so a reply posted while no socket was open is
//! still found. Between reconnects it only listens: no HTTP request is made while the socket is
//! up. Replies are filtered ([`crate::filter`]) and the oldest wins.

use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::client::Shared;
use crate::error::SlackError;
use crate::filter::{Reply, ReplyFilter};
use crate::hub::Status;
use crate::wire::Ts;

/// Where a conversation lives: a channel and the ts of the thread's first message.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Thread {
    /// The channel's ID.
    pub channel: String,
    /// The thread's parent message.
    pub ts: Ts,
}

/// A question posted (or being resumed) whose answer has not arrived yet.
#[derive(Debug)]
pub struct PendingReply {
    shared: Arc<Shared>,
    filter: ReplyFilter,
    deadline: Option<Instant>,
}

impl PendingReply {
    pub(crate) fn new(shared: Arc<Shared>, filter: ReplyFilter) -> Self {
        PendingReply {
            shared,
            filter,
            deadline: None,
        }
    }

    /// The conversation: persist it with [`PendingReply::question_ts`] to resume after a crash.
    pub fn thread(&self) -> Thread {
        Thread {
            channel: self.filter.channel.clone(),
            ts: self.filter.thread.clone(),
        }
    }

    /// The question's own message.
    pub fn question_ts(&self) -> &Ts {
        &self.filter.question
    }

    /// Gives up at `deadline` with [`SlackError::DeadlineReached`] (by default it waits
    /// forever: a human may answer hours later).
    #[must_use]
    pub fn with_deadline(mut self, deadline: std::time::Instant) -> Self {
        self.deadline = Some(Instant::from_std(deadline));
        self
    }

    /// Waits for the first human answer. Transient failures are retried without limit; a
    /// refused token ends the wait with its error.
    pub async fn wait(self, cancel: &CancellationToken) -> Result<Reply, SlackError> {
        let outcome = self.run(cancel).await;
        match &outcome {
            Ok(reply) => {
                tracing::info!(thread = %self.filter.thread, user = %reply.user, "slack answer received")
            }
            Err(err) => {
                tracing::info!(thread = %self.filter.thread, error = %err, "slack wait ended")
            }
        }
        outcome
    }

    async fn run(&self, cancel: &CancellationToken) -> Result<Reply, SlackError> {
        let mut sub = self
            .shared
            .hub
            .subscribe(&self.filter.channel, &self.filter.thread);
        let mut caught_up = 0u64;
        loop {
            let status = sub.status.borrow_and_update().clone();
            match status {
                Status::Failed(err) => return Err(err),
                Status::Up(generation) if generation != caught_up => {
                    if let Some(reply) = self.catch_up(cancel).await? {
                        return Ok(reply);
                    }
                    caught_up = generation;
                    continue;
                }
                Status::Up(_) | Status::Down => {}
            }
            let expiry = async {
                match self.deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(SlackError::Cancelled),
                () = expiry => return Err(SlackError::DeadlineReached),
                Some(incoming) = sub.events.recv() => {
                    if let Some(reply) = self.filter.accept(&incoming) {
                        return Ok(reply);
                    }
                }
                changed = sub.status.changed() => {
                    if changed.is_err() {
                        return Err(SlackError::Cancelled);
                    }
                }
            }
        }
    }

    /// Reads the thread from the question on, page by page, and returns the oldest reply.
    async fn catch_up(&self, cancel: &CancellationToken) -> Result<Option<Reply>, SlackError> {
        let (channel, thread, question) = (
            self.filter.channel.as_str(),
            &self.filter.thread,
            &self.filter.question,
        );
        let limit = self.shared.options.catch_up_page.max(1);
        let mut cursor: Option<String> = None;
        let mut found: Option<Reply> = None;
        loop {
            let at = cursor.clone();
            let page = self
                .shared
                .options
                .retry
                .retrying(
                    "conversations.replies",
                    &self.shared.api,
                    cancel,
                    self.deadline,
                    None,
                    |api| {
                        let at = at.clone();
                        async move {
                            api.replies(channel, thread, Some(question), limit, at.as_deref())
                                .await
                        }
                    },
                )
                .await?;
            if let Some(reply) = self.filter.first_reply(&page.messages)
                && found.as_ref().is_none_or(|f| reply.ts < f.ts)
            {
                found = Some(reply);
            }
            match page.next_cursor {
                Some(next) if found.is_none() => cursor = Some(next),
                _ => return Ok(found),
            }
        }
    }
}

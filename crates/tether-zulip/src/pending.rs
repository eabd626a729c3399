//! Waiting for the first human reply to one posted question, losslessly: a reply posted while the
//! event queue was lost is fetched with `GET /messages`, so none is missed.
//!
//! A [`PendingReply`] owns the event queue narrowed to the question's topic. It long-polls that
//! queue (one request per server long-poll timeout), and whenever the queue is lost
//! (`BAD_EVENT_QUEUE_ID`, or a fresh start after a crash) it registers a new queue **first** and
//! then reads every message newer than the question with `GET /messages`, so a reply posted
//! while no queue existed is still found. Messages are deduplicated by id and re-checked against
//! the exact topic, since narrows may match loosely and delivery is at least once.

use std::sync::Arc;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::api::ZulipApi;
use crate::client::Shared;
use crate::error::ZulipError;
use crate::filter::ReplyFilter;
use crate::queue::QueueGuard;
use crate::retry::{Backoff, guarded, pause};
use crate::wire::{BotIdentity, Event, Message, MessageId};

/// Losing the queue this many times in a row (without one good poll) makes the client back
/// off between re-registrations instead of re-registering at once.
const QUICK_RE_REGISTRATIONS: u32 = 1;

/// Other 400s from `GET /events` (pruned events, an event not in the queue) mean the client's
/// bookkeeping is off; it re-registers, and gives up after this many in a row.
const MAX_REJECTED_POLLS: u32 = 3;

/// How many of the topic's newest messages are searched for a post whose answer was lost.
const RECENT_FOR_ECHO: u32 = 50;

/// The human's answer to a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// The reply as the human wrote it (raw Markdown).
    pub text: String,
    /// Who answered: their full name.
    pub sender_full_name: String,
    /// Who answered: their email.
    pub sender_email: String,
    /// Who answered: their user id.
    pub sender_id: u64,
    /// The reply's message id.
    pub message_id: MessageId,
    /// The question's message id (the reply is newer).
    pub question_id: MessageId,
    /// The topic (`thread_id`).
    pub topic: String,
}

/// A question posted (or being resumed) whose reply has not arrived yet.
///
/// Dropping it without [`PendingReply::wait`] finishing deregisters its queue in the
/// background, best effort.
#[derive(Debug)]
pub struct PendingReply {
    shared: Arc<Shared>,
    topic: String,
    question_id: MessageId,
    filter: ReplyFilter,
    queue: Option<QueueGuard>,
    /// Messages read from the queue before the question's id was known.
    buffered: Vec<Message>,
    /// Read `GET /messages` before the next poll (the queue is new, messages may be missed).
    catch_up: bool,
    /// The realm's newest message id when the first queue was registered: a message of the
    /// bot's newer than this was posted by this question.
    posted_after: Option<MessageId>,
    deadline: Option<Instant>,
}

impl PendingReply {
    pub(crate) fn new(
        shared: Arc<Shared>,
        topic: String,
        bot: &BotIdentity,
        question_id: MessageId,
        queue: Option<QueueGuard>,
    ) -> Self {
        let filter = ReplyFilter::new(
            &shared.stream,
            &topic,
            bot.user_id,
            shared.api.bot_email(),
            question_id,
        );
        Self {
            shared,
            topic,
            question_id,
            filter,
            queue,
            buffered: Vec::new(),
            catch_up: false,
            posted_after: None,
            deadline: None,
        }
    }

    /// The question's message id: persist it, and pass it to
    /// [`crate::ZulipClient::resume`] after a crash.
    pub fn question_id(&self) -> MessageId {
        self.question_id
    }

    /// The topic (`thread_id`).
    pub fn topic(&self) -> &str {
        &self.topic
    }

    /// Gives up at `deadline` with [`ZulipError::DeadlineReached`] (by default it waits
    /// forever: a human may answer hours later).
    #[must_use]
    pub fn with_deadline(mut self, deadline: std::time::Instant) -> Self {
        self.deadline = Some(Instant::from_std(deadline));
        self
    }

    /// Waits for the first human reply newer than the question. The queue is deregistered
    /// however this ends: a reply, [`ZulipError::Cancelled`], [`ZulipError::DeadlineReached`]
    /// or a fatal error. Transient failures are retried without limit.
    pub async fn wait(mut self, cancel: &CancellationToken) -> Result<Reply, ZulipError> {
        let outcome = self.run(cancel).await;
        if let Some(queue) = self.queue.take() {
            queue.close().await;
        }
        match &outcome {
            Ok(reply) => tracing::info!(
                topic = %self.topic,
                message_id = %reply.message_id,
                "zulip reply received"
            ),
            Err(err) => tracing::info!(topic = %self.topic, error = %err, "zulip wait ended"),
        }
        outcome
    }

    async fn run(&mut self, cancel: &CancellationToken) -> Result<Reply, ZulipError> {
        let buffered = std::mem::take(&mut self.buffered);
        if let Some(message) = self.filter.first_reply(&buffered) {
            return Ok(self.reply(message));
        }
        let mut backoff = Backoff::from(self.shared.options.retry.clone());
        let mut lost_queues = 0u32;
        let mut rejected_polls = 0u32;
        loop {
            if self.queue.is_none() {
                self.register(cancel, None).await?;
                self.catch_up = true;
            }
            if self.catch_up {
                if let Some(message) = self.catch_up(cancel).await? {
                    return Ok(self.reply(message));
                }
                self.catch_up = false;
            }
            let Some(queue) = self.queue.as_mut() else {
                continue;
            };
            let api = &self.shared.api;
            let poll = api.get_events(queue.queue_id(), queue.last_event_id(), false);
            match guarded(poll, cancel, self.deadline).await {
                Ok(events) if events.is_empty() => {
                    // A real server answers a long-poll with a heartbeat at worst; an empty
                    // answer (a superseded poll, a client-side timeout) must not become a
                    // busy loop.
                    let delay = backoff.exponential();
                    pause(delay, cancel, self.deadline).await?;
                }
                Ok(events) => {
                    backoff.reset();
                    lost_queues = 0;
                    rejected_polls = 0;
                    queue.ack(&events);
                    if let Some(message) = self.filter.first_reply(messages(&events)) {
                        return Ok(self.reply(message));
                    }
                }
                Err(ZulipError::BadEventQueue { queue_id }) => {
                    tracing::info!(%queue_id, "zulip queue expired; re-registering and catching up");
                    if let Some(queue) = self.queue.take() {
                        queue.forget();
                    }
                    lost_queues += 1;
                    if lost_queues > QUICK_RE_REGISTRATIONS {
                        pause(backoff.exponential(), cancel, self.deadline).await?;
                    }
                }
                Err(err @ ZulipError::Rejected { .. }) => {
                    rejected_polls += 1;
                    if rejected_polls > MAX_REJECTED_POLLS {
                        return Err(err);
                    }
                    tracing::warn!(error = %err, "zulip refused a poll; re-registering");
                    if let Some(queue) = self.queue.take() {
                        queue.close().await;
                    }
                    pause(backoff.delay(&err), cancel, self.deadline).await?;
                }
                Err(err) if err.is_retryable() => {
                    let delay = backoff.delay(&err);
                    tracing::warn!(error = %err, ?delay, "zulip poll failed; retrying");
                    pause(delay, cancel, self.deadline).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// `op` on the API, retried up to `limit` times (or without end) until `cancel` fires or
    /// this wait's deadline passes.
    async fn request<T, Fut>(
        &self,
        what: &str,
        cancel: &CancellationToken,
        limit: Option<u32>,
        op: impl FnMut(ZulipApi) -> Fut,
    ) -> Result<T, ZulipError>
    where
        Fut: Future<Output = Result<T, ZulipError>>,
    {
        let retry = &self.shared.options.retry;
        let api = &self.shared.api;
        retry
            .retrying(what, api, cancel, self.deadline, limit, op)
            .await
    }

    /// Registers a new queue narrowed to the topic (retrying up to `limit` times, or forever).
    pub(crate) async fn register(
        &mut self,
        cancel: &CancellationToken,
        limit: Option<u32>,
    ) -> Result<(), ZulipError> {
        let (stream, topic) = (self.shared.stream.as_str(), self.topic.as_str());
        let registered = self
            .request("register", cancel, limit, move |api| async move {
                api.register(stream, topic).await
            })
            .await?;
        tracing::debug!(queue_id = %registered.queue_id, topic, "zulip queue registered");
        if self.posted_after.is_none() {
            self.posted_after = registered.max_message_id;
        }
        self.queue = Some(QueueGuard::new(self.shared.api.clone(), registered));
        Ok(())
    }

    /// Reads every message of the topic newer than the question, oldest first, page by page,
    /// and returns the first reply among them.
    async fn catch_up(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<Message>, ZulipError> {
        let (stream, topic) = (self.shared.stream.as_str(), self.topic.as_str());
        let page_size = self.shared.options.catch_up_page.max(1);
        let mut anchor = self.question_id;
        loop {
            let page = self
                .request("messages", cancel, None, move |api| async move {
                    api.get_messages_after(stream, topic, anchor, page_size)
                        .await
                })
                .await?;
            if let Some(message) = self.filter.first_reply(&page.messages) {
                return Ok(Some(message));
            }
            match page.messages.last().map(|m| m.id) {
                Some(newest) if !page.found_newest && newest > anchor => anchor = newest,
                _ => return Ok(None),
            }
        }
    }

    /// Posts the question into the topic, retrying transient failures up to the setup limit.
    /// After a failure that may hide a stored message (a lost response, a 5xx), it first looks
    /// for its own message in the queue, so the question is not posted twice.
    pub(crate) async fn post(
        &mut self,
        content: &str,
        cancel: &CancellationToken,
    ) -> Result<MessageId, ZulipError> {
        let limit = self.shared.options.retry.request_retries;
        let mut backoff = Backoff::from(self.shared.options.retry.clone());
        loop {
            let send =
                self.shared
                    .api
                    .send_stream_message(&self.shared.stream, &self.topic, content);
            match guarded(send, cancel, self.deadline).await {
                Ok(id) => return Ok(id),
                Err(err) if err.is_retryable() => {
                    if err.is_ambiguous()
                        && let Some(id) = self.find_own_post(content, cancel).await?
                    {
                        tracing::info!(message_id = %id, error = %err, "the zulip post landed despite the error");
                        return Ok(id);
                    }
                    if backoff.failures() >= limit {
                        return Err(err);
                    }
                    let delay = backoff.delay(&err);
                    tracing::warn!(error = %err, ?delay, "posting to zulip failed; retrying");
                    pause(delay, cancel, self.deadline).await?;
                }
                Err(err) => return Err(err),
            }
        }
    }

    /// Finds the bot's own message with this content if the server stored it despite the
    /// error: first in the queue (read without blocking; everything read is kept for the
    /// wait), or, when the queue is gone, among the topic's newest messages newer than the
    /// realm's newest message at registration.
    async fn find_own_post(
        &mut self,
        content: &str,
        cancel: &CancellationToken,
    ) -> Result<Option<MessageId>, ZulipError> {
        let wanted = content.trim();
        let limit = Some(self.shared.options.retry.request_retries);
        if let Some(queue) = self.queue.as_ref() {
            let (queue_id, last_event_id) = (queue.queue_id().to_owned(), queue.last_event_id());
            let queue_id = queue_id.as_str();
            let peeked = self
                .request("events", cancel, limit, move |api| async move {
                    api.get_events(queue_id, last_event_id, true).await
                })
                .await;
            match peeked {
                Ok(events) => {
                    if let Some(queue) = self.queue.as_mut() {
                        queue.ack(&events);
                    }
                    let own = messages(&events)
                        .filter(|m| self.filter.is_own_in_topic(m) && m.content.trim() == wanted)
                        .map(|m| m.id)
                        .min();
                    self.buffered.extend(messages(&events).cloned());
                    return Ok(own);
                }
                Err(ZulipError::BadEventQueue { .. }) => {
                    // The wait registers anew and catches up; the post is looked up below.
                    if let Some(queue) = self.queue.take() {
                        queue.forget();
                    }
                }
                Err(err) => return Err(err),
            }
        }
        let Some(baseline) = self.posted_after else {
            return Ok(None);
        };
        let (stream, topic) = (self.shared.stream.as_str(), self.topic.as_str());
        let page = self
            .request("messages", cancel, limit, move |api| async move {
                api.recent_messages(stream, topic, RECENT_FOR_ECHO).await
            })
            .await?;
        Ok(page
            .messages
            .iter()
            .filter(|m| {
                m.id > baseline && self.filter.is_own_in_topic(m) && m.content.trim() == wanted
            })
            .map(|m| m.id)
            .min())
    }

    /// Sets the question's id once posted: only newer messages can answer it.
    pub(crate) fn set_question(&mut self, id: MessageId) {
        self.question_id = id;
        self.filter.set_after(id);
    }

    /// Deregisters the queue now (a failed post).
    pub(crate) async fn close(mut self) {
        if let Some(queue) = self.queue.take() {
            queue.close().await;
        }
    }

    fn reply(&self, message: Message) -> Reply {
        Reply {
            text: message.content,
            sender_full_name: message.sender_full_name,
            sender_email: message.sender_email,
            sender_id: message.sender_id,
            message_id: message.id,
            question_id: self.question_id,
            topic: self.topic.clone(),
        }
    }
}

fn messages(events: &[Event]) -> impl Iterator<Item = &Message> {
    events.iter().filter_map(|event| match event {
        Event::Message { message, .. } => Some(message.as_ref()),
        Event::Heartbeat { .. } | Event::Other { .. } => None,
    })
}

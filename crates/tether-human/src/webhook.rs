//! The webhook sink: every notice and question POSTed to a URL — tether's JSON body (see
//! [`crate::sink_body`]) or the shape of a Slack or Discord incoming webhook, with the text
//! escaped for that chat's markup (an agent's question is the agent's text: it must not ping a
//! channel or show a link whose text hides its target).
//!
//! A webhook is someone else's server, and it may be slow or down; the run must not wait for
//! it. So the channel only queues what it sends, and one background task per sink delivers the
//! queue in order, retrying with exponential backoff on connection errors, 5xx and 429 (waiting
//! what `Retry-After` says), and giving up on a message after [`WebhookRetry::attempts`]. The
//! URL is a credential (whoever has it can post): it is held as a [`Secret`] and never logged;
//! errors name the sink, not the URL.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::{Value, json};
use tether_config::Secret;
use tokio::sync::mpsc;

use crate::channels::BoxFuture;
use crate::sink_body::SinkBody;
use crate::tables::webhook::{WebhookConfig, WebhookFormat};

/// The name deliveries and answers are logged under.
const NAME: &str = "webhook";

/// How a webhook delivery is retried.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookRetry {
    /// The first delay; it doubles with each failure.
    pub initial: Duration,
    /// The cap on one delay.
    pub max: Duration,
    /// Attempts per message, the first included.
    pub attempts: u32,
    /// How long one attempt may take.
    pub timeout: Duration,
}

impl Default for WebhookRetry {
    fn default() -> Self {
        WebhookRetry {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(120),
            attempts: 8,
            timeout: Duration::from_secs(30),
        }
    }
}

/// The webhook's body for `body` in `format`. In the chat formats every text is escaped for
/// that chat's markup — the Slack channel's escaping for Slack, [`crate::discord`]'s for
/// Discord — so what an agent wrote can neither mention anyone nor disguise a link; Discord is
/// also told to ping nobody (`allowed_mentions`).
pub fn render(body: &SinkBody, format: WebhookFormat) -> Value {
    match format {
        WebhookFormat::Json => body.json(),
        WebhookFormat::Slack => json!({
            "text": format!("*{}*\n{}", tether_slack::escape(&body.title()), tether_slack::escape(&body.plain())),
        }),
        WebhookFormat::Discord => json!({
            "content": crate::discord::content(&body.title(), &body.plain()),
            "allowed_mentions": {"parse": []},
        }),
    }
}

/// Whether `url` is an http(s) URL (`Ok(true)` for https); the error never repeats it.
pub fn check_url(url: &Secret) -> Result<bool, crate::sinks::SinkError> {
    let value = url.expose();
    let https = value.starts_with("https://");
    let valid = (https || value.starts_with("http://"))
        && !value.chars().any(char::is_whitespace)
        && value
            .split("://")
            .nth(1)
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
    if valid {
        Ok(https)
    } else {
        Err(crate::sinks::SinkError::Invalid {
            setting: "[webhook] url_env",
            problem: "its variable does not hold an http:// or https:// URL".to_owned(),
        })
    }
}

/// POSTs notices and questions to a webhook, in the background.
pub struct Webhook {
    inner: Arc<Inner>,
    queue: OnceLock<mpsc::UnboundedSender<Value>>,
}

struct Inner {
    http: reqwest::Client,
    url: Secret,
    format: WebhookFormat,
    retry: WebhookRetry,
    /// How many queued messages are not delivered (or given up) yet.
    queued: tokio::sync::watch::Sender<usize>,
}

/// Why one attempt failed (never with the URL).
#[derive(Debug)]
enum Failure {
    /// Worth another try, after the server's wait if it gave one.
    Retry(String, Option<Duration>),
    /// Not worth another (a 4xx other than 429).
    Final(String),
}

impl tether_http::RetryAfter for Failure {
    fn retry_after(&self) -> Option<Duration> {
        match self {
            Failure::Retry(_, after) => *after,
            Failure::Final(_) => None,
        }
    }
}

impl Webhook {
    /// A sink POSTing to `url` in `format`. Errs when `url` is not an http(s) URL (without
    /// repeating it) or the HTTP client cannot be set up.
    pub fn new(url: Secret, format: WebhookFormat) -> Result<Self, crate::sinks::SinkError> {
        let https = check_url(&url)?;
        let http = crate::sinks::http_client(https)?;
        Ok(Webhook {
            inner: Arc::new(Inner {
                http,
                url,
                format,
                retry: WebhookRetry::default(),
                queued: tokio::sync::watch::Sender::new(0),
            }),
            queue: OnceLock::new(),
        })
    }

    /// Retries with `retry` (tests use short delays).
    pub fn with_retry(mut self, retry: WebhookRetry) -> Self {
        if let Some(inner) = Arc::get_mut(&mut self.inner) {
            inner.retry = retry;
        }
        self
    }

    /// Queues `body` for delivery and returns at once. Must be called inside a runtime.
    pub fn send(&self, body: &SinkBody) {
        let queue = self.queue.get_or_init(|| {
            let (tx, rx) = mpsc::unbounded_channel();
            tokio::spawn(deliver_all(Arc::clone(&self.inner), rx));
            tx
        });
        self.inner.queued.send_modify(|n| *n += 1);
        if queue.send(render(body, self.inner.format)).is_err() {
            self.inner.queued.send_modify(|n| *n = n.saturating_sub(1));
        }
    }
}

/// Delivers the queue in order until every sender is gone.
async fn deliver_all(inner: Arc<Inner>, mut rx: mpsc::UnboundedReceiver<Value>) {
    while let Some(body) = rx.recv().await {
        inner.deliver(&body).await;
        inner.queued.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl Inner {
    /// POSTs `body`, retrying as [`WebhookRetry`] says; logs what it could not deliver.
    async fn deliver(&self, body: &Value) {
        let mut backoff = tether_http::Backoff::new(self.retry.initial, self.retry.max);
        for attempt in 1..=self.retry.attempts.max(1) {
            match self.attempt(body).await {
                Ok(()) => return,
                Err(Failure::Final(why)) => {
                    tracing::warn!(sink = NAME, %why, "the webhook refused a message; dropped");
                    return;
                }
                Err(failure) => {
                    if attempt == self.retry.attempts.max(1) {
                        if let Failure::Retry(why, _) = &failure {
                            tracing::warn!(sink = NAME, %why, attempt, "giving up on a webhook message");
                        }
                        return;
                    }
                    let delay = backoff.delay(&failure);
                    if let Failure::Retry(why, _) = &failure {
                        tracing::debug!(sink = NAME, %why, ?delay, "webhook delivery failed; trying again");
                    }
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    async fn attempt(&self, body: &Value) -> Result<(), Failure> {
        let response = self
            .http
            .post(self.url.expose())
            .json(body)
            .timeout(self.retry.timeout)
            .send()
            .await
            .map_err(|e| {
                let why = if e.is_timeout() {
                    "timed out"
                } else if e.is_connect() {
                    "cannot connect"
                } else {
                    "request failed"
                };
                Failure::Retry(why.to_owned(), None)
            })?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry_after = tether_http::retry_after(response.headers());
        let why = format!("HTTP {}", status.as_u16());
        if status.as_u16() == 429 || status.is_server_error() {
            Err(Failure::Retry(why, retry_after))
        } else {
            Err(Failure::Final(why))
        }
    }
}

impl crate::sinks::Deliver for Webhook {
    fn name(&self) -> &'static str {
        NAME
    }

    fn deliver(&self, body: SinkBody) -> BoxFuture<'_, ()> {
        // Queued at once: delivery never holds the caller up.
        self.send(&body);
        Box::pin(std::future::ready(()))
    }

    fn flush(&self) -> BoxFuture<'_, ()> {
        let mut queued = self.inner.queued.subscribe();
        Box::pin(async move {
            let _ = queued.wait_for(|n| *n == 0).await;
        })
    }
}

/// The webhook sink in the registry ([`crate::registry`]), its table `[webhook]`
/// ([`crate::tables::webhook`]).
pub const DEF: crate::registry::ChannelDef = crate::registry::ChannelDef {
    settings: &crate::tables::webhook::TABLE,
    build: |setup, role| {
        let webhook = WebhookConfig::of(setup.config);
        let url = webhook.url.as_ref().ok_or_else(|| missing(&webhook))?;
        let sink = Webhook::new(url.clone(), webhook.format).map_err(|e| e.to_string())?;
        setup.one_way(sink, role.sent_key("webhook"))
    },
    check: |config, _| {
        let webhook = WebhookConfig::of(config);
        match &webhook.url {
            Some(url) => check_url(url).map(|_| ()).map_err(|e| e.to_string()),
            None => Err(missing(&webhook)),
        }
    },
    probe: None,
    notices: |config| WebhookConfig::of(config).notify.clone(),
    reply: |_, _, _| crate::registry::ReplyPath::None,
};

fn missing(webhook: &WebhookConfig) -> crate::registry::Off {
    crate::sinks::SinkError::Missing {
        sink: "webhook",
        missing: webhook.missing(),
    }
    .to_string()
}

//! [`NtfyClient`]: the HTTP side — publishing, and opening a topic's JSON stream.

use std::time::Duration;

use reqwest::{RequestBuilder, Response, StatusCode};
use tether_config::Secret;
use tokio_util::sync::CancellationToken;

use crate::error::NtfyError;
use crate::wire::{Message, Publish};

/// How publishing retries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The first backoff delay; it doubles with each failure in a row.
    pub initial: Duration,
    /// The cap on one delay.
    pub max: Duration,
    /// Retries of one publish after its first attempt.
    pub retries: u32,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(30),
            retries: 5,
        }
    }
}

/// A client of one ntfy server, with an optional access token.
#[derive(Clone)]
pub struct NtfyClient {
    http: reqwest::Client,
    server: String,
    token: Option<Secret>,
    retry: RetryPolicy,
}

impl std::fmt::Debug for NtfyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NtfyClient")
            .field("server", &self.server)
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

impl NtfyClient {
    /// A client of `server` (`https://ntfy.sh`, no trailing slash needed).
    pub fn new(server: &str, token: Option<Secret>) -> Result<Self, NtfyError> {
        let server = server.trim_end_matches('/').to_owned();
        let http = http_client(server.starts_with("https://"))?;
        Ok(NtfyClient {
            http,
            server,
            token,
            retry: RetryPolicy::default(),
        })
    }

    /// Retries publishing with `retry`.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The server's base URL.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The URL of `topic` (what a button POSTs to).
    pub fn topic_url(&self, topic: &str) -> String {
        format!("{}/{topic}", self.server)
    }

    fn authorized(&self, request: RequestBuilder) -> RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token.expose()),
            None => request,
        }
    }

    /// Publishes `message`, retrying on 429, 5xx and network faults; returns the message as
    /// the server stored it.
    pub async fn publish(
        &self,
        message: &Publish,
        cancel: &CancellationToken,
    ) -> Result<Message, NtfyError> {
        let mut backoff = tether_http::Backoff::new(self.retry.initial, self.retry.max);
        loop {
            let attempt = async {
                let request = self.authorized(self.http.post(format!("{}/", self.server)));
                let response = request
                    .json(message)
                    .timeout(Duration::from_secs(30))
                    .send()
                    .await
                    .map_err(|e| NtfyError::transport(&e))?;
                let response = checked(response).await?;
                response
                    .json::<Message>()
                    .await
                    .map_err(|e| NtfyError::Protocol(format!("a publish's reply: {e}")))
            };
            match tether_http::guarded(attempt, cancel, None).await {
                Ok(sent) => return Ok(sent),
                Err(e) if e.is_retryable() && backoff.failures() < self.retry.retries => {
                    let delay = backoff.delay(&e);
                    tracing::debug!(error = %e, ?delay, "ntfy publish failed; trying again");
                    tether_http::pause::<NtfyError>(delay, cancel, None).await?;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Opens `topic`'s JSON stream from `since` (a message id, a Unix time, `all`).
    pub(crate) async fn open_stream(
        &self,
        topic: &str,
        since: &str,
    ) -> Result<Response, NtfyError> {
        // ids, Unix times and `all` need no escaping; anything else is dropped rather than sent.
        let since: String = since
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        let url = format!("{}/{topic}/json?since={since}", self.server);
        let request = self.authorized(self.http.get(url));
        let response = request.send().await.map_err(|e| NtfyError::transport(&e))?;
        checked(response).await
    }
}

/// An HTTP client with tether's TLS setup (ring, the platform's verifier; no global crypto
/// provider), for `https` URLs or plain `http` ones. Other sinks (webhooks) use it too.
pub fn http_client(https: bool) -> Result<reqwest::Client, NtfyError> {
    let spec = tether_http::ClientSpec {
        name: "tether-ntfy",
        https,
        connect_timeout: Duration::from_secs(10),
        timeout: None,
        read_timeout: None,
    };
    tether_http::client(&spec).map_err(|e| NtfyError::Setup(e.to_string()))
}

/// `response` if it succeeded, else its error.
async fn checked(response: Response) -> Result<Response, NtfyError> {
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    let retry_after = tether_http::retry_after(response.headers());
    if status == StatusCode::TOO_MANY_REQUESTS {
        return Err(NtfyError::RateLimited { retry_after });
    }
    if status.is_server_error() {
        return Err(NtfyError::Server {
            status: status.as_u16(),
            retry_after,
        });
    }
    let body = response.text().await.unwrap_or_default();
    let message = serde_json::from_str::<serde_json::Value>(&body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
    Err(NtfyError::Refused {
        status: status.as_u16(),
        message,
    })
}

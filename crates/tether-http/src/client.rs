//! Building a client, and reading what went wrong.

use std::time::{Duration, SystemTime};

use reqwest::header::{HeaderMap, RETRY_AFTER};

/// What a client needs: who it is, whether it talks TLS, and how long it waits.
#[derive(Debug, Clone)]
pub struct ClientSpec {
    /// The client's name in the user agent (`tether/<version> (<name>)`).
    pub name: &'static str,
    /// Whether its server is `https` (a plain `http` client reads no certificates).
    pub https: bool,
    /// How long a connection may take to open.
    pub connect_timeout: Duration,
    /// How long a whole request may take; `None` for long polls and streams, which bound
    /// themselves.
    pub timeout: Option<Duration>,
    /// How long a response may go quiet between reads (a stream that stalls).
    pub read_timeout: Option<Duration>,
}

impl ClientSpec {
    /// A client named `name` for a server at `url` (TLS when it is `https://`), connecting
    /// within `connect_timeout`, with no overall request timeout.
    pub fn new(name: &'static str, url: &str, connect_timeout: Duration) -> Self {
        ClientSpec {
            name,
            https: url.starts_with("https://"),
            connect_timeout,
            timeout: None,
            read_timeout: None,
        }
    }

    /// Every request ends after `timeout`.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// A response that sends nothing for `timeout` ends.
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.read_timeout = Some(timeout);
        self
    }
}

/// The HTTP client could not be set up (TLS, or the client itself); nothing was sent.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the HTTP client: {detail}")]
pub struct SetupError {
    /// What failed.
    pub detail: String,
}

/// A client for `spec`.
pub fn client(spec: &ClientSpec) -> Result<reqwest::Client, SetupError> {
    let tls = crate::tls::client_config(spec.https).map_err(|e| SetupError {
        detail: e.to_string(),
    })?;
    let mut builder = reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .connect_timeout(spec.connect_timeout)
        .user_agent(format!(
            "tether/{} ({})",
            env!("CARGO_PKG_VERSION"),
            spec.name
        ));
    if let Some(timeout) = spec.timeout {
        builder = builder.timeout(timeout);
    }
    if let Some(timeout) = spec.read_timeout {
        builder = builder.read_timeout(timeout);
    }
    builder.build().map_err(|e| SetupError {
        detail: describe(&e),
    })
}

/// A transport error as text, with its causes and without its URL (which may carry a token).
pub fn describe(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    if let Some(url) = err.url() {
        text = text
            .replace(&format!(" for url ({url})"), "")
            .replace(url.as_str(), "[url]");
    }
    with_causes(text, std::error::Error::source(err))
}

/// Any error and its causes on one line (`what: why: deeper why`).
pub fn chain(err: &dyn std::error::Error) -> String {
    with_causes(err.to_string(), err.source())
}

fn with_causes(mut text: String, mut source: Option<&dyn std::error::Error>) -> String {
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// The longest wait a server's `Retry-After` is taken at.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(600);

/// How long the server asked to wait (`Retry-After`: seconds, or an HTTP date), at most ten
/// minutes; `None` when it did not say (or said something unreadable).
pub fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    let wait = match value.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Duration::from_secs_f64(secs.min(1e6)),
        Ok(_) => return None,
        Err(_) => httpdate::parse_http_date(value)
            .ok()?
            .duration_since(SystemTime::now())
            .unwrap_or_default(),
    };
    Some(wait.min(MAX_RETRY_AFTER))
}

/// A service's base URL as configured, checked: `http(s)://host[/prefix]` with no query or
/// fragment, returned trimmed and without trailing slashes. The error says what is wrong (the
/// caller names the setting).
pub fn base_url(url: &str) -> Result<String, String> {
    let url = url.trim();
    let parsed = reqwest::Url::parse(url).map_err(|err| err.to_string())?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err("the scheme must be http or https".to_owned());
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return Err("there is no host".to_owned());
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err("a base URL has no query or fragment".to_owned());
    }
    Ok(url.trim_end_matches('/').to_owned())
}

/// How long a server asked to wait before a retry: `body_secs`, what its body said in seconds
/// (Zulip's `retry-after`, Telegram's `parameters.retry_after`), else `header`, what its
/// `Retry-After` header said ([`retry_after`], read before the body consumed the response),
/// else one second; at most ten minutes.
pub fn requested_wait(body_secs: Option<f64>, header: Option<Duration>) -> Duration {
    let body = body_secs
        .filter(|secs| secs.is_finite())
        .map(|secs| Duration::from_secs_f64(secs.clamp(0.0, MAX_RETRY_AFTER.as_secs_f64())));
    body.or(header).unwrap_or(Duration::from_secs(1))
}

/// The start of a body that is not what the client expected (a proxy's HTML page), on one line
/// and short, for an error message.
pub fn snippet(raw: &[u8]) -> String {
    let text = String::from_utf8_lossy(raw);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let short: String = line.chars().take(120).collect();
    if short.is_empty() {
        "(empty body)".to_owned()
    } else {
        short
    }
}

#[cfg(test)]
#[path = "client_tests.rs"]
mod tests;

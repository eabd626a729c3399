//! The HTTP model client: one type for all three wire formats.
//!
//! [`HttpModel`] owns a `reqwest` client (rustls with the ring provider, passed explicitly — no
//! process-global crypto provider is installed) and the endpoint description. Each call is a
//! [`call::Call`] state machine driven as a stream: it opens the request (retrying per
//! [`RetryPolicy`] until the caller has seen output), decodes SSE and hands frames to the wire
//! format's parser.

mod call;
mod probe;

use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderValue};
use tether_config::{Api, ModelConfig, Secret};
use tokio_util::sync::CancellationToken;

use crate::client::{EventStream, ModelClient};
use crate::{ModelError, Request, RetryPolicy, wire};

pub use probe::{Probe, models_url, probe};

/// Where and how to reach a model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The wire protocol.
    pub api: Api,
    /// The base URL; see [`wire::request_url`] for how the request URL is derived.
    pub base_url: String,
    /// The model's name as the endpoint knows it.
    pub model: String,
    /// The API key; `None` for keyless local servers.
    pub api_key: Option<Secret>,
}

impl Endpoint {
    /// An endpoint without a key.
    pub fn new(api: Api, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            api,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
        }
    }

    /// Sets the key.
    pub fn with_api_key(mut self, key: Secret) -> Self {
        self.api_key = Some(key);
        self
    }

    /// The endpoint a `[model]` or `[judge]` table describes, with the key the caller read
    /// through [`ModelConfig::api_key`].
    pub fn from_config(config: &ModelConfig, api_key: Option<Secret>) -> Self {
        Self {
            api: config.api,
            base_url: config.base_url.clone(),
            model: config.model.clone(),
            api_key,
        }
    }

    /// The URL requests go to.
    pub fn request_url(&self) -> String {
        wire::request_url(self.api, &self.base_url)
    }
}

/// Tuning for [`HttpModel`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpOptions {
    /// Retries of rate limits, server and network errors before output was delivered.
    pub retry: RetryPolicy,
    /// How long connecting may take.
    pub connect_timeout: Duration,
    /// How long the endpoint may stay silent (no bytes) before the call fails as
    /// [`ModelError::Transport`]; long enough for a slow model's first token.
    pub idle_timeout: Duration,
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self {
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(300),
        }
    }
}

/// A model reached over HTTP: OpenAI Chat Completions, OpenAI Responses or Anthropic
/// Messages, chosen by [`Endpoint::api`]. Cheap to clone; clones share the connection pool.
#[derive(Debug, Clone)]
pub struct HttpModel {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    endpoint: Endpoint,
    url: reqwest::Url,
    headers: HeaderMap,
    options: HttpOptions,
    http: reqwest::Client,
}

impl HttpModel {
    /// A client with default [`HttpOptions`].
    pub fn new(endpoint: Endpoint) -> Result<Self, ModelError> {
        Self::with_options(endpoint, HttpOptions::default())
    }

    /// A client with the given options. Fails (as [`ModelError::Config`]) when the URL is not
    /// `http(s)://`, the key cannot be sent as a header, or, for `https`, no TLS root
    /// certificates can be loaded.
    pub fn with_options(endpoint: Endpoint, options: HttpOptions) -> Result<Self, ModelError> {
        let config_error = |detail: String| ModelError::Config { detail };
        let url_text = endpoint.request_url();
        let url = reqwest::Url::parse(&url_text)
            .map_err(|err| config_error(format!("invalid base URL {url_text:?}: {err}")))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(config_error(format!(
                "the base URL must be http:// or https:// with a host, not {url_text:?}"
            )));
        }
        let spec =
            tether_http::ClientSpec::new("tether-model", url.as_str(), options.connect_timeout)
                .read_timeout(options.idle_timeout);
        let http = tether_http::client(&spec).map_err(|err| config_error(err.to_string()))?;
        let headers = headers(&endpoint)?;
        Ok(Self {
            inner: Arc::new(Inner {
                endpoint,
                url,
                headers,
                options,
                http,
            }),
        })
    }

    /// The endpoint this client calls.
    pub fn endpoint(&self) -> &Endpoint {
        &self.inner.endpoint
    }
}

/// [`HttpModel::with_options`], as the shared trait object executors hold.
pub fn connect(
    endpoint: Endpoint,
    options: HttpOptions,
) -> Result<Arc<dyn ModelClient>, ModelError> {
    Ok(Arc::new(HttpModel::with_options(endpoint, options)?))
}

fn headers(endpoint: &Endpoint) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(ACCEPT, HeaderValue::from_static("text/event-stream"));
    let secret_header = |value: String| {
        let mut value = HeaderValue::from_str(&value).map_err(|_| ModelError::Config {
            detail: "the API key contains characters that cannot be sent in an HTTP header"
                .to_owned(),
        })?;
        value.set_sensitive(true);
        Ok::<_, ModelError>(value)
    };
    match endpoint.api {
        Api::OpenAiChat | Api::OpenAiResponses => {
            if let Some(key) = &endpoint.api_key {
                headers.insert(
                    AUTHORIZATION,
                    secret_header(format!("Bearer {}", key.expose()))?,
                );
            }
        }
        Api::Anthropic => {
            headers.insert(
                "anthropic-version",
                HeaderValue::from_static(wire::ANTHROPIC_VERSION),
            );
            if let Some(key) = &endpoint.api_key {
                headers.insert("x-api-key", secret_header(key.expose().to_owned())?);
            }
        }
    }
    Ok(headers)
}

impl ModelClient for HttpModel {
    fn stream(&self, request: &Request, cancel: CancellationToken) -> EventStream {
        let body = wire::request_body(self.inner.endpoint.api, &self.inner.endpoint.model, request);
        call::Call::new(Arc::clone(&self.inner), body.to_string().into(), cancel).into_stream()
    }
}

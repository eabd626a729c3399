//! [`probe`]: one bounded request to a model endpoint, to tell a person setting tether up
//! whether it is reachable and takes the key — without calling a model.
//!
//! The request is `GET <base>/models` (OpenAI and Anthropic both list models there, and so do
//! the usual local servers) with the same headers a model call sends. Any HTTP answer means the
//! endpoint is reachable; 401 or 403 means it refused the key.

use std::time::Duration;

use reqwest::StatusCode;

use super::{Endpoint, headers};
use crate::ModelError;

/// What an endpoint answered to [`probe`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// It answered (any status but 401 and 403; a server without a models list says 404).
    Reachable {
        /// The HTTP status.
        status: u16,
    },
    /// It answered 401 or 403: the key is missing, wrong or lacks access.
    KeyRefused {
        /// The HTTP status.
        status: u16,
    },
}

/// The URL [`probe`] asks: the models list next to where model calls go.
pub fn models_url(endpoint: &Endpoint) -> String {
    let request = endpoint.request_url();
    let base = request
        .rsplit_once('/')
        .map_or(request.as_str(), |(base, _)| base);
    // `…/chat/completions` lives one level further down than `…/responses` and `…/messages`.
    let base = base.strip_suffix("/chat").unwrap_or(base);
    format!("{base}/models")
}

/// Asks `endpoint` for its models list once, within `timeout` (connecting included). Errors are
/// [`ModelError::Config`] for a URL or key that cannot be sent and [`ModelError::Transport`]
/// when nothing answered; neither carries the key.
pub async fn probe(endpoint: &Endpoint, timeout: Duration) -> Result<Probe, ModelError> {
    let url = models_url(endpoint);
    let parsed = reqwest::Url::parse(&url).map_err(|err| ModelError::Config {
        detail: format!("invalid base URL {url:?}: {err}"),
    })?;
    let spec =
        tether_http::ClientSpec::new("tether-model", parsed.as_str(), timeout).timeout(timeout);
    let http = tether_http::client(&spec).map_err(|err| ModelError::Config {
        detail: err.to_string(),
    })?;
    let response = http
        .get(parsed)
        .headers(headers(endpoint)?)
        .send()
        .await
        .map_err(|err| ModelError::Transport {
            detail: transport_detail(&err),
        })?;
    let status = response.status();
    Ok(match status {
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => Probe::KeyRefused {
            status: status.as_u16(),
        },
        _ => Probe::Reachable {
            status: status.as_u16(),
        },
    })
}

/// Why nothing answered, in words, without the URL's query (none is sent) or any header.
fn transport_detail(err: &reqwest::Error) -> String {
    let mut detail = if err.is_timeout() {
        "no answer in time".to_owned()
    } else if err.is_connect() {
        "cannot connect".to_owned()
    } else {
        "the request failed".to_owned()
    };
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        detail.push_str(": ");
        detail.push_str(&cause.to_string());
        source = cause.source();
    }
    detail
}

#[cfg(test)]
mod tests {
    use super::*;
    use tether_config::Api;

    #[test]
    fn the_models_list_sits_next_to_the_calls() {
        let url = |api, base| models_url(&Endpoint::new(api, base, "m"));
        assert_eq!(
            url(Api::OpenAiChat, "http://h:1/v1/"),
            "http://h:1/v1/models"
        );
        assert_eq!(
            url(Api::OpenAiResponses, "https://api.openai.com/v1"),
            "https://api.openai.com/v1/models"
        );
        assert_eq!(
            url(Api::Anthropic, "https://api.anthropic.com"),
            "https://api.anthropic.com/v1/models"
        );
        assert_eq!(url(Api::Anthropic, "http://h/v1"), "http://h/v1/models");
    }
}

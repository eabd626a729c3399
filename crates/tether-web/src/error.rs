//! What can go wrong serving the dashboard, and how each error reaches the client: JSON under
//! `/api/`, a short page elsewhere.

use std::net::SocketAddr;

use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// The dashboard could not start or could not answer a request.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// Binding a non-loopback address needs the explicit remote flag (`--allow-remote`).
    #[error(
        "{0} is not a loopback address; the dashboard would be reachable from other machines \
         (pass --allow-remote to mean it)"
    )]
    NotLoopback(SocketAddr),
    /// The address could not be bound (in use, not local, no permission).
    #[error("cannot listen on {addr}: {cause}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The OS error.
        cause: std::io::Error,
    },
    /// Reading the system's randomness or watching the store failed.
    #[error("{what}: {cause}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        cause: std::io::Error,
    },
    /// No such run or question.
    #[error("{0}")]
    NotFound(String),
    /// The request is malformed (an empty answer, a bad id).
    #[error("{0}")]
    BadRequest(String),
    /// The question was already answered; the first answer stays.
    #[error("{0}")]
    Conflict(String),
    /// The question was withdrawn or the run has ended.
    #[error("{0}")]
    Gone(String),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] tether_store::StoreError),
    /// This dashboard cannot do it (one embedded in a run starts no runs).
    #[error("{0}")]
    NotImplemented(String),
    /// A worker thread went away.
    #[error("internal error: {0}")]
    Internal(String),
    /// A run's configuration file differs from the one it recorded; the request did not
    /// accept the differences. 409, with them.
    #[error("{message}")]
    ConfigChanged {
        /// What is refused and how to go on.
        message: String,
        /// Each difference, `setting: old → new`.
        changes: Vec<String>,
    },
    /// The request's body is not what the endpoint reads (not JSON, or a field that does not
    /// fit); fix the request.
    #[error("{detail}")]
    Body {
        /// 400, 415 or 422, as the problem is.
        status: StatusCode,
        /// What is wrong, naming the field.
        detail: String,
    },
}

impl WebError {
    /// The HTTP status this error answers with.
    pub fn status(&self) -> StatusCode {
        match self {
            WebError::NotFound(_) => StatusCode::NOT_FOUND,
            WebError::BadRequest(_) => StatusCode::BAD_REQUEST,
            WebError::Conflict(_) | WebError::ConfigChanged { .. } => StatusCode::CONFLICT,
            WebError::Gone(_) => StatusCode::GONE,
            WebError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            WebError::Body { status, .. } => *status,
            WebError::Store(tether_store::StoreError::Busy) => StatusCode::SERVICE_UNAVAILABLE,
            WebError::Store(tether_store::StoreError::NotFound { .. }) => StatusCode::NOT_FOUND,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<tether_store::control::ControlError> for WebError {
    fn from(e: tether_store::control::ControlError) -> Self {
        use tether_store::control::ControlError;
        match e {
            ControlError::Store(s) => WebError::Store(s),
            other => WebError::NotFound(other.to_string()),
        }
    }
}

impl From<JsonRejection> for WebError {
    fn from(rejection: JsonRejection) -> Self {
        let detail = match &rejection {
            JsonRejection::JsonDataError(e) => {
                format!("the body does not fit this request: {}", cause(e))
            }
            JsonRejection::JsonSyntaxError(e) => format!("the body is not JSON: {}", cause(e)),
            JsonRejection::MissingJsonContentType(_) => {
                "send the body as JSON, with `Content-Type: application/json`".to_owned()
            }
            other => other.body_text(),
        };
        WebError::Body {
            status: rejection.status(),
            detail,
        }
    }
}

impl From<QueryRejection> for WebError {
    fn from(rejection: QueryRejection) -> Self {
        let detail = match &rejection {
            QueryRejection::FailedToDeserializeQueryString(e) => {
                format!("the query does not fit this request: {}", cause(e))
            }
            other => other.body_text(),
        };
        WebError::Body {
            status: rejection.status(),
            detail,
        }
    }
}

/// What a rejection says, without axum's own preamble: the JSON library's words with
/// the path of the field (`max_iterations: invalid type: …`).
fn cause(rejection: &dyn std::error::Error) -> String {
    let mut at = rejection;
    // The rejection, then axum's error, then the one that names the field.
    for _ in 0..2 {
        match at.source() {
            Some(next) => at = next,
            None => break,
        }
    }
    at.to_string()
}

/// An API error: `{"error": "…"}` with the error's status (and the differences of a
/// configuration that changed, `"changes"`).
impl IntoResponse for WebError {
    fn into_response(self) -> Response {
        if self.status().is_server_error() {
            tracing::warn!(error = %self, "dashboard request failed");
        }
        let body = match &self {
            WebError::ConfigChanged { message, changes } => {
                serde_json::json!({ "error": message, "changes": changes })
            }
            _ => serde_json::json!({ "error": self.to_string() }),
        };
        (self.status(), axum::Json(body)).into_response()
    }
}

//! The fake server's front door: records, authenticates, runs scheduled actions and injects
//! faults, then hands the request to `messages` or `queues`, answering with the shapes and
//! error codes of Zulip's REST API (`result`/`msg`/`code` bodies, 401, 429 with `retry-after`).

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Form, FromRequest, Query, Request, State};
use axum::http::header::{AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use axum::http::{HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::fault::{Action, Endpoint, Moment, Schedule, ZulipFault};
use super::realm::Realm;
use super::record::{Recorder, ZulipRequest};
use super::{messages, queues};

pub(crate) struct Shared {
    pub(crate) realm: Mutex<Realm>,
    /// Bumped on every change of the realm; long-polls wait on it.
    pub(crate) changed: watch::Sender<u64>,
    pub(crate) longpoll: Mutex<Duration>,
    pub(crate) schedule: Schedule,
    pub(crate) recorder: Recorder,
    /// The `Authorization` value the bot must send.
    pub(crate) expected_auth: String,
    pub(crate) shutdown: CancellationToken,
}

impl Shared {
    pub(crate) fn realm(&self) -> MutexGuard<'_, Realm> {
        self.realm.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn bump(&self) {
        self.changed.send_modify(|v| *v += 1);
    }

    pub(crate) fn longpoll(&self) -> Duration {
        *self.longpoll.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub(crate) fn apply(&self, action: Action) {
        match action {
            Action::Post {
                sender,
                stream,
                topic,
                content,
            } => {
                let mut realm = self.realm();
                let stream = stream.unwrap_or_else(|| realm.streams[0].clone());
                realm.post(&sender, &stream, &topic, &content);
            }
            Action::ExpireQueues => self.realm().expire_all(),
        }
        self.bump();
    }
}

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new().fallback(handle).with_state(shared)
}

/// An error answer: `{"result":"error","msg","code",…}` with `status`.
pub(super) struct ApiError {
    pub(super) status: StatusCode,
    pub(super) code: &'static str,
    pub(super) msg: String,
    pub(super) extra: Vec<(&'static str, Value)>,
}

impl ApiError {
    pub(super) fn bad_request(msg: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "BAD_REQUEST",
            msg: msg.into(),
            extra: Vec::new(),
        }
    }

    pub(super) fn missing(name: &str) -> Self {
        Self::bad_request(format!("Missing '{name}' argument"))
    }

    pub(super) fn bad_queue(queue_id: &str) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "BAD_EVENT_QUEUE_ID",
            msg: format!("Bad event queue ID: {queue_id}"),
            extra: vec![("queue_id", json!(queue_id))],
        }
    }

    fn into_response(self) -> Response {
        let mut body = Map::new();
        body.insert("result".into(), json!("error"));
        body.insert("msg".into(), json!(self.msg));
        body.insert("code".into(), json!(self.code));
        for (key, value) in self.extra {
            body.insert(key.into(), value);
        }
        json_response(self.status, &Value::Object(body))
    }
}

fn json_response(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}

fn success(mut body: Value) -> Response {
    if let Some(object) = body.as_object_mut() {
        object.insert("result".into(), json!("success"));
        object.insert("msg".into(), json!(""));
    }
    json_response(StatusCode::OK, &body)
}

/// A response whose body fails at once: hyper drops the connection without an answer.
fn connection_reset() -> Response {
    let error = std::io::Error::new(
        std::io::ErrorKind::ConnectionReset,
        "fake zulip server: connection reset by fault injection",
    );
    let body = Body::from_stream(futures_util::stream::once(
        async move { Err::<Bytes, _>(error) },
    ));
    (StatusCode::OK, body).into_response()
}

fn rate_limited(retry_after: f64) -> Response {
    let body = json!({
        "code": "RATE_LIMIT_HIT",
        "msg": "API usage exceeded rate limit",
        "result": "error",
        "retry-after": retry_after,
    });
    let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, &body);
    if let Ok(value) = HeaderValue::from_str(&retry_after.to_string()) {
        response.headers_mut().insert(RETRY_AFTER, value);
    }
    response
}

fn server_error(status: u16) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_GATEWAY);
    let html = format!(
        "<html>\r\n<head><title>{status}</title></head>\r\n<body>\r\n<center><h1>{status}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
    );
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("text/html"))],
        html,
    )
        .into_response()
}

async fn handle(State(s): State<Arc<Shared>>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let endpoint = Endpoint::of(&method, &path);
    let content_type = request
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let authorized = request
        .headers()
        .get(AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        == Some(s.expected_auth.as_str());
    let params = if method == Method::GET || method == Method::HEAD {
        Query::<Vec<(String, String)>>::try_from_uri(request.uri())
            .map(|Query(params)| params)
            .map_err(|err| err.body_text())
    } else {
        Form::<Vec<(String, String)>>::from_request(request, &())
            .await
            .map(|Form(params)| params)
            .map_err(|err| err.body_text())
    };
    let nth = s.recorder.record(ZulipRequest {
        index: 0,
        nth: 0,
        endpoint,
        method: method.to_string(),
        path: path.clone(),
        params: params.clone().unwrap_or_default(),
        content_type,
        authorized,
        at: Instant::now(),
    });
    let Some(endpoint) = endpoint else {
        return ApiError {
            status: StatusCode::NOT_FOUND,
            code: "BAD_REQUEST",
            msg: format!("fake zulip server: no endpoint {method} {path}"),
            extra: Vec::new(),
        }
        .into_response();
    };
    for action in s.schedule.take_actions(endpoint, nth, Moment::OnArrival) {
        s.apply(action);
    }
    let response = respond(&s, endpoint, nth, authorized, params).await;
    for action in s
        .schedule
        .take_actions(endpoint, nth, Moment::AfterHandling)
    {
        s.apply(action);
    }
    response
}

async fn respond(
    s: &Shared,
    endpoint: Endpoint,
    nth: usize,
    authorized: bool,
    params: Result<Vec<(String, String)>, String>,
) -> Response {
    if !authorized {
        return ApiError {
            status: StatusCode::UNAUTHORIZED,
            code: "INVALID_API_KEY",
            msg: "Invalid API key".into(),
            extra: Vec::new(),
        }
        .into_response();
    }
    let params = match params {
        Ok(params) => Params(params),
        Err(reason) => {
            return ApiError::bad_request(format!(
                "fake zulip server: unreadable parameters: {reason}"
            ))
            .into_response();
        }
    };
    let fault = s.schedule.take_fault(endpoint, nth);
    match &fault {
        Some(ZulipFault::RateLimited { retry_after }) => return rate_limited(*retry_after),
        Some(ZulipFault::ServerError(status)) => return server_error(*status),
        Some(ZulipFault::ConnectionReset) => return connection_reset(),
        Some(ZulipFault::BadEventQueue) => {
            if let Some(queue_id) = params.get("queue_id") {
                s.realm().queues.remove(queue_id);
                s.bump();
            }
        }
        Some(ZulipFault::ResetAfterHandling | ZulipFault::DuplicateDelivery) | None => {}
    }
    let duplicate = fault == Some(ZulipFault::DuplicateDelivery);
    let answer = match endpoint {
        Endpoint::SendMessage => messages::send(s, &params),
        Endpoint::GetMessages => messages::get(s, &params),
        Endpoint::Register => queues::register(s, &params),
        Endpoint::GetEvents => queues::get_events(s, &params, duplicate).await,
        Endpoint::DeleteQueue => queues::delete(s, &params),
        Endpoint::UsersMe => Ok(users_me(s)),
    };
    if fault == Some(ZulipFault::ResetAfterHandling) {
        return connection_reset();
    }
    match answer {
        Ok(body) => success(body),
        Err(err) => err.into_response(),
    }
}

pub(super) struct Params(Vec<(String, String)>);

impl Params {
    pub(super) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    pub(super) fn require(&self, name: &str) -> Result<&str, ApiError> {
        self.get(name).ok_or_else(|| ApiError::missing(name))
    }

    pub(super) fn json(&self, name: &str) -> Result<Option<Value>, ApiError> {
        self.get(name)
            .map(|raw| {
                serde_json::from_str(raw).map_err(|_| {
                    ApiError::bad_request(format!("Argument \"{name}\" is not valid JSON."))
                })
            })
            .transpose()
    }

    pub(super) fn bool(&self, name: &str, default: bool) -> Result<bool, ApiError> {
        match self.json(name)? {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(b),
            Some(_) => Err(ApiError::bad_request(format!("{name} is not a boolean"))),
        }
    }

    pub(super) fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.get(name)
            .map(|raw| {
                raw.trim()
                    .parse::<i64>()
                    .map_err(|_| ApiError::bad_request(format!("{name} is not an integer")))
            })
            .transpose()
    }
}

fn users_me(s: &Shared) -> Value {
    let realm = s.realm();
    json!({
        "user_id": realm.bot.id,
        "email": realm.bot.email,
        "full_name": realm.bot.full_name,
        "is_bot": true,
        "is_admin": false,
        "role": 400,
    })
}

//! A scripted fake model server: real HTTP on `127.0.0.1:0`, tether's three wire formats and
//! Gemini's.
//!
//! Model clients, executors and whole-binary tests point at [`FakeModelServer::base_url`] and
//! get answers from a [`Script`] — the same scripts the in-process
//! [`tether_model::scripted::ScriptedModel`] plays. Every request is recorded (credentials
//! redacted) for assertions, and faults can be injected per request.
//!
//! Routes: `POST /v1/chat/completions`, `POST /v1/responses`, `POST /v1/messages`, `POST
//! /v1beta/models/{model}:streamGenerateContent` (SSE with `alt=sse`) and `:generateContent`
//! (the Gemini API, [`FakeModelServer::gemini_base_url`]), and `GET /v1/models` (what a setup
//! check asks; 401 without the required key). Anything else is
//! recorded and answered 404. A request the server cannot parse, or one that finds the
//! script exhausted, is answered 400 with the reason, so the client reports it.
//!
//! Usage is an estimate (about four characters to a token) unless the turn gives its own. With
//! [`FakeModelServerBuilder::prompt_cache`], the server also plays the providers' prompt
//! caches (`prompt_cache`): what each request reads from the cache and writes to it.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use tether_config::Api;
//! use tether_model::scripted::{Script, Turn};
//! use tether_testkit::{Fault, FakeModelServer};
//!
//! let server = FakeModelServer::start(Script::turns([Turn::text("hi")])).await?;
//! server.fault_next(1, Fault::rate_limited("0.01"));
//! let base = server.base_url(Api::Anthropic); // http://127.0.0.1:PORT
//! // … point a client at `base` …
//! let first = server.wait_for_request(0, Duration::from_secs(5)).await?;
//! assert_eq!(first.path, "/v1/messages");
//! # Ok(())
//! # }
//! ```

mod body;
mod fault;
mod prompt_cache;
mod record;
mod routes;
mod wire;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tether_config::Api;
use tether_model::scripted::Script;

use crate::serving::Serving;
use crate::wait::WaitTimeout;
pub use fault::Fault;
pub use record::RecordedRequest;

use fault::FaultPlan;
use prompt_cache::PromptCache;
use record::Recorder;
use routes::Shared;

/// Options for [`FakeModelServer`] beyond the script.
#[derive(Debug)]
pub struct FakeModelServerBuilder {
    script: Script,
    key: Option<String>,
    prompt_cache: bool,
}

impl FakeModelServerBuilder {
    /// Requires this API key (`Authorization: Bearer` for OpenAI paths, `x-api-key` for
    /// Anthropic, `x-goog-api-key` or `?key=` for Gemini's); other requests get a 401 whose message echoes the presented key, as
    /// OpenAI's does, so tests can check clients keep keys out of their errors.
    pub fn require_key(mut self, key: impl Into<String>) -> Self {
        self.key = Some(key.into());
        self
    }

    /// Simulates the providers' prompt caches: each response's usage says what its request
    /// read from the cache and wrote to it, by the provider's documented rules (Anthropic's
    /// `cache_control` breakpoints, OpenAI's automatic prefixes), and its input counts the
    /// tools' definitions too. A turn's explicit usage ([`Turn::with_usage`]) is still
    /// reported as given.
    ///
    /// [`Turn::with_usage`]: tether_model::scripted::Turn::with_usage
    pub fn prompt_cache(mut self) -> Self {
        self.prompt_cache = true;
        self
    }

    /// Binds `127.0.0.1:0` and starts serving on the current tokio runtime.
    pub async fn start(self) -> std::io::Result<FakeModelServer> {
        let (mut serving, listener) = Serving::bind().await?;
        let shared = Arc::new(Shared {
            script: self.script,
            recorder: Arc::new(Recorder::new()),
            faults: FaultPlan::default(),
            key: self.key,
            prompt_cache: self.prompt_cache.then(PromptCache::default),
            shutdown: serving.shutdown(),
        });
        serving.serve(listener, routes::router(Arc::clone(&shared)));
        Ok(FakeModelServer { serving, shared })
    }
}

/// A running fake model server; stops when dropped.
#[derive(Debug)]
pub struct FakeModelServer {
    serving: Serving,
    shared: Arc<Shared>,
}

impl FakeModelServer {
    /// Starts a server playing `script`, with no key required.
    pub async fn start(script: Script) -> std::io::Result<Self> {
        Self::builder(script).start().await
    }

    /// A server to configure before starting.
    pub fn builder(script: Script) -> FakeModelServerBuilder {
        FakeModelServerBuilder {
            script,
            key: None,
            prompt_cache: false,
        }
    }

    /// The base URL a client of `api` is configured with: `http://127.0.0.1:PORT/v1` for the
    /// OpenAI formats, `http://127.0.0.1:PORT` (no `/v1`, as `ANTHROPIC_BASE_URL`) for Anthropic.
    pub fn base_url(&self, api: Api) -> String {
        match api {
            Api::OpenAiChat | Api::OpenAiResponses => format!("http://{}/v1", self.serving.addr()),
            Api::Anthropic => format!("http://{}", self.serving.addr()),
        }
    }

    /// The base URL of the Gemini API (`GOOGLE_GEMINI_BASE_URL`): `http://127.0.0.1:PORT`,
    /// under which clients ask `/v1beta/models/{model}:streamGenerateContent`.
    pub fn gemini_base_url(&self) -> String {
        format!("http://{}", self.serving.addr())
    }

    /// The listening address.
    pub fn addr(&self) -> SocketAddr {
        self.serving.addr()
    }

    /// The script (a clone shares its cursor).
    pub fn script(&self) -> &Script {
        &self.shared.script
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.recorder.requests()
    }

    /// How many requests arrived so far.
    pub fn request_count(&self) -> usize {
        self.shared.recorder.count()
    }

    /// Waits until request `index` (0-based) has arrived and returns it.
    pub async fn wait_for_request(
        &self,
        index: usize,
        timeout: Duration,
    ) -> Result<RecordedRequest, WaitTimeout> {
        self.shared.recorder.wait_for_request(index, timeout).await
    }

    /// How many responses were abandoned by their client before they finished.
    pub fn disconnects(&self) -> usize {
        self.shared.recorder.disconnects()
    }

    /// Waits until at least `n` responses were abandoned by their client.
    pub async fn wait_for_disconnects(
        &self,
        n: usize,
        timeout: Duration,
    ) -> Result<(), WaitTimeout> {
        self.shared.recorder.wait_for_disconnects(n, timeout).await
    }

    /// Injects `fault` into request number `index` (0-based, counting every request).
    pub fn fault_on(&self, index: usize, fault: Fault) {
        self.shared.faults.on(index, fault);
    }

    /// Injects `fault` into each of the next `count` requests (after any queued earlier).
    pub fn fault_next(&self, count: usize, fault: Fault) {
        self.shared.faults.next(count, fault);
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("script", &self.script)
            .field("key_required", &self.key.is_some())
            .finish_non_exhaustive()
    }
}

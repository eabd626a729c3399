//! Binding and serving: the address checks (loopback unless asked), the token, the store to
//! show, the routes, and the server task with its graceful stop.
//!
//! The store comes as a [`Connector`]: [`bind`] serves the workspace's own file, [`bind_to`] any
//! store (a team's database, whose connector the binary builds). A caller that hears of commits
//! some other way (a team store's `LISTEN/NOTIFY`) hands that in with [`Bound::wake_on`].

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::{get, post};
use tether_config::Workspace;
use tether_store::{Connector, EmbeddedFile};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::db::Db;
use crate::error::WebError;
use crate::hub::{self, Hub};
use crate::launch::{self, Launcher};
use crate::security::{self, Guard};
use crate::{api, pages};
use tether_store::launch::SideAsker;

/// Where and how to serve.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The address to listen on (port 0 picks a free port).
    pub listen: SocketAddr,
    /// Whether a non-loopback address may be bound (the dashboard is then reachable from other
    /// machines, still behind the token).
    pub allow_remote: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            allow_remote: false,
        }
    }
}

/// A bound, not yet serving, dashboard.
pub struct Bound {
    listener: TcpListener,
    ws: Workspace,
    store: Arc<dyn Connector>,
    wake: Option<Arc<Notify>>,
    safety_net: Duration,
    guard: Guard,
    addr: SocketAddr,
    launcher: Option<Arc<dyn Launcher>>,
    side: Option<Arc<dyn SideAsker>>,
}

/// The workspace's own store: the SQLite file under its `.tether/`.
pub fn embedded(ws: &Workspace) -> Arc<dyn Connector> {
    Arc::new(EmbeddedFile(ws.db_path()))
}

/// Binds `settings.listen` for the workspace `ws`, showing its own store (see [`bind_to`]).
pub fn bind(ws: &Workspace, settings: &Settings) -> Result<Bound, WebError> {
    bind_to(embedded(ws), ws, settings)
}

/// Binds `settings.listen` and draws the token, to show the store `store` opens; `ws` is the
/// workspace this server runs in (its runs' locks, plans and verify logs are read there). A
/// non-loopback address without `allow_remote` is refused.
pub fn bind_to(
    store: Arc<dyn Connector>,
    ws: &Workspace,
    settings: &Settings,
) -> Result<Bound, WebError> {
    let remote = !settings.listen.ip().is_loopback();
    if remote && !settings.allow_remote {
        return Err(WebError::NotLoopback(settings.listen));
    }
    let bind_err = |cause| WebError::Bind {
        addr: settings.listen,
        cause,
    };
    let listener = TcpListener::bind(settings.listen).map_err(bind_err)?;
    listener.set_nonblocking(true).map_err(bind_err)?;
    let addr = listener.local_addr().map_err(bind_err)?;
    let guard = Guard::new(security::new_token()?, addr, remote);
    Ok(Bound {
        listener,
        ws: ws.clone(),
        store,
        wake: None,
        safety_net: hub::SAFETY_NET,
        guard,
        addr,
        launcher: None,
        side: None,
    })
}

impl Bound {
    /// Also reads the journal whenever `wake` is notified (with `notify_one`, so a wake-up
    /// given while the journal is being read is kept for the next wait): the binary feeds it
    /// from a team store's `LISTEN/NOTIFY`. See [`crate::hub`].
    #[must_use]
    pub fn wake_on(mut self, wake: Arc<Notify>) -> Bound {
        self.wake = Some(wake);
        self
    }

    /// Re-reads the journal this often without any wake-up ([`hub::SAFETY_NET`] unless set;
    /// tests set it long to show that a wake-up, not the re-read, delivered an event).
    #[must_use]
    pub fn recheck_every(mut self, every: Duration) -> Bound {
        self.safety_net = every;
        self
    }

    /// Starts and resumes runs with `launcher` (`POST /api/runs`, the "New run" form): the
    /// serving process drives them.
    #[must_use]
    pub fn launch_with(mut self, launcher: Arc<dyn Launcher>) -> Bound {
        self.launcher = Some(launcher);
        self
    }

    /// Answers questions about runs on the side with `side` (`POST /api/runs/{id}/side`, the
    /// run page's "Ask about this run").
    #[must_use]
    pub fn side_with(mut self, side: Arc<dyn SideAsker>) -> Bound {
        self.side = Some(side);
        self
    }

    /// Where the store is, for messages (never a password).
    pub fn store(&self) -> String {
        self.store.describe()
    }

    /// The address bound.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether other machines can reach it.
    pub fn is_remote(&self) -> bool {
        !self.addr.ip().is_loopback()
    }

    /// The token.
    pub fn token(&self) -> &str {
        self.guard.token()
    }

    /// The URL to open, token included: `http://127.0.0.1:PORT/?token=…`. On an unspecified
    /// address (`0.0.0.0`) it names loopback; from another machine use this machine's address.
    pub fn url(&self) -> String {
        let host = if self.addr.ip().is_unspecified() {
            match self.addr {
                SocketAddr::V4(_) => format!("127.0.0.1:{}", self.addr.port()),
                SocketAddr::V6(_) => format!("[::1]:{}", self.addr.port()),
            }
        } else {
            self.addr.to_string()
        };
        format!("http://{host}/?token={}", self.guard.token())
    }

    /// Serves until `stop` fires (open streams end then). Needs a Tokio runtime.
    pub async fn serve(self, stop: CancellationToken) -> Result<(), WebError> {
        let addr = self.addr;
        let io = |cause| WebError::Bind { addr, cause };
        let listener = tokio::net::TcpListener::from_std(self.listener).map_err(io)?;
        let store = self.store;
        let db = tokio::task::spawn_blocking(move || Db::open(store))
            .await
            .map_err(|e| WebError::Internal(e.to_string()))??;
        let wakes = hub::Wakes {
            state_dir: self.ws.state_dir(),
            outside: self.wake,
            safety_net: self.safety_net,
        };
        let hub = Hub::start(Arc::clone(&db), wakes, stop.clone()).await?;
        let app = Arc::new(App {
            ws: self.ws,
            db,
            hub,
            guard: self.guard,
            stop: stop.clone(),
            launcher: self.launcher,
            side: self.side,
            sparks: Arc::default(),
        });
        let router = routes(app);
        axum::serve(listener, router)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await
            .map_err(io)
    }
}

fn routes(app: Arc<App>) -> Router {
    Router::new()
        .route("/", get(pages::runs))
        .route("/runs/{id}", get(pages::run))
        .route("/fleets/{id}", get(pages::fleet))
        .route("/history", get(pages::history))
        .route("/live", get(pages::live))
        .route("/questions/{id}/answer", post(pages::answer))
        .route("/runs/{id}/pause", post(pages::pause))
        .route("/runs/{id}/cancel", post(pages::cancel))
        .route("/runs/{id}/say", post(pages::say))
        .route("/runs/{id}/side", post(pages::side))
        .route("/runs", post(launch::start_form))
        .route("/runs/{id}/resume", post(launch::resume_form))
        .route("/assets/app.css", get(pages::css))
        .route("/assets/app.js", get(pages::js))
        .route("/api/runs", get(api::runs).post(launch::start))
        .route("/api/runs/{id}/resume", post(launch::resume))
        .route("/api/runs/{id}", get(api::run))
        .route("/api/fleets", get(api::fleets))
        .route("/api/fleets/{id}", get(api::fleet))
        .route("/api/runs/{id}/timeline", get(api::timeline))
        .route("/api/runs/{id}/events", get(api::run_events))
        .route("/api/runs/{id}/pause", post(api::pause))
        .route("/api/runs/{id}/cancel", post(api::cancel))
        .route("/api/runs/{id}/say", post(api::say))
        .route("/api/runs/{id}/side", post(api::side))
        .route("/api/events", get(api::events))
        .route("/api/questions", get(api::questions))
        .route("/api/questions/{id}/answer", post(api::answer))
        .route("/api/history", get(api::history))
        .route("/api/plan", get(api::plan))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&app),
            security::guard,
        ))
        .with_state(app)
}

//! What every request handler shares: the workspace, the store connections, the journal's
//! watcher and the guard.

use std::sync::Arc;

use tether_config::Workspace;
use tokio_util::sync::CancellationToken;

use crate::db::Db;
use crate::hub::Hub;
use crate::security::Guard;

/// The server's shared state.
pub(crate) struct App {
    /// The workspace served.
    pub ws: Workspace,
    /// Store connections.
    pub db: Arc<Db>,
    /// New journal events, as they are committed.
    pub hub: Hub,
    /// Token, Host and Origin checks.
    pub guard: Guard,
    /// Fires when the server stops: every open stream ends.
    pub stop: CancellationToken,
    /// Starts and resumes runs, when this server may (`tether serve`'s).
    pub launcher: Option<Arc<dyn crate::launch::Launcher>>,
    /// Answers questions about runs on the side, when this server may (`tether serve`'s).
    pub side: Option<Arc<dyn tether_store::launch::SideAsker>>,
    /// The runs list's sparklines already read.
    pub sparks: Arc<crate::model::Sparks>,
}

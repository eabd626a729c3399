//! The MCP handler: the server's identity, and the list of tools it offers.
//!
//! Every tool lives in its own module with a `definition` (name, description, schemas) and a
//! `call` (its handler), and is listed once in [`tools`]. To add a tool, write its module and
//! add one line there. Tools from `tether-tools` given in [`Options::extra`] are served beside
//! them as they are.
//!
//! Every tool is listed with `_meta: {"anthropic/alwaysLoad": true}` ([`ALWAYS_LOAD`]): a
//! client that defers MCP tools behind a search tool (Claude Code) declares these to the model
//! up front, so the agent sees `ask_human` without searching for it; `_meta` is the protocol's
//! place for such notes, and a client that knows nothing of the key ignores it. Every schema
//! keeps to the formats JSON Schema defines ([`schema`](crate::schema)), which strict
//! validators require.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::tool::{ToolCallContext, ToolRoute, ToolRouter};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use tether_config::Workspace;
use tether_config::{Config, HumanConfig};
use tether_human::Desk;
use tether_store::{Connector, Journal, RunId};
use tokio_util::sync::CancellationToken;

use crate::ask;
use crate::extra::{self, ExtraTools};
use crate::goals;
use crate::in_flight::InFlight;
use crate::schema;
use crate::status;

/// What a tool's handler returns.
pub(crate) type ToolFuture<'a> =
    Pin<Box<dyn Future<Output = Result<CallToolResponse, ErrorData>> + Send + 'a>>;

/// The `_meta` key asking a client that defers MCP tools behind a tool search to declare the
/// tool to the model up front (Claude Code's).
pub const ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

/// Every tool this server offers, one line each, each marked [`ALWAYS_LOAD`].
fn tools(options: &Options) -> ToolRouter<TetherMcp> {
    let mut router = ToolRouter::new()
        .with_route(ToolRoute::new_dyn(ask::definition(options), ask::call))
        .with_route(ToolRoute::new_dyn(status::definition(), status::call))
        .with_route(ToolRoute::new_dyn(
            goals::complete_definition(),
            goals::complete,
        ))
        .with_route(ToolRoute::new_dyn(
            goals::cancel_definition(),
            goals::cancel,
        ));
    for tool in &options.extra.0 {
        router = router.with_route(extra::route(Arc::clone(tool)));
    }
    for route in router.map.values_mut() {
        let meta = route.attr.meta.get_or_insert_with(MetaObject::new);
        meta.0
            .insert(ALWAYS_LOAD.to_owned(), serde_json::Value::Bool(true));
        schema::standard(Arc::make_mut(&mut route.attr.input_schema));
        if let Some(output) = route.attr.output_schema.as_mut() {
            schema::standard(Arc::make_mut(output));
        }
    }
    router
}

/// How the server is set up.
#[derive(Debug, Clone)]
pub struct Options {
    /// The workspace whose plan the tools use.
    pub workspace: Workspace,
    /// Where the store is: the workspace's file, or a team store shared by several machines
    /// (where the run this server serves is recorded).
    pub store: Arc<dyn Connector>,
    /// The loaded `tether.toml`, or why it could not be loaded: then every tool that needs it
    /// returns that as a tool error (the server itself still starts).
    pub config: Result<Config, String>,
    /// The run questions and sign-offs are filed under (`tether mcp --run`, `TETHER_RUN_ID`),
    /// if any; or why the id given is not one. Then the server still starts (a client would
    /// otherwise silently have no tether tools) and every tool that needs the run returns that
    /// as a tool error.
    pub run: Result<Option<RunId>, String>,
    /// How often a waiting `ask_human` sends a progress notification (when the client asked
    /// for progress).
    pub progress_every: Duration,
    /// Tools served beside tether's own (plan mode's `write_plan` and `edit_plan`).
    pub extra: ExtraTools,
    /// How long the end of the session waits for the notice sinks to deliver what they queued
    /// ([`tether_human::DELIVERY_GRACE`]).
    pub notice_grace: Duration,
    /// Where `complete_goal` runs the goal's verify command.
    pub verify_sandbox: crate::VerifySandbox,
}

impl Options {
    /// The run the calls belong to, or the tool error saying why the id given is unusable.
    pub(crate) fn run(&self) -> Result<Option<&RunId>, String> {
        self.run.as_ref().map(Option::as_ref).map_err(Clone::clone)
    }

    /// The `[human]` settings (the defaults when the config could not be loaded).
    pub(crate) fn human(&self) -> HumanConfig {
        self.config
            .as_ref()
            .map_or_else(|_| HumanConfig::default(), |c| c.human.clone())
    }

    /// The interaction threshold (the default when the config could not be loaded).
    pub(crate) fn threshold(&self) -> u8 {
        self.config
            .as_ref()
            .map_or(HumanConfig::default().threshold, |c| c.human.threshold)
    }
}

/// The MCP server. Cheap to clone.
#[derive(Clone)]
pub struct TetherMcp {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) options: Options,
    tools: ToolRouter<TetherMcp>,
    /// The process's one store connection, opened by the first tool that needs it (so starting
    /// stays fast) and shared by every tool after it.
    journal: std::sync::OnceLock<Journal>,
    /// The human desk, built on the first question.
    pub(crate) desk: tokio::sync::OnceCell<Desk>,
    pub(crate) in_flight: InFlight,
    /// Questions asked in the client's prompt (protocol 2026-07-28) awaiting the client's next
    /// round, each with the background wait to stop then.
    pub(crate) prompted:
        std::sync::Mutex<std::collections::HashMap<tether_store::QuestionId, CancellationToken>>,
    /// Fires when the process is going away (stdin closed, a signal): every wait stops.
    pub(crate) shutdown: CancellationToken,
}

impl TetherMcp {
    /// A server with `options`. Nothing is opened until a tool needs it.
    pub fn new(options: Options) -> Self {
        let tools = tools(&options);
        TetherMcp {
            inner: Arc::new(Inner {
                options,
                tools,
                journal: std::sync::OnceLock::new(),
                desk: tokio::sync::OnceCell::new(),
                in_flight: InFlight::new(),
                prompted: std::sync::Mutex::default(),
                shutdown: CancellationToken::new(),
            }),
        }
    }

    /// The workspace's store, opened on first use and shared by every tool (one connection per
    /// process).
    pub(crate) fn journal(&self) -> Result<Journal, String> {
        if let Some(journal) = self.inner.journal.get() {
            return Ok(journal.clone());
        }
        let store = self
            .inner
            .options
            .store
            .connect()
            .map_err(|e| e.to_string())?;
        let journal = Journal::new(store, Vec::new()).map_err(|e| e.to_string())?;
        Ok(self.inner.journal.get_or_init(|| journal).clone())
    }

    /// The tools offered, sorted by name (what `tools/list` returns).
    pub fn tools(&self) -> Vec<Tool> {
        self.inner.tools.list_all()
    }

    /// Stops every wait: questions stay pending, channels clean up. Used on shutdown.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// Waits, at most [`Options::notice_grace`], until the desk's channels have handed over what
    /// they queued (a webhook told who answered); at once when no question was asked or nothing
    /// is queued.
    pub async fn flush(&self) {
        if let Some(desk) = self.inner.desk.get() {
            desk.flush_within(self.inner.options.notice_grace).await;
        }
    }

    /// Waits until no tool call runs any more, at most `limit`; whether that happened.
    pub async fn idle(&self, limit: Duration) -> bool {
        self.inner.in_flight.idle(limit).await
    }
}

impl ServerHandler for TetherMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("tether", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "tether keeps you within reach of a human: call ask_human when you need a \
                 decision only a person can make (it waits, possibly for hours, until someone \
                 answers), and plan_status to read the goals of the plan and where they stand.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = ToolCallContext::new(self, request, context);
        self.inner.tools.call(call).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.inner.tools.get(name).cloned()
    }
}

//! `tether serve`: the dashboard for this workspace until Ctrl+C; and [`Dashboard`], the same
//! server started beside a loop (`tether run`, `tether ralph`, `tether resume`) or the demo.

use std::sync::Arc;

use anyhow::Result;
use tether_config::{Config, Workspace};
use tether_store::Connector;
use tether_web::{Bound, Settings};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::ServeArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether serve`.
pub fn run(ctx: &mut Ctx<'_>, args: &ServeArgs) -> Result<Exit> {
    let loaded = tether_config::load(ctx.ws.root(), ctx.env).map_err(Failure::usage)?;
    let settings = Settings {
        listen: args.listen.unwrap_or(loaded.config.server.listen),
        allow_remote: args.allow_remote,
    };
    let store = match &args.store {
        Some(url) => tether_runtime::store::at_url(url, &ctx.ws)?,
        None => tether_runtime::store::connector(&ctx.ws, ctx.env)?,
    };
    let bound = tether_web::bind_to(store, &ctx.ws, &settings).map_err(Failure::usage)?;
    warn_if_remote(&bound);
    writeln!(ctx.out, "{}", bound.url())?;
    ctx.out.flush()?;
    eprintln!(
        "tether dashboard for {}: open the URL above (it carries the token); Ctrl+C stops it",
        bound.store()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let stop = CancellationToken::new();
        let on_signal = stop.clone();
        tokio::spawn(async move {
            let mut term =
                tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
            let terminated = async {
                match term.as_mut() {
                    Some(t) => {
                        t.recv().await;
                    }
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = terminated => {}
            }
            on_signal.cancel();
        });
        bound.serve(stop).await
    })?;
    Ok(Exit::Done)
}

fn warn_if_remote(bound: &Bound) {
    if bound.is_remote() {
        eprintln!(
            "warning: the dashboard listens on {}, reachable from other machines; anyone with \
             the token can answer questions and pause or cancel runs, and the traffic is not \
             encrypted",
            bound.addr()
        );
    }
}

/// A dashboard bound beside a loop or the demo, served on that process's runtime.
pub struct Dashboard {
    bound: Bound,
}

impl Dashboard {
    /// Binds `[server] listen` for the workspace and the store its loop uses; a failure is
    /// logged, never fatal (the loop runs without a dashboard; `tether serve` can show it).
    pub fn bind(store: Arc<dyn Connector>, ws: &Workspace, config: &Config) -> Option<Dashboard> {
        let settings = Settings {
            listen: config.server.listen,
            allow_remote: false,
        };
        match tether_web::bind_to(store, ws, &settings) {
            Ok(bound) => Some(Dashboard { bound }),
            Err(e) => {
                tracing::warn!("no dashboard for this run: {e}");
                None
            }
        }
    }

    /// The URL to open, token included.
    pub fn url(&self) -> String {
        self.bound.url()
    }

    /// Starts serving on the current Tokio runtime until `stop` fires or the runtime ends.
    pub fn spawn(self, stop: CancellationToken) {
        tokio::spawn(async move {
            if let Err(e) = self.bound.serve(stop).await {
                tracing::warn!("the dashboard stopped: {e}");
            }
        });
    }
}

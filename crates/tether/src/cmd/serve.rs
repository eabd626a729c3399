//! `tether serve`: the dashboard for this workspace until Ctrl+C, starting and resuming runs
//! it drives itself (`tether_runtime::served`); and [`Dashboard`], the same server started
//! beside a loop (`tether run`, `tether ralph`, `tether resume`) or the demo, which starts none.

use std::sync::Arc;

use anyhow::Result;
use tether_config::{Config, Workspace};
use tether_runtime::human_act::{HumanAct, require_human};
use tether_runtime::served::Runs;
use tether_store::Connector;
use tether_web::{Bound, Settings};
use tokio_util::sync::CancellationToken;

use super::Ctx;
use crate::cli::ServeArgs;
use crate::exit::Exit;
use crate::failure::Failure;

/// `tether serve`.
pub fn run(ctx: &mut Ctx<'_>, args: &ServeArgs) -> Result<Exit> {
    require_human(&ctx.ws, ctx.env, HumanAct::ServeDashboard)?;
    let loaded = tether_config::load(tether_runtime::schema(), ctx.ws.root(), ctx.env)
        .map_err(Failure::usage)?;
    let settings = Settings {
        listen: args.listen.unwrap_or(loaded.config.server.listen),
        allow_remote: args.allow_remote,
    };
    // Runs started here go to the workspace's own store: one shown with --store starts none.
    let (store, launches) = match &args.store {
        Some(url) => (tether_runtime::store::at_url(url, &ctx.ws)?, false),
        None => (tether_runtime::store::connector(&ctx.ws, ctx.env)?, true),
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
    let env = Arc::new(tether_config::ProcessEnv);
    runtime.block_on(async {
        let (stop, now) = (CancellationToken::new(), CancellationToken::new());
        tokio::spawn(on_signals([stop.clone(), now.clone()]));
        let side = Arc::new(tether_runtime::side::Answerer::new(
            ctx.ws.clone(),
            env.clone(),
        ));
        let runs = Arc::new(Runs::new(ctx.ws.clone(), env, crate::bridged::host()));
        let bound = if launches {
            bound.launch_with(runs.clone()).side_with(side)
        } else {
            bound
        };
        let served = bound.serve(stop).await;
        if runs.driving() > 0 {
            eprintln!("stopping the runs after their current step; Ctrl+C again to exit now");
        }
        runs.stop(now).await;
        served
    })?;
    Ok(Exit::Done)
}

/// Cancels each token in turn at each Ctrl+C or SIGTERM: the first stops serving, the second
/// stops waiting for the runs.
async fn on_signals(tokens: [CancellationToken; 2]) {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    for token in tokens {
        let terminated = async {
            match term.as_mut() {
                Some(t) => drop(t.recv().await),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = terminated => {}
        }
        token.cancel();
    }
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

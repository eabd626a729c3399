//! Driving a loop in the foreground, shared by `tether ralph`, `tether run` and `tether resume`:
//! the runtime, the event sinks (`--events jsonl`, the progress line on a TTY), and Ctrl+C (the
//! first one stops after the current step, the second exits at once).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use tether_config::{Config, Workspace};
use tether_human::{Console, Desk};
use tether_store::Store;
use tether_store::{EventSink, Journal};
use tokio_util::sync::CancellationToken;

use crate::cli::EventsFormat;
use crate::exit::Exit;
use crate::sinks::{Jsonl, Progress};

/// A loop about to run in this process.
pub struct Foreground {
    runtime: tokio::runtime::Runtime,
    progress: Option<Arc<Progress>>,
    sinks: Vec<Arc<dyn EventSink>>,
}

impl Foreground {
    /// Sets up for a `label` loop (`ralph`, `run`) with budget `max`.
    pub fn new(label: &str, max: Option<u32>, events: Option<EventsFormat>) -> Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()?;
        let progress = Progress::for_terminal(label, max).map(Arc::new);
        let mut sinks: Vec<Arc<dyn EventSink>> = Vec::new();
        if events == Some(EventsFormat::Jsonl) {
            sinks.push(Arc::new(Jsonl));
        }
        if let Some(p) = &progress {
            sinks.push(p.clone());
        }
        Ok(Foreground {
            runtime,
            progress,
            sinks,
        })
    }

    /// The process's one store connection, with this loop's sinks attached, and the human desk
    /// recording in it (the terminal when stdin and stderr are a person).
    pub fn human_side(&self, ws: &Workspace, config: &Config) -> Result<(Journal, Desk)> {
        let journal = Journal::new(Store::open(ws.db_path())?, self.sinks.clone())?;
        let human = Desk::from_config(config, ws, journal.clone(), Console::detect());
        Ok((journal, human))
    }

    /// Runs the loop `body` to its end; it gets the token Ctrl+C cancels.
    pub fn run<F: Future>(self, body: impl FnOnce(CancellationToken) -> F) -> F::Output {
        let interrupt = CancellationToken::new();
        let progress = self.progress.clone();
        let out = self.runtime.block_on(async {
            tokio::spawn(watch_ctrl_c(interrupt.clone()));
            if let Some(p) = progress.clone() {
                tokio::spawn(async move {
                    loop {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        p.draw();
                    }
                });
            }
            body(interrupt).await
        });
        self.runtime.shutdown_background();
        if let Some(p) = &self.progress {
            p.clear();
        }
        out
    }
}

async fn watch_ctrl_c(interrupt: CancellationToken) {
    if tokio::signal::ctrl_c().await.is_ok() {
        eprintln!("\ninterrupting after the current step… (Ctrl+C again to exit now)");
        interrupt.cancel();
        if tokio::signal::ctrl_c().await.is_ok() {
            std::process::exit(i32::from(Exit::Interrupted.code()));
        }
    }
}

//! A fake server's life on loopback, the same for every fake: a port bound on `127.0.0.1`, its
//! routes served on the current tokio runtime, and everything it runs stopped when it is
//! dropped — its shutdown token fires (ending the long polls and streams it holds open) and its
//! tasks are aborted.

use std::future::Future;
use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// A fake server's port and tasks; dropping it stops them.
pub(crate) struct Serving {
    addr: SocketAddr,
    shutdown: CancellationToken,
    tasks: Vec<JoinHandle<()>>,
}

impl Serving {
    /// Binds `127.0.0.1:0`: the server-to-be, and its listener to serve on.
    pub(crate) async fn bind() -> std::io::Result<(Serving, TcpListener)> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let serving = Serving {
            addr: listener.local_addr()?,
            shutdown: CancellationToken::new(),
            tasks: Vec::new(),
        };
        Ok((serving, listener))
    }

    /// The bound address.
    pub(crate) fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Fires when the server stops: what its open responses wait on.
    pub(crate) fn shutdown(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Serves `app` on `listener` until the server stops (gracefully: open responses end on the
    /// shutdown token). Each connection sends at once (`TCP_NODELAY`), as real servers do: a
    /// small response held back by Nagle's algorithm would add 40 ms to a measured latency.
    pub(crate) fn serve(&mut self, listener: TcpListener, app: axum::Router) {
        use axum::serve::ListenerExt as _;
        let listener = listener.tap_io(|tcp| drop(tcp.set_nodelay(true)));
        let stop = self.shutdown.clone();
        self.spawn(async move {
            let served = axum::serve(listener, app)
                .with_graceful_shutdown(stop.cancelled_owned())
                .await;
            drop(served);
        });
    }

    /// Runs `task` until the server stops.
    pub(crate) fn spawn(&mut self, task: impl Future<Output = ()> + Send + 'static) {
        self.tasks.push(tokio::spawn(task));
    }
}

impl std::fmt::Debug for Serving {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Serving").field("addr", &self.addr).finish()
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.shutdown.cancel();
        for task in &self.tasks {
            task.abort();
        }
    }
}

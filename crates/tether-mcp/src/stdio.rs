//! Serving over stdin and stdout until the client goes away.
//!
//! When stdin closes or a SIGINT/SIGTERM arrives, every waiting `ask_human` is stopped at once
//! (its question stays pending, its Zulip queue is deregistered) and the process ends after
//! they have cleaned up, instead of leaving the cleanup to be cut off — and after the notice
//! sinks have delivered what they queued (who answered a question, bounded by
//! [`crate::Options::notice_grace`]; at once when nothing is queued).

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::ServiceExt as _;
use tokio::io::{AsyncRead, ReadBuf};
use tokio_util::sync::CancellationToken;

use crate::server::TetherMcp;

/// How long waiting calls get to clean up when the process is going away.
const CLEANUP: Duration = Duration::from_secs(5);

/// Serving failed before or while talking to the client.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client went away or sent something else before `initialize`.
    #[error("the MCP client did not initialize the session: {0}")]
    Initialize(String),
    /// The server task failed.
    #[error("the MCP server stopped unexpectedly: {0}")]
    Task(tokio::task::JoinError),
    /// Signals could not be watched.
    #[error("cannot watch for signals: {0}")]
    Signals(io::Error),
}

// By hand rather than `#[from]`: the cause is in the message, so it is not also a `source`
// (an error chain would print it twice).
impl From<tokio::task::JoinError> for ServeError {
    fn from(e: tokio::task::JoinError) -> Self {
        ServeError::Task(e)
    }
}

impl From<io::Error> for ServeError {
    fn from(e: io::Error) -> Self {
        ServeError::Signals(e)
    }
}

/// Serves `server` on this process's stdin and stdout until stdin closes or a SIGINT or
/// SIGTERM arrives. Must run inside a Tokio runtime with I/O and time enabled.
pub async fn serve_stdio(server: TetherMcp) -> Result<(), ServeError> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let (read, write) = rmcp::transport::stdio_pipes();
    let interrupted = async move {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => tracing::info!("interrupted"),
            _ = terminate.recv() => tracing::info!("terminated"),
        }
    };
    serve_io(server, read, write, interrupted).await
}

/// Serves `server` on `read` and `write` (a socket: the sandbox's `tether mcp` handing its
/// session to the process driving the run) until `read` ends or `interrupted` completes.
/// Must run inside a Tokio runtime with I/O and time enabled.
pub async fn serve_io<R, W>(
    server: TetherMcp,
    read: R,
    write: W,
    interrupted: impl std::future::Future<Output = ()>,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: tokio::io::AsyncWrite + Send + Unpin + 'static,
{
    let closed = CancellationToken::new();
    let read = EofWatch {
        inner: read,
        eof: closed.clone(),
    };
    let running = server
        .clone()
        .serve((read, write))
        .await
        .map_err(|e| ServeError::Initialize(e.to_string()))?;
    let stop = running.cancellation_token();
    let mut waiting = std::pin::pin!(running.waiting());
    tokio::select! {
        quit = &mut waiting => {
            tracing::debug!(?quit, "the client ended the session");
            server.shutdown();
            server.idle(CLEANUP).await;
            server.flush().await;
            return Ok(());
        }
        () = closed.cancelled() => tracing::debug!("input closed"),
        () = interrupted => {}
    }
    server.shutdown();
    if !server.idle(CLEANUP).await {
        tracing::warn!("waiting tool calls did not clean up in time");
    }
    stop.cancel();
    waiting.await?;
    server.flush().await;
    Ok(())
}

/// Stdin, telling `eof` when it ends (or fails).
struct EofWatch<R> {
    inner: R,
    eof: CancellationToken,
}

impl<R: AsyncRead + Unpin> AsyncRead for EofWatch<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let wanted = buf.remaining() > 0;
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        match &polled {
            Poll::Ready(Ok(())) if wanted && buf.filled().len() == before => self.eof.cancel(),
            Poll::Ready(Err(_)) => self.eof.cancel(),
            _ => {}
        }
        polled
    }
}

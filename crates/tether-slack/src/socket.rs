//! One Socket Mode connection: dial the URL `apps.connections.open` gave (TLS with the same
//! verifier as the Web API), wait for `hello`, then read envelopes, hand what they carry to the
//! router and acknowledge them, until Slack says `disconnect`, the socket closes or goes quiet.
//!
//! Liveness: the client pings every [`SocketOptions::ping_every`]; a socket that has sent nothing
//! (no frame, no pong) for [`SocketOptions::dead_after`] is half-open and is dropped, so the hub
//! dials again and catches up.

use std::sync::Arc;
use std::time::Duration;

use futures_util::{SinkExt as _, StreamExt as _};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio::time::Instant;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message as WsMessage;
use tokio_util::sync::CancellationToken;

use crate::api::SocketUrl;
use crate::error::SlackError;
use crate::wire::{Frame, Incoming};

/// Timing of the Socket Mode connection; the defaults suit Slack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SocketOptions {
    /// Dialing and the WebSocket handshake.
    pub connect_timeout: Duration,
    /// How long `hello` may take after the handshake.
    pub hello_timeout: Duration,
    /// How often the client pings.
    pub ping_every: Duration,
    /// Silence after which the socket counts as dead.
    pub dead_after: Duration,
    /// How long the socket stays open after the last wait ends, still acknowledging and routing
    /// events (a button pressed meanwhile for another process's question is not lost).
    pub linger: Duration,
}

impl Default for SocketOptions {
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            hello_timeout: Duration::from_secs(10),
            ping_every: Duration::from_secs(5),
            dead_after: Duration::from_secs(30),
            linger: Duration::from_secs(5),
        }
    }
}

/// Anything the WebSocket can run over (plain TCP on loopback, TLS to Slack).
pub(crate) trait Io: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Io for T {}

pub(crate) type Socket = WebSocketStream<Box<dyn Io>>;

/// Why a connection ended (it is then dialed again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ended {
    /// Slack sent `disconnect` with this reason.
    Disconnect(String),
    /// The socket closed, failed or went quiet.
    Lost(String),
    /// The hub was stopped.
    Stopped,
}

/// Dials `url` and waits for `hello`.
pub(crate) async fn connect(
    url: &SocketUrl,
    options: &SocketOptions,
) -> Result<Socket, SlackError> {
    let lost = |detail: String| SlackError::Transport { detail };
    let parsed = reqwest::Url::parse(&url.0).map_err(|e| lost(format!("bad socket URL: {e}")))?;
    let host = parsed
        .host_str()
        .ok_or_else(|| lost("the socket URL has no host".into()))?
        .to_owned();
    let secure = parsed.scheme() == "wss";
    let port = parsed.port().unwrap_or(if secure { 443 } else { 80 });
    let dial = async {
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| lost(format!("cannot connect the socket to {host}: {e}")))?;
        tcp.set_nodelay(true).ok();
        let io: Box<dyn Io> = if secure {
            let config = tether_http::client_config(true).map_err(|e| lost(e.to_string()))?;
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| lost(format!("bad socket host {host}: {e}")))?;
            let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
                .connect(name, tcp)
                .await
                .map_err(|e| lost(format!("TLS with {host} failed: {e}")))?;
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        let (socket, _) = tokio_tungstenite::client_async(url.0.as_str(), io)
            .await
            .map_err(|e| {
                lost(format!(
                    "the socket handshake with {host} failed: {}",
                    tether_http::chain(&e)
                ))
            })?;
        Ok::<_, SlackError>(socket)
    };
    let mut socket = tokio::time::timeout(options.connect_timeout, dial)
        .await
        .map_err(|_| lost("connecting the socket timed out".into()))??;
    let hello = async {
        while let Some(frame) = socket.next().await {
            match frame {
                Ok(WsMessage::Text(text)) if Frame::parse(&text) == Frame::Hello => return Ok(()),
                Ok(WsMessage::Close(_)) => break,
                Ok(_) => {}
                Err(e) => return Err(lost(format!("the socket failed before hello: {e}"))),
            }
        }
        Err(lost("the socket closed before hello".into()))
    };
    tokio::time::timeout(options.hello_timeout, hello)
        .await
        .map_err(|_| lost("no hello on the socket".into()))??;
    Ok(socket)
}

/// Reads envelopes until the connection ends: each is handed to `route`, then acknowledged.
pub(crate) async fn serve(
    mut socket: Socket,
    options: &SocketOptions,
    stop: &CancellationToken,
    route: &(dyn Fn(Incoming) + Send + Sync),
) -> Ended {
    let mut last_heard = Instant::now();
    let mut ping = tokio::time::interval(options.ping_every);
    ping.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ping.reset();
    let ended = loop {
        tokio::select! {
            () = stop.cancelled() => break Ended::Stopped,
            _ = ping.tick() => {
                if last_heard.elapsed() >= options.dead_after {
                    break Ended::Lost("the socket went quiet".into());
                }
                if let Err(e) = socket.send(WsMessage::Ping(Vec::new().into())).await {
                    break Ended::Lost(format!("ping failed: {e}"));
                }
            }
            frame = socket.next() => {
                last_heard = Instant::now();
                let text = match frame {
                    Some(Ok(WsMessage::Text(text))) => text,
                    Some(Ok(WsMessage::Close(_))) | None => break Ended::Lost("the socket closed".into()),
                    Some(Ok(_)) => continue,
                    Some(Err(e)) => break Ended::Lost(format!("the socket failed: {e}")),
                };
                match Frame::parse(&text) {
                    Frame::Disconnect { reason } => break Ended::Disconnect(reason),
                    Frame::Envelope { envelope_id, incoming } => {
                        if let Some(incoming) = incoming {
                            route(*incoming);
                        }
                        let ack = serde_json::json!({"envelope_id": envelope_id}).to_string();
                        if let Err(e) = socket.send(WsMessage::Text(ack.into())).await {
                            break Ended::Lost(format!("ack failed: {e}"));
                        }
                    }
                    Frame::Hello | Frame::Other => {}
                }
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_millis(200), socket.close(None)).await;
    ended
}

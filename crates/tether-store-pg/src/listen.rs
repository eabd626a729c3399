//! Wake-ups across machines without polling: `LISTEN`/`NOTIFY`.
//!
//! Writers send a notification on commit ([`Channel`]); a [`Listener`] holds one connection of
//! its own that `LISTEN`s and hands each notification over as a [`Wake::Notified`]. A
//! notification is only a poke: the store stays the truth. When the listener's connection is
//! lost (a restarted server, a network cut) it reconnects with a growing pause, `LISTEN`s
//! again, and only then reports [`Wake::Resync`]: whatever was committed while it was away is in
//! the store, and whatever is committed after it reports that will be notified, so a waiter
//! that re-reads the store on `Resync` misses nothing.

use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_postgres::tls::NoTlsStream;
use tokio_postgres::{AsyncMessage, Client, Config, Connection, NoTls, Socket};

use crate::error::{PgStoreError, Result, describe};

/// The first pause before reconnecting; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(50);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Wake-ups a slow reader may leave unread before the listener waits for it.
const QUEUE: usize = 256;

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Channel {
    /// A question was answered or withdrawn; the payload is its id.
    Answers,
    /// A run was asked to pause or cancel, or given a message; the payload is its id.
    Control,
    /// Events were appended; the payload is the run's id (empty for events of no run).
    Events,
}

impl Channel {
    /// Every channel.
    pub const ALL: [Channel; 3] = [Channel::Answers, Channel::Control, Channel::Events];

    /// The PostgreSQL channel name.
    pub fn name(self) -> &'static str {
        match self {
            Channel::Answers => "tether_answers",
            Channel::Control => "tether_control",
            Channel::Events => "tether_events",
        }
    }

    fn from_name(name: &str) -> Option<Channel> {
        Channel::ALL.into_iter().find(|c| c.name() == name)
    }
}

/// Why a [`Listener`] woke its reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Wake {
    /// Something was committed on `channel`.
    Notified {
        /// The channel.
        channel: Channel,
        /// Which question or run (see [`Channel`]).
        payload: String,
    },
    /// The connection was lost and is back: re-read the store, notifications may have been
    /// missed meanwhile.
    Resync,
}

/// A connection listening on some channels, reconnecting on its own.
#[derive(Debug)]
pub struct Listener {
    wakes: mpsc::Receiver<Wake>,
    task: JoinHandle<()>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Listener {
    /// Connects and listens on `channels`. When this returns, every later commit on them is
    /// notified; read the store once after it to catch up with what came before.
    pub async fn start(config: Config, channels: &[Channel]) -> Result<Listener> {
        let (tx, wakes) = mpsc::channel(QUEUE);
        let listen = listen_sql(channels);
        let (client, driver) = establish(&config, &listen, &tx).await?;
        let task = tokio::spawn(supervise(config, listen, tx, client, driver));
        Ok(Listener { wakes, task })
    }

    /// The next wake-up. `None` only if the listener stopped for good, which does not happen
    /// while it is alive; a caller may treat it as an error.
    pub async fn next(&mut self) -> Option<Wake> {
        self.wakes.recv().await
    }
}

fn listen_sql(channels: &[Channel]) -> String {
    channels
        .iter()
        .map(|c| format!("LISTEN {};", c.name()))
        .collect()
}

/// Connects, starts forwarding notifications, and `LISTEN`s.
async fn establish(
    config: &Config,
    listen: &str,
    tx: &mpsc::Sender<Wake>,
) -> Result<(Client, JoinHandle<()>)> {
    let (client, connection) =
        config
            .connect(NoTls)
            .await
            .map_err(|cause| PgStoreError::Unreachable {
                target: describe(config),
                cause,
            })?;
    let driver = tokio::spawn(forward(connection, tx.clone()));
    if let Err(err) = client.batch_execute(listen).await {
        driver.abort();
        return Err(err.into());
    }
    Ok((client, driver))
}

/// Drives the connection, handing its notifications to the reader, until it ends.
async fn forward(mut connection: Connection<Socket, NoTlsStream>, tx: mpsc::Sender<Wake>) {
    loop {
        match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
            Some(Ok(AsyncMessage::Notification(n))) => {
                let Some(channel) = Channel::from_name(n.channel()) else {
                    continue;
                };
                let wake = Wake::Notified {
                    channel,
                    payload: n.payload().to_owned(),
                };
                if tx.send(wake).await.is_err() {
                    return;
                }
            }
            Some(Ok(_)) => {}
            Some(Err(err)) => {
                tracing::warn!(error = %err, "team store listener: connection lost");
                return;
            }
            None => return,
        }
    }
}

/// Waits for the connection to end, then reconnects until it can listen again and reports
/// [`Wake::Resync`]; forever, until the reader goes away.
async fn supervise(
    config: Config,
    listen: String,
    tx: mpsc::Sender<Wake>,
    mut client: Client,
    mut driver: JoinHandle<()>,
) {
    loop {
        // A task that ended or panicked both mean the connection is gone.
        let _ended = (&mut driver).await;
        drop(client);
        let mut backoff = MIN_BACKOFF;
        (client, driver) = loop {
            if tx.is_closed() {
                return;
            }
            match establish(&config, &listen, &tx).await {
                Ok(again) => break again,
                Err(err) => {
                    tracing::debug!(error = %err, "team store listener: reconnecting");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        };
        tracing::info!("team store listener: reconnected");
        if tx.send(Wake::Resync).await.is_err() {
            return;
        }
    }
}

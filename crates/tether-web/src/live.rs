//! Server-sent event streams from the journal: the API's JSON streams and the pages' live
//! updates.
//!
//! Every stream is the same pump: subscribe to the [`crate::hub::Hub`], read the backlog after
//! the client's resume point from the store once, then pass on what the hub hands out,
//! skipping what the backlog already covered and reading the store again only if the stream
//! fell behind the hub's buffer. Each message's `id` is the journal seq of its event, so a
//! browser that reconnects sends `Last-Event-ID` and continues exactly where it stopped.
//!
//! A page's stream sends `ops` messages: a JSON list of small instructions for the page's
//! script (append this entry to the timeline, replace the run's head, add a question card),
//! each with HTML rendered here by the same views as the page itself, so there is one way of
//! showing anything and every text is escaped the same way.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use futures_util::Stream;
use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use tether_store::{RunId, Seq, Store, StoredEvent};
use tokio::sync::{broadcast, mpsc};

use crate::app::App;
use crate::error::WebError;

/// Events read from the store per query while catching up.
const PAGE: usize = 500;
/// Messages buffered per client before the pump waits for it.
const BUFFER: usize = 64;

/// Which events a stream carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Filter {
    /// Every event of the workspace.
    All,
    /// One run's events.
    Run(RunId),
}

impl Filter {
    fn matches(&self, e: &StoredEvent) -> bool {
        match self {
            Filter::All => true,
            Filter::Run(id) => e.run_id.as_ref() == Some(id),
        }
    }

    fn read_after(&self, s: &Store, after: Seq) -> Result<Vec<StoredEvent>, WebError> {
        Ok(match self {
            Filter::All => s.events_all_after(after, PAGE)?,
            Filter::Run(id) => s.events(id, after, PAGE)?,
        })
    }
}

/// `?after=SEQ`: where a stream starts when the request has no `Last-Event-ID`.
#[derive(Debug, Default, Deserialize)]
pub struct After {
    /// The seq of the last event the client has.
    pub after: Option<i64>,
}

/// The resume point: `Last-Event-ID`, else `?after=`.
pub fn resume_point(headers: &HeaderMap, q: &After) -> Option<Seq> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or(q.after)
        .map(Seq)
}

/// Turns an event into the message sent for it (`None`: nothing to send).
pub(crate) type Render =
    Arc<dyn Fn(Arc<StoredEvent>) -> BoxFuture<'static, Option<SseEvent>> + Send + Sync>;

/// A JSON stream: each event as `{"seq","run_id","at_ms","event"}`, with its seq as id.
pub(crate) fn json_stream(
    app: Arc<App>,
    filter: Filter,
    after: Seq,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let render: Render = Arc::new(|e: Arc<StoredEvent>| {
        Box::pin(async move {
            let data = serde_json::to_string(&*e).ok()?;
            Some(SseEvent::default().id(e.seq.0.to_string()).data(data))
        })
    });
    stream(app, filter, after, render)
}

/// A stream of `filter`'s events after `after`, each rendered by `render`.
pub(crate) fn stream(
    app: Arc<App>,
    filter: Filter,
    after: Seq,
    render: Render,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    let (tx, mut rx) = mpsc::channel::<SseEvent>(BUFFER);
    tokio::spawn(async move {
        tokio::select! {
            () = pump(&app, &filter, after, &render, &tx) => {}
            () = tx.closed() => {}
            () = app.stop.cancelled() => {}
        }
    });
    let body = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|m| m.map(Ok)));
    Sse::new(body).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

async fn pump(
    app: &Arc<App>,
    filter: &Filter,
    after: Seq,
    render: &Render,
    tx: &mpsc::Sender<SseEvent>,
) {
    let mut hub = app.hub.subscribe();
    let mut cursor = after;
    if catch_up(app, filter, &mut cursor, render, tx)
        .await
        .is_err()
    {
        return;
    }
    loop {
        match hub.recv().await {
            Ok(e) if e.seq > cursor => {
                cursor = e.seq;
                if filter.matches(&e) && send(render, e, tx).await.is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(_)) => {
                if catch_up(app, filter, &mut cursor, render, tx)
                    .await
                    .is_err()
                {
                    return;
                }
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}

/// The client went away, or the store failed (the client reconnects and resumes).
struct Stop;

/// Sends everything after `cursor` the store holds now.
async fn catch_up(
    app: &Arc<App>,
    filter: &Filter,
    cursor: &mut Seq,
    render: &Render,
    tx: &mpsc::Sender<SseEvent>,
) -> Result<(), Stop> {
    loop {
        let (f, after) = (filter.clone(), *cursor);
        let page = app
            .db
            .call(move |s| f.read_after(s, after))
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, "dashboard: a stream could not read the journal");
                Stop
            })?;
        let full = page.len() == PAGE;
        for e in page {
            *cursor = e.seq;
            send(render, Arc::new(e), tx).await?;
        }
        if !full {
            return Ok(());
        }
    }
}

async fn send(
    render: &Render,
    e: Arc<StoredEvent>,
    tx: &mpsc::Sender<SseEvent>,
) -> Result<(), Stop> {
    match render(e).await {
        Some(msg) => tx.send(msg).await.map_err(|_| Stop),
        None => Ok(()),
    }
}

/// One instruction for the page's script.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum Op {
    /// Append `html` to the element `target` (unless an element with id `id` exists).
    Append {
        /// The container.
        target: String,
        /// The new element's id.
        id: String,
        /// The element.
        html: String,
    },
    /// Replace the element `target` with `html`.
    Replace {
        /// The element replaced.
        target: String,
        /// Its replacement.
        html: String,
    },
    /// Replace the element `id` with `html` where it is when it is in `target`; otherwise
    /// (it is elsewhere, or nowhere) remove it and put `html` first in `target` — a run whose
    /// group changed moves to its new group's list.
    Upsert {
        /// The container.
        target: String,
        /// The element's id.
        id: String,
        /// The element.
        html: String,
    },
}

/// The `ops` message for an event.
pub(crate) fn ops_event(seq: Seq, ops: &[Op]) -> Option<SseEvent> {
    if ops.is_empty() {
        return None;
    }
    let data = serde_json::to_string(ops).ok()?;
    Some(
        SseEvent::default()
            .id(seq.0.to_string())
            .event("ops")
            .data(data),
    )
}

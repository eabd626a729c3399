//! `POST /register`, `GET /events` and `DELETE /events`: event queues with Zulip's narrows,
//! long-polls that end with a heartbeat (or early, when a newer poll or an expiry supersedes
//! them), at-least-once delivery and `BAD_EVENT_QUEUE_ID`.

use serde_json::{Value, json};

use super::realm::Queue;
use super::routes::{ApiError, Params, Shared};

pub(super) fn register(s: &Shared, params: &Params) -> Result<Value, ApiError> {
    if let Some(types) = params.json("event_types")?
        && !types.is_array()
    {
        return Err(ApiError::bad_request("event_types is not a list"));
    }
    params.bool("apply_markdown", false)?;
    let mut stream = None;
    let mut topic = None;
    if let Some(narrow) = params.json("narrow")? {
        let terms = narrow
            .as_array()
            .ok_or_else(|| ApiError::bad_request("narrow is not a list"))?;
        for term in terms {
            let pair = term
                .as_array()
                .filter(|pair| pair.len() == 2)
                .and_then(|pair| Some((pair[0].as_str()?, pair[1].as_str()?)))
                .ok_or_else(|| ApiError::bad_request("narrow[0] is not a list of 2 strings"))?;
            match pair {
                ("stream" | "channel", name) => stream = Some(name.to_owned()),
                ("topic", name) => topic = Some(name.to_owned()),
                ("sender" | "is", _) => {}
                (operator, _) => {
                    return Err(ApiError::bad_request(format!(
                        "Operator {operator} not supported."
                    )));
                }
            }
        }
    }
    let mut realm = s.realm();
    let queue_id = realm.register(stream, topic);
    let max_message_id = realm.messages.last().map_or(-1, |m| m.id as i64);
    drop(realm);
    s.bump();
    Ok(json!({
        "queue_id": queue_id,
        "last_event_id": -1,
        "zulip_feature_level": 400,
        "zulip_version": "fake-11.0",
        "zulip_merge_base": "fake-11.0",
        "max_message_id": max_message_id,
    }))
}

pub(super) async fn get_events(
    s: &Shared,
    params: &Params,
    duplicate: bool,
) -> Result<Value, ApiError> {
    let queue_id = params.require("queue_id")?.to_owned();
    let last_event_id = params.int("last_event_id")?.unwrap_or(-1);
    let dont_block = params.bool("dont_block", false)?;
    let mut changes = s.changed.subscribe();
    let generation = {
        let mut realm = s.realm();
        let queue = realm
            .queues
            .get_mut(&queue_id)
            .ok_or_else(|| ApiError::bad_queue(&queue_id))?;
        queue.generation += 1;
        queue.prune(last_event_id);
        queue.generation
    };
    // A new poll ends an older one on the same queue.
    s.bump();
    changes.mark_unchanged();
    let deadline = tokio::time::Instant::now() + s.longpoll();
    loop {
        {
            let mut realm = s.realm();
            let queue = realm
                .queues
                .get_mut(&queue_id)
                .ok_or_else(|| ApiError::bad_queue(&queue_id))?;
            if queue.generation != generation {
                return Ok(json!({ "events": [] }));
            }
            if dont_block || !queue.events.is_empty() {
                return Ok(batch(queue, duplicate));
            }
        }
        tokio::select! {
            changed = changes.changed() => {
                if changed.is_err() {
                    return Ok(json!({ "events": [] }));
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                let mut realm = s.realm();
                let queue = realm
                    .queues
                    .get_mut(&queue_id)
                    .ok_or_else(|| ApiError::bad_queue(&queue_id))?;
                queue.push(json!({ "type": "heartbeat" }));
                return Ok(batch(queue, duplicate));
            }
            () = s.shutdown.cancelled() => return Ok(json!({ "events": [] })),
        }
    }
}

/// The queue's pending events; with `duplicate`, the previous batch again and each event twice.
fn batch(queue: &mut Queue, duplicate: bool) -> Value {
    let events: Vec<Value> = queue.events.iter().map(|(_, e)| e.clone()).collect();
    let sent: Vec<Value> = if duplicate {
        let mut sent = queue.last_batch.clone();
        for event in &events {
            sent.push(event.clone());
            sent.push(event.clone());
        }
        sent
    } else {
        events.clone()
    };
    queue.last_batch = events;
    json!({ "events": sent })
}

pub(super) fn delete(s: &Shared, params: &Params) -> Result<Value, ApiError> {
    let queue_id = params.require("queue_id")?;
    let deleted = s.realm().delete(queue_id);
    s.bump();
    if deleted {
        Ok(json!({}))
    } else {
        Err(ApiError::bad_queue(queue_id))
    }
}

//! `POST /messages` and `GET /messages`: storing a bot's message and searching a narrow, with
//! Zulip's normalisation, `STREAM_DOES_NOT_EXIST`, anchors and `apply_markdown`.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::realm::narrow_matches;
use super::routes::{ApiError, Params, Shared};

pub(super) fn send(s: &Shared, params: &Params) -> Result<Value, ApiError> {
    let kind = params.require("type")?;
    if !matches!(kind, "stream" | "channel") {
        return Err(ApiError::bad_request(format!(
            "fake zulip server: message type {kind:?} is not supported"
        )));
    }
    let to = params.require("to")?;
    let topic = params
        .get("topic")
        .or_else(|| params.get("subject"))
        .ok_or_else(|| ApiError::missing("topic"))?;
    let content = params.require("content")?;
    if content.trim().is_empty() {
        return Err(ApiError::bad_request("Message must not be empty"));
    }
    if content.contains('\0') {
        return Err(ApiError::bad_request("Message must not contain null bytes"));
    }
    // `to` is a raw name, or JSON (a quoted name or a stream id).
    let name = match serde_json::from_str::<Value>(to) {
        Ok(Value::String(name)) => name,
        Ok(Value::Number(id)) => {
            let index = id.as_u64().unwrap_or(0).saturating_sub(1);
            s.realm()
                .streams
                .get(usize::try_from(index).unwrap_or(usize::MAX))
                .cloned()
                .unwrap_or_default()
        }
        _ => to.to_owned(),
    };
    let mut realm = s.realm();
    let Some(stream) = realm.stream_named(&name) else {
        return Err(ApiError {
            status: StatusCode::BAD_REQUEST,
            code: "STREAM_DOES_NOT_EXIST",
            msg: format!("Channel '{name}' does not exist"),
            extra: vec![("stream", json!(name))],
        });
    };
    let bot = realm.bot.clone();
    let id = realm.post(&bot, &stream, topic, content);
    drop(realm);
    s.bump();
    Ok(json!({ "id": id }))
}

pub(super) fn get(s: &Shared, params: &Params) -> Result<Value, ApiError> {
    let num_before = params
        .int("num_before")?
        .ok_or_else(|| ApiError::missing("num_before"))?;
    let num_after = params
        .int("num_after")?
        .ok_or_else(|| ApiError::missing("num_after"))?;
    if num_before < 0 || num_after < 0 {
        return Err(ApiError::bad_request(
            "num_before and num_after must be >= 0",
        ));
    }
    if num_before + num_after > 5000 {
        return Err(ApiError::bad_request(
            "Too many messages requested (maximum 5000).",
        ));
    }
    let include_anchor = params.bool("include_anchor", true)?;
    let markdown = params.bool("apply_markdown", true)?;
    let (stream, topic) = match params.json("narrow")? {
        Some(narrow) => parse_search_narrow(&narrow)?,
        None => (None, None),
    };
    let realm = s.realm();
    let matching: Vec<_> = realm
        .messages
        .iter()
        .filter(|m| narrow_matches(realm.topic_match, stream.as_deref(), topic.as_deref(), m))
        .collect();
    let anchor = match params.get("anchor").unwrap_or("newest") {
        "newest" => matching.last().map_or(0, |m| m.id),
        "oldest" | "first_unread" => matching.first().map_or(0, |m| m.id),
        raw => raw
            .trim()
            .parse::<u64>()
            .map_err(|_| ApiError::bad_request("Invalid anchor"))?,
    };
    let before: Vec<_> = matching
        .iter()
        .filter(|m| m.id < anchor || (include_anchor && m.id == anchor))
        .copied()
        .collect();
    let after: Vec<_> = matching.iter().filter(|m| m.id > anchor).copied().collect();
    let take_before = usize::try_from(num_before).unwrap_or(0);
    let take_after = usize::try_from(num_after).unwrap_or(0);
    let skipped = before.len().saturating_sub(take_before);
    let mut chosen: Vec<_> = before[skipped..].to_vec();
    chosen.extend(after.iter().take(take_after).copied());
    let found_newest = after.len() <= take_after;
    let found_oldest = skipped == 0;
    let found_anchor = include_anchor && matching.iter().any(|m| m.id == anchor);
    let messages: Vec<Value> = chosen
        .iter()
        .map(|m| {
            let mut json = realm.message_json(m, markdown);
            if let Some(object) = json.as_object_mut() {
                object.insert("flags".into(), json!(["read"]));
            }
            json
        })
        .collect();
    Ok(json!({
        "messages": messages,
        "anchor": anchor,
        "found_anchor": found_anchor,
        "found_newest": found_newest,
        "found_oldest": found_oldest,
        "history_limited": false,
    }))
}

/// A search narrow: `[{"operator","operand"}]` or the legacy `[[operator, operand]]`.
fn parse_search_narrow(narrow: &Value) -> Result<(Option<String>, Option<String>), ApiError> {
    let terms = narrow
        .as_array()
        .ok_or_else(|| ApiError::bad_request("narrow is not a list"))?;
    let mut stream = None;
    let mut topic = None;
    for term in terms {
        let (operator, operand) = match term {
            Value::Object(object) => (
                object.get("operator").and_then(Value::as_str),
                object.get("operand").and_then(Value::as_str),
            ),
            Value::Array(pair) if pair.len() == 2 => (pair[0].as_str(), pair[1].as_str()),
            _ => (None, None),
        };
        match (operator, operand) {
            (Some("stream" | "channel"), Some(name)) => stream = Some(name.to_owned()),
            (Some("topic"), Some(name)) => topic = Some(name.to_owned()),
            (Some(other), Some(_)) => {
                return Err(ApiError::bad_request(format!(
                    "fake zulip server: narrow operator {other} is not supported"
                )));
            }
            _ => return Err(ApiError::bad_request("Invalid narrow")),
        }
    }
    Ok((stream, topic))
}

//! Checking a model's arguments against a tool's JSON Schema, with messages that name the field.
//!
//! serde's own errors for a wrong type ("invalid type: string, expected u64") do not say which
//! field was wrong, and a model needs that to fix its call. So arguments are first checked
//! against the parts of the schema this crate writes — an object with typed `properties`,
//! `required`, `additionalProperties: false`, `minimum`, `enum` — and only then deserialised.
//! Schema features not understood here are left to the tool. A `null` optional field counts as
//! absent, as some providers send one for every field the model left out.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::output::ToolOutput;
use crate::spec::ToolSpec;

/// Checks `args` against `spec`'s schema, returning the message for the model if they do not fit.
pub(crate) fn check(spec: &ToolSpec, args: &Value) -> Result<(), String> {
    let tool = &spec.name;
    let object = match args {
        Value::Object(object) => object,
        other => {
            return Err(format!(
                "arguments for `{tool}` must be a JSON object, got {}",
                describe(other)
            ));
        }
    };
    let schema = &spec.parameters;
    let props = schema.get("properties").and_then(Value::as_object);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();

    if let Some(props) = props
        && schema.get("additionalProperties") == Some(&Value::Bool(false))
    {
        let mut unknown: Vec<&String> = object.keys().filter(|k| !props.contains_key(*k)).collect();
        unknown.sort();
        if let Some(name) = unknown.first() {
            let mut known: Vec<&str> = props.keys().map(String::as_str).collect();
            known.sort_unstable();
            return Err(format!(
                "invalid arguments for `{tool}`: unknown field `{name}`; `{tool}` takes: {}",
                known.join(", ")
            ));
        }
    }
    for name in &required {
        if object.get(*name).is_none_or(Value::is_null) {
            return Err(format!(
                "invalid arguments for `{tool}`: missing field `{name}`"
            ));
        }
    }
    let Some(props) = props else { return Ok(()) };
    for (name, value) in object {
        if value.is_null() {
            continue;
        }
        if let Some(prop) = props.get(name)
            && let Err(problem) = check_value(prop, value)
        {
            return Err(format!(
                "invalid arguments for `{tool}`: field `{name}` {problem}"
            ));
        }
    }
    Ok(())
}

/// Checks then deserialises `args` into a tool's argument struct; `null` fields are dropped
/// first so they read as absent.
pub(crate) fn parse<T: DeserializeOwned>(spec: &ToolSpec, args: Value) -> Result<T, ToolOutput> {
    let args = if args.is_null() {
        Value::Object(Map::new())
    } else {
        args
    };
    check(spec, &args).map_err(ToolOutput::error)?;
    let args = match args {
        Value::Object(object) => {
            Value::Object(object.into_iter().filter(|(_, v)| !v.is_null()).collect())
        }
        other => other,
    };
    serde_json::from_value(args)
        .map_err(|err| ToolOutput::error(format!("invalid arguments for `{}`: {err}", spec.name)))
}

fn check_value(prop: &Value, value: &Value) -> Result<(), String> {
    if let Some(ty) = prop.get("type") {
        let types: Vec<&str> = match ty {
            Value::String(one) => vec![one.as_str()],
            Value::Array(many) => many.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !types.is_empty() && !types.iter().any(|ty| has_type(value, ty)) {
            return Err(format!(
                "must be {}, got {}",
                article(&types),
                describe(value)
            ));
        }
    }
    if let (Some(min), Some(n)) = (prop.get("minimum").and_then(Value::as_f64), value.as_f64())
        && n < min
    {
        return Err(format!("must be at least {min}, got {value}"));
    }
    if let Some(options) = prop.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        let options: Vec<String> = options.iter().map(Value::to_string).collect();
        return Err(format!(
            "must be one of {}, got {value}",
            options.join(", ")
        ));
    }
    Ok(())
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        "null" => value.is_null(),
        _ => true,
    }
}

fn article(types: &[&str]) -> String {
    let named: Vec<String> = types
        .iter()
        .map(|ty| match *ty {
            "integer" | "array" | "object" => format!("an {ty}"),
            "null" => "null".to_owned(),
            other => format!("a {other}"),
        })
        .collect();
    named.join(" or ")
}

/// A value's type and a short preview, for error messages.
fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_owned(),
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let preview = value.to_string();
    let preview = match preview.char_indices().nth(40) {
        Some((cut, _)) => format!("{}…", &preview[..cut]),
        None => preview,
    };
    format!("{kind} ({preview})")
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
